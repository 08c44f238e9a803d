use dsh_runtime::{ToolContext, ToolError, ToolSchema, tool};
use serde::Deserialize;

#[derive(ToolSchema, Deserialize)]
struct Address {
    street: String,
    city: String,
}

/// Where to ship an order.
#[derive(ToolSchema, Deserialize)]
struct Shipping {
    name: String,
    // MCP forms are flat: a nested object cannot be a field.
    address: Address,
}

/// Ship an order where the user says.
#[tool]
async fn ship(cx: ToolContext) -> Result<String, ToolError> {
    let _answer = cx.elicit::<Shipping>("Where to?").await?;
    Ok("shipped".into())
}

fn main() {}
