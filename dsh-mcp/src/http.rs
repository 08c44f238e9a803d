//! Serving over MCP's Streamable HTTP transport (rmcp's tower service on an axum server).
//!
//! The server binds to loopback by default. Binding to another address exposes every
//! tool (a shell, for `dsh-tools`) to whoever can reach it: set a bearer token
//! ([`HttpOptions::bearer_token`]) and the host names clients use
//! ([`HttpOptions::allowed_hosts`]), and put TLS in front.

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::McpServer;

/// How [`serve_http`] listens.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HttpOptions {
    /// The address to bind (default `127.0.0.1:0`: loopback, a free port).
    pub bind: SocketAddr,
    /// The endpoint path (default `/mcp`).
    pub path: String,
    /// When set, every request must carry `Authorization: Bearer <token>`; others get
    /// `401`.
    pub bearer_token: Option<String>,
    /// Keep a session for each client that starts with `initialize` (default on).
    ///
    /// Requests on protocol revisions without `initialize` (2026-07-28 on) are always
    /// served statelessly: each on its own, seeing the registry's global view, so
    /// several server processes can share one load balancer. Clients on earlier
    /// revisions need a session for what they send outside a request (above all
    /// `notifications/cancelled`); with sessions on, each gets one: an agent scope, the
    /// [`McpServer::on_session`] setup, list-change notifications. Turn sessions off to
    /// serve those clients statelessly too; their cancellations then reach no call.
    pub sessions: bool,
    /// Host names (or `host:port`) accepted in the `Host` header. Empty (the default):
    /// loopback names when bound to loopback, any host otherwise.
    pub allowed_hosts: Vec<String>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            bind: SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0),
            path: "/mcp".to_string(),
            bearer_token: None,
            sessions: true,
            allowed_hosts: Vec::new(),
        }
    }
}

impl HttpOptions {
    /// Bind to `addr`.
    #[must_use]
    pub fn bind(mut self, addr: SocketAddr) -> Self {
        self.bind = addr;
        self
    }

    /// Require `Authorization: Bearer <token>`.
    #[must_use]
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer_token = Some(token.into());
        self
    }

    /// Keep sessions (see [`HttpOptions::sessions`]).
    #[must_use]
    pub fn sessions(mut self, on: bool) -> Self {
        self.sessions = on;
        self
    }

    /// Serve at this path instead of `/mcp`.
    #[must_use]
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Accept these `Host` header values.
    #[must_use]
    pub fn allowed_hosts<I, S>(mut self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_hosts = hosts.into_iter().map(Into::into).collect();
        self
    }
}

/// A running Streamable HTTP server.
#[derive(Debug)]
pub struct HttpServer {
    addr: SocketAddr,
    path: String,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<io::Result<()>>,
}

impl HttpServer {
    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The endpoint URL, e.g. `http://127.0.0.1:43123/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}{}", self.addr, self.path)
    }

    /// Stop accepting requests, end every session and wait for the server to stop.
    pub async fn shutdown(self) -> io::Result<()> {
        self.stop.cancel();
        self.wait().await
    }

    /// Wait until the server stops (after [`HttpServer::stopper`] fired, or on error).
    pub async fn wait(self) -> io::Result<()> {
        match self.task.await {
            Ok(result) => result,
            Err(e) => Err(io::Error::other(e)),
        }
    }

    /// A token that stops the server when cancelled.
    pub fn stopper(&self) -> CancellationToken {
        self.stop.clone()
    }
}

/// Serve `server` over Streamable HTTP until [`HttpServer::shutdown`] (see
/// [`HttpOptions`]).
///
/// # Errors
///
/// When the address cannot be bound.
pub async fn serve_http(server: &McpServer, options: HttpOptions) -> io::Result<HttpServer> {
    let listener = tokio::net::TcpListener::bind(options.bind).await?;
    let addr = listener.local_addr()?;
    let stop = CancellationToken::new();

    let mut config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(options.sessions)
        .with_cancellation_token(stop.child_token());
    if !options.allowed_hosts.is_empty() {
        config = config.with_allowed_hosts(options.allowed_hosts.clone());
    } else if !addr.ip().is_loopback() {
        config = config.disable_allowed_hosts();
    }
    let sessions = options.sessions;
    let factory = server.clone();
    let service = StreamableHttpService::new(
        move || Ok(factory.http_handler(sessions)),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let mut router =
        crate::layer::read_messages_first(axum::Router::new().nest_service(&options.path, service));
    if let Some(token) = options.bearer_token.clone() {
        let expected: Arc<str> = Arc::from(format!("Bearer {token}"));
        router = router.layer(axum::middleware::from_fn_with_state(
            expected,
            require_bearer,
        ));
    }
    let shutdown = stop.clone();
    let task = tokio::spawn(async move {
        axum::serve(listener, router)
            .with_graceful_shutdown(shutdown.cancelled_owned())
            .await
    });
    Ok(HttpServer {
        addr,
        path: options.path,
        stop,
        task,
    })
}

async fn require_bearer(
    State(expected): State<Arc<str>>,
    request: Request,
    next: Next,
) -> Response {
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    if given.is_some_and(|g| constant_time_eq(g.as_bytes(), expected.as_bytes())) {
        next.run(request).await
    } else {
        (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            "missing or wrong bearer token",
        )
            .into_response()
    }
}

/// Compare without an early exit on the first differing byte.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
