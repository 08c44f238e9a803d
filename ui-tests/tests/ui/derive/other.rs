use dsh_runtime::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
#[serde(tag = "kind")]
enum Event {
    Click,
    #[serde(other)]
    Unknown,
}

fn main() {}
