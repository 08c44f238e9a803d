//! Serving a [`Registry`] over MCP: [`McpServer`] (the builder and its configuration),
//! and by job: where a request runs ([`context`]: a session, or the stateless context),
//! the rmcp handler ([`handler`]), `tools/call` as named steps ([`call`]), tasks from the
//! handler's side ([`task_calls`]), the tool-list cache ([`tool_list`]) and progress
//! forwarding ([`progress`]).

mod admission;
mod apps;
mod call;
mod context;
mod handler;
mod progress;
mod resources;
mod scopes;
mod task_calls;
mod tool_list;
pub(crate) mod trace;
mod updates;

use context::SessionCell;
pub(crate) use context::SessionHandle;
#[cfg(feature = "http")]
pub(crate) use context::StatelessContext;
pub(crate) use handler::Handler;
use tool_list::ListCache;

pub use admission::PrincipalLimits;
#[cfg(feature = "oauth")]
pub(crate) use admission::{Denial, VerdictSlot};
pub use scopes::ToolScopes;

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use dsh_runtime::jobs::OwnerId;
use dsh_runtime::prompts::Prompts;
use dsh_runtime::resources::Resources;
use dsh_runtime::{AgentScope, AgentScopeId, DynTool, Registry};
use rmcp::RoleServer;
use rmcp::model::Implementation;
use rmcp::service::RequestContext;
use tokio::sync::watch;

use crate::approval::instance::Instance;
use crate::approval::keys::StateKeys;
use crate::approval::resume;
use crate::store::lease::Lease;
use crate::store::{MemoryStore, Store};
use crate::tasks::stateless::StatelessTaskLimits;
use crate::wire::raw::RawArguments;

type BoxFuture = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;
type SessionSetup = dyn Fn(&AgentScope) -> SessionGuard + Send + Sync;
type Listing = dyn Fn(&Registry, Option<AgentScopeId>, Vec<DynTool>) -> Vec<DynTool> + Send + Sync;

/// What a session's setup leaves behind: values kept alive while the session lasts and
/// futures run when it ends (see [`McpServer::on_session`]).
#[derive(Default)]
pub struct SessionGuard {
    keep: Vec<Box<dyn Any + Send>>,
    close: Vec<BoxFuture>,
    job_owner: Option<OwnerId>,
}

impl SessionGuard {
    /// A guard holding nothing.
    pub fn new() -> Self {
        SessionGuard::default()
    }

    /// Keep `value` (e.g. a [`dsh_runtime::RegistrationGuard`] in the session's scope) until
    /// the session ends; it is dropped after the close futures ran.
    #[must_use]
    pub fn keep(mut self, value: impl Send + 'static) -> Self {
        self.keep.push(Box::new(value));
        self
    }

    /// Run `future` when the session ends (e.g. stop the session's background jobs and
    /// wait until they have settled). Close futures run in the order they were added.
    #[must_use]
    pub fn on_close(mut self, future: impl Future<Output = ()> + Send + 'static) -> Self {
        self.close.push(Box::pin(future));
        self
    }

    /// The job owner of the session (opened by the setup on the registry's job runtime,
    /// and closed by one of its close futures): the tasks the session's client starts
    /// run as jobs of this owner, so the session's job tools (`job_list`, `job_kill`,
    /// acting for the same owner) see them. Without it, a server whose registry has a
    /// job runtime opens an owner of its own for each session and closes it when the
    /// session ends.
    #[must_use]
    pub fn job_owner(mut self, owner: OwnerId) -> Self {
        self.job_owner = Some(owner);
        self
    }

    async fn close(self) {
        for future in self.close {
            future.await;
        }
        drop(self.keep);
    }
}

impl fmt::Debug for SessionGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionGuard")
            .field("kept", &self.keep.len())
            .field("on_close", &self.close.len())
            .field("job_owner", &self.job_owner)
            .finish()
    }
}

/// Serves the visible tools of a [`Registry`] over MCP (see the crate docs, and
/// [`crate::protocol`] for how each part of the protocol is served).
///
/// Cheap to clone; every clone serves the same registry with the same settings.
#[derive(Clone)]
pub struct McpServer {
    shared: Arc<Shared>,
}

pub(crate) struct Shared {
    registry: Registry,
    changes: watch::Receiver<u64>,
    info: Implementation,
    instructions: Option<String>,
    on_session: Option<Arc<SessionSetup>>,
    listing: Option<Arc<Listing>>,
    /// The tool list of calls made outside any session (stateless HTTP requests).
    global: ListCache,
    /// Calls suspended on an approval asked with `InputRequiredResult`.
    resumes: Arc<resume::Resumes>,
    /// The limits of the tasks of requests served statelessly.
    stateless_tasks: StatelessTaskLimits,
    /// Where tasks and approval states are kept.
    store: Arc<dyn Store>,
    /// The keys sealing approval states and binding stateless tasks (`None`: none could
    /// be drawn).
    keys: Option<StateKeys>,
    /// This instance among those sharing the store.
    instance: Arc<Instance>,
    /// The scope each tool needs from a request with an identity.
    tool_scopes: ToolScopes,
    /// The calls and tasks each principal may have at once.
    limits: PrincipalLimits,
    /// The calls and tasks each principal has now.
    limiter: Arc<admission::Limiter>,
    /// The resources served, if any ([`McpServer::with_resources`]).
    resources: Option<Resources>,
    /// The prompts served, if any ([`McpServer::with_prompts`]).
    prompts: Option<Prompts>,
    /// The resource updates this instance's subscribers hear.
    updates: Arc<updates::Updates>,
    /// The cache hints of lists and reads ([`McpServer::with_cache_hints`]).
    cache: Option<(u64, rmcp::model::CacheScope)>,
}

/// A server of the registry with the default settings ([`McpServer::new`]), so that
/// [`crate::serve_stdio`] and `serve_http` take a registry or a server alike.
impl From<Registry> for McpServer {
    fn from(registry: Registry) -> Self {
        McpServer::new(registry)
    }
}

/// The same server (a cheap clone: its state is shared).
impl From<&McpServer> for McpServer {
    fn from(server: &McpServer) -> Self {
        server.clone()
    }
}

impl fmt::Debug for McpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServer")
            .field("registry", &self.shared.registry)
            .field("server_info", &self.shared.info.name)
            .finish_non_exhaustive()
    }
}

impl McpServer {
    /// A server for `registry`, announcing itself as `dsh-mcp` with this crate's version.
    pub fn new(registry: Registry) -> Self {
        let keys = match StateKeys::random() {
            Ok(keys) => Some(keys),
            Err(e) => {
                tracing::warn!("dsh-mcp: {e}");
                None
            }
        };
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let resumes = Arc::new(resume::Resumes::new(resume::DEFAULT_TTL, keys.as_ref()));
        McpServer {
            shared: Arc::new(Shared {
                changes: registry.changes(),
                registry,
                info: Implementation::new("dsh-mcp", env!("CARGO_PKG_VERSION")),
                instructions: None,
                on_session: None,
                listing: None,
                global: ListCache::default(),
                instance: Instance::new(Lease::new(store.clone()), resumes.clone()),
                resumes,
                stateless_tasks: StatelessTaskLimits::default(),
                store,
                keys,
                tool_scopes: ToolScopes::default(),
                limits: PrincipalLimits::default(),
                limiter: Arc::default(),
                resources: None,
                prompts: None,
                updates: Arc::default(),
                cache: None,
            }),
        }
    }

    fn edit(mut self, f: impl FnOnce(&mut Shared)) -> Self {
        match Arc::get_mut(&mut self.shared) {
            Some(shared) => {
                f(shared);
                shared.instance =
                    Instance::new(Lease::new(shared.store.clone()), shared.resumes.clone());
            }
            None => {
                let old = &*self.shared;
                let mut shared = Shared {
                    registry: old.registry.clone(),
                    changes: old.registry.changes(),
                    info: old.info.clone(),
                    instructions: old.instructions.clone(),
                    on_session: old.on_session.clone(),
                    listing: old.listing.clone(),
                    global: ListCache::default(),
                    resumes: old.resumes.clone(),
                    stateless_tasks: old.stateless_tasks,
                    store: old.store.clone(),
                    keys: old.keys.clone(),
                    instance: old.instance.clone(),
                    tool_scopes: old.tool_scopes.clone(),
                    limits: old.limits,
                    limiter: old.limiter.clone(),
                    resources: old.resources.clone(),
                    prompts: old.prompts.clone(),
                    updates: Arc::default(),
                    cache: old.cache,
                };
                f(&mut shared);
                shared.instance =
                    Instance::new(Lease::new(shared.store.clone()), shared.resumes.clone());
                self.shared = Arc::new(shared);
            }
        }
        self
    }

    /// The name and version announced to clients.
    #[must_use]
    pub fn with_server_info(self, name: impl Into<String>, version: impl Into<String>) -> Self {
        let info = Implementation::new(name, version);
        self.edit(|s| s.info = info)
    }

    /// Serve `resources` next to the tools (`resources/list`, `resources/templates/list`,
    /// `resources/read`, `resources/subscribe` and `unsubscribe`, completion of template
    /// placeholders). The `resources` capability is declared from then on, with
    /// `subscribe` and `listChanged`.
    #[must_use]
    pub fn with_resources(self, resources: Resources) -> Self {
        self.edit(|s| s.resources = Some(resources))
    }

    /// Serve `prompts` next to the tools (`prompts/list`, `prompts/get`, completion of
    /// their arguments). The `prompts` capability is declared from then on, with
    /// `listChanged`.
    #[must_use]
    pub fn with_prompts(self, prompts: Prompts) -> Self {
        self.edit(|s| s.prompts = Some(prompts))
    }

    /// Start relaying resource updates between the instances sharing the store (see the
    /// `updates` module), when the server serves resources.
    pub(crate) async fn start_updates(&self) {
        let shared = &self.shared;
        if let Some(resources) = &shared.resources {
            shared
                .updates
                .ensure_started(
                    resources,
                    &shared.store,
                    shared.instance.id(),
                    shared.instance.lease().stopped(),
                )
                .await;
        }
    }

    /// How long clients may keep the lists (`tools/list`, `resources/list`,
    /// `resources/templates/list`, `prompts/list`) and resource reads, and whether
    /// shared caches may keep them for every user (`CacheScope::Public`) or only the
    /// requesting user's client (`Private`): MCP's cache hints (SEP-2549, `ttlMs`,
    /// `cacheScope`). Without this, every answer says `ttlMs: 0`, `private` on revision
    /// 2026-07-28 (not cacheable), and none on earlier revisions. Keep lists private when
    /// they depend on the caller (OAuth scopes, per-session tools).
    #[must_use]
    pub fn with_cache_hints(
        self,
        ttl: std::time::Duration,
        scope: rmcp::model::CacheScope,
    ) -> Self {
        let ttl = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
        self.edit(|s| s.cache = Some((ttl, scope)))
    }

    /// Instructions for the client's model, sent at initialization.
    #[must_use]
    pub fn with_instructions(self, text: impl Into<String>) -> Self {
        let text = text.into();
        self.edit(|s| s.instructions = Some(text))
    }

    /// Run `setup` when a session starts, with the session's agent scope: register
    /// per-session tools or hooks there (they shadow global tools for this session only)
    /// and return what must live as long as the session, and what to run when it ends.
    ///
    /// A session is one stdio connection, or one Streamable HTTP session (clients on
    /// protocol revisions with `initialize`, when the HTTP server keeps sessions).
    ///
    /// Requests an HTTP server serves statelessly (protocol 2026-07-28 on, and every
    /// request when it keeps no sessions) share one more: the server's stateless
    /// context, set up with `setup` on the first such request and closed when the HTTP
    /// server shuts down. Its scope is what those requests see (its tools, code mode),
    /// and its job owner runs their tasks; nothing in it tells two clients apart, so
    /// give it only what every client of the server may share (see
    /// [`McpServer::with_stateless_tasks`] for how their tasks are kept apart).
    #[must_use]
    pub fn on_session(
        self,
        setup: impl Fn(&AgentScope) -> SessionGuard + Send + Sync + 'static,
    ) -> Self {
        let setup: Arc<SessionSetup> = Arc::new(setup);
        self.edit(|s| s.on_session = Some(setup))
    }

    /// Choose which visible tools `tools/list` shows: `list` gets the registry, the
    /// session's scope (`None` without a session) and the visible tools in publication
    /// order, and returns the tools to list, in order (e.g. only `run_code` for a scope in
    /// code mode, see `dsh_code::offered_tools`).
    ///
    /// This shapes what the client's model is offered, not what it may call: a call by
    /// name still goes to the registry, which decides as it does for any caller (code
    /// mode's collapse answers a direct call with `UNKNOWN_TOOL`, which the server returns
    /// as the protocol's unknown-tool error). Hide tools from calls with the registry's
    /// scopes (`restrict`) or guards.
    #[must_use]
    pub fn with_listing(
        self,
        list: impl Fn(&Registry, Option<AgentScopeId>, Vec<DynTool>) -> Vec<DynTool>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        let list: Arc<Listing> = Arc::new(list);
        self.edit(|s| s.listing = Some(list))
    }

    /// How long a call suspended on its approval waits for the client's retry, on
    /// protocol revisions that ask with `InputRequiredResult` (2026-07-28): the
    /// `requestState`'s lifetime (default 10 minutes). A call not resumed in time ends as
    /// `APPROVAL_CANCELLED`, and its state is refused as expired.
    #[must_use]
    pub fn with_approval_ttl(self, ttl: std::time::Duration) -> Self {
        self.edit(|s| s.resumes = Arc::new(resume::Resumes::new(ttl, s.keys.as_ref())))
    }

    /// Seal approval states with the first of `keys` and accept states sealed with any
    /// of them (default: one random key drawn for this server, so its states are valid
    /// only in this process). Instances that share the keys (and a
    /// [store](McpServer::with_store)) accept each other's states and recognise the same
    /// stateless client; see [`StateKeys`] for rotation.
    #[must_use]
    pub fn with_state_keys(self, keys: StateKeys) -> Self {
        self.edit(|s| {
            s.resumes = Arc::new(resume::Resumes::new(s.resumes.ttl(), Some(&keys)));
            s.keys = Some(keys);
        })
    }

    /// How long the tasks of requests served statelessly are kept, and how many at once
    /// (default: one hour, 256). A session's tasks live as long as the session; a
    /// stateless request's task has no session to end with, so it gets an unguessable
    /// id bound to the request's `Authorization` header, this time to live from its
    /// creation (announced as `ttlMs`; a task still running then is stopped), and a
    /// place among at most `max_tasks`: beyond them a tool that may run as a task is
    /// answered directly and one that runs only as a task is refused.
    #[must_use]
    pub fn with_stateless_tasks(self, limits: StatelessTaskLimits) -> Self {
        self.edit(|s| s.stateless_tasks = limits)
    }

    /// Keep tasks and single-use approval states in `store` (default: a
    /// [`MemoryStore`] of this server). A store several server instances share lets
    /// any of them answer a task's `tasks/get`, `tasks/update`, `tasks/cancel` (see
    /// [`crate::store`]); the call itself runs on the instance that started it.
    #[must_use]
    pub fn with_store(self, store: Arc<dyn Store>) -> Self {
        self.edit(|s| s.store = store)
    }

    /// Require scopes of the access tokens that call tools (see [`ToolScopes`]): a
    /// request whose token (validated by the HTTP server's OAuth layer, see
    /// [`HttpOptions::oauth`](crate::HttpOptions)) lacks a tool's scope does not see the
    /// tool in `tools/list`, and its call is refused before anything runs (over HTTP
    /// with `403` and `WWW-Authenticate: Bearer error="insufficient_scope",
    /// scope="…"`). Requests without a token identity (stdio, a static bearer token)
    /// are not checked. The scopes are listed in the protected-resource metadata.
    #[must_use]
    pub fn with_tool_scopes(self, scopes: ToolScopes) -> Self {
        self.edit(|s| s.tool_scopes = scopes)
    }

    /// Limit the calls and tasks each principal has at once (see [`PrincipalLimits`];
    /// default: no limits), so one subject cannot take every place of the server.
    #[must_use]
    pub fn with_principal_limits(self, limits: PrincipalLimits) -> Self {
        self.edit(|s| s.limits = limits)
    }

    /// The scope each tool needs (see [`McpServer::with_tool_scopes`]).
    pub fn tool_scopes(&self) -> &ToolScopes {
        &self.shared.tool_scopes
    }

    /// The registry served.
    pub fn registry(&self) -> &Registry {
        &self.shared.registry
    }

    /// An rmcp handler with a session opened now (one connection: stdio, tests), and the
    /// handle that closes it.
    /// Where tasks and approval states are kept.
    #[cfg(feature = "http")]
    pub(crate) fn store(&self) -> &Arc<dyn Store> {
        &self.shared.store
    }

    pub(crate) fn session_handler(&self) -> (Handler, SessionHandle) {
        let cell = Arc::new(SessionCell::default());
        cell.open(&self.shared, false);
        (
            Handler {
                shared: self.shared.clone(),
                cell: cell.clone(),
                stateless: None,
                open_on_initialize: false,
                listen_baseline: Mutex::default(),
            },
            SessionHandle(cell),
        )
    }

    /// An rmcp handler for Streamable HTTP: a session opens when the client initializes
    /// (when `sessions` is on); without one, calls run in the HTTP server's stateless
    /// context (`stateless`, opened on first use).
    #[cfg(feature = "http")]
    pub(crate) fn http_handler(&self, sessions: bool, stateless: Arc<StatelessContext>) -> Handler {
        Handler {
            shared: self.shared.clone(),
            cell: Arc::new(SessionCell::default()),
            stateless: Some(stateless),
            open_on_initialize: sessions,
            listen_baseline: Mutex::default(),
        }
    }

    /// Serve one connection on any rmcp server transport until the client disconnects,
    /// then close the session.
    ///
    /// Such a transport hands over messages rmcp already parsed with `serde_json`, so the
    /// arguments of a `tools/call` are converted from `serde_json` values: duplicate keys
    /// were already merged and numbers rounded. Prefer [`McpServer::serve`] or
    /// [`McpServer::serve_io`], which read the client's text.
    ///
    /// # Errors
    ///
    /// When the connection fails before the client initialized.
    pub async fn serve_transport<T, E, A>(
        &self,
        transport: T,
    ) -> Result<(), rmcp::service::ServerInitializeError>
    where
        T: rmcp::transport::IntoTransport<RoleServer, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        use rmcp::ServiceExt as _;
        let (handler, session) = self.session_handler();
        let result = match handler.serve(transport).await {
            Ok(running) => {
                let _ = running.waiting().await;
                Ok(())
            }
            Err(e) => Err(e),
        };
        session.close().await;
        result
    }
}

/// The arguments of the call as the client sent them: carried by the byte-stream
/// transport, or by the HTTP layer in the request's parts.
fn raw_arguments(context: &RequestContext<RoleServer>) -> Option<Arc<str>> {
    let raw = extension::<RawArguments>(&context.extensions)?;
    Some(raw.0.clone())
}

/// What a transport attached to a request for its handler: in the request's own
/// extensions (the byte-stream transport), or in those of the HTTP request rmcp hands
/// over (the HTTP layer).
fn extension<T: Send + Sync + 'static>(extensions: &rmcp::model::Extensions) -> Option<&T> {
    let direct = extensions.get::<T>();
    #[cfg(feature = "http")]
    let direct = direct.or_else(|| {
        extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<T>())
    });
    direct
}

fn request_id_text(id: &rmcp::model::RequestId) -> String {
    match id {
        rmcp::model::NumberOrString::Number(n) => format!("mcp-{n}"),
        rmcp::model::NumberOrString::String(s) => format!("mcp-{s}"),
    }
}
