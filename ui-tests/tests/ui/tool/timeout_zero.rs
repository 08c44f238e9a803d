use dsh_runtime::tool;

/// Sleeps.
#[tool(timeout_ms = 0)]
async fn nap() {}

fn main() {}
