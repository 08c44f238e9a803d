use dsh_runtime::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
#[schema(pattern = "^a")]
struct Query {
    #[schema(open)]
    text: String,
}

fn main() {}
