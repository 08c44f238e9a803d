//! The HTTP side of reading messages as the client sent them: the step just before rmcp's
//! Streamable HTTP service (see `crate::transport::http::serve_http`), which reads each POSTed
//! JSON-RPC message with [`crate::wire::raw::prepare`] before rmcp does.
//!
//! - A body that is not JSON is answered `400` with a JSON-RPC parse error (`-32700`); a
//!   message that is not a valid MCP message, `400` with an invalid request (`-32600`).
//! - The arguments of a `tools/call` are put in the HTTP request's extensions (rmcp hands
//!   the request's parts to the handler) and replaced by `{}` in the body rmcp parses.
//! - Within a session (`Mcp-Session-Id`), a request whose id is in flight is answered
//!   with an invalid request naming the id and is not handed on. The id is free again
//!   once the first request's handler ended and its response stream closed.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::Request;
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt as _;
use rmcp::model::{RequestId, ServerJsonRpcMessage};

use crate::wire::in_flight::InFlight;
use crate::wire::outbound::{Outbound, Rewrite};
use crate::wire::{Ids, Inbound, Refusal};

type Key = (Arc<str>, RequestId);

/// What the step keeps: the ids in flight, and whether it serves the 2025-11-25 task
/// model (the registry has a job runtime, see [`crate::tasks::rev_2025_11_25`]).
pub(crate) struct Messages {
    table: Arc<InFlight<Key>>,
    rev_2025_11_25_tasks: bool,
}

impl Messages {
    /// `rev_2025_11_25_tasks`: serve the 2025-11-25 task model.
    pub(crate) fn new(rev_2025_11_25_tasks: bool) -> Messages {
        Messages {
            table: InFlight::new(),
            rev_2025_11_25_tasks,
        }
    }

    /// A request without a message of the client's (a `GET` stream, a `DELETE`): hand it
    /// to `next` (rmcp's service) and rewrite the requests of the server it carries.
    pub(crate) async fn stream(
        &self,
        request: Request,
        next: impl AsyncFnOnce(Request) -> Response,
    ) -> Response {
        let response = next(request).await;
        rewrite_response(response, Outbound::progress_tokens()).await
    }

    /// Read a JSON `POST`'s message (its body, read whole by the server's one body reader)
    /// as the client sent it, hand what rmcp should see to `next` (rmcp's service) with
    /// whether the message is a `tools/call`, and rewrite its answer (see the module
    /// docs).
    pub(crate) async fn read(
        &self,
        parts: Parts,
        bytes: &[u8],
        next: impl AsyncFnOnce(Request, bool) -> Response,
    ) -> Response {
        read_messages(self, parts, bytes, next).await
    }
}

async fn read_messages(
    messages: &Messages,
    parts: Parts,
    bytes: &[u8],
    next: impl AsyncFnOnce(Request, bool) -> Response,
) -> Response {
    let session = session_of(&parts);
    // A session on 2025-11-25 (each request names its revision): the revision's task
    // requests are rerouted. Stateless requests get no tasks.
    let reroute = messages.rev_2025_11_25_tasks
        && session.is_some()
        && parts
            .headers
            .get("mcp-protocol-version")
            .and_then(|v| v.to_str().ok())
            == Some(crate::wire::rev_2025_11_25::VERSION);
    // Ids in flight are a session's: requests without one are each on their own.
    let key = |id: &RequestId| (session.clone().unwrap_or_else(|| Arc::from("")), id.clone());
    let ids = session.as_ref().map(|_| Ids {
        table: &messages.table,
        key: &key,
    });
    let inbound = match crate::wire::read(bytes, reroute, ids) {
        Ok(inbound) => inbound,
        Err(refusal) => return refused(refusal),
    };
    let tool_call = inbound.tool_call;
    let initialize = inbound
        .initialize
        .clone()
        .filter(|_| messages.rev_2025_11_25_tasks);
    let key = inbound.key.clone();
    let (request, mut outbound) = hand_on(parts, inbound);
    let response = next(request, tool_call).await;
    // The revision's tasks live in a session: offered only when the answer opened one.
    if let Some(id) = initialize
        && response.headers().contains_key("mcp-session-id")
    {
        outbound.push(Rewrite::Initialize(id));
    }
    let response = rewrite_response(response, outbound).await;
    match key {
        Some(key) => hold_id(response, messages.table.clone(), key),
        None => response,
    }
}

/// The session a request names (`Mcp-Session-Id`), if any.
fn session_of(parts: &Parts) -> Option<Arc<str>> {
    parts
        .headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(Arc::from)
}

/// The request rmcp's service gets for a message read (its text, what the handler needs
/// in its extensions), and the rewrites its answer needs.
fn hand_on(mut parts: Parts, inbound: Inbound<Key>) -> (Request, Outbound) {
    let Inbound {
        text,
        attached,
        listen,
        may_ask,
        ..
    } = inbound;
    attached.attach(&mut parts.extensions);
    parts
        .headers
        .insert(header::CONTENT_LENGTH, text.len().into());
    let mut outbound = Outbound::new();
    if let Some((id, listen)) = listen {
        outbound.push(Rewrite::ListenAcknowledgment(id, listen.0));
    }
    if may_ask {
        outbound.push(Rewrite::ProgressTokens);
    }
    (Request::from_parts(parts, Body::from(text)), outbound)
}

/// The answer to a message that does not reach rmcp: `400` for one that cannot be read,
/// `200` for a readable request refused.
fn refused(refusal: Refusal) -> Response {
    match refusal {
        Refusal::Unreadable(error) => json_rpc(StatusCode::BAD_REQUEST, &error),
        Refusal::Refused(error) => json_rpc(StatusCode::OK, &error),
        Refusal::Dropped(why) => {
            let error = ServerJsonRpcMessage::error(
                rmcp::model::ErrorData::invalid_request(why, None),
                None,
            );
            json_rpc(StatusCode::BAD_REQUEST, &error)
        }
    }
}

/// `response`, its request's id in flight until its response stream ends (after the
/// response, or dropped when the client goes away).
fn hold_id(response: Response, table: Arc<InFlight<Key>>, key: Key) -> Response {
    let answered = Answered(Some((table, key)));
    let (parts, body) = response.into_parts();
    let stream = body.into_data_stream().map(move |chunk| {
        let _keep = &answered;
        chunk
    });
    Response::from_parts(parts, Body::from_stream(stream))
}

/// Run each message of a response through `outbound` as it passes: each `data:` line of
/// an event stream (lines pass through as they arrive; once no rewrite is left, the rest
/// unread), or a JSON body. Without rewrites, the response is left as it is.
async fn rewrite_response(response: Response, mut outbound: Outbound) -> Response {
    if outbound.is_empty() {
        return response;
    }
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let (mut parts, body) = response.into_parts();
    if content_type.starts_with("application/json") {
        // The server's own answer: no limit.
        let bytes = match axum::body::to_bytes(body, usize::MAX).await {
            Ok(bytes) => bytes,
            Err(e) => {
                return (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    format!("cannot read the answer: {e}"),
                )
                    .into_response();
            }
        };
        let patched = outbound.message(&bytes);
        parts.headers.remove(header::CONTENT_LENGTH);
        let body = patched.map_or_else(|| Body::from(bytes), Body::from);
        return Response::from_parts(parts, body);
    }
    if !content_type.starts_with("text/event-stream") {
        return Response::from_parts(parts, body);
    }
    parts.headers.remove(header::CONTENT_LENGTH);
    let mut lines = LineBuffer::default();
    let stream = body.into_data_stream().map(move |chunk| {
        let chunk = chunk?;
        if outbound.is_empty() {
            return Ok::<_, axum::Error>(chunk);
        }
        let out = lines.push(&chunk, |line, out| {
            if outbound.is_empty() {
                out.extend_from_slice(line);
                return;
            }
            match outbound.line(line) {
                Some(patched) => out.extend_from_slice(&patched),
                None => out.extend_from_slice(line),
            }
        });
        Ok(axum::body::Bytes::from(out))
    });
    Response::from_parts(parts, Body::from_stream(stream))
}

/// Lines of an event stream as its chunks arrive: each complete line is handed to
/// [`LineBuffer::push`]'s caller, a line still without its end kept for the next chunk.
#[derive(Default)]
struct LineBuffer {
    pending: Vec<u8>,
}

impl LineBuffer {
    /// Add `chunk`; `each` gets every line it completes and returns the bytes to send
    /// for it. What to send for the chunk.
    fn push(&mut self, chunk: &[u8], mut each: impl FnMut(&[u8], &mut Vec<u8>)) -> Vec<u8> {
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

/// Marks its key answered when dropped.
struct Answered(Option<(Arc<InFlight<Key>>, Key)>);

impl Drop for Answered {
    fn drop(&mut self) {
        if let Some((table, key)) = self.0.take() {
            table.answered(&key);
        }
    }
}

fn json_rpc(status: StatusCode, message: &ServerJsonRpcMessage) -> Response {
    match serde_json::to_vec(message) {
        Ok(body) => (status, [(header::CONTENT_TYPE, "application/json")], body).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_across_chunks_are_rewritten_whole() {
        const ELICIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":{"_meta":{"progressToken":0},"message":"m","requestedSchema":{"type":"object"}}}"#;
        let stream = format!("event: message\r\ndata: {ELICIT}\r\n\r\n");
        let (a, b) = stream.as_bytes().split_at(30);
        let mut lines = LineBuffer::default();
        let mut outbound = Outbound::progress_tokens();
        let mut out = Vec::new();
        for chunk in [a, b] {
            out.extend(lines.push(chunk, |line, out| match outbound.line(line) {
                Some(patched) => out.extend_from_slice(&patched),
                None => out.extend_from_slice(line),
            }));
        }
        let out = String::from_utf8(out).unwrap();
        assert!(out.starts_with("event: message\r\ndata: {"), "{out:?}");
        assert!(out.ends_with("}\r\n\r\n"), "{out:?}");
        assert!(!out.contains("progressToken"), "{out}");
    }
}
