use dsh_runtime::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
struct Query {
    #[schema(pattern = "[a-z")]
    text: String,
}

fn main() {}
