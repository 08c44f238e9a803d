use dsh_runtime::{ToolContext, ToolError, ToolSchema, tool};
use serde::Deserialize;

/// Labels for an issue.
#[derive(ToolSchema, Deserialize)]
struct Labels {
    issue: u32,
    // A multi-select offers choices: a list of free strings is not one.
    labels: Vec<String>,
}

/// Ask the user.
#[tool]
async fn ask(cx: ToolContext) -> Result<String, ToolError> {
    let _answer = cx.elicit::<Labels>("Please fill this in.").await?;
    Ok("done".into())
}

fn main() {}
