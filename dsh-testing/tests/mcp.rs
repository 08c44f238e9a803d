//! `dsh_testing::mcp`: the in-memory client/server pair lists, calls and checks
//! structured content against output schemas; a result off its schema is caught.

use dsh_mcp::McpServer;
use dsh_runtime::{Registry, ToolError, ToolSchema, tool};
use dsh_testing::mcp::{McpTestClient, McpTestError, check_structured_content};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// A sum and a product.
#[derive(Serialize, Deserialize, ToolSchema)]
struct Totals {
    /// a + b.
    sum: i64,
    /// a * b.
    product: i64,
}

/// Add and multiply two numbers.
#[tool(read_only)]
async fn arith(a: i64, b: i64) -> Result<Totals, ToolError> {
    Ok(Totals {
        sum: a + b,
        product: a * b,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_calls_and_checks_structured_content() {
    let registry = Registry::new();
    let _arith = registry.register(Arith).expect("arith");
    let client = McpTestClient::connect(&McpServer::new(registry))
        .await
        .expect("connect");
    let tools = client.list_tools().await.expect("list");
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].name, "arith");
    let result = client
        .call_checked("arith", json!({"a": 6, "b": 7}))
        .await
        .expect("call");
    assert_eq!(
        result.structured_content,
        Some(json!({"sum": 13, "product": 42}))
    );
    assert_eq!(result.is_error, Some(false));

    // Invalid arguments are a tool error, with the registry's message; no structured content.
    let bad = client
        .call_checked("arith", json!({"a": "six"}))
        .await
        .expect("call");
    assert_eq!(bad.is_error, Some(true));
    let text = bad.content[0].as_text().map(|t| t.text.clone());
    assert_eq!(
        text.as_deref(),
        Some(r#"Error: invalid arguments: missing required property "b"; "a" must be an integer"#)
    );

    // Not in the list.
    let missing = client.call_checked("nope", json!({})).await;
    assert!(
        matches!(&missing, Err(McpTestError::NoSuchTool(n)) if n == "nope"),
        "{missing:?}"
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn content_off_the_output_schema_is_reported() {
    let registry = Registry::new();
    let _arith = registry.register(Arith).expect("arith");
    let client = McpTestClient::connect(&McpServer::new(registry))
        .await
        .expect("connect");
    let tools = client.list_tools().await.expect("list");
    let mut result = client
        .call("arith", json!({"a": 1, "b": 2}))
        .await
        .expect("call");
    assert!(check_structured_content(&tools[0], &result).is_ok());
    result.structured_content = Some(json!({"sum": "3"}));
    let err = check_structured_content(&tools[0], &result).expect_err("off its schema");
    let message = err.to_string();
    assert!(
        message.starts_with(r#"tool "arith": structuredContent breaks its outputSchema: "#),
        "{message}"
    );
    assert!(message.contains(r#"at "/sum""#), "{message}");
    assert!(message.contains("product"), "{message}");
    result.structured_content = None;
    let err = check_structured_content(&tools[0], &result).expect_err("no content");
    assert!(
        err.to_string().contains("has no structuredContent"),
        "{err}"
    );
    client.close().await;
}
