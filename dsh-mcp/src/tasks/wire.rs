//! The two wire formats of one task record ([`crate::store::TaskRecord`]): the tasks
//! extension's `Task` (rmcp's [`DetailedTask`]) and protocol revision 2025-11-25's own
//! `Task`. The state machine is the record's; these only render it.

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CustomNotification, DetailedTask, InputRequest, InputRequests, JsonObject, ServerNotification,
    Task, TaskPayload, TaskStatus, TaskStatusNotification, TaskStatusNotificationParams,
};
use serde_json::{Map, Value, json};

use crate::store::{Outcome, TaskModel, TaskRecord, TaskState};
use crate::util::iso8601;

/// The polling interval suggested to clients, in milliseconds.
pub(crate) const POLL_INTERVAL_MS: u64 = 500;

/// The `_meta` key relating a message to its task (2025-11-25).
pub(crate) const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// The wire status of a state.
fn status(state: TaskState) -> TaskStatus {
    match state {
        TaskState::Working => TaskStatus::Working,
        TaskState::InputRequired => TaskStatus::InputRequired,
        TaskState::Completed => TaskStatus::Completed,
        TaskState::Failed => TaskStatus::Failed,
        TaskState::Cancelled => TaskStatus::Cancelled,
    }
}

/// The task as the extension's `tasks/get` answers it.
pub(crate) fn detailed(record: &TaskRecord) -> DetailedTask {
    let mut task = Task::new(
        record.id.as_str(),
        TaskStatus::Working,
        iso8601(record.created_ms),
        iso8601(record.updated_ms),
    )
    .with_poll_interval_ms(POLL_INTERVAL_MS);
    task.ttl_ms = record.ttl_ms;
    task.status_message = record.status_message.clone();
    let payload = match (record.state, &record.outcome) {
        (TaskState::Completed, Some(Outcome::Result(Value::Object(result)))) => {
            TaskPayload::Completed {
                result: result.clone(),
            }
        }
        (TaskState::Completed, _) => TaskPayload::Failed {
            error: internal_error("the call ended without a result"),
        },
        (TaskState::Failed, Some(Outcome::Error(Value::Object(error)))) => TaskPayload::Failed {
            error: error.clone(),
        },
        (TaskState::Failed, _) => TaskPayload::Failed {
            error: internal_error(
                record
                    .status_message
                    .as_deref()
                    .unwrap_or("the task failed"),
            ),
        },
        (TaskState::Cancelled, _) => TaskPayload::Cancelled,
        (TaskState::InputRequired, _) => TaskPayload::InputRequired {
            input_requests: record
                .questions
                .iter()
                .filter_map(|(key, q)| {
                    let request = serde_json::from_value::<InputRequest>(q.request.clone());
                    Some((key.clone(), request.ok()?))
                })
                .collect::<InputRequests>(),
        },
        (TaskState::Working, _) => TaskPayload::Working,
    };
    DetailedTask::new(task, payload)
}

/// A JSON-RPC internal error as an object.
pub(crate) fn internal_error(message: &str) -> JsonObject {
    let error = McpError::internal_error(message.to_string(), None);
    match serde_json::to_value(error) {
        Ok(Value::Object(map)) => map,
        _ => JsonObject::new(),
    }
}

/// The 2025-11-25 `Task` of a record (tasks live as long as their session there:
/// `ttl` is `null`).
pub(crate) fn task_json(record: &TaskRecord) -> Value {
    let mut out = Map::new();
    out.insert("taskId".into(), Value::String(record.id.clone()));
    out.insert("status".into(), status_json(status(record.state)));
    if let Some(message) = &record.status_message {
        out.insert("statusMessage".into(), Value::String(message.clone()));
    }
    out.insert(
        "createdAt".into(),
        Value::String(iso8601(record.created_ms)),
    );
    out.insert(
        "lastUpdatedAt".into(),
        Value::String(iso8601(record.updated_ms)),
    );
    out.insert("ttl".into(), Value::Null);
    out.insert("pollInterval".into(), Value::from(POLL_INTERVAL_MS));
    Value::Object(out)
}

/// The wire name of a status.
pub(crate) fn status_json(status: TaskStatus) -> Value {
    serde_json::to_value(status).unwrap_or(Value::String("working".into()))
}

/// The status notification of a record, in its model's format: `notifications/tasks`
/// (the extension) or `notifications/tasks/status` (2025-11-25).
pub(crate) fn status_notification(record: &TaskRecord) -> ServerNotification {
    match record.model {
        TaskModel::Rev2025_11_25 => ServerNotification::CustomNotification(
            CustomNotification::new("notifications/tasks/status", Some(task_json(record))),
        ),
        _ => ServerNotification::TaskStatusNotification(TaskStatusNotification::new(
            TaskStatusNotificationParams::new(detailed(record)),
        )),
    }
}

/// The result `tasks/result` (2025-11-25) answers for a terminal record: its
/// `CallToolResult` with the related-task `_meta`, or its error.
pub(crate) fn terminal_result(record: &TaskRecord) -> Result<Value, McpError> {
    let id = &record.id;
    match (record.state, &record.outcome) {
        (TaskState::Completed, Some(Outcome::Result(Value::Object(result)))) => {
            let mut result = result.clone();
            let meta = result
                .entry("_meta")
                .or_insert_with(|| Value::Object(JsonObject::new()));
            if !meta.is_object() {
                *meta = Value::Object(JsonObject::new());
            }
            if let Some(meta) = meta.as_object_mut() {
                meta.insert(RELATED_TASK.to_string(), json!({ "taskId": id }));
            }
            Ok(Value::Object(result))
        }
        (TaskState::Cancelled, _) => Err(McpError::internal_error(
            format!(
                "task {id:?} was cancelled: {}",
                record.status_message.as_deref().unwrap_or("cancelled")
            ),
            Some(json!({ "taskId": id, "status": "cancelled" })),
        )),
        (_, Some(Outcome::Error(error))) => {
            let error: Result<McpError, _> = serde_json::from_value(error.clone());
            Err(error
                .unwrap_or_else(|_| McpError::internal_error(format!("task {id:?} failed"), None)))
        }
        _ => Err(McpError::internal_error(
            format!("task {id:?} failed"),
            None,
        )),
    }
}
