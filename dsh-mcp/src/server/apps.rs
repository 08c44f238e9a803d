//! MCP Apps (extension `io.modelcontextprotocol/ui`): the presenters' cards in the host's
//! UI, with no UI code from the tool author.
//!
//! Only for a client that declares the extension (with `text/html;profile=mcp-app` among
//! its `mimeTypes`, or none listed) at `initialize`; any other client sees nothing new:
//!
//! - the `initialize` result declares the extension and the `resources` capability;
//! - every tool with presenters (a `present_call` or `present_result` of its own) is
//!   listed with `_meta.ui.resourceUri` = [`VIEW_URI`];
//! - `resources/read` of [`VIEW_URI`] serves the card renderer of `dsh-cards` as an MCP
//!   Apps view (`text/html;profile=mcp-app`, inline script and styles, no network: an
//!   empty `_meta.ui.csp`, so the host applies its most restrictive policy; the page
//!   carries a stricter one of its own);
//! - a `tools/call` result of such a tool carries its cards in
//!   `_meta["dev.dsh-rs/cards"]` = `{"callCard", "resultCard"}`, the very cards `replay`
//!   rebuilds from the log, which the view renders. `_meta` because `structuredContent`
//!   stays the canonical value, and `_meta` is what the extension hands the view without
//!   showing it to the model. Every way a result reaches the client carries them: a
//!   direct answer, a task's stored result (`tasks/result` on 2025-11-25, the tasks
//!   extension), a call resumed after its `InputRequiredResult` round or its approval.
//!
//! On 2026-07-28, which has no `initialize`, `server/discover` declares the extension
//! and `resources` when the request's client capabilities declare the UI extension, and
//! each request's own capabilities decide its listing and its cards. Tools are looked up
//! in the view of the request's agent scope (its session's, or the stateless context's),
//! so a tool registered in a scope gets the view and cards as a global one does.
//!
//! The view is read-only: it never calls a tool back.

use std::sync::Arc;

use dsh_cards::{CARDS_META_KEY, VIEW_MIME_TYPE};
use dsh_runtime::__private::tool_hooks;
use dsh_runtime::{AgentScope, Arguments, DynTool, Registry, ToolResult, ToolView};
use rmcp::model::{
    CallToolResponse, CallToolResult, ClientCapabilities, DiscoverResult, InitializeResult,
    ReadResourceResult, ServerCapabilities, Tool,
};
use serde_json::{Value, json};

use crate::definition::{McpTool, to_mcp_result, to_serde};

/// The extension's identifier.
pub(crate) const UI_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The one view every tool with presenters points at.
pub(crate) const VIEW_URI: &str = "ui://dsh-rs/cards";

/// Whether the client declared the UI extension for HTML views.
pub(crate) fn declared(capabilities: Option<&ClientCapabilities>) -> bool {
    let Some(settings) = capabilities
        .and_then(|c| c.extensions.as_ref())
        .and_then(|e| e.get(UI_EXTENSION))
    else {
        return false;
    };
    match settings.get("mimeTypes").and_then(Value::as_array) {
        Some(types) => types.iter().any(|t| t.as_str() == Some(VIEW_MIME_TYPE)),
        None => true,
    }
}

/// The `initialize` result for a client that declared the extension: the extension and
/// the `resources` capability (the view is read as a resource) declared.
pub(crate) fn on_initialize(
    mut result: InitializeResult,
    capabilities: &ClientCapabilities,
) -> InitializeResult {
    if declared(Some(capabilities)) {
        announce(&mut result.capabilities);
    }
    result
}

/// The `server/discover` result (2026-07-28) for a request whose client capabilities
/// declare the extension: as [`on_initialize`].
pub(crate) fn on_discover(
    mut result: DiscoverResult,
    capabilities: Option<&ClientCapabilities>,
) -> DiscoverResult {
    if declared(capabilities) {
        announce(&mut result.capabilities);
    }
    result
}

/// Declare the extension and the `resources` capability.
fn announce(caps: &mut ServerCapabilities) {
    caps.extensions
        .get_or_insert_with(Default::default)
        .insert(UI_EXTENSION.to_string(), serde_json::Map::new());
    if caps.resources.is_none() {
        caps.resources = serde_json::from_value(json!({})).ok();
    }
}

/// Whether `tool` has presenters of its own (a hand-written tool that does not say which
/// hooks it overrides counts as having them).
pub(crate) fn has_presenters(tool: &DynTool) -> bool {
    let hooks = tool.erased().overridden_hooks();
    hooks & (tool_hooks::PRESENT_CALL | tool_hooks::PRESENT_RESULT) != 0
}

/// The tools a request sees: its agent scope's view, else the global one.
fn view_of(registry: &Registry, scope: Option<&AgentScope>) -> ToolView {
    scope.map_or_else(|| registry.view(), AgentScope::view)
}

/// How `tools/list` shows tools to one client: with the view where the client declared
/// the extension and the tool, as the request's scope sees it, has presenters.
pub(crate) struct Listing(Option<ToolView>);

impl Listing {
    pub(crate) fn new(
        registry: &Registry,
        scope: Option<&AgentScope>,
        capabilities: Option<&ClientCapabilities>,
    ) -> Self {
        Listing(declared(capabilities).then(|| view_of(registry, scope)))
    }

    /// `tool` as this client sees it listed.
    pub(crate) fn tool(&self, tool: &Tool) -> Tool {
        match &self.0 {
            Some(view) if view.get(&tool.name).is_some_and(|t| has_presenters(&t)) => {
                with_view(tool.clone())
            }
            _ => tool.clone(),
        }
    }
}

/// `tool` pointing at the view.
fn with_view(mut tool: Tool) -> Tool {
    let meta = tool.meta.get_or_insert_with(Default::default);
    let ui = meta.0.entry("ui").or_insert_with(|| json!({}));
    if let Some(ui) = ui.as_object_mut() {
        ui.insert("resourceUri".into(), Value::from(VIEW_URI));
    }
    tool
}

/// The view, when `uri` names it and the client declared the extension.
pub(crate) fn read(uri: &str, declared: bool) -> Option<ReadResourceResult> {
    if !declared || uri != VIEW_URI {
        return None;
    }
    let contents = json!({ "contents": [{
        "uri": VIEW_URI,
        "mimeType": VIEW_MIME_TYPE,
        "text": dsh_cards::view_html(),
        "_meta": { "ui": { "csp": {}, "prefersBorder": true } },
    }]});
    let mut result: ReadResourceResult = serde_json::from_value(contents).ok()?;
    result.result_type = Some(rmcp::model::ResultType::COMPLETE);
    Some(result)
}

/// The cards of one call, for a client that declared the extension, of a tool (as the
/// call's scope sees it) with presenters: what [`Cards::attach`] needs besides the result.
#[derive(Clone)]
pub(crate) struct Cards {
    registry: Registry,
    scope: Option<AgentScope>,
    name: String,
    arguments: dsh_runtime::json::Value,
}

impl Cards {
    /// The cards of the call of `name` with `arguments` from `scope` (`None`: the global
    /// view), or `None` when the client did not declare the extension, the tool has no
    /// presenters or the arguments are not JSON.
    pub(crate) fn of(
        registry: &Registry,
        scope: Option<&AgentScope>,
        capabilities: Option<&ClientCapabilities>,
        name: &str,
        arguments: &Arguments,
    ) -> Option<Cards> {
        if !declared(capabilities) {
            return None;
        }
        let tool = view_of(registry, scope).get(name)?;
        if !has_presenters(&tool) {
            return None;
        }
        Some(Cards {
            registry: registry.clone(),
            scope: scope.cloned(),
            name: name.to_string(),
            arguments: argument_value(arguments)?,
        })
    }

    /// These cards as what adds them to a result (for `crate::approval::resume`, which
    /// keeps a suspended call's).
    pub(crate) fn adder(self) -> crate::approval::resume::AddCards {
        Arc::new(move |answer, result| self.attach(answer, result))
    }

    /// `answer` (the client's form of `result`) with the call's cards in its `_meta`.
    pub(crate) fn attach(&self, answer: &mut CallToolResult, result: &ToolResult) {
        let (name, args) = (self.name.as_str(), &self.arguments);
        let summary = result.summary();
        let (call_card, result_card) = match &self.scope {
            Some(scope) => (
                scope.present_call(name, args),
                scope.present_result(name, args, &summary),
            ),
            None => (
                self.registry.present_call(name, args),
                self.registry.present_result(name, args, &summary),
            ),
        };
        let cards = json!({
            "callCard": card_json(&call_card),
            "resultCard": card_json(&result_card),
        });
        answer
            .meta
            .get_or_insert_with(Default::default)
            .0
            .insert(CARDS_META_KEY.to_string(), cards);
    }
}

/// How a call's result becomes the client's `CallToolResult` wherever it is answered (in
/// its request, as a task's result, on a resumed call's retry): the tool's wrapping, then
/// the cards when the client shows them.
#[derive(Clone)]
pub(crate) struct Answering {
    tool: Option<Arc<McpTool>>,
    cards: Option<Cards>,
}

impl Answering {
    /// The wrapping of `tool`'s results (`None`: an unknown tool's), with `cards`.
    pub(crate) fn new(tool: Option<Arc<McpTool>>, cards: Option<Cards>) -> Self {
        Answering { tool, cards }
    }

    /// `result` as the client gets it.
    pub(crate) fn result(&self, result: &ToolResult) -> CallToolResult {
        let mut answer = to_mcp_result(result, self.tool.as_deref());
        if let Some(cards) = &self.cards {
            cards.attach(&mut answer, result);
        }
        answer
    }
}

/// A direct `tools/call` answer with `cards` in its `_meta` (when there are cards and the
/// call completed); else unchanged.
pub(crate) fn with_cards(
    response: CallToolResponse,
    cards: Option<&Cards>,
    result: &ToolResult,
) -> CallToolResponse {
    match (response, cards) {
        (CallToolResponse::Complete(mut answer), Some(cards)) => {
            cards.attach(&mut answer, result);
            CallToolResponse::Complete(answer)
        }
        (response, _) => response,
    }
}

/// A card as JSON (`null` in the unexpected case it does not serialize).
fn card_json<T: serde::Serialize>(card: &T) -> Value {
    dsh_runtime::json::to_value(card).map_or(Value::Null, |v| to_serde(&v))
}

/// The arguments as a lossless value (`None` when they are not JSON: no cards).
fn argument_value(arguments: &Arguments) -> Option<dsh_runtime::json::Value> {
    match arguments {
        Arguments::Text(text) => dsh_runtime::json::parse(text).ok(),
        Arguments::Value(value) => Some((**value).clone()),
        Arguments::Serde(value) => dsh_runtime::json::from_serde(value).ok(),
        _ => None,
    }
}
