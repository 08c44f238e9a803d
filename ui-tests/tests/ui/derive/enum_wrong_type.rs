use dsh_runtime::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
struct Mode {
    #[schema(enum = ["fast", "slow"])]
    level: u8,
    #[schema(const = 3)]
    name: String,
    #[schema(enum = [true])]
    verbose: Option<String>,
}

fn main() {}
