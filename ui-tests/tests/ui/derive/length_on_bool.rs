use dsh_runtime::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
struct Flags {
    #[schema(length(max = 3))]
    verbose: bool,
}

fn main() {}
