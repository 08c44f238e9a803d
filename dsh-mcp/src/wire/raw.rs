//! The text of each incoming message, before rmcp parses it: the arguments of a
//! `tools/call` are taken out as the exact text the client sent and carried to the
//! handler, so they reach the registry's lossless parser instead of `serde_json`.
//!
//! A message is read as an object of raw values (`serde_json`'s `RawValue`, which checks
//! the syntax and keeps each value's text, numbers unconverted). For a `tools/call`
//! request, `params.arguments` is taken as [`RawArguments`] and replaced by `{}` in the
//! text rmcp parses. The message and its `params` must not repeat a key (a JSON-RPC
//! invalid request otherwise), so what rmcp reads and what the handler runs agree.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequest, ClientJsonRpcMessage, ClientRequest, ErrorData, JsonRpcRequest, RequestId,
};
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::Refusal;

/// The `arguments` of a `tools/call` request as the client sent them (the text of the
/// JSON value, exactly as it appeared in the message).
#[derive(Clone, Debug)]
pub(crate) struct RawArguments(pub(crate) Arc<str>);

/// An incoming message ready for rmcp: the text to parse (the arguments of a
/// `tools/call` replaced by `{}`), the parsed message, and the arguments taken out.
pub(crate) struct Prepared {
    /// The message text rmcp parses.
    pub(crate) text: String,
    /// That text, parsed.
    pub(crate) message: ClientJsonRpcMessage,
    /// The arguments of a `tools/call`, when it had any.
    pub(crate) arguments: Option<RawArguments>,
    /// Whether a `tools/call`'s params have a `task` member, when the members were read
    /// here (`None`: not read; the 2025-11-25 module's `asks_for_task` reads the text).
    pub(crate) task: Option<bool>,
}

/// The members of a JSON object, in order, each value as its raw text.
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'de> serde::Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut members = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    let value: &'de RawValue = map.next_value()?;
                    members.push((key, value));
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(V)
    }
}

impl<'a> Members<'a> {
    fn get(&self, key: &str) -> Option<&'a RawValue> {
        self.0.iter().find(|(k, _)| k == key).map(|&(_, v)| v)
    }

    fn duplicate(&self) -> Option<&str> {
        let mut seen = std::collections::HashSet::with_capacity(self.0.len());
        self.0
            .iter()
            .find(|(k, _)| !seen.insert(k.as_str()))
            .map(|(k, _)| k.as_str())
    }

    /// The object's text with the value of `key` replaced by `with`.
    fn replaced(&self, key: &str, with: &str) -> String {
        let mut out = String::with_capacity(
            self.0
                .iter()
                .map(|(k, v)| k.len() + v.get().len() + 4)
                .sum::<usize>()
                + 2,
        );
        out.push('{');
        for (i, (k, v)) in self.0.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            // A `String` always serializes.
            out.push_str(&serde_json::to_string(k).unwrap_or_default());
            out.push(':');
            out.push_str(if k == key { with } else { v.get() });
        }
        out.push('}');
        out
    }
}

/// The request id of a message, when it has a readable one.
fn request_id(members: &Members<'_>) -> Option<RequestId> {
    serde_json::from_str(members.get("id")?.get()).ok()
}

/// Read one incoming message (see the module docs).
pub(crate) fn prepare(bytes: &[u8]) -> Result<Prepared, Refusal> {
    const BOM: &[u8] = b"\xEF\xBB\xBF";
    let bytes = bytes.strip_prefix(BOM).unwrap_or(bytes);
    let text = std::str::from_utf8(bytes).map_err(|e| {
        Refusal::unreadable(
            ErrorData::parse_error(format!("the message is not UTF-8: {e}"), None),
            None,
        )
    })?;
    let members = match serde_json::from_str::<Members<'_>>(text) {
        Ok(members) => members,
        Err(e) => {
            if let Err(e) = serde_json::from_str::<&RawValue>(text).map_err(|_| e) {
                return Err(Refusal::unreadable(
                    ErrorData::parse_error(format!("the message is not JSON: {e}"), None),
                    None,
                ));
            }
            // Valid JSON that is not an object (a batch, a scalar): not a message.
            return parsed(text.to_string(), None, None, true, false);
        }
    };
    let id = request_id(&members);
    let is_request = members.get("method").is_some() && members.get("id").is_some();
    if let Some(key) = members.duplicate() {
        let message = format!("the message has a duplicate key {key:?}");
        return Err(refuse(is_request, message, id));
    }
    let is_call = members
        .get("method")
        .is_some_and(|m| m.get() == "\"tools/call\"");
    let params = members.get("params");
    let (Some(params), true) = (params, is_call) else {
        return parsed(text.to_string(), None, id, is_request, is_call);
    };
    let params_members = match serde_json::from_str::<Members<'_>>(params.get()) {
        Ok(m) => m,
        // Not an object: rmcp's parse answers it.
        Err(_) => return parsed(text.to_string(), None, id, is_request, is_call),
    };
    if let Some(key) = params_members.duplicate() {
        let message = format!("the tools/call params have a duplicate key {key:?}");
        return Err(refuse(is_request, message, id));
    }
    let task = Some(params_members.get("task").is_some());
    let Some(arguments) = params_members.get("arguments") else {
        return parsed(text.to_string(), None, id, is_request, is_call).map(|p| p.told(task));
    };
    let raw = RawArguments(Arc::from(arguments.get()));
    let params_text = params_members.replaced("arguments", "{}");
    let text = members.replaced("params", &params_text);
    parsed(text, Some(raw), id, is_request, is_call).map(|p| p.told(task))
}

impl Prepared {
    /// Whether the params have a `task` member, as read here.
    fn told(self, task: Option<bool>) -> Prepared {
        Prepared { task, ..self }
    }
}

/// `text` as rmcp's message type. rmcp's parse tries the request types one after the
/// other (an untagged enum of 22, `tools/call` the 14th), each failed try building an
/// error; a `tools/call`, the message that matters for speed, is parsed straight into
/// its type first, which gives the same message. Any other message, or a call that does
/// not parse that way, gets rmcp's parse, so errors read as rmcp's.
fn client_message(text: &str, call: bool) -> Result<ClientJsonRpcMessage, serde_json::Error> {
    if call && let Ok(request) = serde_json::from_str::<JsonRpcRequest<CallToolRequest>>(text) {
        return Ok(ClientJsonRpcMessage::Request(JsonRpcRequest::new(
            request.id,
            ClientRequest::CallToolRequest(request.request),
        )));
    }
    serde_json::from_str(text)
}

/// A message that cannot be read: a request is answered with an invalid request, any
/// other message (which JSON-RPC never answers) is not.
fn refuse(is_request: bool, message: String, id: Option<RequestId>) -> Refusal {
    if is_request {
        Refusal::unreadable(ErrorData::invalid_request(message, None), id)
    } else {
        Refusal::unanswered(message)
    }
}

fn parsed(
    text: String,
    arguments: Option<RawArguments>,
    id: Option<RequestId>,
    is_request: bool,
    call: bool,
) -> Result<Prepared, Refusal> {
    match client_message(&text, call) {
        Ok(message) => Ok(Prepared {
            text,
            message,
            arguments,
            task: None,
        }),
        Err(e) => Err(refuse(
            is_request,
            format!("the message is not a valid MCP message: {e}"),
            id,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The direct parse of a `tools/call` gives what rmcp's own parse gives: the same
    /// message, or (when it fails) the same error.
    #[test]
    fn the_direct_parse_agrees_with_rmcps() {
        let messages = [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"progressToken":6},"arguments":{},"name":"read_window"}}"#,
            r#"{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"t","arguments":{},"task":{"ttl":1000},"extra":[1]}}"#,
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"t"},"extra":true}"#,
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","id":"s-1","method":"tools/list","params":{"cursor":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":-3,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"dsh-mcp/2025-11-25/tasks/get","params":{"taskId":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"no/such/method","params":[1,2]}"#,
            r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":5}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            r#"{"jsonrpc":"1.0","id":8,"method":"ping"}"#,
            r#"{"id":9,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"x"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/what","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}"#,
            r#"{"jsonrpc":"2.0"}"#,
        ];
        let mut direct = 0;
        for text in messages {
            // Every message as a call too: the direct parse must agree even when the
            // message is no call (it then fails, and rmcp's parse answers).
            for call in [false, true] {
                // rmcp's message types have no `PartialEq`: their `Debug` text shows
                // every field.
                let ours = client_message(text, call)
                    .map(|m| format!("{m:?}"))
                    .map_err(|e| e.to_string());
                let rmcp = serde_json::from_str::<ClientJsonRpcMessage>(text)
                    .map(|m| format!("{m:?}"))
                    .map_err(|e| e.to_string());
                assert_eq!(ours, rmcp, "{text} (as a call: {call})");
            }
            direct +=
                usize::from(serde_json::from_str::<JsonRpcRequest<CallToolRequest>>(text).is_ok());
        }
        // The fixtures reach the direct parse, and not only the fallback.
        assert!(direct >= 2, "{direct} fixtures parse directly");
    }

    fn arguments_of(text: &str) -> Option<String> {
        match prepare(text.as_bytes()) {
            Ok(p) => p.arguments.map(|a| a.0.to_string()),
            Err(_) => panic!("refused: {text}"),
        }
    }

    #[test]
    fn the_arguments_are_the_text_sent() {
        let args = r#"{"file_path":"a.txt","file_path":"b.txt","n":1e400,"z":-0,"$serde_json::private::RawValue":1}"#;
        let message = format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"read","arguments":{args}}}}}"#
        );
        assert_eq!(arguments_of(&message).as_deref(), Some(args));
        let prepared = prepare(message.as_bytes()).ok().unwrap();
        assert!(
            prepared.text.contains(r#""arguments":{}"#),
            "{}",
            prepared.text
        );
    }

    #[test]
    fn other_messages_carry_no_arguments() {
        let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
        assert_eq!(arguments_of(list), None);
    }

    #[test]
    fn text_that_is_not_json_is_a_parse_error() {
        for text in ["{", "not json", "{\"id\":1,}", "\u{FEFF}["] {
            match prepare(text.as_bytes()).map_err(Refusal::into_json_rpc) {
                Err(Ok(m)) => {
                    let v = serde_json::to_value(&m).unwrap();
                    assert_eq!(v["error"]["code"], -32700, "{text}: {v}");
                }
                _ => panic!("{text}: not a parse error"),
            }
        }
    }

    #[test]
    fn a_duplicate_key_in_the_envelope_is_an_invalid_request() {
        let text = r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"a","arguments":{},"arguments":{"x":1}}}"#;
        match prepare(text.as_bytes()) {
            Err(refusal) => {
                assert_eq!(refusal.status(), 400);
                let m = refusal.into_json_rpc().unwrap();
                let v = serde_json::to_value(&m).unwrap();
                assert_eq!(v["error"]["code"], -32600, "{v}");
                assert_eq!(v["id"], 4, "{v}");
            }
            Ok(_) => panic!("not refused"),
        }
    }
}
