//! `--mcp 'CMD ARGS'`, `--mcp-http URL` and their deferred forms: the tools of external
//! MCP servers, added to the host's global layer for every command.
//!
//! Each `--mcp 'CMD ARGS'` starts `CMD` as a child MCP server on stdio (the line is
//! split into words like a POSIX shell would, without running one); each `--mcp-http
//! URL` connects to a remote server over Streamable HTTP. A tool whose schema is outside
//! the vocabulary, or whose name is taken, is reported on stderr with the reason, and
//! the others are still added. What an imported server asks during a call (forms,
//! sampling, roots, logs, progress) goes to the caller of the call.
//!
//! # OAuth
//!
//! A remote server that requires OAuth 2.1 answers `401`; with `--mcp-oauth` (implied
//! by every other `--mcp-oauth-*` flag) the import authorizes (`dsh_mcp::oauth_client`):
//! discovery of the server's authorization server, the client's registration (dynamic,
//! unless `--mcp-oauth-client-id` names a pre-registered client), PKCE, the token
//! request. The grant is the authorization code by default: the authorization URL is
//! printed on stderr for the user to open, and a listener on `127.0.0.1` (its URL the
//! redirect URI, see [`crate::loopback`]) receives the authorization server's redirect
//! and completes the flow. `--mcp-oauth-grant client-credentials` authorizes the client
//! as itself, with the secret read from the environment variable that
//! `--mcp-oauth-client-secret-env` names (never from the command line). Tokens live in
//! memory, or in `--mcp-oauth-token-file PATH` (mode 0600), reused by the next run.

use std::path::PathBuf;
use std::time::Duration;

use dsh_mcp::oauth_client::{
    AuthorizationCallback, AuthorizeFuture, FileTokenStore, OAuthConfig, Redirect,
};
use dsh_mcp::rmcp::model::ServerPeerInfo;
use dsh_mcp::{ClientBuilder, ConnectError, McpClient};
use dsh_runtime::{Namespace, RegistrationGuard};
use dsh_tools::host::Host;

use crate::loopback::Loopback;

/// The import flags, global to every command.
#[derive(clap::Args, Debug, Default)]
pub(crate) struct ImportArgs {
    /// Add the tools of an external MCP server, started from this command line
    /// (repeatable).
    #[arg(long = "mcp", global = true, value_name = "CMD ARGS")]
    pub(crate) mcp: Vec<String>,
    /// Like `--mcp`, with the server's tools deferred (found through tool search, not
    /// sent in a model's first request) and grouped in a namespace named after the
    /// server (repeatable).
    #[arg(long = "mcp-deferred", global = true, value_name = "CMD ARGS")]
    pub(crate) mcp_deferred: Vec<String>,
    /// Add the tools of a remote MCP server on Streamable HTTP at this URL (repeatable).
    /// A server that requires OAuth needs --mcp-oauth or another --mcp-oauth-* flag.
    #[arg(long = "mcp-http", global = true, value_name = "URL")]
    pub(crate) mcp_http: Vec<String>,
    /// Like `--mcp-http`, with the server's tools deferred and grouped in a namespace
    /// named after the server (repeatable).
    #[arg(long = "mcp-http-deferred", global = true, value_name = "URL")]
    pub(crate) mcp_http_deferred: Vec<String>,
    #[command(flatten)]
    pub(crate) oauth: OAuthArgs,
}

/// The OAuth flags of `--mcp-http`.
#[derive(clap::Args, Debug, Default)]
pub(crate) struct OAuthArgs {
    /// Authorize with OAuth 2.1 at the servers of --mcp-http that answer 401: print the
    /// authorization URL to open on stderr and receive the redirect on 127.0.0.1.
    /// Implied by every other --mcp-oauth-* flag.
    #[arg(long = "mcp-oauth", global = true)]
    pub(crate) enabled: bool,
    /// The client id registered with the authorization server (default: register
    /// dynamically).
    #[arg(long = "mcp-oauth-client-id", global = true, value_name = "ID")]
    pub(crate) client_id: Option<String>,
    /// The environment variable holding the client's secret (a confidential client;
    /// the secret is never given on the command line).
    #[arg(
        long = "mcp-oauth-client-secret-env",
        global = true,
        value_name = "VAR"
    )]
    pub(crate) client_secret_env: Option<String>,
    /// The grant: `authorization-code` (a user authorizes in a browser; the default) or
    /// `client-credentials` (the client as itself; needs --mcp-oauth-client-id and
    /// --mcp-oauth-client-secret-env).
    #[arg(long = "mcp-oauth-grant", global = true, value_name = "GRANT")]
    pub(crate) grant: Option<GrantArg>,
    /// The scopes to ask for, separated by spaces (default: those the server names in
    /// its challenge, else in its metadata).
    #[arg(long = "mcp-oauth-scopes", global = true, value_name = "SCOPES")]
    pub(crate) scopes: Option<String>,
    /// Keep the tokens in this JSON file (mode 0600), reused by later runs (default: in
    /// memory). A relative PATH is relative to the working directory, not to --root.
    #[arg(long = "mcp-oauth-token-file", global = true, value_name = "PATH")]
    pub(crate) token_file: Option<PathBuf>,
    /// How long to wait for the authorization server's redirect after printing the
    /// authorization URL, in seconds (default 300).
    #[arg(long = "mcp-oauth-timeout", global = true, value_name = "SECS")]
    pub(crate) timeout: Option<u64>,
}

/// The values of `--mcp-oauth-grant`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GrantArg {
    /// A user authorizes in a browser.
    AuthorizationCode,
    /// The client authorizes as itself, with its secret.
    ClientCredentials,
}

/// How long the redirect is waited for by default.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

impl ImportArgs {
    /// The flags' own file paths (`--mcp-oauth-token-file`).
    pub(crate) fn files_mut(&mut self) -> Vec<&mut PathBuf> {
        self.oauth.token_file.iter_mut().collect()
    }

    /// Refuse flags that cannot take effect: an OAuth flag without a remote server to
    /// authorize with (`--mcp-http` or `--mcp-http-deferred`).
    ///
    /// # Errors
    ///
    /// The message, naming the flags given.
    pub(crate) fn check(&self) -> Result<(), String> {
        let given = self.oauth.given();
        if given.is_empty() || !self.mcp_http.is_empty() || !self.mcp_http_deferred.is_empty() {
            return Ok(());
        }
        let (flags, verb) = match given.as_slice() {
            [one] => ((*one).to_string(), "needs"),
            many => (many.join(", "), "need"),
        };
        Err(format!(
            "{flags} {verb} --mcp-http URL (or --mcp-http-deferred URL): OAuth authorizes \
             the import of a remote MCP server, and none is named"
        ))
    }
}

impl OAuthArgs {
    /// The OAuth flags given, in the order of the help.
    fn given(&self) -> Vec<&'static str> {
        [
            (self.enabled, "--mcp-oauth"),
            (self.client_id.is_some(), "--mcp-oauth-client-id"),
            (
                self.client_secret_env.is_some(),
                "--mcp-oauth-client-secret-env",
            ),
            (self.grant.is_some(), "--mcp-oauth-grant"),
            (self.scopes.is_some(), "--mcp-oauth-scopes"),
            (self.token_file.is_some(), "--mcp-oauth-token-file"),
            (self.timeout.is_some(), "--mcp-oauth-timeout"),
        ]
        .into_iter()
        .filter_map(|(given, flag)| given.then_some(flag))
        .collect()
    }

    /// Whether any OAuth flag was given.
    fn wanted(&self) -> bool {
        !self.given().is_empty()
    }

    /// The client's secret, read from the environment variable named.
    fn secret(&self) -> Result<Option<String>, String> {
        let Some(var) = &self.client_secret_env else {
            return Ok(None);
        };
        match std::env::var(var) {
            Ok(secret) if !secret.is_empty() => Ok(Some(secret)),
            _ => Err(format!(
                "--mcp-oauth-client-secret-env {var}: the environment variable {var} is not \
                 set (or empty)"
            )),
        }
    }

    /// The OAuth configuration the flags describe (`None` without any), with the
    /// redirect listener of the authorization code grant.
    async fn config(&self) -> Result<Option<OAuthConfig>, String> {
        if !self.wanted() {
            return Ok(None);
        }
        let secret = self.secret()?;
        let mut config = match self.grant.unwrap_or(GrantArg::AuthorizationCode) {
            GrantArg::ClientCredentials => {
                let (Some(id), Some(secret)) = (&self.client_id, secret) else {
                    return Err("--mcp-oauth-grant client-credentials needs \
                                --mcp-oauth-client-id ID and --mcp-oauth-client-secret-env VAR"
                        .to_string());
                };
                OAuthConfig::client_credentials(id.clone(), secret)
            }
            GrantArg::AuthorizationCode => {
                let loopback = Loopback::bind().await.map_err(|e| e.to_string())?;
                let timeout = self.timeout.map_or(DEFAULT_TIMEOUT, Duration::from_secs);
                let mut config = OAuthConfig::authorization_code(Browser { loopback, timeout })
                    .client_name("dsh-tools");
                if let Some(id) = &self.client_id {
                    config = config.client_id(id.clone());
                }
                if let Some(secret) = secret {
                    config = config.client_secret(secret);
                }
                config
            }
        };
        if let Some(scopes) = &self.scopes {
            config = config.scopes(scopes.split_whitespace());
        }
        if let Some(path) = &self.token_file {
            config = config.token_store(FileTokenStore::new(path.clone()));
        }
        Ok(Some(config))
    }
}

/// The user's browser, as far as `dsh-tools` reaches it: the authorization URL printed
/// on stderr, the redirect read by the loopback listener.
struct Browser {
    loopback: Loopback,
    timeout: Duration,
}

impl AuthorizationCallback for Browser {
    fn redirect_uri(&self) -> String {
        self.loopback.redirect_uri().to_string()
    }

    fn authorize<'a>(&'a self, url: &'a str) -> AuthorizeFuture<'a> {
        Box::pin(async move {
            eprintln!("dsh-tools: to authorize the import, open this URL in a browser: {url}");
            let redirect = self
                .loopback
                .wait(self.timeout)
                .await
                .map_err(|e| e.to_string())?;
            Ok(Redirect::Url(redirect.url))
        })
    }
}

/// The external servers added with `--mcp` and `--mcp-http`: their connections and
/// registrations, kept for the host's lifetime.
#[derive(Default)]
pub(crate) struct Imports {
    clients: Vec<McpClient>,
    registrations: Vec<RegistrationGuard>,
}

impl std::fmt::Debug for Imports {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Imports")
            .field("servers", &self.clients.len())
            .field("tools", &self.registrations.len())
            .finish()
    }
}

impl Imports {
    /// Unregister the tools and stop the servers.
    pub(crate) async fn close(self) {
        drop(self.registrations);
        for client in self.clients {
            let _ = client.cancel().await;
        }
    }
}

/// One server to import: how to reach it, the flag that named it, whether deferred.
struct Source<'a> {
    flag: &'static str,
    target: &'a str,
    http: bool,
    defer: bool,
}

/// The servers `args` name, in the order of the flags.
fn sources(args: &ImportArgs) -> Vec<Source<'_>> {
    fn of<'a>(
        targets: &'a [String],
        flag: &'static str,
        http: bool,
        defer: bool,
    ) -> impl Iterator<Item = Source<'a>> {
        targets.iter().map(move |target| Source {
            flag,
            target,
            http,
            defer,
        })
    }
    of(&args.mcp, "--mcp", false, false)
        .chain(of(&args.mcp_deferred, "--mcp-deferred", false, true))
        .chain(of(&args.mcp_http, "--mcp-http", true, false))
        .chain(of(
            &args.mcp_http_deferred,
            "--mcp-http-deferred",
            true,
            true,
        ))
        .collect()
}

/// Connect to every server of `args` and register its tools in the host's global
/// layer; the deferred servers' tools are deferred and grouped in a namespace named
/// after the server. Tools outside the vocabulary, or whose name is taken or invalid,
/// are reported on stderr and skipped.
///
/// # Errors
///
/// When a server cannot be reached (or started), refuses the authorization, or does
/// not answer the handshake or `tools/list`; the servers imported before are closed.
pub(crate) async fn import_all(host: &Host, args: &ImportArgs) -> Result<Imports, String> {
    let mut imports = Imports::default();
    let sources = sources(args);
    // The imported servers know this host by its own name.
    let mut builder = ClientBuilder::new("dsh-tools", env!("CARGO_PKG_VERSION"));
    let has_http = sources.iter().any(|s| s.http);
    let oauth = if has_http {
        args.oauth.config().await?
    } else {
        None
    };
    let with_oauth = oauth.is_some();
    if let Some(oauth) = oauth {
        builder = builder.oauth(oauth);
    }
    for source in sources {
        let named = format!("{} {:?}", source.flag, source.target);
        let connected = if source.http {
            builder.connect_http(source.target).await
        } else {
            builder.connect_command(source.target).await
        };
        let client = match connected {
            Ok(client) => client,
            Err(e) => {
                imports.close().await;
                return Err(format!("{named}: {}", connect_error(&e, with_oauth)));
            }
        };
        if let Err(e) = imports.add(host, client, &source, &named).await {
            imports.close().await;
            return Err(e);
        }
    }
    Ok(imports)
}

impl Imports {
    /// List `client`'s tools and register them; keep the connection.
    async fn add(
        &mut self,
        host: &Host,
        client: McpClient,
        source: &Source<'_>,
        named: &str,
    ) -> Result<(), String> {
        let mut options = dsh_mcp::ImportOptions::new().defer_loading(source.defer);
        if source.defer {
            options = options.namespace(server_namespace(
                client.peer().peer_info().as_deref(),
                source,
            ));
        }
        let imported = match dsh_mcp::import_from(&client, &options).await {
            Ok(imported) => imported,
            Err(e) => {
                let _ = client.cancel().await;
                return Err(format!("{named}: cannot list its tools: {e}"));
            }
        };
        for rejected in &imported.rejected {
            eprintln!("warning: {named}: {rejected}");
        }
        for tool in imported.tools {
            let name = tool.definition().name.to_string();
            match host.registry().register_dyn(tool) {
                Ok(registration) => self.registrations.push(registration.unregister_on_drop()),
                Err(e) => eprintln!("warning: {named}: tool {name:?} not added: {e}"),
            }
        }
        self.clients.push(client);
        Ok(())
    }
}

/// A connection's error with its causes; when the server wants authorization and no
/// OAuth flag was given, the flags to pass instead.
fn connect_error(e: &ConnectError, with_oauth: bool) -> String {
    let mut chain = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        let text = cause.to_string();
        if !chain.contains(&text) {
            chain.push_str(": ");
            chain.push_str(&text);
        }
        source = cause.source();
    }
    // rmcp's transport error for a 401 ("Auth required"), inside the handshake's.
    let unauthorized = chain.contains("Auth required");
    if unauthorized && !with_oauth {
        "the server requires OAuth authorization (it answered 401): pass --mcp-oauth to \
         authorize in a browser (with --mcp-oauth-client-id ID for a pre-registered \
         client), or --mcp-oauth-grant client-credentials with --mcp-oauth-client-id ID \
         and --mcp-oauth-client-secret-env VAR"
            .to_string()
    } else {
        chain
    }
}

/// The namespace of a deferred server: its name as the server gives it (in the
/// characters a namespace allows, at most 64), described by its title or
/// instructions.
fn server_namespace(info: Option<&ServerPeerInfo>, source: &Source<'_>) -> Namespace {
    let server = info.and_then(|i| i.server_info.as_ref());
    let name = server.map_or("", |s| s.name.as_str());
    let title = server.and_then(|s| s.title.as_deref());
    let instructions = info.and_then(|i| i.instructions.as_deref());
    let mut ns: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if ns.is_empty() {
        ns = "mcp_server".to_string();
    }
    let mut description = format!("Tools of the MCP server {}", title.unwrap_or(name));
    if name.is_empty() && title.is_none() {
        let how = if source.http { "at" } else { "started with" };
        description = format!("Tools of the MCP server {how} `{}`", source.target);
    }
    if let Some(text) = instructions.map(str::trim).filter(|t| !t.is_empty()) {
        description.push_str(": ");
        description.push_str(text);
    } else {
        description.push('.');
    }
    Namespace::new(ns, description)
}
