use dsh_runtime::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
struct Query {
    #[schema(range(min = 1, max = 10))]
    text: String,
}

fn main() {}
