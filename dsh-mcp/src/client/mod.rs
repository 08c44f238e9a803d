//! dsh-mcp's MCP client: [`ClientBuilder`], the connection it makes ([`McpClient`])
//! and the handler relaying the server's requests to the calls that caused them
//! ([`relay`]).

#[cfg(feature = "oauth-client")]
pub mod oauth;
pub(crate) mod relay;
pub(crate) mod trace;

use std::fmt;
use std::process::Stdio;
use std::time::Duration;

use dsh_runtime::caller::{CallerRoute, RequestKind};
use rmcp::RoleClient;
use rmcp::model::{ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt as _, RunningService};
use rmcp::transport::{IntoTransport, TokioChildProcess};

pub use relay::ClientRelay;
use relay::{KindKey, Kinds};

/// A connection to an MCP server, as [`ClientBuilder`] (and [`crate::connect_command`],
/// [`crate::connect_http`]) return it. Keep it alive while its imported tools are
/// registered: dropping it closes the connection (and stops a child server).
pub type McpClient = RunningService<RoleClient, ClientRelay>;

/// Why connecting to a server failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum ConnectError {
    /// The command line is empty or its quoting is unbalanced.
    CommandLine(String),
    /// The server process could not be started.
    Spawn(std::io::Error),
    /// The MCP handshake failed.
    Handshake(Box<rmcp::service::ClientInitializeError>),
    /// The HTTP client could not be built (its TLS backend did not start).
    HttpClient(Box<dyn std::error::Error + Send + Sync>),
    /// A header given to [`ClientBuilder::header`] is not a valid HTTP header.
    Header(String),
    /// The server chose a revision the client did not offer.
    Revision {
        /// The revisions the client offered.
        offered: Vec<String>,
        /// The revision the server answered with.
        server: String,
    },
    /// The handshake did not end within [`ClientBuilder::request_timeout`].
    Timeout(Duration),
    /// The builder offers no revision.
    NoRevision,
    /// The server redirected to another origin, which the client does not follow
    /// (its session and credentials stay with the server's origin).
    Redirect {
        /// The URL that redirected.
        from: String,
        /// Where it redirected to.
        to: String,
    },
    /// Authorizing with the server failed (feature `oauth-client`).
    #[cfg(feature = "oauth-client")]
    OAuth(oauth::OAuthError),
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConnectError::CommandLine(line) => {
                write!(f, "cannot split the command line {line:?} into words")
            }
            ConnectError::Spawn(e) => write!(f, "cannot start the MCP server: {e}"),
            ConnectError::Handshake(e) => write!(f, "MCP handshake failed: {e}"),
            ConnectError::HttpClient(e) => write!(f, "cannot build the HTTP client: {e}"),
            ConnectError::Header(why) => write!(f, "invalid HTTP header: {why}"),
            ConnectError::Revision { offered, server } => write!(
                f,
                "the server speaks MCP revision {server}, and the client offered {}",
                offered.join(", ")
            ),
            ConnectError::Timeout(d) => {
                write!(
                    f,
                    "the MCP handshake did not end within {} ms",
                    d.as_millis()
                )
            }
            ConnectError::NoRevision => f.write_str("the client offers no MCP revision"),
            ConnectError::Redirect { from, to } => write!(
                f,
                "the MCP server {from} redirects to {to}, another origin: not followed"
            ),
            #[cfg(feature = "oauth-client")]
            ConnectError::OAuth(e) => write!(f, "OAuth: {e}"),
        }
    }
}

impl std::error::Error for ConnectError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ConnectError::Spawn(e) => Some(e),
            ConnectError::Handshake(e) => Some(&**e),
            ConnectError::HttpClient(e) => Some(&**e),
            #[cfg(feature = "oauth-client")]
            ConnectError::OAuth(e) => Some(e),
            _ => None,
        }
    }
}

/// How a client connects to an MCP server whose tools are imported
/// ([`crate::import_from`]), over stdio (a child process) or Streamable HTTP.
///
/// It sets what the client tells the server and how it talks:
///
/// - its name and version (the host's: pass your crate's, e.g.
///   `env!("CARGO_PKG_NAME")`), and title;
/// - the revisions it offers, newest first: by default 2026-07-28, falling back to the
///   `initialize` handshake of 2025-11-25 when the server answers `server/discover` as a
///   server of an earlier revision does (with an error) or not at all; a server that
///   answers with a revision the client did not offer is refused
///   ([`ConnectError::Revision`], naming both sides);
/// - the capabilities it declares, which are the requests it relays: the server's forms
///   (`elicitation`, form and URL modes), sampling and roots requests reach the
///   [`CallerHandler`](dsh_runtime::caller::CallerHandler) of the call that invoked the
///   imported tool, with its logs and progress (see [`ClientRelay`]); a request of a
///   kind the client did not declare gets the protocol's error (`-32601`), one nobody
///   can answer an error saying why, never a wait;
/// - a handler for what comes outside any call ([`ClientBuilder::caller`]);
/// - a timeout for the handshake and each request, and HTTP headers.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use dsh_mcp::ClientBuilder;
///
/// let client = ClientBuilder::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"))
///     .request_timeout(std::time::Duration::from_secs(60))
///     .connect_command("npx -y @modelcontextprotocol/server-everything")
///     .await?;
/// let imported = dsh_mcp::import_from(&client, &dsh_mcp::ImportOptions::new()).await?;
/// # let _ = imported;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct ClientBuilder {
    name: String,
    version: String,
    title: Option<String>,
    revisions: Vec<ProtocolVersion>,
    kinds: Kinds,
    fallback: Option<CallerRoute>,
    request_timeout: Option<Duration>,
    headers: Vec<(String, String)>,
    bearer_token: Option<String>,
    #[cfg(feature = "oauth-client")]
    oauth: Option<oauth::OAuthConfig>,
    /// The handshake of [`connect_command`] and [`connect_http`] before the builder:
    /// `initialize` offering the first revision, the server's answer taken as it is.
    initialize_only: bool,
}

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("name", &self.name)
            .field("version", &self.version)
            .field("revisions", &self.revisions)
            .field("relays", &self.kinds)
            .field("request_timeout", &self.request_timeout)
            .finish_non_exhaustive()
    }
}

/// The revisions a client offers by default, newest first.
pub const DEFAULT_REVISIONS: [ProtocolVersion; 2] =
    [ProtocolVersion::V_2026_07_28, ProtocolVersion::V_2025_11_25];

impl ClientBuilder {
    /// A client named `name` at `version` (the host's own: the server sees them in
    /// `clientInfo`), offering [`DEFAULT_REVISIONS`], relaying every request kind, with
    /// no timeout of its own.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> ClientBuilder {
        ClientBuilder {
            name: name.into(),
            version: version.into(),
            title: None,
            revisions: DEFAULT_REVISIONS.to_vec(),
            kinds: [KindKey::Form, KindKey::Url, KindKey::Sample, KindKey::Roots]
                .into_iter()
                .collect(),
            fallback: None,
            request_timeout: None,
            headers: Vec::new(),
            bearer_token: None,
            #[cfg(feature = "oauth-client")]
            oauth: None,
            initialize_only: false,
        }
    }

    /// The client's human-readable title (`clientInfo.title`).
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The revisions offered, in order of preference. Revisions with the stateless
    /// lifecycle (2026-07-28 on) are tried first with `server/discover`; the first one
    /// with the `initialize` handshake (2025-11-25 and earlier) is the fallback.
    pub fn revisions(mut self, revisions: impl IntoIterator<Item = ProtocolVersion>) -> Self {
        self.revisions = revisions.into_iter().collect();
        self
    }

    /// Relay (and declare the capability of) exactly these request kinds: none turns
    /// the relay off, and the client declares no capability.
    pub fn relay(mut self, kinds: impl IntoIterator<Item = RequestKind>) -> Self {
        self.kinds = kinds.into_iter().filter_map(KindKey::of).collect();
        self
    }

    /// The handler answering the server's requests and logs that come outside any call
    /// (or during a call without a handler of its own).
    pub fn caller(mut self, handler: impl Into<CallerRoute>) -> Self {
        self.fallback = Some(handler.into());
        self
    }

    /// A bound on the handshake and on each request the client sends.
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = Some(timeout);
        self
    }

    /// An HTTP header sent with every request (Streamable HTTP only).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Send `Authorization: Bearer <token>` (Streamable HTTP only).
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer_token = Some(token.into());
        self
    }

    /// Authorize with OAuth 2.1 on Streamable HTTP (feature `oauth-client`; see the
    /// [`oauth_client`](crate::oauth_client) module): a server's 401 starts an
    /// authorization as `config` says, a 403 `insufficient_scope` a step-up, and the
    /// request is sent again with the new token. Replaces
    /// [`bearer_token`](Self::bearer_token).
    #[cfg(feature = "oauth-client")]
    pub fn oauth(mut self, config: oauth::OAuthConfig) -> Self {
        self.oauth = Some(config);
        self
    }

    /// The `initialize` / `server/discover` parameters: identity and capabilities.
    fn client_config(&self) -> ClientConfig {
        let mut info = Implementation::new(self.name.clone(), self.version.clone());
        info.title = self.title.clone();
        let mut config = ClientConfig::new(relay::capabilities(&self.kinds), info);
        let offered = if self.initialize_only {
            self.revisions.first()
        } else {
            self.revisions.iter().find(|r| r.has_initialize())
        };
        if let Some(revision) = offered {
            config.protocol_version = revision.clone();
        }
        config
    }

    fn lifecycle(&self) -> Result<ClientLifecycleMode, ConnectError> {
        if self.initialize_only {
            return Ok(ClientLifecycleMode::Initialize);
        }
        let modern: Vec<ProtocolVersion> = self
            .revisions
            .iter()
            .filter(|r| !r.has_initialize())
            .cloned()
            .collect();
        let legacy = self.revisions.iter().find(|r| r.has_initialize()).cloned();
        Ok(match (modern.is_empty(), legacy) {
            (true, None) => return Err(ConnectError::NoRevision),
            (true, Some(_)) => ClientLifecycleMode::Initialize,
            (false, None) => ClientLifecycleMode::Discover {
                preferred_versions: modern,
            },
            (false, Some(legacy)) => ClientLifecycleMode::Auto {
                preferred_versions: modern,
                legacy_version: Some(legacy),
            },
        })
    }

    fn relay_handler(&self) -> ClientRelay {
        ClientRelay::new(
            self.client_config(),
            self.kinds.clone(),
            self.fallback.clone(),
            self.request_timeout,
        )
    }

    /// Connect over `transport` (any rmcp client transport: a child process, a byte
    /// stream, Streamable HTTP).
    ///
    /// # Errors
    ///
    /// See [`ConnectError`].
    pub async fn connect<T, E, A>(&self, transport: T) -> Result<McpClient, ConnectError>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        self.connect_traced(trace::TracedTransport::new(transport.into_transport()))
            .await
    }

    /// [`connect`](Self::connect) over a transport whose requests get their client
    /// spans (see `trace`), the handshake's too.
    pub(crate) async fn connect_traced<T>(
        &self,
        transport: trace::TracedTransport<T>,
    ) -> Result<McpClient, ConnectError>
    where
        T: rmcp::transport::Transport<RoleClient> + Send + 'static,
        T::Error: std::error::Error + Send + Sync + 'static,
    {
        let lifecycle = self.lifecycle()?;
        let handshake = self
            .relay_handler()
            .serve_with_lifecycle(transport, lifecycle);
        let client = match self.request_timeout {
            Some(limit) => tokio::time::timeout(limit, handshake)
                .await
                .map_err(|_| ConnectError::Timeout(limit))?,
            None => handshake.await,
        }
        .map_err(|e| ConnectError::Handshake(Box::new(e)))?;
        self.check_revision(&client)?;
        Ok(client)
    }

    /// The server's revision must be one the client offered.
    fn check_revision(&self, client: &McpClient) -> Result<(), ConnectError> {
        let Some(info) = client.peer().peer_info() else {
            return Ok(());
        };
        if self.initialize_only {
            return Ok(());
        }
        if self.revisions.contains(&info.protocol_version) {
            return Ok(());
        }
        Err(ConnectError::Revision {
            offered: self.revisions.iter().map(|r| r.to_string()).collect(),
            server: info.protocol_version.to_string(),
        })
    }

    /// Start `command_line` (split like a POSIX shell does, without running one) as a
    /// child MCP server on stdio, its stderr inherited, and connect to it.
    ///
    /// # Errors
    ///
    /// See [`ConnectError`].
    pub async fn connect_command(&self, command_line: &str) -> Result<McpClient, ConnectError> {
        let words = shlex::split(command_line)
            .filter(|w| !w.is_empty())
            .ok_or_else(|| ConnectError::CommandLine(command_line.to_string()))?;
        let mut command = tokio::process::Command::new(&words[0]);
        command.args(&words[1..]);
        let (transport, _) = TokioChildProcess::builder(command)
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(ConnectError::Spawn)?;
        self.connect(transport).await
    }
}

#[cfg(feature = "http")]
mod http;

/// The builder of [`crate::connect_command`] and [`crate::connect_http`]: named after
/// this crate, with their handshake from before the builder (`initialize` offering
/// 2026-07-28, whatever the server answers taken), kept for their callers.
pub(crate) fn default_builder() -> ClientBuilder {
    let mut builder = ClientBuilder::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"));
    builder.initialize_only = true;
    builder
}

/// Start `command_line` as a child MCP server on stdio and connect to it, as a client
/// named `dsh-mcp` (see [`ClientBuilder::connect_command`] to name the host instead).
///
/// # Errors
///
/// See [`ConnectError`].
pub async fn connect_command(command_line: &str) -> Result<McpClient, ConnectError> {
    default_builder().connect_command(command_line).await
}

/// Connect to a Streamable HTTP server at `url` (feature `http`), sending
/// `Authorization: Bearer <token>` when a token is given, as a client named `dsh-mcp`
/// (see [`ClientBuilder::connect_http`] to name the host instead). `https://` URLs need
/// this crate's `https` feature.
///
/// # Errors
///
/// See [`ConnectError`].
#[cfg(feature = "http")]
pub async fn connect_http(
    url: &str,
    bearer_token: Option<&str>,
) -> Result<McpClient, ConnectError> {
    let mut builder = default_builder();
    if let Some(token) = bearer_token {
        builder = builder.bearer_token(token);
    }
    builder.connect_http(url).await
}
