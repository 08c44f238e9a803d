//! The registry's state: a mutable master copy (behind a mutex, touched only by
//! registration changes) and the published, immutable view of every scope (what calls
//! read).
//!
//! Each change rebuilds only the views it affects, and replaces them one by one in the
//! published map:
//!
//! - a change to a scope (a tool, a hook, a restriction; creating the scope) rebuilds that
//!   scope's view and its descendants' views;
//! - removing a scope removes its view;
//! - a change to the global layer (a tool or a hook) rebuilds the global view and bumps
//!   the global *epoch*; every scope view built at an earlier epoch is now stale, and is
//!   rebuilt on its first use (a call or a read from that scope; a change to the scope or
//!   an ancestor), with its stale ancestors, under the master lock;
//! - installing an approval handler rebuilds nothing.
//!
//! So no change costs more with the number of scopes: a scope's change rebuilds its
//! subtree, a global change the global view, and each scope pays for at most one rebuild
//! per global epoch, when it is next used, however many global changes came between. The
//! price of laziness: a stale view keeps the global tools and hooks it was built with
//! alive until the scope is next used or removed (it never exposes them: a stale view is
//! never handed out).
//!
//! A call takes one [`CallSnapshot`] (its scope's current view and the approval handler,
//! read together) and resolves everything against it, so it sees one consistent tool set
//! and hook set however registrations change meanwhile; name lookup is a hash-map probe
//! that allocates nothing, and telling a current view from a stale one is one integer
//! comparison.

use std::any::TypeId;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::hooks::{ApprovalHandler, Guard, Observer, PostExecute, PreExecute, Wrapper};
use crate::tool::{AgentScopeId, DynTool};

/// Identifies one registration (a tool, a toolbox's tools, a hook, an approval handler).
pub(crate) type RegId = u64;

/// A registered tool, as views hold it.
pub(crate) struct Entry {
    reg: RegId,
    name: Arc<str>,
    tool: DynTool,
    type_id: TypeId,
}

impl Entry {
    pub(crate) fn new(reg: RegId, name: Arc<str>, tool: DynTool) -> Entry {
        let type_id = tool.type_id();
        Entry {
            reg,
            name,
            tool,
            type_id,
        }
    }

    /// The registration that added it.
    pub(crate) fn reg(&self) -> RegId {
        self.reg
    }

    /// The registered name.
    pub(crate) fn name(&self) -> &Arc<str> {
        &self.name
    }

    /// The tool.
    pub(crate) fn tool(&self) -> &DynTool {
        &self.tool
    }
}

#[derive(Clone)]
pub(crate) enum Hook {
    Pre(Arc<dyn PreExecute>),
    Guard(Arc<dyn Guard>),
    Wrap(Arc<dyn Wrapper>),
    Post(Arc<dyn PostExecute>),
    Observe(Arc<dyn Observer>),
}

pub(crate) struct HookEntry {
    pub(crate) reg: RegId,
    pub(crate) hook: Hook,
}

/// A restrict mask, snapshotted when `restrict` was called.
pub(crate) struct Mask {
    pub(crate) allow: Option<HashSet<Arc<str>>>,
    pub(crate) deny: HashSet<Arc<str>>,
}

impl Mask {
    fn admits(&self, name: &str) -> bool {
        self.allow.as_ref().is_none_or(|a| a.contains(name)) && !self.deny.contains(name)
    }
}

/// The registrations of one layer (the global layer or a scope), in registration order.
#[derive(Default)]
pub(crate) struct Layer {
    pub(crate) tools: Vec<Arc<Entry>>,
    pub(crate) hooks: Vec<HookEntry>,
}

impl Layer {
    /// Remove what registration `reg` added; the removed items are returned so that they
    /// can be dropped outside the locks.
    pub(crate) fn remove(&mut self, reg: RegId) -> (Vec<Arc<Entry>>, Vec<HookEntry>) {
        let (tools, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.tools)
            .into_iter()
            .partition(|e| e.reg == reg);
        self.tools = kept;
        let (hooks, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.hooks)
            .into_iter()
            .partition(|h| h.reg == reg);
        self.hooks = kept;
        (tools, hooks)
    }
}

pub(crate) struct ScopeState {
    pub(crate) parent: Option<AgentScopeId>,
    pub(crate) children: Vec<AgentScopeId>,
    pub(crate) layer: Layer,
    pub(crate) masks: Vec<Mask>,
}

/// What a change touched.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Dirty {
    /// No view (the approval handler).
    Nothing,
    /// One scope and its descendants.
    AgentScope(AgentScopeId),
    /// The global layer: the global view now, every scope's on its next use.
    All,
}

impl Dirty {
    pub(crate) fn of(layer: Option<AgentScopeId>) -> Dirty {
        layer.map_or(Dirty::All, Dirty::AgentScope)
    }
}

#[derive(Default)]
pub(crate) struct Master {
    next_id: u64,
    pub(crate) global: Layer,
    pub(crate) scopes: HashMap<AgentScopeId, ScopeState>,
    /// The layer each tool or hook registration lives in.
    pub(crate) owners: HashMap<RegId, Option<AgentScopeId>>,
    pub(crate) approvals: Vec<(RegId, Arc<dyn ApprovalHandler>)>,
    /// The change counter of [`crate::Registry::changes`].
    pub(crate) generation: u64,
    /// The global layer's epoch: bumped by each change to it. A view built at an earlier
    /// epoch is stale.
    pub(crate) epoch: u64,
}

impl Master {
    pub(crate) fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// The registrations of a layer, when it exists.
    pub(crate) fn layer_mut(&mut self, layer: Option<AgentScopeId>) -> Option<&mut Layer> {
        match layer {
            None => Some(&mut self.global),
            Some(id) => self.scopes.get_mut(&id).map(|s| &mut s.layer),
        }
    }

    /// The scopes a call from `scope` is subject to, farthest first (the global layer
    /// excluded).
    fn chain(&self, scope: AgentScopeId) -> Vec<AgentScopeId> {
        let mut chain = Vec::new();
        let mut cur = Some(scope);
        while let Some(id) = cur {
            chain.push(id);
            cur = self.scopes.get(&id).and_then(|s| s.parent);
        }
        chain.reverse();
        chain
    }

    /// The hooks of the global layer and of `chain`, into `view`: pre-execute, wrappers,
    /// post-execute and observers in registration order across those layers; guards by
    /// layer (global first, then the chain from the farthest scope), registration order
    /// within a layer.
    fn hooks_for(&self, chain: &[AgentScopeId], view: &mut ToolView) {
        let layers: Vec<&Layer> = std::iter::once(&self.global)
            .chain(
                chain
                    .iter()
                    .filter_map(|id| self.scopes.get(id).map(|s| &s.layer)),
            )
            .collect();
        let mut ordered: Vec<&HookEntry> = layers.iter().flat_map(|l| l.hooks.iter()).collect();
        // Each layer is already in registration order; a stable sort by id merges them.
        ordered.sort_by_key(|h| h.reg);
        for h in ordered {
            match &h.hook {
                Hook::Pre(p) => view.pre.push(p.clone()),
                Hook::Wrap(w) => view.wrappers.push(w.clone()),
                Hook::Post(p) => view.post.push(p.clone()),
                Hook::Observe(o) => view.observers.push(o.clone()),
                Hook::Guard(_) => {}
            }
        }
        for layer in layers {
            for h in &layer.hooks {
                if let Hook::Guard(g) = &h.hook {
                    view.guards.push(g.clone());
                }
            }
        }
    }

    fn global_view(&self) -> ToolView {
        let mut view = self.empty_view();
        self.hooks_for(&[], &mut view);
        view.set_tools(self.global.tools.clone());
        view
    }

    fn orphan_view(&self) -> ToolView {
        let mut view = self.empty_view();
        self.hooks_for(&[], &mut view);
        view
    }

    /// A view with nothing in it, of the current epoch.
    fn empty_view(&self) -> ToolView {
        ToolView {
            epoch: self.epoch,
            ..ToolView::default()
        }
    }

    /// A scope's view: the parent's view (`base`) minus what this scope's masks reject,
    /// then this scope's own tools (replacing an inherited tool of the same name in
    /// place, else appended).
    fn scope_view(&self, id: AgentScopeId, state: &ScopeState, base: &ToolView) -> ToolView {
        let mut tools: Vec<Arc<Entry>> = base
            .tools
            .iter()
            .filter(|e| state.masks.iter().all(|m| m.admits(&e.name)))
            .cloned()
            .collect();
        let mut index: NameIndex = tools
            .iter()
            .enumerate()
            .map(|(i, e)| (e.name.clone(), i))
            .collect();
        for own in &state.layer.tools {
            match index.get(&own.name) {
                Some(&i) => tools[i] = own.clone(),
                None => {
                    index.insert(own.name.clone(), tools.len());
                    tools.push(own.clone());
                }
            }
        }
        let mut view = self.empty_view();
        self.hooks_for(&self.chain(id), &mut view);
        view.set_tools_indexed(tools, index);
        view
    }

    /// The current view of a caller (`None`: the global layer; a scope that does not
    /// exist: the orphan view). When the scope's published view is stale, it is rebuilt,
    /// after its stale ancestors (farthest first), and every view rebuilt is pushed to
    /// `out` to be published.
    pub(crate) fn current(
        &self,
        published: &Published,
        agent: Option<AgentScopeId>,
        out: &mut Vec<(AgentScopeId, Arc<ToolView>)>,
    ) -> Arc<ToolView> {
        let Some(id) = agent else {
            return published.global.clone();
        };
        if !self.scopes.contains_key(&id) {
            return published.orphan.clone();
        }
        // Walk up to the nearest current view (or the top of the chain), then rebuild
        // down from there.
        let mut stale = Vec::new();
        let mut base = None;
        let mut cur = Some(id);
        while let Some(s) = cur {
            let Some(state) = self.scopes.get(&s) else {
                // A parent that is gone (it cannot be while a child holds it).
                base = Some(published.orphan.clone());
                break;
            };
            match published.scopes.get(&s) {
                Some(v) if v.epoch == self.epoch => {
                    base = Some(v.clone());
                    break;
                }
                _ => {
                    stale.push((s, state));
                    cur = state.parent;
                }
            }
        }
        let mut view = base.unwrap_or_else(|| published.global.clone());
        for (s, state) in stale.into_iter().rev() {
            view = Arc::new(self.scope_view(s, state, &view));
            out.push((s, view.clone()));
        }
        view
    }

    /// The views a change makes stale, rebuilt against `published` (the views before
    /// the change).
    pub(crate) fn rebuild(&self, published: &Published, dirty: Dirty) -> Changes {
        let mut changes = Changes {
            approval: self.approvals.last().map(|(_, h)| h.clone()),
            ..Changes::default()
        };
        match dirty {
            Dirty::Nothing => {}
            Dirty::All => {
                // The caller bumped the epoch: every scope view is stale from now on.
                changes.global = Some(Arc::new(self.global_view()));
                changes.orphan = Some(Arc::new(self.orphan_view()));
                changes.epoch = Some(self.epoch);
            }
            Dirty::AgentScope(id) => {
                if let Some(state) = self.scopes.get(&id) {
                    let base = match state.parent {
                        None => published.global.clone(),
                        Some(p) => self.current(published, Some(p), &mut changes.scopes),
                    };
                    self.subtree(id, &base, &mut changes.scopes);
                }
            }
        }
        changes
    }

    /// Rebuild `root` on `base`, then its descendants on their parents' new views.
    fn subtree(
        &self,
        root: AgentScopeId,
        base: &Arc<ToolView>,
        out: &mut Vec<(AgentScopeId, Arc<ToolView>)>,
    ) {
        let mut stack = vec![(root, base.clone())];
        while let Some((id, base)) = stack.pop() {
            let Some(state) = self.scopes.get(&id) else {
                continue;
            };
            let view = Arc::new(self.scope_view(id, state, &base));
            for &child in &state.children {
                stack.push((child, view.clone()));
            }
            out.push((id, view));
        }
    }
}

/// Rebuilt views, to publish.
#[derive(Default)]
pub(crate) struct Changes {
    global: Option<Arc<ToolView>>,
    orphan: Option<Arc<ToolView>>,
    /// The new global epoch, when the global layer changed.
    epoch: Option<u64>,
    scopes: Vec<(AgentScopeId, Arc<ToolView>)>,
    approval: Option<Arc<dyn ApprovalHandler>>,
}

/// The views calls read.
pub(crate) struct Published {
    pub(crate) global: Arc<ToolView>,
    /// Each scope's view, possibly stale (built at an earlier epoch).
    pub(crate) scopes: HashMap<AgentScopeId, Arc<ToolView>>,
    /// For calls from a scope that does not exist (any more): no tools, global hooks.
    pub(crate) orphan: Arc<ToolView>,
    /// The global layer's epoch (see [`Master::epoch`]); the global and orphan views are
    /// always of this epoch.
    pub(crate) epoch: u64,
    pub(crate) approval: Option<Arc<dyn ApprovalHandler>>,
}

/// What publishing replaced, dropped by the caller once no lock is held (a tool's or a
/// hook's `Drop` is user code).
pub(crate) type Replaced = (Vec<Arc<ToolView>>, Option<Arc<dyn ApprovalHandler>>);

impl Published {
    pub(crate) fn empty() -> Published {
        Published {
            global: Arc::default(),
            scopes: HashMap::new(),
            orphan: Arc::default(),
            epoch: 0,
            approval: None,
        }
    }

    /// The published view of a caller, when it is current (`None`: the scope's view is
    /// stale, see [`Master::current`]).
    pub(crate) fn current(&self, agent: Option<AgentScopeId>) -> Option<&Arc<ToolView>> {
        match agent {
            None => Some(&self.global),
            Some(id) => match self.scopes.get(&id) {
                Some(view) => (view.epoch == self.epoch).then_some(view),
                None => Some(&self.orphan),
            },
        }
    }

    /// Publish rebuilt views.
    pub(crate) fn apply(&mut self, changes: Changes) -> Replaced {
        let mut old = self.publish(changes.scopes);
        if let Some(g) = changes.global {
            old.push(std::mem::replace(&mut self.global, g));
        }
        if let Some(o) = changes.orphan {
            old.push(std::mem::replace(&mut self.orphan, o));
        }
        if let Some(epoch) = changes.epoch {
            self.epoch = epoch;
        }
        let approval = std::mem::replace(&mut self.approval, changes.approval);
        (old, approval)
    }

    /// Publish rebuilt scope views; returns the views they replace.
    pub(crate) fn publish(
        &mut self,
        views: Vec<(AgentScopeId, Arc<ToolView>)>,
    ) -> Vec<Arc<ToolView>> {
        let mut old = Vec::new();
        for (id, view) in views {
            if let Some(prev) = self.scopes.insert(id, view) {
                old.push(prev);
            }
        }
        old
    }

    /// Remove a scope's view.
    pub(crate) fn remove(&mut self, scope: AgentScopeId) -> Option<Arc<ToolView>> {
        self.scopes.remove(&scope)
    }
}

/// A view's name table: tool name to position, hashed with `rustc-hash`'s `FxHasher`, a
/// fraction of SipHash's cost on short names (the lookup is on every call's path).
///
/// It is not keyed, which is safe here: the table's keys are registered names, fixed
/// when the view is built, so a caller choosing the looked-up name cannot make the table
/// degrade; the worst it can do is probe one bucket chain of the registered names.
pub(crate) type NameIndex = HashMap<Arc<str>, usize, rustc_hash::FxBuildHasher>;

/// One scope's resolved view: visible tools in publication order, plus the hooks that
/// see calls from it.
#[derive(Default)]
pub(crate) struct ToolView {
    /// The global epoch it was built at.
    epoch: u64,
    tools: Vec<Arc<Entry>>,
    index: NameIndex,
    /// The visible tool of a Rust type; `None` when several are visible.
    by_type: HashMap<TypeId, Option<usize>>,
    pub(crate) pre: Vec<Arc<dyn PreExecute>>,
    pub(crate) guards: Vec<Arc<dyn Guard>>,
    pub(crate) wrappers: Vec<Arc<dyn Wrapper>>,
    pub(crate) post: Vec<Arc<dyn PostExecute>>,
    pub(crate) observers: Vec<Arc<dyn Observer>>,
}

/// The result of looking a tool up by its Rust type.
pub(crate) enum ByType<'a> {
    Found(&'a Arc<Entry>),
    Missing,
    Ambiguous,
}

impl ToolView {
    fn set_tools(&mut self, tools: Vec<Arc<Entry>>) {
        let index = tools
            .iter()
            .enumerate()
            .map(|(i, e)| (e.name.clone(), i))
            .collect();
        self.set_tools_indexed(tools, index);
    }

    fn set_tools_indexed(&mut self, tools: Vec<Arc<Entry>>, index: NameIndex) {
        self.index = index;
        self.by_type.clear();
        for (i, e) in tools.iter().enumerate() {
            self.by_type
                .entry(e.type_id)
                .and_modify(|slot| *slot = None)
                .or_insert(Some(i));
        }
        self.tools = tools;
    }

    /// The visible tools, in publication order.
    pub(crate) fn tools(&self) -> &[Arc<Entry>] {
        &self.tools
    }

    /// The visible tool with this name.
    pub(crate) fn get(&self, name: &str) -> Option<&Arc<Entry>> {
        self.index.get(name).map(|&i| &self.tools[i])
    }

    /// The visible tool of a Rust type.
    pub(crate) fn by_type(&self, id: TypeId) -> ByType<'_> {
        match self.by_type.get(&id) {
            Some(Some(i)) => ByType::Found(&self.tools[*i]),
            Some(None) => ByType::Ambiguous,
            None => ByType::Missing,
        }
    }
}

/// What one call reads of the registry, taken once at entry: the caller's view and the
/// approval handler, consistent with each other. This is the pipeline's whole interface
/// to the registry's state.
#[derive(Clone)]
pub(crate) struct CallSnapshot {
    view: Arc<ToolView>,
    approval: Option<Arc<dyn ApprovalHandler>>,
}

impl CallSnapshot {
    /// The snapshot of a caller whose published view is current (`None` when it is
    /// stale).
    pub(crate) fn current(
        published: &Published,
        agent: Option<AgentScopeId>,
    ) -> Option<CallSnapshot> {
        Some(CallSnapshot::new(
            published.current(agent)?.clone(),
            published,
        ))
    }

    /// The snapshot of `view` with the published approval handler.
    pub(crate) fn new(view: Arc<ToolView>, published: &Published) -> CallSnapshot {
        CallSnapshot {
            view,
            approval: published.approval.clone(),
        }
    }

    /// The caller's view: tools and hooks.
    pub(crate) fn view(&self) -> &ToolView {
        &self.view
    }

    /// The installed approval handler.
    pub(crate) fn approval(&self) -> Option<&Arc<dyn ApprovalHandler>> {
        self.approval.as_ref()
    }

    /// Whether `view` is this snapshot's view. Published views are immutable and this
    /// snapshot keeps its own alive, so the same address means the same view.
    pub(crate) fn is_view(&self, view: &Arc<ToolView>) -> bool {
        Arc::ptr_eq(&self.view, view)
    }
}
