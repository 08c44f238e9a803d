use dsh_runtime::{ToolContext, ToolError, ToolSchema, tool};
use serde::Deserialize;

fn any_text() -> dsh_runtime::schema::Schema {
    dsh_runtime::schema::Schema::string()
}

/// A note.
#[derive(ToolSchema, Deserialize)]
struct Note {
    // A hand-written schema may be anything.
    #[schema(with = any_text)]
    text: String,
}

/// Ask the user.
#[tool]
async fn ask(cx: ToolContext) -> Result<String, ToolError> {
    let _answer = cx.elicit::<Note>("Please fill this in.").await?;
    Ok("done".into())
}

fn main() {}
