//! `dsh-tools mcp` running `bash` calls as tasks of protocol 2025-11-25 for the official
//! MCP TypeScript SDK client (`@modelcontextprotocol/sdk` 1.x, installed as
//! `mcp_typescript.rs` does), over stdio and Streamable HTTP.
//!
//! `tests/node/mcp_tasks_2025.mjs` uses the SDK's own task API
//! (`client.experimental.tasks`): a `bash` task (`sleep 1; echo done`) created with
//! `callToolStream` and a task param, polled by the SDK to completion and read back with
//! `getTask`, `getTaskResult` and `listTasks`; a `bash` task whose command started a
//! process in a session of its own, cancelled with `cancelTask`, every process it
//! started gone from `/proc` before the client disconnects. The SDK checks each answer
//! against its result schemas (`CreateTaskResult`, `GetTaskResult`, `CancelTaskResult`,
//! `ListTasksResult`, `CallToolResult`).
//!
//! `tests/node/mcp_stateless_2025.mjs` runs the same client against `dsh-tools mcp --http
//! --stateless`: without a session it is offered no tasks (no `tasks` capability, no
//! `execution.taskSupport`), its plain calls (`callTool`, `callToolStream`) work, and a
//! `callToolStream` asking for a task anyway ends with `-32601` and no task, the command
//! not run.

use super::mcp_typescript::{run_script, sdk_dir};

fn run_tasks(transport: &str) {
    let root = tempfile::tempdir().unwrap();
    run_script(sdk_dir(), "mcp_tasks_2025.mjs", root.path(), transport, 14);
}

#[cfg(target_os = "linux")]
#[test]
fn typescript_client_runs_and_cancels_bash_tasks_over_stdio() {
    run_tasks("stdio");
}

#[cfg(target_os = "linux")]
#[test]
fn typescript_client_runs_and_cancels_bash_tasks_over_http() {
    run_tasks("http");
}

#[cfg(target_os = "linux")]
#[test]
fn typescript_client_gets_no_tasks_from_a_stateless_server() {
    let root = tempfile::tempdir().unwrap();
    run_script(sdk_dir(), "mcp_stateless_2025.mjs", root.path(), "http", 14);
}
