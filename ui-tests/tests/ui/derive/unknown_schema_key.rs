use dsh_runtime::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
struct Query {
    #[schema(minimum = 3)]
    limit: u32,
    #[schema(lenght(max = 10))]
    text: String,
}

fn main() {}
