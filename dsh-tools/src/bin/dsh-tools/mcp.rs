//! `dsh-tools mcp`: serve the host over MCP.
//!
//! # Serving
//!
//! Over stdio (the default) the process is one MCP session; with `--http ADDR` it serves
//! Streamable HTTP at `http://ADDR/mcp` and prints that URL on stderr. Clients on
//! protocol revisions with `initialize` get a session each (unless `--stateless`);
//! requests on later revisions are served statelessly, as that protocol has it. Those
//! share the server's stateless context: one scope set up as a session's is (its own
//! shell and job owner, code mode), whose tasks get unguessable ids bound to the
//! request's `Authorization` header and live an hour at most.
//! `--bearer-token-env VAR` requires `Authorization: Bearer` with the value of the
//! environment variable `VAR`.
//!
//! `--oauth-issuer URL` makes the server an OAuth 2.1 resource server instead (see
//! `dsh_mcp::oauth`): it accepts only JWT access tokens of that issuer, signed with a key
//! of its JWKS (`--oauth-jwks URL|FILE`, else found through the issuer's metadata) and
//! naming this server in `aud` (`--oauth-audience URL`, by default the served URL),
//! publishes protected-resource metadata, and lets each token call only the tools its
//! scopes allow (`--tool-scope RULE=SCOPE`; by default `bash`, `run_code` and the job
//! tools need `tools:exec`, read-only tools `tools:read`, destructive ones
//! `tools:write`). Tasks, approval states and sessions then belong to the token's
//! subject and client. `--max-calls-per-principal N` and `--max-tasks-per-principal N`
//! bound what one principal runs at once. `--oauth-leeway SECS` (default 30) is the
//! clock skew allowed on `exp` and `nbf`; `--oauth-jwks-refresh SECS` (default 30) how
//! often the JWKS is read again, which bounds how long a rotated key goes unseen.
//!
//! # Server files
//!
//! The files of server options (`--state-key-file PATH`, `--oauth-jwks FILE`) are
//! relative to the working directory, not to `--root`, and errors about them name their
//! absolute path. The server refuses to start when one lies inside the root (compared
//! canonical, so `..` and symbolic links do not hide it): the file tools would hand the
//! state keyring to any client allowed to `read`, and let any client allowed to `write`
//! add its own key to the JWKS file. (`bash` is not confined to the root: where it is
//! offered, the keyring is kept from it only by the file's permissions.)
//!
//! A request from a browser page is refused (`403`) unless its `Origin` is a loopback
//! one or given with `--allowed-origin` (repeatable); a request without `Origin` (any
//! other client) passes. The `Host` header must be a loopback name, the bound address or
//! a `--allowed-host` (repeatable), unless `--allow-any-host` says otherwise. Binding to
//! an address other than loopback without a token prints a warning, and so does binding
//! to an unspecified address (`0.0.0.0`, `[::]`) without `--allowed-host`. A session without
//! activity ends after `--session-idle-timeout SECS` (default 300; `0`: never); a call in
//! progress or an open stream counts as activity.
//!
//! `GET /healthz` (liveness) and `GET /readyz` (readiness: `503` while the store does not
//! answer or the server drains) need no credentials. On `SIGTERM` or Ctrl-C the server
//! drains: not ready, new requests answered `503`, the requests in progress given at
//! most `--drain-timeout SECS` (default 30), then it exits (with 128 + the signal, as
//! every `dsh-tools` command a signal stops).
//!
//! The server runs as long as its client does, so background jobs that `bash` starts
//! keep running between calls, and `job_output`/`job_kill` reach them in later calls.
//! Each session gets its own job runtime (a `bash`, `job_output`, `job_list` and
//! `job_kill` registered in the session's agent scope): its jobs are killed when the
//! session ends. Stateless HTTP requests share the host's runtime, whose jobs are killed
//! when the server stops.
//!
//! # Several instances
//!
//! `--store redis://HOST:PORT/DB` (or `DSH_MCP_STORE`) keeps tasks, approval states
//! and their wake-ups in Redis, under the prefix `--store-prefix` (default `dsh-mcp`),
//! so that several `dsh-tools mcp --http --stateless` servers behind one load balancer
//! answer for each other: a task started on one is read, answered and cancelled through
//! any, and an approval state minted by one is redeemed by another, once. They must
//! share a keyring (`--state-key-file` or `DSH_MCP_STATE_KEYS`). A Redis that does not
//! answer at start is an error. Background jobs started with `bash`'s
//! `run_in_background` (and `job_output`, `job_kill`) stay with the server that runs
//! them; a job started as a task is reached through the task.
//!
//! # Code mode
//!
//! `--code-mode code|both` (default `native`) presents each session's agent scope in
//! that mode (see the `dsh-code` crate), after the session's own tools are registered.
//! `both` lists every tool and `run_code`; `code` lists `run_code` alone, and a direct
//! call of any other tool is answered with the protocol's unknown-tool error, whose
//! message names `run_code`. Since an MCP client takes no system prompt from the server,
//! `run_code`'s description carries what a model in code mode is shown (in `code` the
//! code-only rule, then the typed SDK of the session's tools). Requests without a
//! session (stateless HTTP) run in the server's stateless context, presented the same
//! way.
//!
//! # Approval
//!
//! `--ask TOOLS` (comma-separated names) adds a pre-execute policy that asks for approval
//! before each call of those tools; `dsh-mcp` puts the question to the session's client
//! as an elicitation form, and a client that cannot ask its user gets a denial saying so.
//!
//! # Importing
//!
//! `--mcp 'CMD ARGS'` and `--mcp-http URL` add the tools of other MCP servers to the
//! host: see the `import` module.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use dsh_code::{CodeMode, Mode};
use dsh_mcp::oauth::JwksSource;
use dsh_mcp::{HttpOptions, McpServer, SessionGuard};
use dsh_runtime::RegistrationHandle;
use dsh_runtime::hooks::{PreDecision, pre_execute_fn};

use dsh_tools::bash::{BashConfig, Shell};
use dsh_tools::host::{Host, SpillDir};
use dsh_tools::jobs::Jobs;

/// The options of `dsh-tools mcp`.
#[derive(clap::Args, Clone, Debug, Default)]
pub(crate) struct McpArgs {
    /// Serve Streamable HTTP on this address (e.g. 127.0.0.1:8765) instead of stdio.
    /// Anything but a loopback address exposes a shell to the network: use a token.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,
    /// With --http: serve clients on protocol revisions with `initialize` statelessly
    /// too, instead of giving each a session (its own agent scope and jobs): they share
    /// the server's stateless context, as later revisions' requests do. Their
    /// cancellations then reach no call.
    #[arg(long, requires = "http")]
    pub stateless: bool,
    /// With --http: require `Authorization: Bearer <token>`, the token being the value
    /// of this environment variable.
    #[arg(long, value_name = "VAR", requires = "http")]
    pub bearer_token_env: Option<String>,
    /// With --http: also accept requests from browser pages of this origin
    /// (`scheme://host[:port]`); loopback origins and requests without `Origin` are
    /// always accepted, others are refused with 403. Repeatable.
    #[arg(long = "allowed-origin", value_name = "ORIGIN", requires = "http")]
    pub allowed_origins: Vec<String>,
    /// With --http: also accept this `Host` header value (`host` or `host:port`);
    /// loopback names and the bound address are always accepted. Repeatable.
    #[arg(long = "allowed-host", value_name = "HOST", requires = "http")]
    pub allowed_hosts: Vec<String>,
    /// With --http: accept any `Host` header (no defence against DNS rebinding; for a
    /// server behind a proxy that checks it).
    #[arg(long, requires = "http", conflicts_with = "allowed_hosts")]
    pub allow_any_host: bool,
    /// With --http: end a session after this many seconds without activity (a call in
    /// progress or an open stream is activity); 0 keeps sessions until the client ends
    /// them.
    #[arg(long, value_name = "SECS", default_value_t = 300, requires = "http")]
    pub session_idle_timeout: u64,
    /// With --http: on SIGTERM or Ctrl-C, drain before exiting: `/readyz` answers 503 and
    /// new requests get 503 (`Retry-After: 1`) at once, and the requests in progress get
    /// at most this long to end; then the server stops and the process exits (143 for
    /// SIGTERM, 130 for Ctrl-C).
    #[arg(long, value_name = "SECS", default_value_t = 30, requires = "http")]
    pub drain_timeout: u64,
    /// How each session is offered the tools: `native` (every tool), `code` (only
    /// `run_code`, whose description holds the typed SDK; direct calls of other tools are
    /// unknown) or `both` (every tool and `run_code`).
    #[arg(long, value_enum, value_name = "MODE", default_value_t = CodeModeArg::Native)]
    pub code_mode: CodeModeArg,
    /// Ask the client's user before each call of these tools (comma-separated names,
    /// e.g. `bash,write,edit`): the server sends an approval form (MCP elicitation) and
    /// runs the call only on a yes. A client that cannot ask its user gets a denial.
    #[arg(long, value_name = "TOOLS", value_delimiter = ',')]
    pub ask: Vec<String>,
    /// Seal approval states (protocol 2026-07-28) with the keys in this file: hexadecimal
    /// keys of at least 32 bytes (e.g. `openssl rand -hex 32`), separated by whitespace,
    /// commas or new lines, `#` lines being comments. The first seals, any opens, so
    /// servers sharing the file accept each other's states. Without it, the keys of the
    /// environment variable `DSH_MCP_STATE_KEYS` (same format), else one random key per
    /// process. A relative PATH is relative to the working directory, not to --root; a
    /// file inside --root is refused (the file tools could read it).
    #[arg(long, value_name = "PATH")]
    pub state_key_file: Option<PathBuf>,
    /// With --http: serve as an OAuth 2.1 resource server, accepting only JWT access
    /// tokens of this authorization server (its issuer URL, as tokens carry it in
    /// `iss`: `https://`, or `http://` to a loopback host). Publishes protected-resource
    /// metadata at `/.well-known/oauth-protected-resource/mcp`. Not with
    /// --bearer-token-env.
    #[arg(
        long,
        value_name = "URL",
        requires = "http",
        conflicts_with = "bearer_token_env"
    )]
    pub oauth_issuer: Option<String>,
    /// With --oauth-issuer: this server's canonical URL, which tokens must name in `aud`
    /// (default: the URL it serves at; required beyond loopback, where clients reach it
    /// by a public name).
    #[arg(long, value_name = "URL", requires = "oauth_issuer")]
    pub oauth_audience: Option<String>,
    /// With --oauth-issuer: the issuer's signing keys (JWKS), a URL (`https://`, or
    /// `http://` to a loopback host) or a file (default: the `jwks_uri` of the issuer's
    /// metadata). A relative FILE is relative to the working directory, not to --root; a
    /// file inside --root is refused (the file tools could change it).
    #[arg(
        long,
        value_name = "URL|FILE",
        requires = "oauth_issuer",
        value_parser = jwks_source
    )]
    pub oauth_jwks: Option<JwksSource>,
    /// With --oauth-issuer: read the JWKS again every this many seconds (at least every
    /// second), and for a token signed with a key id it lacks at most once in this many
    /// seconds: a key the issuer publishes or withdraws is seen within this time (plus
    /// one read), whatever tokens arrive.
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 30,
        requires = "oauth_issuer"
    )]
    pub oauth_jwks_refresh: u64,
    /// With --oauth-issuer: the clock skew allowed on a token's `exp` and `nbf`.
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 30,
        requires = "oauth_issuer"
    )]
    pub oauth_leeway: u64,
    /// With --oauth-issuer: the scope a tool needs, as `TOOL=SCOPE` (a tool name),
    /// `@read-only=SCOPE` (tools annotated read-only), `@destructive=SCOPE` or
    /// `*=SCOPE` (every other tool). Repeatable; replaces the default mapping
    /// (`bash`, `run_code` and the job tools need `tools:exec`, read-only tools
    /// `tools:read`, destructive tools `tools:write`).
    #[arg(
        long = "tool-scope",
        value_name = "RULE=SCOPE",
        requires = "oauth_issuer"
    )]
    pub tool_scopes: Vec<String>,
    /// With --oauth-issuer: list this scope in the metadata too (repeatable).
    #[arg(long = "oauth-scope", value_name = "SCOPE", requires = "oauth_issuer")]
    pub oauth_scopes: Vec<String>,
    /// With --http: the most calls in progress at once per principal (the token's
    /// subject and client; requests without an OAuth token count as one).
    #[arg(long, value_name = "N", requires = "http")]
    pub max_calls_per_principal: Option<usize>,
    /// With --http: the most tasks working at once per principal.
    #[arg(long, value_name = "N", requires = "http")]
    pub max_tasks_per_principal: Option<usize>,
    /// Keep tasks, approval states and their wake-ups in this store, shared by every
    /// server started with the same store and prefix: `redis://HOST:PORT/DB` (or
    /// `rediss://`, `redis://:PASSWORD@HOST:PORT/DB`). Without it, the store of the
    /// environment variable `DSH_MCP_STORE`, else the process's memory. A shared store
    /// needs a shared keyring (--state-key-file or `DSH_MCP_STATE_KEYS`).
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// The prefix of every key this server keeps in the store (default `dsh-mcp`, or the
    /// environment variable `DSH_MCP_STORE_PREFIX`): deployments sharing one Redis keep
    /// apart by their prefixes.
    #[arg(long, value_name = "NAME")]
    pub store_prefix: Option<String>,
}

/// The value of `--oauth-jwks`: a URL for text with a scheme, else a file.
fn jwks_source(text: &str) -> Result<JwksSource, String> {
    if text.is_empty() {
        return Err("give a URL or a file".to_string());
    }
    Ok(JwksSource::parse(text))
}

impl McpArgs {
    /// The file paths of the options (which `main` makes absolute, relative to the
    /// working directory).
    pub(crate) fn files_mut(&mut self) -> Vec<&mut PathBuf> {
        let mut files = Vec::new();
        if let Some(path) = &mut self.state_key_file {
            files.push(path);
        }
        if let Some(JwksSource::File(path)) = &mut self.oauth_jwks {
            files.push(path);
        }
        files
    }
}

/// Refuse the files the server trusts when they lie inside the root the file tools
/// serve (`root`, canonical): the state keyring (`--state-key-file`), which any client
/// allowed to `read` could copy and then seal approval states of its own, and the JWKS
/// file (`--oauth-jwks FILE`), which is public but which any client allowed to `write`
/// or `edit` could extend with a key of its own, and then sign any token (the server
/// reads it again while it runs). Paths are compared once canonical, so neither `..`
/// nor a symbolic link dodges the check; a file that cannot be resolved is left to the
/// read that follows, which reports it.
///
/// # Errors
///
/// Which file lies inside the root, why that is refused, and what to do instead.
fn server_files_outside_root(root: &Path, args: &McpArgs) -> Result<(), String> {
    let mut files: Vec<(&str, &Path, &str, &str)> = Vec::new();
    if let Some(path) = &args.state_key_file {
        files.push((
            "--state-key-file",
            path,
            "the keyring that seals approval states",
            "any client allowed to `read` could read its keys and forge approval states",
        ));
    }
    if let Some(JwksSource::File(path)) = &args.oauth_jwks {
        files.push((
            "--oauth-jwks",
            path,
            "the JWKS file (the issuer's keys)",
            "any client allowed to `write` or `edit` could add a key of its own and sign \
             tokens this server accepts",
        ));
    }
    for (flag, path, what, risk) in files {
        let Ok(resolved) = path.canonicalize() else {
            continue;
        };
        if !resolved.starts_with(root) {
            continue;
        }
        let via = if resolved == path {
            String::new()
        } else {
            format!(" (it resolves to {})", resolved.display())
        };
        let instead = if flag == "--state-key-file" {
            format!(
                "keep the keyring outside the root, readable only by the server's user, \
                 or pass the keys in {}",
                dsh_mcp::STATE_KEYS_ENV
            )
        } else {
            "keep the JWKS file outside the root, or give the issuer's JWKS URL".to_string()
        };
        return Err(format!(
            "{flag} {}: {what} lies inside the root {} that the file tools serve{via}, so \
             {risk}; {instead}",
            path.display(),
            root.display()
        ));
    }
    Ok(())
}

/// The environment variable naming the store when `--store` is not given.
pub(crate) const STORE_ENV: &str = "DSH_MCP_STORE";

/// The environment variable naming the store's key prefix when `--store-prefix` is not
/// given.
pub(crate) const STORE_PREFIX_ENV: &str = "DSH_MCP_STORE_PREFIX";

/// The scopes of `dsh-tools mcp --oauth-issuer` without `--tool-scope`.
fn default_tool_scopes() -> dsh_mcp::ToolScopes {
    ["bash", "run_code", "job_output", "job_list", "job_kill"]
        .into_iter()
        .fold(dsh_mcp::ToolScopes::new(), |scopes, tool| {
            scopes.tool(tool, "tools:exec")
        })
        .read_only("tools:read")
        .destructive("tools:write")
}

/// The scopes of `--tool-scope` rules (`TOOL=SCOPE`, `@read-only=SCOPE`,
/// `@destructive=SCOPE`, `*=SCOPE`), or the default mapping without any.
///
/// # Errors
///
/// A rule without `=`, with an empty side, or an unknown `@` annotation.
fn tool_scopes(rules: &[String]) -> Result<dsh_mcp::ToolScopes, String> {
    if rules.is_empty() {
        return Ok(default_tool_scopes());
    }
    let mut scopes = dsh_mcp::ToolScopes::new();
    for rule in rules {
        let Some((tool, scope)) = rule
            .split_once('=')
            .map(|(t, s)| (t.trim(), s.trim()))
            .filter(|(t, s)| !t.is_empty() && !s.is_empty() && !s.contains(' '))
        else {
            return Err(format!(
                "--tool-scope {rule:?}: expected RULE=SCOPE (e.g. bash=tools:exec, \
                 @read-only=tools:read, @destructive=tools:write, *=tools:call)"
            ));
        };
        scopes = match tool {
            "@read-only" => scopes.read_only(scope),
            "@destructive" => scopes.destructive(scope),
            "*" => scopes.default_scope(scope),
            other if other.starts_with('@') => {
                return Err(format!(
                    "--tool-scope {rule:?}: unknown annotation {other} (@read-only or \
                     @destructive)"
                ));
            }
            name => scopes.tool(name, scope),
        };
    }
    Ok(scopes)
}

/// The values of `--code-mode`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CodeModeArg {
    /// Every tool, called directly; no `run_code`.
    #[default]
    Native,
    /// Only `run_code`; the other tools are reached from programs.
    Code,
    /// Every tool and `run_code`.
    Both,
}

impl From<CodeModeArg> for Mode {
    fn from(arg: CodeModeArg) -> Mode {
        match arg {
            CodeModeArg::Native => Mode::Native,
            CodeModeArg::Code => Mode::Code,
            CodeModeArg::Both => Mode::Both,
        }
    }
}

/// The MCP server for `host`: every tool of its registry, and per session a job owner of
/// its own on the host's job runtime, with the shell and job tools acting for it and the
/// session's tasks running as its jobs (a session sees only its own jobs, and they stop
/// when it closes), the session's scope presented in `mode`.
pub(crate) fn server(host: &Host, mode: Mode) -> McpServer {
    let server = McpServer::new(host.registry().clone())
        .with_server_info("dsh-tools", env!("CARGO_PKG_VERSION"));
    let server = if mode == Mode::Native {
        server
    } else {
        server.with_listing(dsh_code::offered_tools)
    };
    let jobs = host.jobs().clone();
    server.on_session(move |scope| {
        let owner = jobs.owner();
        // Each session spills to a private directory of its own, within its own budget,
        // removed when the session ends.
        let spill = match SpillDir::new() {
            Ok(spill) => Some(spill),
            Err(e) => {
                eprintln!("dsh-tools mcp: no spill directory for the session: {e}");
                None
            }
        };
        let config = spill
            .as_ref()
            .map_or_else(BashConfig::default, SpillDir::bash_config);
        let shell = Arc::new(Shell::for_owner(owner.id(), config));
        // The session's tasks (task-capable calls such as `bash`) are jobs of the same
        // owner, so `job_list` and `job_kill` see them.
        let mut guard = SessionGuard::new().job_owner(owner.id());
        for registered in [
            scope.register_toolbox(shell),
            scope.register_toolbox(Arc::new(Jobs::for_owner(owner.id()))),
        ] {
            match registered {
                Ok(registration) => guard = guard.keep(registration.unregister_on_drop()),
                // The global tools stay visible; report why the session has none.
                Err(e) => eprintln!("dsh-tools mcp: session tools not registered: {e}"),
            }
        }
        if mode != Mode::Native {
            // After the session's tools, so the SDK in run_code's description has them.
            match CodeMode::new().sdk_in_description().present_as(scope, mode) {
                Ok(presentation) => guard = guard.keep(presentation),
                Err(e) => eprintln!("dsh-tools mcp: session not in {mode} mode: {e}"),
            }
        }
        guard.on_close(async move {
            owner.close().await;
            drop(spill);
        })
    })
}

/// Run `dsh-tools mcp` until the client disconnects (stdio) or the process is asked to
/// stop (HTTP: Ctrl-C or SIGTERM).
///
/// # Errors
///
/// A message for stderr: the state keyring or the JWKS file lies inside the root, the
/// handshake failed, the address could not be bound, an `--allowed-origin` is not an
/// origin, the token variable is unset, a `--tool-scope` is malformed, the OAuth
/// issuer's metadata or keys cannot be read.
pub(crate) async fn run(host: &Host, args: &McpArgs) -> Result<(), String> {
    server_files_outside_root(host.root(), args)?;
    let keys = state_keys(
        args.state_key_file.as_deref(),
        std::env::var(dsh_mcp::STATE_KEYS_ENV).ok(),
    )?;
    let _ask = ask_policy(host, &args.ask)?;
    let store = store(args, keys.is_some()).await?;
    let mut server = server(host, args.code_mode.into());
    if let Some(keys) = keys {
        server = server.with_state_keys(keys);
    }
    if let Some(store) = store {
        server = server.with_store(store);
    }
    if args.oauth_issuer.is_some() {
        server = server.with_tool_scopes(tool_scopes(&args.tool_scopes)?);
    }
    server = server.with_principal_limits(principal_limits(args));
    let Some(addr) = args.http else {
        return server
            .serve_stdio()
            .await
            .map_err(|e| format!("MCP over stdio: {e}"));
    };
    let options = http_options(args, addr)?;
    for warning in bind_warnings(
        addr,
        options.bearer_token.is_some() || options.oauth.is_some(),
        !args.allowed_hosts.is_empty(),
        args.allow_any_host,
    ) {
        eprintln!("{warning}");
    }
    let http = dsh_mcp::serve_http(&server, options)
        .await
        .map_err(|e| format!("cannot serve on {addr}: {e}"))?;
    eprintln!("dsh-tools: serving MCP at {}", http.url());
    stop_signal().await;
    let grace = std::time::Duration::from_secs(args.drain_timeout);
    eprintln!(
        "dsh-tools: draining ({} requests in progress, at most {grace:?})",
        http.requests_in_progress()
    );
    http.drain(grace)
        .await
        .map_err(|e| format!("MCP over HTTP: {e}"))
}

/// The limits per principal of `--max-calls-per-principal` and
/// `--max-tasks-per-principal`.
fn principal_limits(args: &McpArgs) -> dsh_mcp::PrincipalLimits {
    let mut limits = dsh_mcp::PrincipalLimits::new();
    if let Some(max) = args.max_calls_per_principal {
        limits = limits.max_calls(max);
    }
    if let Some(max) = args.max_tasks_per_principal {
        limits = limits.max_tasks(max);
    }
    limits
}

/// The HTTP options for serving on `addr`: sessions, origins and hosts, idle timeout,
/// and the bearer token or OAuth the arguments ask for.
///
/// # Errors
///
/// The token variable is unreadable or empty, or OAuth off loopback has no audience.
fn http_options(args: &McpArgs, addr: SocketAddr) -> Result<HttpOptions, String> {
    let idle = (args.session_idle_timeout > 0)
        .then(|| std::time::Duration::from_secs(args.session_idle_timeout));
    let mut options = HttpOptions::default()
        .bind(addr)
        .sessions(!args.stateless)
        .allowed_origins(args.allowed_origins.iter().cloned())
        .allowed_hosts(args.allowed_hosts.iter().cloned())
        .allow_any_host(args.allow_any_host)
        .session_idle_timeout(idle);
    if let Some(var) = &args.bearer_token_env {
        let token = std::env::var(var)
            .map_err(|e| format!("--bearer-token-env {var}: cannot read the token: {e}"))?;
        if token.is_empty() {
            return Err(format!("--bearer-token-env {var}: the variable is empty"));
        }
        options = options.bearer_token(token);
    }
    if let Some(issuer) = &args.oauth_issuer {
        if args.oauth_audience.is_none() && !addr.ip().is_loopback() {
            return Err(format!(
                "--oauth-issuer: serving on {addr}, give --oauth-audience URL (the URL \
                 clients reach this server at, which their tokens must name)"
            ));
        }
        let mut oauth = dsh_mcp::oauth::OAuthOptions::new(issuer.clone())
            .jwks_refresh_interval(std::time::Duration::from_secs(args.oauth_jwks_refresh))
            .leeway(std::time::Duration::from_secs(args.oauth_leeway))
            .scopes(args.oauth_scopes.iter().cloned());
        if let Some(audience) = &args.oauth_audience {
            oauth = oauth.audience(audience.clone());
        }
        if let Some(jwks) = &args.oauth_jwks {
            oauth = oauth.jwks(jwks.clone());
        }
        options = options.oauth(oauth);
    }
    Ok(options)
}

/// The store of `--store URL` (else of `DSH_MCP_STORE`), connected; `None`: the
/// process's memory.
///
/// # Errors
///
/// Not a Redis URL, no shared keyring (`has_keys`), or the store does not answer.
async fn store(
    args: &McpArgs,
    has_keys: bool,
) -> Result<Option<Arc<dyn dsh_mcp::store::Store>>, String> {
    let (url, flag) = match &args.store {
        Some(url) => (url.clone(), "--store".to_string()),
        None => match std::env::var(STORE_ENV)
            .ok()
            .filter(|v| !v.trim().is_empty())
        {
            Some(url) => (url.trim().to_string(), STORE_ENV.to_string()),
            None => return Ok(None),
        },
    };
    if !(url.starts_with("redis://") || url.starts_with("rediss://")) {
        return Err(format!(
            "{flag} {url}: not a store this server knows; give redis://HOST:PORT/DB"
        ));
    }
    if !has_keys {
        return Err(format!(
            "{flag} {url}: servers sharing a store must share their state keys too (a \
             task or approval state made by one is checked by another): give each the \
             same --state-key-file PATH or {}",
            dsh_mcp::STATE_KEYS_ENV
        ));
    }
    let prefix = match &args.store_prefix {
        Some(prefix) => prefix.clone(),
        None => std::env::var(STORE_PREFIX_ENV)
            .ok()
            .filter(|v| !v.trim().is_empty())
            .unwrap_or_else(|| "dsh-mcp".to_string()),
    };
    let store = dsh_mcp::store::RedisStore::connect(&url, &prefix)
        .await
        .map_err(|e| format!("{flag} {url}: {e}"))?;
    Ok(Some(Arc::new(store)))
}

/// The state keys of `--state-key-file PATH`, else of the environment variable's value
/// `env` (when set and not blank), else `None` (a random key per process).
///
/// # Errors
///
/// The file cannot be read, or its keys (or the variable's) are malformed or too short.
fn state_keys(
    file: Option<&Path>,
    env: Option<String>,
) -> Result<Option<dsh_mcp::StateKeys>, String> {
    if let Some(path) = file {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("--state-key-file {}: {e}", path.display()))?;
        return dsh_mcp::StateKeys::parse(&text)
            .map(Some)
            .map_err(|e| format!("--state-key-file {}: {e}", path.display()));
    }
    match env.filter(|v| !v.trim().is_empty()) {
        Some(text) => dsh_mcp::StateKeys::parse(&text)
            .map(Some)
            .map_err(|e| format!("{}: {e}", dsh_mcp::STATE_KEYS_ENV)),
        None => Ok(None),
    }
}

/// The pre-execute policy of `--ask`: every call of one of `tools` (from any session or
/// the global view) asks for approval, which the MCP server puts to the client's user.
/// `None` when no tool is listed.
///
/// # Errors
///
/// An empty name in the list.
fn ask_policy(host: &Host, tools: &[String]) -> Result<Option<RegistrationHandle>, String> {
    if tools.iter().any(|t| t.trim().is_empty()) {
        return Err(format!(
            "--ask {}: an empty tool name (give comma-separated names, e.g. bash,write,edit)",
            tools.join(",")
        ));
    }
    if tools.is_empty() {
        return Ok(None);
    }
    let tools: HashSet<String> = tools.iter().map(|t| t.trim().to_string()).collect();
    Ok(Some(host.registry().add_pre_execute(pre_execute_fn(
        move |call| {
            tools.contains(call.name()).then(|| {
                PreDecision::ask(format!(
                    "dsh-tools mcp --ask lists tool {:?}: each call needs the user's approval",
                    call.name()
                ))
            })
        },
    ))))
}

/// The warnings for serving on `addr`: beyond loopback without a token (anyone who can
/// reach it runs commands), and on every address with no other host names accepted.
fn bind_warnings(
    addr: SocketAddr,
    has_token: bool,
    has_allowed_hosts: bool,
    allow_any_host: bool,
) -> Vec<String> {
    let mut out = Vec::new();
    if !addr.ip().is_loopback() && !has_token {
        out.push(format!(
            "warning: dsh-tools mcp --http {addr}: serving a shell beyond loopback without a \
             token; anyone who can reach this address can run commands (use \
             --bearer-token-env VAR, and TLS in front)"
        ));
    }
    if addr.ip().is_unspecified() && !has_allowed_hosts && !allow_any_host {
        out.push(format!(
            "warning: dsh-tools mcp --http {addr}: only loopback names are accepted in the \
             Host header; name the others clients use with --allowed-host HOST"
        ));
    }
    out
}

async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

#[cfg(test)]
mod tests {
    use super::bind_warnings;

    /// Two sessions of one server on one host: each sees only its own background jobs
    /// (another session's id is unknown to it), and a session's jobs are killed when it
    /// closes while the other's keep running.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sessions_own_their_jobs() {
        use std::time::Duration;

        use rmcp::ServiceExt as _;
        use rmcp::model::CallToolRequestParams;
        use serde_json::{Value, json};

        fn call(name: &str, args: Value) -> CallToolRequestParams {
            let Value::Object(args) = args else {
                panic!("arguments must be an object")
            };
            CallToolRequestParams::new(name.to_string()).with_arguments(args)
        }
        fn text(r: &rmcp::model::CallToolResult) -> String {
            r.content
                .iter()
                .filter_map(|c| c.as_text().map(|t| t.text.clone()))
                .collect::<Vec<_>>()
                .join("\n")
        }

        let root = tempfile::tempdir().expect("a temporary root");
        let host = super::Host::new(root.path()).expect("a host");
        let server = super::server(&host, super::Mode::Native);
        let mut clients = Vec::new();
        for _ in 0..2 {
            let (ours, theirs) = tokio::io::duplex(1 << 16);
            let server = server.clone();
            tokio::spawn(async move { server.serve(theirs).await });
            clients.push(().serve(ours).await.expect("the client initializes"));
        }
        let (b, a) = (clients.pop().expect("two"), clients.pop().expect("two"));

        let mut ids = Vec::new();
        for (client, name) in [(&a, "a"), (&b, "b")] {
            let pid_file = root.path().join(format!("{name}.pid"));
            let r = client
                .call_tool(call(
                    "bash",
                    json!({"command": format!("echo $$ > {}; exec sleep 300", pid_file.display()), "description": "sleep", "run_in_background": true}),
                ))
                .await
                .expect("bash answers");
            let id = r.structured_content.expect("structured")["result"]["jobId"]
                .as_str()
                .expect("a job id")
                .to_string();
            ids.push((id, pid_file));
        }
        // Each session counts its own jobs: b's first id does not show that a started one.
        assert_eq!((ids[0].0.as_str(), ids[1].0.as_str()), ("bash-1", "bash-1"));

        // Each session lists only its own job (the command names its pid file).
        for (client, mine, theirs) in [(&a, "a.pid", "b.pid"), (&b, "b.pid", "a.pid")] {
            let list = client
                .call_tool(call("job_list", json!({})))
                .await
                .expect("job_list");
            let list = text(&list);
            assert!(list.starts_with("bash-1 [bash] running"), "{list}");
            assert!(list.contains(mine) && !list.contains(theirs), "{list}");
            assert_eq!(list.lines().count(), 1, "{list}");
        }
        let unknown = a
            .call_tool(call("job_output", json!({"job_id": "bash-2"})))
            .await
            .expect("job_output");
        assert_eq!(unknown.is_error, Some(true));
        assert_eq!(text(&unknown), "Error: unknown job bash-2");

        let pid = |file: &std::path::Path| -> u32 {
            for _ in 0..1000 {
                if let Some(pid) = std::fs::read_to_string(file)
                    .ok()
                    .and_then(|s| s.trim().parse().ok())
                {
                    return pid;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            panic!("no pid in {} within 20 s", file.display())
        };
        let gone = |pid: u32| match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.split_whitespace().next() == Some("Z")),
        };
        let (pid_a, pid_b) = (pid(&ids[0].1), pid(&ids[1].1));

        // Closing session a kills its job; b's keeps running.
        a.cancel().await.expect("session a closes");
        let mut waited = 0;
        while !gone(pid_a) {
            assert!(waited < 1000, "session a's job outlived the session");
            tokio::time::sleep(Duration::from_millis(20)).await;
            waited += 1;
        }
        assert!(!gone(pid_b), "session b's job was killed with session a");
        let list = b
            .call_tool(call("job_list", json!({})))
            .await
            .expect("job_list");
        assert!(
            text(&list).starts_with("bash-1 [bash] running") && text(&list).contains("b.pid"),
            "{}",
            text(&list)
        );
        b.cancel().await.expect("session b closes");
        host.shutdown().await;
    }

    #[test]
    fn tool_scope_rules_parse_and_default() {
        let scopes = super::tool_scopes(&[]).unwrap();
        assert_eq!(scopes.required("bash", None), Some("tools:exec"));
        assert_eq!(scopes.required("run_code", None), Some("tools:exec"));
        // Without annotations a tool is destructive.
        assert_eq!(scopes.required("write", None), Some("tools:write"));
        let rules = [
            "bash=x:exec",
            "@read-only=x:read",
            "*=x:call",
            "@destructive = x:w",
        ]
        .map(String::from);
        let scopes = super::tool_scopes(&rules).unwrap();
        assert_eq!(scopes.required("bash", None), Some("x:exec"));
        assert_eq!(scopes.required("job_kill", None), Some("x:w"));
        assert_eq!(
            scopes.scopes().into_iter().collect::<Vec<_>>(),
            ["x:call", "x:exec", "x:read", "x:w"]
        );
        for bad in ["bash", "=s", "bash=", "@other=s", "bash=a b"] {
            let e = super::tool_scopes(&[bad.to_string()]).unwrap_err();
            assert!(e.starts_with(&format!("--tool-scope {bad:?}")), "{e}");
        }
    }

    #[test]
    fn a_bind_beyond_loopback_without_a_token_warns() {
        let at = |s: &str| s.parse().unwrap();
        assert!(bind_warnings(at("127.0.0.1:0"), false, false, false).is_empty());
        assert!(bind_warnings(at("[::1]:8080"), false, false, false).is_empty());
        let w = bind_warnings(at("192.0.2.7:8080"), false, false, false);
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("without a token"), "{w:?}");
        assert!(bind_warnings(at("192.0.2.7:8080"), true, false, false).is_empty());
        // Every address: also the Host names, unless some are named or any is allowed.
        let w = bind_warnings(at("0.0.0.0:8080"), true, false, false);
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("--allowed-host"), "{w:?}");
        assert!(bind_warnings(at("0.0.0.0:8080"), true, true, false).is_empty());
        assert!(bind_warnings(at("0.0.0.0:8080"), true, false, true).is_empty());
        assert_eq!(
            bind_warnings(at("0.0.0.0:8080"), false, false, false).len(),
            2
        );
    }
}
