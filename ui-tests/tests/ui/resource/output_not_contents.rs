//! The return type becomes contents (`IntoContents`): an error at the type otherwise,
//! saying what may be returned.
use dsh_runtime::resource;

struct Report {
    lines: Vec<String>,
}

#[resource("reports://today")]
async fn today() -> Report {
    Report { lines: Vec::new() }
}

#[resource("reports://count")]
async fn count() -> Result<usize, String> {
    Ok(0)
}

fn main() {}
