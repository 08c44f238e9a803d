//! The tool registry: a global layer plus agent scopes, RAII registrations, restrict
//! masks, and the views calls and prompts are built from.
//!
//! # Layers and views
//!
//! A [`Registry`] has one global layer; [`Registry::scope`] creates an agent scope and
//! [`AgentScope::child`] a scope below it (preset → agent). A tool registered in a scope is
//! visible to calls from that scope and its descendants, and shadows an inherited tool of
//! the same name there. A scope's view, in publication order ([`ToolView::schemas`]):
//!
//! 1. the parent's view (the global layer's for a top-level scope), nearer layers
//!    shadowing farther ones in the position where the name first appeared;
//! 2. minus the names this scope's [`Restriction`]s reject;
//! 3. then this scope's own tools: replacing an inherited one in place, else appended.
//!
//! Masks apply to what a scope inherits, never to its own tools, and they intersect
//! along the chain (a child inherits its parent's already masked view).
//!
//! # Registrations
//!
//! The registry owns what it registers. Every `register*` and `add_*` hook method returns
//! a [`RegistrationHandle`], a handle whose drop does nothing: a tool stays registered until
//! [`RegistrationHandle::unregister`] (or its scope's removal), so `let _ = registry.register(t)`
//! registers `t` for good, as it reads. For a registration that lives as long as a value
//! (a session, a test), turn the handle into a drop-guard with
//! [`RegistrationHandle::unregister_on_drop`]: dropping the [`RegistrationGuard`] removes
//! exactly what was added. Unregistering is idempotent. A failed registration changes
//! nothing; a toolbox registers all of its tools or none.
//!
//! A removed tool or hook disappears from every view at once; the value itself is dropped
//! once nothing holds it any more: calls already running keep theirs until they finish,
//! and a scope that has not been used since a global tool or hook was removed keeps it
//! until its next use (or its removal), when its view is rebuilt.
//!
//! Reads are cheap and consistent under concurrent registration: each call works on one
//! immutable snapshot of its scope's view. A change rebuilds only the views it affects (a
//! scope's change: that scope and its descendants; a global change: the global view, each
//! scope's view being rebuilt on its next use), so no registration change costs more as
//! agent scopes accumulate (see `state.rs`).
//!
//! # Reading a view
//!
//! The tools a caller sees are read through a [`ToolView`], one immutable snapshot of one
//! caller's view: [`Registry::view`] (the global layer), [`AgentScope::view`] (what calls from
//! that scope see) and [`Registry::view_of`] (a scope known by its id). Every read of one
//! `ToolView` agrees with the others. [`Registry::call`](crate::Registry::call) and the
//! presenters see the global layer.

pub(crate) mod detach;
mod present;
mod raw;
pub(crate) mod state;

use std::collections::HashSet;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, Weak};

use tokio::sync::watch;

use crate::hooks::{ApprovalHandler, Guard, Observer, PostExecute, PreExecute, Wrapper};
use crate::json::{Object, Value};
use crate::schema::{Kind, Schema, SchemaError, json_quote};
use crate::tool::{AgentScopeId, DynTool, ErasedTool, Toolbox};
use state::{Dirty, Entry, Hook, HookEntry, Layer, Mask, Master, Published, RegId, ScopeState};

pub(crate) use state::{ByType, CallSnapshot};

pub use raw::RawTool;

/// The name reserved for code mode's tool.
pub const RUN_CODE: &str = "run_code";

/// The set of tools, scopes and hooks calls run against. Cheap to clone (shared).
///
/// The registry owns what it registers: the [`RegistrationHandle`] a `register*` or `add_*`
/// method returns is a handle, and dropping it does nothing. Remove a registration with
/// [`RegistrationHandle::unregister`], or tie it to a value's lifetime with
/// [`RegistrationHandle::unregister_on_drop`].
///
/// ```
/// # use dsh_runtime::{Registry, Tool, tool};
/// /// Say hello.
/// #[tool]
/// async fn hello() -> String { "hello".into() }
///
/// let registry = Registry::new();
/// assert!(registry.view().schemas().is_empty());
/// {
///     let _guard = registry.register(Hello).unwrap().unregister_on_drop();
///     assert!(registry.view().get("hello").is_some());
/// }
/// assert!(registry.view().get("hello").is_none()); // removed with the guard
///
/// let _ = registry.register(Hello).unwrap(); // stays registered
/// assert_eq!(registry.view().names(), ["hello".into()]);
/// ```
#[derive(Clone)]
pub struct Registry {
    inner: Arc<Inner>,
}

struct Inner {
    published: RwLock<Published>,
    master: Mutex<Master>,
    /// Whether the built-in timeout wrapper runs (outermost) for tools with `timeout_ms`.
    timeouts: bool,
    /// How raw argument text is snapshotted (nesting limit).
    parse: crate::json::ParseOptions,
    /// The bodies of cancelled calls left running (see [`RegistryBuilder::max_detached`]).
    detach: Arc<detach::Detacher>,
    changes: watch::Sender<u64>,
    /// The job runtime of [`ToolContext::jobs`](crate::ToolContext::jobs), if any.
    jobs: Option<crate::jobs::JobRuntime>,
    /// Whether traced calls record their arguments and results (see
    /// [`RegistryBuilder::trace_content`]).
    trace_content: bool,
}

/// Configures a [`Registry`].
#[derive(Clone, Debug)]
pub struct RegistryBuilder {
    timeouts: bool,
    max_depth: usize,
    max_detached: usize,
    detach_grace: std::time::Duration,
    jobs: Option<crate::jobs::JobRuntime>,
    trace_content: bool,
}

impl RegistryBuilder {
    /// The job runtime the registry's tools publish background work on, through
    /// [`ToolContext::jobs`](crate::ToolContext::jobs) (default: none, and a tool asking
    /// for one fails with `JOBS_UNAVAILABLE`).
    pub fn jobs(mut self, jobs: crate::jobs::JobRuntime) -> Self {
        self.jobs = Some(jobs);
        self
    }

    /// Whether the built-in timeout wrapper enforces tools' `timeout_ms` (default: on).
    ///
    /// Turn it off to place [`crate::TimeoutWrapper`] among your own wrappers yourself
    /// (e.g. inside a retry wrapper, so each attempt gets its own deadline), or to leave
    /// deadlines to the host.
    pub fn timeouts(mut self, on: bool) -> Self {
        self.timeouts = on;
        self
    }

    /// The deepest nesting accepted in raw argument text (default 128, see
    /// [`crate::json::ParseOptions`]); deeper input fails the snapshot with a precise
    /// error. Parsing, validation and dropping never recurse on the value; typed
    /// deserialization of `json` fields does, so keep this modest.
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }

    /// The most bodies of cancelled calls left running at once (default 16); 0 turns
    /// detaching off.
    ///
    /// A call with a deadline (a tool's `timeout_ms` under the built-in timeout wrapper, or
    /// a wrapper's replacement token) or with a caller's token runs its body on a Tokio task
    /// of its own, while the caller's task watches the body's token. When that token is
    /// cancelled and the body has not returned within the grace period
    /// ([`RegistryBuilder::detach_grace`]), the call answers at once (`ABORTED`, or
    /// `TOOL_TIMEOUT` when the timeout wrapper's deadline fired) and the body is
    /// *detached*: it runs on, never dropped, and counts against this limit until it
    /// returns ([`Registry::detached_bodies`]; each detach is also a `WARN` tracing event).
    /// While the limit is reached, such calls fail before their body starts, with a
    /// message naming the limit. Calls that start concurrently may each pass the check,
    /// so the count can exceed the limit by the number of calls in flight.
    ///
    /// Running on its own task costs one task spawn per such call: measured on a trivial
    /// tool, about 2.5 µs more per call when the caller is a task on a runtime worker, and
    /// about 11 µs more when it is a `block_on` outside the workers (the body is then
    /// handed to a worker thread and its result back). Calls without a deadline or a
    /// caller's token still run on the caller's task, with no spawn, as before. A body that blocks its thread in a
    /// system call occupies a runtime worker until the call returns: on a current-thread
    /// runtime nothing, not even the deadline, can run meanwhile; on a multi-thread
    /// runtime the other workers answer the call on time. With 0, or outside a Tokio
    /// runtime, bodies run on the caller's task and a cancelled body is always awaited.
    pub fn max_detached(mut self, max: usize) -> Self {
        self.max_detached = max;
        self
    }

    /// How long a body whose token was cancelled may take to return before it is
    /// detached (default 200 ms; see [`RegistryBuilder::max_detached`]). A cooperative
    /// body returns well within it, and the call's result then waits for it as before.
    pub fn detach_grace(mut self, grace: std::time::Duration) -> Self {
        self.detach_grace = grace;
        self
    }

    /// Whether a traced call's `execute_tool` span records the call's arguments
    /// (`gen_ai.tool.call.arguments`) and a successful result's value
    /// (`gen_ai.tool.call.result`), as JSON text (default: no). The OpenTelemetry GenAI
    /// conventions make both opt-in because they may hold sensitive data. Only calls a
    /// subscriber traces pay for the text.
    pub fn trace_content(mut self, record: bool) -> Self {
        self.trace_content = record;
        self
    }

    /// Build the registry.
    pub fn build(self) -> Registry {
        Registry {
            inner: Arc::new(Inner {
                published: RwLock::new(Published::empty()),
                master: Mutex::new(Master::default()),
                timeouts: self.timeouts,
                parse: crate::json::ParseOptions {
                    max_depth: self.max_depth,
                },
                detach: detach::Detacher::new(self.max_detached, self.detach_grace),
                changes: watch::Sender::new(0),
                jobs: self.jobs,
                trace_content: self.trace_content,
            }),
        }
    }
}

impl Default for Registry {
    fn default() -> Self {
        Registry::new()
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let published = self.inner.read();
        f.debug_struct("Registry")
            .field(
                "global_tools",
                &published
                    .global
                    .tools()
                    .iter()
                    .map(|e| &**e.name())
                    .collect::<Vec<_>>(),
            )
            .field("scopes", &published.scopes.len())
            .finish_non_exhaustive()
    }
}

/// One entry of [`ToolView::schemas`]: what a model is shown of a tool.
///
/// `parameters` is the tool's parameter [`Schema`], the same value as
/// [`ToolDefinition::parameters`](crate::ToolDefinition::parameters); print it with
/// [`Schema::to_json_string`] (or the whole descriptor with [`ToolDescriptor::to_json`]).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ToolDescriptor {
    /// The tool name.
    pub name: Arc<str>,
    /// The model-facing description.
    pub description: String,
    /// The parameter schema.
    pub parameters: Arc<Schema>,
}

impl ToolDescriptor {
    /// A descriptor of a tool named `name`.
    pub fn new(
        name: impl Into<Arc<str>>,
        description: impl Into<String>,
        parameters: Arc<Schema>,
    ) -> Self {
        ToolDescriptor {
            name: name.into(),
            description: description.into(),
            parameters,
        }
    }

    /// `{"name":…,"description":…,"parameters":…}`, the parameters projected to JSON
    /// Schema (byte-stable key order).
    pub fn to_json(&self) -> Value {
        let mut o = Object::new();
        o.insert("name", Value::from(&*self.name));
        o.insert("description", Value::from(self.description.as_str()));
        o.insert("parameters", self.parameters.to_json_schema());
        Value::Object(o)
    }
}

impl serde::Serialize for ToolDescriptor {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("name", &*self.name)?;
        m.serialize_entry("description", &self.description)?;
        m.serialize_entry("parameters", &self.parameters.to_json_schema())?;
        m.end()
    }
}

impl Registry {
    /// An empty registry with the built-in timeout wrapper on.
    pub fn new() -> Registry {
        Registry::builder().build()
    }

    /// Configure a registry.
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder {
            timeouts: true,
            max_depth: crate::json::ParseOptions::default().max_depth,
            max_detached: detach::DEFAULT_MAX_DETACHED,
            detach_grace: detach::DEFAULT_GRACE,
            jobs: None,
            trace_content: false,
        }
    }

    /// Whether traced calls record their arguments and results (set with
    /// [`RegistryBuilder::trace_content`]).
    pub fn traces_content(&self) -> bool {
        self.inner.trace_content
    }

    /// The job runtime set with [`RegistryBuilder::jobs`], if any.
    pub fn jobs(&self) -> Option<&crate::jobs::JobRuntime> {
        self.inner.jobs.as_ref()
    }

    /// Create a top-level agent scope. Dropping every handle of it removes the scope,
    /// its tools, hooks and masks.
    pub fn scope(&self) -> AgentScope {
        self.new_scope(None)
    }

    fn new_scope(&self, parent: Option<Arc<ScopeHandle>>) -> AgentScope {
        let mut m = self.inner.lock();
        let id = AgentScopeId(m.next_id());
        let parent_id = parent.as_ref().map(|p| p.id);
        m.scopes.insert(
            id,
            ScopeState {
                parent: parent_id,
                children: Vec::new(),
                layer: Layer::default(),
                masks: Vec::new(),
            },
        );
        if let Some(p) = parent_id.and_then(|p| m.scopes.get_mut(&p)) {
            p.children.push(id);
        }
        self.inner.commit(m, Dirty::AgentScope(id), true);
        AgentScope(Arc::new(ScopeHandle {
            registry: self.clone(),
            id,
            _parent: parent,
        }))
    }

    /// Register a tool in the global layer.
    pub fn register<T: ErasedTool>(&self, tool: T) -> Result<RegistrationHandle, RegisterError> {
        self.inner.add_tools(None, vec![DynTool::new(tool)])
    }

    /// Register a tool in an agent scope (see [`AgentScope::register`]).
    pub fn register_in<T: ErasedTool>(
        &self,
        scope: AgentScopeId,
        tool: T,
    ) -> Result<RegistrationHandle, RegisterError> {
        self.inner.add_tools(Some(scope), vec![DynTool::new(tool)])
    }

    /// Register an erased tool in the global layer.
    pub fn register_dyn(&self, tool: DynTool) -> Result<RegistrationHandle, RegisterError> {
        self.inner.add_tools(None, vec![tool])
    }

    /// Register every tool of a toolbox in the global layer: all of them, or none.
    pub fn register_toolbox<T: Toolbox>(
        &self,
        toolbox: Arc<T>,
    ) -> Result<RegistrationHandle, RegisterError> {
        self.inner.add_tools(None, toolbox.tools())
    }

    /// Hide inherited tools from a scope (see [`AgentScope::restrict`]).
    pub fn restrict(
        &self,
        scope: AgentScopeId,
        restriction: Restriction,
    ) -> Result<(), RestrictError> {
        self.inner.restrict(scope, restriction)
    }

    /// Add a pre-execute hook that sees every call.
    pub fn add_pre_execute(&self, hook: impl PreExecute) -> RegistrationHandle {
        self.inner.add_hook(None, Hook::Pre(Arc::new(hook)))
    }

    /// Add a guard that sees every call (runs before every scope's guards).
    pub fn add_guard(&self, guard: impl Guard) -> RegistrationHandle {
        self.inner.add_hook(None, Hook::Guard(Arc::new(guard)))
    }

    /// Add an around-dispatch wrapper for every call. Wrappers nest in registration
    /// order: the first registered is the outermost (the built-in timeout wrapper, when
    /// on, is outside all of them).
    pub fn add_wrapper(&self, wrapper: impl Wrapper) -> RegistrationHandle {
        self.inner.add_hook(None, Hook::Wrap(Arc::new(wrapper)))
    }

    /// Add a post-execute hook that sees every call.
    pub fn add_post_execute(&self, hook: impl PostExecute) -> RegistrationHandle {
        self.inner.add_hook(None, Hook::Post(Arc::new(hook)))
    }

    /// Add an observer of every final result.
    pub fn add_observer(&self, observer: impl Observer) -> RegistrationHandle {
        self.inner.add_hook(None, Hook::Observe(Arc::new(observer)))
    }

    /// Install the approval handler `ask` decisions go to. The most recently installed
    /// live handler is used; unregistering the registration uninstalls exactly this one.
    pub fn set_approval_handler(&self, handler: impl ApprovalHandler) -> RegistrationHandle {
        let mut m = self.inner.lock();
        let reg = m.next_id();
        m.approvals.push((reg, Arc::new(handler)));
        self.inner.commit(m, Dirty::Nothing, false);
        RegistrationHandle::new(&self.inner, reg)
    }

    /// The tools a call from the global view sees, as one snapshot.
    pub fn view(&self) -> ToolView {
        self.view_of(None)
    }

    /// The tools a call from `agent` sees, as one snapshot, for code that holds only the
    /// id of the calling scope (a tool body reading its caller's view through
    /// [`ToolContext::agent`]); `None` is the global view (as [`Registry::view`]). With a
    /// [`AgentScope`] handle, [`AgentScope::view`] is the same.
    ///
    /// [`ToolContext::agent`]: crate::ToolContext::agent
    pub fn view_of(&self, agent: Option<AgentScopeId>) -> ToolView {
        ToolView {
            snap: self.inner.snapshot(agent),
        }
    }

    pub(crate) fn get_in(&self, scope: Option<AgentScopeId>, name: &str) -> Option<DynTool> {
        let snap = self.inner.snapshot(scope);
        snap.view().get(name).map(|e| e.tool().clone())
    }

    /// The snapshot a call from `agent` works on (the pipeline's interface to the
    /// registry's state).
    pub(crate) fn snapshot(&self, agent: Option<AgentScopeId>) -> CallSnapshot {
        self.inner.snapshot(agent)
    }

    /// Whether the view a call from `agent` would take now is the one `snap` holds (no
    /// change was published to it since), compared without cloning anything.
    pub(crate) fn still_current(&self, agent: Option<AgentScopeId>, snap: &CallSnapshot) -> bool {
        self.inner
            .read()
            .current(agent)
            .is_some_and(|view| snap.is_view(view))
    }

    /// Whether the built-in timeout wrapper runs.
    pub(crate) fn timeouts(&self) -> bool {
        self.inner.timeouts
    }

    /// The accounting of detached bodies.
    pub(crate) fn detacher(&self) -> &Arc<detach::Detacher> {
        &self.inner.detach
    }

    /// How many bodies of cancelled or timed-out calls are detached and still running (see
    /// [`RegistryBuilder::max_detached`]).
    pub fn detached_bodies(&self) -> usize {
        self.inner.detach.running()
    }

    /// How many bodies were ever detached by this registry (those that returned since
    /// included).
    pub fn detached_total(&self) -> u64 {
        self.inner.detach.total()
    }

    /// How raw argument text is parsed.
    pub(crate) fn parse_options(&self) -> &crate::json::ParseOptions {
        &self.inner.parse
    }

    /// A receiver that is notified whenever the visible tool sets may have changed
    /// (registration, unregistration, restrict, scope creation or removal; not hooks).
    /// The value is a generation counter.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.inner.changes.subscribe()
    }
}

/// A handle that does not keep its registry alive, for a tool registered in the registry
/// it reads (a registry holding its own strong handle would never be dropped).
///
/// ```
/// use dsh_runtime::Registry;
///
/// let registry = Registry::new();
/// let weak = registry.downgrade();
/// assert!(weak.upgrade().is_some());
/// drop(registry);
/// assert!(weak.upgrade().is_none());
/// ```
#[derive(Clone)]
pub struct WeakRegistry(Weak<Inner>);

impl WeakRegistry {
    /// The registry, while any [`Registry`] handle of it exists.
    pub fn upgrade(&self) -> Option<Registry> {
        self.0.upgrade().map(|inner| Registry { inner })
    }
}

impl std::fmt::Debug for WeakRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WeakRegistry")
    }
}

impl Registry {
    /// A handle that does not keep this registry alive.
    pub fn downgrade(&self) -> WeakRegistry {
        WeakRegistry(Arc::downgrade(&self.inner))
    }
}

impl Inner {
    /// Whether the registration `reg` is still in place.
    fn holds(&self, reg: RegId) -> bool {
        let m = self.lock();
        m.owners.contains_key(&reg) || m.approvals.iter().any(|(r, _)| *r == reg)
    }

    fn read(&self) -> RwLockReadGuard<'_, Published> {
        self.published.read().unwrap_or_else(|e| e.into_inner())
    }

    fn snapshot(&self, agent: Option<AgentScopeId>) -> CallSnapshot {
        // The read guard is released at the end of this statement, before `refresh`
        // takes the locks itself.
        let current = CallSnapshot::current(&self.read(), agent);
        current.unwrap_or_else(|| self.refresh(agent))
    }

    /// The snapshot of a caller whose view went stale with a global change: rebuild it
    /// (and its stale ancestors) and publish them.
    #[cold]
    fn refresh(&self, agent: Option<AgentScopeId>) -> CallSnapshot {
        // Every writer of the published state holds the master lock: between the read and
        // the write below, nothing else is published.
        let m = self.lock();
        let mut rebuilt = Vec::new();
        let snap = {
            let published = self.read();
            let view = m.current(&published, agent, &mut rebuilt);
            CallSnapshot::new(view, &published)
        };
        let replaced = if rebuilt.is_empty() {
            Vec::new()
        } else {
            self.published
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .publish(rebuilt)
        };
        drop(m);
        drop(replaced);
        snap
    }

    fn lock(&self) -> MutexGuard<'_, Master> {
        self.master.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Publish the views the change made stale. What they replace is dropped after the
    /// locks are released, so user `Drop` impls never run under them.
    fn commit(&self, mut m: MutexGuard<'_, Master>, dirty: Dirty, tools_changed: bool) {
        if dirty == Dirty::All {
            m.epoch += 1;
        }
        let changes = m.rebuild(&self.read(), dirty);
        let replaced = self
            .published
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .apply(changes);
        let generation = if tools_changed {
            m.generation += 1;
            Some(m.generation)
        } else {
            None
        };
        drop(m);
        drop(replaced);
        if let Some(g) = generation {
            self.changes.send_replace(g);
        }
    }

    fn add_tools(
        self: &Arc<Self>,
        layer: Option<AgentScopeId>,
        tools: Vec<DynTool>,
    ) -> Result<RegistrationHandle, RegisterError> {
        self.add_tools_with(layer, tools, false)
    }

    /// `run_code_ok`: the reserved name is accepted (code mode's own registration).
    fn add_tools_with(
        self: &Arc<Self>,
        layer: Option<AgentScopeId>,
        tools: Vec<DynTool>,
        run_code_ok: bool,
    ) -> Result<RegistrationHandle, RegisterError> {
        // Everything that calls user code (definitions) or may fail runs before the lock.
        let mut prepared = Vec::with_capacity(tools.len());
        for tool in tools {
            let def = tool.definition();
            let name: Arc<str> = Arc::from(def.name.as_ref());
            if !(run_code_ok && &*name == RUN_CODE) {
                check_name(&name)?;
            }
            let schema_err = |error: SchemaError| RegisterError::Schema {
                name: name.to_string(),
                error,
            };
            def.parameters.check("parameters").map_err(schema_err)?;
            if !matches!(def.parameters.kind, Kind::Object(_)) {
                return Err(schema_err(SchemaError::new(vec![format!(
                    "parameters: a tool's parameters must be an object schema, found {}",
                    def.parameters.kind_name()
                )])));
            }
            def.output.check("output").map_err(schema_err)?;
            check_verbatim(def).map_err(schema_err)?;
            for (index, example) in def.input_examples.iter().enumerate() {
                let label = format!("input_examples[{index}]");
                let verdict =
                    crate::validate::validate_labeled(&def.parameters, example, &label, true)
                        .map(|_| ())
                        .and_then(|()| match &def.verbatim_parameters {
                            Some(schema) => schema.validate(example, &label, true),
                            None => Ok(()),
                        });
                if let Err(v) = verdict {
                    return Err(RegisterError::Example {
                        name: name.to_string(),
                        index,
                        violations: v.joined().to_string(),
                    });
                }
            }
            prepared.push((name, tool));
        }

        let mut m = self.lock();
        let reg = m.next_id();
        let existing = match layer {
            None => &mut m.global,
            Some(id) => match m.scopes.get_mut(&id) {
                Some(s) => &mut s.layer,
                None => return Err(RegisterError::ScopeGone { scope: id }),
            },
        };
        let mut seen: HashSet<&str> = HashSet::new();
        for (name, _) in &prepared {
            if !seen.insert(name) || existing.tools.iter().any(|e| e.name() == name) {
                return Err(RegisterError::Duplicate {
                    name: name.to_string(),
                    scoped: layer.is_some(),
                });
            }
        }
        existing.tools.extend(
            prepared
                .into_iter()
                .map(|(name, tool)| Arc::new(Entry::new(reg, name, tool))),
        );
        m.owners.insert(reg, layer);
        self.commit(m, Dirty::of(layer), true);
        Ok(RegistrationHandle::new(self, reg))
    }

    fn add_hook(self: &Arc<Self>, layer: Option<AgentScopeId>, hook: Hook) -> RegistrationHandle {
        let mut m = self.lock();
        let reg = m.next_id();
        let Some(target) = m.layer_mut(layer) else {
            // The scope is gone: nothing would ever see this hook.
            drop(m);
            return RegistrationHandle::inert();
        };
        target.hooks.push(HookEntry { reg, hook });
        m.owners.insert(reg, layer);
        self.commit(m, Dirty::of(layer), false);
        RegistrationHandle::new(self, reg)
    }

    fn restrict(&self, scope: AgentScopeId, r: Restriction) -> Result<(), RestrictError> {
        if r.allow.is_none() && r.deny.is_none() {
            return Err(RestrictError::EmptyFilter);
        }
        let m = self.lock();
        let Some(state) = m.scopes.get(&scope) else {
            return Err(RestrictError::ScopeGone { scope });
        };
        // The parent's current view (rebuilt here if a global change made it stale; the
        // commit below rebuilds it again and publishes it).
        let inherited: Vec<Arc<str>> = m
            .current(&self.read(), state.parent, &mut Vec::new())
            .tools()
            .iter()
            .map(|e| e.name().clone())
            .collect();
        let names = r.allow.iter().chain(r.deny.iter()).flatten();
        let mut unknown = Vec::new();
        for name in names {
            if name == RUN_CODE {
                return Err(RestrictError::Reserved);
            }
            if state
                .layer
                .tools
                .iter()
                .any(|e| &**e.name() == name.as_str())
            {
                return Err(RestrictError::OwnTool { name: name.clone() });
            }
            if !inherited.iter().any(|n| &**n == name.as_str()) && !unknown.contains(name) {
                unknown.push(name.clone());
            }
        }
        if !unknown.is_empty() {
            let mut known: Vec<String> = inherited.iter().map(|n| n.to_string()).collect();
            known.sort();
            return Err(RestrictError::Unknown {
                names: unknown,
                known,
            });
        }
        let set = |v: Vec<String>| v.into_iter().map(Arc::from).collect::<HashSet<Arc<str>>>();
        let mask = Mask {
            allow: r.allow.map(set),
            deny: r.deny.map(set).unwrap_or_default(),
        };
        let mut m = m;
        if let Some(s) = m.scopes.get_mut(&scope) {
            s.masks.push(mask);
        }
        self.commit(m, Dirty::AgentScope(scope), true);
        Ok(())
    }

    fn unregister(&self, reg: RegId) {
        let mut m = self.lock();
        if let Some(i) = m.approvals.iter().position(|(r, _)| *r == reg) {
            // The published state carries the active handler: the commit republishes it.
            let removed = m.approvals.remove(i);
            self.commit(m, Dirty::Nothing, false);
            drop(removed);
            return;
        }
        let Some(layer) = m.owners.remove(&reg) else {
            return;
        };
        let Some(target) = m.layer_mut(layer) else {
            return;
        };
        let removed = target.remove(reg);
        let tools_changed = !removed.0.is_empty();
        self.commit(m, Dirty::of(layer), tools_changed);
        drop(removed);
    }

    fn remove_scope(&self, scope: AgentScopeId) {
        let mut m = self.lock();
        let Some(state) = m.scopes.remove(&scope) else {
            return;
        };
        if let Some(parent) = state.parent.and_then(|p| m.scopes.get_mut(&p)) {
            parent.children.retain(|c| *c != scope);
        }
        for e in &state.layer.tools {
            m.owners.remove(&e.reg());
        }
        for h in &state.layer.hooks {
            m.owners.remove(&h.reg);
        }
        let view = self
            .published
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(scope);
        m.generation += 1;
        let generation = m.generation;
        drop(m);
        drop((state, view));
        self.changes.send_replace(generation);
    }
}

/// The name rule of the providers: `^[a-zA-Z0-9_-]{1,64}$`; `run_code` is reserved.
/// The definition-time rules of a tool's verbatim schemas: an object-rooted parameter
/// document; an output document this build validates fully; and stand-ins that agree
/// with the documents' roots (what MCP's output wrapping is decided from).
fn check_verbatim(def: &crate::tool::ToolDefinition) -> Result<(), SchemaError> {
    let mut errors = Vec::new();
    if let Some(params) = &def.verbatim_parameters
        && params.root_type() != Some("object")
    {
        errors.push(
            "parameters: a tool's verbatim parameter schema must say \"type\": \"object\" at its root (build it with `VerbatimSchema::parameters`)"
                .to_string(),
        );
    }
    if let Some(output) = &def.verbatim_output {
        if let Some(problems) = output.output_problems() {
            errors.extend(problems);
        }
        let object_root = output.root_type() == Some("object");
        if object_root != matches!(def.output.kind, Kind::Object(_)) {
            errors.push(format!(
                "output: the output schema ({}) disagrees with the verbatim output document's root ({}); set the document with `ToolDefinition::with_verbatim_output`, which sets both",
                def.output.kind_name(),
                output.root_type().unwrap_or("no single type")
            ));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(SchemaError::new(errors))
    }
}

fn check_name(name: &str) -> Result<(), RegisterError> {
    let ok = (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if !ok {
        return Err(RegisterError::InvalidName {
            name: name.to_string(),
        });
    }
    if name == RUN_CODE {
        return Err(RegisterError::Reserved);
    }
    Ok(())
}

/// What one `register*` or `add_*` call added: a handle to remove it. Dropping the handle
/// does nothing (the registry owns what it registers); remove it with
/// [`RegistrationHandle::unregister`], or make a drop-guard of it with
/// [`RegistrationHandle::unregister_on_drop`]. Cheap to clone; every clone names the same
/// registration.
///
/// ```
/// # use dsh_runtime::{Registry, Tool, tool};
/// /// Say hello.
/// #[tool]
/// async fn hello() -> String { "hello".into() }
///
/// let registry = Registry::new();
/// let handle = registry.register(Hello).unwrap();
/// assert!(handle.is_registered());
/// handle.unregister();
/// assert!(registry.view().get("hello").is_none());
///
/// // Dropping the handle leaves the tool registered (`let _ =` drops it at once).
/// let _ = registry.register(Hello).unwrap();
/// assert!(registry.view().get("hello").is_some());
///
/// // A guard is what unregisters on drop.
/// let registry = Registry::new();
/// let guard = registry.register(Hello).unwrap().unregister_on_drop();
/// assert!(registry.view().get("hello").is_some());
/// drop(guard);
/// assert!(registry.view().get("hello").is_none());
/// ```
#[derive(Clone)]
pub struct RegistrationHandle {
    registry: Weak<Inner>,
    reg: Option<RegId>,
}

impl RegistrationHandle {
    fn new(inner: &Arc<Inner>, reg: RegId) -> Self {
        RegistrationHandle {
            registry: Arc::downgrade(inner),
            reg: Some(reg),
        }
    }

    fn inert() -> Self {
        RegistrationHandle {
            registry: Weak::new(),
            reg: None,
        }
    }

    /// Remove what this registration added, now (idempotent: nothing happens if it is
    /// already gone, e.g. with its scope).
    pub fn unregister(self) {
        if let Some(reg) = self.reg
            && let Some(inner) = self.registry.upgrade()
        {
            inner.unregister(reg);
        }
    }

    /// A guard that unregisters this registration when it is dropped.
    pub fn unregister_on_drop(self) -> RegistrationGuard {
        RegistrationGuard(Some(self))
    }

    /// Whether what this registration added is still registered (it is not once
    /// unregistered, or removed with its scope or registry).
    pub fn is_registered(&self) -> bool {
        match (self.reg, self.registry.upgrade()) {
            (Some(reg), Some(inner)) => inner.holds(reg),
            _ => false,
        }
    }
}

impl fmt::Debug for RegistrationHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegistrationHandle")
            .field("registered", &self.is_registered())
            .finish()
    }
}

/// A [`RegistrationHandle`] that unregisters when dropped (see
/// [`RegistrationHandle::unregister_on_drop`]): for registrations that live as long as a
/// session, a request or a test.
#[must_use = "dropping a `RegistrationGuard` unregisters at once; bind it to a named variable (`let _guard = ..`, not `let _ = ..`)"]
pub struct RegistrationGuard(Option<RegistrationHandle>);

impl RegistrationGuard {
    /// Unregister now (same as dropping).
    pub fn unregister(mut self) {
        if let Some(r) = self.0.take() {
            r.unregister();
        }
    }

    /// Disarm the guard: the registration stays, and the handle is returned.
    pub fn into_registration(mut self) -> RegistrationHandle {
        self.0.take().unwrap_or_else(RegistrationHandle::inert)
    }

    /// Whether what the guard holds is still registered.
    pub fn is_registered(&self) -> bool {
        self.0
            .as_ref()
            .is_some_and(RegistrationHandle::is_registered)
    }
}

impl Drop for RegistrationGuard {
    fn drop(&mut self) {
        if let Some(r) = self.0.take() {
            r.unregister();
        }
    }
}

impl fmt::Debug for RegistrationGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegistrationGuard")
            .field("registered", &self.is_registered())
            .finish()
    }
}

/// An agent scope: a layer of tools and hooks that calls from this scope (and its
/// descendants) see. Cheap to clone; the scope is removed when the last handle is
/// dropped, and a child scope keeps its parent alive.
#[derive(Clone)]
pub struct AgentScope(Arc<ScopeHandle>);

struct ScopeHandle {
    registry: Registry,
    id: AgentScopeId,
    _parent: Option<Arc<ScopeHandle>>,
}

impl Drop for ScopeHandle {
    fn drop(&mut self) {
        self.registry.inner.remove_scope(self.id);
    }
}

impl fmt::Debug for AgentScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("AgentScope").field(&self.0.id).finish()
    }
}

impl AgentScope {
    /// The id to put in [`crate::ToolCall::agent`].
    pub fn id(&self) -> AgentScopeId {
        self.0.id
    }

    /// The registry.
    pub fn registry(&self) -> &Registry {
        &self.0.registry
    }

    /// The tools calls from this scope see, as one snapshot.
    pub fn view(&self) -> ToolView {
        self.0.registry.view_of(Some(self.0.id))
    }

    /// A scope below this one: it inherits this scope's view.
    pub fn child(&self) -> AgentScope {
        self.0.registry.new_scope(Some(self.0.clone()))
    }

    /// Register a tool in this scope, shadowing an inherited tool of the same name for
    /// this scope and its descendants.
    pub fn register<T: ErasedTool>(&self, tool: T) -> Result<RegistrationHandle, RegisterError> {
        self.register_dyn(DynTool::new(tool))
    }

    /// Register an erased tool in this scope.
    pub fn register_dyn(&self, tool: DynTool) -> Result<RegistrationHandle, RegisterError> {
        self.0.registry.inner.add_tools(Some(self.0.id), vec![tool])
    }

    /// Register every tool of a toolbox in this scope: all of them, or none.
    pub fn register_toolbox<T: Toolbox>(
        &self,
        toolbox: Arc<T>,
    ) -> Result<RegistrationHandle, RegisterError> {
        self.0
            .registry
            .inner
            .add_tools(Some(self.0.id), toolbox.tools())
    }

    /// Register code mode's `run_code` tool in this scope, shadowing an inherited one.
    /// `run_code` is the name every other registration refuses; this is how a code-mode
    /// implementation (the `dsh-code` crate) installs it. The tool must be named
    /// `run_code`.
    pub fn register_run_code(&self, tool: DynTool) -> Result<RegistrationHandle, RegisterError> {
        if tool.definition().name != RUN_CODE {
            return Err(RegisterError::InvalidName {
                name: tool.definition().name.to_string(),
            });
        }
        self.0
            .registry
            .inner
            .add_tools_with(Some(self.0.id), vec![tool], true)
    }

    /// Hide inherited tools from this scope and its descendants.
    ///
    /// With `allow`, only the listed inherited names stay visible (and global tools
    /// registered later are hidden); with `deny`, the listed names are hidden (and later
    /// ones are admitted). Masks accumulate and never hide the scope's own tools. This is
    /// a convenience for prompt shaping, not a security boundary: use guards for that.
    ///
    /// Errors: an empty restriction, `run_code`, a name registered in this scope, or a
    /// name not inherited (the error lists the inherited names).
    pub fn restrict(&self, restriction: Restriction) -> Result<(), RestrictError> {
        self.0.registry.inner.restrict(self.0.id, restriction)
    }

    /// Add a pre-execute hook for calls from this scope and its descendants.
    pub fn add_pre_execute(&self, hook: impl PreExecute) -> RegistrationHandle {
        self.0
            .registry
            .inner
            .add_hook(Some(self.0.id), Hook::Pre(Arc::new(hook)))
    }

    /// Add a guard for calls from this scope and its descendants (after the global
    /// guards and those of the scopes above).
    pub fn add_guard(&self, guard: impl Guard) -> RegistrationHandle {
        self.0
            .registry
            .inner
            .add_hook(Some(self.0.id), Hook::Guard(Arc::new(guard)))
    }

    /// Add a wrapper for calls from this scope and its descendants.
    pub fn add_wrapper(&self, wrapper: impl Wrapper) -> RegistrationHandle {
        self.0
            .registry
            .inner
            .add_hook(Some(self.0.id), Hook::Wrap(Arc::new(wrapper)))
    }

    /// Add a post-execute hook for calls from this scope and its descendants.
    pub fn add_post_execute(&self, hook: impl PostExecute) -> RegistrationHandle {
        self.0
            .registry
            .inner
            .add_hook(Some(self.0.id), Hook::Post(Arc::new(hook)))
    }

    /// Add an observer for calls from this scope and its descendants.
    pub fn add_observer(&self, observer: impl Observer) -> RegistrationHandle {
        self.0
            .registry
            .inner
            .add_hook(Some(self.0.id), Hook::Observe(Arc::new(observer)))
    }
}

/// A restrict filter: `allow` and/or `deny` lists of inherited tool names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Restriction {
    allow: Option<Vec<String>>,
    deny: Option<Vec<String>>,
}

impl Restriction {
    /// Only these inherited names stay visible.
    pub fn allow<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Restriction::default().and_allow(names)
    }

    /// These inherited names are hidden.
    pub fn deny<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Restriction::default().and_deny(names)
    }

    /// Add an allow list.
    pub fn and_allow<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allow
            .get_or_insert_with(Vec::new)
            .extend(names.into_iter().map(Into::into));
        self
    }

    /// Add a deny list.
    pub fn and_deny<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.deny
            .get_or_insert_with(Vec::new)
            .extend(names.into_iter().map(Into::into));
        self
    }
}

/// Why a registration was refused. A refused registration changes nothing.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegisterError {
    /// The layer already has a tool with this name.
    #[error("tool {} is already registered{}", json_quote(.name), duplicate_hint(.scoped))]
    Duplicate {
        /// The tool name.
        name: String,
        /// Whether the layer is an agent scope.
        scoped: bool,
    },
    /// `run_code` is reserved for code mode.
    #[error("tool name {} is reserved for code mode", json_quote(RUN_CODE))]
    Reserved,
    /// The name does not match `^[a-zA-Z0-9_-]{1,64}$`.
    #[error(
        "invalid tool name {}: a name must be 1 to 64 characters from [a-zA-Z0-9_-]",
        json_quote(.name)
    )]
    InvalidName {
        /// The offending name.
        name: String,
    },
    /// A schema is outside the vocabulary (code `UNSUPPORTED_SCHEMA`).
    #[error("tool {}: {error}", json_quote(.name))]
    Schema {
        /// The tool name.
        name: String,
        /// Every violation.
        #[source]
        error: SchemaError,
    },
    /// An input example does not validate against the tool's parameter schema.
    #[error(
        "tool {}: input example {index} does not match the parameter schema: {violations}",
        json_quote(.name)
    )]
    Example {
        /// The tool name.
        name: String,
        /// The example's position in [`ToolDefinition::input_examples`](crate::ToolDefinition::input_examples).
        index: usize,
        /// Every violation, each naming its path (`input_examples[0].limit: ..`).
        violations: String,
    },
    /// The agent scope no longer exists.
    #[error("agent scope {} no longer exists (every handle to it was dropped)", .scope.get())]
    ScopeGone {
        /// The scope.
        scope: AgentScopeId,
    },
}

/// The end of [`RegisterError::Duplicate`]'s message: which layer holds the name, and
/// where a new tool of that name would shadow it instead.
fn duplicate_hint(scoped: &bool) -> &'static str {
    if *scoped {
        " in this scope (unregister it first, or register the new one in a child scope to shadow it)"
    } else {
        " (unregister it first, or register the new one in an agent scope to shadow it)"
    }
}

impl RegisterError {
    /// `UNSUPPORTED_SCHEMA` for schema errors; other refusals have no code.
    pub fn code(&self) -> Option<crate::error_code::PipelineCode> {
        match self {
            RegisterError::Schema { .. } => {
                Some(crate::error_code::PipelineCode::UnsupportedSchema)
            }
            _ => None,
        }
    }
}

/// Why a restriction was refused. A refused restriction changes nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RestrictError {
    /// Neither an allow nor a deny list.
    EmptyFilter,
    /// `run_code` cannot be restricted.
    Reserved,
    /// The name is one of the scope's own tools, which masks never hide.
    OwnTool {
        /// The name.
        name: String,
    },
    /// Names the scope does not inherit.
    Unknown {
        /// The unknown names, in the order given.
        names: Vec<String>,
        /// The inherited names, sorted.
        known: Vec<String>,
    },
    /// The agent scope no longer exists.
    ScopeGone {
        /// The scope.
        scope: AgentScopeId,
    },
}

impl fmt::Display for RestrictError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let q = crate::schema::json_quote;
        match self {
            RestrictError::EmptyFilter => f.write_str("restrict needs an `allow` or a `deny` list"),
            RestrictError::Reserved => write!(f, "{} cannot be restricted", q(RUN_CODE)),
            RestrictError::OwnTool { name } => write!(
                f,
                "tool {} is registered in this scope; restrict only hides inherited tools",
                q(name)
            ),
            RestrictError::Unknown { names, known } => {
                let list = |v: &[String]| v.iter().map(|n| q(n)).collect::<Vec<_>>().join(", ");
                let noun = if names.len() == 1 { "tool" } else { "tools" };
                write!(f, "unknown {noun} {}; ", list(names))?;
                if known.is_empty() {
                    f.write_str("this scope inherits no tools")
                } else {
                    write!(f, "inherited tools are: {}", list(known))
                }
            }
            RestrictError::ScopeGone { scope } => write!(
                f,
                "agent scope {} no longer exists (every handle to it was dropped)",
                scope.get()
            ),
        }
    }
}

impl std::error::Error for RestrictError {}

/// The tools one caller sees, as one immutable snapshot: [`Registry::view`],
/// [`AgentScope::view`], [`Registry::view_of`]. Every read of one `ToolView` sees the same tool
/// set, whatever registrations happen meanwhile; take a new view to see them. A view
/// keeps the tools it lists alive while it is held.
///
/// ```
/// # use dsh_runtime::{Registry, Tool, tool};
/// /// Say hello.
/// #[tool]
/// async fn hello() -> String { "hello".into() }
///
/// let registry = Registry::new();
/// let handle = registry.register(Hello).unwrap();
/// let view = registry.view();
/// handle.unregister();
/// assert_eq!(view.names(), ["hello".into()]); // the snapshot is unchanged
/// assert!(registry.view().names().is_empty());
/// ```
#[derive(Clone)]
pub struct ToolView {
    snap: CallSnapshot,
}

impl fmt::Debug for ToolView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolView")
            .field("tools", &self.names())
            .finish_non_exhaustive()
    }
}

impl ToolView {
    /// The tool `name`.
    pub fn get(&self, name: &str) -> Option<DynTool> {
        self.snap.view().get(name).map(|e| e.tool().clone())
    }

    /// The tools, in publication order.
    pub fn tools(&self) -> Vec<DynTool> {
        self.snap
            .view()
            .tools()
            .iter()
            .map(|e| e.tool().clone())
            .collect()
    }

    /// The tool names, in publication order.
    pub fn names(&self) -> Vec<Arc<str>> {
        self.snap
            .view()
            .tools()
            .iter()
            .map(|e| e.name().clone())
            .collect()
    }

    /// The definitions of the tools, in publication order: what exports, SDKs and
    /// catalogs are generated from.
    pub fn definitions(&self) -> Vec<crate::tool::ToolDefinition> {
        self.snap
            .view()
            .tools()
            .iter()
            .map(|e| e.tool().definition().clone())
            .collect()
    }

    /// What a model calling from here is shown: `{name, description, parameters}` per
    /// tool, in publication order. Byte-identical for an unchanged tool set.
    pub fn schemas(&self) -> Vec<ToolDescriptor> {
        self.snap
            .view()
            .tools()
            .iter()
            .map(|e| {
                let def = e.tool().definition();
                ToolDescriptor {
                    name: e.name().clone(),
                    description: def.description.to_string(),
                    parameters: def.parameters.clone(),
                }
            })
            .collect()
    }

    /// [`ToolView::schemas`] as compact JSON text.
    pub fn schemas_json(&self) -> String {
        let list: Vec<Value> = self.schemas().iter().map(ToolDescriptor::to_json).collect();
        Value::from(list).to_string()
    }
}

#[cfg(test)]
mod register_error_tests {
    use std::error::Error as _;

    use super::RegisterError;
    use crate::schema::SchemaError;
    use crate::tool::AgentScopeId;

    #[test]
    fn a_schema_refusal_names_the_tool_and_keeps_the_schema_error_as_its_source() {
        let error = RegisterError::Schema {
            name: "odd".into(),
            error: SchemaError::new(vec!["parameters: a".into(), "output: b".into()]),
        };
        assert_eq!(
            error.to_string(),
            r#"tool "odd": unsupported JSON schema: parameters: a; output: b"#
        );
        let source = error.source().map(ToString::to_string);
        assert_eq!(
            source.as_deref(),
            Some("unsupported JSON schema: parameters: a; output: b")
        );
        let gone = RegisterError::ScopeGone {
            scope: AgentScopeId(7),
        };
        assert_eq!(
            gone.to_string(),
            "agent scope 7 no longer exists (every handle to it was dropped)"
        );
        assert!(gone.source().is_none());
    }
}
