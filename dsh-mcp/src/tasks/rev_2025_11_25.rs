//! Tool calls as tasks of protocol revision 2025-11-25 (the core specification's tasks,
//! which rmcp does not model), on the same jobs as the tasks extension
//! ([`crate::tasks`]).
//!
//! On a session that negotiated 2025-11-25, when the registry has a job runtime, the
//! transport (stdio [`crate::transport::stdio`], HTTP [`crate::transport::http::messages`]) reroutes the requests
//! of this model before rmcp reads them: a `tools/call` with `params.task`, `tools/list`,
//! `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` reach the handler as
//! requests of the methods below, marked with [`CoreRoute`], and are answered in the
//! revision's format:
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
//! ([`TaskAsked`], see [`asks_for_task`]) and the handler answers `-32601`
//! ([`not_served`]) before anything runs: for this client every tool is one whose
//! `taskSupport` is absent, which the revision answers so, and a plain result would be
//! read as a malformed `CreateTaskResult` after the tool had run.

use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::{ClientJsonRpcMessage, ErrorCode};
use serde_json::{Value, json};

use crate::store::Owner;
use crate::tasks::SessionTasks;
use crate::tasks::wire::{task_json, terminal_result};
use crate::wire::raw::Prepared;

/// The protocol revision of this task model.
pub(crate) const VERSION: &str = "2025-11-25";

/// The method a rerouted request of `method` reaches the handler as.
const PREFIX: &str = "dsh-mcp/2025-11-25/";

/// Rerouted `tools/call` with `params.task`.
pub(crate) const CALL: &str = "dsh-mcp/2025-11-25/tools/call";
/// Rerouted `tools/list`.
pub(crate) const LIST_TOOLS: &str = "dsh-mcp/2025-11-25/tools/list";
/// Rerouted `tasks/get`.
pub(crate) const GET: &str = "dsh-mcp/2025-11-25/tasks/get";
/// Rerouted `tasks/result`.
pub(crate) const RESULT: &str = "dsh-mcp/2025-11-25/tasks/result";
/// Rerouted `tasks/list`.
pub(crate) const LIST: &str = "dsh-mcp/2025-11-25/tasks/list";
/// Rerouted `tasks/cancel`.
pub(crate) const CANCEL: &str = "dsh-mcp/2025-11-25/tasks/cancel";

/// Carried to the handler with a rerouted request: only such requests are served under
/// the methods above.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CoreRoute;

/// Reroute a request of the 2025-11-25 task model (see the module docs); `true` when
/// `prepared` was rerouted.
pub(crate) fn reroute(prepared: &mut Prepared) -> bool {
    let ClientJsonRpcMessage::Request(_) = &prepared.message else {
        // Custom requests of another method parse as requests too; notifications and
        // responses are never rerouted.
        return false;
    };
    let Ok(Value::Object(mut message)) = serde_json::from_str::<Value>(&prepared.text) else {
        return false;
    };
    let Some(method) = message.get("method").and_then(Value::as_str) else {
        return false;
    };
    let to = match method {
        "tools/call" => {
            let has_task = message
                .get("params")
                .and_then(Value::as_object)
                .is_some_and(|p| p.contains_key("task"));
            if !has_task {
                return false;
            }
            CALL
        }
        "tools/list" => LIST_TOOLS,
        "tasks/get" => GET,
        "tasks/result" => RESULT,
        "tasks/list" => LIST,
        "tasks/cancel" => CANCEL,
        _ => return false,
    };
    message.insert("method".to_string(), Value::String(to.to_string()));
    let text = Value::Object(message).to_string();
    match serde_json::from_str::<ClientJsonRpcMessage>(&text) {
        Ok(parsed) => {
            prepared.text = text;
            prepared.message = parsed;
            true
        }
        Err(_) => false,
    }
}

/// Carried to the handler with a `tools/call` that asks for a task (`params.task`) and
/// was not rerouted: the 2025-11-25 task model is not served to its client (see the
/// module docs).
#[derive(Clone, Copy, Debug)]
pub(crate) struct TaskAsked;

/// Whether `text` (a `tools/call` request, as rmcp will parse it) has `params.task`.
pub(crate) fn asks_for_task(text: &str) -> bool {
    let Ok(Value::Object(message)) = serde_json::from_str::<Value>(text) else {
        return false;
    };
    message.get("method").and_then(Value::as_str) == Some("tools/call")
        && message
            .get("params")
            .and_then(Value::as_object)
            .is_some_and(|p| p.contains_key("task"))
}

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

/// Whether `method` is one of the rerouted methods.
pub(crate) fn is_core_method(method: &str) -> bool {
    method.starts_with(PREFIX)
}

/// Add `capabilities.tasks` to an `initialize` result (a JSON-RPC response) that
/// negotiated 2025-11-25; `true` when it did.
pub(crate) fn patch_initialize(message: &mut Value) -> bool {
    let Some(result) = message.get_mut("result").and_then(Value::as_object_mut) else {
        return false;
    };
    if result.get("protocolVersion").and_then(Value::as_str) != Some(VERSION) {
        return false;
    }
    let Some(capabilities) = result
        .get_mut("capabilities")
        .and_then(Value::as_object_mut)
    else {
        return false;
    };
    capabilities.insert(
        "tasks".to_string(),
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
    );
    true
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
