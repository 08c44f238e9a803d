//! The client spans of the OpenTelemetry MCP conventions for every request a
//! [`ClientBuilder`](super::ClientBuilder) connection sends, opened in a transport that
//! wraps the connection's own: what rmcp sends itself (the `server/discover` and
//! `initialize` handshake) is traced as what goes through its `Peer` (`tools/list`,
//! `ping`, `resources/*`, `prompts/*`, …).
//!
//! Each request is a span `{mcp.method.name} {target}`, kind CLIENT, the target being
//! the tool's or the prompt's name (a resource's URI is `mcp.resource.uri` only). It
//! carries `mcp.method.name`, `mcp.protocol.version` (the request's own on 2026-07-28,
//! the offered one on `initialize`, the negotiated one after it), `jsonrpc.request.id`
//! and `network.transport` (`tcp` for Streamable HTTP, `pipe` otherwise), and on failure
//! `error.type`: the JSON-RPC error code, `tool_error` for a `tools/call` result with
//! `isError`, `cancelled` for a request the client cancelled (or that timed out),
//! `transport_error` for one that could not be sent, `connection_closed` for one the
//! connection ended before its answer. With feature `otel`, its trace context is written
//! into the request's `_meta` (SEP-414). Its duration is the histogram
//! `mcp.client.operation.duration` (seconds).
//!
//! The span's parent is the [`ParentSpan`] the request carries in its extensions, else
//! the span current where the wrapped transport sends it: the caller of
//! [`ClientBuilder::connect`](super::ClientBuilder::connect) during the handshake, and
//! after it the connection's (rmcp's service loop runs in the span current when the
//! connection was made). A request marked [`Traced`] (an imported tool's `tools/call`,
//! traced where it is made) opens none here.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rmcp::RoleClient;
use rmcp::model::{
    ClientNotification, ClientRequest, GetExtensions as _, GetMeta as _, JsonRpcMessage, RequestId,
    ServerResult,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tracing::Span;
use tracing::field::Empty;

/// A request's extension saying that its span is opened where it is made: the
/// transport opens none.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Traced;

/// A request's extension naming the span its client span is a child of.
#[derive(Clone, Debug)]
pub(crate) struct ParentSpan(pub(crate) Span);

/// A request sent and not answered yet.
struct Pending {
    span: Span,
    method: String,
    start: Instant,
}

/// What the wrapped transport knows of the connection.
#[derive(Default)]
struct State {
    pending: HashMap<RequestId, Pending>,
    /// The revision `initialize` negotiated (2026-07-28 requests carry their own).
    protocol: Option<String>,
}

/// A client transport opening the span of every request it sends (see the module docs).
pub(crate) struct TracedTransport<T> {
    inner: T,
    transport: &'static str,
    /// `server.address` and `server.port` of a server reached by URL.
    server: Option<Arc<(String, u16)>>,
    state: Arc<Mutex<State>>,
    /// Whether a span was ever opened: until then, no answer needs the state (with no
    /// subscriber, a request costs the level check and no lock).
    spans: Arc<AtomicBool>,
}

impl<T> TracedTransport<T> {
    /// Wrap `inner`; `network.transport` is `tcp` for rmcp's Streamable HTTP client,
    /// `pipe` for any other.
    pub(crate) fn new(inner: T) -> TracedTransport<T> {
        let transport = if std::any::type_name::<T>().contains("streamable_http_client") {
            "tcp"
        } else {
            "pipe"
        };
        TracedTransport {
            inner,
            transport,
            server: None,
            state: Arc::default(),
            spans: Arc::default(),
        }
    }

    /// The server's host and port from the URL it was reached at (`server.address`,
    /// `server.port`); a URL without a host changes nothing.
    #[cfg(feature = "http")]
    pub(crate) fn server_url(mut self, url: &str) -> TracedTransport<T> {
        self.server = reqwest::Url::parse(url).ok().and_then(|url| {
            let host = url
                .host_str()?
                .trim_start_matches('[')
                .trim_end_matches(']');
            Some(Arc::new((host.to_owned(), url.port_or_known_default()?)))
        });
        self
    }
}

/// `{method} {target}`, or the method alone.
fn span_name(method: &str, target: Option<&str>) -> String {
    match target {
        Some(target) => format!("{method} {target}"),
        None => method.to_owned(),
    }
}

/// The request id as JSON-RPC has it.
fn id_text(id: &RequestId) -> String {
    match id {
        rmcp::model::NumberOrString::Number(n) => n.to_string(),
        rmcp::model::NumberOrString::String(s) => s.to_string(),
    }
}

/// The span of `request` (not yet entered), or `None` where nothing traces it.
fn open_span(
    request: &ClientRequest,
    id: &RequestId,
    transport: &'static str,
    server: Option<&(String, u16)>,
    negotiated: Option<&str>,
) -> Option<Span> {
    if !tracing::level_enabled!(tracing::Level::INFO)
        || request.extensions().get::<Traced>().is_some()
    {
        return None;
    }
    let parent = request
        .extensions()
        .get::<ParentSpan>()
        .map_or_else(Span::current, |p| p.0.clone());
    let (tool, prompt, resource): (Option<&str>, Option<&str>, Option<&str>) = match request {
        ClientRequest::CallToolRequest(r) => (Some(&r.params.name), None, None),
        ClientRequest::GetPromptRequest(r) => (None, Some(&r.params.name), None),
        ClientRequest::ReadResourceRequest(r) => (None, None, Some(&r.params.uri)),
        ClientRequest::SubscribeRequest(r) => (None, None, Some(&r.params.uri)),
        ClientRequest::UnsubscribeRequest(r) => (None, None, Some(&r.params.uri)),
        _ => (None, None, None),
    };
    let protocol: Option<Cow<'_, str>> = match request {
        ClientRequest::InitializeRequest(r) => Some(r.params.protocol_version.to_string().into()),
        _ => match request.get_meta().protocol_version() {
            Some(v) => Some(v.to_string().into()),
            None => negotiated.map(Cow::Borrowed),
        },
    };
    let method = request.method();
    let span = tracing::info_span!(
        parent: &parent,
        "mcp_client",
        otel.name = span_name(method, tool.or(prompt)),
        otel.kind = "client",
        otel.status_code = Empty,
        mcp.method.name = method,
        mcp.protocol.version = protocol.as_deref(),
        jsonrpc.request.id = id_text(id),
        network.transport = transport,
        server.address = server.map(|s| s.0.as_str()),
        server.port = server.map(|s| s.1),
        gen_ai.operation.name = tool.map(|_| "execute_tool"),
        gen_ai.tool.name = tool,
        gen_ai.prompt.name = prompt,
        mcp.resource.uri = resource,
        error.type = Empty,
    );
    (!span.is_disabled()).then_some(span)
}

/// End `pending`: its error, if any, and its duration.
fn finish(pending: Pending, error: Option<&str>) {
    if let Some(error) = error {
        pending.span.record("error.type", error);
        pending.span.record("otel.status_code", "error");
    }
    tracing::info!(
        parent: &pending.span,
        histogram.mcp.client.operation.duration = pending.start.elapsed().as_secs_f64(),
        mcp.method.name = pending.method.as_str(),
        error.type = error,
    );
}

impl State {
    /// Open the span of an outgoing request and inject its trace context: the spans
    /// it ends (a `server/discover` that timed out before this `initialize`).
    fn sent(
        &mut self,
        id: &RequestId,
        request: &mut ClientRequest,
        transport: &'static str,
        server: Option<&(String, u16)>,
    ) -> Vec<Pending> {
        let Some(span) = open_span(request, id, transport, server, self.protocol.as_deref()) else {
            return Vec::new();
        };
        #[cfg(feature = "otel")]
        span.in_scope(|| crate::propagation::inject(&mut request.get_meta_mut().0.0));
        // An `initialize` follows a `server/discover` that timed out.
        let mut stale = Vec::new();
        if matches!(request, ClientRequest::InitializeRequest(_)) {
            let ids: Vec<RequestId> = self
                .pending
                .iter()
                .filter(|(_, p)| p.method == "server/discover")
                .map(|(id, _)| id.clone())
                .collect();
            stale.extend(ids.iter().filter_map(|id| self.pending.remove(id)));
        }
        let pending = Pending {
            span,
            method: request.method().to_owned(),
            start: Instant::now(),
        };
        self.pending.insert(id.clone(), pending);
        stale
    }

    /// The request a server message answers, with its error (if any); the negotiated
    /// revision learnt from an `initialize` result.
    fn received(
        &mut self,
        message: &RxJsonRpcMessage<RoleClient>,
    ) -> Option<(Pending, Option<String>)> {
        if self.pending.is_empty() {
            return None;
        }
        match message {
            JsonRpcMessage::Response(response) => {
                let error = match &response.result {
                    ServerResult::InitializeResult(result) => {
                        self.protocol = Some(result.protocol_version.to_string());
                        None
                    }
                    ServerResult::CallToolResult(result) if result.is_error == Some(true) => {
                        Some("tool_error")
                    }
                    _ => None,
                };
                let pending = self.pending.remove(&response.id)?;
                Some((pending, error.map(str::to_owned)))
            }
            JsonRpcMessage::Error(error) => {
                let pending = self.pending.remove(error.id.as_ref()?)?;
                Some((pending, Some(error.error.code.0.to_string())))
            }
            _ => None,
        }
    }
}

/// Lock the state (a panic elsewhere leaves it usable).
fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl<T> Transport<RoleClient> for TracedTransport<T>
where
    T: Transport<RoleClient> + 'static,
{
    type Error = T::Error;

    fn send(
        &mut self,
        mut item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let mut sent = None;
        match &mut item {
            JsonRpcMessage::Request(request) if tracing::level_enabled!(tracing::Level::INFO) => {
                let stale = {
                    let mut state = lock(&self.state);
                    let stale = state.sent(
                        &request.id,
                        &mut request.request,
                        self.transport,
                        self.server.as_deref(),
                    );
                    if !state.pending.is_empty() {
                        self.spans.store(true, Ordering::Release);
                    }
                    stale
                };
                for pending in stale {
                    finish(pending, Some("timeout"));
                }
                sent = Some(request.id.clone());
            }
            JsonRpcMessage::Notification(n) if self.spans.load(Ordering::Acquire) => {
                if let ClientNotification::CancelledNotification(c) = &n.notification
                    && let Some(id) = &c.params.request_id
                {
                    let pending = lock(&self.state).pending.remove(id);
                    if let Some(pending) = pending {
                        finish(pending, Some("cancelled"));
                    }
                }
            }
            _ => {}
        }
        let send = self.inner.send(item);
        let state = self.state.clone();
        async move {
            let out = send.await;
            if out.is_err()
                && let Some(id) = sent
            {
                let pending = lock(&state).pending.remove(&id);
                if let Some(pending) = pending {
                    finish(pending, Some("transport_error"));
                }
            }
            out
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        let (state, spans) = (&self.state, &self.spans);
        let receive = self.inner.receive();
        async move {
            let message = receive.await;
            if !spans.load(Ordering::Acquire) {
                return message;
            }
            match &message {
                Some(message) => {
                    let answered = lock(state).received(message);
                    if let Some((pending, error)) = answered {
                        finish(pending, error.as_deref());
                    }
                }
                None => {
                    let pending: Vec<Pending> =
                        lock(state).pending.drain().map(|(_, p)| p).collect();
                    for pending in pending {
                        finish(pending, Some("connection_closed"));
                    }
                }
            }
            message
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
