//! A [`ToolDefinition`] as an MCP tool: the one place where definitions become what
//! `tools/list` publishes, so this mapping can later come from a shared export.
//!
//! - `name`, `title`, `description` as defined;
//! - `inputSchema`: the parameter schema's JSON Schema (always an object root);
//! - `outputSchema`: the output schema's JSON Schema when its root is an object. Protocol
//!   revision 2025-11-25 requires an object root (and object `structuredContent`), so any
//!   other output schema `S` is published wrapped as
//!   `{"type":"object","properties":{"result":S},"required":["result"],"additionalProperties":false}`
//!   and the canonical value `v` is sent as `structuredContent: {"result": v}`. The same
//!   shape is used for every protocol revision, so the list never depends on the client;
//! - `annotations`: `readOnlyHint`, `destructiveHint`, `idempotentHint` and
//!   `openWorldHint` from the definition's annotations (each always present, so a client
//!   never falls back to the protocol's defaults, which differ from ours), plus the title.

use std::sync::Arc;

use dsh_runtime::ToolDefinition;
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

/// The key a non-object canonical value is wrapped in (see the module docs).
pub const RESULT_KEY: &str = "result";

/// What `tools/list` publishes for one definition, and how its values are sent.
#[derive(Clone, Debug)]
pub struct McpTool {
    /// The MCP tool.
    pub tool: Tool,
    /// Whether canonical values are sent wrapped as `{"result": value}`.
    pub wraps_output: bool,
}

impl McpTool {
    /// The `structuredContent` for a canonical value of this tool.
    pub fn structured_content(&self, value: Value) -> Value {
        if self.wraps_output {
            let mut o = JsonObject::new();
            o.insert(RESULT_KEY.to_string(), value);
            Value::Object(o)
        } else {
            value
        }
    }
}

/// Map a definition to the MCP tool published for it (see the module docs).
pub fn mcp_tool(def: &ToolDefinition) -> McpTool {
    let input = match to_serde(&def.parameters.to_json_schema()) {
        Value::Object(o) => o,
        // The registry refuses non-object parameter schemas; keep the protocol's
        // invariant anyway.
        _ => json_object(json!({"type": "object"})),
    };
    let output = to_serde(&def.output.to_json_schema());
    let is_object = output.get("type").and_then(Value::as_str) == Some("object");
    let output = if is_object {
        json_object(output)
    } else {
        json_object(json!({
            "type": "object",
            "properties": { RESULT_KEY: output },
            "required": [RESULT_KEY],
            "additionalProperties": false,
        }))
    };
    let hints = def.annotations;
    let mut annotations = ToolAnnotations::new()
        .read_only(hints.read_only)
        .destructive(hints.destructive)
        .idempotent(hints.idempotent)
        .open_world(hints.open_world);
    if let Some(title) = &def.title {
        annotations.title = Some(title.to_string());
    }
    let mut tool = Tool::new(def.name.clone(), def.description.clone(), Arc::new(input))
        .with_raw_output_schema(Arc::new(output))
        .with_annotations(annotations);
    if let Some(title) = &def.title {
        tool = tool.with_title(title.to_string());
    }
    McpTool {
        tool,
        wraps_output: !is_object,
    }
}

/// A lossless JSON value as `serde_json` (numbers beyond `f64`/`u64`/`i64` are carried as
/// their nearest `f64`; schemas never hold such numbers in practice).
pub(crate) fn to_serde(value: &dsh_runtime::json::Value) -> Value {
    serde_json::to_value(value)
        .or_else(|_| serde_json::from_str(&value.to_string()))
        .unwrap_or(Value::Null)
}

fn json_object(value: Value) -> JsonObject {
    match value {
        Value::Object(o) => o,
        _ => JsonObject::new(),
    }
}
