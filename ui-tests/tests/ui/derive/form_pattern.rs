use dsh_runtime::{ToolContext, ToolError, ToolSchema, tool};
use serde::Deserialize;

/// A release.
#[derive(ToolSchema, Deserialize)]
struct Release {
    // MCP forms have no `pattern`.
    #[schema(pattern = "^v[0-9]+$")]
    tag: String,
}

/// Ask the user.
#[tool]
async fn ask(cx: ToolContext) -> Result<String, ToolError> {
    let _answer = cx.elicit::<Release>("Please fill this in.").await?;
    Ok("done".into())
}

fn main() {}
