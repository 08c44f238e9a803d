use dsh_runtime::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
struct Query {
    #[serde(alias = "q")]
    text: String,
}

fn main() {}
