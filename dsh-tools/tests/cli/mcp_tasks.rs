//! `dsh-tools mcp` (the binary) running `bash` calls as MCP tasks for rmcp's client,
//! which declares the tasks extension (`io.modelcontextprotocol/tasks`): over stdio, on
//! protocol 2025-11-25 (`initialize`) and 2026-07-28 (`server/discover`), a task
//! (`sleep`, then `echo`) polled to completion with its result read and the job visible
//! to `job_list`; a task whose command started a process in a session of its own,
//! cancelled with every process gone; over Streamable HTTP, a task polled to completion
//! on both revisions (on 2026-07-28 in the server's stateless context, polled again from
//! another connection), and a cancelled one leaving no process.
//!
//! The official Python client (`mcp` 2.x, as `mcp_python.rs` installs it) is not used
//! here: it has no client API for tasks. Its session has no `tasks/get`, `tasks/update`
//! or `tasks/cancel` call, and `call_tool` answers a `resultType: "task"` result only as
//! an unclaimed extension result (`allow_claimed`). 2025-11-25 clients without the
//! extension get that revision's own tasks (`mcp_typescript_tasks.rs`).

use std::time::Duration;

use rmcp::model::{
    CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig, DetailedTask,
    GetTaskParams, Implementation, ProtocolVersion, TaskPayload, TaskStatus,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};

use super::mcp_host::{call, gone, read_pid, text_of, wait_until};
use super::mcp_http::spawn_server;

/// A client declaring the tasks extension.
#[derive(Clone)]
pub(super) struct TasksClient;

impl ClientHandler for TasksClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_tasks().build(),
            Implementation::new("dsh-tools-tasks-test", "0"),
        )
    }
}

/// Call `bash` with `command`, expecting a task; its id.
pub(super) async fn bash_task(
    client: &RunningService<RoleClient, TasksClient>,
    command: &str,
) -> String {
    let response = client
        .peer()
        .call_tool_once(call(
            "bash",
            json!({"command": command, "description": "a task"}),
        ))
        .await
        .unwrap();
    match response {
        CallToolResponse::Task(created) => created.task.task_id,
        other => panic!("expected a task, got {other:?}"),
    }
}

/// Poll `tasks/get` until the task is terminal (at most 30 s).
pub(super) async fn poll(
    client: &RunningService<RoleClient, TasksClient>,
    id: &str,
) -> DetailedTask {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let got = client
            .peer()
            .get_task(GetTaskParams::new(id))
            .await
            .unwrap();
        if got.task.status().is_terminal() {
            return got.task;
        }
        assert!(tokio::time::Instant::now() < deadline, "task {id} not done");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The text blocks of a completed task's `CallToolResult`.
pub(super) fn result_text(task: &DetailedTask) -> String {
    let TaskPayload::Completed { result } = &task.payload else {
        panic!("expected a completed task, got {task:?}");
    };
    let result: rmcp::model::CallToolResult =
        serde_json::from_value(Value::Object(result.clone())).unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
    text_of(&result)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bash_task_is_polled_to_completion_over_stdio() {
    for mode in [
        ClientLifecycleMode::Initialize,
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    ] {
        let root = tempfile::tempdir().unwrap();
        let (mut child, io) = crate::process::stdio(root.path(), &[]);
        let client = TasksClient
            .serve_with_lifecycle(io, mode.clone())
            .await
            .unwrap();
        let id = bash_task(&client, "sleep 0.5; echo done-after-sleep").await;
        // The session's job tools see the task: it is one of the session's jobs.
        let listed = client.call_tool(call("job_list", json!({}))).await.unwrap();
        let listed = listed.structured_content.unwrap_or_default().to_string();
        assert!(listed.contains(&id), "{mode:?}: {listed}");
        let task = poll(&client, &id).await;
        let text = result_text(&task);
        assert!(text.contains("done-after-sleep"), "{mode:?}: {text}");
        client.cancel().await.unwrap();
        let _ = tokio::time::timeout(Duration::from_secs(20), child.wait()).await;
    }
}

/// 2026-07-28 over Streamable HTTP: every request on its own, in the server's stateless
/// context.
pub(super) fn discover() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    }
}

/// Connect to the HTTP server at `addr` speaking `mode`.
pub(super) async fn connect_http(
    url: &str,
    mode: ClientLifecycleMode,
) -> RunningService<RoleClient, TasksClient> {
    use rmcp::transport::StreamableHttpClientTransport;
    TasksClient
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_uri(url.to_string()),
            mode,
        )
        .await
        .unwrap()
}

/// Start a task whose command starts a process in a session of its own, cancel it, and
/// wait until every process of it is gone.
#[cfg(target_os = "linux")]
async fn cancel_leaves_no_process(
    client: &RunningService<RoleClient, TasksClient>,
    root: &std::path::Path,
) {
    let escaped = root.join("escaped.pid");
    let shell = root.join("shell.pid");
    // One process leaves the shell's session and process group; the shell waits.
    let command = format!(
        "setsid sh -c 'echo $$ > {}; exec sleep 1000' & echo $$ > {}; sleep 1000",
        escaped.display(),
        shell.display()
    );
    let id = bash_task(client, &command).await;
    let escaped = read_pid(&escaped).await;
    let shell = read_pid(&shell).await;
    assert!(!gone(escaped) && !gone(shell));
    let got = client
        .peer()
        .get_task(GetTaskParams::new(&id))
        .await
        .unwrap();
    assert_eq!(got.task.status(), TaskStatus::Working);
    client
        .peer()
        .cancel_task(CancelTaskParams::new(&id))
        .await
        .unwrap();
    let task = poll(client, &id).await;
    assert_eq!(task.status(), TaskStatus::Cancelled, "{task:?}");
    wait_until("every process of the cancelled task is gone", || {
        gone(escaped) && gone(shell)
    })
    .await;
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_bash_task_leaves_no_process() {
    let root = tempfile::tempdir().unwrap();
    let (mut child, io) = crate::process::stdio(root.path(), &[]);
    let client = TasksClient.serve(io).await.unwrap();
    cancel_leaves_no_process(&client, root.path()).await;
    client.cancel().await.unwrap();
    let _ = tokio::time::timeout(Duration::from_secs(20), child.wait()).await;
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_bash_task_leaves_no_process_over_stateless_http() {
    let root = tempfile::tempdir().unwrap();
    let (mut child, url) = crate::process::http(root.path(), &[]).await;
    let client = connect_http(&url, discover()).await;
    cancel_leaves_no_process(&client, root.path()).await;
    client.cancel().await.unwrap();
    child.start_kill().unwrap();
    let _ = child.wait().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bash_task_is_polled_to_completion_over_streamable_http() {
    let (mut child, addr) = spawn_server(&[]);
    let url = format!("http://{addr}/mcp");
    for mode in [ClientLifecycleMode::Initialize, discover()] {
        let stateless = matches!(mode, ClientLifecycleMode::Discover { .. });
        let client = connect_http(&url, mode.clone()).await;
        let id = bash_task(&client, "sleep 0.5; echo done-over-http").await;
        // A session's task is its job; a stateless one has an unguessable id of its own.
        assert_eq!(id.starts_with("task-"), stateless, "{mode:?}: {id}");
        let task = poll(&client, &id).await;
        let text = result_text(&task);
        assert!(text.contains("done-over-http"), "{mode:?}: {text}");
        if stateless {
            // The task outlives the client: another connection polls it.
            client.cancel().await.unwrap();
            let again = connect_http(&url, discover()).await;
            assert!(result_text(&poll(&again, &id).await).contains("done-over-http"));
            again.cancel().await.unwrap();
        } else {
            client.cancel().await.unwrap();
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}
