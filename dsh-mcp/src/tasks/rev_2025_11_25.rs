//! Tool calls as tasks of protocol revision 2025-11-25 (the tasks of that revision's own
//! specification, which rmcp does not model), on the same jobs as the tasks extension
//! ([`crate::tasks`]).
//!
//! On a session that negotiated 2025-11-25, when the registry has a job runtime, the
//! transports reroute the requests of this model before rmcp reads them (see
//! [`crate::wire::rev_2025_11_25`]): a `tools/call` with `params.task`, `tools/list`,
//! `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` reach the handler as
//! requests of their own methods, and are answered in the revision's format:
//!
//! - the `initialize` result gets `capabilities.tasks` (`list`, `cancel`,
//!   `requests.tools.call`), and each `tools/list` entry of a task-capable tool
//!   `execution.taskSupport`;
//! - `tools/call` with `params.task` answers `{task}` (a `forbidden` tool: `-32601`);
//!   a `required` tool called without `params.task` is `-32601` too;
//! - `tasks/get` and `tasks/cancel` answer the task; `tasks/result` waits until the task
//!   is terminal and answers the stored `CallToolResult` with the related-task `_meta`
//!   (a failed task: its JSON-RPC error; a cancelled task: an internal error saying so);
//!   `tasks/list` lists the session's tasks in one page;
//! - a task whose call waits for its user's approval (an `elicitation/create` request to
//!   the client, with `_meta["io.modelcontextprotocol/related-task"]` naming the task) is
//!   `input_required` until the answer, then `working` again (see [`crate::approval`]);
//! - `notifications/tasks/status` carries each task's terminal state, and the start and
//!   the answered end of each wait for an approval.
//!
//! Tasks live as long as their session: `ttl` is `null` whatever the client asked for.
//!
//! A client on 2025-11-25 without such a session (an HTTP request without
//! `Mcp-Session-Id`: the server runs without sessions) or on a server without a job
//! runtime is not served this model, and is offered nothing of it: its `initialize`
//! result has no `capabilities.tasks` and its tools no `execution.taskSupport`. A
//! `tools/call` of its with `params.task` is not rerouted; the transport marks it
//! (see [`crate::wire::rev_2025_11_25::asks_for_task`]) and the handler answers `-32601`
//! ([`not_served`]) before anything runs: for this client every tool is one whose
//! `taskSupport` is absent, which the revision answers so, and a plain result would be
//! read as a malformed `CreateTaskResult` after the tool had run.

use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::ErrorCode;
use serde_json::{Value, json};

use crate::store::Owner;
use crate::tasks::SessionTasks;
use crate::tasks::wire::{task_json, terminal_result};

/// Why a task-augmented `tools/call` gets no task here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NotServed {
    /// The request has no session (the HTTP server runs without sessions).
    NoSession,
    /// The server has no job runtime to run tasks.
    NoJobs,
}

/// The error answering a `tools/call` with `params.task` on 2025-11-25 where the
/// revision's tasks are not served (see the module docs): `-32601`, as for a tool whose
/// `execution.taskSupport` is `forbidden`.
pub(crate) fn not_served(tool: &str, why: NotServed) -> McpError {
    let why = match why {
        NotServed::NoSession => {
            "tasks of protocol revision 2025-11-25 live in a session, and this request has \
             none (the server runs without sessions)"
        }
        NotServed::NoJobs => "this server has no job runtime to run tasks",
    };
    method_not_found(format!(
        "tool `{tool}` cannot run as a task here: {why}; the `initialize` result declared \
         no `tasks` capability. Call it without `params.task`"
    ))
}

/// Read `params.task` of a rerouted `tools/call` (a `TaskMetadata`: an object with an
/// optional `ttl`, a non-negative integer of milliseconds).
pub(crate) fn check_task_metadata(params: &Value) -> Result<(), McpError> {
    let Some(task) = params.get("task") else {
        return Ok(());
    };
    let Some(task) = task.as_object() else {
        return Err(McpError::invalid_params(
            format!("params.task: expected an object (TaskMetadata), got {task}"),
            None,
        ));
    };
    match task.get("ttl") {
        None | Some(Value::Null) => Ok(()),
        Some(ttl) if ttl.as_u64().is_some() => Ok(()),
        Some(ttl) => Err(McpError::invalid_params(
            format!("params.task.ttl: expected a non-negative integer of milliseconds, got {ttl}"),
            None,
        )),
    }
}

/// The `taskId` of a `tasks/*` request's params.
pub(crate) fn task_id(params: Option<&Value>) -> Result<String, McpError> {
    match params.and_then(|p| p.get("taskId")) {
        Some(Value::String(id)) => Ok(id.clone()),
        Some(other) => Err(McpError::invalid_params(
            format!("params.taskId: expected a string, got {other}"),
            None,
        )),
        None => Err(McpError::invalid_params("params.taskId: missing", None)),
    }
}

/// The error answering a task-augmented call of a tool whose `taskSupport` is
/// `forbidden`, or a plain call of a tool whose `taskSupport` is `required`.
pub(crate) fn method_not_found(message: String) -> McpError {
    McpError::new(ErrorCode::METHOD_NOT_FOUND, message, None)
}

/// `tasks/get`: the task.
pub(crate) async fn get(tasks: &SessionTasks, owner: &Owner, id: &str) -> Result<Value, McpError> {
    Ok(task_json(&tasks.get(owner, id).await?))
}

/// `tasks/list`: the owner's tasks, in one page.
pub(crate) async fn list(
    tasks: &SessionTasks,
    owner: &Owner,
    params: Option<&Value>,
) -> Result<Value, McpError> {
    if let Some(cursor) = params
        .and_then(|p| p.get("cursor"))
        .filter(|c| !c.is_null())
    {
        return Err(McpError::invalid_params(
            format!(
                "params.cursor: invalid cursor {cursor}: this server lists every task in one page"
            ),
            None,
        ));
    }
    let listed: Vec<Value> = tasks.list(owner).await?.iter().map(task_json).collect();
    Ok(json!({ "tasks": listed }))
}

/// `tasks/cancel`: ask the task's call to stop, wait (a few seconds at most) until it
/// is terminal, and answer the task. A task already terminal is an invalid-params error.
pub(crate) async fn cancel(
    tasks: &SessionTasks,
    owner: &Owner,
    id: &str,
) -> Result<Value, McpError> {
    let record = tasks.get(owner, id).await?;
    if record.state.is_terminal() {
        return Err(McpError::invalid_params(
            format!(
                "Cannot cancel task {id:?}: it is already in terminal status {}",
                task_json(&record)["status"]
            ),
            None,
        ));
    }
    tasks.cancel(owner, id).await?;
    let settled = tasks
        .terminal(owner, id, tokio::time::sleep(Duration::from_secs(5)))
        .await?;
    match settled {
        Some(record) => Ok(task_json(&record)),
        None => Ok(task_json(&tasks.get(owner, id).await?)),
    }
}

/// `tasks/result`: wait until the task is terminal (or `cancelled` fires: the request
/// was cancelled or the session ended), then answer its result.
pub(crate) async fn result(
    tasks: &SessionTasks,
    owner: &Owner,
    id: &str,
    cancelled: tokio_util::sync::CancellationToken,
) -> Result<Value, McpError> {
    match tasks.terminal(owner, id, cancelled.cancelled()).await? {
        Some(record) => terminal_result(&record),
        None => Err(McpError::internal_error(
            format!("tasks/result for task {id:?}: the request ended before the task"),
            None,
        )),
    }
}
