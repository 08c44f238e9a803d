//! A placeholder parameter has a plain name, owns its value, always has one, and is
//! described in the fn's doc comment (MCP publishes no description per placeholder).
use dsh_runtime::resource;

#[resource("a://{x}/{y}/{z}/{w}")]
async fn forms(
    (x, _): (u8, u8),
    y: &'static str,
    z: Option<u32>,
    /// The w.
    w: u8,
) -> String {
    format!("{x}{y}{z:?}{w}")
}

fn main() {}
