//! Serving a [`Registry`] over MCP: [`McpServer`], its sessions, and the rmcp handler.

use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use dsh_runtime::hooks::ApprovalHandler;
use dsh_runtime::jobs::{JobContext, JobSpec, OwnerId};
use dsh_runtime::{
    Arguments, ContentBlock, DynTool, ErrorCode, Progress, ProgressReporter, Registry, Scope,
    ScopeId, TaskSupport, ToolCall, ToolResult,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ClientCapabilities,
    CreateTaskResult, CustomRequest, CustomResult, GetTaskParams, GetTaskResult, Implementation,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProgressToken,
    ServerCapabilities, ServerConfig, SubscriptionFilter, Tool, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, Peer, RoleServer, ServerHandler};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;

use crate::approval::{ClientApproval, TaskLink, can_elicit_form};
use crate::definition::{McpTool, mcp_tool, to_serde};
use crate::keys::StateKeys;
use crate::raw::RawArguments;
use crate::resume;
use crate::store::{MemoryStore, Owner, Store, TaskModel};
use crate::tasks::{SessionTasks, TaskHandle};
use crate::tasks_core::{self, CoreRoute};
use crate::tasks_listen::ListenTasks;
use crate::tasks_stateless::{Principal, PublicIds, StatelessTaskLimits};
use crate::util::lock;

type BoxFuture = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;
type SessionSetup = dyn Fn(&Scope) -> SessionGuard + Send + Sync;
type Listing = dyn Fn(&Registry, Option<ScopeId>, Vec<DynTool>) -> Vec<DynTool> + Send + Sync;

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

/// Serves the visible tools of a [`Registry`] over MCP (see the crate docs).
///
/// Cheap to clone; every clone serves the same registry with the same settings.
#[derive(Clone)]
pub struct McpServer {
    shared: Arc<Shared>,
}

struct Shared {
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
        McpServer {
            shared: Arc::new(Shared {
                changes: registry.changes(),
                registry,
                info: Implementation::new("dsh-mcp", env!("CARGO_PKG_VERSION")),
                instructions: None,
                on_session: None,
                listing: None,
                global: ListCache::default(),
                resumes: Arc::new(resume::Resumes::new(resume::DEFAULT_TTL, keys.as_ref())),
                stateless_tasks: StatelessTaskLimits::default(),
                store: Arc::new(MemoryStore::new()),
                keys,
            }),
        }
    }

    fn edit(mut self, f: impl FnOnce(&mut Shared)) -> Self {
        match Arc::get_mut(&mut self.shared) {
            Some(shared) => f(shared),
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
                };
                f(&mut shared);
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
        setup: impl Fn(&Scope) -> SessionGuard + Send + Sync + 'static,
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
        list: impl Fn(&Registry, Option<ScopeId>, Vec<DynTool>) -> Vec<DynTool> + Send + Sync + 'static,
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

    /// The registry served.
    pub fn registry(&self) -> &Registry {
        &self.shared.registry
    }

    /// An rmcp handler with a session opened now (one connection: stdio, tests), and the
    /// handle that closes it.
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

    /// Serve one connection on a byte stream (a socket, an in-memory duplex), one
    /// JSON-RPC message a line, until the client disconnects, then close the session.
    ///
    /// The arguments of each `tools/call` reach the registry as the text the client sent
    /// (see the crate docs).
    ///
    /// # Errors
    ///
    /// When the connection fails before the client initialized.
    pub async fn serve<S>(&self, stream: S) -> Result<(), rmcp::service::ServerInitializeError>
    where
        S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + 'static,
    {
        let (read, write) = tokio::io::split(stream);
        self.serve_io(read, write).await
    }

    /// Serve one connection reading messages from `read` and writing to `write` (a
    /// process's standard input and output, a child's pipes), one JSON-RPC message a
    /// line, as [`McpServer::serve`] does.
    ///
    /// # Errors
    ///
    /// When the connection fails before the client initialized.
    pub async fn serve_io<R, W>(
        &self,
        read: R,
        write: W,
    ) -> Result<(), rmcp::service::ServerInitializeError>
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        let core = self.shared.registry.jobs().is_some();
        self.serve_transport(crate::transport::RawTransport::new(read, write).with_core_tasks(core))
            .await
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

/// The stateless context of one HTTP server: the session its requests without one
/// share (see [`McpServer::on_session`]), opened on first use.
#[derive(Default)]
pub(crate) struct StatelessContext(SessionCell);

impl StatelessContext {
    /// End the context: its tasks stop, its setup's close futures run.
    #[cfg(feature = "http")]
    pub(crate) async fn close(&self) {
        let session = self.0.take();
        if let Some(session) = session {
            session.close().await;
        }
    }
}

/// Closes a session opened by [`McpServer::session_handler`].
pub(crate) struct SessionHandle(Arc<SessionCell>);

impl SessionHandle {
    pub(crate) async fn close(self) {
        let session = self.0.take();
        if let Some(session) = session {
            session.close().await;
        }
    }
}

#[derive(Default)]
struct SessionCell(Mutex<Option<Arc<Session>>>);

impl SessionCell {
    fn get(&self) -> Option<Arc<Session>> {
        lock(&self.0).clone()
    }

    fn take(&self) -> Option<Arc<Session>> {
        lock(&self.0).take()
    }

    /// The session, opened now if there is none (`stateless`: the stateless context of
    /// an HTTP server, whose tasks get public ids).
    fn open(&self, shared: &Shared, stateless: bool) -> Arc<Session> {
        let mut slot = lock(&self.0);
        if let Some(session) = &*slot {
            return session.clone();
        }
        let scope = shared.registry.scope();
        let guard = shared.on_session.as_ref().map(|setup| setup(&scope));
        let owner = guard.as_ref().and_then(|g| g.job_owner);
        let tasks = shared
            .registry
            .jobs()
            .map(|jobs| Arc::new(SessionTasks::new(shared.store.clone(), jobs.clone(), owner)));
        let stop = CancellationToken::new();
        let kind = if stateless {
            Context::Stateless(PublicIds::new(
                shared.stateless_tasks,
                shared.keys.clone(),
                stop.clone(),
            ))
        } else {
            // Random: unique among every instance sharing the store.
            let name = crate::util::random_hex(16)
                .unwrap_or_else(|| format!("{}-{}", scope.id().get(), crate::util::now_ms()));
            Context::Session(Owner::new(format!("session:{name}")))
        };
        let session = Arc::new(Session {
            scope,
            guard: Mutex::new(guard),
            stop,
            tools: ListCache::default(),
            tasks,
            kind,
        });
        *slot = Some(session.clone());
        session
    }
}

/// One MCP session: its agent scope, what its setup keeps, its tool list.
struct Session {
    scope: Scope,
    guard: Mutex<Option<SessionGuard>>,
    /// Cancelled when the session ends (stops the list-change watchers).
    stop: CancellationToken,
    tools: ListCache,
    /// The session's tasks, when the registry has a job runtime.
    tasks: Option<Arc<SessionTasks>>,
    /// A session of its own, or the stateless context every request without one shares.
    kind: Context,
}

/// What a [`Session`] is.
enum Context {
    /// A session (one connection, or one HTTP session): its tasks belong to it, and are
    /// known by their job ids.
    Session(Owner),
    /// The stateless context of an HTTP server: its tasks belong to the credentials of
    /// the request that created them, and get public ids and a time to live (see
    /// `crate::tasks_stateless`).
    Stateless(Arc<PublicIds>),
}

impl Session {
    /// The places and limits of the stateless context's tasks (`None`: a session).
    fn stateless(&self) -> Option<&Arc<PublicIds>> {
        match &self.kind {
            Context::Stateless(ids) => Some(ids),
            Context::Session(_) => None,
        }
    }

    /// Who the request's tasks and approval states belong to: the session, or the
    /// request's credentials in the stateless context.
    fn owner(&self, context: &RequestContext<RoleServer>) -> Owner {
        match &self.kind {
            Context::Session(owner) => owner.clone(),
            Context::Stateless(ids) => principal(ids, context).owner(),
        }
    }
}

impl Session {
    async fn close(&self) {
        self.stop.cancel();
        if let Some(tasks) = &self.tasks {
            let records = match &self.kind {
                Context::Session(owner) => Some(owner),
                Context::Stateless(_) => None,
            };
            tasks.close(records).await;
        }
        let guard = lock(&self.guard).take();
        if let Some(guard) = guard {
            guard.close().await;
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.stop.cancel();
        let guard = self
            .guard
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(guard) = guard {
            match tokio::runtime::Handle::try_current() {
                Ok(handle) => {
                    handle.spawn(guard.close());
                }
                Err(_) => drop(guard),
            }
        }
    }
}

/// Names and definition addresses of a view's tools: whether two lists publish the same
/// tools.
type Fingerprint = Vec<(Arc<str>, usize)>;

/// The published tools of one view, built once per registry generation.
struct ToolList {
    generation: u64,
    /// One entry per visible tool, aligned with `fingerprint`; `None` where the MCP
    /// export leaves the tool out (it is then neither listed nor callable).
    tools: Vec<Option<Arc<McpTool>>>,
    /// The published tools' names and their index in `tools`.
    by_name: HashMap<Arc<str>, usize>,
    /// Names and definition addresses: whether two lists publish the same tools.
    fingerprint: Fingerprint,
}

#[derive(Default)]
struct ListCache(Mutex<Option<Arc<ToolList>>>);

impl ListCache {
    fn get(&self, shared: &Shared, scope: Option<ScopeId>) -> Arc<ToolList> {
        let generation = *shared.changes.borrow();
        if let Some(list) = &*lock(&self.0)
            && list.generation == generation
        {
            return list.clone();
        }
        // A session shares the global view's list, or its published tools, where its
        // own view agrees (most sessions see exactly the global tools).
        let global = scope.map(|_| shared.global.get(shared, None));
        let mut visible = visible(&shared.registry, scope);
        if let Some(listing) = &shared.listing {
            visible = listing(&shared.registry, scope, visible);
        }
        let list = build_list(visible, generation, global);
        *lock(&self.0) = Some(list.clone());
        list
    }
}

/// The tools visible from `scope`, in publication order. The only place the server reads
/// the registry's views.
fn visible(registry: &Registry, scope: Option<ScopeId>) -> Vec<DynTool> {
    registry.view_of(scope).tools()
}

fn build_list(
    visible: Vec<DynTool>,
    generation: u64,
    reuse: Option<Arc<ToolList>>,
) -> Arc<ToolList> {
    let fingerprint: Fingerprint = visible
        .iter()
        .map(|tool| {
            let def = tool.definition();
            (
                Arc::from(def.name.as_ref()),
                std::ptr::from_ref(def) as usize,
            )
        })
        .collect();
    if let Some(reuse) = &reuse
        && reuse.fingerprint == fingerprint
    {
        return reuse.clone();
    }
    let mut tools = Vec::with_capacity(visible.len());
    let mut by_name = HashMap::with_capacity(visible.len());
    for (tool, (name, address)) in visible.iter().zip(&fingerprint) {
        let shared = reuse.as_ref().and_then(|r| {
            let &i = r.by_name.get(name)?;
            (r.fingerprint[i].1 == *address)
                .then(|| r.tools[i].clone())
                .flatten()
        });
        let published = shared.or_else(|| match mcp_tool(tool.definition()) {
            Ok(t) => Some(Arc::new(t)),
            Err(e) => {
                tracing::warn!("{e}");
                None
            }
        });
        if published.is_some() {
            by_name.insert(name.clone(), tools.len());
        }
        tools.push(published);
    }
    Arc::new(ToolList {
        generation,
        tools,
        by_name,
        fingerprint,
    })
}

/// The rmcp handler for one connection (or one stateless HTTP request).
pub(crate) struct Handler {
    shared: Arc<Shared>,
    cell: Arc<SessionCell>,
    /// The HTTP server's stateless context, for requests without a session.
    stateless: Option<Arc<StatelessContext>>,
    open_on_initialize: bool,
    /// The session's published list when a listen stream was accepted, before the
    /// client was told so: changes from then on are notified on that stream.
    listen_baseline: Mutex<Option<Fingerprint>>,
}

impl Handler {
    /// The request's session: its connection (stdio), or the HTTP session it belongs to.
    fn session(&self) -> Option<Arc<Session>> {
        self.cell.get()
    }

    /// Where the request runs: its session, or (a request without one, over HTTP) the
    /// server's stateless context.
    fn context(&self) -> Option<Arc<Session>> {
        self.cell.get().or_else(|| {
            self.stateless
                .as_ref()
                .map(|context| context.0.open(&self.shared, true))
        })
    }

    fn tool_list(&self, session: Option<&Session>) -> Arc<ToolList> {
        match session {
            Some(s) => s.tools.get(&self.shared, Some(s.scope.id())),
            None => self.shared.global.get(&self.shared, None),
        }
    }

    /// Send `notifications/tools/list_changed` through `send` whenever the session's
    /// published list differs from the last one seen (at first `baseline`, or the list
    /// now), until the session (or `until`) ends.
    fn watch_list<F, Fut>(
        &self,
        session: Arc<Session>,
        baseline: Option<Fingerprint>,
        until: CancellationToken,
        send: F,
    ) where
        F: Fn() -> Fut + Send + 'static,
        Fut: Future<Output = bool> + Send,
    {
        let shared = self.shared.clone();
        let mut changes = shared.registry.changes();
        let mut last =
            baseline.unwrap_or_else(|| self.tool_list(Some(&session)).fingerprint.clone());
        let stop = session.stop.clone();
        let weak = Arc::downgrade(&session);
        drop(session);
        tokio::spawn(async move {
            // The first round compares at once: a change between the baseline and this
            // task's start is not missed.
            let mut first = true;
            loop {
                if !first {
                    tokio::select! {
                        _ = stop.cancelled() => break,
                        _ = until.cancelled() => break,
                        changed = changes.changed() => if changed.is_err() { break },
                    }
                }
                first = false;
                let Some(session) = weak.upgrade() else { break };
                let list = session.tools.get(&shared, Some(session.scope.id()));
                drop(session);
                if list.fingerprint != last {
                    last = list.fingerprint.clone();
                    if !send().await {
                        break;
                    }
                }
            }
        });
    }

    /// The session a listen stream belongs to: the request's context (a session of its
    /// own, opened now, where there is no stateless context).
    fn listen_session(&self) -> Arc<Session> {
        match self.context() {
            Some(session) => session,
            None => self.cell.open(&self.shared, false),
        }
    }
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        let builder = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed();
        // Tool calls may become tasks only where there is a job runtime to run them.
        let capabilities = if self.shared.registry.jobs().is_some() {
            builder.enable_tasks().build()
        } else {
            builder.build()
        };
        let mut config = ServerConfig::new(capabilities).with_server_info(self.shared.info.clone());
        if let Some(text) = &self.shared.instructions {
            config = config.with_instructions(text.clone());
        }
        config
    }

    async fn initialize(
        &self,
        request: rmcp::model::InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        if self.open_on_initialize {
            self.cell.open(&self.shared, false);
        }
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // Sessions on revisions with `initialize` get list changes as plain notifications.
        if let Some(session) = self.session() {
            let peer: Peer<RoleServer> = context.peer.clone();
            self.watch_list(session, None, CancellationToken::new(), move || {
                let peer = peer.clone();
                async move { peer.notify_tool_list_changed().await.is_ok() }
            });
        }
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        if requested.tools_list_changed == Some(true) {
            // Called before the client is told the stream is open: what it sees from
            // here on is what the stream reports changes against.
            let session = self.listen_session();
            let baseline = self.tool_list(Some(&session)).fingerprint.clone();
            *self
                .listen_baseline
                .lock()
                .unwrap_or_else(|e| e.into_inner()) = Some(baseline);
        }
        Some(SubscriptionFilter::builder().tools_list_changed().build())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        // Revisions without `initialize` ask for list changes on a listen stream.
        if context.accepted().tools_list_changed == Some(true) {
            let session = self.listen_session();
            let baseline = self
                .listen_baseline
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take();
            let sink = context.sink().clone();
            let until = context.request_context().ct.clone();
            self.watch_list(session, baseline, until, move || {
                let sink = sink.clone();
                async move { sink.notify_tool_list_changed().await.is_ok() }
            });
        }
        // The tasks extension's `taskIds`, read by the transport (see
        // `crate::tasks_listen`): each task of this context is followed.
        let request = context.request_context();
        let listen = extension::<ListenTasks>(&request.extensions).cloned();
        if let Some(ListenTasks(ids)) = listen {
            for id in ids.iter() {
                let Ok(found) = self.task_of(id, request) else {
                    continue;
                };
                let task = crate::tasks_listen::Followed {
                    tasks: found.tasks,
                    owner: found.owner,
                    id: found.id,
                };
                tokio::spawn(crate::tasks_listen::follow(
                    task,
                    request.peer.clone(),
                    request.id.clone(),
                    request.ct.clone(),
                ));
            }
        }
        context.cancelled().await;
        Ok(())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let _ = context;
        if let Some(cursor) = request.and_then(|r| r.cursor) {
            return Err(McpError::invalid_params(
                format!("invalid cursor {cursor:?}: this server lists every tool in one page"),
                None,
            ));
        }
        let session = self.context();
        let list = self.tool_list(session.as_deref());
        Ok(ListToolsResult::with_all_items(
            list.tools
                .iter()
                .flatten()
                .map(|t| t.tool.clone())
                .collect(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let session = self.context();
        let list = self.tool_list(session.as_deref());
        let index = *list.by_name.get(name)?;
        Some(list.tools[index].as_ref()?.tool.clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // The connection's session, if any: only it can carry requests to the client.
        let connection = self.session();
        let session = self.context();
        let list = self.tool_list(session.as_deref());
        if !list.by_name.contains_key(request.name.as_ref())
            && list
                .fingerprint
                .iter()
                .any(|(name, _)| **name == *request.name)
        {
            // Visible but left out of the list: as unknown to the client as a tool
            // that does not exist. (The registry's own schema limits keep every
            // registered tool within the export's, so this is a safeguard.)
            return Err(McpError::invalid_params(
                format!("tool `{}` is not published over MCP", request.name),
                None,
            ));
        }
        let raw = raw_arguments(&context);
        // The arguments' text, which a resumable approval's state is bound to.
        let arguments_text: Arc<str> = match &raw {
            Some(text) => text.clone(),
            None => Arc::from(
                serde_json::to_string(&request.arguments.clone().unwrap_or_default())
                    .unwrap_or_default(),
            ),
        };
        let arguments = match raw {
            Some(text) => Arguments::Text(text),
            None => Arguments::Serde(Value::Object(request.arguments.unwrap_or_default())),
        };
        let scope_id = session.as_ref().map(|s| s.scope.id());
        // A stateless request's state is bound to its sender too.
        let sender = session
            .as_ref()
            .and_then(|s| s.stateless())
            .map(|ids| principal(ids, &context).tag());
        let binding = || {
            resume::binding(
                scope_id,
                sender.as_deref(),
                request.name.as_ref(),
                &arguments_text,
            )
        };
        let registry = self.shared.registry.clone();
        let capable = can_elicit_form(context.client_capabilities().as_ref());
        // Revisions without server-to-client requests ask with `InputRequiredResult`.
        let resumable = context
            .protocol_version()
            .is_some_and(|v| !v.has_initialize());
        let tool = list
            .by_name
            .get(request.name.as_ref())
            .and_then(|&i| list.tools[i].clone());
        let support = tool
            .as_ref()
            .map_or(TaskSupport::Forbidden, |t| t.task_support);
        if request.request_state.is_none() && support.allows_task() {
            // Task creation is the server's choice: a task-capable tool runs as a task
            // whenever the client declared the tasks extension on this request (or at
            // `initialize`) and the session can hold one.
            let declared = context
                .client_capabilities()
                .is_some_and(|c| c.supports_tasks());
            let tasks = session.as_ref().and_then(|s| s.tasks.clone());
            match (declared, session.as_ref(), tasks) {
                (true, Some(session), Some(tasks)) => {
                    // A stateless task takes a place among the server's kept tasks.
                    match session.stateless().map(PublicIds::reserve) {
                        Some(None) if support == TaskSupport::Required => {
                            return Err(McpError::invalid_request(
                                format!(
                                    "tool `{}` runs only as a task, and this server keeps as \
                                     many tasks as it may ({}): try again when one has expired",
                                    request.name, self.shared.stateless_tasks.max_tasks
                                ),
                                None,
                            ));
                        }
                        // No place left: the call is answered directly (below).
                        Some(None) => {}
                        reservation => {
                            let cannot_ask = cannot_ask(capable, resumable, connection.is_some());
                            return self
                                .start_task(TaskStart {
                                    session,
                                    tasks,
                                    name: request.name.as_ref(),
                                    arguments,
                                    tool,
                                    context: &context,
                                    resumable,
                                    cannot_ask,
                                    model: TaskModel::Extension,
                                    reservation: reservation.flatten(),
                                })
                                .await;
                        }
                    }
                }
                (false, _, _)
                    if support == TaskSupport::Required
                        && self.shared.registry.jobs().is_some()
                        && context
                            .protocol_version()
                            .is_some_and(|v| v.as_str() == tasks_core::VERSION) =>
                {
                    // 2025-11-25: a tool that runs only as a task is called with
                    // `params.task` (see `crate::tasks_core`).
                    return Err(tasks_core::method_not_found(format!(
                        "tool `{}` runs only as a task: call it with `params.task` \
                         (its execution.taskSupport is \"required\")",
                        request.name
                    )));
                }
                (false, _, _) if support == TaskSupport::Required => {
                    return Err(McpError::missing_required_client_capability(
                        ClientCapabilities::builder().enable_tasks().build(),
                    ));
                }
                (true, session, _) if support == TaskSupport::Required => {
                    let why = if session.is_none() {
                        "a request without a session cannot start one"
                    } else {
                        "this server has no job runtime to run it"
                    };
                    return Err(McpError::invalid_request(
                        format!("tool `{}` runs only as a task, and {why}", request.name),
                        None,
                    ));
                }
                _ => {}
            }
        }
        let result = if let Some(state) = request.request_state.as_deref() {
            // The retry of a call suspended on its approval.
            let bound = binding();
            let resumed = self.shared.resumes.resume(
                &*self.shared.store,
                state,
                request.input_responses.as_ref(),
                &bound,
                request.name.as_ref(),
                &context.ct,
            );
            match resumed.await? {
                resume::Resumed::Complete(result) => result,
                resume::Resumed::InputRequired(input) => {
                    return Ok(CallToolResponse::InputRequired(input));
                }
            }
        } else if resumable && capable {
            // A suspended call ends with its session.
            let cancel = session
                .as_ref()
                .map_or_else(CancellationToken::new, |s| s.stop.child_token());
            let mut call = ToolCall::new(
                request_id_text(&context.id),
                request.name.as_ref(),
                arguments,
            )
            .with_cancellation(cancel.clone());
            if let Some(id) = scope_id {
                call = call.with_agent(id);
            }
            let (asked_tx, asked_rx) = oneshot::channel();
            let (result_tx, mut result_rx) = oneshot::channel();
            let suspend: Arc<dyn ApprovalHandler> = Arc::new(resume::Suspend {
                resumes: self.shared.resumes.clone(),
                registry: registry.clone(),
                scope: session.as_ref().map(|s| s.scope.clone()),
                binding: binding(),
                cancel: cancel.clone(),
                asked: Arc::new(Mutex::new(Some(asked_tx))),
                store: self.shared.store.clone(),
                owner: session
                    .as_ref()
                    .map_or_else(|| Owner::new("no session"), |s| s.owner(&context)),
            });
            // On a task of its own: the call outlives this request when it is suspended.
            tokio::spawn(async move {
                let result =
                    dsh_runtime::hooks::with_approval(suspend, registry.execute(call)).await;
                let _ = result_tx.send(result);
            });
            let ended = |_| {
                McpError::internal_error(
                    format!(
                        "tools/call `{}`: the call ended without a result",
                        request.name
                    ),
                    None,
                )
            };
            // This request's cancellation is the call's until it is suspended.
            let round = context.ct.clone();
            tokio::select! {
                result = &mut result_rx => result.map_err(ended)?,
                asked = asked_rx => match asked {
                    Ok((nonce, input)) => {
                        self.shared.resumes.park_result(&nonce, result_rx);
                        return Ok(CallToolResponse::InputRequired(input));
                    }
                    // The call ended without asking.
                    Err(_) => result_rx.await.map_err(ended)?,
                },
                () = round.cancelled() => {
                    cancel.cancel();
                    result_rx.await.map_err(ended)?
                }
            }
        } else {
            let mut call = ToolCall::new(
                request_id_text(&context.id),
                request.name.as_ref(),
                arguments,
            )
            .with_cancellation(context.ct.clone());
            if let Some(id) = scope_id {
                call = call.with_agent(id);
            }
            let progress = context
                .meta
                .get_progress_token()
                .map(|token| ProgressForwarder::start(context.peer.clone(), token));
            let reporter = progress.as_ref().map(|p| p.reporter());
            // A call's `ask` that no handler of the registry answered goes to the
            // client's user (see `crate::approval`).
            let cannot_ask = cannot_ask(capable, resumable, connection.is_some());
            let client = ClientApproval::new(
                context.peer.clone(),
                registry.clone(),
                session.as_ref().map(|s| s.scope.clone()),
                cannot_ask,
            );
            let handler: Arc<dyn ApprovalHandler> = client;
            let execute = dsh_runtime::hooks::with_approval(handler, registry.execute(call));
            // rmcp runs each request handler on its own detached task and signals
            // cancellation through the token, never by dropping the handler, so the call
            // is always awaited to its end here (its body sees the cancellation and
            // cleans up).
            let result = match reporter {
                Some(reporter) => dsh_runtime::with_progress(reporter, execute).await,
                None => execute.await,
            };
            if let Some(progress) = progress {
                progress.finish().await;
            }
            result
        };
        if result.error_code() == Some(ErrorCode::UnknownTool)
            && !list.by_name.contains_key(request.name.as_ref())
        {
            // The protocol's answer to an unknown tool is a JSON-RPC error.
            return Err(McpError::invalid_params(
                result.message().unwrap_or("unknown tool").to_string(),
                None,
            ));
        }
        Ok(CallToolResponse::Complete(to_mcp_result(
            &result,
            tool.as_deref(),
        )))
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        let routed = extension::<CoreRoute>(&context.extensions).is_some();
        if !routed || !tasks_core::is_core_method(&request.method) {
            return Err(McpError::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                format!("method not found: {}", request.method),
                None,
            ));
        }
        self.core_request(request, context)
            .await
            .map(CustomResult::new)
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        let found = self.task_of(&request.task_id, &context)?;
        let record = found.tasks.get(&found.owner, &found.id).await?;
        Ok(GetTaskResult::new(crate::task_wire::detailed(&record)))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let found = self.task_of(&request.task_id, &context)?;
        found
            .tasks
            .update(&found.owner, &found.id, &request.input_responses)
            .await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let found = self.task_of(&request.task_id, &context)?;
        found
            .tasks
            .cancel(&found.owner, &found.id)
            .await
            .map(|_| ())
    }
}

/// The note a denied call's message ends with when the client could not ask its user:
/// the fact, then why.
macro_rules! cannot_ask_because {
    ($why:literal) => {
        concat!("the MCP client cannot ask its user for approval: ", $why)
    };
}

/// Why a call's `ask` cannot go to the client's user, if it cannot (the note its denial
/// carries, through [`dsh_runtime::hooks::Approval::UnavailableBecause`]).
fn cannot_ask(capable: bool, resumable: bool, in_session: bool) -> Option<&'static str> {
    if !capable {
        Some(cannot_ask_because!(
            "it did not declare the elicitation capability"
        ))
    } else if resumable {
        // Capable clients on these revisions suspend ordinary calls instead.
        Some(cannot_ask_because!(
            "this protocol revision has no server-to-client requests"
        ))
    } else if !in_session {
        Some(cannot_ask_because!(
            "a request without a session cannot be asked back"
        ))
    } else {
        None
    }
}

/// What starting a task needs from its `tools/call`.
struct TaskStart<'a> {
    session: &'a Arc<Session>,
    tasks: Arc<SessionTasks>,
    name: &'a str,
    arguments: Arguments,
    tool: Option<Arc<McpTool>>,
    context: &'a RequestContext<RoleServer>,
    /// The revision has no `initialize` (and no server-to-client requests).
    resumable: bool,
    cannot_ask: Option<&'static str>,
    /// The model the task is created through.
    model: TaskModel,
    /// The task's place among the stateless context's tasks (a task of that context).
    reservation: Option<crate::tasks_stateless::Reservation>,
}

/// A task a `tasks/*` request named: the tasks it is one of, its id and owner.
struct FoundTask {
    tasks: Arc<SessionTasks>,
    owner: Owner,
    id: String,
}

/// The principal of the request (its `Authorization` header), as `ids` records it.
fn principal(ids: &PublicIds, context: &RequestContext<RoleServer>) -> Principal {
    #[cfg(feature = "http")]
    let header = context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.headers.get(axum::http::header::AUTHORIZATION))
        .map(axum::http::HeaderValue::as_bytes);
    #[cfg(not(feature = "http"))]
    let header = {
        let _ = context;
        None
    };
    ids.principal(header)
}

impl Handler {
    /// The task `id` of the request's context and the owner the request acts for (its
    /// session, or its credentials in the stateless context).
    fn task_of(
        &self,
        id: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<FoundTask, McpError> {
        let session = self.context().ok_or_else(|| crate::tasks::not_found(id))?;
        let tasks = session
            .tasks
            .clone()
            .ok_or_else(|| crate::tasks::not_found(id))?;
        Ok(FoundTask {
            tasks,
            owner: session.owner(context),
            id: id.to_string(),
        })
    }

    /// The tasks of the session a `tasks/*` request names a task of, and its owner.
    fn session_tasks(
        &self,
        id: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<(Arc<SessionTasks>, Owner), McpError> {
        let session = self.session().ok_or_else(|| crate::tasks::not_found(id))?;
        let tasks = session
            .tasks
            .clone()
            .ok_or_else(|| crate::tasks::not_found(id))?;
        Ok((tasks, session.owner(context)))
    }

    /// Start a task-capable tool's call as a job of the session's owner and answer with
    /// the task (see `crate::tasks`).
    async fn start_task(&self, start: TaskStart<'_>) -> Result<CallToolResponse, McpError> {
        let TaskStart {
            session,
            tasks,
            name,
            arguments,
            tool,
            context,
            resumable,
            cannot_ask,
            model,
            reservation,
        } = start;
        let registry = self.shared.registry.clone();
        let call = ToolCall::new(request_id_text(&context.id), name, arguments)
            .with_agent(session.scope.id());
        // Progress goes on to the client for the task's life on revisions with
        // plain notifications; on every revision it sets the task's status message.
        let forwarder = if resumable {
            None
        } else {
            context
                .meta
                .get_progress_token()
                .map(|token| ProgressForwarder::start(context.peer.clone(), token))
        };
        // Inside a task of the extension a capable client is asked through the task on
        // every revision (see `crate::tasks`).
        let cannot_ask = match model {
            TaskModel::Extension => {
                cannot_ask.filter(|_| !can_elicit_form(context.client_capabilities().as_ref()))
            }
            _ => cannot_ask,
        };
        let stateless = session.stateless();
        let approval = ClientApproval::for_task(
            context.peer.clone(),
            registry.clone(),
            Some(session.scope.clone()),
            cannot_ask,
            // A stateless task's client polls: its request's stream is gone.
            TaskLink::new(!resumable && stateless.is_none()),
        );
        let owner = session.owner(context);
        let (id, ttl) = match stateless {
            Some(ids) => {
                let id = crate::tasks_stateless::random_id().ok_or_else(|| {
                    McpError::internal_error(
                        "no task id: the operating system's random source failed",
                        None,
                    )
                })?;
                (Some(id), Some(ids.ttl()))
            }
            None => (None, None),
        };
        let start = crate::tasks::TaskStart {
            id,
            owner: owner.clone(),
            model,
            ttl,
            spec: JobSpec::new(name, format!("tools/call {name}")),
        };
        let output = tool.clone();
        let record = tasks
            .start(start, move |job: JobContext, task: TaskHandle| async move {
                let stop = job.stop_token().clone();
                approval.attach_task(task.clone(), stop.clone());
                let call = call.with_cancellation(stop);
                let forward = forwarder.as_ref().map(ProgressForwarder::sender);
                let reporter = ProgressReporter::new(move |p: Progress| {
                    task.progress(p.progress, p.total, p.message.as_deref());
                    if let Some(forward) = &forward {
                        let _ = forward.send(Some(p));
                    }
                });
                let handler: Arc<dyn ApprovalHandler> = approval.clone();
                let result = dsh_runtime::with_progress(
                    reporter,
                    dsh_runtime::hooks::with_approval(handler, registry.execute(call)),
                )
                .await;
                if let Some(forwarder) = forwarder {
                    forwarder.finish().await;
                }
                (
                    to_mcp_result(&result, output.as_deref()),
                    result.text().to_string(),
                )
            })
            .await?;
        if let (Some(ids), Some(reservation)) = (stateless, reservation) {
            // A stateless task: known by a public id, bound to the request's principal,
            // kept for its time to live. Its client polls (its request's stream ends
            // with the response).
            ids.issue(reservation, record.id.clone(), owner, &tasks);
        } else if !resumable {
            crate::tasks::notify_when_settled(
                context.peer.clone(),
                tasks.clone(),
                owner,
                record.id.clone(),
                session.stop.clone(),
            );
        }
        Ok(CallToolResponse::Task(CreateTaskResult::new(
            crate::task_wire::detailed(&record).task,
        )))
    }
}

impl Handler {
    /// Answer a request of the 2025-11-25 task model rerouted by the transport (see
    /// `crate::tasks_core`).
    async fn core_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<Value, McpError> {
        let params = request.params.as_ref();
        match request.method.as_str() {
            tasks_core::CALL => {
                self.core_call(params.cloned().unwrap_or(Value::Null), context)
                    .await
            }
            tasks_core::LIST_TOOLS => {
                let paginated = match params {
                    Some(p) if !p.is_null() => Some(
                        serde_json::from_value::<PaginatedRequestParams>(p.clone()).map_err(
                            |e| McpError::invalid_params(format!("tools/list params: {e}"), None),
                        )?,
                    ),
                    _ => None,
                };
                let listed = self.list_tools(paginated, context).await?;
                let mut value = serde_json::to_value(listed)
                    .map_err(|e| McpError::internal_error(e.to_string(), None))?;
                let session = self.context();
                let list = self.tool_list(session.as_deref());
                if let Some(tools) = value.get_mut("tools").and_then(Value::as_array_mut) {
                    for tool in tools.iter_mut().filter_map(Value::as_object_mut) {
                        let support = tool
                            .get("name")
                            .and_then(Value::as_str)
                            .and_then(|name| list.by_name.get(name))
                            .and_then(|&i| list.tools[i].as_ref())
                            .map_or(TaskSupport::Forbidden, |t| t.task_support);
                        let support = match support {
                            TaskSupport::Optional => "optional",
                            TaskSupport::Required => "required",
                            _ => continue,
                        };
                        tool.insert(
                            "execution".to_string(),
                            serde_json::json!({ "taskSupport": support }),
                        );
                    }
                }
                Ok(value)
            }
            tasks_core::GET | tasks_core::CANCEL | tasks_core::RESULT => {
                let id = tasks_core::task_id(params)?;
                let (tasks, owner) = self.session_tasks(&id, &context)?;
                let record = tasks.get(&owner, &id).await?;
                match (request.method.as_str(), record.model) {
                    // A task of the extension keeps the extension's answers.
                    (tasks_core::GET, TaskModel::Extension) => serde_json::to_value(
                        GetTaskResult::new(crate::task_wire::detailed(&record)),
                    )
                    .map_err(|e| McpError::internal_error(e.to_string(), None)),
                    (tasks_core::CANCEL, TaskModel::Extension) => {
                        tasks.cancel(&owner, &id).await?;
                        Ok(Value::Object(serde_json::Map::new()))
                    }
                    (tasks_core::GET, _) => tasks_core::get(&tasks, &owner, &id).await,
                    (tasks_core::CANCEL, _) => tasks_core::cancel(&tasks, &owner, &id).await,
                    _ => tasks_core::result(&tasks, &owner, &id, context.ct.clone()).await,
                }
            }
            tasks_core::LIST => match self.session_tasks("", &context) {
                Ok((tasks, owner)) => tasks_core::list(&tasks, &owner, params).await,
                Err(_) => Ok(serde_json::json!({ "tasks": [] })),
            },
            other => Err(McpError::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                format!("method not found: {other}"),
                None,
            )),
        }
    }

    /// A 2025-11-25 `tools/call` with `params.task`: a task-capable tool's call starts
    /// as a task of the session and is answered `{task}`; outside a session the call
    /// runs as an ordinary call.
    async fn core_call(
        &self,
        params: Value,
        context: RequestContext<RoleServer>,
    ) -> Result<Value, McpError> {
        tasks_core::check_task_metadata(&params)?;
        let request: CallToolRequestParams = serde_json::from_value(params)
            .map_err(|e| McpError::invalid_params(format!("tools/call params: {e}"), None))?;
        let session = self.session();
        let list = self.tool_list(session.as_deref());
        let tool = list
            .by_name
            .get(request.name.as_ref())
            .and_then(|&i| list.tools[i].clone());
        let tasks = session.as_ref().and_then(|s| s.tasks.clone());
        let (Some(session), Some(tasks), Some(tool)) = (session.as_ref(), tasks, tool) else {
            // No session (a stateless request) or an unknown tool: the ordinary call.
            let response = self.call_tool(request, context).await?;
            let serialized = match response {
                CallToolResponse::Complete(result) => serde_json::to_value(result),
                CallToolResponse::InputRequired(input) => serde_json::to_value(input),
                CallToolResponse::Task(created) => serde_json::to_value(created),
                _ => return Err(McpError::internal_error("the call had no result", None)),
            };
            return serialized.map_err(|e| McpError::internal_error(e.to_string(), None));
        };
        if !tool.task_support.allows_task() {
            return Err(tasks_core::method_not_found(format!(
                "tool `{}` cannot run as a task (its execution.taskSupport is \"forbidden\"): \
                 call it without `params.task`",
                request.name
            )));
        }
        let arguments = match raw_arguments(&context) {
            Some(text) => Arguments::Text(text),
            None => Arguments::Serde(Value::Object(request.arguments.clone().unwrap_or_default())),
        };
        let capable = can_elicit_form(context.client_capabilities().as_ref());
        let response = self
            .start_task(TaskStart {
                session,
                tasks: tasks.clone(),
                name: request.name.as_ref(),
                arguments,
                tool: Some(tool),
                context: &context,
                resumable: false,
                cannot_ask: cannot_ask(capable, false, true),
                model: TaskModel::Core2025,
                reservation: None,
            })
            .await?;
        let CallToolResponse::Task(created) = response else {
            return Err(McpError::internal_error("no task was created", None));
        };
        let task = tasks
            .get(&session.owner(&context), &created.task.task_id)
            .await?;
        Ok(serde_json::json!({ "task": crate::task_wire::task_json(&task) }))
    }
}

/// A pipeline result as a `tools/call` result: the content blocks, then each context as
/// a text block marked with [`crate::definition::CONTEXT_META_KEY`]; on success the
/// canonical value as `structuredContent` (wrapped when the tool's output is not an
/// object, see [`crate::definition`]); on failure `isError: true` with the registry's
/// `Error: <message>` text.
pub(crate) fn to_mcp_result(result: &ToolResult, tool: Option<&McpTool>) -> CallToolResult {
    let mut content: Vec<rmcp::model::ContentBlock> =
        result.content().iter().map(content_block).collect();
    for context in result.contexts() {
        let mut text = rmcp::model::TextContent::new(context.clone());
        let mut meta = rmcp::model::MetaObject::new();
        meta.0.insert(
            crate::definition::CONTEXT_META_KEY.to_string(),
            Value::Bool(true),
        );
        text.meta = Some(meta);
        content.push(rmcp::model::ContentBlock::Text(text));
    }
    if result.is_error() {
        return CallToolResult::error(content);
    }
    let mut out = CallToolResult::success(content);
    if let Some(value) = result.value() {
        let value = to_serde(value);
        out.structured_content = Some(match tool {
            Some(tool) => tool.structured_content(value),
            None => value,
        });
    }
    out
}

fn content_block(block: &ContentBlock) -> rmcp::model::ContentBlock {
    match block {
        ContentBlock::Text { text } => rmcp::model::ContentBlock::text(text.clone()),
        ContentBlock::Image { data, media_type } => {
            rmcp::model::ContentBlock::image(data.clone(), media_type.clone())
        }
        other => rmcp::model::ContentBlock::text(
            serde_json::to_string(other).unwrap_or_else(|e| format!("[content block: {e}]")),
        ),
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

/// Forwards a call's progress reports as `notifications/progress`, in order, dropping
/// reports that do not increase, and stops before the result is sent.
struct ProgressForwarder {
    tx: mpsc::UnboundedSender<Option<Progress>>,
    task: tokio::task::JoinHandle<()>,
}

impl ProgressForwarder {
    fn start(peer: Peer<RoleServer>, token: ProgressToken) -> Self {
        let (tx, mut rx) = mpsc::unbounded_channel::<Option<Progress>>();
        let task = tokio::spawn(async move {
            let mut last: Option<f64> = None;
            // `None` marks the end of the call: nothing after it is sent.
            while let Some(Some(p)) = rx.recv().await {
                if last.is_some_and(|l| p.progress <= l) || !p.progress.is_finite() {
                    continue;
                }
                last = Some(p.progress);
                let mut param = ProgressNotificationParam::new(token.clone(), p.progress);
                param.total = p.total;
                param.message = p.message;
                if peer.notify_progress(param).await.is_err() {
                    break;
                }
            }
        });
        ProgressForwarder { tx, task }
    }

    fn sender(&self) -> mpsc::UnboundedSender<Option<Progress>> {
        self.tx.clone()
    }

    fn reporter(&self) -> ProgressReporter {
        let tx = self.tx.clone();
        ProgressReporter::new(move |p| {
            let _ = tx.send(Some(p));
        })
    }

    /// Send what was reported so far; later reports (from tasks the body left running)
    /// are dropped.
    async fn finish(self) {
        let _ = self.tx.send(None);
        let _ = self.task.await;
    }
}
