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
use dsh_runtime::{AgentScopeId, Registry, ToolContext, ToolError, ToolSchema, tool};
use rmcp::model::{
    CallToolRequestParams, ClientRequest, ProgressNotificationParam, ProtocolVersion,
    SubscriptionFilter,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// Greet someone.
#[tool(read_only, idempotent)]
async fn greet(
    /// Who to greet.
    name: String,
) -> Result<String, ToolError> {
    Ok(format!("Hello, {name}!"))
}

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

/// The agent scope of the call.
#[tool]
async fn whoami(cx: ToolContext) -> Result<u64, ToolError> {
    Ok(cx.agent().map_or(0, AgentScopeId::get))
}

fn registry() -> (Registry, Vec<dsh_runtime::RegistrationHandle>) {
    let registry = Registry::new();
    let regs = vec![
        registry.register(Greet).unwrap(),
        registry.register(Arith).unwrap(),
        registry.register(WaitForCancel).unwrap(),
        registry.register(Count).unwrap(),
        registry.register(Whoami).unwrap(),
    ];
    (registry, regs)
}

/// A client recording list changes and progress.
#[derive(Clone)]
struct Recorder {
    list_changed: mpsc::UnboundedSender<()>,
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl ClientHandler for Recorder {
    async fn on_tool_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        let _ = self.list_changed.send(());
    }
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _cx: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params);
    }
}

struct Connected {
    client: RunningService<RoleClient, Recorder>,
    list_changed: mpsc::UnboundedReceiver<()>,
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    /// The progress notifications as they crossed the wire, in the server's order
    /// (rmcp's client runs each notification handler on its own task, so `progress`
    /// holds them in whatever order those tasks ran).
    wire_progress: Arc<Mutex<Vec<Value>>>,
    /// The `tools/list` results as they crossed the wire.
    wire_lists: Arc<Mutex<Vec<Value>>>,
    server: tokio::task::JoinHandle<()>,
}

/// Copy the server's messages to the client line by line, recording progress
/// notifications in the order the server wrote them.
fn tap_server_output(
    from_server: tokio::io::DuplexStream,
    to_client: tokio::io::DuplexStream,
    wire_progress: Arc<Mutex<Vec<Value>>>,
    wire_lists: Arc<Mutex<Vec<Value>>>,
) {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
    let (server_read, mut server_write) = tokio::io::split(from_server);
    let (mut client_read, mut client_write) = tokio::io::split(to_client);
    tokio::spawn(async move {
        let mut lines = BufReader::new(server_read).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if let Ok(message) = serde_json::from_str::<Value>(&line) {
                if message["method"] == "notifications/progress" {
                    wire_progress
                        .lock()
                        .unwrap()
                        .push(message["params"].clone());
                }
                if message["result"]["tools"].is_array() {
                    wire_lists.lock().unwrap().push(message["result"].clone());
                }
            }
            let line = line + "\n";
            if client_write.write_all(line.as_bytes()).await.is_err() {
                break;
            }
        }
        let _ = client_write.shutdown().await;
    });
    tokio::spawn(async move {
        let mut buf = vec![0u8; 1 << 14];
        loop {
            match client_read.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if server_write.write_all(&buf[..n]).await.is_err() {
                        break;
                    }
                }
            }
        }
        let _ = server_write.shutdown().await;
    });
}

async fn connect_with(server: &McpServer, lifecycle: ClientLifecycleMode) -> Connected {
    let (client_io, tap_client_side) = tokio::io::duplex(1 << 16);
    let (tap_server_side, server_io) = tokio::io::duplex(1 << 16);
    let wire_progress = Arc::new(Mutex::new(Vec::new()));
    let wire_lists = Arc::new(Mutex::new(Vec::new()));
    tap_server_output(
        tap_server_side,
        tap_client_side,
        wire_progress.clone(),
        wire_lists.clone(),
    );
    let server = server.clone();
    let server = tokio::spawn(async move {
        server.serve(server_io).await.expect("server handshake");
    });
    let (tx, list_changed) = mpsc::unbounded_channel();
    let progress = Arc::new(Mutex::new(Vec::new()));
    let recorder = Recorder {
        list_changed: tx,
        progress: progress.clone(),
    };
    let client = recorder
        .serve_with_lifecycle(client_io, lifecycle)
        .await
        .expect("client handshake");
    Connected {
        client,
        list_changed,
        progress,
        wire_progress,
        wire_lists,
        server,
    }
}

async fn connect(server: &McpServer) -> Connected {
    connect_with(server, ClientLifecycleMode::Initialize).await
}

fn call(name: &str, args: Value) -> CallToolRequestParams {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    CallToolRequestParams::new(name.to_string()).with_arguments(args)
}

fn text_of(result: &rmcp::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_publishes_schemas_output_schemas_and_annotations() {
    let (registry, _regs) = registry();
    let server = McpServer::new(registry.clone());
    let c = connect(&server).await;
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
    let export = dsh_providers::export::export_registry(&registry, Target::Mcp2025_11_25);
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
    let (registry, _regs) = registry();
    let c = connect(&McpServer::new(registry)).await;

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
    let (registry, _regs) = registry();
    let c = connect(&McpServer::new(registry)).await;
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
    let (registry, _regs) = registry();
    let c = connect(&McpServer::new(registry)).await;
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
    let (registry, _regs) = registry();
    let c = connect(&McpServer::new(registry)).await;
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
    let (registry, _regs) = registry();
    let c = connect(&McpServer::new(registry)).await;
    // rmcp's client puts a progress token in every request.
    let r = c.client.call_tool(call("count", json!({}))).await.unwrap();
    assert_eq!(r.structured_content, Some(json!({"result": 3})));
    // The non-increasing report is dropped, and the rest leave the server in order.
    // The server sends them before the result, but the client's handler may see them
    // after it, and in any order, so the order is read from the wire.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while c.progress.lock().unwrap().len() < 3 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    let expected = [
        (1.0, Some(3.0), Some("step 1".to_string())),
        (2.0, Some(3.0), Some("step 2".to_string())),
        (3.0, Some(3.0), Some("step 3".to_string())),
    ];
    let wire: Vec<(f64, Option<f64>, Option<String>)> = c
        .wire_progress
        .lock()
        .unwrap()
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
    let progress = c.progress.lock().unwrap().clone();
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
    let (registry, mut regs) = registry();
    regs.push(registry.register(CountElsewhere).unwrap());
    let c = connect(&McpServer::new(registry)).await;
    let wire = |c: &Connected| -> Vec<(f64, Option<String>)> {
        c.wire_progress
            .lock()
            .unwrap()
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
    let (registry, _regs) = registry();
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

    let a = connect(&server).await;
    let b = connect(&server).await;
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
    a.server.await.unwrap();
    assert_eq!(*closed.lock().unwrap(), [ids[0]]);
    b.client.cancel().await.unwrap();
    b.server.await.unwrap();
    assert_eq!(*closed.lock().unwrap(), [ids[0], ids[1]]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_session_tools_shadow_global_ones() {
    let (registry, _regs) = registry();
    /// The session's own greeting.
    #[tool]
    async fn greet(name: String) -> Result<String, ToolError> {
        Ok(format!("Session hello, {name}"))
    }
    let server = McpServer::new(registry).on_session(|scope| {
        SessionGuard::new().keep(
            scope
                .register(Greet)
                .expect("register in scope")
                .unregister_on_drop(),
        )
    });
    let c = connect(&server).await;
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
    let (registry, _regs) = registry();
    let server = McpServer::new(registry.clone());
    let mut c = connect(&server).await;
    // The client sends `notifications/initialized` before its first request.
    c.client.list_all_tools().await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;

    // Another session's scope coming and going changes nothing this session sees.
    let other = connect(&server).await;
    other.client.cancel().await.unwrap();
    let reg = registry.register(Later).unwrap();
    tokio::time::timeout(Duration::from_secs(10), c.list_changed.recv())
        .await
        .expect("a list_changed notification")
        .unwrap();
    assert!(
        c.list_changed.try_recv().is_err(),
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
    tokio::time::timeout(Duration::from_secs(10), c.list_changed.recv())
        .await
        .expect("a list_changed notification on removal")
        .unwrap();
    c.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changes_are_notified_on_discover_listen_streams() {
    let (registry, _regs) = registry();
    let server = McpServer::new(registry.clone());
    let c = connect_with(
        &server,
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    )
    .await;
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
    let (registry, _regs) = registry();
    let server = McpServer::new(registry.clone());
    let c = connect_with(
        &server,
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    )
    .await;
    let tools = c.client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 5);
    let lists = c.wire_lists.lock().unwrap().clone();
    let list = lists.last().expect("a tools/list result on the wire");
    assert_eq!(list["resultType"], "complete", "{list}");
    assert!(list["ttlMs"].is_u64(), "{list}");
    assert!(
        matches!(list["cacheScope"].as_str(), Some("public" | "private")),
        "{list}"
    );
    // The export for this revision states the same fields.
    let fragment =
        dsh_providers::export::export_registry(&registry, Target::Mcp2026_07_28).to_serde();
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
