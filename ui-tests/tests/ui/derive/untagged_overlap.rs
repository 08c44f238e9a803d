use dsh_runtime::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
#[serde(untagged)]
enum Amount {
    Exact(u64),
    Approximate(f64),
}

fn main() {}
