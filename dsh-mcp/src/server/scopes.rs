//! Scopes per tool, resource and prompt: which OAuth scope each needs ([`ToolScopes`]),
//! and where the server applies it: `tools/list` shows a request with an [`Identity`]
//! only the tools its scopes allow, and a `tools/call` beyond them is refused before
//! anything runs (over HTTP with `403` and `WWW-Authenticate: Bearer
//! error="insufficient_scope"`, see [`super::admission`]); the lists of resources,
//! templates and prompts show only what the scopes allow, and reading, subscribing,
//! getting or completing beyond them is the JSON-RPC error `insufficient_scope`.
//!
//! Requests without an identity (stdio, HTTP with a static bearer token or none) are not
//! checked: scopes come only with validated access tokens.

use std::collections::{BTreeSet, HashMap};

use rmcp::model::Tool;

use crate::identity::Identity;

/// Which scope each tool needs (see [`McpServer::with_tool_scopes`]).
///
/// A tool's scope is, in this order: the one given for its name ([`ToolScopes::tool`]);
/// else, for a tool annotated read-only (`readOnlyHint: true`), the read-only scope
/// ([`ToolScopes::read_only`]); else, for a destructive tool (not read-only and
/// `destructiveHint` not `false`, the protocol's defaults), the destructive scope
/// ([`ToolScopes::destructive`]); else the default scope ([`ToolScopes::default_scope`]);
/// else none, and any valid token may call it.
///
/// ```
/// use dsh_mcp::ToolScopes;
///
/// let scopes = ToolScopes::new()
///     .tool("bash", "tools:exec")
///     .read_only("tools:read")
///     .default_scope("tools:write");
/// assert_eq!(scopes.scopes().into_iter().collect::<Vec<_>>(), ["tools:exec", "tools:read", "tools:write"]);
/// ```
///
/// [`McpServer::with_tool_scopes`]: crate::McpServer::with_tool_scopes
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolScopes {
    by_name: HashMap<String, String>,
    read_only: Option<String>,
    destructive: Option<String>,
    default: Option<String>,
    /// The scope of each resource or template, by URI (or template) as published.
    resources: HashMap<String, String>,
    /// The scope of every other resource.
    all_resources: Option<String>,
    /// The scope of each prompt, by name.
    prompts: HashMap<String, String>,
    /// The scope of every other prompt.
    all_prompts: Option<String>,
}

impl ToolScopes {
    /// No tool needs a scope.
    pub fn new() -> Self {
        ToolScopes::default()
    }

    /// The tool `name` needs `scope` (whatever its annotations).
    #[must_use]
    pub fn tool(mut self, name: impl Into<String>, scope: impl Into<String>) -> Self {
        self.by_name.insert(name.into(), scope.into());
        self
    }

    /// Tools annotated read-only need `scope`, unless named.
    #[must_use]
    pub fn read_only(mut self, scope: impl Into<String>) -> Self {
        self.read_only = Some(scope.into());
        self
    }

    /// Destructive tools need `scope`, unless named.
    #[must_use]
    pub fn destructive(mut self, scope: impl Into<String>) -> Self {
        self.destructive = Some(scope.into());
        self
    }

    /// Every other tool needs `scope`.
    #[must_use]
    pub fn default_scope(mut self, scope: impl Into<String>) -> Self {
        self.default = Some(scope.into());
        self
    }

    /// The resource (or template) published as `uri` needs `scope`: listing it, reading
    /// it (a template: every URI it answers), subscribing to it, completing it.
    #[must_use]
    pub fn resource(mut self, uri: impl Into<String>, scope: impl Into<String>) -> Self {
        self.resources.insert(uri.into(), scope.into());
        self
    }

    /// Every resource not named with [`ToolScopes::resource`] needs `scope`.
    #[must_use]
    pub fn resources_scope(mut self, scope: impl Into<String>) -> Self {
        self.all_resources = Some(scope.into());
        self
    }

    /// The prompt `name` needs `scope`: listing it, getting it, completing it.
    #[must_use]
    pub fn prompt(mut self, name: impl Into<String>, scope: impl Into<String>) -> Self {
        self.prompts.insert(name.into(), scope.into());
        self
    }

    /// Every prompt not named with [`ToolScopes::prompt`] needs `scope`.
    #[must_use]
    pub fn prompts_scope(mut self, scope: impl Into<String>) -> Self {
        self.all_prompts = Some(scope.into());
        self
    }

    /// Whether nothing needs a scope.
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
            && self.read_only.is_none()
            && self.destructive.is_none()
            && self.default.is_none()
            && self.resources.is_empty()
            && self.all_resources.is_none()
            && self.prompts.is_empty()
            && self.all_prompts.is_none()
    }

    /// The scope the resource or template published as `uri` needs.
    pub fn resource_scope(&self, uri: &str) -> Option<&str> {
        self.resources
            .get(uri)
            .or(self.all_resources.as_ref())
            .map(String::as_str)
    }

    /// The scope the prompt `name` needs.
    pub fn prompt_scope(&self, name: &str) -> Option<&str> {
        self.prompts
            .get(name)
            .or(self.all_prompts.as_ref())
            .map(String::as_str)
    }

    /// Every scope named, in order (what the protected-resource metadata lists as
    /// `scopes_supported`).
    pub fn scopes(&self) -> BTreeSet<String> {
        self.by_name
            .values()
            .chain(&self.read_only)
            .chain(&self.destructive)
            .chain(&self.default)
            .chain(self.resources.values())
            .chain(&self.all_resources)
            .chain(self.prompts.values())
            .chain(&self.all_prompts)
            .cloned()
            .collect()
    }

    /// The scope the tool `name` needs, given its annotations (`tool`: the published
    /// tool, `None` for a tool the server does not list).
    pub fn required(&self, name: &str, tool: Option<&Tool>) -> Option<&str> {
        if let Some(scope) = self.by_name.get(name) {
            return Some(scope);
        }
        let annotations = tool.and_then(|t| t.annotations.as_ref());
        let read_only = annotations.and_then(|a| a.read_only_hint) == Some(true);
        let destructive = !read_only && annotations.and_then(|a| a.destructive_hint) != Some(false);
        let by_annotation = if read_only {
            self.read_only.as_deref()
        } else if destructive {
            self.destructive.as_deref()
        } else {
            None
        };
        by_annotation.or(self.default.as_deref())
    }

    /// The scope `identity` lacks to call the tool (`None`: it may).
    pub(crate) fn missing<'a>(
        &'a self,
        identity: &Identity,
        name: &str,
        tool: Option<&Tool>,
    ) -> Option<&'a str> {
        self.required(name, tool)
            .filter(|scope| !identity.has_scope(scope))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ToolAnnotations;

    fn tool(name: &str, read_only: Option<bool>, destructive: Option<bool>) -> Tool {
        let mut annotations = ToolAnnotations::new();
        annotations.read_only_hint = read_only;
        annotations.destructive_hint = destructive;
        Tool::new(name.to_string(), "", serde_json::Map::new()).annotate(annotations)
    }

    #[test]
    fn names_come_first_then_annotations_then_the_default() {
        let scopes = ToolScopes::new()
            .tool("bash", "tools:exec")
            .read_only("tools:read")
            .destructive("tools:write");
        let read = tool("read", Some(true), None);
        let bash = tool("bash", Some(true), None);
        let write = tool("write", Some(false), None);
        let safe = tool("format", Some(false), Some(false));
        assert_eq!(scopes.required("read", Some(&read)), Some("tools:read"));
        assert_eq!(scopes.required("bash", Some(&bash)), Some("tools:exec"));
        assert_eq!(scopes.required("write", Some(&write)), Some("tools:write"));
        // Neither read-only nor destructive, and no default: any token.
        assert_eq!(scopes.required("format", Some(&safe)), None);
        let scopes = scopes.default_scope("tools:call");
        assert_eq!(scopes.required("format", Some(&safe)), Some("tools:call"));
        // A tool without annotations is destructive, as the protocol's defaults have it.
        assert_eq!(scopes.required("unknown", None), Some("tools:write"));

        let alice = Identity::new("i", "alice", None, ["tools:read".to_string()], 0);
        assert_eq!(scopes.missing(&alice, "read", Some(&read)), None);
        assert_eq!(
            scopes.missing(&alice, "bash", Some(&bash)),
            Some("tools:exec")
        );
        assert!(ToolScopes::new().is_empty() && !scopes.is_empty());
    }
}
