use dsh_runtime::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
struct Query<'a> {
    text: &'a str,
}

fn main() {}
