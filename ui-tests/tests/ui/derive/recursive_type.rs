use dsh_runtime::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
struct Node {
    name: String,
    children: Vec<Node>,
}

fn main() {}
