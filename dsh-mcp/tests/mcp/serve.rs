//! Serving a registry over MCP, driven by rmcp's own client on an in-memory connection:
//! tools/list (schemas, output wrapping, annotations), tools/call (structured content,
//! isError with the path-qualified message, unknown tool), cancellation, progress, the
//! session as agent scope, per-session setup and its close, and list-change
//! notifications on both lifecycles (initialize and discover).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use dsh_mcp::{McpServer, SessionGuard};
use dsh_providers::export::Target;
use dsh_runtime::hooks::{CallInfo, guard_fn};
use dsh_runtime::{AgentScopeId, ToolContext, ToolError, ToolSchema, tool};
use rmcp::model::{ClientRequest, SubscriptionFilter};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::common::tools::{Greet, Toolset, Whoami};
use crate::common::user::User;
use crate::common::wire::{Connected, Revision, call, connect_stream, result_text as text_of};

/// A sum and a product.
#[derive(Serialize, Deserialize, ToolSchema)]
struct Totals {
    /// a + b.
    sum: i64,
    /// a * b.
    product: i64,
}

/// Add and multiply two numbers.
#[tool]
async fn arith(a: i64, b: i64) -> Result<Totals, ToolError> {
    Ok(Totals {
        sum: a + b,
        product: a * b,
    })
}

/// Wait until cancelled, then say so.
#[tool]
async fn wait_for_cancel(cx: ToolContext) -> Result<String, ToolError> {
    cx.cancellation().cancelled().await;
    CANCELLED_SEEN.send_replace(true);
    Ok("cancelled".to_string())
}

static CANCELLED_SEEN: std::sync::LazyLock<tokio::sync::watch::Sender<bool>> =
    std::sync::LazyLock::new(|| tokio::sync::watch::Sender::new(false));

/// Report progress three times.
#[tool]
async fn count(cx: ToolContext) -> Result<u32, ToolError> {
    for i in 1..=3 {
        cx.report_progress(f64::from(i), Some(3.0), Some(&format!("step {i}")));
    }
    // Not increasing: never sent.
    cx.report_progress(2.0, Some(3.0), None);
    Ok(3)
}

/// Report progress from a thread outside the runtime, then once more from a task left
/// running after the result.
#[tool]
async fn count_elsewhere(cx: ToolContext) -> Result<u32, ToolError> {
    std::thread::scope(|s| {
        s.spawn(|| cx.report_progress(1.0, Some(2.0), Some("from a thread")));
    });
    cx.report_progress(2.0, Some(2.0), None);
    let late = cx.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(30)).await;
        late.report_progress(5.0, Some(2.0), Some("after the result"));
    });
    Ok(2)
}

/// A registry of greet, arith, wait_for_cancel, count and whoami.
fn tools() -> Toolset {
    Toolset::new()
        .with(Greet)
        .with(Arith)
        .with(WaitForCancel)
        .with(Count)
        .with(Whoami)
}

/// Connect rmcp's client (a user declaring nothing) on a byte stream, speaking `revision`.
async fn connect_on(server: &McpServer, revision: Revision) -> Connected {
    connect_stream(server, User::new(), revision).await
}

/// The progress notifications as they crossed the wire, in the server's order.
fn wire_progress(c: &Connected) -> Vec<Value> {
    c.sent
        .lock()
        .unwrap()
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| m["params"].clone())
        .collect()
}

/// The `tools/list` results as they crossed the wire.
fn wire_lists(c: &Connected) -> Vec<Value> {
    c.sent
        .lock()
        .unwrap()
        .iter()
        .filter(|m| m["result"]["tools"].is_array())
        .map(|m| m["result"].clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_publishes_schemas_output_schemas_and_annotations() {
    let tools = tools();
    let registry = &tools.registry;
    let server = tools.server();
    let c = connect_on(&server, Revision::V2025_11_25).await;
    let tools = c.client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        ["greet", "arith", "wait_for_cancel", "count", "whoami"]
    );

    let greet = &tools[0];
    assert_eq!(greet.description.as_deref(), Some("Greet someone."));
    // The input schema is the registry's parameter schema, unchanged.
    let expected: Value = serde_json::from_str(
        &registry
            .view()
            .get("greet")
            .unwrap()
            .definition()
            .parameters
            .to_json_string(),
    )
    .unwrap();
    assert_eq!(Value::Object((*greet.input_schema).clone()), expected);
    // A string output is wrapped in an object root.
    assert_eq!(
        Value::Object((*greet.output_schema.clone().unwrap()).clone()),
        json!({
            "type": "object",
            "properties": {"result": {"type": "string"}},
            "required": ["result"],
            "additionalProperties": false
        })
    );
    let hints = greet.annotations.clone().unwrap();
    assert_eq!(hints.read_only_hint, Some(true));
    assert_eq!(hints.idempotent_hint, Some(true));
    assert_eq!(hints.destructive_hint, Some(false));
    // Undeclared, so the protocol's cautious default (open world) stands.
    assert_eq!(hints.open_world_hint, None);
    // An undeclared tool claims nothing beyond "not read-only".
    let arith_hints = tools[1].annotations.clone().unwrap();
    assert_eq!(arith_hints.read_only_hint, Some(false));
    assert_eq!(arith_hints.destructive_hint, None);
    assert_eq!(arith_hints.idempotent_hint, None);

    // Every listed tool is, byte for byte, its entry in the runtime's MCP export.
    let export = dsh_providers::export::export_registry(registry, Target::Mcp2025_11_25);
    for tool in &tools {
        let exported = dsh_runtime::json::to_serde(export.tool(&tool.name).unwrap());
        assert_eq!(
            serde_json::to_value(tool).unwrap(),
            exported,
            "{}",
            tool.name
        );
    }

    // An object output is published as it is.
    let arith = &tools[1];
    let out = Value::Object((*arith.output_schema.clone().unwrap()).clone());
    assert_eq!(out["type"], "object");
    assert_eq!(out["required"], json!(["sum", "product"]));
    c.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_return_content_and_structured_content() {
    let tools = tools();
    let c = connect_on(&tools.server(), Revision::V2025_11_25).await;

    let r = c
        .client
        .call_tool(call("greet", json!({"name": "Ada"})))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(false));
    assert_eq!(text_of(&r), "Hello, Ada!");
    assert_eq!(r.structured_content, Some(json!({"result": "Hello, Ada!"})));

    let r = c
        .client
        .call_tool(call("arith", json!({"a": 6, "b": 7})))
        .await
        .unwrap();
    assert_eq!(
        r.structured_content,
        Some(json!({"sum": 13, "product": 42}))
    );
    assert_eq!(text_of(&r), r#"{"sum":13,"product":42}"#);
    c.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_arguments_are_error_results_with_every_violation() {
    let tools = tools();
    let c = connect_on(&tools.server(), Revision::V2025_11_25).await;
    let r = c
        .client
        .call_tool(call("arith", json!({"a": "six", "c": 1})))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));
    assert_eq!(r.structured_content, None);
    let text = text_of(&r);
    assert!(text.starts_with("Error: invalid arguments"), "{text}");
    for needle in ["a", "b", "\"c\""] {
        assert!(text.contains(needle), "{needle} missing from {text}");
    }
    assert!(text.contains("integer"), "{text}");
    c.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_tool_is_a_protocol_error() {
    let tools = tools();
    let c = connect_on(&tools.server(), Revision::V2025_11_25).await;
    let err = c
        .client
        .call_tool(call("nope", json!({})))
        .await
        .expect_err("unknown tool");
    match err {
        rmcp::service::ServiceError::McpError(e) => {
            assert_eq!(e.code, rmcp::model::ErrorCode::INVALID_PARAMS);
            assert_eq!(
                e.message,
                r#"unknown tool "nope"; available tools: "greet", "arith", "wait_for_cancel", "count", "whoami""#
            );
        }
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
    c.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_cancels_the_call_token() {
    let tools = tools();
    let c = connect_on(&tools.server(), Revision::V2025_11_25).await;
    let mut seen = CANCELLED_SEEN.subscribe();
    CANCELLED_SEEN.send_replace(false);
    let handle = c
        .client
        .send_cancellable_request(
            ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(call(
                "wait_for_cancel",
                json!({}),
            ))),
            rmcp::service::PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        !*seen.borrow_and_update(),
        "the body ran to its end uncancelled"
    );
    c.client
        .notify_cancelled(rmcp::model::CancelledNotificationParam::new(
            Some(handle.id.clone()),
            Some("test".to_string()),
        ))
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(10), seen.wait_for(|s| *s))
        .await
        .expect("the body saw the cancellation")
        .unwrap();
    drop(handle);
    c.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_flows_when_a_token_was_sent() {
    let tools = tools();
    let c = connect_on(&tools.server(), Revision::V2025_11_25).await;
    // rmcp's client puts a progress token in every request.
    let r = c.client.call_tool(call("count", json!({}))).await.unwrap();
    assert_eq!(r.structured_content, Some(json!({"result": 3})));
    // The non-increasing report is dropped, and the rest leave the server in order.
    // The server sends them before the result, but the client's handler may see them
    // after it, and in any order, so the order is read from the wire.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while c.heard.progress.lock().unwrap().len() < 3 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    let expected = [
        (1.0, Some(3.0), Some("step 1".to_string())),
        (2.0, Some(3.0), Some("step 2".to_string())),
        (3.0, Some(3.0), Some("step 3".to_string())),
    ];
    let wire: Vec<(f64, Option<f64>, Option<String>)> = wire_progress(&c)
        .iter()
        .map(|p| {
            (
                p["progress"].as_f64().unwrap(),
                p["total"].as_f64(),
                p["message"].as_str().map(str::to_string),
            )
        })
        .collect();
    assert_eq!(wire, expected);
    let progress = c.heard.progress.lock().unwrap().clone();
    let mut seen: Vec<(f64, Option<f64>, Option<String>)> = progress
        .iter()
        .map(|p| {
            assert_eq!(p.progress_token, progress[0].progress_token);
            (p.progress, p.total, p.message.clone())
        })
        .collect();
    seen.sort_by(|a, b| a.0.total_cmp(&b.0));
    assert_eq!(seen, expected);
    c.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_from_another_thread_is_sent_and_none_after_the_result() {
    let tools = tools().with(CountElsewhere);
    let c = connect_on(&tools.server(), Revision::V2025_11_25).await;
    let wire = |c: &Connected| -> Vec<(f64, Option<String>)> {
        wire_progress(c)
            .iter()
            .map(|p| {
                (
                    p["progress"].as_f64().unwrap(),
                    p["message"].as_str().map(str::to_string),
                )
            })
            .collect()
    };
    // Calls without a report first: they start nothing that could send later.
    for _ in 0..3 {
        let r = c.client.call_tool(call("whoami", json!({}))).await.unwrap();
        assert_ne!(r.is_error, Some(true), "{r:?}");
    }
    let r = c
        .client
        .call_tool(call("count_elsewhere", json!({})))
        .await
        .unwrap();
    assert_eq!(r.structured_content, Some(json!({"result": 2})));
    // The late report would be sent 30 ms after the result: wait well past it.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        wire(&c),
        [(1.0, Some("from a thread".to_string())), (2.0, None)]
    );
    c.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_session_is_an_agent_scope_with_its_own_setup() {
    let tools = tools();
    let registry = &tools.registry;
    // The scopes of the sessions, in order, and the sessions closed.
    let scopes: Arc<Mutex<Vec<AgentScopeId>>> = Arc::default();
    let closed: Arc<Mutex<Vec<AgentScopeId>>> = Arc::default();
    // A guard (a policy hook) that sees which session each call comes from.
    let agents: Arc<Mutex<Vec<Option<AgentScopeId>>>> = Arc::default();
    let seen = agents.clone();
    let _guard = registry.add_guard(guard_fn(move |call: &CallInfo<'_>| {
        seen.lock().unwrap().push(call.agent());
        (call.name() == "greet"
            && call.arguments().get("name").and_then(|v| v.as_str()) == Some("Mallory"))
        .then(|| "no greetings for Mallory".to_string())
    }));
    let (s, cl) = (scopes.clone(), closed.clone());
    let server = McpServer::new(registry.clone()).on_session(move |scope| {
        s.lock().unwrap().push(scope.id());
        let id = scope.id();
        let cl = cl.clone();
        SessionGuard::new().on_close(async move {
            cl.lock().unwrap().push(id);
        })
    });

    let a = connect_on(&server, Revision::V2025_11_25).await;
    let b = connect_on(&server, Revision::V2025_11_25).await;
    let ra = a.client.call_tool(call("whoami", json!({}))).await.unwrap();
    let rb = b.client.call_tool(call("whoami", json!({}))).await.unwrap();
    let ids = scopes.lock().unwrap().clone();
    assert_eq!(ids.len(), 2);
    assert_eq!(ra.structured_content, Some(json!({"result": ids[0].get()})));
    assert_eq!(rb.structured_content, Some(json!({"result": ids[1].get()})));
    assert_eq!(*agents.lock().unwrap(), [Some(ids[0]), Some(ids[1])]);

    // A guard's denial is an error result carrying its reason.
    let denied = a
        .client
        .call_tool(call("greet", json!({"name": "Mallory"})))
        .await
        .unwrap();
    assert_eq!(denied.is_error, Some(true));
    assert!(text_of(&denied).contains("no greetings for Mallory"));

    // Ending a session runs its close.
    a.client.cancel().await.unwrap();
    a.server.expect("a byte stream").await.unwrap();
    assert_eq!(*closed.lock().unwrap(), [ids[0]]);
    b.client.cancel().await.unwrap();
    b.server.expect("a byte stream").await.unwrap();
    assert_eq!(*closed.lock().unwrap(), [ids[0], ids[1]]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_session_tools_shadow_global_ones() {
    let tools = tools();
    /// The session's own greeting.
    #[tool]
    async fn greet(name: String) -> Result<String, ToolError> {
        Ok(format!("Session hello, {name}"))
    }
    let server = tools.server().on_session(|scope| {
        SessionGuard::new().keep(
            scope
                .register(Greet)
                .expect("register in scope")
                .unregister_on_drop(),
        )
    });
    let c = connect_on(&server, Revision::V2025_11_25).await;
    let tools = c.client.list_all_tools().await.unwrap();
    assert_eq!(tools[0].name, "greet");
    assert_eq!(
        tools[0].description.as_deref(),
        Some("The session's own greeting.")
    );
    let r = c
        .client
        .call_tool(call("greet", json!({"name": "Ada"})))
        .await
        .unwrap();
    assert_eq!(text_of(&r), "Session hello, Ada");
    c.client.cancel().await.unwrap();
}

/// Another tool, registered while clients are connected.
#[tool]
async fn later() -> Result<bool, ToolError> {
    Ok(true)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changes_are_notified_on_initialize_sessions() {
    let tools = tools();
    let registry = &tools.registry;
    let server = tools.server();
    let mut c = connect_on(&server, Revision::V2025_11_25).await;
    // The client sends `notifications/initialized` before its first request.
    c.client.list_all_tools().await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;

    // Another session's scope coming and going changes nothing this session sees.
    let other = connect_on(&server, Revision::V2025_11_25).await;
    other.client.cancel().await.unwrap();
    let reg = registry.register(Later).unwrap();
    tokio::time::timeout(Duration::from_secs(10), c.heard.list_changed.recv())
        .await
        .expect("a list_changed notification")
        .unwrap();
    assert!(
        c.heard.list_changed.try_recv().is_err(),
        "one notification per change"
    );
    let names: Vec<String> = c
        .client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(names.contains(&"later".to_string()));

    reg.unregister();
    tokio::time::timeout(Duration::from_secs(10), c.heard.list_changed.recv())
        .await
        .expect("a list_changed notification on removal")
        .unwrap();
    c.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changes_are_notified_on_discover_listen_streams() {
    let tools = tools();
    let registry = &tools.registry;
    let server = tools.server();
    let c = connect_on(&server, Revision::V2026_07_28).await;
    let mut subscription = c
        .client
        .listen(SubscriptionFilter::builder().tools_list_changed().build())
        .await
        .unwrap();
    assert_eq!(subscription.acknowledged().tools_list_changed, Some(true));
    let _reg = registry.register(Later).unwrap();
    let note = tokio::time::timeout(Duration::from_secs(10), subscription.next())
        .await
        .expect("a notification on the listen stream")
        .unwrap()
        .expect("the stream is open");
    assert!(
        matches!(
            note,
            rmcp::model::ServerNotification::ToolListChangedNotification(_)
        ),
        "{note:?}"
    );
    // Calls work the same on this lifecycle.
    let r = c
        .client
        .call_tool(call("greet", json!({"name": "Bo"})))
        .await
        .unwrap();
    assert_eq!(r.structured_content, Some(json!({"result": "Hello, Bo!"})));
    subscription.cancel().await.unwrap();
    c.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_list_carries_what_the_revision_requires_as_the_export_does() {
    let tools = tools();
    let registry = &tools.registry;
    let server = tools.server();
    let c = connect_on(&server, Revision::V2026_07_28).await;
    let tools = c.client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 5);
    let lists = wire_lists(&c);
    let list = lists.last().expect("a tools/list result on the wire");
    assert_eq!(list["resultType"], "complete", "{list}");
    assert!(list["ttlMs"].is_u64(), "{list}");
    assert!(
        matches!(list["cacheScope"].as_str(), Some("public" | "private")),
        "{list}"
    );
    // The export for this revision states the same fields.
    let fragment =
        dsh_providers::export::export_registry(registry, Target::Mcp2026_07_28).to_serde();
    let keys = |v: &Value| {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(keys(&fragment), keys(list), "{fragment}");
    assert!(
        dsh_providers::export::check::check(
            Target::Mcp2026_07_28,
            &dsh_runtime::json::to_value(&fragment).unwrap()
        )
        .is_empty()
    );
    c.client.cancel().await.unwrap();
}
