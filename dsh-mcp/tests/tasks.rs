//! Task-capable tools as MCP tasks (the tasks extension, `io.modelcontextprotocol/tasks`),
//! driven by rmcp's own client over in-memory stdio-style streams and over Streamable
//! HTTP, on protocol 2026-07-28 (per-request capabilities) and on 2025-11-25 sessions that
//! declared the extension at `initialize`: a task polled to completion and its result
//! read from `tasks/get`, a cancelled task, a task still running after the request that
//! created it returned, the session's close stopping it, another session unable to see
//! or cancel it, tools without task support answered directly, a task-only tool refused
//! to a client without tasks, progress as the task's status message and the final status
//! notification; and an approval inside a task: `input_required` with the form under a
//! key of its own, answered (or not) by `tasks/update`, or ended by `tasks/cancel`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use dsh_mcp::{HttpOptions, McpServer, SessionGuard, serve_http};
use dsh_runtime::jobs::{JobRuntime, JobStatus};
use dsh_runtime::{Registry, ToolContext, ToolError, tool};
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

fn registry(jobs: &JobRuntime) -> (Registry, Vec<dsh_runtime::RegistrationHandle>) {
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

/// A client that declares the tasks extension (or not), form elicitation (or not), and
/// records task notifications.
#[derive(Clone)]
struct Client {
    tasks: bool,
    elicit: bool,
    statuses: mpsc::UnboundedSender<TaskStatusNotificationParams>,
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = if self.tasks {
            ClientCapabilities::builder().enable_tasks().build()
        } else {
            ClientCapabilities::default()
        };
        if self.elicit {
            capabilities.elicitation = ClientCapabilities::builder()
                .enable_elicitation()
                .build()
                .elicitation;
        }
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
    /// Streamable HTTP, protocol 2026-07-28: every request on its own (the server's
    /// stateless context, see `tasks_stateless.rs`).
    Http2026,
}

impl Wire {
    /// Whether the server can push notifications to the client after a request ended.
    fn pushes(self) -> bool {
        matches!(self, Wire::Stream2025 | Wire::Http2025)
    }
}

const WIRES: [Wire; 4] = [
    Wire::Stream2026,
    Wire::Stream2025,
    Wire::Http2025,
    Wire::Http2026,
];

/// The wires with a session (a task ends with it, another session cannot see it).
const SESSION_WIRES: [Wire; 3] = [Wire::Stream2026, Wire::Stream2025, Wire::Http2025];

struct Fixture {
    server: McpServer,
    jobs: JobRuntime,
    http: Option<dsh_mcp::HttpServer>,
    _regs: Vec<dsh_runtime::RegistrationHandle>,
}

impl Fixture {
    async fn new(wire: Wire) -> Fixture {
        let jobs = JobRuntime::new();
        let (registry, regs) = registry(&jobs);
        let server = McpServer::new(registry);
        let http = match wire {
            Wire::Http2025 | Wire::Http2026 => {
                Some(serve_http(&server, HttpOptions::default()).await.unwrap())
            }
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
        self.connect_with(wire, tasks, false).await
    }

    /// Connect a client that declares tasks (or not) and form elicitation (or not).
    async fn connect_with(&self, wire: Wire, tasks: bool, elicit: bool) -> Connected {
        self.connect_as(wire, tasks, elicit, None).await
    }

    /// Connect as [`Fixture::connect_with`] does, over HTTP with this bearer token when
    /// one is given.
    async fn connect_as(
        &self,
        wire: Wire,
        tasks: bool,
        elicit: bool,
        token: Option<&str>,
    ) -> Connected {
        let (tx, rx) = mpsc::unbounded_channel();
        let client = Client {
            tasks,
            elicit,
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
            Wire::Http2025 | Wire::Http2026 => {
                use rmcp::transport::StreamableHttpClientTransport;
                use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
                let url = self.http.as_ref().expect("an HTTP server").url();
                let mut config = StreamableHttpClientTransportConfig::with_uri(url);
                if let Some(token) = token {
                    config = config.auth_header(token);
                }
                let transport = StreamableHttpClientTransport::from_config(config);
                let mode = match wire {
                    Wire::Http2026 => ClientLifecycleMode::Discover {
                        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                    },
                    _ => ClientLifecycleMode::Initialize,
                };
                client.serve_with_lifecycle(transport, mode).await.unwrap()
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
            // A session's task lives as long as the session; a stateless one (its id
            // drawn at random) for the server's time to live (one hour by default).
            let expected = created
                .task
                .task_id
                .starts_with("task-")
                .then_some(3_600_000);
            assert_eq!(created.task.ttl_ms, expected, "{created:?}");
            created.task.task_id
        }
        other => panic!("expected a task, got {other:?}"),
    }
}

/// `tasks/get` of task `id`.
async fn get(
    client: &RunningService<RoleClient, Client>,
    id: &str,
) -> Result<rmcp::model::GetTaskResult, ServiceError> {
    client.peer().get_task(GetTaskParams::new(id)).await
}

/// `tasks/cancel` of task `id`.
async fn cancel(client: &RunningService<RoleClient, Client>, id: &str) -> Result<(), ServiceError> {
    client.peer().cancel_task(CancelTaskParams::new(id)).await
}

/// Start `hang` tagged `tag` as a task and wait until its body runs; the task's id.
async fn start_hang(client: &RunningService<RoleClient, Client>, tag: &str) -> String {
    let id = start_task(client, "hang", json!({"tag": tag})).await;
    until_hang("the task started", |log| {
        log.started.iter().any(|t| t == tag)
    })
    .await;
    id
}

/// Poll `tasks/get` until the task is terminal (at most 20 s).
async fn poll_until_terminal(
    client: &RunningService<RoleClient, Client>,
    id: &str,
) -> rmcp::model::DetailedTask {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let got = get(client, id).await.unwrap();
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
        if matches!(wire, Wire::Http2026) {
            // A stateless task's id is random, not its job's.
            assert_eq!(id.len(), 37, "{id}");
            assert!(id.starts_with("task-"), "{id}");
        } else {
            assert_eq!(id, "slow_echo-1", "{wire:?}");
        }
        let first = id.clone();
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
        if wire.pushes() {
            let pushed = tokio::time::timeout(Duration::from_secs(20), async {
                loop {
                    let note = statuses.recv().await.expect("notifications");
                    if note.task.task.task_id == first {
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
        let id = start_hang(&client, &tag).await;
        // The request that created it has returned; the task still runs.
        let got = get(&client, &id).await.unwrap();
        assert_eq!(got.task.status(), TaskStatus::Working, "{wire:?}");
        // Its progress report is its status message.
        assert_eq!(
            got.task.task.status_message.as_deref(),
            Some(format!("{tag} started").as_str()),
            "{wire:?}"
        );
        cancel(&client, &id).await.unwrap();
        let task = poll_until_terminal(&client, &id).await;
        assert_eq!(task.status(), TaskStatus::Cancelled, "{wire:?}: {task:?}");
        assert!(HANG.borrow().stopped.contains(&tag), "{wire:?}");
        // Cancelling again, once settled, is acknowledged and changes nothing.
        cancel(&client, &id).await.unwrap();
        let task = poll_until_terminal(&client, &id).await;
        assert_eq!(task.status(), TaskStatus::Cancelled, "{wire:?}");
        client.cancel().await.unwrap();
        fixture.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_outlives_its_request_but_not_its_session() {
    for wire in SESSION_WIRES {
        let tag = format!("close-{wire:?}");
        let fixture = Fixture::new(wire).await;
        let (client, _statuses) = fixture.connect(wire, true).await;
        let id = start_hang(&client, &tag).await;
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
    for wire in SESSION_WIRES {
        let tag = format!("isolated-{wire:?}");
        let fixture = Fixture::new(wire).await;
        let (alice, _a) = fixture.connect(wire, true).await;
        let (bob, _b) = fixture.connect(wire, true).await;
        let id = start_hang(&alice, &tag).await;
        let seen = get(&bob, &id).await.unwrap_err();
        assert_eq!(error_code(&seen), -32602, "{wire:?}: {seen}");
        let cancelled = cancel(&bob, &id).await.unwrap_err();
        assert_eq!(error_code(&cancelled), -32602, "{wire:?}: {cancelled}");
        // Bob's own first task may have the same id: it is a different task.
        let bobs = start_task(&bob, "slow_echo", json!({"text": "bob", "ms": 1})).await;
        let task = poll_until_terminal(&bob, &bobs).await;
        assert_eq!(task.status(), TaskStatus::Completed, "{wire:?}");
        let still = get(&alice, &id).await.unwrap();
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
        let on_2025 = matches!(wire, Wire::Stream2025 | Wire::Http2025);
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
        let get = get(&client, &id).await.unwrap_err();
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
        elicit: false,
        statuses: tx,
    }
    .serve(client_io)
    .await
    .unwrap();
    let tag = "owned".to_string();
    let id = start_hang(&client, &tag).await;
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
        elicit: false,
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
    let get = get(&client, "slow_echo-1").await.unwrap_err();
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

// ---------------------------------------------------------------------------------------
// Approval inside a task: `input_required`, answered by `tasks/update`.
// ---------------------------------------------------------------------------------------

/// The notes of the `guarded` calls whose body ran.
static GUARDED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

fn guarded_ran(note: &str) -> bool {
    GUARDED.lock().unwrap().iter().any(|n| n == note)
}

/// Record that the body ran (pre-execute policy asks before every call).
#[tool(task = "optional")]
async fn guarded(note: String) -> Result<String, ToolError> {
    GUARDED.lock().unwrap().push(note.clone());
    Ok(format!("guarded: {note}"))
}

/// One step (pre-execute policy asks before every call).
#[tool]
async fn step(tag: String, n: u32) -> String {
    format!("step {n} of {tag}")
}

/// Calls `step` twice through the registry it is registered in.
struct Steps {
    registry: std::sync::Mutex<Option<Registry>>,
}

#[dsh_runtime::toolbox]
impl Steps {
    /// Run two steps, each a call of `step` that asks for approval.
    #[tool(task = "optional")]
    async fn two_steps(&self, cx: &ToolContext, tag: String) -> Result<String, ToolError> {
        let registry = self
            .registry
            .lock()
            .unwrap()
            .clone()
            .ok_or_else(|| ToolError::new("no registry"))?;
        let mut done = Vec::new();
        for n in 1..=2 {
            let args = json!({"tag": tag, "n": n}).to_string();
            let call = registry.execute(dsh_runtime::ToolCall::new(
                format!("{tag}-{n}"),
                "step",
                args,
            ));
            // The body runs on a task of its own: the session's approval route goes along.
            let result = match cx.approval_fallback() {
                Some(route) => dsh_runtime::hooks::with_approval(route.clone(), call).await,
                None => call.await,
            };
            if result.is_error() {
                return Err(ToolError::new(format!("step {n}: {}", result.text())));
            }
            done.push(result.text());
        }
        Ok(done.join(", "))
    }
}

/// The codes of the final results of the registry's calls, by tool.
type Codes = Arc<std::sync::Mutex<Vec<(String, Option<String>)>>>;

/// A fixture whose registry asks before each `guarded` and `step` call (no approval
/// handler of its own: the MCP client is asked), and the codes its calls ended with.
async fn asking_fixture(wire: Wire) -> (Fixture, Codes, Arc<Steps>) {
    use dsh_runtime::hooks::{PreDecision, observer_fn, pre_execute_fn};
    let jobs = JobRuntime::new();
    let (registry, mut regs) = registry(&jobs);
    let codes: Codes = Arc::default();
    let seen = codes.clone();
    let steps = Arc::new(Steps {
        registry: std::sync::Mutex::new(Some(registry.clone())),
    });
    regs.extend([
        registry.register(Guarded).unwrap(),
        registry.register(Step).unwrap(),
        registry.register_toolbox(steps.clone()).unwrap(),
        registry.add_pre_execute(pre_execute_fn(|call| {
            matches!(call.name(), "guarded" | "step").then(|| PreDecision::ask("it changes things"))
        })),
        registry.add_observer(observer_fn(move |call, result| {
            seen.lock().unwrap().push((
                call.name().to_string(),
                result.code_str().map(str::to_string),
            ));
        })),
    ]);
    let server = McpServer::new(registry);
    let http = match wire {
        Wire::Http2025 | Wire::Http2026 => {
            Some(serve_http(&server, HttpOptions::default()).await.unwrap())
        }
        _ => None,
    };
    let fixture = Fixture {
        server,
        jobs,
        http,
        _regs: regs,
    };
    (fixture, codes, steps)
}

/// The code the last call of `tool` ended with.
fn last_code(codes: &Codes, tool: &str) -> Option<String> {
    codes
        .lock()
        .unwrap()
        .iter()
        .rev()
        .find(|(name, _)| name == tool)
        .and_then(|(_, code)| code.clone())
}

/// Poll `tasks/get` until the task is `input_required` (at most 20 s); its input
/// requests, as JSON.
async fn poll_until_input(client: &RunningService<RoleClient, Client>, id: &str) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let got = get(client, id).await.unwrap();
        if let TaskPayload::InputRequired { input_requests } = &got.task.payload {
            return serde_json::to_value(input_requests).unwrap();
        }
        assert!(
            !got.task.status().is_terminal() && tokio::time::Instant::now() < deadline,
            "task {id} did not ask: {:?}",
            got.task
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `tasks/update` of task `id` with `responses`.
async fn update(
    client: &RunningService<RoleClient, Client>,
    id: &str,
    responses: Value,
) -> Result<(), ServiceError> {
    let Value::Object(responses) = responses else {
        panic!("responses must be an object")
    };
    client
        .peer()
        .update_task(rmcp::model::UpdateTaskParams::new(
            id,
            responses.into_iter().collect(),
        ))
        .await
}

fn approve(yes: bool) -> Value {
    json!({"action": "accept", "content": {"approve": yes}})
}

/// The text of a completed task's result, and whether it is an error.
fn completed_text(task: &rmcp::model::DetailedTask) -> (String, bool) {
    let TaskPayload::Completed { result } = &task.payload else {
        panic!("expected a completed task, got {task:?}");
    };
    (
        result["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        result["isError"] == json!(true),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ask_inside_a_task_is_input_required_until_tasks_update_answers() {
    for wire in WIRES {
        let note = format!("approved-{wire:?}");
        let (fixture, codes, steps) = asking_fixture(wire).await;
        let (client, mut statuses) = fixture.connect_with(wire, true, true).await;
        let id = start_task(&client, "guarded", json!({"note": note})).await;
        let requests = poll_until_input(&client, &id).await;
        let keys: Vec<&String> = requests.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["approval-1"], "{wire:?}: {requests}");
        let asked = &requests["approval-1"];
        assert_eq!(asked["method"], "elicitation/create", "{wire:?}: {asked}");
        assert_eq!(asked["params"]["mode"], "form", "{wire:?}: {asked}");
        assert_eq!(
            asked["params"]["message"],
            format!(
                "Allow tool \"guarded\" to run?\nCall: guarded {{\"note\":\"{note}\"}}\nReason: it changes things"
            ),
            "{wire:?}"
        );
        let schema = &asked["params"]["requestedSchema"];
        assert_eq!(
            schema["properties"]["approve"]["type"], "boolean",
            "{schema}"
        );
        assert_eq!(schema["required"], json!(["approve"]), "{schema}");
        assert!(
            !guarded_ran(&note),
            "{wire:?}: the body waits for the answer"
        );
        if wire.pushes() {
            // Sessions with plain notifications hear of the wait.
            let pushed = tokio::time::timeout(Duration::from_secs(20), async {
                loop {
                    let note = statuses.recv().await.expect("notifications");
                    if note.task.task.task_id == id {
                        return note;
                    }
                }
            })
            .await
            .expect("a notifications/tasks for the wait");
            let TaskPayload::InputRequired { input_requests } = &pushed.task.payload else {
                panic!("{wire:?}: expected input_required, got {pushed:?}");
            };
            assert_eq!(
                serde_json::to_value(input_requests).unwrap(),
                requests,
                "{wire:?}"
            );
        }
        // Responses under keys that are not outstanding are ignored, whatever they hold.
        update(
            &client,
            &id,
            json!({"approval-2": approve(true), "name": 7}),
        )
        .await
        .unwrap();
        // A response under the outstanding key must be an elicitation result.
        let refused = update(&client, &id, json!({"approval-1": {"approve": true}}))
            .await
            .unwrap_err();
        assert_eq!(error_code(&refused), -32602, "{wire:?}: {refused}");
        assert_eq!(poll_until_input(&client, &id).await, requests, "{wire:?}");
        assert!(!guarded_ran(&note), "{wire:?}");
        // The answer: the task works again and completes with the tool's result.
        update(&client, &id, json!({"approval-1": approve(true)}))
            .await
            .unwrap();
        let now = get(&client, &id).await.unwrap();
        assert!(
            matches!(
                now.task.status(),
                TaskStatus::Working | TaskStatus::Completed
            ),
            "{wire:?}: {now:?}"
        );
        let task = poll_until_terminal(&client, &id).await;
        assert_eq!(
            completed_text(&task),
            (format!("guarded: {note}"), false),
            "{wire:?}"
        );
        assert!(guarded_ran(&note), "{wire:?}");
        assert_eq!(last_code(&codes, "guarded"), None, "{wire:?}");
        if wire.pushes() {
            // After the wait, plain notifications follow the task: working again, then
            // its terminal state.
            let mut seen = Vec::new();
            tokio::time::timeout(Duration::from_secs(20), async {
                while seen.last() != Some(&TaskStatus::Completed) {
                    let note = statuses.recv().await.expect("notifications");
                    if note.task.task.task_id == id {
                        seen.push(note.task.status());
                    }
                }
            })
            .await
            .unwrap_or_else(|_| panic!("{wire:?}: no terminal notification: {seen:?}"));
            assert_eq!(
                seen,
                [TaskStatus::Working, TaskStatus::Completed],
                "{wire:?}"
            );
        }
        // Answering again is ignored: the key is no longer outstanding.
        update(&client, &id, json!({"approval-1": approve(false)}))
            .await
            .unwrap();
        let again = poll_until_terminal(&client, &id).await;
        assert!(!completed_text(&again).1, "{wire:?}");
        client.cancel().await.unwrap();
        fixture.shutdown().await;
        // The toolbox holds the registry: let both go.
        steps.registry.lock().unwrap().take();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declined_and_cancelled_answers_deny_the_tasks_call() {
    for wire in WIRES {
        let (fixture, codes, steps) = asking_fixture(wire).await;
        let (client, _statuses) = fixture.connect_with(wire, true, true).await;
        let answers = [
            (
                "accept-no",
                approve(false),
                "APPROVAL_REJECTED",
                "Error: the user rejected tool \"guarded\"",
            ),
            (
                "decline",
                json!({"action": "decline"}),
                "APPROVAL_REJECTED",
                "Error: the user rejected tool \"guarded\"",
            ),
            (
                "cancel",
                json!({"action": "cancel"}),
                "APPROVAL_CANCELLED",
                "Error: approval for tool \"guarded\" was cancelled",
            ),
        ];
        for (what, answer, code, text) in answers {
            let note = format!("{what}-{wire:?}");
            let id = start_task(&client, "guarded", json!({"note": note})).await;
            poll_until_input(&client, &id).await;
            update(&client, &id, json!({ "approval-1": answer }))
                .await
                .unwrap();
            let task = poll_until_terminal(&client, &id).await;
            assert_eq!(
                completed_text(&task),
                (text.to_string(), true),
                "{wire:?}/{what}"
            );
            assert_eq!(
                last_code(&codes, "guarded").as_deref(),
                Some(code),
                "{wire:?}/{what}"
            );
            assert!(!guarded_ran(&note), "{wire:?}/{what}: the body did not run");
        }
        client.cancel().await.unwrap();
        fixture.shutdown().await;
        // The toolbox holds the registry: let both go.
        steps.registry.lock().unwrap().take();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_cancel_while_waiting_cancels_the_task_before_its_body() {
    for wire in WIRES {
        let note = format!("withdrawn-{wire:?}");
        let (fixture, codes, steps) = asking_fixture(wire).await;
        let (client, _statuses) = fixture.connect_with(wire, true, true).await;
        let id = start_task(&client, "guarded", json!({"note": note})).await;
        poll_until_input(&client, &id).await;
        cancel(&client, &id).await.unwrap();
        let task = poll_until_terminal(&client, &id).await;
        assert_eq!(task.status(), TaskStatus::Cancelled, "{wire:?}: {task:?}");
        // The approval was cancelled with the call itself: the registry's code for a
        // call its caller aborted before its body.
        assert_eq!(
            last_code(&codes, "guarded").as_deref(),
            Some("ABORTED_BEFORE_DISPATCH"),
            "{wire:?}"
        );
        // The question is gone: a late answer is ignored and runs nothing.
        update(&client, &id, json!({"approval-1": approve(true)}))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!guarded_ran(&note), "{wire:?}: the body never ran");
        assert_eq!(
            poll_until_terminal(&client, &id).await.status(),
            TaskStatus::Cancelled,
            "{wire:?}"
        );
        client.cancel().await.unwrap();
        fixture.shutdown().await;
        // The toolbox holds the registry: let both go.
        steps.registry.lock().unwrap().take();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_session_cannot_answer_a_tasks_question() {
    for wire in SESSION_WIRES {
        let note = format!("alice-{wire:?}");
        let (fixture, _codes, steps) = asking_fixture(wire).await;
        let (alice, _a) = fixture.connect_with(wire, true, true).await;
        let (bob, _b) = fixture.connect_with(wire, true, true).await;
        let id = start_task(&alice, "guarded", json!({"note": note})).await;
        let requests = poll_until_input(&alice, &id).await;
        // Another session's task is unknown here: invalid params, as for tasks/get.
        let refused = update(&bob, &id, json!({"approval-1": approve(true)}))
            .await
            .unwrap_err();
        assert_eq!(error_code(&refused), -32602, "{wire:?}: {refused}");
        let unknown = update(&alice, "no-such-task", json!({"approval-1": approve(true)}))
            .await
            .unwrap_err();
        assert_eq!(error_code(&unknown), -32602, "{wire:?}: {unknown}");
        assert_eq!(poll_until_input(&alice, &id).await, requests, "{wire:?}");
        assert!(!guarded_ran(&note), "{wire:?}");
        alice.cancel().await.unwrap();
        bob.cancel().await.unwrap();
        fixture.shutdown().await;
        // The toolbox holds the registry: let both go.
        steps.registry.lock().unwrap().take();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_of_a_client_without_elicitation_gets_the_cannot_ask_denial() {
    for wire in WIRES {
        let note = format!("unasked-{wire:?}");
        let (fixture, codes, steps) = asking_fixture(wire).await;
        let (client, _statuses) = fixture.connect_with(wire, true, false).await;
        let id = start_task(&client, "guarded", json!({"note": note})).await;
        let task = poll_until_terminal(&client, &id).await;
        assert_eq!(
            completed_text(&task),
            (
                "Error: it changes things (the MCP client cannot ask its user for approval: \
                 it did not declare the elicitation capability)"
                    .to_string(),
                true
            ),
            "{wire:?}"
        );
        assert_eq!(
            last_code(&codes, "guarded").as_deref(),
            Some("POLICY_DENIED"),
            "{wire:?}"
        );
        assert!(!guarded_ran(&note), "{wire:?}");
        client.cancel().await.unwrap();
        fixture.shutdown().await;
        // The toolbox holds the registry: let both go.
        steps.registry.lock().unwrap().take();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_that_asks_twice_gets_two_distinct_keys() {
    for wire in WIRES {
        let tag = format!("twice-{wire:?}");
        let (fixture, _codes, steps) = asking_fixture(wire).await;
        let (client, _statuses) = fixture.connect_with(wire, true, true).await;
        let id = start_task(&client, "two_steps", json!({"tag": tag})).await;
        let first = poll_until_input(&client, &id).await;
        let keys: Vec<&String> = first.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["approval-1"], "{wire:?}: {first}");
        let message = first["approval-1"]["params"]["message"].as_str().unwrap();
        assert!(message.contains("\"n\":1"), "{wire:?}: {message}");
        update(&client, &id, json!({"approval-1": approve(true)}))
            .await
            .unwrap();
        // The second step asks under a key of its own.
        let second = tokio::time::timeout(Duration::from_secs(20), async {
            loop {
                let requests = poll_until_input(&client, &id).await;
                if requests.get("approval-1").is_none() {
                    return requests;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
        .expect("the second question");
        let keys: Vec<&String> = second.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["approval-2"], "{wire:?}: {second}");
        let message = second["approval-2"]["params"]["message"].as_str().unwrap();
        assert!(message.contains("\"n\":2"), "{wire:?}: {message}");
        // An answer under the first key again does nothing.
        update(&client, &id, json!({"approval-1": approve(false)}))
            .await
            .unwrap();
        assert_eq!(poll_until_input(&client, &id).await, second, "{wire:?}");
        update(&client, &id, json!({"approval-2": approve(true)}))
            .await
            .unwrap();
        let task = poll_until_terminal(&client, &id).await;
        assert_eq!(
            completed_text(&task),
            (format!("step 1 of {tag}, step 2 of {tag}"), false),
            "{wire:?}"
        );
        client.cancel().await.unwrap();
        fixture.shutdown().await;
        // The toolbox holds the registry: let both go.
        steps.registry.lock().unwrap().take();
    }
}

/// A fixture serving protocol 2026-07-28 over HTTP statelessly, with these task limits.
async fn stateless_fixture(limits: dsh_mcp::StatelessTaskLimits) -> Fixture {
    let jobs = JobRuntime::new();
    let (registry, regs) = registry(&jobs);
    let server = McpServer::new(registry).with_stateless_tasks(limits);
    let http = Some(serve_http(&server, HttpOptions::default()).await.unwrap());
    Fixture {
        server,
        jobs,
        http,
        _regs: regs,
    }
}

/// Start `name` and expect a task; the task as created.
async fn create_task(
    client: &RunningService<RoleClient, Client>,
    name: &str,
    args: Value,
) -> rmcp::model::Task {
    match client
        .peer()
        .call_tool_once(call(name, args))
        .await
        .unwrap()
    {
        CallToolResponse::Task(created) => created.task,
        other => panic!("expected a task, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_task_is_bound_to_its_credentials_not_to_a_connection() {
    let tag = "stateless-bound";
    let fixture = stateless_fixture(dsh_mcp::StatelessTaskLimits::default()).await;
    let (alice, _a) = fixture
        .connect_as(Wire::Http2026, true, false, Some("alice"))
        .await;
    let id = start_task(&alice, "hang", json!({"tag": tag})).await;
    until_hang("the task started", |log| {
        log.started.iter().any(|t| t == tag)
    })
    .await;
    // The job behind it is not the task's name.
    let job = fixture
        .server
        .registry()
        .jobs()
        .unwrap()
        .list(None)
        .into_iter()
        .find(|j| j.id == "hang-1");
    assert!(
        job.is_none(),
        "the task's job is owned by the stateless context"
    );
    let refused = get(&alice, "hang-1").await.unwrap_err();
    assert_eq!(
        error_code(&refused),
        -32602,
        "a job id is no task id: {refused}"
    );
    // The client goes away; its task does not (nothing ties it to a connection).
    alice.cancel().await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!HANG.borrow().stopped.iter().any(|t| t == tag));
    // Other credentials, or none, do not see it and cannot cancel it.
    for token in [Some("bob"), None] {
        let (other, _o) = fixture.connect_as(Wire::Http2026, true, false, token).await;
        let seen = get(&other, &id).await.unwrap_err();
        assert_eq!(error_code(&seen), -32602, "{token:?}: {seen}");
        let cancelled = cancel(&other, &id).await.unwrap_err();
        assert_eq!(error_code(&cancelled), -32602, "{token:?}: {cancelled}");
        let updated = other
            .peer()
            .update_task(rmcp::model::UpdateTaskParams::new(&id, Default::default()))
            .await
            .unwrap_err();
        assert_eq!(error_code(&updated), -32602, "{token:?}: {updated}");
        other.cancel().await.unwrap();
    }
    assert!(!HANG.borrow().stopped.iter().any(|t| t == tag));
    // The same credentials on a new connection do.
    let (again, _g) = fixture
        .connect_as(Wire::Http2026, true, false, Some("alice"))
        .await;
    let got = get(&again, &id).await.unwrap();
    assert_eq!(got.task.status(), TaskStatus::Working);
    assert_eq!(got.task.task.task_id, id);
    assert_eq!(got.task.task.ttl_ms, Some(3_600_000));
    cancel(&again, &id).await.unwrap();
    let task = poll_until_terminal(&again, &id).await;
    assert_eq!(task.status(), TaskStatus::Cancelled, "{task:?}");
    assert!(HANG.borrow().stopped.iter().any(|t| t == tag));
    again.cancel().await.unwrap();
    fixture.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_task_is_stopped_and_forgotten_when_its_ttl_passes() {
    let tag = "stateless-expired";
    let limits = dsh_mcp::StatelessTaskLimits::default().ttl(Duration::from_millis(400));
    let fixture = stateless_fixture(limits).await;
    let (client, _c) = fixture.connect(Wire::Http2026, true).await;
    let created = create_task(&client, "hang", json!({"tag": tag})).await;
    assert_eq!(created.ttl_ms, Some(400), "{created:?}");
    let id = created.task_id;
    until_hang("the task started", |log| {
        log.started.iter().any(|t| t == tag)
    })
    .await;
    until_hang("the expiry stopped the task", |log| {
        log.stopped.iter().any(|t| t == tag)
    })
    .await;
    // Gone: unknown from now on (the kill and the forgetting happen together).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        match get(&client, &id).await {
            Err(e) => {
                assert_eq!(error_code(&e), -32602, "{e}");
                break;
            }
            Ok(got) => assert!(
                tokio::time::Instant::now() < deadline,
                "still known: {got:?}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    client.cancel().await.unwrap();
    fixture.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn beyond_the_stateless_task_cap_calls_are_direct_or_refused() {
    let tag = "stateless-cap";
    let limits = dsh_mcp::StatelessTaskLimits::default().max_tasks(1);
    let fixture = stateless_fixture(limits).await;
    let (client, _c) = fixture.connect(Wire::Http2026, true).await;
    let id = start_task(&client, "hang", json!({"tag": tag})).await;
    until_hang("the task started", |log| {
        log.started.iter().any(|t| t == tag)
    })
    .await;
    // The one place is taken: a tool that may run as a task is answered directly...
    match client
        .peer()
        .call_tool_once(call("slow_echo", json!({"text": "direct", "ms": 1})))
        .await
        .unwrap()
    {
        CallToolResponse::Complete(result) => assert_eq!(
            result.structured_content,
            Some(json!({"result": "echo: direct"}))
        ),
        other => panic!("expected a direct answer, got {other:?}"),
    }
    // ...and one that runs only as a task is refused, without running.
    let before = RUNS.load(Ordering::SeqCst);
    let refused = client
        .peer()
        .call_tool_once(call("only_task", json!({})))
        .await
        .unwrap_err();
    assert_eq!(error_code(&refused), -32600, "{refused}");
    assert!(refused.to_string().contains("as many tasks"), "{refused}");
    assert_eq!(RUNS.load(Ordering::SeqCst), before);
    // A settled task keeps its place until it expires: its result stays readable.
    cancel(&client, &id).await.unwrap();
    assert_eq!(
        poll_until_terminal(&client, &id).await.status(),
        TaskStatus::Cancelled
    );
    assert!(matches!(
        client
            .peer()
            .call_tool_once(call("slow_echo", json!({"text": "still", "ms": 1})))
            .await
            .unwrap(),
        CallToolResponse::Complete(_)
    ));
    client.cancel().await.unwrap();
    fixture.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_http_servers_shutdown_stops_its_stateless_tasks() {
    let tag = "stateless-shutdown";
    let fixture = stateless_fixture(dsh_mcp::StatelessTaskLimits::default()).await;
    let (client, _c) = fixture.connect(Wire::Http2026, true).await;
    start_task(&client, "hang", json!({"tag": tag})).await;
    until_hang("the task started", |log| {
        log.started.iter().any(|t| t == tag)
    })
    .await;
    client.cancel().await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!HANG.borrow().stopped.iter().any(|t| t == tag));
    let Fixture { http, jobs, .. } = fixture;
    http.unwrap().shutdown().await.unwrap();
    // Shutting down waited for the context's close: the task has stopped by now.
    assert!(HANG.borrow().stopped.iter().any(|t| t == tag));
    jobs.shutdown().await;
}

/// Two server instances sharing one store and one keyring, as behind a load balancer:
/// a stateless task started on one is read and cancelled through the other (the
/// cancellation reaching the call where it runs), and stays invisible to other
/// credentials on both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_sharing_a_store_and_keys_serve_each_others_tasks() {
    let tag = "two-instances";
    let store: Arc<dyn dsh_mcp::store::Store> = Arc::new(dsh_mcp::store::MemoryStore::new());
    let keys = dsh_mcp::StateKeys::new([vec![7u8; dsh_mcp::MIN_KEY_BYTES]]).unwrap();
    let instance = |store: Arc<dyn dsh_mcp::store::Store>, keys: dsh_mcp::StateKeys| async move {
        let jobs = JobRuntime::new();
        let (registry, regs) = registry(&jobs);
        let server = McpServer::new(registry)
            .with_store(store)
            .with_state_keys(keys);
        let http = Some(serve_http(&server, HttpOptions::default()).await.unwrap());
        Fixture {
            server,
            jobs,
            http,
            _regs: regs,
        }
    };
    let a = instance(store.clone(), keys.clone()).await;
    let b = instance(store.clone(), keys).await;
    let (alice_a, _) = a
        .connect_as(Wire::Http2026, true, false, Some("alice"))
        .await;
    let (alice_b, _) = b
        .connect_as(Wire::Http2026, true, false, Some("alice"))
        .await;
    let (bob_b, _) = b.connect_as(Wire::Http2026, true, false, Some("bob")).await;
    let id = start_task(&alice_a, "hang", json!({"tag": tag})).await;
    until_hang("the task started", |log| {
        log.started.iter().any(|t| t == tag)
    })
    .await;
    // Read where it runs first: that instance has applied its progress to the record
    // then (another instance reads what the store has, which may lag behind).
    get(&alice_a, &id).await.unwrap();
    let seen = get(&alice_b, &id).await.unwrap();
    assert_eq!(seen.task.status(), TaskStatus::Working);
    assert_eq!(
        seen.task.task.status_message.as_deref(),
        Some(format!("{tag} started").as_str())
    );
    let refused = get(&bob_b, &id).await.unwrap_err();
    assert_eq!(error_code(&refused), -32602, "{refused}");
    cancel(&alice_b, &id).await.unwrap();
    let task = poll_until_terminal(&alice_b, &id).await;
    assert_eq!(task.status(), TaskStatus::Cancelled, "{task:?}");
    assert!(HANG.borrow().stopped.iter().any(|t| t == tag));
    // The record is the store's: the first instance reads the same end.
    let task = poll_until_terminal(&alice_a, &id).await;
    assert_eq!(task.status(), TaskStatus::Cancelled, "{task:?}");
    for client in [alice_a, alice_b, bob_b] {
        client.cancel().await.unwrap();
    }
    a.shutdown().await;
    b.shutdown().await;
}
