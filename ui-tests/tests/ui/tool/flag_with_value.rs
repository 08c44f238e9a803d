use dsh_runtime::tool;

/// Reads.
#[tool(read_only = true)]
async fn read() {}

fn main() {}
