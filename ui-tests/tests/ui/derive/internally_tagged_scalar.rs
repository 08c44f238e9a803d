use dsh_runtime::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
#[serde(tag = "kind")]
enum Message {
    Text(String),
}

fn main() {}
