use dsh_runtime::tool;

/// Reads.
#[tool(name = "read", read_only, name = "read_again")]
async fn read() {}

fn main() {}
