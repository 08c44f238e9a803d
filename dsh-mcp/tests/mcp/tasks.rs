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
use std::time::Duration;

use dsh_mcp::{HttpOptions, SessionGuard};
use dsh_runtime::jobs::JobStatus;
use dsh_runtime::{Registry, ToolContext, ToolError, tool};
use rmcp::model::{CallToolResponse, CancelTaskParams, GetTaskParams, TaskPayload, TaskStatus};
use rmcp::service::ServiceError;
use serde_json::{Value, json};

use crate::common::cases;
use crate::common::tools::{
    Guarded, Hang, Plain, SlowEcho, Toolset, guarded_ran, hang_stopped, until_hang,
};
use crate::common::user::User;
use crate::common::wire::{Connected, Fixture, Revision, Wire, call, connect_stream, error_of};

/// Fail as a tool (a tool result with `isError: true`).
#[tool(task = "optional")]
async fn fail(message: String) -> Result<String, ToolError> {
    Err(ToolError::with_code("NOPE", message))
}

/// A registry of slow_echo, hang, fail, only_task and plain, with a job runtime.
fn tools() -> Toolset {
    Toolset::with_jobs()
        .with(SlowEcho)
        .with(Hang)
        .with(Fail)
        .with_only_task()
        .with(Plain)
}

/// Whether the server can push notifications to the client after a request ended.
fn pushes(revision: Revision) -> bool {
    revision == Revision::V2025_11_25
}

/// Start `name` and expect a task; its id.
async fn start_task(client: &Connected, name: &str, args: Value) -> String {
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
async fn get(client: &Connected, id: &str) -> Result<rmcp::model::GetTaskResult, ServiceError> {
    client.peer().get_task(GetTaskParams::new(id)).await
}

/// `tasks/cancel` of task `id`.
async fn cancel(client: &Connected, id: &str) -> Result<(), ServiceError> {
    client.peer().cancel_task(CancelTaskParams::new(id)).await
}

/// Start `hang` tagged `tag` as a task and wait until its body runs; the task's id.
async fn start_hang(client: &Connected, tag: &str) -> String {
    let id = start_task(client, "hang", json!({"tag": tag})).await;
    until_hang("the task started", |log| {
        log.started.iter().any(|t| t == tag)
    })
    .await;
    id
}

/// Poll `tasks/get` until the task is terminal (at most 20 s).
async fn poll_until_terminal(client: &Connected, id: &str) -> rmcp::model::DetailedTask {
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

cases! {
    a_task_is_polled_to_completion_and_its_result_read_over_stdio_2026_07_28 =>
        a_task_is_polled_to_completion_and_its_result_read(Wire::Stdio, Revision::V2026_07_28);
    a_task_is_polled_to_completion_and_its_result_read_over_stdio_2025_11_25 =>
        a_task_is_polled_to_completion_and_its_result_read(Wire::Stdio, Revision::V2025_11_25);
    a_task_is_polled_to_completion_and_its_result_read_over_http_2025_11_25 =>
        a_task_is_polled_to_completion_and_its_result_read(Wire::Http, Revision::V2025_11_25);
    a_task_is_polled_to_completion_and_its_result_read_over_http_2026_07_28 =>
        a_task_is_polled_to_completion_and_its_result_read(Wire::Http, Revision::V2026_07_28);
}

async fn a_task_is_polled_to_completion_and_its_result_read(wire: Wire, revision: Revision) {
    let fixture = Fixture::start(tools(), wire).await;
    let mut client = fixture
        .served
        .connect(User::new().tasks(true), revision)
        .await;
    let id = start_task(&client, "slow_echo", json!({"text": "hi", "ms": 200})).await;
    if (wire, revision) == (Wire::Http, Revision::V2026_07_28) {
        // A stateless task's id is random, not its job's.
        assert_eq!(id.len(), 37, "{id}");
        assert!(id.starts_with("task-"), "{id}");
    } else {
        assert_eq!(id, "slow_echo-1", "{wire:?}/{revision:?}");
    }
    let first = id.clone();
    let task = poll_until_terminal(&client, &id).await;
    let TaskPayload::Completed { result } = &task.payload else {
        panic!("{wire:?}/{revision:?}: expected a completed task, got {task:?}");
    };
    assert_eq!(
        result["isError"],
        json!(false),
        "{wire:?}/{revision:?}: {result:?}"
    );
    assert_eq!(
        result["structuredContent"],
        json!({"result": "echo: hi"}),
        "{wire:?}/{revision:?}"
    );
    assert_eq!(
        result["content"][0]["text"],
        json!("echo: hi"),
        "{wire:?}/{revision:?}"
    );
    // The job is the task: the session's owner holds it, with the result's text as
    // its output.
    let job = fixture
        .tools
        .jobs
        .list(None)
        .into_iter()
        .find(|j| j.id == id.as_str());
    assert!(
        job.is_none(),
        "{wire:?}/{revision:?}: the job is owned, not open to all"
    );
    // A tool error stays a tool result of a completed task.
    let id = start_task(&client, "fail", json!({"message": "no way"})).await;
    let task = poll_until_terminal(&client, &id).await;
    let TaskPayload::Completed { result } = &task.payload else {
        panic!("{wire:?}/{revision:?}: expected a completed task, got {task:?}");
    };
    assert_eq!(result["isError"], json!(true), "{wire:?}/{revision:?}");
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("no way"), "{wire:?}/{revision:?}: {text}");
    // Revisions with plain notifications also get the final state pushed.
    if pushes(revision) {
        let pushed = tokio::time::timeout(Duration::from_secs(20), async {
            loop {
                let note = client.heard.statuses.recv().await.expect("notifications");
                if note.task.task.task_id == first {
                    return note;
                }
            }
        })
        .await
        .expect("a notifications/tasks for the first task");
        assert_eq!(
            pushed.task.status(),
            TaskStatus::Completed,
            "{wire:?}/{revision:?}"
        );
    }
    client.close().await;
    fixture.shutdown().await;
}

cases! {
    a_cancelled_task_stops_and_reports_cancelled_over_stdio_2026_07_28 =>
        a_cancelled_task_stops_and_reports_cancelled(Wire::Stdio, Revision::V2026_07_28);
    a_cancelled_task_stops_and_reports_cancelled_over_stdio_2025_11_25 =>
        a_cancelled_task_stops_and_reports_cancelled(Wire::Stdio, Revision::V2025_11_25);
    a_cancelled_task_stops_and_reports_cancelled_over_http_2025_11_25 =>
        a_cancelled_task_stops_and_reports_cancelled(Wire::Http, Revision::V2025_11_25);
    a_cancelled_task_stops_and_reports_cancelled_over_http_2026_07_28 =>
        a_cancelled_task_stops_and_reports_cancelled(Wire::Http, Revision::V2026_07_28);
}

async fn a_cancelled_task_stops_and_reports_cancelled(wire: Wire, revision: Revision) {
    let tag = format!("cancel-{wire:?}/{revision:?}");
    let fixture = Fixture::start(tools(), wire).await;
    let client = fixture
        .served
        .connect(User::new().tasks(true), revision)
        .await;
    let id = start_hang(&client, &tag).await;
    // The request that created it has returned; the task still runs.
    let got = get(&client, &id).await.unwrap();
    assert_eq!(
        got.task.status(),
        TaskStatus::Working,
        "{wire:?}/{revision:?}"
    );
    // Its progress report is its status message.
    assert_eq!(
        got.task.task.status_message.as_deref(),
        Some(format!("{tag} started").as_str()),
        "{wire:?}/{revision:?}"
    );
    cancel(&client, &id).await.unwrap();
    let task = poll_until_terminal(&client, &id).await;
    assert_eq!(
        task.status(),
        TaskStatus::Cancelled,
        "{wire:?}/{revision:?}: {task:?}"
    );
    assert!(hang_stopped(&tag), "{wire:?}/{revision:?}");
    // Cancelling again, once settled, is acknowledged and changes nothing.
    cancel(&client, &id).await.unwrap();
    let task = poll_until_terminal(&client, &id).await;
    assert_eq!(
        task.status(),
        TaskStatus::Cancelled,
        "{wire:?}/{revision:?}"
    );
    client.close().await;
    fixture.shutdown().await;
}

cases! {
    a_task_outlives_its_request_but_not_its_session_over_stdio_2026_07_28 =>
        a_task_outlives_its_request_but_not_its_session(Wire::Stdio, Revision::V2026_07_28);
    a_task_outlives_its_request_but_not_its_session_over_stdio_2025_11_25 =>
        a_task_outlives_its_request_but_not_its_session(Wire::Stdio, Revision::V2025_11_25);
    a_task_outlives_its_request_but_not_its_session_over_http_2025_11_25 =>
        a_task_outlives_its_request_but_not_its_session(Wire::Http, Revision::V2025_11_25);
}

async fn a_task_outlives_its_request_but_not_its_session(wire: Wire, revision: Revision) {
    let tag = format!("close-{wire:?}/{revision:?}");
    let fixture = Fixture::start(tools(), wire).await;
    let client = fixture
        .served
        .connect(User::new().tasks(true), revision)
        .await;
    let id = start_hang(&client, &tag).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!hang_stopped(&tag), "{wire:?}/{revision:?}");
    // Closing the session (stdio EOF, HTTP DELETE) stops the task.
    client.close().await;
    until_hang("the session's close stopped the task", |log| {
        log.stopped.contains(&tag)
    })
    .await;
    assert!(!id.is_empty());
    fixture.shutdown().await;
}

cases! {
    another_session_can_neither_see_nor_cancel_a_task_over_stdio_2026_07_28 =>
        another_session_can_neither_see_nor_cancel_a_task(Wire::Stdio, Revision::V2026_07_28);
    another_session_can_neither_see_nor_cancel_a_task_over_stdio_2025_11_25 =>
        another_session_can_neither_see_nor_cancel_a_task(Wire::Stdio, Revision::V2025_11_25);
    another_session_can_neither_see_nor_cancel_a_task_over_http_2025_11_25 =>
        another_session_can_neither_see_nor_cancel_a_task(Wire::Http, Revision::V2025_11_25);
}

async fn another_session_can_neither_see_nor_cancel_a_task(wire: Wire, revision: Revision) {
    let tag = format!("isolated-{wire:?}/{revision:?}");
    let fixture = Fixture::start(tools(), wire).await;
    let alice = fixture
        .served
        .connect(User::new().tasks(true), revision)
        .await;
    let bob = fixture
        .served
        .connect(User::new().tasks(true), revision)
        .await;
    let id = start_hang(&alice, &tag).await;
    let seen = get(&bob, &id).await.unwrap_err();
    assert_eq!(error_of(&seen).0, -32602, "{wire:?}/{revision:?}: {seen}");
    let cancelled = cancel(&bob, &id).await.unwrap_err();
    assert_eq!(
        error_of(&cancelled).0,
        -32602,
        "{wire:?}/{revision:?}: {cancelled}"
    );
    // Bob's own first task may have the same id: it is a different task.
    let bobs = start_task(&bob, "slow_echo", json!({"text": "bob", "ms": 1})).await;
    let task = poll_until_terminal(&bob, &bobs).await;
    assert_eq!(
        task.status(),
        TaskStatus::Completed,
        "{wire:?}/{revision:?}"
    );
    let still = get(&alice, &id).await.unwrap();
    assert_eq!(
        still.task.status(),
        TaskStatus::Working,
        "{wire:?}/{revision:?}"
    );
    assert!(!hang_stopped(&tag), "{wire:?}/{revision:?}");
    alice.close().await;
    bob.close().await;
    fixture.shutdown().await;
}

cases! {
    tools_without_task_support_and_clients_without_tasks_get_direct_answers_over_stdio_2026_07_28 =>
        tools_without_task_support_and_clients_without_tasks_get_direct_answers(Wire::Stdio, Revision::V2026_07_28);
    tools_without_task_support_and_clients_without_tasks_get_direct_answers_over_stdio_2025_11_25 =>
        tools_without_task_support_and_clients_without_tasks_get_direct_answers(Wire::Stdio, Revision::V2025_11_25);
    tools_without_task_support_and_clients_without_tasks_get_direct_answers_over_http_2025_11_25 =>
        tools_without_task_support_and_clients_without_tasks_get_direct_answers(Wire::Http, Revision::V2025_11_25);
    tools_without_task_support_and_clients_without_tasks_get_direct_answers_over_http_2026_07_28 =>
        tools_without_task_support_and_clients_without_tasks_get_direct_answers(Wire::Http, Revision::V2026_07_28);
}

async fn tools_without_task_support_and_clients_without_tasks_get_direct_answers(
    wire: Wire,
    revision: Revision,
) {
    let fixture = Fixture::start(tools(), wire).await;
    let client = fixture
        .served
        .connect(User::new().tasks(true), revision)
        .await;
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
        other => panic!("{wire:?}/{revision:?}: expected a direct result, got {other:?}"),
    }
    // A task-only tool is a task for this client.
    let id = start_task(&client, "only_task", json!({})).await;
    let task = poll_until_terminal(&client, &id).await;
    assert_eq!(
        task.status(),
        TaskStatus::Completed,
        "{wire:?}/{revision:?}"
    );
    client.close().await;

    // A client without tasks: optional tools run directly, a task-only tool is
    // refused with the missing capability, and tasks/* are refused too.
    let client = fixture
        .served
        .connect(User::new().tasks(false), revision)
        .await;
    let result = client
        .call_tool(call("slow_echo", json!({"text": "direct", "ms": 1})))
        .await
        .unwrap();
    assert_eq!(
        result.structured_content,
        Some(json!({"result": "echo: direct"})),
        "{wire:?}/{revision:?}"
    );
    let before = fixture.tools.task_runs();
    let refused = client
        .peer()
        .call_tool_once(call("only_task", json!({})))
        .await
        .unwrap_err();
    let on_2025 = revision == Revision::V2025_11_25;
    if on_2025 {
        // 2025-11-25 has tasks of its own (`params.task`, see `tasks_2025.rs`): its
        // answer to a task-only tool called without one is `-32601`.
        assert_eq!(
            error_of(&refused).0,
            -32601,
            "{wire:?}/{revision:?}: {refused}"
        );
    } else {
        assert_eq!(
            error_of(&refused).0,
            -32021,
            "{wire:?}/{revision:?}: {refused}"
        );
        let ServiceError::McpError(data) = &refused else {
            unreachable!()
        };
        assert_eq!(
            data.data
                .as_ref()
                .map(|d| d["requiredCapabilities"]["extensions"].clone()),
            Some(json!({"io.modelcontextprotocol/tasks": {}})),
            "{wire:?}/{revision:?}"
        );
    }
    assert_eq!(
        fixture.tools.task_runs(),
        before,
        "{wire:?}/{revision:?}: nothing ran"
    );
    let get = get(&client, &id).await.unwrap_err();
    // On 2025-11-25 `tasks/get` is the revision's own: another session's task is
    // unknown (`-32602`).
    let expected = if on_2025 { -32602 } else { -32021 };
    assert_eq!(error_of(&get).0, expected, "{wire:?}/{revision:?}: {get}");
    client.close().await;
    fixture.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_are_jobs_of_the_owner_the_session_setup_names() {
    let tools = tools();
    let jobs = &tools.jobs;
    let owners: Arc<std::sync::Mutex<Vec<dsh_runtime::jobs::OwnerId>>> = Arc::default();
    let (o, j) = (owners.clone(), jobs.clone());
    let server = tools.server().on_session(move |_scope| {
        let owner = j.owner();
        o.lock().unwrap().push(owner.id());
        SessionGuard::new()
            .job_owner(owner.id())
            .on_close(async move { owner.close().await })
    });
    let client = connect_stream(&server, User::new().tasks(true), Revision::V2025_11_25).await;
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
    client.close().await;
    tools.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_a_job_runtime_offers_no_tasks() {
    let tools = Toolset::new().with(SlowEcho).with_only_task();
    let client = connect_stream(
        &tools.server(),
        User::new().tasks(true),
        Revision::V2025_11_25,
    )
    .await;
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
    assert_eq!(error_of(&refused).0, -32600, "{refused}");
    let get = get(&client, "slow_echo-1").await.unwrap_err();
    assert_eq!(error_of(&get).0, -32601, "{get}");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_2025_11_25_only_methods_are_not_found() {
    let revision = Revision::V2026_07_28;
    // The extension drops `tasks/result` and `tasks/list`: clients calling them get
    // `-32601`, as the extension prescribes.
    let fixture = Fixture::start(tools(), Wire::Stdio).await;
    let client = fixture
        .served
        .connect(User::new().tasks(true), revision)
        .await;
    let id = start_task(&client, "slow_echo", json!({"text": "x", "ms": 1})).await;
    for method in ["tasks/result", "tasks/list"] {
        let request = rmcp::model::ClientRequest::CustomRequest(rmcp::model::CustomRequest::new(
            method,
            Some(json!({"taskId": id})),
        ));
        let refused = client.peer().send_request(request).await.unwrap_err();
        assert_eq!(error_of(&refused).0, -32601, "{method}: {refused}");
    }
    client.close().await;
    fixture.shutdown().await;
}

// ---------------------------------------------------------------------------------------
// Approval inside a task: `input_required`, answered by `tasks/update`.
// ---------------------------------------------------------------------------------------

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
    let mut tools = tools().with(Guarded).with(Step);
    let registry = tools.registry.clone();
    let codes: Codes = Arc::default();
    let seen = codes.clone();
    let steps = Arc::new(Steps {
        registry: std::sync::Mutex::new(Some(registry.clone())),
    });
    for handle in [
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
    ] {
        tools.hold(handle);
    }
    let fixture = Fixture::start(tools, wire).await;
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
async fn poll_until_input(client: &Connected, id: &str) -> Value {
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
async fn update(client: &Connected, id: &str, responses: Value) -> Result<(), ServiceError> {
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

cases! {
    an_ask_inside_a_task_is_input_required_until_tasks_update_answers_over_stdio_2026_07_28 =>
        an_ask_inside_a_task_is_input_required_until_tasks_update_answers(Wire::Stdio, Revision::V2026_07_28);
    an_ask_inside_a_task_is_input_required_until_tasks_update_answers_over_stdio_2025_11_25 =>
        an_ask_inside_a_task_is_input_required_until_tasks_update_answers(Wire::Stdio, Revision::V2025_11_25);
    an_ask_inside_a_task_is_input_required_until_tasks_update_answers_over_http_2025_11_25 =>
        an_ask_inside_a_task_is_input_required_until_tasks_update_answers(Wire::Http, Revision::V2025_11_25);
    an_ask_inside_a_task_is_input_required_until_tasks_update_answers_over_http_2026_07_28 =>
        an_ask_inside_a_task_is_input_required_until_tasks_update_answers(Wire::Http, Revision::V2026_07_28);
}

async fn an_ask_inside_a_task_is_input_required_until_tasks_update_answers(
    wire: Wire,
    revision: Revision,
) {
    let note = format!("approved-{wire:?}/{revision:?}");
    let (fixture, codes, steps) = asking_fixture(wire).await;
    let mut client = fixture
        .served
        .connect(User::new().tasks(true).elicitation(true), revision)
        .await;
    let id = start_task(&client, "guarded", json!({"note": note})).await;
    let requests = poll_until_input(&client, &id).await;
    let keys: Vec<&String> = requests.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["approval-1"], "{wire:?}/{revision:?}: {requests}");
    let asked = &requests["approval-1"];
    assert_eq!(
        asked["method"], "elicitation/create",
        "{wire:?}/{revision:?}: {asked}"
    );
    assert_eq!(
        asked["params"]["mode"], "form",
        "{wire:?}/{revision:?}: {asked}"
    );
    assert_eq!(
        asked["params"]["message"],
        format!(
            "Allow tool \"guarded\" to run?\nCall: guarded {{\"note\":\"{note}\"}}\nReason: it changes things"
        ),
        "{wire:?}/{revision:?}"
    );
    let schema = &asked["params"]["requestedSchema"];
    assert_eq!(
        schema["properties"]["approve"]["type"], "boolean",
        "{schema}"
    );
    assert_eq!(schema["required"], json!(["approve"]), "{schema}");
    assert!(
        !guarded_ran(&note),
        "{wire:?}/{revision:?}: the body waits for the answer"
    );
    if pushes(revision) {
        // Sessions with plain notifications hear of the wait.
        let pushed = tokio::time::timeout(Duration::from_secs(20), async {
            loop {
                let note = client.heard.statuses.recv().await.expect("notifications");
                if note.task.task.task_id == id {
                    return note;
                }
            }
        })
        .await
        .expect("a notifications/tasks for the wait");
        let TaskPayload::InputRequired { input_requests } = &pushed.task.payload else {
            panic!("{wire:?}/{revision:?}: expected input_required, got {pushed:?}");
        };
        assert_eq!(
            serde_json::to_value(input_requests).unwrap(),
            requests,
            "{wire:?}/{revision:?}"
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
    assert_eq!(
        error_of(&refused).0,
        -32602,
        "{wire:?}/{revision:?}: {refused}"
    );
    assert_eq!(
        poll_until_input(&client, &id).await,
        requests,
        "{wire:?}/{revision:?}"
    );
    assert!(!guarded_ran(&note), "{wire:?}/{revision:?}");
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
        "{wire:?}/{revision:?}: {now:?}"
    );
    let task = poll_until_terminal(&client, &id).await;
    assert_eq!(
        completed_text(&task),
        (format!("guarded: {note}"), false),
        "{wire:?}/{revision:?}"
    );
    assert!(guarded_ran(&note), "{wire:?}/{revision:?}");
    assert_eq!(last_code(&codes, "guarded"), None, "{wire:?}/{revision:?}");
    if pushes(revision) {
        // After the wait, plain notifications follow the task: working again, then
        // its terminal state.
        let mut seen = Vec::new();
        tokio::time::timeout(Duration::from_secs(20), async {
            while seen.last() != Some(&TaskStatus::Completed) {
                let note = client.heard.statuses.recv().await.expect("notifications");
                if note.task.task.task_id == id {
                    seen.push(note.task.status());
                }
            }
        })
        .await
        .unwrap_or_else(|_| panic!("{wire:?}/{revision:?}: no terminal notification: {seen:?}"));
        assert_eq!(
            seen,
            [TaskStatus::Working, TaskStatus::Completed],
            "{wire:?}/{revision:?}"
        );
    }
    // Answering again is ignored: the key is no longer outstanding.
    update(&client, &id, json!({"approval-1": approve(false)}))
        .await
        .unwrap();
    let again = poll_until_terminal(&client, &id).await;
    assert!(!completed_text(&again).1, "{wire:?}/{revision:?}");
    client.close().await;
    fixture.shutdown().await;
    // The toolbox holds the registry: let both go.
    steps.registry.lock().unwrap().take();
}

cases! {
    declined_and_cancelled_answers_deny_the_tasks_call_over_stdio_2026_07_28 =>
        declined_and_cancelled_answers_deny_the_tasks_call(Wire::Stdio, Revision::V2026_07_28);
    declined_and_cancelled_answers_deny_the_tasks_call_over_stdio_2025_11_25 =>
        declined_and_cancelled_answers_deny_the_tasks_call(Wire::Stdio, Revision::V2025_11_25);
    declined_and_cancelled_answers_deny_the_tasks_call_over_http_2025_11_25 =>
        declined_and_cancelled_answers_deny_the_tasks_call(Wire::Http, Revision::V2025_11_25);
    declined_and_cancelled_answers_deny_the_tasks_call_over_http_2026_07_28 =>
        declined_and_cancelled_answers_deny_the_tasks_call(Wire::Http, Revision::V2026_07_28);
}

async fn declined_and_cancelled_answers_deny_the_tasks_call(wire: Wire, revision: Revision) {
    let (fixture, codes, steps) = asking_fixture(wire).await;
    let client = fixture
        .served
        .connect(User::new().tasks(true).elicitation(true), revision)
        .await;
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
        let note = format!("{what}-{wire:?}/{revision:?}");
        let id = start_task(&client, "guarded", json!({"note": note})).await;
        poll_until_input(&client, &id).await;
        update(&client, &id, json!({ "approval-1": answer }))
            .await
            .unwrap();
        let task = poll_until_terminal(&client, &id).await;
        assert_eq!(
            completed_text(&task),
            (text.to_string(), true),
            "{wire:?}/{revision:?}/{what}"
        );
        assert_eq!(
            last_code(&codes, "guarded").as_deref(),
            Some(code),
            "{wire:?}/{revision:?}/{what}"
        );
        assert!(
            !guarded_ran(&note),
            "{wire:?}/{revision:?}/{what}: the body did not run"
        );
    }
    client.close().await;
    fixture.shutdown().await;
    // The toolbox holds the registry: let both go.
    steps.registry.lock().unwrap().take();
}

cases! {
    tasks_cancel_while_waiting_cancels_the_task_before_its_body_over_stdio_2026_07_28 =>
        tasks_cancel_while_waiting_cancels_the_task_before_its_body(Wire::Stdio, Revision::V2026_07_28);
    tasks_cancel_while_waiting_cancels_the_task_before_its_body_over_stdio_2025_11_25 =>
        tasks_cancel_while_waiting_cancels_the_task_before_its_body(Wire::Stdio, Revision::V2025_11_25);
    tasks_cancel_while_waiting_cancels_the_task_before_its_body_over_http_2025_11_25 =>
        tasks_cancel_while_waiting_cancels_the_task_before_its_body(Wire::Http, Revision::V2025_11_25);
    tasks_cancel_while_waiting_cancels_the_task_before_its_body_over_http_2026_07_28 =>
        tasks_cancel_while_waiting_cancels_the_task_before_its_body(Wire::Http, Revision::V2026_07_28);
}

async fn tasks_cancel_while_waiting_cancels_the_task_before_its_body(
    wire: Wire,
    revision: Revision,
) {
    let note = format!("withdrawn-{wire:?}/{revision:?}");
    let (fixture, codes, steps) = asking_fixture(wire).await;
    let client = fixture
        .served
        .connect(User::new().tasks(true).elicitation(true), revision)
        .await;
    let id = start_task(&client, "guarded", json!({"note": note})).await;
    poll_until_input(&client, &id).await;
    cancel(&client, &id).await.unwrap();
    let task = poll_until_terminal(&client, &id).await;
    assert_eq!(
        task.status(),
        TaskStatus::Cancelled,
        "{wire:?}/{revision:?}: {task:?}"
    );
    // The approval was cancelled with the call itself: the registry's code for a
    // call its caller aborted before its body.
    assert_eq!(
        last_code(&codes, "guarded").as_deref(),
        Some("ABORTED_BEFORE_DISPATCH"),
        "{wire:?}/{revision:?}"
    );
    // The question is gone: a late answer is ignored and runs nothing.
    update(&client, &id, json!({"approval-1": approve(true)}))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        !guarded_ran(&note),
        "{wire:?}/{revision:?}: the body never ran"
    );
    assert_eq!(
        poll_until_terminal(&client, &id).await.status(),
        TaskStatus::Cancelled,
        "{wire:?}/{revision:?}"
    );
    client.close().await;
    fixture.shutdown().await;
    // The toolbox holds the registry: let both go.
    steps.registry.lock().unwrap().take();
}

cases! {
    another_session_cannot_answer_a_tasks_question_over_stdio_2026_07_28 =>
        another_session_cannot_answer_a_tasks_question(Wire::Stdio, Revision::V2026_07_28);
    another_session_cannot_answer_a_tasks_question_over_stdio_2025_11_25 =>
        another_session_cannot_answer_a_tasks_question(Wire::Stdio, Revision::V2025_11_25);
    another_session_cannot_answer_a_tasks_question_over_http_2025_11_25 =>
        another_session_cannot_answer_a_tasks_question(Wire::Http, Revision::V2025_11_25);
}

async fn another_session_cannot_answer_a_tasks_question(wire: Wire, revision: Revision) {
    let note = format!("alice-{wire:?}/{revision:?}");
    let (fixture, _codes, steps) = asking_fixture(wire).await;
    let alice = fixture
        .served
        .connect(User::new().tasks(true).elicitation(true), revision)
        .await;
    let bob = fixture
        .served
        .connect(User::new().tasks(true).elicitation(true), revision)
        .await;
    let id = start_task(&alice, "guarded", json!({"note": note})).await;
    let requests = poll_until_input(&alice, &id).await;
    // Another session's task is unknown here: invalid params, as for tasks/get.
    let refused = update(&bob, &id, json!({"approval-1": approve(true)}))
        .await
        .unwrap_err();
    assert_eq!(
        error_of(&refused).0,
        -32602,
        "{wire:?}/{revision:?}: {refused}"
    );
    let unknown = update(&alice, "no-such-task", json!({"approval-1": approve(true)}))
        .await
        .unwrap_err();
    assert_eq!(
        error_of(&unknown).0,
        -32602,
        "{wire:?}/{revision:?}: {unknown}"
    );
    assert_eq!(
        poll_until_input(&alice, &id).await,
        requests,
        "{wire:?}/{revision:?}"
    );
    assert!(!guarded_ran(&note), "{wire:?}/{revision:?}");
    alice.close().await;
    bob.close().await;
    fixture.shutdown().await;
    // The toolbox holds the registry: let both go.
    steps.registry.lock().unwrap().take();
}

cases! {
    a_task_of_a_client_without_elicitation_gets_the_cannot_ask_denial_over_stdio_2026_07_28 =>
        a_task_of_a_client_without_elicitation_gets_the_cannot_ask_denial(Wire::Stdio, Revision::V2026_07_28);
    a_task_of_a_client_without_elicitation_gets_the_cannot_ask_denial_over_stdio_2025_11_25 =>
        a_task_of_a_client_without_elicitation_gets_the_cannot_ask_denial(Wire::Stdio, Revision::V2025_11_25);
    a_task_of_a_client_without_elicitation_gets_the_cannot_ask_denial_over_http_2025_11_25 =>
        a_task_of_a_client_without_elicitation_gets_the_cannot_ask_denial(Wire::Http, Revision::V2025_11_25);
    a_task_of_a_client_without_elicitation_gets_the_cannot_ask_denial_over_http_2026_07_28 =>
        a_task_of_a_client_without_elicitation_gets_the_cannot_ask_denial(Wire::Http, Revision::V2026_07_28);
}

async fn a_task_of_a_client_without_elicitation_gets_the_cannot_ask_denial(
    wire: Wire,
    revision: Revision,
) {
    let note = format!("unasked-{wire:?}/{revision:?}");
    let (fixture, codes, steps) = asking_fixture(wire).await;
    let client = fixture
        .served
        .connect(User::new().tasks(true).elicitation(false), revision)
        .await;
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
        "{wire:?}/{revision:?}"
    );
    assert_eq!(
        last_code(&codes, "guarded").as_deref(),
        Some("POLICY_DENIED"),
        "{wire:?}/{revision:?}"
    );
    assert!(!guarded_ran(&note), "{wire:?}/{revision:?}");
    client.close().await;
    fixture.shutdown().await;
    // The toolbox holds the registry: let both go.
    steps.registry.lock().unwrap().take();
}

cases! {
    a_task_that_asks_twice_gets_two_distinct_keys_over_stdio_2026_07_28 =>
        a_task_that_asks_twice_gets_two_distinct_keys(Wire::Stdio, Revision::V2026_07_28);
    a_task_that_asks_twice_gets_two_distinct_keys_over_stdio_2025_11_25 =>
        a_task_that_asks_twice_gets_two_distinct_keys(Wire::Stdio, Revision::V2025_11_25);
    a_task_that_asks_twice_gets_two_distinct_keys_over_http_2025_11_25 =>
        a_task_that_asks_twice_gets_two_distinct_keys(Wire::Http, Revision::V2025_11_25);
    a_task_that_asks_twice_gets_two_distinct_keys_over_http_2026_07_28 =>
        a_task_that_asks_twice_gets_two_distinct_keys(Wire::Http, Revision::V2026_07_28);
}

async fn a_task_that_asks_twice_gets_two_distinct_keys(wire: Wire, revision: Revision) {
    let tag = format!("twice-{wire:?}/{revision:?}");
    let (fixture, _codes, steps) = asking_fixture(wire).await;
    let client = fixture
        .served
        .connect(User::new().tasks(true).elicitation(true), revision)
        .await;
    let id = start_task(&client, "two_steps", json!({"tag": tag})).await;
    let first = poll_until_input(&client, &id).await;
    let keys: Vec<&String> = first.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["approval-1"], "{wire:?}/{revision:?}: {first}");
    let message = first["approval-1"]["params"]["message"].as_str().unwrap();
    assert!(
        message.contains("\"n\":1"),
        "{wire:?}/{revision:?}: {message}"
    );
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
    assert_eq!(keys, ["approval-2"], "{wire:?}/{revision:?}: {second}");
    let message = second["approval-2"]["params"]["message"].as_str().unwrap();
    assert!(
        message.contains("\"n\":2"),
        "{wire:?}/{revision:?}: {message}"
    );
    // An answer under the first key again does nothing.
    update(&client, &id, json!({"approval-1": approve(false)}))
        .await
        .unwrap();
    assert_eq!(
        poll_until_input(&client, &id).await,
        second,
        "{wire:?}/{revision:?}"
    );
    update(&client, &id, json!({"approval-2": approve(true)}))
        .await
        .unwrap();
    let task = poll_until_terminal(&client, &id).await;
    assert_eq!(
        completed_text(&task),
        (format!("step 1 of {tag}, step 2 of {tag}"), false),
        "{wire:?}/{revision:?}"
    );
    client.close().await;
    fixture.shutdown().await;
    // The toolbox holds the registry: let both go.
    steps.registry.lock().unwrap().take();
}

/// A fixture serving protocol 2026-07-28 over HTTP statelessly, with these task limits.
async fn stateless_fixture(limits: dsh_mcp::StatelessTaskLimits) -> Fixture {
    let tools = tools();
    let server = tools.server().with_stateless_tasks(limits);
    Fixture::serving(tools, &server, Wire::Http, HttpOptions::default()).await
}

/// Start `name` and expect a task; the task as created.
async fn create_task(client: &Connected, name: &str, args: Value) -> rmcp::model::Task {
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
    let revision = Revision::V2026_07_28;
    let tag = "stateless-bound";
    let fixture = stateless_fixture(dsh_mcp::StatelessTaskLimits::default()).await;
    let alice = fixture
        .served
        .connect_as(User::new().tasks(true), revision, Some("alice"))
        .await;
    let id = start_task(&alice, "hang", json!({"tag": tag})).await;
    until_hang("the task started", |log| {
        log.started.iter().any(|t| t == tag)
    })
    .await;
    // The job behind it is not the task's name.
    let job = fixture
        .served
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
        error_of(&refused).0,
        -32602,
        "a job id is no task id: {refused}"
    );
    // The client goes away; its task does not (nothing ties it to a connection).
    alice.close().await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!hang_stopped(tag));
    // Other credentials, or none, do not see it and cannot cancel it.
    for token in [Some("bob"), None] {
        let other = fixture
            .served
            .connect_as(User::new().tasks(true), revision, token)
            .await;
        let seen = get(&other, &id).await.unwrap_err();
        assert_eq!(error_of(&seen).0, -32602, "{token:?}: {seen}");
        let cancelled = cancel(&other, &id).await.unwrap_err();
        assert_eq!(error_of(&cancelled).0, -32602, "{token:?}: {cancelled}");
        let updated = other
            .peer()
            .update_task(rmcp::model::UpdateTaskParams::new(&id, Default::default()))
            .await
            .unwrap_err();
        assert_eq!(error_of(&updated).0, -32602, "{token:?}: {updated}");
        other.close().await;
    }
    assert!(!hang_stopped(tag));
    // The same credentials on a new connection do.
    let again = fixture
        .served
        .connect_as(User::new().tasks(true), revision, Some("alice"))
        .await;
    let got = get(&again, &id).await.unwrap();
    assert_eq!(got.task.status(), TaskStatus::Working);
    assert_eq!(got.task.task.task_id, id);
    assert_eq!(got.task.task.ttl_ms, Some(3_600_000));
    cancel(&again, &id).await.unwrap();
    let task = poll_until_terminal(&again, &id).await;
    assert_eq!(task.status(), TaskStatus::Cancelled, "{task:?}");
    assert!(hang_stopped(tag));
    again.close().await;
    fixture.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_task_is_stopped_and_forgotten_when_its_ttl_passes() {
    let revision = Revision::V2026_07_28;
    let tag = "stateless-expired";
    let limits = dsh_mcp::StatelessTaskLimits::default().ttl(Duration::from_millis(400));
    let fixture = stateless_fixture(limits).await;
    let client = fixture
        .served
        .connect(User::new().tasks(true), revision)
        .await;
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
                assert_eq!(error_of(&e).0, -32602, "{e}");
                break;
            }
            Ok(got) => assert!(
                tokio::time::Instant::now() < deadline,
                "still known: {got:?}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    client.close().await;
    fixture.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn beyond_the_stateless_task_cap_calls_are_direct_or_refused() {
    let revision = Revision::V2026_07_28;
    let tag = "stateless-cap";
    let limits = dsh_mcp::StatelessTaskLimits::default().max_tasks(1);
    let fixture = stateless_fixture(limits).await;
    let client = fixture
        .served
        .connect(User::new().tasks(true), revision)
        .await;
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
    let before = fixture.tools.task_runs();
    let refused = client
        .peer()
        .call_tool_once(call("only_task", json!({})))
        .await
        .unwrap_err();
    assert_eq!(error_of(&refused).0, -32600, "{refused}");
    assert!(refused.to_string().contains("as many tasks"), "{refused}");
    assert_eq!(fixture.tools.task_runs(), before);
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
    client.close().await;
    fixture.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_http_servers_shutdown_stops_its_stateless_tasks() {
    let revision = Revision::V2026_07_28;
    let tag = "stateless-shutdown";
    let fixture = stateless_fixture(dsh_mcp::StatelessTaskLimits::default()).await;
    let client = fixture
        .served
        .connect(User::new().tasks(true), revision)
        .await;
    start_task(&client, "hang", json!({"tag": tag})).await;
    until_hang("the task started", |log| {
        log.started.iter().any(|t| t == tag)
    })
    .await;
    client.close().await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!hang_stopped(tag));
    let Fixture { served, tools, .. } = fixture;
    served.shutdown().await;
    // Shutting down waited for the context's close: the task has stopped by now.
    assert!(hang_stopped(tag));
    tools.shutdown().await;
}

/// Two server instances sharing one store and one keyring, as behind a load balancer:
/// a stateless task started on one is read and cancelled through the other (the
/// cancellation reaching the call where it runs), and stays invisible to other
/// credentials on both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_sharing_a_store_and_keys_serve_each_others_tasks() {
    let revision = Revision::V2026_07_28;
    let tag = "two-instances";
    let store: Arc<dyn dsh_mcp::store::Store> = Arc::new(dsh_mcp::store::MemoryStore::new());
    let keys = dsh_mcp::StateKeys::new([vec![7u8; dsh_mcp::MIN_KEY_BYTES]]).unwrap();
    let instance = |store: Arc<dyn dsh_mcp::store::Store>, keys: dsh_mcp::StateKeys| async move {
        let tools = tools();
        let server = tools.server().with_store(store).with_state_keys(keys);
        Fixture::serving(tools, &server, Wire::Http, HttpOptions::default()).await
    };
    let a = instance(store.clone(), keys.clone()).await;
    let b = instance(store.clone(), keys).await;
    let alice_a = a
        .served
        .connect_as(User::new().tasks(true), revision, Some("alice"))
        .await;
    let alice_b = b
        .served
        .connect_as(User::new().tasks(true), revision, Some("alice"))
        .await;
    let bob_b = b
        .served
        .connect_as(User::new().tasks(true), revision, Some("bob"))
        .await;
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
    assert_eq!(error_of(&refused).0, -32602, "{refused}");
    cancel(&alice_b, &id).await.unwrap();
    let task = poll_until_terminal(&alice_b, &id).await;
    assert_eq!(task.status(), TaskStatus::Cancelled, "{task:?}");
    assert!(hang_stopped(tag));
    // The record is the store's: the first instance reads the same end.
    let task = poll_until_terminal(&alice_a, &id).await;
    assert_eq!(task.status(), TaskStatus::Cancelled, "{task:?}");
    for client in [alice_a, alice_b, bob_b] {
        client.close().await;
    }
    a.shutdown().await;
    b.shutdown().await;
}

// ---------------------------------------------------------------------------------------
// What a task's body asks of its caller: through the task too.
// ---------------------------------------------------------------------------------------

/// Ask the user's name inside a task, then the client's model (which the test client
/// does not offer).
#[tool(task = "optional")]
async fn ask_name(cx: ToolContext) -> Result<String, ToolError> {
    let schema = dsh_runtime::json::parse(
        r#"{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}"#,
    )
    .map_err(|e| ToolError::new(e.to_string()))?;
    let name = match cx
        .elicit_form(dsh_runtime::caller::FormRequest::new("Your name?", schema))
        .await?
    {
        dsh_runtime::caller::FormAnswer::Accepted(content) => content
            .get("name")
            .and_then(dsh_runtime::json::Value::as_str)
            .unwrap_or_default()
            .to_string(),
        other => return Ok(format!("no name: {other:?}")),
    };
    let model = cx
        .sample(dsh_runtime::caller::SampleRequest::new("hi", 5))
        .await
        .map_or_else(|e| e.code().to_string(), |m| m.text().to_string());
    Ok(format!("hello {name} ({model})"))
}

cases! {
    a_tasks_body_asks_through_the_task_over_stdio =>
        a_tasks_body_asks_through_the_task(Wire::Stdio);
    a_tasks_body_asks_through_the_task_over_http =>
        a_tasks_body_asks_through_the_task(Wire::Http);
}

async fn a_tasks_body_asks_through_the_task(wire: Wire) {
    let fixture = Fixture::start(Toolset::with_jobs().with(AskName), wire).await;
    let client = fixture
        .served
        .connect(
            User::new().tasks(true).elicitation(true),
            Revision::V2026_07_28,
        )
        .await;
    let id = start_task(&client, "ask_name", json!({})).await;
    let requests = poll_until_input(&client, &id).await;
    let (key, asked) = requests
        .as_object()
        .and_then(|r| r.iter().next())
        .expect("one input request");
    assert_eq!(asked["method"], "elicitation/create", "{requests}");
    assert_eq!(asked["params"]["message"], "Your name?", "{requests}");
    assert_eq!(
        asked["params"]["requestedSchema"]["properties"]["name"]["type"],
        "string"
    );
    // A response that is no elicitation result is refused; the question stays.
    let refused = update(&client, &id, json!({ key.clone(): {"roots": []} }))
        .await
        .unwrap_err();
    assert_eq!(error_of(&refused).0, -32602, "{refused}");
    update(
        &client,
        &id,
        json!({ key.clone(): {"action": "accept", "content": {"name": "Ada"}} }),
    )
    .await
    .unwrap();
    let task = poll_until_terminal(&client, &id).await;
    // The client declared no sampling: the body's second question failed alone.
    assert_eq!(
        completed_text(&task),
        ("hello Ada (CALLER_CAPABILITY_MISSING)".to_string(), false)
    );
    fixture.shutdown().await;
}
