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

use dsh_providers::export::{self, Target};
use dsh_runtime::ToolDefinition;
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
        task_support: def.task_support,
        task_after_input: def.task_after_input,
    })
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
/// object, see the module docs); on failure `isError: true` with the registry's
/// `Error: <message>` text.
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
    if let Some(value) = result.value() {
        let value = to_serde(value);
        out.structured_content = Some(match tool {
            Some(tool) => tool.structured_content(value),
            None => value,
        });
    }
    out
}
