use dsh_runtime::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
struct Query {
    #[schema(range(min = 1), description = "How many.")]
    #[schema(range(max = 10))]
    limit: u32,
}

fn main() {}
