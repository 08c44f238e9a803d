//! Messages over HTTP, both ways: the step just before rmcp's Streamable HTTP service
//! (see [`serve_http`](super::serve_http)), which reads each POSTed JSON-RPC message
//! through the wire ([`crate::wire::read`]) before rmcp does, and frames what goes back:
//! the response run through the request's [`Outbound`] (a JSON body, or each `data:`
//! line of an event stream as it passes), and a [`Refusal`] as an HTTP response.
//!
//! - A body that is not JSON is answered `400` with a JSON-RPC parse error (`-32700`); a
//!   message that is not a valid MCP message, `400` with an invalid request (`-32600`).
//! - The arguments of a `tools/call` are put in the HTTP request's extensions (rmcp hands
//!   the request's parts to the handler) and replaced by `{}` in the body rmcp parses.
//! - The `Mcp-Param-*` headers of a `tools/call` on revision 2026-07-28 or later are
//!   taken off the request and put in its extensions, for the handler to check against
//!   the arguments ([`crate::wire::param_headers`]).
//! - Within a session (`Mcp-Session-Id`), a request whose id is in flight is answered
//!   with an invalid request naming the id and is not handed on. The id is free again
//!   once the first request's handler ended and its response stream closed.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::Request;
use axum::http::request::Parts;
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt as _;
use rmcp::model::{ErrorData, RequestId, ServerJsonRpcMessage};

use crate::wire::in_flight::InFlight;
use crate::wire::outbound::{Outbound, Rewrite};
use crate::wire::param_headers::ParamHeaders;
use crate::wire::{Answer, Header, Ids, Inbound, Refusal};

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
        let delete = request.method() == axum::http::Method::DELETE;
        let mut response = next(request).await;
        // A session ended at the client's request: `204 No Content` (rmcp answers `202`,
        // which clients that expect the session to be over, such as Python's, take for a
        // failure).
        if delete && response.status() == axum::http::StatusCode::ACCEPTED {
            *response.status_mut() = axum::http::StatusCode::NO_CONTENT;
        }
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

/// Read a POSTed message (see [`Messages::read`]), in steps: the session and revision it
/// names, the wire, rmcp's service, the answer's rewrites, the id held until the answer
/// is sent.
async fn read_messages(
    messages: &Messages,
    mut parts: Parts,
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
        Err(refusal) => return refusal.into_response(),
    };
    let tool_call = inbound.tool_call;
    if tool_call && mirrors_params(&parts) {
        let headers = ParamHeaders::take(&mut parts.headers);
        parts.extensions.insert(headers);
    }
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

/// Whether the request's revision (`MCP-Protocol-Version`) is one with `Mcp-Param-*`
/// headers: 2026-07-28 or later (the revisions are dates, so they compare as text).
fn mirrors_params(parts: &Parts) -> bool {
    parts
        .headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim() >= PARAM_HEADERS_SINCE)
}

/// The first revision whose clients send `Mcp-Param-*` headers (SEP-2243).
const PARAM_HEADERS_SINCE: &str = "2026-07-28";

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
                return Refusal::text(500, format!("cannot read the answer: {e}")).into_response();
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

/// A refusal as an HTTP response: its status, its body (a JSON-RPC answer or a JSON
/// document as `application/json`, text as `text/plain; charset=utf-8`), then its
/// headers, each replacing any of its name.
impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let (status, headers, body) = self.into_parts();
        let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = match body {
            Answer::JsonRpc(message) => json_rpc(status, &message),
            Answer::Unanswered(why) => json_rpc(
                status,
                &ServerJsonRpcMessage::error(ErrorData::invalid_request(why, None), None),
            ),
            Answer::Json(bytes) => json(status, bytes),
            Answer::Text(text) => (status, text).into_response(),
            Answer::Empty => status.into_response(),
        };
        for (name, value) in headers {
            if let Ok(value) = HeaderValue::from_str(&value) {
                response.headers_mut().insert(header_name(name), value);
            }
        }
        response
    }
}

fn json_rpc(status: StatusCode, message: &ServerJsonRpcMessage) -> Response {
    match serde_json::to_vec(message) {
        Ok(bytes) => json(status, bytes),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

fn json(status: StatusCode, bytes: Vec<u8>) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], bytes).into_response()
}

fn header_name(header: Header) -> HeaderName {
    match header {
        Header::Connection => header::CONNECTION,
        Header::ContentType => header::CONTENT_TYPE,
        Header::RetryAfter => header::RETRY_AFTER,
        Header::WwwAuthenticate => header::WWW_AUTHENTICATE,
    }
}

/// A refusal (of text) as the bytes of a whole HTTP/1.1 response, for a connection
/// answered before any request of it is read: the status line, the headers in order
/// (names in lower case), `content-length`, the body.
pub(super) fn http1_bytes(refusal: Refusal) -> Vec<u8> {
    let (status, headers, body) = refusal.into_parts();
    let reason = StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    let body = match body {
        Answer::Text(text) => text,
        _ => String::new(),
    };
    let mut out = format!("HTTP/1.1 {status} {reason}\r\n");
    for (name, value) in headers {
        out.push_str(&format!("{}: {value}\r\n", header_name(name)));
    }
    out.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
    out.push_str(&body);
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn parts(response: Response) -> (StatusCode, axum::http::HeaderMap, String) {
        let (parts, body) = response.into_parts();
        let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
        (
            parts.status,
            parts.headers,
            String::from_utf8(body.to_vec()).unwrap(),
        )
    }

    #[tokio::test]
    async fn refusals_answer_with_their_status_headers_and_body() {
        let (status, headers, body) = parts(
            Refusal::text(408, "late")
                .with_header(Header::Connection, "close")
                .into_response(),
        )
        .await;
        assert_eq!(status, StatusCode::REQUEST_TIMEOUT);
        assert_eq!(headers[header::CONNECTION], "close");
        assert_eq!(headers[header::CONTENT_TYPE], "text/plain; charset=utf-8");
        assert_eq!(body, "late");
        // A Content-Type of the refusal's replaces the body's.
        let (_, headers, _) = parts(
            Refusal::text(503, "draining")
                .with_header(Header::ContentType, "text/plain")
                .into_response(),
        )
        .await;
        assert_eq!(headers.get_all(header::CONTENT_TYPE).iter().count(), 1);
        assert_eq!(headers[header::CONTENT_TYPE], "text/plain");
        // A message JSON-RPC never answers is answered over HTTP all the same.
        let (status, headers, body) =
            parts(Refusal::unanswered("bad".into()).into_response()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(headers[header::CONTENT_TYPE], "application/json");
        let body: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(body["error"]["code"], -32600, "{body}");
        assert!(body["id"].is_null(), "{body}");
        let (status, headers, body) = parts(Refusal::new(404, Answer::Empty).into_response()).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert!(headers.get(header::CONTENT_TYPE).is_none());
        assert!(body.is_empty());
    }

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
