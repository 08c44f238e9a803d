//! The tool-list cache: the published tools of one view, built once per registry
//! generation and shared between views that publish the same tools.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use dsh_runtime::{AgentScopeId, DynTool, Registry};

use super::Shared;
use crate::definition::{McpTool, mcp_tool_of};
use crate::util::lock;

/// Names and definition addresses of a view's tools: whether two lists publish the same
/// tools.
pub(crate) type Fingerprint = Vec<(Arc<str>, usize)>;

/// The published tools of one view, built once per registry generation.
pub(crate) struct ToolList {
    pub(crate) generation: u64,
    /// One entry per visible tool, aligned with `fingerprint`; `None` where the MCP
    /// export leaves the tool out (it is then neither listed nor callable).
    pub(crate) tools: Vec<Option<Arc<McpTool>>>,
    /// The published tools' names and their index in `tools`.
    pub(crate) by_name: HashMap<Arc<str>, usize>,
    /// Names and definition addresses: whether two lists publish the same tools.
    pub(crate) fingerprint: Fingerprint,
}

#[derive(Default)]
pub(crate) struct ListCache(Mutex<Option<Arc<ToolList>>>);

impl ListCache {
    pub(crate) fn get(&self, shared: &Shared, scope: Option<AgentScopeId>) -> Arc<ToolList> {
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
pub(crate) fn visible(registry: &Registry, scope: Option<AgentScopeId>) -> Vec<DynTool> {
    registry.view_of(scope).tools()
}

pub(crate) fn build_list(
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
        let published = shared.or_else(|| match mcp_tool_of(tool) {
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
