//! The server spans and metrics of the OpenTelemetry MCP semantic conventions, as
//! `tracing` spans in the fields `tracing-opentelemetry` reads (`otel.name`, `otel.kind`,
//! `otel.status_code`).
//!
//! Every request's span is `{mcp.method.name} {target}`, kind SERVER, where the target
//! is the tool's or the prompt's name (`gen_ai.tool.name`, `gen_ai.prompt.name`), and
//! the method alone otherwise: a resource's URI is `mcp.resource.uri`, never in the name
//! (it has no bound). It carries `mcp.method.name`, `mcp.protocol.version`,
//! `jsonrpc.request.id`, `network.transport` (`pipe` for stdio, `tcp` over HTTP),
//! `mcp.session.id` on revisions with sessions only (never on 2026-07-28),
//! `gen_ai.operation.name = execute_tool` on `tools/call`, over HTTP the protocol and its
//! version, the connection's peer (`client.*` and `network.peer.*`) and the `Host` the
//! client named (`server.*`), and `error.type`: the JSON-RPC error code (also
//! `rpc.response.status_code`), or `tool_error` for a result with `isError`. With
//! feature `otel`, its parent is the trace context in the request's `params._meta`
//! (`traceparent`, `tracestate`, `baggage`; SEP-414), read with the global propagator.
//!
//! The duration of each request is the histogram `mcp.server.operation.duration`
//! (seconds), a `histogram.*` event `tracing-opentelemetry`'s `MetricsLayer` records.
//! With no subscriber, the span is disabled and nothing is formatted, timed or read.

use std::future::Future;
use std::time::Instant;

use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use tracing::field::Empty;
use tracing::{Instrument, Span};

/// The `network.transport` of a request: `tcp` when it came over HTTP, `pipe` (stdio or
/// another byte stream) otherwise.
fn transport(context: &RequestContext<RoleServer>) -> &'static str {
    #[cfg(feature = "http")]
    if http_parts(context).is_some() {
        return "tcp";
    }
    let _ = context;
    "pipe"
}

/// The peer address of the connection a request came on, in the HTTP request's
/// extensions (for `client.address`; the transport sets it only while some subscriber
/// may trace).
#[cfg(feature = "http")]
#[derive(Clone, Copy, Debug)]
pub(crate) struct PeerAddr(pub(crate) std::net::SocketAddr);

/// The HTTP request a request came in, if it came over HTTP.
#[cfg(feature = "http")]
fn http_parts(context: &RequestContext<RoleServer>) -> Option<&axum::http::request::Parts> {
    context.extensions.get::<axum::http::request::Parts>()
}

/// The request's `Mcp-Session-Id` on a revision with sessions (`initialize`); `None` on
/// 2026-07-28, which has none.
pub(crate) fn session_id(context: &RequestContext<RoleServer>) -> Option<&str> {
    let sessions = context
        .protocol_version()
        .is_some_and(|v| v.has_initialize());
    if !sessions {
        return None;
    }
    #[cfg(feature = "http")]
    return http_parts(context)
        .and_then(|parts| parts.headers.get("mcp-session-id"))
        .and_then(|v| v.to_str().ok());
    #[cfg(not(feature = "http"))]
    None
}

/// The request id as JSON-RPC has it.
fn request_id(context: &RequestContext<RoleServer>) -> String {
    match &context.id {
        rmcp::model::NumberOrString::Number(n) => n.to_string(),
        rmcp::model::NumberOrString::String(s) => s.to_string(),
    }
}

/// What a request is about: a tool or a prompt (its name is the span name's target), a
/// resource (its URI an attribute only: high cardinality), or nothing.
#[derive(Clone, Copy)]
pub(crate) enum Target<'a> {
    None,
    Tool(&'a str),
    Prompt(&'a str),
    Resource(&'a str),
}

impl<'a> Target<'a> {
    /// The span name's target (the conventions name a tool's or a prompt's).
    fn name(self) -> Option<&'a str> {
        match self {
            Target::Tool(name) | Target::Prompt(name) => Some(name),
            Target::None | Target::Resource(_) => None,
        }
    }
}

/// Where an HTTP request came from and went to: the connection's peer (`client.*`, and
/// `network.peer.*`: the same socket, no proxy header is trusted) and the `Host` the
/// client named (`server.*`), with the HTTP version.
#[derive(Default)]
struct Addresses {
    peer: Option<std::net::SocketAddr>,
    host: Option<String>,
    port: Option<u16>,
    version: Option<&'static str>,
}

impl Addresses {
    #[cfg(feature = "http")]
    fn of(context: &RequestContext<RoleServer>) -> Addresses {
        let Some(parts) = http_parts(context) else {
            return Addresses::default();
        };
        let peer = parts.extensions.get::<PeerAddr>().map(|p| p.0);
        let authority = parts
            .headers
            .get(axum::http::header::HOST)
            .and_then(|v| v.to_str().ok())
            .and_then(|h| h.parse::<axum::http::uri::Authority>().ok());
        let version = match parts.version {
            axum::http::Version::HTTP_10 => Some("1.0"),
            axum::http::Version::HTTP_11 => Some("1.1"),
            axum::http::Version::HTTP_2 => Some("2"),
            _ => None,
        };
        Addresses {
            peer,
            host: authority.as_ref().map(|a| a.host().to_owned()),
            port: authority.as_ref().and_then(|a| a.port_u16()),
            version,
        }
    }

    #[cfg(not(feature = "http"))]
    fn of(_: &RequestContext<RoleServer>) -> Addresses {
        Addresses::default()
    }
}

/// The span of one request of `method` on `target` (see the module docs), parented on
/// the trace context of its `_meta` where feature `otel` reads it.
pub(crate) fn server_span(
    method: &'static str,
    target: Target<'_>,
    context: &RequestContext<RoleServer>,
) -> Span {
    let tool = match target {
        Target::Tool(name) if method == "tools/call" => Some(name),
        _ => None,
    };
    let prompt = match target {
        Target::Prompt(name) => Some(name),
        _ => None,
    };
    let resource = match target {
        Target::Resource(uri) => Some(uri),
        _ => None,
    };
    let span = tracing::info_span!(
        "mcp_server",
        otel.name = %Name(method, target.name()),
        otel.kind = "server",
        otel.status_code = Empty,
        mcp.method.name = method,
        mcp.protocol.version = context.protocol_version().as_ref().map(|v| v.as_str().to_owned()),
        jsonrpc.request.id = request_id(context),
        network.transport = transport(context),
        network.protocol.name = Empty,
        network.protocol.version = Empty,
        network.peer.address = Empty,
        network.peer.port = Empty,
        client.address = Empty,
        client.port = Empty,
        server.address = Empty,
        server.port = Empty,
        mcp.session.id = session_id(context),
        gen_ai.operation.name = tool.map(|_| "execute_tool"),
        gen_ai.tool.name = tool,
        gen_ai.prompt.name = prompt,
        mcp.resource.uri = resource,
        error.type = Empty,
        rpc.response.status_code = Empty,
    );
    if span.is_disabled() {
        return span;
    }
    record_addresses(&span, &Addresses::of(context));
    #[cfg(feature = "otel")]
    crate::propagation::set_parent(&span, &context.meta.0);
    span
}

/// Record where an HTTP request came from and went to on its span.
fn record_addresses(span: &Span, addresses: &Addresses) {
    if let Some(version) = addresses.version {
        span.record("network.protocol.name", "http");
        span.record("network.protocol.version", version);
    }
    if let Some(peer) = addresses.peer {
        let ip = peer.ip().to_string();
        span.record("network.peer.address", ip.as_str());
        span.record("network.peer.port", peer.port());
        span.record("client.address", ip.as_str());
        span.record("client.port", peer.port());
    }
    if let Some(host) = &addresses.host {
        span.record("server.address", host.as_str());
        if let Some(port) = addresses.port {
            span.record("server.port", port);
        }
    }
}

/// `{method} {target}`, or the method alone.
struct Name<'a>(&'static str, Option<&'a str>);

impl std::fmt::Display for Name<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.1 {
            Some(target) => write!(f, "{} {target}", self.0),
            None => f.write_str(self.0),
        }
    }
}

/// Run a request's handling `work` in `span`; record its error (`error.type`: the
/// JSON-RPC code, or `tool_error` where `tool_error` says the result is one) and its
/// duration.
pub(crate) async fn traced<T>(
    span: Span,
    method: &'static str,
    work: impl Future<Output = Result<T, McpError>>,
    tool_error: impl FnOnce(&T) -> bool,
) -> Result<T, McpError> {
    if span.is_disabled() {
        return work.await;
    }
    let start = Instant::now();
    let out = work.instrument(span.clone()).await;
    let error = match &out {
        Ok(result) if tool_error(result) => Some("tool_error".to_owned()),
        Ok(_) => None,
        Err(e) => Some(e.code.0.to_string()),
    };
    if let Some(error) = &error {
        span.record("error.type", error.as_str());
        span.record("otel.status_code", "error");
    }
    if let Err(e) = &out {
        span.record("rpc.response.status_code", e.code.0.to_string().as_str());
    }
    tracing::info!(
        parent: &span,
        histogram.mcp.server.operation.duration = start.elapsed().as_secs_f64(),
        mcp.method.name = method,
        error.type = error.as_deref(),
    );
    out
}

/// Whether a `tools/call` answer is a tool error (`isError`).
pub(crate) fn is_tool_error(response: &rmcp::model::CallToolResponse) -> bool {
    matches!(
        response,
        rmcp::model::CallToolResponse::Complete(result) if result.is_error == Some(true)
    )
}

/// Send a client's `tools/call` of `params` through `send` in its span: kind CLIENT,
/// `tools/call {name}` with `mcp.method.name`, `gen_ai.tool.name` and the
/// `jsonrpc.request.id` `send` records in it (it is given the span, or a disabled one)
/// once rmcp assigned one, its trace context
/// injected into the request's `_meta` (with feature `otel`), `error.type` the failure's
/// code, and its duration the histogram `mcp.client.operation.duration` (seconds).
///
/// `outer` is the `execute_tool` span of the registry call this request forwards (an
/// imported tool's). Where it is enabled, the tool's execution is traced already: as the
/// MCP conventions ask of a client that can tell, no second span is opened, and the MCP
/// attributes (`mcp.method.name`, `mcp.protocol.version`: what `protocol` reads, only
/// when traced) go on that span.
pub(crate) async fn client_call<F, Fut>(
    params: rmcp::model::CallToolRequestParams,
    outer: &Span,
    protocol: impl FnOnce() -> Option<String>,
    send: F,
) -> Result<rmcp::model::CallToolResponse, dsh_runtime::ToolError>
where
    F: FnOnce(rmcp::model::CallToolRequestParams, Span) -> Fut,
    Fut: Future<Output = Result<rmcp::model::CallToolResponse, dsh_runtime::ToolError>>,
{
    let span = if outer.is_disabled() {
        if !tracing::level_enabled!(tracing::Level::INFO) {
            return send(params, Span::none()).await;
        }
        let protocol = protocol();
        tracing::info_span!(
            "mcp_client",
            otel.name = %Name("tools/call", Some(&params.name)),
            otel.kind = "client",
            otel.status_code = Empty,
            mcp.method.name = "tools/call",
            mcp.protocol.version = protocol.as_deref(),
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = %params.name,
            jsonrpc.request.id = Empty,
            error.type = Empty,
        )
    } else {
        outer.record("mcp.method.name", "tools/call");
        if let Some(protocol) = protocol() {
            outer.record("mcp.protocol.version", protocol.as_str());
        }
        Span::none()
    };
    if span.is_disabled() && outer.is_disabled() {
        return send(params, Span::none()).await;
    }
    #[cfg(feature = "otel")]
    let params = {
        let mut params = params;
        let meta = params.meta.get_or_insert_with(Default::default);
        // The request's parent: this span, or (none opened) the current one, inside
        // the outer call's.
        if span.is_disabled() {
            crate::propagation::inject(&mut meta.0.0);
        } else {
            span.in_scope(|| crate::propagation::inject(&mut meta.0.0));
        }
        params
    };
    let start = Instant::now();
    let out = send(params, span.clone()).instrument(span.clone()).await;
    let error = match &out {
        Ok(response) if is_tool_error(response) => Some("tool_error".to_owned()),
        Ok(_) => None,
        Err(e) => Some(e.code_str().unwrap_or("error").to_owned()),
    };
    if let Some(error) = &error
        && !span.is_disabled()
    {
        span.record("error.type", error.as_str());
        span.record("otel.status_code", "error");
    }
    // The outer span's histogram parent when no span of this request was opened.
    let parent = if span.is_disabled() { outer } else { &span };
    tracing::info!(
        parent: parent,
        histogram.mcp.client.operation.duration = start.elapsed().as_secs_f64(),
        mcp.method.name = "tools/call",
        error.type = error.as_deref(),
    );
    out
}
