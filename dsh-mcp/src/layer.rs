//! The HTTP side of reading messages as the client sent them: a layer in front of rmcp's
//! Streamable HTTP service that reads each POSTed JSON-RPC message with
//! [`crate::raw::prepare`] before rmcp does.
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
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt as _;
use rmcp::model::{ClientJsonRpcMessage, RequestId, ServerJsonRpcMessage};

use crate::raw::{Prepared, Refused, prepare};
use crate::transport::{InFlight, cancelled_id, id_in_use};

/// The largest body read, as rmcp's own limit: 4 MiB.
const MAX_BODY: usize = 4 * 1024 * 1024;

type Key = (Arc<str>, RequestId);

/// What the layer keeps: the ids in flight, and whether it serves the 2025-11-25 task
/// model (the registry has a job runtime, see [`crate::tasks_core`]).
#[derive(Clone)]
struct LayerState {
    table: Arc<InFlight<Key>>,
    core_tasks: bool,
}

/// Put the layer in front of `router`'s routes (the MCP endpoint); `core_tasks`: serve
/// the 2025-11-25 task model.
pub(crate) fn read_messages_first(router: axum::Router, core_tasks: bool) -> axum::Router {
    let state = LayerState {
        table: InFlight::new(),
        core_tasks,
    };
    router.layer(axum::middleware::from_fn_with_state(state, read_messages))
}

async fn read_messages(
    State(LayerState { table, core_tasks }): State<LayerState>,
    request: Request,
    next: Next,
) -> Response {
    let is_json = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|e| e.trim().eq_ignore_ascii_case("application/json"))
        });
    if request.method() != Method::POST || !is_json {
        return next.run(request).await;
    }
    let (mut parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_BODY).await {
        Ok(bytes) => bytes,
        Err(e) => {
            return (
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("cannot read the request body (at most {MAX_BODY} bytes): {e}"),
            )
                .into_response();
        }
    };
    let mut prepared = match prepare(&bytes) {
        Ok(prepared) => prepared,
        Err(Refused::Answer(error)) => return json_rpc(StatusCode::BAD_REQUEST, &error),
        Err(Refused::Drop(why)) => {
            let error = ServerJsonRpcMessage::error(
                rmcp::model::ErrorData::invalid_request(why, None),
                None,
            );
            return json_rpc(StatusCode::BAD_REQUEST, &error);
        }
    };
    let listen = match crate::tasks_listen::read(&prepared) {
        Ok(listen) => listen,
        Err(error) => return json_rpc(StatusCode::OK, &error),
    };
    let listen = match (listen, &prepared.message) {
        (Some(listen), ClientJsonRpcMessage::Request(request)) => {
            parts.extensions.insert(listen.clone());
            Some((request.id.clone(), listen))
        }
        _ => None,
    };
    let session: Option<Arc<str>> = parts
        .headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(Arc::from);
    // A session on 2025-11-25 (each request names its revision): the revision's task
    // requests are rerouted. Stateless requests get no tasks.
    let core_session = core_tasks
        && session.is_some()
        && parts
            .headers
            .get("mcp-protocol-version")
            .and_then(|v| v.to_str().ok())
            == Some(crate::tasks_core::VERSION);
    if core_session && crate::tasks_core::reroute(&mut prepared) {
        parts.extensions.insert(crate::tasks_core::CoreRoute);
    }
    let initialize = core_tasks
        && matches!(
            &prepared.message,
            ClientJsonRpcMessage::Request(r)
                if matches!(r.request, rmcp::model::ClientRequest::InitializeRequest(_))
        );
    let Prepared {
        text,
        message,
        arguments,
    } = prepared;
    let mut key = None;
    if let Some(session) = &session {
        if let Some(id) = cancelled_id(&message) {
            // No response is sent for a cancelled request.
            table.answered(&(session.clone(), id));
        }
        if let ClientJsonRpcMessage::Request(request) = &message {
            let k = (session.clone(), request.id.clone());
            match table.begin(k.clone()) {
                Some(token) => {
                    parts.extensions.insert(token);
                    key = Some(k);
                }
                None => {
                    let error = ServerJsonRpcMessage::error(
                        id_in_use(&request.id),
                        Some(request.id.clone()),
                    );
                    return json_rpc(StatusCode::OK, &error);
                }
            }
        }
    }
    if let Some(arguments) = arguments {
        parts.extensions.insert(arguments);
    }
    parts
        .headers
        .insert(header::CONTENT_LENGTH, text.len().into());
    let mut response = next.run(Request::from_parts(parts, Body::from(text))).await;
    if initialize {
        response = patch_initialize(response).await;
    }
    if let Some((id, listen)) = listen {
        response = patch_listen_stream(response, id, listen);
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

/// The answer to `initialize` with the 2025-11-25 task capability, when it negotiated
/// that revision: a JSON body, or the `data` lines of an event stream (which ends after
/// the answer).
async fn patch_initialize(response: Response) -> Response {
    let (mut parts, body) = response.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_BODY).await {
        Ok(bytes) => bytes,
        Err(e) => {
            return (
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("cannot read the initialize answer: {e}"),
            )
                .into_response();
        }
    };
    let patch = |text: &str| -> Option<String> {
        let mut value: serde_json::Value = serde_json::from_str(text).ok()?;
        crate::tasks_core::patch_initialize(&mut value).then(|| value.to_string())
    };
    let text = String::from_utf8_lossy(&bytes);
    let out = if text.trim_start().starts_with('{') {
        patch(&text).unwrap_or_else(|| text.to_string())
    } else {
        let mut out = String::with_capacity(text.len() + 96);
        for line in text.split_inclusive('\n') {
            let (content, end) = match line.strip_suffix('\n') {
                Some(c) => (c, "\n"),
                None => (line, ""),
            };
            let (content, cr) = match content.strip_suffix('\r') {
                Some(c) => (c, "\r"),
                None => (content, ""),
            };
            match content
                .strip_prefix("data:")
                .and_then(|data| patch(data.trim_start()))
            {
                Some(patched) => {
                    out.push_str("data: ");
                    out.push_str(&patched);
                }
                None => out.push_str(content),
            }
            out.push_str(cr);
            out.push_str(end);
        }
        out
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(out))
}

/// A listen request's event stream with the `taskIds` it follows added to its
/// acknowledgment (see [`crate::tasks_listen`]): lines pass through as they arrive, each
/// `data` line read until the acknowledgment went by.
fn patch_listen_stream(
    response: Response,
    id: RequestId,
    listen: crate::tasks_listen::ListenTasks,
) -> Response {
    let is_stream = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !is_stream {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    parts.headers.remove(header::CONTENT_LENGTH);
    let mut pending: Vec<u8> = Vec::new();
    let mut done = false;
    let patch_line = move |line: &[u8], out: &mut Vec<u8>| {
        let text = String::from_utf8_lossy(line);
        let (content, end) = match text.strip_suffix('\n') {
            Some(c) => (c, "\n"),
            None => (&*text, ""),
        };
        let (content, cr) = match content.strip_suffix('\r') {
            Some(c) => (c, "\r"),
            None => (content, ""),
        };
        let patched = content.strip_prefix("data:").and_then(|data| {
            let mut value: serde_json::Value = serde_json::from_str(data.trim_start()).ok()?;
            crate::tasks_listen::patch_acknowledgment(&mut value, &id, &listen.0)
                .then(|| value.to_string())
        });
        match patched {
            Some(patched) => {
                out.extend_from_slice(b"data: ");
                out.extend_from_slice(patched.as_bytes());
                out.extend_from_slice(cr.as_bytes());
                out.extend_from_slice(end.as_bytes());
                true
            }
            None => {
                out.extend_from_slice(line);
                false
            }
        }
    };
    let stream = body.into_data_stream().map(move |chunk| {
        let chunk = chunk?;
        if done {
            return Ok::<_, axum::Error>(chunk);
        }
        pending.extend_from_slice(&chunk);
        let mut out = Vec::with_capacity(pending.len() + 32);
        let mut start = 0;
        while let Some(i) = pending[start..].iter().position(|&b| b == b'\n') {
            let line = &pending[start..start + i + 1];
            if done {
                out.extend_from_slice(line);
            } else {
                done = patch_line(line, &mut out);
            }
            start += i + 1;
        }
        // A line still without its end is kept for the next chunk (one the stream ends
        // on is an unfinished event, which event-stream readers discard anyway).
        pending.drain(..start);
        if done {
            // The rest passes through unread.
            out.append(&mut pending);
        }
        Ok(axum::body::Bytes::from(out))
    });
    Response::from_parts(parts, Body::from_stream(stream))
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
