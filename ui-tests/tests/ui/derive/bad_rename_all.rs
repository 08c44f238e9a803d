use dsh_runtime::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
#[serde(rename_all = "camel_case")]
struct Query {
    max_results: u32,
}

fn main() {}
