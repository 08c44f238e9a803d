use dsh_runtime::{ToolContext, ToolError, ToolSchema, tool};
use serde::Deserialize;

/// Free-form settings.
#[derive(ToolSchema, Deserialize)]
struct Settings {
    name: String,
    // Arbitrary JSON cannot be a form field.
    extra: Option<serde_json::Value>,
}

/// Ask the user.
#[tool]
async fn ask(cx: ToolContext) -> Result<String, ToolError> {
    let _answer = cx.elicit::<Settings>("Please fill this in.").await?;
    Ok("done".into())
}

fn main() {}
