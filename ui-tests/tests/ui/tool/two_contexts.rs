use dsh_runtime::{ToolContext, tool};

/// Uses two contexts.
#[tool]
async fn twice(_a: ToolContext, _b: &ToolContext) {}

fn main() {}
