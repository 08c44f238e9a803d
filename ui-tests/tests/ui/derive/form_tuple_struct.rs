use dsh_runtime::{ToolContext, ToolError, ToolSchema, tool};
use serde::Deserialize;

/// A branch name.
#[derive(ToolSchema, Deserialize)]
struct Branch(String);

/// Ask the user.
#[tool]
async fn ask(cx: ToolContext) -> Result<String, ToolError> {
    let _answer = cx.elicit::<Branch>("Please fill this in.").await?;
    Ok("done".into())
}

fn main() {}
