//! Task status notifications on protocol 2026-07-28: a `subscriptions/listen` request
//! whose filter names tasks (`taskIds`, from the tasks extension) gets the acknowledgment
//! with those ids and a `notifications/tasks` for each of its context's tasks, at once
//! and at each change (progress, `input_required`, the terminal state), over a byte
//! stream and over Streamable HTTP.
//!
//! rmcp's client cannot put `taskIds` in a filter (its `SubscriptionFilter` has no such
//! field), so these tests speak JSON-RPC themselves: lines on a byte stream, POSTs over
//! HTTP, reading the listen request's event stream as it arrives.

use std::time::Duration;

use dsh_mcp::{HttpOptions, McpServer, serve_http};
use dsh_runtime::jobs::JobRuntime;
use dsh_runtime::{Registry, ToolContext, ToolError, tool};
use futures_util::StreamExt as _;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

#[path = "common/task_tools.rs"]
mod task_tools;
use task_tools::*;

/// Wait for the `go` signal of `tag`, reporting progress before and after.
#[tool(task = "optional")]
async fn gated(cx: ToolContext, tag: String) -> Result<String, ToolError> {
    cx.report_progress(1.0, Some(2.0), Some("waiting"));
    let mut rx = GATES.subscribe();
    let _ = rx.wait_for(|open| open.contains(&tag)).await;
    cx.report_progress(2.0, Some(2.0), Some("opened"));
    Ok(format!("done: {tag}"))
}

static GATES: std::sync::LazyLock<tokio::sync::watch::Sender<Vec<String>>> =
    std::sync::LazyLock::new(|| tokio::sync::watch::Sender::new(Vec::new()));

fn open_gate(tag: &str) {
    GATES.send_modify(|open| open.push(tag.to_string()));
}

/// Run after the user's yes (pre-execute policy asks before every call).
#[tool(task = "optional")]
async fn guarded(note: String) -> Result<String, ToolError> {
    Ok(format!("guarded: {note}"))
}

const VERSION: &str = "2026-07-28";

/// A request's `_meta` for 2026-07-28, declaring the tasks extension (or not) and form
/// elicitation.
fn meta(tasks: bool) -> Value {
    let capabilities = if tasks {
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}, "elicitation": {"form": {}}})
    } else {
        json!({})
    };
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "listen-test", "version": "0"},
    })
}

fn request(id: u64, method: &str, mut params: Value, tasks: bool) -> Value {
    params["_meta"] = meta(tasks);
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn listen(id: u64, task_ids: Value, tasks: bool) -> Value {
    request(
        id,
        "subscriptions/listen",
        json!({"notifications": {"taskIds": task_ids}}),
        tasks,
    )
}

#[derive(Clone, Copy, Debug)]
enum Wire {
    Stream,
    Http,
}

/// A client speaking raw JSON-RPC: every message the server sends it arrives on
/// `incoming` (over HTTP: each response, and each event of each response stream).
struct Raw {
    wire: Wire,
    incoming: mpsc::UnboundedReceiver<Value>,
    /// Messages received while waiting for others, in order.
    aside: Vec<Value>,
    sender: mpsc::UnboundedSender<Value>,
    stream: Option<tokio::io::WriteHalf<tokio::io::DuplexStream>>,
    url: Option<String>,
    token: Option<String>,
    http: reqwest::Client,
}

impl Raw {
    async fn stream(server: &McpServer) -> Raw {
        let (client_io, server_io) = tokio::io::duplex(1 << 16);
        let server = server.clone();
        tokio::spawn(async move {
            let _ = server.serve(server_io).await;
        });
        let (read, write) = tokio::io::split(client_io);
        let (sender, incoming) = mpsc::unbounded_channel();
        let tx = sender.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(read).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if let Ok(v) = serde_json::from_str::<Value>(&line) {
                    let _ = tx.send(v);
                }
            }
        });
        Raw {
            wire: Wire::Stream,
            incoming,
            aside: Vec::new(),
            sender,
            stream: Some(write),
            url: None,
            token: None,
            http: reqwest::Client::new(),
        }
    }

    fn http(url: String, token: Option<&str>) -> Raw {
        let (sender, incoming) = mpsc::unbounded_channel();
        Raw {
            wire: Wire::Http,
            incoming,
            aside: Vec::new(),
            sender,
            stream: None,
            url: Some(url),
            token: token.map(str::to_string),
            http: reqwest::Client::new(),
        }
    }

    /// Send `message`; what the server answers arrives on `incoming`.
    async fn send(&mut self, message: &Value) {
        match self.wire {
            Wire::Stream => {
                let w = self.stream.as_mut().unwrap();
                let mut line = message.to_string();
                line.push('\n');
                w.write_all(line.as_bytes()).await.unwrap();
                w.flush().await.unwrap();
            }
            Wire::Http => {
                let mut post = self
                    .http
                    .post(self.url.as_deref().unwrap())
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                    .header("mcp-protocol-version", VERSION)
                    .body(message.to_string());
                if let Some(method) = message["method"].as_str() {
                    post = post.header("mcp-method", method);
                }
                let params = &message["params"];
                if let Some(name) = params["name"].as_str().or(params["taskId"].as_str()) {
                    post = post.header("mcp-name", name);
                }
                if let Some(token) = &self.token {
                    post = post.bearer_auth(token);
                }
                let response = post.send().await.unwrap();
                let is_stream = response
                    .headers()
                    .get("content-type")
                    .and_then(|v| v.to_str().ok())
                    .is_some_and(|v| v.starts_with("text/event-stream"));
                let tx = self.sender.clone();
                if !is_stream {
                    let body = response.text().await.unwrap();
                    if let Ok(v) = serde_json::from_str::<Value>(&body) {
                        let _ = tx.send(v);
                    } else {
                        let _ = tx.send(json!({"http-body": body}));
                    }
                    return;
                }
                tokio::spawn(async move {
                    let mut body = response.bytes_stream();
                    let mut pending = Vec::new();
                    while let Some(Ok(chunk)) = body.next().await {
                        pending.extend_from_slice(&chunk);
                        while let Some(i) = pending.iter().position(|&b| b == b'\n') {
                            let line: Vec<u8> = pending.drain(..=i).collect();
                            let line = String::from_utf8_lossy(&line);
                            if let Some(data) = line.trim_end().strip_prefix("data:")
                                && let Ok(v) = serde_json::from_str::<Value>(data.trim_start())
                            {
                                let _ = tx.send(v);
                            }
                        }
                    }
                });
            }
        }
    }

    /// The next message `pred` accepts (others are kept aside), within 20 s.
    async fn next(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.aside.iter().position(&pred) {
            return self.aside.remove(i);
        }
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            match tokio::time::timeout_at(deadline, self.incoming.recv()).await {
                Ok(Some(v)) if pred(&v) => return v,
                Ok(Some(v)) => self.aside.push(v),
                Ok(None) => panic!(
                    "the connection closed while waiting for {what}: {:?}",
                    self.aside
                ),
                Err(_) => panic!("timed out waiting for {what}; got {:?}", self.aside),
            }
        }
    }

    /// Send request `message` and wait for its response (a result or an error).
    async fn call(&mut self, message: Value) -> Value {
        let id = message["id"].clone();
        self.send(&message).await;
        self.next("a response", |v| {
            v.get("id") == Some(&id) && (v.get("result").is_some() || v.get("error").is_some())
        })
        .await
    }

    /// Every message that arrives within `within` (those set aside before are dropped).
    async fn drain(&mut self, within: Duration) -> Vec<Value> {
        self.aside.clear();
        let mut out = Vec::new();
        let deadline = tokio::time::Instant::now() + within;
        while let Ok(Some(v)) = tokio::time::timeout_at(deadline, self.incoming.recv()).await {
            out.push(v);
        }
        out
    }
}

struct Fixture {
    server: McpServer,
    jobs: JobRuntime,
    http: Option<dsh_mcp::HttpServer>,
    _regs: Vec<dsh_runtime::RegistrationHandle>,
}

impl Fixture {
    async fn new(wire: Wire) -> Fixture {
        let jobs = JobRuntime::new();
        let registry = Registry::builder().jobs(jobs.clone()).build();
        let regs = vec![
            registry.register(Gated).unwrap(),
            registry.register(Hang).unwrap(),
            registry.register(Plain).unwrap(),
            registry.register(Guarded).unwrap(),
            registry.add_pre_execute(dsh_runtime::hooks::pre_execute_fn(|call| {
                (call.name() == "guarded")
                    .then(|| dsh_runtime::hooks::PreDecision::ask("it changes things"))
            })),
        ];
        let server = McpServer::new(registry);
        let http = match wire {
            Wire::Http => Some(serve_http(&server, HttpOptions::default()).await.unwrap()),
            Wire::Stream => None,
        };
        Fixture {
            server,
            jobs,
            http,
            _regs: regs,
        }
    }

    async fn client(&self, token: Option<&str>) -> Raw {
        match &self.http {
            Some(http) => Raw::http(http.url().to_string(), token),
            None => Raw::stream(&self.server).await,
        }
    }

    async fn shutdown(self) {
        if let Some(http) = self.http {
            http.shutdown().await.unwrap();
        }
        self.jobs.shutdown().await;
    }
}

/// Call `name` as a task; the task's id.
async fn start(client: &mut Raw, id: u64, name: &str, args: Value) -> String {
    let answer = client
        .call(request(
            id,
            "tools/call",
            json!({"name": name, "arguments": args}),
            true,
        ))
        .await;
    answer["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task: {answer}"))
        .to_string()
}

fn is_task_notification(v: &Value) -> bool {
    v.get("method").and_then(Value::as_str) == Some("notifications/tasks")
}

fn subscription_of(v: &Value) -> Value {
    v["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"].clone()
}

async fn follows_a_task_from_working_to_completed(wire: Wire) {
    let tag = format!("listen-{wire:?}");
    let fixture = Fixture::new(wire).await;
    let mut client = fixture.client(None).await;
    let id = start(&mut client, 1, "gated", json!({"tag": tag})).await;
    client
        .send(&listen(2, json!([id, "task-of-nobody"]), true))
        .await;
    let ack = client
        .next("the acknowledgment", |v| {
            v["method"] == "notifications/subscriptions/acknowledged"
        })
        .await;
    assert_eq!(
        ack["params"]["notifications"]["taskIds"],
        json!([id, "task-of-nobody"]),
        "{ack}"
    );
    assert_eq!(subscription_of(&ack), json!(2), "{ack}");
    // The task as it is now, on the listen stream.
    let first = client.next("the first status", is_task_notification).await;
    assert_eq!(first["params"]["taskId"], json!(id), "{first}");
    assert_eq!(first["params"]["status"], "working", "{first}");
    assert_eq!(subscription_of(&first), json!(2), "{first}");
    open_gate(&tag);
    let last = client
        .next("the terminal status", |v| {
            is_task_notification(v) && v["params"]["status"] != "working"
        })
        .await;
    assert_eq!(last["params"]["taskId"], json!(id), "{last}");
    assert_eq!(last["params"]["status"], "completed", "{last}");
    assert_eq!(
        last["params"]["result"]["content"][0]["text"],
        json!(format!("done: {tag}")),
        "{last}"
    );
    assert_eq!(subscription_of(&last), json!(2), "{last}");
    // Nothing ever names the unknown id, and nothing follows the terminal state.
    assert!(
        !client
            .aside
            .iter()
            .any(|v| v["params"]["taskId"] == "task-of-nobody"),
        "{:?}",
        client.aside
    );
    let rest = client.drain(Duration::from_millis(300)).await;
    assert!(
        !rest.iter().any(is_task_notification),
        "after the terminal state: {rest:?}"
    );
    fixture.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_stream_follows_a_task_over_a_byte_stream() {
    follows_a_task_from_working_to_completed(Wire::Stream).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_stream_follows_a_task_over_http() {
    follows_a_task_from_working_to_completed(Wire::Http).await;
}

async fn follows_a_question_and_a_cancellation(wire: Wire) {
    let fixture = Fixture::new(wire).await;
    let mut client = fixture.client(None).await;
    // A task that asks its user: `input_required` with the form, then, answered, done.
    let asking = start(&mut client, 1, "guarded", json!({"note": "n"})).await;
    client.send(&listen(2, json!([asking]), true)).await;
    let asked = client
        .next("input_required", |v| {
            is_task_notification(v) && v["params"]["status"] == "input_required"
        })
        .await;
    let form = &asked["params"]["inputRequests"]["approval-1"];
    assert_eq!(form["method"], "elicitation/create", "{asked}");
    assert!(
        form["params"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("it changes things")),
        "{asked}"
    );
    let updated = client
        .call(request(
            3,
            "tasks/update",
            json!({"taskId": asking, "inputResponses": {"approval-1": {"action": "accept", "content": {"approve": true}}}}),
            true,
        ))
        .await;
    assert!(updated.get("result").is_some(), "{updated}");
    let done = client
        .next("the answered task's end", |v| {
            is_task_notification(v) && v["params"]["status"] == "completed"
        })
        .await;
    assert_eq!(
        done["params"]["result"]["content"][0]["text"], "guarded: n",
        "{done}"
    );
    // A task cancelled while followed: `cancelled` is its last notification.
    let tag = format!("listen-cancel-{wire:?}");
    let hanging = start(&mut client, 4, "hang", json!({"tag": tag})).await;
    client.send(&listen(5, json!([hanging]), true)).await;
    let first = client
        .next("the hanging task's status", |v| {
            is_task_notification(v) && subscription_of(v) == json!(5)
        })
        .await;
    assert_eq!(first["params"]["status"], "working", "{first}");
    let cancelled = client
        .call(request(6, "tasks/cancel", json!({"taskId": hanging}), true))
        .await;
    assert!(cancelled.get("result").is_some(), "{cancelled}");
    let last = client
        .next("the cancelled state", |v| {
            is_task_notification(v) && v["params"]["status"] == "cancelled"
        })
        .await;
    assert_eq!(last["params"]["taskId"], json!(hanging), "{last}");
    assert_eq!(subscription_of(&last), json!(5), "{last}");
    fixture.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_stream_follows_questions_and_cancellation_over_a_byte_stream() {
    follows_a_question_and_a_cancellation(Wire::Stream).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_stream_follows_questions_and_cancellation_over_http() {
    follows_a_question_and_a_cancellation(Wire::Http).await;
}

async fn refuses_task_ids_it_cannot_honour(wire: Wire) {
    let fixture = Fixture::new(wire).await;
    let mut client = fixture.client(None).await;
    let undeclared = client.call(listen(1, json!(["x"]), false)).await;
    assert_eq!(undeclared["error"]["code"], -32021, "{undeclared}");
    let not_strings = client.call(listen(2, json!([1, 2]), true)).await;
    assert_eq!(not_strings["error"]["code"], -32602, "{not_strings}");
    let not_a_list = client.call(listen(3, json!("x"), true)).await;
    assert_eq!(not_a_list["error"]["code"], -32602, "{not_a_list}");
    // The connection still serves (the refusals left it as it was).
    let listed = client.call(request(4, "tools/list", json!({}), true)).await;
    assert!(listed["result"]["tools"].is_array(), "{listed}");
    fixture.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_ids_without_the_extension_or_not_strings_are_refused_over_a_byte_stream() {
    refuses_task_ids_it_cannot_honour(Wire::Stream).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_ids_without_the_extension_or_not_strings_are_refused_over_http() {
    refuses_task_ids_it_cannot_honour(Wire::Http).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_hears_nothing_of_another_client_s_task() {
    // Over HTTP, statelessly, a task belongs to its credentials: other credentials can
    // name its id and are acknowledged, but are never told anything about it.
    let tag = "listen-foreign";
    let fixture = Fixture::new(Wire::Http).await;
    let mut alice = fixture.client(Some("alice")).await;
    let id = start(&mut alice, 1, "gated", json!({"tag": tag})).await;
    let mut bob = fixture.client(Some("bob")).await;
    bob.send(&listen(2, json!([id]), true)).await;
    let ack = bob
        .next("bob's acknowledgment", |v| {
            v["method"] == "notifications/subscriptions/acknowledged"
        })
        .await;
    assert_eq!(
        ack["params"]["notifications"]["taskIds"],
        json!([id]),
        "{ack}"
    );
    alice.send(&listen(3, json!([id]), true)).await;
    let first = alice
        .next("alice's first status", is_task_notification)
        .await;
    assert_eq!(first["params"]["status"], "working", "{first}");
    open_gate(tag);
    alice
        .next("alice's terminal status", |v| {
            is_task_notification(v) && v["params"]["status"] == "completed"
        })
        .await;
    let heard = bob.drain(Duration::from_millis(300)).await;
    assert!(
        !heard.iter().any(is_task_notification),
        "bob heard: {heard:?}"
    );
    fixture.shutdown().await;
}
