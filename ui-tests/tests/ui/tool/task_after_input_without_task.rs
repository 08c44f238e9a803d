use dsh_runtime::{tool, ToolContext};

/// Ask first, then go on as a task: but this tool never runs as one.
#[tool(task_after_input)]
async fn later(cx: ToolContext) -> String {
    cx.continue_as_task().await;
    "done".to_string()
}

fn main() {}
