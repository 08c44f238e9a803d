//! A first tool: define it, print what the model sees, call it.

use dsh_runtime::{Tool, ToolContext, ToolError, tool};

/// Greet someone by name.
#[tool(read_only)]
async fn greet(
    /// Who to greet.
    name: String,
    cx: ToolContext,
) -> Result<String, ToolError> {
    Ok(format!("Hello, {name}! (call {})", cx.call_id()))
}

#[tokio::main]
async fn main() -> Result<(), ToolError> {
    let def = Greet.definition();
    println!("{}: {}", def.name, def.description);
    println!("parameters: {}", def.parameters.to_json_string());
    let args = GreetArgs { name: "Ada".into() };
    println!(
        "{}",
        Greet.call(args, ToolContext::detached("greet")).await?
    );
    Ok(())
}
