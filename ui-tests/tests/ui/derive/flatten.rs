use dsh_runtime::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
struct Paging {
    page: u32,
}

#[derive(Deserialize, ToolSchema)]
struct Query {
    text: String,
    #[serde(flatten)]
    paging: Paging,
}

fn main() {}
