//! Serving over MCP's Streamable HTTP transport (rmcp's tower service on hyper).
//!
//! The server binds to loopback by default. Binding to another address exposes every
//! tool (a shell, for `dsh-tools`) to whoever can reach it: set a bearer token
//! ([`HttpOptions::bearer_token`]) and the host names clients use
//! ([`HttpOptions::allowed_hosts`]), and put TLS in front.
//!
//! What every request goes through is listed at [`serve_http`].

mod accept;
mod endpoint;
mod lifecycle;
mod messages;
#[cfg(feature = "oauth")]
pub mod oauth;
mod sessions;

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::McpServer;
use endpoint::{BodyLimits, Origins, Steps, endpoint};

/// How [`serve_http`] listens.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HttpOptions {
    /// The address to bind (default `127.0.0.1:0`: loopback, a free port).
    pub bind: SocketAddr,
    /// The endpoint path (default `/mcp`): it must start with `/`. Requests to it or
    /// below it (`/mcp/...`) are served; any other path is answered `404`.
    pub path: String,
    /// When set, every request must carry `Authorization: Bearer <token>` (the scheme
    /// in any case); others get `401`.
    pub bearer_token: Option<String>,
    /// Keep a session for each client that starts with `initialize` (default on).
    ///
    /// Requests on protocol revisions without `initialize` (2026-07-28 on) are always
    /// served statelessly: each on its own, in the server's stateless context (see
    /// [`McpServer::on_session`]), so several server processes can share one load
    /// balancer. Clients on earlier
    /// revisions need a session for what they send outside a request (above all
    /// `notifications/cancelled`); with sessions on, each gets one: an agent scope, the
    /// [`McpServer::on_session`] setup, list-change notifications. Turn sessions off to
    /// serve those clients statelessly too; their cancellations then reach no call.
    pub sessions: bool,
    /// Host names (or `host:port`) accepted in the `Host` header, besides the loopback
    /// names (`localhost`, `127.0.0.1`, `::1`) and the bound address, which are always
    /// accepted. Any other `Host` is answered `403` (a defence against DNS rebinding),
    /// unless [`HttpOptions::allow_any_host`] is set.
    pub allowed_hosts: Vec<String>,
    /// Accept any `Host` header (default off). Only behind a proxy that checks it, or
    /// with a bearer token.
    pub allow_any_host: bool,
    /// Browser origins accepted in the `Origin` header besides the loopback ones, as
    /// `scheme://host[:port]` (the port defaults to the scheme's), or `null`.
    pub allowed_origins: Vec<String>,
    /// How long a session lives without activity (default 300 s; `None`: until the
    /// client ends it or the server stops). The timer stands still while a request of
    /// the session is in progress or a stream of it is open, and restarts when the last
    /// one ends.
    pub session_idle_timeout: Option<Duration>,
    /// How long a client has to send a request's headers (default 10 s), counted from
    /// the connection's start or the end of its previous response; then the connection
    /// is closed.
    pub header_read_timeout: Duration,
    /// How long a client has to send a request's body once its headers arrived
    /// (default 30 s); then it is answered `408`.
    pub body_read_timeout: Duration,
    /// The largest request body read (default 4 MiB), for every `POST` whatever its
    /// `Content-Type` and whatever the credentials: a `Content-Length` above it is
    /// answered `413` before any of the body is read, and a body that grows past it while
    /// it streams in (chunked) is answered `413` as soon as it does. Either way the
    /// connection is closed. A server never holds more than this of a request in memory.
    pub max_body_bytes: usize,
    /// The most connections served at once (default 512; keep it below the process's
    /// descriptor limit). At the cap, a new connection takes the place of the one
    /// *waiting* longest (still sending its request head, or idle between requests),
    /// which is closed; connections with a request in progress (a call, an open event
    /// stream) are never closed for it. When every connection is in a request, the new
    /// one is answered `503` and closed at once. So connections stalled in their
    /// headers, however many, cannot lock out other clients. When the process runs out
    /// of descriptors, the connection waiting longest is closed the same way.
    pub max_connections: usize,
    /// Answer `GET /healthz` (liveness) and `GET /readyz` (readiness) before any other
    /// step, with no credentials (default on; see [`serve_http`]). Off, those paths are
    /// the MCP endpoint's like any other.
    pub health: bool,
    /// Serve as an OAuth 2.1 resource server (feature `oauth`): every request must carry
    /// an access token of the issuer, for this server (see [`crate::oauth`]). Not with
    /// [`HttpOptions::bearer_token`].
    #[cfg(feature = "oauth")]
    pub oauth: Option<crate::oauth::OAuthOptions>,
}

/// The default of [`HttpOptions::max_body_bytes`].
const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// The default of [`HttpOptions::session_idle_timeout`].
const DEFAULT_SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            bind: SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0),
            path: "/mcp".to_string(),
            bearer_token: None,
            sessions: true,
            allowed_hosts: Vec::new(),
            allow_any_host: false,
            allowed_origins: Vec::new(),
            session_idle_timeout: Some(DEFAULT_SESSION_IDLE_TIMEOUT),
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_connections: 512,
            health: true,
            #[cfg(feature = "oauth")]
            oauth: None,
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

    /// Serve at this path instead of `/mcp` (see [`HttpOptions::path`]).
    #[must_use]
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Accept these `Host` header values too (see [`HttpOptions::allowed_hosts`]).
    #[must_use]
    pub fn allowed_hosts<I, S>(mut self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_hosts = hosts.into_iter().map(Into::into).collect();
        self
    }

    /// Accept any `Host` header (see [`HttpOptions::allow_any_host`]).
    #[must_use]
    pub fn allow_any_host(mut self, on: bool) -> Self {
        self.allow_any_host = on;
        self
    }

    /// Accept these browser origins too (see [`HttpOptions::allowed_origins`]).
    #[must_use]
    pub fn allowed_origins<I, S>(mut self, origins: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_origins = origins.into_iter().map(Into::into).collect();
        self
    }

    /// End a session after this long without activity, or never with `None` (see
    /// [`HttpOptions::session_idle_timeout`]).
    #[must_use]
    pub fn session_idle_timeout(mut self, timeout: impl Into<Option<Duration>>) -> Self {
        self.session_idle_timeout = timeout.into();
        self
    }

    /// Close a connection whose request headers take longer than this.
    #[must_use]
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// Answer `408` to a request whose body takes longer than this.
    #[must_use]
    pub fn body_read_timeout(mut self, timeout: Duration) -> Self {
        self.body_read_timeout = timeout;
        self
    }

    /// Read at most this many bytes of a request body (see
    /// [`HttpOptions::max_body_bytes`]).
    #[must_use]
    pub fn max_body_bytes(mut self, max: usize) -> Self {
        self.max_body_bytes = max;
        self
    }

    /// Answer the health and readiness paths (see [`HttpOptions::health`]).
    #[must_use]
    pub fn health(mut self, on: bool) -> Self {
        self.health = on;
        self
    }

    /// Serve at most this many connections at once.
    #[must_use]
    pub fn max_connections(mut self, max: usize) -> Self {
        self.max_connections = max;
        self
    }

    /// Check OAuth access tokens (see [`HttpOptions::oauth`]).
    #[cfg(feature = "oauth")]
    #[must_use]
    pub fn oauth(mut self, oauth: crate::oauth::OAuthOptions) -> Self {
        self.oauth = Some(oauth);
        self
    }
}

/// A running Streamable HTTP server: it serves in the background until
/// [`HttpServer::shutdown`], [`HttpServer::drain`] or its [`HttpServer::stopper`].
///
/// Dropping the handle does not stop the server, but a program that drops it and
/// returns from `main` exits at once: keep it, and await [`HttpServer::wait`] (or a
/// signal, then [`HttpServer::drain`]).
///
/// ```no_run
/// # async fn run(server: dsh_mcp::McpServer) -> std::io::Result<()> {
/// let http = dsh_mcp::serve_http(&server, dsh_mcp::HttpOptions::default()).await?;
/// eprintln!("serving MCP at {}", http.url());
/// tokio::signal::ctrl_c().await?;
/// http.drain(std::time::Duration::from_secs(30)).await
/// # }
/// ```
///
/// Leaving the handle unused is a warning (`unused_must_use`): this compiles with the
/// warning denied,
///
/// ```no_run
/// #![deny(unused_must_use)]
/// async fn run(server: dsh_mcp::McpServer) -> std::io::Result<()> {
///     let http = dsh_mcp::serve_http(&server, dsh_mcp::HttpOptions::default()).await?;
///     http.wait().await
/// }
/// ```
///
/// and this, which drops the handle, does not:
///
/// ```compile_fail
/// #![deny(unused_must_use)]
/// async fn run(server: dsh_mcp::McpServer) -> std::io::Result<()> {
///     dsh_mcp::serve_http(&server, dsh_mcp::HttpOptions::default()).await?;
///     Ok(())
/// }
/// ```
#[derive(Debug)]
#[must_use = "the server runs only while the program does: keep this handle and await \
              `.wait()` (or a signal, then `.drain(grace)` or `.shutdown()`), or `main` \
              returns and the process exits at once"]
pub struct HttpServer {
    addr: SocketAddr,
    path: String,
    stop: CancellationToken,
    lifecycle: Arc<lifecycle::Lifecycle>,
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

    /// Drain, then stop: what to do on `SIGTERM`.
    ///
    /// At once, `GET /readyz` answers `503` (so a load balancer takes the instance out)
    /// and every new request is answered `503` with `Retry-After: 1` and
    /// `Connection: close` (so a client or proxy retries it on another instance). The
    /// requests in progress (calls, their answers still streaming) go on; when the last
    /// one ends, or after `grace`, the server stops as [`HttpServer::shutdown`] does,
    /// ending those still running. `GET /healthz` answers `200` until the end.
    ///
    /// # Errors
    ///
    /// As [`HttpServer::wait`].
    pub async fn drain(self, grace: Duration) -> io::Result<()> {
        self.lifecycle.start_draining();
        if tokio::time::timeout(grace, self.lifecycle.idle())
            .await
            .is_err()
        {
            tracing::warn!(
                in_flight = self.lifecycle.in_flight(),
                "dsh-mcp: requests still in progress after the drain's {grace:?}; stopping them"
            );
        }
        self.shutdown().await
    }

    /// The requests in progress now (a call counts until its answer has been sent).
    pub fn requests_in_progress(&self) -> usize {
        self.lifecycle.in_flight()
    }
}

/// Serve `server` over Streamable HTTP until [`HttpServer::shutdown`] (see
/// [`HttpOptions`]).
///
/// Every request goes through, in this order:
///
/// 0. with [`HttpOptions::health`] (the default), `GET` (or `HEAD`) `/healthz` is answered
///    `200` while the process serves (liveness), and `GET /readyz` `200` when the server
///    takes requests and its task store answers, else `503` with the reason (the store
///    is unreachable, or the server drains, see [`HttpServer::drain`]): what a load
///    balancer should check. Neither needs credentials nor says more than that. While
///    the server drains, every other request is answered `503`;
/// 1. the `Origin` check: a request without `Origin` (a non-browser client) or from a
///    loopback origin (`http` or `https` on `localhost`, `127.0.0.1` or `[::1]`, any
///    port) passes, and so do the origins of [`HttpOptions::allowed_origins`]; any other
///    is answered `403` before anything runs;
/// 2. the bearer token, when set: `401` without `Authorization: Bearer <token>` (the
///    scheme in any case, the token compared in constant time); or with
///    [`HttpOptions::oauth`], the access token (`401` with a `WWW-Authenticate`
///    challenge naming the protected-resource metadata, see [`crate::oauth`]), which is
///    then removed from the request, and the session's principal (another's session is
///    `404`);
/// 3. the path: [`HttpOptions::path`] or below it, any other is `404`;
/// 4. for every `POST`, the body, read here and nowhere else, whole, within
///    [`HttpOptions::body_read_timeout`] (else `408`) and [`HttpOptions::max_body_bytes`]
///    (else `413`, refused on its `Content-Length` before any byte is read, or as soon as
///    a streamed body passes the limit); a `Content-Type` other than JSON is then
///    answered `415`; a JSON body that is not JSON is answered `400` with a JSON-RPC parse
///    error (`-32700`, `id: null`), JSON that is no JSON-RPC message `400` with an invalid
///    request error (`-32600`);
/// 5. with [`HttpOptions::oauth`] and tools that need scopes, a `tools/call` beyond the
///    token's scope is answered `403` (`error="insufficient_scope"`) and does not run;
/// 6. each message read as the client sent it (the arguments' exact text, ids in flight);
/// 7. rmcp's Streamable HTTP service: the `Host` check (`403`), sessions, the calls.
///
/// With [`HttpOptions::oauth`], the protected-resource metadata is served without a
/// token (see [`crate::oauth`]).
///
/// Connections get `TCP_NODELAY`; the request headers must arrive within
/// [`HttpOptions::header_read_timeout`] (also between requests on a kept-alive
/// connection); beyond [`HttpOptions::max_connections`] open connections, a new one is
/// answered `503` and closed at once.
///
/// A session ends after [`HttpOptions::session_idle_timeout`] without activity: the timer
/// runs only while no request of the session is in progress and no stream of it is open,
/// from the end of the last one, so a long call keeps its session and gets its result.
///
/// # Errors
///
/// When the address cannot be bound, [`HttpOptions::path`] does not start with `/`, an
/// entry of [`HttpOptions::allowed_origins`] is not an origin,
/// [`HttpOptions::max_connections`] or [`HttpOptions::max_body_bytes`] is 0, or (with
/// [`HttpOptions::oauth`]) a bearer token is set too, the audience is not a URL, or the
/// issuer's metadata or keys cannot be read.
pub async fn serve_http(
    server: impl Into<McpServer>,
    options: HttpOptions,
) -> io::Result<HttpServer> {
    let server: McpServer = server.into();
    let origins = Origins::new(&options.allowed_origins)?;
    check_options(&options)?;
    server.start_updates().await;
    let listener = tokio::net::TcpListener::bind(options.bind).await?;
    let addr = listener.local_addr()?;
    #[cfg(feature = "oauth")]
    let resource = match &options.oauth {
        Some(oauth) => Some(
            crate::oauth::Resource::start(
                oauth,
                format!("http://{addr}{}", options.path),
                &options.path,
                server.tool_scopes(),
            )
            .await?,
        ),
        None => None,
    };
    let stop = CancellationToken::new();
    let lifecycle = Arc::new(lifecycle::Lifecycle::default());
    // Requests without a session share this context, closed when the server stops.
    let stateless = Arc::new(crate::server::StatelessContext::default());
    let (mcp, sessions) = mcp_service(&server, &options, addr, &stop, stateless.clone());
    let steps = Arc::new(Steps {
        origins,
        bearer: options
            .bearer_token
            .clone()
            .map(|token| Arc::from(token.into_bytes())),
        limits: BodyLimits {
            timeout: options.body_read_timeout,
            max_bytes: options.max_body_bytes,
        },
        messages: messages::Messages::new(server.registry().jobs().is_some()),
        #[cfg(feature = "oauth")]
        resource: resource.clone(),
        mcp,
        sessions,
        path: options.path.trim_end_matches('/').to_string(),
        health: options.health,
        lifecycle: lifecycle.clone(),
        store: server.store().clone(),
    });
    // One service runs every step of a request to the MCP path, in order (see
    // `endpoint`); the metadata of OAuth is routed beside it.
    #[allow(unused_mut)]
    let mut router =
        axum::Router::new().fallback_service(axum::routing::any(endpoint).with_state(steps));
    #[cfg(feature = "oauth")]
    if let Some(resource) = &resource {
        // The metadata is public: no token, no Origin check.
        router = resource.routes().merge(router);
    }

    let limits = accept::Limits {
        header_read_timeout: options.header_read_timeout,
        max_connections: options.max_connections,
    };
    let serving = accept::serve(listener, router, limits, stop.clone());
    let task = tokio::spawn(async move {
        let result = serving.await;
        stateless.close().await;
        result
    });
    Ok(HttpServer {
        addr,
        path: options.path,
        stop,
        lifecycle,
        task,
    })
}

/// rmcp's Streamable HTTP service for `server`: a handler per session (or per request
/// without one, in the `stateless` context), sessions that end when idle or when `stop`
/// fires.
fn mcp_service(
    server: &McpServer,
    options: &HttpOptions,
    addr: SocketAddr,
    stop: &CancellationToken,
    stateless: Arc<crate::server::StatelessContext>,
) -> (McpService, Arc<sessions::IdleSessions>) {
    let keeps_sessions = options.sessions;
    let factory = server.clone();
    let sessions = Arc::new(sessions::IdleSessions::new(
        options.session_idle_timeout,
        stop.child_token(),
    ));
    let service = StreamableHttpService::new(
        move || Ok(factory.http_handler(keeps_sessions, stateless.clone())),
        sessions.clone(),
        rmcp_config(options, addr, stop),
    );
    (service, sessions)
}

/// The options no server can start with: a path that is not one, no connection allowed,
/// or two credentials.
fn check_options(options: &HttpOptions) -> io::Result<()> {
    if !options.path.starts_with('/') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("HttpOptions::path: {:?} must start with `/`", options.path),
        ));
    }
    if options.max_body_bytes == 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "HttpOptions::max_body_bytes: must be at least 1",
        ));
    }
    if options.max_connections == 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "HttpOptions::max_connections: must be at least 1",
        ));
    }
    #[cfg(feature = "oauth")]
    if options.oauth.is_some() && options.bearer_token.is_some() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "HttpOptions: a static bearer token and OAuth cannot both be set",
        ));
    }
    Ok(())
}

/// rmcp's service configuration: the session mode, the stop token and the hosts a
/// request's `Host` may name (loopback, the bound address and the configured ones).
fn rmcp_config(
    options: &HttpOptions,
    addr: SocketAddr,
    stop: &CancellationToken,
) -> StreamableHttpServerConfig {
    let config = StreamableHttpServerConfig::default()
        .with_max_request_body_bytes(options.max_body_bytes)
        .with_legacy_session_mode(options.sessions)
        .with_cancellation_token(stop.child_token());
    if options.allow_any_host {
        return config.disable_allowed_hosts();
    }
    let mut hosts = config.allowed_hosts.clone();
    if !addr.ip().is_loopback() && !addr.ip().is_unspecified() {
        hosts.push(addr.ip().to_string());
    }
    hosts.extend(options.allowed_hosts.iter().cloned());
    config.with_allowed_hosts(hosts)
}

/// rmcp's Streamable HTTP service as [`serve_http`] sets it up.
type McpService = StreamableHttpService<crate::server::Handler, sessions::IdleSessions>;
