//! A [`ToolDefinition`] as an MCP tool. What `tools/list` publishes is exactly the entry
//! of `dsh_runtime`'s MCP export ([`export`](dsh_providers::export::export) with
//! [`Target::Mcp2025_11_25`]), so the server, `dsh-tools export mcp` and any host that
//! builds its own MCP list agree byte for byte:
//!
//! - `name`, `title`, `description` as defined;
//! - `inputSchema`: the parameter schema's JSON Schema (always an object root);
//! - `outputSchema`: the output schema's JSON Schema when its root is an object. Protocol
//!   revision 2025-11-25 requires an object root (and object `structuredContent`), so any
//!   other output schema `S` is published wrapped as
//!   `{"type":"object","properties":{"result":S},"required":["result"],"additionalProperties":false}`
//!   and the canonical value `v` is sent as `structuredContent: {"result": v}`. That
//!   shape is valid on every later revision too, so the list never depends on the
//!   client;
//! - `annotations`: the title, `readOnlyHint` always, and `destructiveHint`,
//!   `idempotentHint` and `openWorldHint` only where the author declared them (a
//!   read-only tool also states `destructiveHint: false`). An undeclared hint keeps the
//!   protocol's cautious default (destructive, not idempotent, open world), so a client
//!   is never told a tool is safer than its author said.
//!
//! A tool imported from another server ([`crate::import_from`]) is re-served as that
//! server published it where the definition cannot say so:
//!
//! - its `annotations` carry the server's hints as given (an absent one stays absent,
//!   `readOnlyHint` stated as for every tool), except a `destructiveHint: true` next to
//!   `readOnlyHint: true`, which is left out (the hint means something only for a tool
//!   that is not read-only);
//! - without an output schema upstream, it publishes none. Its canonical value is the
//!   upstream result's content array, the protocol's own encoding of its content, so a
//!   wrapping schema would only invent a `structuredContent` the upstream never sent
//!   (and make the next importer read the content as JSON). Its results carry the
//!   content blocks as they came, and no `structuredContent`.

use dsh_providers::export::{self, Target};
use dsh_runtime::cards::{CallView, ResultSummary, ResultView};
use dsh_runtime::content::ContentBlock;
use dsh_runtime::json::Value as JsonValue;
use dsh_runtime::{
    BodyOutcome, BoxFuture, DynTool, ErasedTool, RawTool, ToolContext, ToolDefinition, ToolError,
};
use rmcp::model::Tool;
use serde_json::Value;

/// The export target every `tools/list` is built from (see the module docs).
pub const TARGET: Target = Target::Mcp2025_11_25;

/// The key a non-object canonical value is wrapped in (see the module docs).
pub const RESULT_KEY: &str = export::MCP_WRAP_KEY;

/// The `_meta` key marking a text block of a `tools/call` result as one of the result's
/// contexts (model-facing notes such as the ignored-argument note, sent after the
/// content as `{"_meta": {"dsh/context": true}}` text blocks), so an importing client can
/// tell them from the content.
pub const CONTEXT_META_KEY: &str = "dsh/context";

/// What `tools/list` publishes for one definition, and how its values are sent.
#[derive(Clone, Debug)]
pub struct McpTool {
    /// The MCP tool.
    pub tool: Tool,
    /// Whether canonical values are sent wrapped as `{"result": value}`.
    pub wraps_output: bool,
    /// Whether the tool publishes an `outputSchema` and its results carry the canonical
    /// value as `structuredContent`: always, except for an imported tool whose server
    /// published no output schema (see the module docs).
    pub structured: bool,
    /// Whether a call may run as a task (the definition's
    /// [`task_support`](ToolDefinition::task_support)): the server materializes a task
    /// for a task-capable tool when the client declared the tasks extension.
    pub task_support: dsh_runtime::TaskSupport,
    /// Whether a call becomes a task only when its body says so (the definition's
    /// [`task_after_input`](ToolDefinition::task_after_input)).
    pub task_after_input: bool,
}

impl McpTool {
    /// The `structuredContent` for a canonical value of this tool.
    pub fn structured_content(&self, value: Value) -> Value {
        if self.wraps_output {
            let mut o = serde_json::Map::new();
            o.insert(RESULT_KEY.to_string(), value);
            Value::Object(o)
        } else {
            value
        }
    }
}

/// Why a definition cannot be published over MCP.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotPublished {
    /// The tool's name.
    pub tool: String,
    /// The export's reason (or the protocol type's refusal).
    pub reason: String,
}

impl std::fmt::Display for NotPublished {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "tool `{}` is not published over MCP: {}",
            self.tool, self.reason
        )
    }
}

impl std::error::Error for NotPublished {}

/// Map a definition to the MCP tool published for it: its MCP export entry (see the
/// module docs). Fails only when the export leaves the tool out.
pub fn mcp_tool(def: &ToolDefinition) -> Result<McpTool, NotPublished> {
    let exported = export::export(std::iter::once(def), TARGET);
    let not_published = |reason: String| NotPublished {
        tool: def.name.to_string(),
        reason,
    };
    if let Some(error) = exported.errors.first() {
        return Err(not_published(error.to_string()));
    }
    let entry = exported
        .tools
        .first()
        .ok_or_else(|| not_published("the export produced no entry".to_string()))?;
    let tool: Tool = serde_json::from_value(dsh_runtime::json::to_serde(&entry.definition))
        .map_err(|e| not_published(format!("the export entry is not an MCP tool: {e}")))?;
    Ok(McpTool {
        tool,
        wraps_output: export::mcp_output_is_wrapped(&def.output, TARGET),
        structured: true,
        task_support: def.task_support,
        task_after_input: def.task_after_input,
    })
}

/// [`mcp_tool`] for a registered tool: an imported tool ([`Imported`]) is published with
/// its server's hints, and without `outputSchema` when its server published none (see
/// the module docs).
pub(crate) fn mcp_tool_of(tool: &DynTool) -> Result<McpTool, NotPublished> {
    let mut published = mcp_tool(tool.definition())?;
    let erased: &dyn std::any::Any = tool.erased();
    if let Some(imported) = erased.downcast_ref::<Imported>() {
        if !imported.structured {
            published.tool.output_schema = None;
            published.wraps_output = false;
            published.structured = false;
        }
        let annotations = published.tool.annotations.get_or_insert_default();
        let hints = &imported.hints;
        annotations.read_only_hint = Some(hints.read_only_hint.unwrap_or(false));
        annotations.destructive_hint = hints.destructive_hint;
        annotations.idempotent_hint = hints.idempotent_hint;
        annotations.open_world_hint = hints.open_world_hint;
        if annotations.read_only_hint == Some(true) {
            // Meaningless next to `readOnlyHint: true`; a `true` would contradict it.
            annotations.destructive_hint = annotations.destructive_hint.filter(|d| !d);
        }
    }
    Ok(published)
}

/// A tool imported from an MCP server ([`crate::import_from`]): the registry runs the
/// wrapped tool, and a dsh-mcp server re-serving it publishes the server's own hints
/// (which the registry's booleans cannot all tell from the protocol's defaults) and,
/// when the server published no output schema, none either, its results then without
/// `structuredContent` (see the module docs).
pub(crate) struct Imported {
    /// The tool as the registry runs it.
    pub(crate) tool: RawTool,
    /// Whether the server published an output schema.
    pub(crate) structured: bool,
    /// The server's hints, absent ones left absent.
    pub(crate) hints: rmcp::model::ToolAnnotations,
}

impl ErasedTool for Imported {
    fn definition(&self) -> &ToolDefinition {
        self.tool.definition()
    }
    fn call_json<'a>(&'a self, args: &'a JsonValue, cx: ToolContext) -> BoxFuture<'a, BodyOutcome> {
        self.tool.call_json(args, cx)
    }
    fn call_body<'a>(&'a self, args: &'a JsonValue, cx: ToolContext) -> BoxFuture<'a, BodyOutcome> {
        self.tool.call_body(args, cx)
    }
    fn render(&self, args: &JsonValue, value: &JsonValue) -> Result<Vec<ContentBlock>, ToolError> {
        self.tool.render(args, value)
    }
    fn is_concurrency_safe(&self, args: &JsonValue) -> bool {
        self.tool.is_concurrency_safe(args)
    }
    fn present_call(&self, args: &JsonValue) -> Option<CallView> {
        self.tool.present_call(args)
    }
    fn present_result(&self, args: &JsonValue, result: &ResultSummary) -> Option<ResultView> {
        self.tool.present_result(args, result)
    }
    fn presentation_meta(
        &self,
        args: &JsonValue,
        value: &JsonValue,
    ) -> Result<Option<JsonValue>, ToolError> {
        self.tool.presentation_meta(args, value)
    }
    fn finalize_content(
        &self,
        args: &JsonValue,
        content: &[ContentBlock],
    ) -> Option<Vec<ContentBlock>> {
        self.tool.finalize_content(args, content)
    }
    fn overridden_hooks(&self) -> u8 {
        self.tool.overridden_hooks()
    }
}

/// A lossless JSON value as `serde_json` (numbers beyond `f64`/`u64`/`i64` are carried as
/// their nearest `f64`; schemas never hold such numbers in practice).
pub(crate) fn to_serde(value: &dsh_runtime::json::Value) -> Value {
    dsh_runtime::json::to_serde(value)
}

/// A pipeline result as a `tools/call` result: the content blocks (every MCP kind with its
/// annotations; an invalid block as a text block naming the problem, see
/// [`crate::content`]), then each context as
/// a text block marked with [`CONTEXT_META_KEY`]; on success the
/// canonical value as `structuredContent` (wrapped when the tool's output is not an
/// object; none for a tool published without an output schema, see the module docs); on
/// failure `isError: true` with the registry's `Error: <message>` text.
pub(crate) fn to_mcp_result(
    result: &dsh_runtime::ToolResult,
    tool: Option<&McpTool>,
) -> rmcp::model::CallToolResult {
    let mut content: Vec<rmcp::model::ContentBlock> = result
        .content()
        .iter()
        .map(crate::content::to_mcp)
        .collect();
    for context in result.contexts() {
        let mut text = rmcp::model::TextContent::new(context.clone());
        let mut meta = rmcp::model::MetaObject::new();
        meta.0
            .insert(CONTEXT_META_KEY.to_string(), Value::Bool(true));
        text.meta = Some(meta);
        content.push(rmcp::model::ContentBlock::Text(text));
    }
    if result.is_error() {
        return rmcp::model::CallToolResult::error(content);
    }
    let mut out = rmcp::model::CallToolResult::success(content);
    if let Some(value) = result.value()
        && tool.is_none_or(|t| t.structured)
    {
        let value = to_serde(value);
        out.structured_content = Some(match tool {
            Some(tool) => tool.structured_content(value),
            None => value,
        });
    }
    out
}
