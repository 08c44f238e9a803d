use dsh_runtime::{ToolError, tool};

/// Runs long.
#[tool(task = "optinal")]
async fn long_a() -> Result<(), ToolError> {
    Ok(())
}

/// Runs long.
#[tool(task = true)]
async fn long_b() -> Result<(), ToolError> {
    Ok(())
}

/// Runs long.
#[tool(task)]
async fn long_c() -> Result<(), ToolError> {
    Ok(())
}

/// Runs long, with no deadline to restart.
#[tool(timeout_restarts_on_progress)]
async fn long_d() -> Result<(), ToolError> {
    Ok(())
}

fn main() {}
