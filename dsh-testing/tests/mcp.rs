//! `dsh_testing::mcp`: the in-memory client/server pair lists, calls and checks
//! structured content against output schemas; a result off its schema is caught.

use dsh_mcp::McpServer;
use dsh_runtime::{Registry, ToolError, ToolSchema, tool};
use dsh_testing::mcp::{McpAnswer, McpTestClient, McpTestError, check_structured_content};
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

/// Close a ticket for good.
#[tool(ask = "closing a ticket cannot be undone")]
async fn close_ticket(id: u64) -> u64 {
    id
}

/// Delete a ticket.
#[tool(ask = "deleting loses the history", destructive)]
async fn delete_ticket(id: u64) -> u64 {
    id
}

fn tickets() -> (McpServer, Vec<dsh_runtime::RegistrationHandle>) {
    let registry = Registry::new();
    let regs = vec![
        registry.register(CloseTicket).unwrap(),
        registry.register(DeleteTicket).unwrap(),
    ];
    (McpServer::new(registry), regs)
}

fn text(r: &rmcp::model::CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripted_user_approves_rejects_and_cancels_by_tool() {
    let (server, _regs) = tickets();
    let client = McpTestClient::connect_user(&server).await.unwrap();
    client.approve("close_ticket").reject("delete_ticket");
    let r = client.call("close_ticket", json!({"id": 1})).await.unwrap();
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(r.structured_content, Some(json!({"result": 1})));
    let r = client
        .call("delete_ticket", json!({"id": 2}))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));
    assert_eq!(text(&r), r#"Error: the user rejected tool "delete_ticket""#);
    // A once-answer comes first, then the standing answer again.
    client.answer_once("close_ticket", McpAnswer::Cancel);
    let r = client.call("close_ticket", json!({"id": 3})).await.unwrap();
    assert_eq!(
        text(&r),
        r#"Error: approval for tool "close_ticket" was cancelled"#
    );
    let r = client.call("close_ticket", json!({"id": 4})).await.unwrap();
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    client.cancel("delete_ticket");
    let r = client
        .call("delete_ticket", json!({"id": 5}))
        .await
        .unwrap();
    assert_eq!(
        text(&r),
        r#"Error: approval for tool "delete_ticket" was cancelled"#
    );
    // Every form is recorded with the tool, the declared reason and the answer.
    let asked = client.elicitations();
    let seen: Vec<(Option<&str>, McpAnswer)> = asked
        .iter()
        .map(|e| (e.tool.as_deref(), e.answer))
        .collect();
    assert_eq!(
        seen,
        [
            (Some("close_ticket"), McpAnswer::Approve),
            (Some("delete_ticket"), McpAnswer::Reject),
            (Some("close_ticket"), McpAnswer::Cancel),
            (Some("close_ticket"), McpAnswer::Approve),
            (Some("delete_ticket"), McpAnswer::Cancel),
        ]
    );
    assert!(
        asked[0]
            .message
            .ends_with("Reason: closing a ticket cannot be undone"),
        "{}",
        asked[0].message
    );
    assert_eq!(
        asked[0].params["requestedSchema"]["required"],
        json!(["approve"])
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripted_user_answers_by_predicate_and_dismisses_what_nothing_answers() {
    let (server, _regs) = tickets();
    let client = McpTestClient::connect_user(&server).await.unwrap();
    // Approve only calls whose summary names ticket 7.
    client.answer_if(|e| e.message.contains("\"id\":7"), McpAnswer::Approve);
    let r = client
        .call("delete_ticket", json!({"id": 7}))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    // Nothing in the script answers: the form is dismissed.
    let r = client
        .call("delete_ticket", json!({"id": 8}))
        .await
        .unwrap();
    assert_eq!(
        text(&r),
        r#"Error: approval for tool "delete_ticket" was cancelled"#
    );
    client.close().await;
    // The plain client declares no elicitation: the call is denied, and says why.
    let client = McpTestClient::connect(&server).await.unwrap();
    let r = client.call("close_ticket", json!({"id": 1})).await.unwrap();
    assert_eq!(r.is_error, Some(true));
    assert!(
        text(&r).starts_with("Error: closing a ticket cannot be undone"),
        "{}",
        text(&r)
    );
    assert!(client.elicitations().is_empty());
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_asking_tool_is_not_published_as_read_only() {
    let (server, _regs) = tickets();
    let client = McpTestClient::connect(&server).await.unwrap();
    let tools = client.list_tools().await.unwrap();
    for t in &tools {
        let a = t.annotations.as_ref().expect("annotations");
        assert_eq!(a.read_only_hint, Some(false), "{}", t.name);
        // An undeclared hint keeps MCP's cautious default (destructive).
        assert_ne!(a.destructive_hint, Some(false), "{}", t.name);
    }
    client.close().await;
}
