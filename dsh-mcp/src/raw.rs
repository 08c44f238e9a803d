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

use rmcp::model::{ClientJsonRpcMessage, ErrorData, RequestId, ServerJsonRpcMessage};
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

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
}

/// Why a message is not handed on.
pub(crate) enum Refused {
    /// Answer with this error.
    Answer(Box<ServerJsonRpcMessage>),
    /// Answer nothing: a notification or a response that cannot be read (JSON-RPC
    /// answers requests only).
    Drop(String),
}

impl Refused {
    fn answer(error: ErrorData, id: Option<RequestId>) -> Self {
        Refused::Answer(Box::new(ServerJsonRpcMessage::error(error, id)))
    }
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
pub(crate) fn prepare(bytes: &[u8]) -> Result<Prepared, Refused> {
    const BOM: &[u8] = b"\xEF\xBB\xBF";
    let bytes = bytes.strip_prefix(BOM).unwrap_or(bytes);
    let text = std::str::from_utf8(bytes).map_err(|e| {
        Refused::answer(
            ErrorData::parse_error(format!("the message is not UTF-8: {e}"), None),
            None,
        )
    })?;
    let members = match serde_json::from_str::<Members<'_>>(text) {
        Ok(members) => members,
        Err(e) => {
            if let Err(e) = serde_json::from_str::<&RawValue>(text).map_err(|_| e) {
                return Err(Refused::answer(
                    ErrorData::parse_error(format!("the message is not JSON: {e}"), None),
                    None,
                ));
            }
            // Valid JSON that is not an object (a batch, a scalar): not a message.
            return parsed(text.to_string(), None, None, true);
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
        return parsed(text.to_string(), None, id, is_request);
    };
    let params_members = match serde_json::from_str::<Members<'_>>(params.get()) {
        Ok(m) => m,
        // Not an object: rmcp's parse answers it.
        Err(_) => return parsed(text.to_string(), None, id, is_request),
    };
    if let Some(key) = params_members.duplicate() {
        let message = format!("the tools/call params have a duplicate key {key:?}");
        return Err(refuse(is_request, message, id));
    }
    let Some(arguments) = params_members.get("arguments") else {
        return parsed(text.to_string(), None, id, is_request);
    };
    let raw = RawArguments(Arc::from(arguments.get()));
    let params_text = params_members.replaced("arguments", "{}");
    let text = members.replaced("params", &params_text);
    parsed(text, Some(raw), id, is_request)
}

fn refuse(is_request: bool, message: String, id: Option<RequestId>) -> Refused {
    if is_request {
        Refused::answer(ErrorData::invalid_request(message, None), id)
    } else {
        Refused::Drop(message)
    }
}

fn parsed(
    text: String,
    arguments: Option<RawArguments>,
    id: Option<RequestId>,
    is_request: bool,
) -> Result<Prepared, Refused> {
    match serde_json::from_str::<ClientJsonRpcMessage>(&text) {
        Ok(message) => Ok(Prepared {
            text,
            message,
            arguments,
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
            match prepare(text.as_bytes()) {
                Err(Refused::Answer(m)) => {
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
            Err(Refused::Answer(m)) => {
                let v = serde_json::to_value(&m).unwrap();
                assert_eq!(v["error"]["code"], -32600, "{v}");
                assert_eq!(v["id"], 4, "{v}");
            }
            _ => panic!("not refused"),
        }
    }
}
