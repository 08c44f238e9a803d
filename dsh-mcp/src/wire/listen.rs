//! The `taskIds` of a listen stream on the wire: revision 2026-07-28's
//! `subscriptions/listen` filter, to which the tasks extension adds `taskIds`, lacks them
//! in rmcp's [`SubscriptionFilter`](rmcp::model::SubscriptionFilter). So the transports
//! read them from the request's text before rmcp does ([`read`]), carry them to the
//! handler as [`ListenTasks`] (which follows the tasks, see [`crate::tasks::listen`]) and
//! add them to the acknowledgment rmcp sends ([`patch_acknowledgment`], applied by
//! [`crate::wire::outbound`]).
//!
//! `taskIds` must be an array of strings (invalid params otherwise), and the request's
//! client capabilities must declare the tasks extension (`-32021`, missing required
//! client capability, otherwise), both before the stream opens.

use std::sync::Arc;

use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ErrorCode, ErrorData, RequestId};
use serde_json::Value;

use crate::wire::Refusal;
use crate::wire::raw::Prepared;

/// The acknowledgment's method.
const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";

/// The `taskIds` a `subscriptions/listen` request asked to follow.
#[derive(Clone, Debug)]
pub(crate) struct ListenTasks(pub(crate) Arc<[String]>);

/// The `taskIds` of a `subscriptions/listen` request (`Ok(None)` for any other message,
/// or a filter without them), or the error answering a request that cannot have them.
pub(crate) fn read(prepared: &Prepared) -> Result<Option<ListenTasks>, Refusal> {
    let ClientJsonRpcMessage::Request(request) = &prepared.message else {
        return Ok(None);
    };
    let ClientRequest::SubscriptionsListenRequest(_) = &request.request else {
        return Ok(None);
    };
    let refuse = |error: ErrorData| Refusal::request(error, request.id.clone());
    let Ok(value) = serde_json::from_str::<Value>(&prepared.text) else {
        return Ok(None);
    };
    let Some(ids) = value.pointer("/params/notifications/taskIds") else {
        return Ok(None);
    };
    let ids: Vec<String> = match ids {
        Value::Array(items) => items
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect::<Option<_>>()
            .ok_or_else(|| {
                refuse(ErrorData::invalid_params(
                    "subscriptions/listen: params.notifications.taskIds must be an array of \
                     task id strings",
                    None,
                ))
            })?,
        _ => {
            return Err(refuse(ErrorData::invalid_params(
                "subscriptions/listen: params.notifications.taskIds must be an array of task \
                 id strings",
                None,
            )));
        }
    };
    // Read from the text, as the ids are: the request's own capabilities.
    let declared = value
        .pointer("/params/_meta/io.modelcontextprotocol~1clientCapabilities/extensions")
        .and_then(Value::as_object)
        .is_some_and(|e| e.contains_key(rmcp::model::TASKS_EXTENSION_ID));
    if !declared {
        return Err(refuse(ErrorData::new(
            ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
            format!(
                "subscriptions/listen: taskIds needs the tasks extension: declare \
                 `{}` in the request's client capabilities",
                rmcp::model::TASKS_EXTENSION_ID
            ),
            None,
        )));
    }
    Ok(Some(ListenTasks(ids.into())))
}

/// Add `ids` to the filter of `message` if it is the acknowledgment of the listen request
/// `subscription`; `true` when it was.
pub(crate) fn patch_acknowledgment(
    message: &mut Value,
    subscription: &RequestId,
    ids: &[String],
) -> bool {
    if message.get("method").and_then(Value::as_str) != Some(ACKNOWLEDGED) {
        return false;
    }
    let names = message
        .pointer("/params/_meta/io.modelcontextprotocol~1subscriptionId")
        .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok())
        .is_some_and(|id| &id == subscription);
    if !names {
        return false;
    }
    let Some(Value::Object(filter)) = message.pointer_mut("/params/notifications") else {
        return false;
    };
    filter.insert(
        "taskIds".to_string(),
        Value::Array(ids.iter().cloned().map(Value::String).collect()),
    );
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prepared(text: &str) -> Prepared {
        match crate::wire::raw::prepare(text.as_bytes()) {
            Ok(p) => p,
            Err(_) => panic!("refused: {text}"),
        }
    }

    const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}"#;

    fn error_code(result: Result<Option<ListenTasks>, Refusal>) -> i64 {
        match result {
            Err(refusal) => {
                serde_json::to_value(refusal.into_json_rpc().unwrap()).unwrap()["error"]["code"]
                    .as_i64()
                    .unwrap()
            }
            Ok(t) => panic!("accepted: {t:?}"),
        }
    }

    #[test]
    fn task_ids_are_read_from_the_listen_filter() {
        let text = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{{{META},"notifications":{{"toolsListChanged":true,"taskIds":["a","b"]}}}}}}"#
        );
        let ids = read(&prepared(&text)).ok().flatten().unwrap();
        assert_eq!(&*ids.0, ["a".to_string(), "b".to_string()]);
        let plain = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{{{META},"notifications":{{"toolsListChanged":true}}}}}}"#
        );
        assert!(read(&prepared(&plain)).ok().unwrap().is_none());
        let other = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
        assert!(read(&prepared(other)).ok().unwrap().is_none());
    }

    #[test]
    fn task_ids_need_strings_and_the_declared_extension() {
        let bad = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{{{META},"notifications":{{"taskIds":[1]}}}}}}"#
        );
        assert_eq!(error_code(read(&prepared(&bad))), -32602);
        let undeclared = r#"{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"notifications":{"taskIds":["a"]}}}"#;
        assert_eq!(error_code(read(&prepared(undeclared))), -32021);
    }

    #[test]
    fn only_the_stream_s_own_acknowledgment_is_patched() {
        let ack = |id: Value| serde_json::json!({"jsonrpc":"2.0","method":ACKNOWLEDGED,"params":{"_meta":{"io.modelcontextprotocol/subscriptionId":id},"notifications":{"toolsListChanged":true}}});
        let ids = ["t1".to_string()];
        let mut mine = ack(Value::from(7));
        assert!(patch_acknowledgment(&mut mine, &RequestId::Number(7), &ids));
        assert_eq!(
            mine["params"]["notifications"],
            serde_json::json!({"toolsListChanged":true,"taskIds":["t1"]})
        );
        let mut other = ack(Value::from(8));
        assert!(!patch_acknowledgment(
            &mut other,
            &RequestId::Number(7),
            &ids
        ));
        let mut not_an_ack =
            serde_json::json!({"jsonrpc":"2.0","method":"notifications/tasks","params":{}});
        assert!(!patch_acknowledgment(
            &mut not_an_ack,
            &RequestId::Number(7),
            &ids
        ));
    }
}
