//! Task-capable tools as tasks of protocol revision 2025-11-25 (the core specification's
//! task model: `params.task` on `tools/call`, `tasks/get`, `tasks/result`, `tasks/list`,
//! `tasks/cancel`), spoken as raw JSON-RPC (rmcp has no client for this model) over an
//! in-memory byte stream (as stdio) and over Streamable HTTP with a session: the
//! capability and each tool's `execution.taskSupport` published, a task polled to
//! completion and its result read, `tasks/result` waiting for the task, a cancelled task,
//! `tasks/list` and the other tasks methods limited to the session's own tasks, the
//! session's end stopping its tasks, the `forbidden` and `required` errors, and the final
//! state's `notifications/tasks/status` (on the stream, and on the HTTP session's `GET`
//! event stream), and a task `input_required` while its approval's `elicitation/create`
//! (naming the task in its related-task `_meta`) is outstanding.

use std::sync::Arc;
use std::time::Duration;

use dsh_mcp::{HttpOptions, McpServer, serve_http};
use dsh_runtime::jobs::JobRuntime;
use dsh_runtime::{Registry, ToolError, tool};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{Mutex, mpsc};

#[path = "common/task_tools.rs"]
mod task_tools;
use task_tools::*;

/// Only ever a task.
#[tool(task = "required")]
async fn only_task() -> Result<String, ToolError> {
    Ok("ran as a task".to_string())
}

const VERSION: &str = "2025-11-25";

#[derive(Clone, Copy, Debug)]
enum Wire {
    Stream,
    Http,
}

const WIRES: [Wire; 2] = [Wire::Stream, Wire::Http];

struct Fixture {
    server: McpServer,
    jobs: JobRuntime,
    http: Option<dsh_mcp::HttpServer>,
    _regs: Vec<dsh_runtime::RegistrationHandle>,
}

impl Fixture {
    async fn new(wire: Wire, with_jobs: bool) -> Fixture {
        let jobs = JobRuntime::new();
        let registry = if with_jobs {
            Registry::builder().jobs(jobs.clone()).build()
        } else {
            Registry::builder().build()
        };
        let regs = vec![
            registry.register(SlowEcho).unwrap(),
            registry.register(Hang).unwrap(),
            registry.register(OnlyTask).unwrap(),
            registry.register(Plain).unwrap(),
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

    /// A client that initialized on 2025-11-25; the `initialize` result.
    async fn connect(&self, wire: Wire) -> (RawClient, Value) {
        self.connect_with(wire, json!({})).await
    }

    /// A client that initialized on 2025-11-25 declaring `capabilities`.
    async fn connect_with(&self, wire: Wire, capabilities: Value) -> (RawClient, Value) {
        let mut client = match wire {
            Wire::Stream => {
                let (client_io, server_io) = tokio::io::duplex(1 << 16);
                let server = self.server.clone();
                tokio::spawn(async move {
                    let _ = server.serve(server_io).await;
                });
                let (read, write) = tokio::io::split(client_io);
                let (tx, rx) = mpsc::unbounded_channel();
                tokio::spawn(async move {
                    let mut lines = BufReader::new(read).lines();
                    while let Ok(Some(line)) = lines.next_line().await {
                        if tx
                            .send(serde_json::from_str::<Value>(&line).unwrap())
                            .is_err()
                        {
                            break;
                        }
                    }
                });
                RawClient::Stream {
                    write: Some(write),
                    read: Arc::new(Mutex::new(rx)),
                    notifications: Vec::new(),
                    requests: Vec::new(),
                }
            }
            Wire::Http => RawClient::Http {
                http: reqwest::Client::new(),
                url: self.http.as_ref().unwrap().url(),
                session: None,
                notifications: Vec::new(),
            },
        };
        let init = client
            .request(
                "initialize",
                json!({
                    "protocolVersion": VERSION,
                    "capabilities": capabilities,
                    "clientInfo": {"name": "raw-2025", "version": "1"},
                }),
            )
            .await
            .expect("initialize");
        assert_eq!(init["protocolVersion"], VERSION, "{init}");
        client.notify("notifications/initialized", json!({})).await;
        (client, init)
    }

    async fn shutdown(self) {
        if let Some(http) = self.http {
            http.shutdown().await.unwrap();
        }
        self.jobs.shutdown().await;
    }
}

/// A JSON-RPC client speaking raw 2025-11-25 messages.
enum RawClient {
    Stream {
        write: Option<tokio::io::WriteHalf<tokio::io::DuplexStream>>,
        read: Arc<Mutex<mpsc::UnboundedReceiver<Value>>>,
        notifications: Vec<Value>,
        /// The server's requests received so far.
        requests: Vec<Value>,
    },
    Http {
        http: reqwest::Client,
        url: String,
        session: Option<String>,
        notifications: Vec<Value>,
    },
}

static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl RawClient {
    /// Send a request; its `result`, or its `error`.
    async fn request(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let answer = match self {
            RawClient::Stream {
                write,
                read,
                notifications,
                requests,
            } => {
                let mut line = message.to_string();
                line.push('\n');
                let w = write.as_mut().expect("the stream is open");
                w.write_all(line.as_bytes()).await.unwrap();
                w.flush().await.unwrap();
                let mut read = read.lock().await;
                loop {
                    let message = tokio::time::timeout(Duration::from_secs(30), read.recv())
                        .await
                        .expect("an answer within 30 s")
                        .expect("the stream is open");
                    if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                        break message;
                    }
                    if message.get("id").is_none() {
                        notifications.push(message);
                    } else if message.get("method").is_some() {
                        requests.push(message);
                    }
                }
            }
            RawClient::Http {
                http,
                url,
                session,
                notifications,
            } => {
                let current = session.clone();
                let messages = post(http, url, current.as_deref(), &message, Some(session)).await;
                let mut answer = None;
                for m in messages {
                    if m.get("id") == Some(&json!(id)) && m.get("method").is_none() {
                        answer = Some(m);
                    } else if m.get("id").is_none() {
                        notifications.push(m);
                    }
                }
                answer.expect("an answer in the response")
            }
        };
        match answer.get("error") {
            Some(error) => Err(error.clone()),
            None => Ok(answer["result"].clone()),
        }
    }

    async fn notify(&mut self, method: &str, params: Value) {
        let message = json!({"jsonrpc": "2.0", "method": method, "params": params});
        match self {
            RawClient::Stream { write, .. } => {
                let mut line = message.to_string();
                line.push('\n');
                let w = write.as_mut().expect("the stream is open");
                w.write_all(line.as_bytes()).await.unwrap();
                w.flush().await.unwrap();
            }
            RawClient::Http {
                http, url, session, ..
            } => {
                post(http, url, session.as_deref(), &message, None).await;
            }
        }
    }

    /// End the session: close the stream, or `DELETE` the HTTP session.
    async fn close(&mut self) {
        match self {
            RawClient::Stream { write, .. } => {
                if let Some(mut w) = write.take() {
                    let _ = w.shutdown().await;
                }
            }
            RawClient::Http {
                http, url, session, ..
            } => {
                if let Some(session) = session.take() {
                    let response = http
                        .delete(url.as_str())
                        .header("mcp-session-id", session)
                        .header("mcp-protocol-version", VERSION)
                        .send()
                        .await
                        .unwrap();
                    assert!(response.status().is_success(), "{}", response.status());
                }
            }
        }
    }

    /// The notifications received so far (on the byte stream; HTTP: those in responses).
    fn notifications(&self) -> &[Value] {
        match self {
            RawClient::Stream { notifications, .. } | RawClient::Http { notifications, .. } => {
                notifications
            }
        }
    }

    async fn call_task(&mut self, name: &str, arguments: Value) -> Value {
        let created = self
            .request(
                "tools/call",
                json!({"name": name, "arguments": arguments, "task": {"ttl": 60000}}),
            )
            .await
            .unwrap_or_else(|e| panic!("{name} as a task: {e}"));
        let task = created["task"].clone();
        assert!(task["taskId"].is_string(), "{created}");
        assert!(task["createdAt"].is_string(), "{created}");
        assert!(task["lastUpdatedAt"].is_string(), "{created}");
        assert!(task.get("ttl").is_some_and(Value::is_null), "{created}");
        task
    }

    /// Poll `tasks/get` until the task is terminal.
    async fn poll(&mut self, id: &str) -> Value {
        for _ in 0..600 {
            let task = self
                .request("tasks/get", json!({"taskId": id}))
                .await
                .unwrap();
            assert_eq!(task["taskId"], id, "{task}");
            if ["completed", "failed", "cancelled"].contains(&task["status"].as_str().unwrap()) {
                return task;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("task {id} did not end");
    }
}

/// POST one message; the messages of the response (JSON or SSE). A response naming a
/// session sets it in `session_out`.
async fn post(
    http: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    message: &Value,
    session_out: Option<&mut Option<String>>,
) -> Vec<Value> {
    let mut request = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(session) = session {
        request = request
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", VERSION);
    }
    let response = tokio::time::timeout(
        Duration::from_secs(30),
        request.body(message.to_string()).send(),
    )
    .await
    .expect("an answer within 30 s")
    .unwrap();
    if let (Some(out), Some(id)) = (session_out, response.headers().get("mcp-session-id")) {
        *out = Some(id.to_str().unwrap().to_string());
    }
    let body = tokio::time::timeout(Duration::from_secs(30), response.text())
        .await
        .expect("the body ends within 30 s")
        .unwrap();
    if let Ok(v) = serde_json::from_str::<Value>(&body) {
        return vec![v];
    }
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str(d.trim()).ok())
        .collect()
}

fn text_of(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_capability_and_each_tools_task_support_are_published() {
    for wire in WIRES {
        let fixture = Fixture::new(wire, true).await;
        let (mut client, init) = fixture.connect(wire).await;
        assert_eq!(
            init["capabilities"]["tasks"],
            json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
            "{wire:?}: {init}"
        );
        let listed = client.request("tools/list", json!({})).await.unwrap();
        let support = |name: &str| {
            listed["tools"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["name"] == name)
                .unwrap_or_else(|| panic!("{name} listed: {listed}"))
                .get("execution")
                .cloned()
        };
        assert_eq!(
            support("slow_echo"),
            Some(json!({"taskSupport": "optional"}))
        );
        assert_eq!(
            support("only_task"),
            Some(json!({"taskSupport": "required"}))
        );
        assert_eq!(support("plain"), None, "{wire:?}");
        client.close().await;
        fixture.shutdown().await;
    }
    // Without a job runtime there are no tasks to offer.
    for wire in WIRES {
        let fixture = Fixture::new(wire, false).await;
        let (mut client, init) = fixture.connect(wire).await;
        assert!(
            init["capabilities"].get("tasks").is_none(),
            "{wire:?}: {init}"
        );
        let listed = client.request("tools/list", json!({})).await.unwrap();
        assert!(
            listed["tools"]
                .as_array()
                .unwrap()
                .iter()
                .all(|t| t.get("execution").is_none()),
            "{listed}"
        );
        client.close().await;
        fixture.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_is_polled_to_completion_and_its_result_read() {
    for wire in WIRES {
        let fixture = Fixture::new(wire, true).await;
        let (mut client, _) = fixture.connect(wire).await;
        let task = client
            .call_task("slow_echo", json!({"text": "hi", "ms": 100}))
            .await;
        assert_eq!(task["status"], "working", "{task}");
        let id = task["taskId"].as_str().unwrap().to_string();
        let done = client.poll(&id).await;
        assert_eq!(done["status"], "completed", "{wire:?}: {done}");
        let result = client
            .request("tasks/result", json!({"taskId": id}))
            .await
            .unwrap();
        assert_eq!(text_of(&result), "echo: hi", "{result}");
        assert_eq!(result["isError"], false, "{result}");
        assert_eq!(
            result["_meta"]["io.modelcontextprotocol/related-task"],
            json!({"taskId": id}),
            "{result}"
        );
        if let Wire::Stream = wire {
            // The terminal state was notified (before the answers that followed it).
            let notified = client
                .notifications()
                .iter()
                .find(|n| n["method"] == "notifications/tasks/status")
                .unwrap_or_else(|| panic!("no status notification: {:?}", client.notifications()));
            assert_eq!(notified["params"]["taskId"], id.as_str(), "{notified}");
            assert_eq!(notified["params"]["status"], "completed", "{notified}");
        }
        client.close().await;
        fixture.shutdown().await;
    }
}

/// Open the session's `GET` event stream; the JSON-RPC messages it carries.
async fn listen(client: &RawClient) -> mpsc::UnboundedReceiver<Value> {
    let RawClient::Http {
        http,
        url,
        session: Some(session),
        ..
    } = client
    else {
        panic!("an HTTP session");
    };
    let mut response = http
        .get(url.as_str())
        .header("accept", "text/event-stream")
        .header("mcp-session-id", session.as_str())
        .header("mcp-protocol-version", VERSION)
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut pending = String::new();
        while let Ok(Some(chunk)) = response.chunk().await {
            pending.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = pending.find('\n') {
                let line: String = pending.drain(..=end).collect();
                if let Some(data) = line.trim_end().strip_prefix("data:")
                    && let Ok(message) = serde_json::from_str::<Value>(data.trim())
                    && tx.send(message).is_err()
                {
                    return;
                }
            }
        }
    });
    rx
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_final_state_is_notified_on_the_http_event_stream() {
    let fixture = Fixture::new(Wire::Http, true).await;
    let (mut client, _) = fixture.connect(Wire::Http).await;
    let mut events = listen(&client).await;
    let task = client
        .call_task("slow_echo", json!({"text": "heard", "ms": 50}))
        .await;
    let id = task["taskId"].as_str().unwrap().to_string();
    let notified = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let message = events.recv().await.expect("the event stream is open");
            if message["method"] == "notifications/tasks/status" {
                return message;
            }
        }
    })
    .await
    .expect("a status notification within 30 s");
    assert_eq!(notified["params"]["taskId"], id.as_str(), "{notified}");
    assert_eq!(notified["params"]["status"], "completed", "{notified}");
    client.close().await;
    fixture.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_result_waits_until_the_task_ends() {
    for wire in WIRES {
        let fixture = Fixture::new(wire, true).await;
        let (mut client, _) = fixture.connect(wire).await;
        let task = client
            .call_task("slow_echo", json!({"text": "later", "ms": 400}))
            .await;
        let id = task["taskId"].as_str().unwrap().to_string();
        let now = client
            .request("tasks/get", json!({"taskId": id}))
            .await
            .unwrap();
        assert_eq!(now["status"], "working", "{now}");
        // Asked while the task runs: the answer is the task's own result.
        let result = client
            .request("tasks/result", json!({"taskId": id}))
            .await
            .unwrap();
        assert_eq!(text_of(&result), "echo: later", "{wire:?}: {result}");
        let after = client
            .request("tasks/get", json!({"taskId": id}))
            .await
            .unwrap();
        assert_eq!(after["status"], "completed", "{after}");
        client.close().await;
        fixture.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_task_stops_and_reports_cancelled() {
    for wire in WIRES {
        let fixture = Fixture::new(wire, true).await;
        let (mut client, _) = fixture.connect(wire).await;
        let tag = format!("cancel-{wire:?}");
        let task = client.call_task("hang", json!({"tag": tag})).await;
        let id = task["taskId"].as_str().unwrap().to_string();
        until_hang("the task started", |s| s.started.contains(&tag)).await;
        let cancelled = client
            .request("tasks/cancel", json!({"taskId": id}))
            .await
            .unwrap();
        assert_eq!(cancelled["taskId"], id.as_str(), "{cancelled}");
        assert_eq!(cancelled["status"], "cancelled", "{wire:?}: {cancelled}");
        until_hang("the call saw its cancellation", |s| {
            s.stopped.contains(&tag)
        })
        .await;
        let got = client.poll(&id).await;
        assert_eq!(got["status"], "cancelled", "{got}");
        let result = client
            .request("tasks/result", json!({"taskId": id}))
            .await
            .unwrap_err();
        assert_eq!(result["code"], -32603, "{result}");
        assert!(
            result["message"].as_str().unwrap().contains("cancelled"),
            "{result}"
        );
        // A terminal task cannot be cancelled again.
        let again = client
            .request("tasks/cancel", json!({"taskId": id}))
            .await
            .unwrap_err();
        assert_eq!(again["code"], -32602, "{again}");
        client.close().await;
        fixture.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_sees_only_its_own_tasks() {
    for wire in WIRES {
        let fixture = Fixture::new(wire, true).await;
        let (mut owner, _) = fixture.connect(wire).await;
        let (mut other, _) = fixture.connect(wire).await;
        let mine = owner
            .call_task("slow_echo", json!({"text": "mine", "ms": 1}))
            .await["taskId"]
            .as_str()
            .unwrap()
            .to_string();
        // Another tool: task ids are numbered per tool and owner.
        let theirs = other.call_task("only_task", json!({})).await["taskId"]
            .as_str()
            .unwrap()
            .to_string();
        assert_ne!(mine, theirs);
        let listed = owner.request("tasks/list", json!({})).await.unwrap();
        let ids: Vec<&str> = listed["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["taskId"].as_str().unwrap())
            .collect();
        assert_eq!(ids, vec![mine.as_str()], "{wire:?}: {listed}");
        for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
            let refused = other
                .request(method, json!({"taskId": mine}))
                .await
                .unwrap_err();
            assert_eq!(refused["code"], -32602, "{wire:?} {method}: {refused}");
        }
        let refused = owner
            .request("tasks/get", json!({"taskId": theirs}))
            .await
            .unwrap_err();
        assert_eq!(refused["code"], -32602, "{refused}");
        owner.close().await;
        other.close().await;
        fixture.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_end_of_the_session_stops_its_tasks() {
    for wire in WIRES {
        let fixture = Fixture::new(wire, true).await;
        let (mut client, _) = fixture.connect(wire).await;
        let tag = format!("close-{wire:?}");
        client.call_task("hang", json!({"tag": tag})).await;
        until_hang("the task started", |s| s.started.contains(&tag)).await;
        client.close().await;
        until_hang("the session's end stopped the task", |s| {
            s.stopped.contains(&tag)
        })
        .await;
        fixture.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forbidden_and_required_task_support_are_enforced() {
    for wire in WIRES {
        let fixture = Fixture::new(wire, true).await;
        let (mut client, _) = fixture.connect(wire).await;
        let forbidden = client
            .request(
                "tools/call",
                json!({"name": "plain", "arguments": {"text": "x"}, "task": {}}),
            )
            .await
            .unwrap_err();
        assert_eq!(forbidden["code"], -32601, "{wire:?}: {forbidden}");
        let required = client
            .request("tools/call", json!({"name": "only_task", "arguments": {}}))
            .await
            .unwrap_err();
        assert_eq!(required["code"], -32601, "{wire:?}: {required}");
        let bad = client
            .request(
                "tools/call",
                json!({"name": "only_task", "arguments": {}, "task": {"ttl": "soon"}}),
            )
            .await
            .unwrap_err();
        assert_eq!(bad["code"], -32602, "{bad}");
        assert!(
            bad["message"].as_str().unwrap().contains("params.task.ttl"),
            "{bad}"
        );
        // A plain call of a plain tool is answered directly.
        let direct = client
            .request(
                "tools/call",
                json!({"name": "plain", "arguments": {"text": "x"}}),
            )
            .await
            .unwrap();
        assert_eq!(text_of(&direct), "plain: x", "{direct}");
        let task = client.call_task("only_task", json!({})).await;
        let id = task["taskId"].as_str().unwrap().to_string();
        client.poll(&id).await;
        let result = client
            .request("tasks/result", json!({"taskId": id}))
            .await
            .unwrap();
        assert_eq!(text_of(&result), "ran as a task", "{result}");
        client.close().await;
        fixture.shutdown().await;
    }
}

/// The notes of the `guarded` calls whose body ran.
static GUARDED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Record that the body ran (pre-execute policy asks before every call).
#[tool(task = "optional")]
async fn guarded(note: String) -> Result<String, ToolError> {
    GUARDED.lock().unwrap().push(note.clone());
    Ok(format!("guarded: {note}"))
}

impl RawClient {
    /// Send a JSON-RPC response to the server's request `id` (byte stream only).
    async fn respond(&mut self, id: &Value, result: Value) {
        let RawClient::Stream { write, .. } = self else {
            panic!("responses are sent on the byte stream");
        };
        let mut line = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
        line.push('\n');
        let w = write.as_mut().expect("the stream is open");
        w.write_all(line.as_bytes()).await.unwrap();
        w.flush().await.unwrap();
    }

    /// The server's requests received so far (byte stream only).
    fn requests(&self) -> &[Value] {
        match self {
            RawClient::Stream { requests, .. } => requests,
            RawClient::Http { .. } => &[],
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_waiting_for_its_elicitation_is_input_required() {
    use dsh_runtime::hooks::{PreDecision, pre_execute_fn};
    let jobs = JobRuntime::new();
    let registry = Registry::builder().jobs(jobs.clone()).build();
    let regs = vec![
        registry.register(Guarded).unwrap(),
        registry.add_pre_execute(pre_execute_fn(|call| {
            (call.name() == "guarded").then(|| PreDecision::ask("it changes things"))
        })),
    ];
    let fixture = Fixture {
        server: McpServer::new(registry),
        jobs,
        http: None,
        _regs: regs,
    };
    let (mut client, _) = fixture
        .connect_with(Wire::Stream, json!({"elicitation": {}}))
        .await;
    let task = client.call_task("guarded", json!({"note": "core"})).await;
    let id = task["taskId"].as_str().unwrap().to_string();
    // While the elicitation is out, the task is `input_required` (in tasks/get and in
    // tasks/list); the request names the task.
    let mut seen = None;
    for _ in 0..600 {
        let got = client
            .request("tasks/get", json!({"taskId": id}))
            .await
            .unwrap();
        if got["status"] == "input_required" && !client.requests().is_empty() {
            seen = Some(got);
            break;
        }
        assert!(
            ["working", "input_required"].contains(&got["status"].as_str().unwrap()),
            "{got}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let got = seen.expect("the task asked");
    assert_eq!(got["taskId"], id.as_str(), "{got}");
    let asked = client.requests()[0].clone();
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    assert_eq!(
        asked["params"]["_meta"]["io.modelcontextprotocol/related-task"],
        json!({"taskId": id}),
        "{asked}"
    );
    assert!(
        asked["params"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Allow tool \"guarded\" to run?"),
        "{asked}"
    );
    let listed = client.request("tasks/list", json!({})).await.unwrap();
    assert_eq!(listed["tasks"][0]["status"], "input_required", "{listed}");
    assert!(!GUARDED.lock().unwrap().contains(&"core".to_string()));
    // The wait was notified, as the task's terminal state is.
    let notified = client
        .notifications()
        .iter()
        .find(|n| n["method"] == "notifications/tasks/status")
        .cloned()
        .unwrap_or_else(|| panic!("no status notification: {:?}", client.notifications()));
    assert_eq!(notified["params"]["status"], "input_required", "{notified}");
    // The answer: the task works again and completes.
    client
        .respond(
            &asked["id"],
            json!({"action": "accept", "content": {"approve": true}}),
        )
        .await;
    let done = client.poll(&id).await;
    assert_eq!(done["status"], "completed", "{done}");
    let result = client
        .request("tasks/result", json!({"taskId": id}))
        .await
        .unwrap();
    assert_eq!(text_of(&result), "guarded: core", "{result}");
    // The notifications followed the task: waiting, working again, completed (the last
    // one sent when the job settled, so perhaps after the answers above; the client reads
    // what arrived while it waits for an answer).
    let statuses_of = |client: &RawClient| -> Vec<Value> {
        client
            .notifications()
            .iter()
            .filter(|n| {
                n["method"] == "notifications/tasks/status" && n["params"]["taskId"] == id.as_str()
            })
            .map(|n| n["params"]["status"].clone())
            .collect()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while statuses_of(&client).last() != Some(&json!("completed"))
        && std::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let _ = client.request("tasks/get", json!({"taskId": id})).await;
    }
    let statuses = statuses_of(&client);
    assert_eq!(
        statuses,
        [
            json!("input_required"),
            json!("working"),
            json!("completed")
        ],
        "{:?}",
        client.notifications()
    );
    assert!(GUARDED.lock().unwrap().contains(&"core".to_string()));
    client.close().await;
    fixture.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_waiting_for_its_elicitation_is_input_required_over_http() {
    use dsh_runtime::hooks::{PreDecision, pre_execute_fn};
    let jobs = JobRuntime::new();
    let registry = Registry::builder().jobs(jobs.clone()).build();
    let regs = vec![
        registry.register(Guarded).unwrap(),
        registry.add_pre_execute(pre_execute_fn(|call| {
            (call.name() == "guarded").then(|| PreDecision::ask("it changes things"))
        })),
    ];
    let server = McpServer::new(registry);
    let http = serve_http(&server, HttpOptions::default()).await.unwrap();
    let fixture = Fixture {
        server,
        jobs,
        http: Some(http),
        _regs: regs,
    };
    let (mut client, _) = fixture
        .connect_with(Wire::Http, json!({"elicitation": {}}))
        .await;
    let mut events = listen(&client).await;
    let task = client
        .call_task("guarded", json!({"note": "core-http"}))
        .await;
    let id = task["taskId"].as_str().unwrap().to_string();
    // The session's event stream carries the wait's notification and the request.
    let asked = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let message = events.recv().await.expect("the event stream is open");
            if message["method"] == "elicitation/create" {
                return message;
            }
        }
    })
    .await
    .expect("an elicitation request within 30 s");
    assert_eq!(
        asked["params"]["_meta"]["io.modelcontextprotocol/related-task"],
        json!({"taskId": id}),
        "{asked}"
    );
    let got = client
        .request("tasks/get", json!({"taskId": id}))
        .await
        .unwrap();
    assert_eq!(got["status"], "input_required", "{got}");
    let RawClient::Http {
        http, url, session, ..
    } = &client
    else {
        unreachable!()
    };
    let answer = json!({
        "jsonrpc": "2.0",
        "id": asked["id"],
        "result": {"action": "accept", "content": {"approve": true}},
    });
    post(http, url, session.as_deref(), &answer, None).await;
    let done = client.poll(&id).await;
    assert_eq!(done["status"], "completed", "{done}");
    let result = client
        .request("tasks/result", json!({"taskId": id}))
        .await
        .unwrap();
    assert_eq!(text_of(&result), "guarded: core-http", "{result}");
    client.close().await;
    fixture.shutdown().await;
}

/// The notes of the `recorded` calls whose body ran.
static RECORDED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Record that the body ran.
#[tool(task = "optional")]
async fn recorded(note: String) -> Result<String, ToolError> {
    RECORDED.lock().unwrap().push(note.clone());
    Ok(format!("recorded: {note}"))
}

fn ran(note: &str) -> bool {
    RECORDED.lock().unwrap().iter().any(|n| n == note)
}

/// A Streamable HTTP server with `recorded` and `plain`, with or without sessions and a
/// job runtime.
async fn serve_recorded(
    sessions: bool,
    with_jobs: bool,
) -> (
    dsh_mcp::HttpServer,
    JobRuntime,
    Vec<dsh_runtime::RegistrationHandle>,
) {
    let jobs = JobRuntime::new();
    let registry = if with_jobs {
        Registry::builder().jobs(jobs.clone()).build()
    } else {
        Registry::builder().build()
    };
    let regs = vec![
        registry.register(Recorded).unwrap(),
        registry.register(Plain).unwrap(),
    ];
    let server = McpServer::new(registry);
    let http = serve_http(&server, HttpOptions::default().sessions(sessions))
        .await
        .unwrap();
    (http, jobs, regs)
}

/// POST one message as a client on `version`, in `session` if any; the session the
/// answer names and the answer to `message` (JSON or SSE).
async fn post_as(
    http: &reqwest::Client,
    url: &str,
    version: &str,
    session: Option<&str>,
    message: &Value,
) -> (Option<String>, Option<Value>) {
    let mut request = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", version);
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let response = tokio::time::timeout(
        Duration::from_secs(30),
        request.body(message.to_string()).send(),
    )
    .await
    .expect("an answer within 30 s")
    .unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    let named = response
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_string());
    let body = tokio::time::timeout(Duration::from_secs(30), response.text())
        .await
        .expect("the body ends within 30 s")
        .unwrap();
    let messages: Vec<Value> = match serde_json::from_str::<Value>(&body) {
        Ok(v) => vec![v],
        Err(_) => body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect(),
    };
    let answer = messages
        .into_iter()
        .find(|m| m.get("id") == message.get("id") && m.get("method").is_none());
    (named, answer)
}

/// `initialize` on 2025-11-25 then `notifications/initialized`: the session opened (if
/// any) and the `initialize` result.
async fn initialize_2025(http: &reqwest::Client, url: &str) -> (Option<String>, Value) {
    let init = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": VERSION,
            "capabilities": {},
            "clientInfo": {"name": "raw-2025", "version": "1"},
        },
    });
    let (session, answer) = post_as(http, url, VERSION, None, &init).await;
    let answer = answer.expect("an answer to initialize");
    let result = answer["result"].clone();
    assert_eq!(result["protocolVersion"], VERSION, "{answer}");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    post_as(http, url, VERSION, session.as_deref(), &initialized).await;
    (session, result)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_are_offered_and_served_only_with_a_session() {
    for sessions in [true, false] {
        let (server, jobs, _regs) = serve_recorded(sessions, true).await;
        let (http, url) = (reqwest::Client::new(), server.url());
        let (session, init) = initialize_2025(&http, &url).await;
        assert_eq!(session.is_some(), sessions, "{init}");
        let session = session.as_deref();
        let request = |id: u64, method: &str, params: Value| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let listed = post_as(
            &http,
            &url,
            VERSION,
            session,
            &request(2, "tools/list", json!({})),
        )
        .await
        .1
        .expect("an answer to tools/list");
        let execution = listed["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("tools: {listed}"))
            .iter()
            .find(|t| t["name"] == "recorded")
            .unwrap_or_else(|| panic!("recorded listed: {listed}"))
            .get("execution")
            .cloned();
        let note = format!("task-{sessions}");
        let call = request(
            3,
            "tools/call",
            json!({"name": "recorded", "arguments": {"note": note}, "task": {"ttl": 60000}}),
        );
        let answer = post_as(&http, &url, VERSION, session, &call)
            .await
            .1
            .expect("an answer to the task call");
        if sessions {
            // What the session is offered, it gets: a task.
            assert_eq!(
                init["capabilities"]["tasks"],
                json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
                "{init}"
            );
            assert_eq!(
                execution,
                Some(json!({"taskSupport": "optional"})),
                "{listed}"
            );
            let task = &answer["result"]["task"];
            assert!(
                task["status"] == "working" || task["status"] == "completed",
                "{answer}"
            );
            let id = task["taskId"]
                .as_str()
                .unwrap_or_else(|| panic!("{answer}"));
            let result = post_as(
                &http,
                &url,
                VERSION,
                session,
                &request(4, "tasks/result", json!({"taskId": id})),
            )
            .await
            .1
            .expect("an answer to tasks/result");
            assert_eq!(
                text_of(&result["result"]),
                format!("recorded: {note}"),
                "{result}"
            );
        } else {
            // Without a session: nothing of the revision's tasks is offered, and a call
            // asking for one is refused before it runs.
            assert!(init["capabilities"].get("tasks").is_none(), "{init}");
            assert_eq!(execution, None, "{listed}");
            let error = &answer["error"];
            assert_eq!(error["code"], -32601, "{answer}");
            let message = error["message"].as_str().unwrap_or_default();
            assert!(message.contains("session"), "{answer}");
            assert!(answer.get("result").is_none(), "{answer}");
            assert!(!ran(&note), "the refused task call ran its tool");
            // So is a tool that cannot be a task anyway.
            let plain = request(
                5,
                "tools/call",
                json!({"name": "plain", "arguments": {"text": "x"}, "task": {}}),
            );
            let answer = post_as(&http, &url, VERSION, session, &plain).await.1;
            let answer = answer.expect("an answer to the plain task call");
            assert_eq!(answer["error"]["code"], -32601, "{answer}");
            // The same call without `params.task` is answered directly.
            let note = "direct-stateless";
            let direct = request(
                6,
                "tools/call",
                json!({"name": "recorded", "arguments": {"note": note}}),
            );
            let answer = post_as(&http, &url, VERSION, session, &direct).await.1;
            let answer = answer.expect("an answer to the direct call");
            assert_eq!(
                text_of(&answer["result"]),
                format!("recorded: {note}"),
                "{answer}"
            );
            assert!(ran(note));
            // On an earlier revision `params.task` means nothing: the ordinary call.
            let note = "earlier-revision";
            let earlier = request(
                7,
                "tools/call",
                json!({"name": "recorded", "arguments": {"note": note}, "task": {}}),
            );
            let answer = post_as(&http, &url, "2025-06-18", session, &earlier)
                .await
                .1;
            let answer = answer.expect("an answer on 2025-06-18");
            assert_eq!(
                text_of(&answer["result"]),
                format!("recorded: {note}"),
                "{answer}"
            );
        }
        server.shutdown().await.unwrap();
        jobs.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_job_runtime_a_task_call_is_refused() {
    for wire in WIRES {
        let fixture = Fixture::new(wire, false).await;
        let (mut client, init) = fixture.connect(wire).await;
        assert!(init["capabilities"].get("tasks").is_none(), "{init}");
        let error = client
            .request(
                "tools/call",
                json!({"name": "slow_echo", "arguments": {"text": "x", "ms": 1}, "task": {}}),
            )
            .await
            .unwrap_err();
        assert_eq!(error["code"], -32601, "{wire:?}: {error}");
        assert!(
            error["message"]
                .as_str()
                .unwrap_or_default()
                .contains("job runtime"),
            "{wire:?}: {error}"
        );
        let direct = client
            .request(
                "tools/call",
                json!({"name": "slow_echo", "arguments": {"text": "x", "ms": 1}}),
            )
            .await
            .unwrap();
        assert_eq!(text_of(&direct), "echo: x", "{wire:?}: {direct}");
        client.close().await;
        fixture.shutdown().await;
    }
}
