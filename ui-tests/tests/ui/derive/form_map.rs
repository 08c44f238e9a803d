use dsh_runtime::{ToolContext, ToolError, ToolSchema, tool};
use serde::Deserialize;

use std::collections::HashMap;

/// Environment variables to set.
#[derive(ToolSchema, Deserialize)]
struct Env {
    // A map has no place in a flat form.
    vars: HashMap<String, String>,
}

/// Ask the user.
#[tool]
async fn ask(cx: ToolContext) -> Result<String, ToolError> {
    let _answer = cx.elicit::<Env>("Please fill this in.").await?;
    Ok("done".into())
}

fn main() {}
