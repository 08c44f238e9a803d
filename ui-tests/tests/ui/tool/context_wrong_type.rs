use dsh_runtime::tool;

struct ToolContext;

/// Uses the wrong context.
#[tool]
async fn wrong(path: String, cx: ToolContext) -> String {
    let _ = cx;
    path
}

fn main() {}
