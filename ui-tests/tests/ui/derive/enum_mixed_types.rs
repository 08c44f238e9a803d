use dsh_runtime::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
struct Mode {
    #[schema(enum = ["fast", 2])]
    level: String,
    #[schema(enum = ["a", "b"], const = "c")]
    name: String,
}

fn main() {}
