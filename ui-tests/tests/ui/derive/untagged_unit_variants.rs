use dsh_runtime::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
#[serde(untagged)]
enum Choice {
    Name(String),
    Nothing,
    Empty,
}

fn main() {}
