use dsh_runtime::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
struct Query {
    #[serde(default, skip_deserialising)]
    text: String,
}

fn main() {}
