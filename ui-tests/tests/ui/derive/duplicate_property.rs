use dsh_runtime::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
#[serde(rename_all = "camelCase")]
struct Query {
    max_results: u32,
    #[serde(rename = "maxResults")]
    limit: u32,
}

fn main() {}
