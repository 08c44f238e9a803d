//! Task-capable tools as MCP tasks (the tasks extension, `io.modelcontextprotocol/tasks`),
//! driven by rmcp's own client over in-memory stdio-style streams and over Streamable
//! HTTP, on protocol 2026-07-28 (per-request capabilities) and on 2025-11-25 sessions that
//! declared the extension at `initialize`: a task polled to completion and its result
//! read from `tasks/get`, a cancelled task, a task still running after the request that
//! created it returned, the session's close stopping it, another session unable to see
//! or cancel it, tools without task support answered directly, a task-only tool refused
//! to a client without tasks, progress as the task's status message and the final status
//! notification.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use dsh_mcp::{HttpOptions, McpServer, SessionGuard, serve_http};
use dsh_runtime::jobs::{JobRuntime, JobStatus};
use dsh_runtime::{Registry, ToolError, tool};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig,
    GetTaskParams, Implementation, ProtocolVersion, TaskPayload, TaskStatus,
    TaskStatusNotificationParams,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, NotificationContext, RunningService, ServiceError,
};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::mpsc;

#[path = "common/task_tools.rs"]
mod task_tools;
use task_tools::*;

/// Fail as a tool (a tool result with `isError: true`).
#[tool(task = "optional")]
async fn fail(message: String) -> Result<String, ToolError> {
    Err(ToolError::with_code("NOPE", message))
}

/// Count runs; only ever a task.
#[tool(task = "required")]
async fn only_task() -> Result<u32, ToolError> {
    Ok(u32::try_from(RUNS.fetch_add(1, Ordering::SeqCst) + 1).unwrap_or(u32::MAX))
}

static RUNS: AtomicUsize = AtomicUsize::new(0);

fn registry(jobs: &JobRuntime) -> (Registry, Vec<dsh_runtime::Registration>) {
    let registry = Registry::builder().jobs(jobs.clone()).build();
    let regs = vec![
        registry.register(SlowEcho).unwrap(),
        registry.register(Hang).unwrap(),
        registry.register(Fail).unwrap(),
        registry.register(OnlyTask).unwrap(),
        registry.register(Plain).unwrap(),
    ];
    (registry, regs)
}

/// A client that declares the tasks extension (or not) and records task notifications.
#[derive(Clone)]
struct Client {
    tasks: bool,
    statuses: mpsc::UnboundedSender<TaskStatusNotificationParams>,
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let capabilities = if self.tasks {
            ClientCapabilities::builder().enable_tasks().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(capabilities, Implementation::new("tasks-test", "0"))
    }

    async fn on_task_status(
        &self,
        params: TaskStatusNotificationParams,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.statuses.send(params);
    }
}

type Connected = (
    RunningService<RoleClient, Client>,
    mpsc::UnboundedReceiver<TaskStatusNotificationParams>,
);

/// How a test client reaches the server.
#[derive(Clone, Copy, Debug)]
enum Wire {
    /// A byte stream (as stdio), protocol 2026-07-28.
    Stream2026,
    /// A byte stream, protocol 2025-11-25 (`initialize`).
    Stream2025,
    /// Streamable HTTP, protocol 2025-11-25 with a session.
    Http2025,
}

const WIRES: [Wire; 3] = [Wire::Stream2026, Wire::Stream2025, Wire::Http2025];

struct Fixture {
    server: McpServer,
    jobs: JobRuntime,
    http: Option<dsh_mcp::HttpServer>,
    _regs: Vec<dsh_runtime::Registration>,
}

impl Fixture {
    async fn new(wire: Wire) -> Fixture {
        let jobs = JobRuntime::new();
        let (registry, regs) = registry(&jobs);
        let server = McpServer::new(registry);
        let http = match wire {
            Wire::Http2025 => Some(serve_http(&server, HttpOptions::default()).await.unwrap()),
            _ => None,
        };
        Fixture {
            server,
            jobs,
            http,
            _regs: regs,
        }
    }

    async fn connect(&self, wire: Wire, tasks: bool) -> Connected {
        let (tx, rx) = mpsc::unbounded_channel();
        let client = Client {
            tasks,
            statuses: tx,
        };
        let running = match wire {
            Wire::Stream2026 | Wire::Stream2025 => {
                let (client_io, server_io) = tokio::io::duplex(1 << 16);
                let server = self.server.clone();
                tokio::spawn(async move {
                    let _ = server.serve(server_io).await;
                });
                let mode = match wire {
                    Wire::Stream2026 => ClientLifecycleMode::Discover {
                        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                    },
                    // The client's default `initialize` revision: 2025-11-25.
                    _ => ClientLifecycleMode::Initialize,
                };
                client.serve_with_lifecycle(client_io, mode).await.unwrap()
            }
            Wire::Http2025 => {
                use rmcp::transport::StreamableHttpClientTransport;
                let url = self.http.as_ref().expect("an HTTP server").url();
                client
                    .serve(StreamableHttpClientTransport::from_uri(url))
                    .await
                    .unwrap()
            }
        };
        (running, rx)
    }

    async fn shutdown(self) {
        if let Some(http) = self.http {
            http.shutdown().await.unwrap();
        }
        self.jobs.shutdown().await;
    }
}

fn call(name: &str, args: Value) -> CallToolRequestParams {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    CallToolRequestParams::new(name.to_string()).with_arguments(args)
}

/// Start `name` and expect a task; its id.
async fn start_task(
    client: &RunningService<RoleClient, Client>,
    name: &str,
    args: Value,
) -> String {
    match client
        .peer()
        .call_tool_once(call(name, args))
        .await
        .unwrap()
    {
        CallToolResponse::Task(created) => {
            // Usually `working`; a call that finished at once may already be terminal.
            assert!(created.task.poll_interval_ms.is_some(), "{created:?}");
            assert_eq!(created.task.ttl_ms, None, "{created:?}");
            created.task.task_id
        }
        other => panic!("expected a task, got {other:?}"),
    }
}

/// Poll `tasks/get` until the task is terminal (at most 20 s).
async fn poll_until_terminal(
    client: &RunningService<RoleClient, Client>,
    id: &str,
) -> rmcp::model::DetailedTask {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let got = client
            .peer()
            .get_task(GetTaskParams::new(id))
            .await
            .unwrap();
        if got.task.status().is_terminal() {
            return got.task;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "task {id} still {:?}",
            got.task.status()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Wait until `check` holds for the hang log (at most 20 s).
async fn until_hang(what: &str, check: impl Fn(&HangLog) -> bool) {
    let mut rx = HANG.subscribe();
    tokio::time::timeout(Duration::from_secs(20), rx.wait_for(|log| check(log)))
        .await
        .unwrap_or_else(|_| panic!("timed out waiting until {what}"))
        .unwrap();
}

fn error_code(e: &ServiceError) -> i32 {
    match e {
        ServiceError::McpError(e) => e.code.0,
        other => panic!("expected a JSON-RPC error, got {other}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_is_polled_to_completion_and_its_result_read() {
    for wire in WIRES {
        let fixture = Fixture::new(wire).await;
        let (client, mut statuses) = fixture.connect(wire, true).await;
        let id = start_task(&client, "slow_echo", json!({"text": "hi", "ms": 200})).await;
        assert_eq!(id, "slow_echo-1", "{wire:?}");
        let task = poll_until_terminal(&client, &id).await;
        let TaskPayload::Completed { result } = &task.payload else {
            panic!("{wire:?}: expected a completed task, got {task:?}");
        };
        assert_eq!(result["isError"], json!(false), "{wire:?}: {result:?}");
        assert_eq!(
            result["structuredContent"],
            json!({"result": "echo: hi"}),
            "{wire:?}"
        );
        assert_eq!(result["content"][0]["text"], json!("echo: hi"), "{wire:?}");
        // The job is the task: the session's owner holds it, with the result's text as
        // its output.
        let job = fixture
            .jobs
            .list(None)
            .into_iter()
            .find(|j| j.id == id.as_str());
        assert!(job.is_none(), "{wire:?}: the job is owned, not open to all");
        // A tool error stays a tool result of a completed task.
        let id = start_task(&client, "fail", json!({"message": "no way"})).await;
        let task = poll_until_terminal(&client, &id).await;
        let TaskPayload::Completed { result } = &task.payload else {
            panic!("{wire:?}: expected a completed task, got {task:?}");
        };
        assert_eq!(result["isError"], json!(true), "{wire:?}");
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        assert!(text.contains("no way"), "{wire:?}: {text}");
        // Revisions with plain notifications also get the final state pushed.
        if !matches!(wire, Wire::Stream2026) {
            let pushed = tokio::time::timeout(Duration::from_secs(20), async {
                loop {
                    let note = statuses.recv().await.expect("notifications");
                    if note.task.task.task_id == "slow_echo-1" {
                        return note;
                    }
                }
            })
            .await
            .expect("a notifications/tasks for the first task");
            assert_eq!(pushed.task.status(), TaskStatus::Completed, "{wire:?}");
        }
        client.cancel().await.unwrap();
        fixture.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_task_stops_and_reports_cancelled() {
    for wire in WIRES {
        let tag = format!("cancel-{wire:?}");
        let fixture = Fixture::new(wire).await;
        let (client, _statuses) = fixture.connect(wire, true).await;
        let id = start_task(&client, "hang", json!({"tag": tag})).await;
        until_hang("the task started", |log| log.started.contains(&tag)).await;
        // The request that created it has returned; the task still runs.
        let got = client
            .peer()
            .get_task(GetTaskParams::new(&id))
            .await
            .unwrap();
        assert_eq!(got.task.status(), TaskStatus::Working, "{wire:?}");
        // Its progress report is its status message.
        assert_eq!(
            got.task.task.status_message.as_deref(),
            Some(format!("{tag} started").as_str()),
            "{wire:?}"
        );
        client
            .peer()
            .cancel_task(CancelTaskParams::new(&id))
            .await
            .unwrap();
        let task = poll_until_terminal(&client, &id).await;
        assert_eq!(task.status(), TaskStatus::Cancelled, "{wire:?}: {task:?}");
        assert!(HANG.borrow().stopped.contains(&tag), "{wire:?}");
        // Cancelling again, once settled, is acknowledged and changes nothing.
        client
            .peer()
            .cancel_task(CancelTaskParams::new(&id))
            .await
            .unwrap();
        let task = poll_until_terminal(&client, &id).await;
        assert_eq!(task.status(), TaskStatus::Cancelled, "{wire:?}");
        client.cancel().await.unwrap();
        fixture.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_outlives_its_request_but_not_its_session() {
    for wire in WIRES {
        let tag = format!("close-{wire:?}");
        let fixture = Fixture::new(wire).await;
        let (client, _statuses) = fixture.connect(wire, true).await;
        let id = start_task(&client, "hang", json!({"tag": tag})).await;
        until_hang("the task started", |log| log.started.contains(&tag)).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!HANG.borrow().stopped.contains(&tag), "{wire:?}");
        // Closing the session (stdio EOF, HTTP DELETE) stops the task.
        client.cancel().await.unwrap();
        until_hang("the session's close stopped the task", |log| {
            log.stopped.contains(&tag)
        })
        .await;
        assert!(!id.is_empty());
        fixture.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_session_can_neither_see_nor_cancel_a_task() {
    for wire in WIRES {
        let tag = format!("isolated-{wire:?}");
        let fixture = Fixture::new(wire).await;
        let (alice, _a) = fixture.connect(wire, true).await;
        let (bob, _b) = fixture.connect(wire, true).await;
        let id = start_task(&alice, "hang", json!({"tag": tag})).await;
        until_hang("the task started", |log| log.started.contains(&tag)).await;
        let seen = bob
            .peer()
            .get_task(GetTaskParams::new(&id))
            .await
            .unwrap_err();
        assert_eq!(error_code(&seen), -32602, "{wire:?}: {seen}");
        let cancelled = bob
            .peer()
            .cancel_task(CancelTaskParams::new(&id))
            .await
            .unwrap_err();
        assert_eq!(error_code(&cancelled), -32602, "{wire:?}: {cancelled}");
        // Bob's own first task may have the same id: it is a different task.
        let bobs = start_task(&bob, "slow_echo", json!({"text": "bob", "ms": 1})).await;
        let task = poll_until_terminal(&bob, &bobs).await;
        assert_eq!(task.status(), TaskStatus::Completed, "{wire:?}");
        let still = alice
            .peer()
            .get_task(GetTaskParams::new(&id))
            .await
            .unwrap();
        assert_eq!(still.task.status(), TaskStatus::Working, "{wire:?}");
        assert!(!HANG.borrow().stopped.contains(&tag), "{wire:?}");
        alice.cancel().await.unwrap();
        bob.cancel().await.unwrap();
        fixture.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_without_task_support_and_clients_without_tasks_get_direct_answers() {
    for wire in WIRES {
        let fixture = Fixture::new(wire).await;
        let (client, _statuses) = fixture.connect(wire, true).await;
        // A tool without task support is answered directly, even to a client with tasks.
        match client
            .peer()
            .call_tool_once(call("plain", json!({"text": "x"})))
            .await
            .unwrap()
        {
            CallToolResponse::Complete(result) => {
                assert_eq!(
                    result.structured_content,
                    Some(json!({"result": "plain: x"}))
                );
            }
            other => panic!("{wire:?}: expected a direct result, got {other:?}"),
        }
        // A task-only tool is a task for this client.
        let id = start_task(&client, "only_task", json!({})).await;
        let task = poll_until_terminal(&client, &id).await;
        assert_eq!(task.status(), TaskStatus::Completed, "{wire:?}");
        client.cancel().await.unwrap();

        // A client without tasks: optional tools run directly, a task-only tool is
        // refused with the missing capability, and tasks/* are refused too.
        let (client, _statuses) = fixture.connect(wire, false).await;
        let result = client
            .call_tool(call("slow_echo", json!({"text": "direct", "ms": 1})))
            .await
            .unwrap();
        assert_eq!(
            result.structured_content,
            Some(json!({"result": "echo: direct"})),
            "{wire:?}"
        );
        let before = RUNS.load(Ordering::SeqCst);
        let refused = client
            .peer()
            .call_tool_once(call("only_task", json!({})))
            .await
            .unwrap_err();
        let on_2025 = !matches!(wire, Wire::Stream2026);
        if on_2025 {
            // 2025-11-25 has tasks of its own (`params.task`, see `tasks_2025.rs`): its
            // answer to a task-only tool called without one is `-32601`.
            assert_eq!(error_code(&refused), -32601, "{wire:?}: {refused}");
        } else {
            assert_eq!(error_code(&refused), -32021, "{wire:?}: {refused}");
            let ServiceError::McpError(data) = &refused else {
                unreachable!()
            };
            assert_eq!(
                data.data
                    .as_ref()
                    .map(|d| d["requiredCapabilities"]["extensions"].clone()),
                Some(json!({"io.modelcontextprotocol/tasks": {}})),
                "{wire:?}"
            );
        }
        assert_eq!(RUNS.load(Ordering::SeqCst), before, "{wire:?}: nothing ran");
        let get = client
            .peer()
            .get_task(GetTaskParams::new(&id))
            .await
            .unwrap_err();
        // On 2025-11-25 `tasks/get` is the revision's own: another session's task is
        // unknown (`-32602`).
        let expected = if on_2025 { -32602 } else { -32021 };
        assert_eq!(error_code(&get), expected, "{wire:?}: {get}");
        client.cancel().await.unwrap();
        fixture.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_are_jobs_of_the_owner_the_session_setup_names() {
    let jobs = JobRuntime::new();
    let (registry, _regs) = registry(&jobs);
    let owners: Arc<std::sync::Mutex<Vec<dsh_runtime::jobs::OwnerId>>> = Arc::default();
    let (o, j) = (owners.clone(), jobs.clone());
    let server = McpServer::new(registry).on_session(move |_scope| {
        let owner = j.owner();
        o.lock().unwrap().push(owner.id());
        SessionGuard::new()
            .job_owner(owner.id())
            .on_close(async move { owner.close().await })
    });
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let s = server.clone();
    tokio::spawn(async move {
        let _ = s.serve(server_io).await;
    });
    let (tx, _rx) = mpsc::unbounded_channel();
    let client = Client {
        tasks: true,
        statuses: tx,
    }
    .serve(client_io)
    .await
    .unwrap();
    let tag = "owned".to_string();
    let id = start_task(&client, "hang", json!({"tag": tag})).await;
    until_hang("the task started", |log| log.started.contains(&tag)).await;
    let owner = owners.lock().unwrap()[0];
    // The session's job tools (acting for this owner) see the task as a job, and
    // killing it there cancels the task.
    let listed = jobs.list(Some(owner));
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0].id, id.as_str());
    assert_eq!(listed[0].label, "tools/call hang");
    jobs.kill(&id, None, Some(owner)).unwrap();
    let task = poll_until_terminal(&client, &id).await;
    assert_eq!(task.status(), TaskStatus::Cancelled, "{task:?}");
    let job = jobs.snapshot(&id, Some(owner)).unwrap();
    assert_eq!(job.status, JobStatus::Killed);
    client.cancel().await.unwrap();
    jobs.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_a_job_runtime_offers_no_tasks() {
    let registry = Registry::new();
    let _regs = [
        registry.register(SlowEcho).unwrap(),
        registry.register(OnlyTask).unwrap(),
    ];
    let server = McpServer::new(registry);
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let _ = server.serve(server_io).await;
    });
    let (tx, _rx) = mpsc::unbounded_channel();
    let client = Client {
        tasks: true,
        statuses: tx,
    }
    .serve(client_io)
    .await
    .unwrap();
    let info = client.peer().peer_info().expect("server info");
    assert!(!info.capabilities.supports_tasks(), "{info:?}");
    let result = client
        .call_tool(call("slow_echo", json!({"text": "direct", "ms": 1})))
        .await
        .unwrap();
    assert_eq!(
        result.structured_content,
        Some(json!({"result": "echo: direct"}))
    );
    let refused = client
        .peer()
        .call_tool_once(call("only_task", json!({})))
        .await
        .unwrap_err();
    assert_eq!(error_code(&refused), -32600, "{refused}");
    let get = client
        .peer()
        .get_task(GetTaskParams::new("slow_echo-1"))
        .await
        .unwrap_err();
    assert_eq!(error_code(&get), -32601, "{get}");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_2025_11_25_only_methods_are_not_found() {
    // The extension drops `tasks/result` and `tasks/list`: clients calling them get
    // `-32601`, as the extension prescribes.
    let fixture = Fixture::new(Wire::Stream2026).await;
    let (client, _statuses) = fixture.connect(Wire::Stream2026, true).await;
    let id = start_task(&client, "slow_echo", json!({"text": "x", "ms": 1})).await;
    for method in ["tasks/result", "tasks/list"] {
        let request = rmcp::model::ClientRequest::CustomRequest(rmcp::model::CustomRequest::new(
            method,
            Some(json!({"taskId": id})),
        ));
        let refused = client.peer().send_request(request).await.unwrap_err();
        assert_eq!(error_code(&refused), -32601, "{method}: {refused}");
    }
    client.cancel().await.unwrap();
    fixture.shutdown().await;
}
