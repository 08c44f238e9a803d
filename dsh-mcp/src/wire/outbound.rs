//! What the server sends, rewritten where rmcp's types cannot say it: one driver,
//! [`Outbound`], for both transports. The byte-stream transport
//! ([`crate::transport::stdio`]) keeps one per connection and runs each line it writes
//! through it; the HTTP transport keeps one per request and runs the response through it
//! (a JSON body, or each `data:` line of an event stream as it passes).
//!
//! Why text and not rmcp's types: what is rewritten is what rmcp's types cannot say or
//! always add, and it is decided after rmcp serialized the message (over HTTP, inside
//! rmcp's own service). The rewrites ([`Rewrite`]):
//!
//! - [`Rewrite::ProgressTokens`]: rmcp gives every request it sends a
//!   `_meta.progressToken` from its own counter (the first is `0`), so an
//!   `elicitation/create` of a call that sent no progress token would carry one the
//!   client never gave; the server never listens for progress on its requests, so the
//!   token is removed ([`drop_request_progress_token`]);
//! - [`Rewrite::Initialize`]: `capabilities.tasks` of revision 2025-11-25, which rmcp's
//!   capabilities lack, in the answer to `initialize`
//!   ([`crate::wire::rev_2025_11_25::patch_initialize`]);
//! - [`Rewrite::ListenAcknowledgment`]: the `taskIds` a listen stream follows, which
//!   rmcp's subscription filter lacks, in its acknowledgment
//!   ([`crate::wire::listen::patch_acknowledgment`]).
//!
//! The last two are each made for one request: done once they changed a message, and
//! forgotten when their request is answered ([`Outbound::answered`]).

use std::sync::Arc;

use rmcp::model::RequestId;
use serde_json::Value;

use crate::wire::listen::patch_acknowledgment;
use crate::wire::rev_2025_11_25::patch_initialize;

/// One rewrite of what the server sends (see the module docs).
pub(crate) enum Rewrite {
    /// Remove the progress token rmcp gives each request the server sends.
    ProgressTokens,
    /// Add revision 2025-11-25's `capabilities.tasks` to the answer to the `initialize`
    /// request of this id, when it negotiated that revision.
    Initialize(RequestId),
    /// Add these `taskIds` to the acknowledgment of the listen request of this id.
    ListenAcknowledgment(RequestId, Arc<[String]>),
}

impl Rewrite {
    /// Whether a message's text may be one this rewrite changes: a cheap test before the
    /// text is parsed.
    fn may_apply(&self, text: &[u8]) -> bool {
        let needle: &[u8] = match self {
            Rewrite::ProgressTokens => b"\"progressToken\"",
            Rewrite::Initialize(_) => b"\"protocolVersion\"",
            Rewrite::ListenAcknowledgment(..) => b"subscriptions/acknowledged",
        };
        contains(text, needle)
    }

    /// Rewrite `message`: `true` when it changed it.
    fn apply(&self, message: &mut Value) -> bool {
        match self {
            Rewrite::ProgressTokens => drop_request_progress_token(message),
            Rewrite::Initialize(id) => answers(message, id) && patch_initialize(message),
            Rewrite::ListenAcknowledgment(id, ids) => patch_acknowledgment(message, id, ids),
        }
    }

    /// Whether this rewrite is done after its first change.
    fn once(&self) -> bool {
        !matches!(self, Rewrite::ProgressTokens)
    }

    /// The request this rewrite was made for, if it was made for one.
    fn request(&self) -> Option<&RequestId> {
        match self {
            Rewrite::ProgressTokens => None,
            Rewrite::Initialize(id) | Rewrite::ListenAcknowledgment(id, _) => Some(id),
        }
    }
}

/// The rewrites of what the server sends on one connection (stdio) or in answer to one
/// request (HTTP), applied to each outgoing message in the order they were added.
#[derive(Default)]
pub(crate) struct Outbound {
    rewrites: Vec<Rewrite>,
    /// Set once an `initialize` answer negotiated revision 2025-11-25 (and got its
    /// `capabilities.tasks`).
    rev_2025_11_25: bool,
}

impl Outbound {
    /// No rewrites yet.
    pub(crate) fn new() -> Self {
        Outbound::default()
    }

    /// Only [`Rewrite::ProgressTokens`]: what every stream of the server's own requests
    /// needs.
    pub(crate) fn progress_tokens() -> Self {
        let mut outbound = Outbound::new();
        outbound.push(Rewrite::ProgressTokens);
        outbound
    }

    /// Add `rewrite`.
    pub(crate) fn push(&mut self, rewrite: Rewrite) {
        self.rewrites.push(rewrite);
    }

    /// Whether there is no rewrite left to apply (a message then passes as it is).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn is_empty(&self) -> bool {
        self.rewrites.is_empty()
    }

    /// Whether an `initialize` answer negotiated revision 2025-11-25.
    pub(crate) fn negotiated_rev_2025_11_25(&self) -> bool {
        self.rev_2025_11_25
    }

    /// The request `id` was answered: forget the rewrites made for it.
    pub(crate) fn answered(&mut self, id: &RequestId) {
        self.rewrites.retain(|r| r.request() != Some(id));
    }

    /// Rewrite one message (its JSON text): the new text when a rewrite changed it.
    pub(crate) fn message(&mut self, text: &[u8]) -> Option<Vec<u8>> {
        if !self.rewrites.iter().any(|r| r.may_apply(text)) {
            return None;
        }
        let mut value: Value = serde_json::from_slice(text).ok()?;
        let mut changed = false;
        let mut done = Vec::new();
        for (i, rewrite) in self.rewrites.iter().enumerate() {
            if !rewrite.apply(&mut value) {
                continue;
            }
            changed = true;
            self.rev_2025_11_25 |= matches!(rewrite, Rewrite::Initialize(_));
            if rewrite.once() {
                done.push(i);
            }
        }
        for i in done.into_iter().rev() {
            self.rewrites.remove(i);
        }
        if !changed {
            return None;
        }
        serde_json::to_vec(&value).ok()
    }

    #[cfg(feature = "http")]
    /// Rewrite one line of an event stream (its end included, `\n` or `\r\n`): the new
    /// line when it is a `data:` line whose message a rewrite changed, with the same end.
    pub(crate) fn line(&mut self, line: &[u8]) -> Option<Vec<u8>> {
        let (content, end) = match line.strip_suffix(b"\r\n") {
            Some(c) => (c, &b"\r\n"[..]),
            None => match line.strip_suffix(b"\n") {
                Some(c) => (c, &b"\n"[..]),
                None => (line, &b""[..]),
            },
        };
        let data = content.strip_prefix(b"data:")?;
        let data = data.strip_prefix(b" ").unwrap_or(data);
        let patched = self.message(data)?;
        let mut out = Vec::with_capacity(patched.len() + 8);
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(&patched);
        out.extend_from_slice(end);
        Some(out)
    }
}

/// Whether `message` is the answer to the request `id`.
fn answers(message: &Value, id: &RequestId) -> bool {
    message
        .get("id")
        .and_then(|v| serde_json::from_value::<RequestId>(v.clone()).ok())
        .is_some_and(|answered| &answered == id)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Remove `_meta.progressToken` from a request the server sends (and `_meta` when that
/// leaves it empty); `true` when there was one.
pub(crate) fn drop_request_progress_token(message: &mut Value) -> bool {
    let is_request = message.get("id").is_some() && message.get("method").is_some();
    if !is_request {
        return false;
    }
    let Some(params) = message.get_mut("params").and_then(Value::as_object_mut) else {
        return false;
    };
    let Some(meta) = params.get_mut("_meta").and_then(Value::as_object_mut) else {
        return false;
    };
    if meta.remove("progressToken").is_none() {
        return false;
    }
    if meta.is_empty() {
        params.remove("_meta");
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const ELICIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":{"_meta":{"progressToken":0},"message":"m","requestedSchema":{"type":"object"}}}"#;

    #[test]
    fn a_request_loses_its_progress_token_and_an_empty_meta() {
        let mut value: Value = serde_json::from_str(ELICIT).unwrap();
        assert!(drop_request_progress_token(&mut value));
        assert!(value["params"].get("_meta").is_none(), "{value}");
        let mut kept = json!({"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"_meta":{"progressToken":3,"x":1}}});
        assert!(drop_request_progress_token(&mut kept));
        assert_eq!(kept["params"]["_meta"], json!({"x": 1}));
        // Progress notifications keep theirs.
        let mut progress = json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":0,"progress":1}});
        assert!(!drop_request_progress_token(&mut progress));
    }

    #[cfg(feature = "http")]
    #[test]
    fn event_stream_lines_keep_their_framing() {
        for (line, end) in [
            (format!("data: {ELICIT}\r\n"), "\r\n"),
            (format!("data:{ELICIT}\n"), "\n"),
        ] {
            let out = Outbound::progress_tokens().line(line.as_bytes()).unwrap();
            let out = String::from_utf8(out).unwrap();
            assert!(out.starts_with("data: {"), "{out}");
            assert!(
                out.ends_with(end) && !out.ends_with(&format!("\r{end}")),
                "{out:?}"
            );
            assert!(!out.contains("progressToken"), "{out}");
        }
        let mut outbound = Outbound::progress_tokens();
        for untouched in [
            "event: message\r\n",
            "id: 3\n",
            "\r\n",
            "data: {\"id\":1,\"result\":{}}\n",
        ] {
            assert!(
                outbound.line(untouched.as_bytes()).is_none(),
                "{untouched:?}"
            );
        }
    }

    #[test]
    fn a_request_s_rewrites_apply_once_to_its_own_answer() {
        let init = |id: u32| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"protocolVersion":"2025-11-25","capabilities":{{}},"serverInfo":{{"name":"s","version":"1"}}}}}}"#
            )
        };
        let mut outbound = Outbound::progress_tokens();
        outbound.push(Rewrite::Initialize(RequestId::Number(1)));
        // Another request's answer is not the one.
        assert!(outbound.message(init(2).as_bytes()).is_none());
        assert!(!outbound.negotiated_rev_2025_11_25());
        let patched = outbound.message(init(1).as_bytes()).unwrap();
        let patched: Value = serde_json::from_slice(&patched).unwrap();
        assert!(
            patched["result"]["capabilities"]["tasks"].is_object(),
            "{patched}"
        );
        assert!(outbound.negotiated_rev_2025_11_25());
        // Done: the progress-token rewrite alone is left.
        assert!(outbound.message(init(1).as_bytes()).is_none());
        assert!(outbound.message(ELICIT.as_bytes()).is_some());
    }

    #[test]
    fn an_answered_request_s_rewrites_are_forgotten() {
        let mut outbound = Outbound::new();
        outbound.push(Rewrite::ListenAcknowledgment(
            RequestId::Number(7),
            Arc::from(["t1".to_string()]),
        ));
        outbound.answered(&RequestId::Number(8));
        assert!(!outbound.is_empty());
        outbound.answered(&RequestId::Number(7));
        assert!(outbound.is_empty());
    }
}
