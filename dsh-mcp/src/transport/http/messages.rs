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
use serde_json::Value;

use crate::wire::in_flight::InFlight;
use crate::wire::listen::ListenTasks;
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
        rewrite_response(response, vec![progress_tokens()]).await
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
    Messages {
        table,
        rev_2025_11_25_tasks,
    }: &Messages,
    mut parts: Parts,
    bytes: &[u8],
    next: impl AsyncFnOnce(Request, bool) -> Response,
) -> Response {
    let (table, rev_2025_11_25_tasks) = (table.clone(), *rev_2025_11_25_tasks);
    let session: Option<Arc<str>> = parts
        .headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(Arc::from);
    // A session on 2025-11-25 (each request names its revision): the revision's task
    // requests are rerouted. Stateless requests get no tasks.
    let reroute = rev_2025_11_25_tasks
        && session.is_some()
        && parts
            .headers
            .get("mcp-protocol-version")
            .and_then(|v| v.to_str().ok())
            == Some(crate::wire::rev_2025_11_25::VERSION);
    // Ids in flight are a session's: requests without one are each on their own.
    let key = |id: &RequestId| (session.clone().unwrap_or_else(|| Arc::from("")), id.clone());
    let ids = session.as_ref().map(|_| Ids {
        table: &table,
        key: &key,
    });
    let Inbound {
        text,
        attached,
        initialize,
        listen,
        may_ask,
        tool_call,
        key,
        ..
    } = match crate::wire::read(bytes, reroute, ids) {
        Ok(inbound) => inbound,
        Err(Refusal::Unreadable(error)) => return json_rpc(StatusCode::BAD_REQUEST, &error),
        Err(Refusal::Refused(error)) => return json_rpc(StatusCode::OK, &error),
        Err(Refusal::Dropped(why)) => {
            let error = ServerJsonRpcMessage::error(
                rmcp::model::ErrorData::invalid_request(why, None),
                None,
            );
            return json_rpc(StatusCode::BAD_REQUEST, &error);
        }
    };
    let initialize = rev_2025_11_25_tasks && initialize.is_some();
    if tool_call && attached.routed.is_none() && crate::wire::rev_2025_11_25::asks_for_task(&text) {
        // A task this client is not served: the handler refuses it on 2025-11-25.
        parts
            .extensions
            .insert(crate::wire::rev_2025_11_25::TaskAsked);
    }
    attached.attach(&mut parts.extensions);
    parts
        .headers
        .insert(header::CONTENT_LENGTH, text.len().into());
    let mut rewrites = Vec::new();
    if let Some((id, listen)) = listen {
        rewrites.push(listen_acknowledgment(id, listen));
    }
    if may_ask {
        rewrites.push(progress_tokens());
    }
    let mut response = next(Request::from_parts(parts, Body::from(text)), tool_call).await;
    // The revision's tasks live in a session: offered only when the answer opened one.
    if initialize && response.headers().contains_key("mcp-session-id") {
        rewrites.push(initialize_capabilities());
    }
    if !rewrites.is_empty() {
        response = rewrite_response(response, rewrites).await;
    }
    let Some(key) = key else {
        return response;
    };
    // The request's response stream ends after its response (or is dropped when the
    // client goes away): the id is answered then.
    let answered = Answered(Some((table, key)));
    let (parts, body) = response.into_parts();
    let stream = body.into_data_stream().map(move |chunk| {
        let _keep = &answered;
        chunk
    });
    Response::from_parts(parts, Body::from_stream(stream))
}

/// One rewrite of a response's messages (see [`crate::wire::outbound`]): a cheap test of a
/// message's text, the rewrite, and whether it is done after its first change.
struct Rewrite {
    may_apply: fn(&[u8]) -> bool,
    apply: Box<dyn FnMut(&mut Value) -> bool + Send>,
    once: bool,
}

fn any(_: &[u8]) -> bool {
    true
}

/// Remove the progress token rmcp gives each request the server sends (see
/// [`crate::wire::outbound::drop_request_progress_token`]).
fn progress_tokens() -> Rewrite {
    Rewrite {
        may_apply: crate::wire::outbound::may_carry_progress_token,
        apply: Box::new(crate::wire::outbound::drop_request_progress_token),
        once: false,
    }
}

/// `capabilities.tasks` in the answer to `initialize`, when it negotiated 2025-11-25.
fn initialize_capabilities() -> Rewrite {
    Rewrite {
        may_apply: any,
        apply: Box::new(crate::wire::rev_2025_11_25::patch_initialize),
        once: true,
    }
}

/// The `taskIds` a listen request follows, in its acknowledgment.
fn listen_acknowledgment(id: RequestId, listen: ListenTasks) -> Rewrite {
    Rewrite {
        may_apply: any,
        apply: Box::new(move |value| {
            crate::wire::listen::patch_acknowledgment(value, &id, &listen.0)
        }),
        once: true,
    }
}

/// Apply `rewrites` to each message of a response as it passes: each `data:` line of an
/// event stream (lines pass through as they arrive; once every rewrite is done, the rest
/// unread), or a JSON body.
async fn rewrite_response(response: Response, mut rewrites: Vec<Rewrite>) -> Response {
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
        let patched = apply(&mut rewrites, &bytes, crate::wire::outbound::rewrite_json);
        parts.headers.remove(header::CONTENT_LENGTH);
        let body = patched.map_or_else(|| Body::from(bytes), Body::from);
        return Response::from_parts(parts, body);
    }
    if !content_type.starts_with("text/event-stream") {
        return Response::from_parts(parts, body);
    }
    parts.headers.remove(header::CONTENT_LENGTH);
    let mut lines = crate::wire::outbound::LineBuffer::default();
    let stream = body.into_data_stream().map(move |chunk| {
        let chunk = chunk?;
        if rewrites.is_empty() {
            return Ok::<_, axum::Error>(chunk);
        }
        let out = lines.push(&chunk, |line, out| {
            if rewrites.is_empty() {
                out.extend_from_slice(line);
                return;
            }
            match apply(&mut rewrites, line, crate::wire::outbound::rewrite_line) {
                Some(patched) => out.extend_from_slice(&patched),
                None => out.extend_from_slice(line),
            }
        });
        Ok(axum::body::Bytes::from(out))
    });
    Response::from_parts(parts, Body::from_stream(stream))
}

/// Apply the rewrites whose test passes to `text` with `with` (a message or a line),
/// forgetting those done.
fn apply(
    rewrites: &mut Vec<Rewrite>,
    text: &[u8],
    with: fn(&[u8], &mut [crate::wire::outbound::Rewrite<'_>]) -> Option<Vec<u8>>,
) -> Option<Vec<u8>> {
    let mut out: Option<Vec<u8>> = None;
    let mut finished = Vec::new();
    for (i, rewrite) in rewrites.iter_mut().enumerate() {
        let current = out.as_deref().unwrap_or(text);
        if !(rewrite.may_apply)(current) {
            continue;
        }
        if let Some(patched) = with(current, &mut [&mut *rewrite.apply]) {
            out = Some(patched);
            if rewrite.once {
                finished.push(i);
            }
        }
    }
    for i in finished.into_iter().rev() {
        rewrites.remove(i);
    }
    out
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
