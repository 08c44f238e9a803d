//! Every step of a request to the MCP endpoint, in the order [`serve_http`] lists them,
//! in one future ([`endpoint`]): the probes and the drain, the `Origin` check, the
//! credentials, the path, the body, the messages, rmcp's service. This is the one place
//! a request body is read ([`read_body`]): once, whole, within the time and size limits.
//!
//! [`serve_http`]: super::serve_http

use std::io;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, header};
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt as _;

use super::McpService;
use super::lifecycle::{self, Lifecycle};
use super::messages::Messages;
use crate::store::Store;
use crate::wire::{Answer, Header, Refusal};

/// What [`endpoint`] needs for its steps.
pub(super) struct Steps {
    /// The origins accepted besides the loopback ones.
    pub(super) origins: Origins,
    /// The static bearer token, when set.
    pub(super) bearer: Option<Arc<[u8]>>,
    pub(super) limits: BodyLimits,
    pub(super) messages: Messages,
    #[cfg(feature = "oauth")]
    pub(super) resource: Option<Arc<crate::oauth::Resource>>,
    pub(super) mcp: McpService,
    /// The sessions rmcp's service keeps (a `DELETE` of one it does not know is `404`).
    pub(super) sessions: Arc<super::sessions::IdleSessions>,
    /// [`HttpOptions::path`](super::HttpOptions::path) without a trailing `/`.
    pub(super) path: String,
    /// [`HttpOptions::health`](super::HttpOptions::health).
    pub(super) health: bool,
    pub(super) lifecycle: Arc<Lifecycle>,
    /// The server's task store, whose answer readiness reports.
    pub(super) store: Arc<dyn Store>,
}

impl Steps {
    /// Whether `path` is the MCP endpoint's (its path, or below it).
    fn serves(&self, path: &str) -> bool {
        path.strip_prefix(self.path.as_str())
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    }
}

/// Every request (but those of the OAuth metadata, routed before it), through the steps
/// [`serve_http`](super::serve_http) lists, in that order, in one future: each step a
/// function that hands the request on, or answers it.
pub(super) async fn endpoint(State(steps): State<Arc<Steps>>, request: Request) -> Response {
    if steps.health
        && let Some(probe) = lifecycle::probe(&request)
    {
        return lifecycle::answer(probe, &steps.lifecycle, &steps.store).await;
    }
    if steps.lifecycle.draining() {
        return lifecycle::draining();
    }
    if request.method() != Method::POST {
        return credentials(&steps, request).await;
    }
    // A message of the client's is in progress until its answer has been sent: a drain
    // waits for it.
    let guard = steps.lifecycle.begin();
    lifecycle::hold(credentials(&steps, request).await, guard)
}

/// The `Origin` check, then the credentials, then the steps after them.
async fn credentials(steps: &Arc<Steps>, request: Request) -> Response {
    if !steps.origins.allow(request.headers()) {
        return Refusal::text(403, "Forbidden: Origin header is not allowed").into_response();
    }
    #[cfg(feature = "oauth")]
    if let Some(resource) = &steps.resource {
        // Not with a static token (`check_options`).
        return resource
            .check_token(request, |request| authorized(steps, request))
            .await;
    }
    if let Some(expected) = &steps.bearer
        && !bearer_matches(request.headers().get(header::AUTHORIZATION), expected)
    {
        return Refusal::text(401, "missing or wrong bearer token")
            .with_header(Header::WwwAuthenticate, "Bearer")
            .into_response();
    }
    authorized(steps, request).await
}

/// The refusal of a `DELETE` naming a session this server does not keep (rmcp's service
/// would accept it, as if it had ended one): `404`, as for any other request of it.
async fn unknown_session(steps: &Steps, id: Option<String>) -> Option<Refusal> {
    use rmcp::transport::streamable_http_server::SessionManager as _;
    let known = steps.sessions.has_session(&id?.into()).await;
    (!matches!(known, Ok(true))).then(|| Refusal::text(404, "session not found"))
}

/// The session a request names, if any.
fn session_header(request: &Request) -> Option<String> {
    request
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// The steps after the credentials: the path (any other is `404`), the body (read once,
/// here), the messages read as sent, the wait for the OAuth verdict on a `tools/call`, and
/// rmcp's service.
async fn authorized(steps: &Steps, request: Request) -> Response {
    if !steps.serves(request.uri().path()) {
        return Refusal::new(404, Answer::Empty).into_response();
    }
    // rmcp's service future is large: boxed, this one stays small where it is moved.
    let mcp =
        |request: Request| async move { Box::pin(steps.mcp.handle(request)).await.map(Body::new) };
    if request.method() == Method::DELETE
        && let Some(refusal) = unknown_session(steps, session_header(&request)).await
    {
        return refusal.into_response();
    }
    if request.method() != Method::POST {
        return steps.messages.stream(request, mcp).await;
    }
    let (mut parts, bytes) = match read_body(steps.limits, request).await {
        Ok(read) => read,
        Err(refusal) => return refusal.into_response(),
    };
    // A session's calls may close their stream, to be resumed (SEP-1699).
    if let Some(session) = parts
        .headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
    {
        let sessions = steps.sessions.clone();
        let session: rmcp::transport::streamable_http_server::SessionId =
            session.to_string().into();
        parts
            .extensions
            .insert(crate::caller::StreamCloser(Arc::new(
                move |request, retry| {
                    let (sessions, session) = (sessions.clone(), session.clone());
                    Box::pin(async move {
                        sessions
                            .close_request_stream(&session, &request, retry)
                            .await
                    })
                },
            )));
    }
    if !is_json(&parts.headers) {
        // rmcp answers it (`415`), from the headers: the body was read within the limit.
        return mcp(Request::from_parts(parts, Body::from(bytes))).await;
    }
    let call = |request: Request, tool_call: bool| async move {
        #[cfg(feature = "oauth")]
        if tool_call && let Some(resource) = &steps.resource {
            return resource.await_verdict(request, mcp).await;
        }
        let _ = tool_call;
        mcp(request).await
    };
    steps.messages.read(parts, &bytes, call).await
}

/// A parsed origin: `null`, or a scheme, host and port.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Origin {
    Null,
    Tuple {
        scheme: String,
        host: String,
        port: Option<u16>,
    },
}

impl Origin {
    /// Parse `scheme://host[:port]` (RFC 6454), the port defaulting to the scheme's.
    fn parse(text: &str) -> Option<Origin> {
        if text == "null" {
            return Some(Origin::Null);
        }
        let uri: axum::http::Uri = text.parse().ok()?;
        let scheme = uri.scheme_str()?.to_ascii_lowercase();
        let authority = uri.authority()?;
        // An origin has no user information, path, query or fragment.
        if authority.as_str().contains('@')
            || uri.path_and_query().is_some_and(|p| p.as_str() != "/")
            || text.ends_with('/')
        {
            return None;
        }
        let host = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase();
        let port = authority.port_u16().or(match scheme.as_str() {
            "http" => Some(80),
            "https" => Some(443),
            _ => None,
        });
        Some(Origin::Tuple { scheme, host, port })
    }

    /// `http` or `https` on a loopback host, any port.
    fn is_loopback(&self) -> bool {
        match self {
            Origin::Null => false,
            Origin::Tuple { scheme, host, .. } => {
                (scheme == "http" || scheme == "https")
                    && (host == "localhost"
                        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback()))
            }
        }
    }
}

/// The origins accepted besides the loopback ones.
#[derive(Debug)]
pub(super) struct Origins(Vec<Origin>);

impl Origins {
    pub(super) fn new(allowed: &[String]) -> io::Result<Origins> {
        allowed
            .iter()
            .map(|text| {
                Origin::parse(text).ok_or_else(|| {
                    io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!(
                            "HttpOptions::allowed_origins: {text:?} is not an origin \
                             (scheme://host[:port], or null)"
                        ),
                    )
                })
            })
            .collect::<io::Result<Vec<_>>>()
            .map(Origins)
    }

    /// Whether a request with these headers may go on.
    fn allow(&self, headers: &HeaderMap) -> bool {
        let mut values = headers.get_all(header::ORIGIN).iter();
        let (Some(value), None) = (values.next(), values.next()) else {
            // No Origin (a client that is not a browser) passes; two are refused.
            return headers.get(header::ORIGIN).is_none();
        };
        let Some(origin) = value.to_str().ok().and_then(Origin::parse) else {
            return false;
        };
        origin.is_loopback() || self.0.contains(&origin)
    }
}

/// `Bearer <token>`: the scheme in any case (RFC 7235), the token exactly, compared in
/// constant time.
fn bearer_matches(value: Option<&HeaderValue>, expected: &[u8]) -> bool {
    let Some(value) = value else {
        return false;
    };
    let value = value.as_bytes();
    let Some(space) = value.iter().position(|b| *b == b' ') else {
        return false;
    };
    let (scheme, token) = value.split_at(space);
    scheme.eq_ignore_ascii_case(b"bearer") && constant_time_eq(token.trim_ascii_start(), expected)
}

/// Compare without an early exit on the first differing byte.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len()
        && std::hint::black_box(a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y))) == 0
}

/// The body limits of a `POST`.
#[derive(Clone, Copy, Debug)]
pub(super) struct BodyLimits {
    /// [`HttpOptions::body_read_timeout`](super::HttpOptions::body_read_timeout).
    pub(super) timeout: Duration,
    /// [`HttpOptions::max_body_bytes`](super::HttpOptions::max_body_bytes).
    pub(super) max_bytes: usize,
}

/// `Content-Type: application/json`, with any parameters (what rmcp serves; it answers
/// `415` to anything else).
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
        })
}

/// Read a `POST`'s body, whatever its `Content-Type`, within the timeout and the size
/// limit: the one place a request body is read. A `Content-Length` above the limit is
/// refused before any of the body is read.
async fn read_body(
    limits: BodyLimits,
    request: Request,
) -> Result<(axum::http::request::Parts, axum::body::Bytes), Refusal> {
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > limits.max_bytes as u64) {
        return Err(too_large(limits.max_bytes));
    }
    let (parts, body) = request.into_parts();
    let read = collect(body, limits.max_bytes);
    match tokio::time::timeout(limits.timeout, read).await {
        Ok(Ok(bytes)) => Ok((parts, bytes)),
        Ok(Err(refusal)) => Err(refusal),
        Err(_) => Err(Refusal::text(
            408,
            format!(
                "Request Timeout: the request body did not arrive within {:?}",
                limits.timeout
            ),
        )
        .with_header(Header::Connection, "close")),
    }
}

/// The answer to a body over `max_bytes`; the connection is closed after it, so the rest
/// of the body is never read.
fn too_large(max_bytes: usize) -> Refusal {
    Refusal::text(
        413,
        format!("Payload Too Large: the request body exceeds {max_bytes} bytes"),
    )
    .with_header(Header::Connection, "close")
}

/// The whole body, at most `max_bytes` of it. The frames are kept as they arrive and
/// joined once at the end, so a body refused for its size never costs more than the
/// limit, and one accepted never more than twice its size.
async fn collect(mut body: Body, max_bytes: usize) -> Result<axum::body::Bytes, Refusal> {
    let mut frames: Vec<axum::body::Bytes> = Vec::new();
    let mut len = 0usize;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| {
            Refusal::text(
                400,
                format!("Bad Request: cannot read the request body: {e}"),
            )
        })?;
        if let Ok(data) = frame.into_data() {
            if data.len() > max_bytes.saturating_sub(len) {
                return Err(too_large(max_bytes));
            }
            len += data.len();
            frames.push(data);
        }
    }
    Ok(match frames.len() {
        0 => axum::body::Bytes::new(),
        1 => frames.swap_remove(0),
        _ => {
            let mut joined = Vec::with_capacity(len);
            for frame in &frames {
                joined.extend_from_slice(frame);
            }
            joined.into()
        }
    })
}
