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
//!   showing it to the model.
//!
//! The view is read-only: it never calls a tool back.

use dsh_cards::{CARDS_META_KEY, VIEW_MIME_TYPE};
use dsh_runtime::__private::tool_hooks;
use dsh_runtime::{Arguments, DynTool, Registry, ToolResult, ToolView};
use rmcp::model::{
    CallToolResponse, ClientCapabilities, InitializeResult, ReadResourceResult, Tool,
};
use serde_json::{Value, json};

use crate::definition::to_serde;

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
    if !declared(Some(capabilities)) {
        return result;
    }
    let caps = &mut result.capabilities;
    caps.extensions
        .get_or_insert_with(Default::default)
        .insert(UI_EXTENSION.to_string(), serde_json::Map::new());
    if caps.resources.is_none() {
        caps.resources = serde_json::from_value(json!({})).ok();
    }
    result
}

/// Whether `tool` has presenters of its own (a hand-written tool that does not say which
/// hooks it overrides counts as having them).
pub(crate) fn has_presenters(tool: &DynTool) -> bool {
    let hooks = tool.erased().overridden_hooks();
    hooks & (tool_hooks::PRESENT_CALL | tool_hooks::PRESENT_RESULT) != 0
}

/// How `tools/list` shows tools to one client: with the view where the client declared
/// the extension and the tool has presenters.
pub(crate) struct Listing(Option<ToolView>);

impl Listing {
    pub(crate) fn new(registry: &Registry, capabilities: Option<&ClientCapabilities>) -> Self {
        Listing(declared(capabilities).then(|| registry.view()))
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

/// What a direct `tools/call` answer is about: the client, the call and its result.
pub(crate) struct Answered<'a> {
    pub(crate) capabilities: Option<&'a ClientCapabilities>,
    pub(crate) name: &'a str,
    pub(crate) arguments: &'a Arguments,
    pub(crate) result: &'a ToolResult,
}

/// A direct `tools/call` answer with the call's cards in its `_meta`, for the view, when
/// the client declared the extension and the tool has presenters; else unchanged.
pub(crate) fn with_cards(
    response: CallToolResponse,
    registry: &Registry,
    call: &Answered<'_>,
) -> CallToolResponse {
    let Answered {
        capabilities,
        name,
        arguments,
        result,
    } = *call;
    let CallToolResponse::Complete(mut answer) = response else {
        return response;
    };
    let shown = declared(capabilities)
        && registry
            .view()
            .get(name)
            .is_some_and(|t| has_presenters(&t));
    if !shown {
        return CallToolResponse::Complete(answer);
    }
    let Some(args) = argument_value(arguments) else {
        return CallToolResponse::Complete(answer);
    };
    let call_card = registry.present_call(name, &args);
    let result_card = registry.present_result(name, &args, &result.summary());
    let cards = json!({
        "callCard": card_json(&call_card),
        "resultCard": card_json(&result_card),
    });
    answer
        .meta
        .get_or_insert_with(Default::default)
        .0
        .insert(CARDS_META_KEY.to_string(), cards);
    CallToolResponse::Complete(answer)
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
