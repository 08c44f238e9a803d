use dsh_runtime::{ToolContext, tool};

/// Takes nothing but the context.
#[tool(args)]
async fn nothing(cx: ToolContext) {
    let _ = cx;
}

fn main() {}
