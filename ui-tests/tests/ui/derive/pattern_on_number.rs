use dsh_runtime::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
struct Port {
    #[schema(pattern = "^[0-9]+$")]
    number: Option<u16>,
}

fn main() {}
