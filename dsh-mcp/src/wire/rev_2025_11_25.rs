//! Requests of protocol revision 2025-11-25's task model on the wire (the model itself is
//! [`crate::tasks::rev_2025_11_25`]'s).
//!
//! rmcp does not model that revision's tasks, so on a session that negotiated 2025-11-25
//! (when the registry has a job runtime) the transports reroute its requests before rmcp
//! reads them ([`reroute`]): a `tools/call` with `params.task`, `tools/list`, `tasks/get`,
//! `tasks/result`, `tasks/list` and `tasks/cancel` reach the handler as requests of the
//! methods below, marked with [`Rev2025_11_25Route`]. The answer to `initialize` gets the
//! revision's `capabilities.tasks` ([`patch_initialize`], applied by
//! [`crate::wire::outbound`]).
//!
//! A `tools/call` with `params.task` that is not rerouted (the client is not served the
//! model) is marked [`TaskAsked`] (see [`asks_for_task`]): the handler refuses it.

use rmcp::model::ClientJsonRpcMessage;
use serde_json::{Value, json};

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
pub(crate) struct Rev2025_11_25Route;

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

/// Whether `method` is one of the rerouted methods.
pub(crate) fn is_rev_2025_11_25_method(method: &str) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// What `prepare` reads of a call's `task` member is what a parse of the whole text
    /// finds, for the calls whose params it reads, escaped keys included.
    #[test]
    fn the_task_member_read_from_the_params_agrees_with_a_parse_of_the_text() {
        let calls = [
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{},"task":{"ttl":5}}}"#,
                Some(true),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","task":{}}}"#,
                Some(true),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","\u0074ask":{},"arguments":{"task":1}}}"#,
                Some(true),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"task":{}}}}"#,
                Some(false),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"task":{}}}}"#,
                Some(false),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"t","task":{}}}"#,
                None,
            ),
        ];
        for (text, told) in calls {
            let Ok(prepared) = crate::wire::raw::prepare(text.as_bytes()) else {
                panic!("refused: {text}");
            };
            assert_eq!(prepared.task, told, "{text}");
            let parsed = asks_for_task(&prepared.text);
            if let Some(told) = told {
                assert_eq!(told, parsed, "{text}");
            }
        }
    }
}
