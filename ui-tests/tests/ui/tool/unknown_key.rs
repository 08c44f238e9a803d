use dsh_runtime::tool;

/// Reads.
#[tool(readonly)]
async fn read() {}

fn main() {}
