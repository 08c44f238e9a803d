//! The registry's state: a mutable master copy (behind a mutex, touched only by
//! registration changes) and immutable snapshots of every scope's resolved view (what
//! calls read).
//!
//! Each change rebuilds the views it affects (a global change: all of them; a scope's:
//! that scope and its descendants) and publishes a new [`Snapshot`]. A call clones the
//! current snapshot's `Arc` once and resolves everything against it, so it sees one
//! consistent tool set and hook set however registrations change meanwhile; name lookup
//! is a hash-map probe that allocates nothing.

use std::any::TypeId;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use crate::json::Value;
use crate::pipeline::hooks::{ApprovalHandler, Guard, Observer, PostExecute, PreExecute, Wrapper};
use crate::tool::{DynTool, ScopeId};

/// Identifies one registration (a tool, a toolbox's tools, a hook).
pub(crate) type RegId = u64;

/// A registered tool.
pub(crate) struct Entry {
    pub(crate) reg: RegId,
    pub(crate) name: Arc<str>,
    pub(crate) tool: DynTool,
    pub(crate) type_id: TypeId,
    /// `parameters.to_json_schema()`, computed once at registration.
    pub(crate) parameters_json: Value,
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
    pub(crate) layer: Option<ScopeId>,
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

pub(crate) struct ScopeState {
    pub(crate) parent: Option<ScopeId>,
    pub(crate) own: Vec<Arc<Entry>>,
    pub(crate) masks: Vec<Mask>,
}

/// What a change touched.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Dirty {
    /// Only registry-wide data (the approval handler, a removed scope).
    Nothing,
    /// One scope and its descendants.
    Scope(ScopeId),
    /// Everything (the global layer).
    All,
}

impl Dirty {
    pub(crate) fn of(layer: Option<ScopeId>) -> Dirty {
        layer.map_or(Dirty::All, Dirty::Scope)
    }

    pub(crate) fn merge(self, other: Dirty) -> Dirty {
        match (self, other) {
            (Dirty::Nothing, d) | (d, Dirty::Nothing) => d,
            (Dirty::Scope(a), Dirty::Scope(b)) if a == b => Dirty::Scope(a),
            _ => Dirty::All,
        }
    }
}

#[derive(Default)]
pub(crate) struct Master {
    pub(crate) next_id: u64,
    pub(crate) global: Vec<Arc<Entry>>,
    pub(crate) scopes: BTreeMap<ScopeId, ScopeState>,
    pub(crate) hooks: Vec<HookEntry>,
    pub(crate) approvals: Vec<(RegId, Arc<dyn ApprovalHandler>)>,
    pub(crate) generation: u64,
}

impl Master {
    pub(crate) fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// The layers a call from `scope` is subject to, farthest first (excluding the
    /// global layer).
    fn chain(&self, scope: ScopeId) -> Vec<ScopeId> {
        let mut chain = Vec::new();
        let mut cur = Some(scope);
        while let Some(id) = cur {
            chain.push(id);
            cur = self.scopes.get(&id).and_then(|s| s.parent);
        }
        chain.reverse();
        chain
    }

    fn hooks_for(&self, chain: &[ScopeId], view: &mut View) {
        let sees = |layer: Option<ScopeId>| layer.is_none_or(|l| chain.contains(&l));
        for h in self.hooks.iter().filter(|h| sees(h.layer)) {
            match &h.hook {
                Hook::Pre(p) => view.pre.push(p.clone()),
                Hook::Wrap(w) => view.wrappers.push(w.clone()),
                Hook::Post(p) => view.post.push(p.clone()),
                Hook::Observe(o) => view.observers.push(o.clone()),
                Hook::Guard(_) => {}
            }
        }
        // Guards: the global layer, then the chain from the farthest scope to the
        // nearest; registration order within a layer.
        for layer in std::iter::once(None).chain(chain.iter().copied().map(Some)) {
            for h in self.hooks.iter().filter(|h| h.layer == layer) {
                if let Hook::Guard(g) = &h.hook {
                    view.guards.push(g.clone());
                }
            }
        }
    }

    fn global_view(&self) -> View {
        let mut view = View::default();
        self.hooks_for(&[], &mut view);
        view.set_tools(self.global.clone());
        view
    }

    fn orphan_view(&self) -> View {
        let mut view = View::default();
        self.hooks_for(&[], &mut view);
        view
    }

    /// A scope's view: the parent's view (or the global one) minus what this scope's
    /// masks reject, then this scope's own tools (replacing an inherited tool of the same
    /// name in place, else appended).
    fn scope_view(&self, id: ScopeId, state: &ScopeState, base: &View) -> View {
        let mut tools: Vec<Arc<Entry>> = base
            .tools
            .iter()
            .filter(|e| state.masks.iter().all(|m| m.admits(&e.name)))
            .cloned()
            .collect();
        for own in &state.own {
            match tools.iter().position(|e| e.name == own.name) {
                Some(i) => tools[i] = own.clone(),
                None => tools.push(own.clone()),
            }
        }
        let mut view = View::default();
        self.hooks_for(&self.chain(id), &mut view);
        view.set_tools(tools);
        view
    }

    /// A new snapshot after a change, reusing the views the change did not affect.
    pub(crate) fn rebuild(&self, prev: &Snapshot, dirty: Dirty) -> Snapshot {
        let all = dirty == Dirty::All;
        let global = if all {
            Arc::new(self.global_view())
        } else {
            prev.global.clone()
        };
        let orphan = if all {
            Arc::new(self.orphan_view())
        } else {
            prev.orphan.clone()
        };
        let mut scopes: HashMap<ScopeId, Arc<View>> = HashMap::with_capacity(self.scopes.len());
        let mut rebuilt: HashSet<ScopeId> = HashSet::new();
        // Ascending ids visit parents before children (a parent exists before its child).
        for (&id, state) in &self.scopes {
            let stale = all
                || dirty == Dirty::Scope(id)
                || state.parent.is_some_and(|p| rebuilt.contains(&p))
                || !prev.scopes.contains_key(&id);
            let view = match (stale, prev.scopes.get(&id)) {
                (false, Some(v)) => v.clone(),
                _ => {
                    rebuilt.insert(id);
                    let base = state
                        .parent
                        .and_then(|p| scopes.get(&p))
                        .unwrap_or(&global)
                        .clone();
                    Arc::new(self.scope_view(id, state, &base))
                }
            };
            scopes.insert(id, view);
        }
        Snapshot {
            global,
            scopes,
            orphan,
            approval: self.approvals.last().map(|(_, h)| h.clone()),
        }
    }
}

/// One scope's resolved view: visible tools in publication order, plus the hooks that
/// see calls from it.
#[derive(Default)]
pub(crate) struct View {
    pub(crate) tools: Vec<Arc<Entry>>,
    index: HashMap<Arc<str>, usize>,
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

impl View {
    fn set_tools(&mut self, tools: Vec<Arc<Entry>>) {
        self.index = tools
            .iter()
            .enumerate()
            .map(|(i, e)| (e.name.clone(), i))
            .collect();
        self.by_type.clear();
        for (i, e) in tools.iter().enumerate() {
            self.by_type
                .entry(e.type_id)
                .and_modify(|slot| *slot = None)
                .or_insert(Some(i));
        }
        self.tools = tools;
    }

    /// The visible tool with this name.
    pub(crate) fn get(&self, name: &str) -> Option<&Arc<Entry>> {
        self.index.get(name).map(|&i| &self.tools[i])
    }

    pub(crate) fn by_type(&self, id: TypeId) -> ByType<'_> {
        match self.by_type.get(&id) {
            Some(Some(i)) => ByType::Found(&self.tools[*i]),
            Some(None) => ByType::Ambiguous,
            None => ByType::Missing,
        }
    }
}

/// An immutable, consistent picture of the registry.
pub(crate) struct Snapshot {
    pub(crate) global: Arc<View>,
    pub(crate) scopes: HashMap<ScopeId, Arc<View>>,
    /// For calls from a scope that does not exist (any more): no tools, global hooks.
    pub(crate) orphan: Arc<View>,
    pub(crate) approval: Option<Arc<dyn ApprovalHandler>>,
}

impl Snapshot {
    pub(crate) fn empty() -> Snapshot {
        Snapshot {
            global: Arc::default(),
            scopes: HashMap::new(),
            orphan: Arc::default(),
            approval: None,
        }
    }

    /// The view of a caller.
    pub(crate) fn view(&self, agent: Option<ScopeId>) -> &View {
        match agent {
            None => &self.global,
            Some(id) => self.scopes.get(&id).unwrap_or(&self.orphan),
        }
    }
}
