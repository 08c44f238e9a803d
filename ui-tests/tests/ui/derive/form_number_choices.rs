use dsh_runtime::{ToolContext, ToolError, ToolSchema, tool};
use serde::Deserialize;

/// A die roll.
#[derive(ToolSchema, Deserialize)]
struct Roll {
    // A form offers choices of strings only.
    #[schema(enum = [1, 2, 3, 4, 5, 6])]
    face: u8,
}

/// Ask the user.
#[tool]
async fn ask(cx: ToolContext) -> Result<String, ToolError> {
    let _answer = cx.elicit::<Roll>("Please fill this in.").await?;
    Ok("done".into())
}

fn main() {}
