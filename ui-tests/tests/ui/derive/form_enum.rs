use dsh_runtime::{ToolContext, ToolError, ToolSchema, tool};
use serde::Deserialize;

/// A color.
#[derive(ToolSchema, Deserialize)]
enum Color {
    Red,
    Green,
}

/// Ask the user.
#[tool]
async fn ask(cx: ToolContext) -> Result<String, ToolError> {
    let _answer = cx.elicit::<Color>("Please fill this in.").await?;
    Ok("done".into())
}

fn main() {}
