//! Rewrites of what the server sends, on each message's JSON, the same for both
//! transports: the byte-stream transport ([`crate::transport::stdio`]) applies them to each
//! message before writing its line, the HTTP layer ([`crate::transport::http::messages`]) to each `data:`
//! line of an event stream (or a JSON body) as it passes.
//!
//! Why text and not rmcp's types: what is rewritten is what rmcp's types cannot say or
//! always add, and it is decided after rmcp serialized the message (over HTTP, inside
//! rmcp's own service):
//!
//! - [`drop_request_progress_token`]: rmcp gives every request it sends a
//!   `_meta.progressToken` from its own counter (the first is `0`), so an
//!   `elicitation/create` of a call that sent no progress token would carry one the
//!   client never gave; the server never listens for progress on its requests, so the
//!   token is removed;
//! - [`crate::wire::rev_2025_11_25::patch_initialize`]: `capabilities.tasks` of revision
//!   2025-11-25, which rmcp's capabilities lack;
//! - [`crate::wire::listen::patch_acknowledgment`]: the `taskIds` a listen stream
//!   follows, which rmcp's subscription filter lacks.
//!
//! Each rewrite is a function on the message's [`Value`] returning whether it changed
//! it; [`rewrite_line`] applies rewrites to one event-stream line, keeping its framing
//! (`data:` prefix, `\r\n` or `\n`).

use serde_json::Value;

#[cfg(feature = "http")]
/// A rewrite of one outgoing message: `true` when it changed it.
pub(crate) type Rewrite<'a> = &'a mut (dyn FnMut(&mut Value) -> bool + Send);

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

#[cfg(feature = "http")]
/// Whether a message's text may be one [`drop_request_progress_token`] changes (a cheap
/// test before parsing).
pub(crate) fn may_carry_progress_token(text: &[u8]) -> bool {
    contains(text, b"\"progressToken\"")
}

#[cfg(feature = "http")]
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(feature = "http")]
/// Apply `rewrites` to the message `text` (JSON): the new text when one changed it.
pub(crate) fn rewrite_json(text: &[u8], rewrites: &mut [Rewrite<'_>]) -> Option<Vec<u8>> {
    let mut value: Value = serde_json::from_slice(text).ok()?;
    let mut changed = false;
    for rewrite in rewrites.iter_mut() {
        changed |= rewrite(&mut value);
    }
    if !changed {
        return None;
    }
    serde_json::to_vec(&value).ok()
}

#[cfg(feature = "http")]
/// Apply `rewrites` to one line of an event stream (its end included, `\n` or `\r\n`):
/// the new line when it is a `data:` line whose message one of them changed.
pub(crate) fn rewrite_line(line: &[u8], rewrites: &mut [Rewrite<'_>]) -> Option<Vec<u8>> {
    let (content, end) = match line.strip_suffix(b"\r\n") {
        Some(c) => (c, &b"\r\n"[..]),
        None => match line.strip_suffix(b"\n") {
            Some(c) => (c, &b"\n"[..]),
            None => (line, &b""[..]),
        },
    };
    let data = content.strip_prefix(b"data:")?;
    let data = data.strip_prefix(b" ").unwrap_or(data);
    let patched = rewrite_json(data, rewrites)?;
    let mut out = Vec::with_capacity(patched.len() + 8);
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(&patched);
    out.extend_from_slice(end);
    Some(out)
}

#[cfg(feature = "http")]
/// Lines of an event stream as its chunks arrive: each complete line is handed to
/// [`LineBuffer::push`]'s caller, a line still without its end kept for the next chunk.
#[derive(Default)]
pub(crate) struct LineBuffer {
    pending: Vec<u8>,
}

#[cfg(feature = "http")]
impl LineBuffer {
    /// Add `chunk`; `each` gets every line it completes and returns the bytes to send
    /// for it. What to send for the chunk.
    pub(crate) fn push(
        &mut self,
        chunk: &[u8],
        mut each: impl FnMut(&[u8], &mut Vec<u8>),
    ) -> Vec<u8> {
        self.pending.extend_from_slice(chunk);
        let mut out = Vec::with_capacity(self.pending.len() + 32);
        let mut start = 0;
        while let Some(i) = self.pending[start..].iter().position(|&b| b == b'\n') {
            each(&self.pending[start..start + i + 1], &mut out);
            start += i + 1;
        }
        // A line the stream ends on without its end is an unfinished event, which
        // event-stream readers discard anyway.
        self.pending.drain(..start);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const ELICIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":{"_meta":{"progressToken":0},"message":"m","requestedSchema":{"type":"object"}}}"#;

    fn drop_token(v: &mut Value) -> bool {
        drop_request_progress_token(v)
    }

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
            let mut rewrite = drop_token;
            let out = rewrite_line(line.as_bytes(), &mut [&mut rewrite]).unwrap();
            let out = String::from_utf8(out).unwrap();
            assert!(out.starts_with("data: {"), "{out}");
            assert!(
                out.ends_with(end) && !out.ends_with(&format!("\r{end}")),
                "{out:?}"
            );
            assert!(!out.contains("progressToken"), "{out}");
        }
        let mut rewrite = drop_token;
        for untouched in [
            "event: message\r\n",
            "id: 3\n",
            "\r\n",
            "data: {\"id\":1,\"result\":{}}\n",
        ] {
            assert!(
                rewrite_line(untouched.as_bytes(), &mut [&mut rewrite]).is_none(),
                "{untouched:?}"
            );
        }
    }

    #[cfg(feature = "http")]
    #[test]
    fn lines_split_across_chunks_are_rewritten_whole() {
        let stream = format!("event: message\r\ndata: {ELICIT}\r\n\r\n");
        let (a, b) = stream.as_bytes().split_at(30);
        let mut lines = LineBuffer::default();
        let mut out = Vec::new();
        for chunk in [a, b] {
            out.extend(lines.push(chunk, |line, out| {
                let mut rewrite = drop_token;
                match rewrite_line(line, &mut [&mut rewrite]) {
                    Some(patched) => out.extend_from_slice(&patched),
                    None => out.extend_from_slice(line),
                }
            }));
        }
        let out = String::from_utf8(out).unwrap();
        assert!(out.starts_with("event: message\r\ndata: {"), "{out:?}");
        assert!(out.ends_with("}\r\n\r\n"), "{out:?}");
        assert!(!out.contains("progressToken"), "{out}");
    }
}
