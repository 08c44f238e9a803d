//! # A first tool, end to end
//!
//! What this teaches: how an ordinary `async fn` becomes a tool with `#[tool]`, what a
//! model is shown of it (its name, description and JSON parameter schema, all derived
//! from the Rust signature and doc comments), and how a call runs through
//! [`Registry::execute`]: raw JSON arguments in, one [`ToolResult`](dsh_runtime::ToolResult)
//! out, success or failure, never a panic or a `Result` you must unwrap.
//!
//! Run it with `cargo run -p examples --bin first_tool`.
//!
//! Read next: `argument_structs` (arguments richer than a few scalars).

use dsh_runtime::{Registry, Tool, ToolCall, ToolContext, ToolError, tool};

/// Greet someone by name.
#[tool(read_only)]
async fn greet(
    /// Who to greet.
    name: String,
    /// How many exclamation marks to add (default 1).
    excitement: Option<u8>,
    cx: ToolContext,
) -> Result<String, ToolError> {
    if name.trim().is_empty() {
        // A tool's own failure: a code of its choosing and a message for the model.
        return Err(ToolError::with_code("EMPTY_NAME", "the name is blank"));
    }
    let marks = "!".repeat(usize::from(excitement.unwrap_or(1)));
    Ok(format!("Hello, {name}{marks} (call {})", cx.call_id()))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // 1. What the model sees. `#[tool]` generated the unit struct `Greet` (implementing
    //    `Tool`) and `GreetArgs`; the definition is built from the signature and docs:
    //    the fn's doc comment is the description, each parameter's is its description.
    let def = Greet.definition();
    println!("== what the model sees");
    println!("name: {}", def.name);
    println!("description: {}", def.description);
    println!("parameters: {}", def.parameters.to_json_string());

    // 2. A registry holds the tools a model may call. `register` returns a handle;
    //    dropping it does nothing (the tool stays until `_greet.unregister()`, or use
    //    `.unregister_on_drop()` for a guard that removes it when dropped).
    let registry = Registry::new();
    let _greet = registry.register(Greet)?;
    println!("schemas: {}", registry.view().schemas_json());

    // 3. A call as it arrives from a model: an id, a name and raw JSON text.
    println!("== a good call");
    let ok = registry
        .execute(ToolCall::new(
            "call-1",
            "greet",
            r#"{"name":"Ada","excitement":3}"#,
        ))
        .await;
    println!("success: {}", ok.is_success());
    println!("content: {}", ok.text());
    println!("envelope: {}", ok.to_json());

    // 4. Failures are results too, each with a code an agent loop can branch on.
    println!("== failing calls");
    let cases = [
        ("call-2", "greet", r#"{"excitement":2}"#),
        ("call-3", "greet", r#"{"name":"   "}"#),
        ("call-4", "greet", r#"{"name":"Ada""#),
        ("call-5", "wave", r#"{}"#),
    ];
    for (id, name, args) in cases {
        let r = registry.execute(ToolCall::new(id, name, args)).await;
        println!(
            "{id}: code={} message={}",
            r.code_str().unwrap_or("-"),
            r.message().unwrap_or("-")
        );
        println!("{id}: content={}", r.text());
    }

    // 5. The fn is still an ordinary fn, and the tool can be called directly (no
    //    registry, no validation): handy in unit tests.
    println!("== direct call");
    let direct = Greet
        .call(
            GreetArgs {
                name: "Grace".into(),
                excitement: None,
            },
            ToolContext::detached("greet"),
        )
        .await
        .map_err(|e| e.message().to_string())?;
    println!("direct: {direct}");
    Ok(())
}
