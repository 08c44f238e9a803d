use dsh_runtime::{ToolContext, ToolError, ToolSchema, tool};
use serde::Deserialize;

/// How to pay.
#[derive(ToolSchema, Deserialize)]
enum Payment {
    Cash,
    Card { number: String },
}

/// Checkout details.
#[derive(ToolSchema, Deserialize)]
struct Checkout {
    // A variant carrying data is an object: not a choice among strings.
    payment: Payment,
}

/// Ask the user.
#[tool]
async fn ask(cx: ToolContext) -> Result<String, ToolError> {
    let _answer = cx.elicit::<Checkout>("Please fill this in.").await?;
    Ok("done".into())
}

fn main() {}
