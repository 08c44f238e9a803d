//! Hand a registry's tools to a model API: the exact `tools` fragment each provider
//! expects, with every lossy transform reported.
//!
//! One tool set serves every consumer: [`export`] turns [`ToolDefinition`]s into the
//! request fragment of a [`Target`] (OpenAI Responses or Chat Completions, normal or
//! strict; Anthropic, normal or strict; Gemini `parametersJsonSchema` or the OpenAPI
//! subset `parameters`; MCP `tools/list` for 2025-11-25 or 2026-07-28), and
//! [`export_registry`] does the same for what a registry view publishes.
//!
//! # Nothing is lost silently
//!
//! A provider that cannot state a rule of our schema vocabulary gets the closest schema it
//! accepts, and the [`Export`] lists an [`ExportWarning`] naming the tool, the JSON path
//! (in our schema, e.g. `parameters.properties.limit`) and what was lost. Keywords a
//! provider does not take are moved into the node's description as `keyword: value`, so
//! the model still reads them; our validator keeps enforcing them either way. A tool that
//! cannot be exported at all (a map or an any-JSON value under `strict`, a name the
//! provider refuses, a limit exceeded) is left out and reported as an [`ExportError`]
//! saying why. [`portability`] tabulates, per tool and target: as is, with warnings, or
//! not at all.
//!
//! The output is byte-identical for an unchanged tool set: tools keep their publication
//! order, keys a fixed order, numbers their exact text.
//!
//! # Tools with their own JSON Schema
//!
//! A tool that publishes its own JSON Schema 2020-12 document
//! ([`ToolDefinition::verbatim_parameters`], [`ToolDefinition::verbatim_output`], as
//! `RawTool::with_json_schema` makes) is exported from that document, per target:
//!
//! - **MCP** (both revisions): the documents exactly as written, key order included. The
//!   2025-11-25 output schema of a document whose root is not `"type": "object"` is
//!   wrapped as `{"result": …}` like any other non-object output; its same-document
//!   references are rewritten to point inside the wrapper (`#/$defs/x` becomes
//!   `#/properties/result/$defs/x`) and its `$schema` moves to the wrapper's root, so the
//!   wrapped document means the same.
//! - **OpenAI and Anthropic without strict**: the document without its root `$schema`
//!   (providers are sent the schema, not its dialect; it is 2020-12 either way), with a
//!   warning, and without `x-mcp-header` (MCP transport metadata, which every target but
//!   MCP leaves out, as for the vocabulary's schemas).
//! - **Gemini `parametersJsonSchema`**: the same, and a `$ref` with keywords other than
//!   `$`-keywords beside it becomes `{"anyOf":[{"$ref":…}], …}` (Gemini allows only
//!   `$`-keywords next to `$ref`; a one-branch `anyOf` means the same); `$dynamicRef` becomes
//!   `$ref` (a document is one schema resource, so they resolve alike). A recursive document
//!   is refused: Gemini unrolls cyclic references only a little, and only under properties
//!   that are not required.
//! - **OpenAI strict, Anthropic strict**: the subset each takes, with the vocabulary's rules
//!   (every object closed, OpenAI's optional properties required and nullable, unsupported
//!   constraints moved into descriptions, `oneOf` as `anyOf`; keywords of another type's
//!   family left out, a missing `type` inferred from `enum`/`const` values or, with a
//!   warning, from the only family of keywords present). References are kept where they
//!   name the root or a `$defs` entry (anchors and `$dynamicRef` rewritten as JSON Pointers)
//!   and inlined elsewhere; only the `$defs` entries still referred to are published. The
//!   tool is refused, the keyword and its path named, for `allOf` (except one `$ref`
//!   branch), `not`, `if`/`then`/`else`, `prefixItems`, `contains`, `patternProperties`,
//!   `propertyNames`, `dependentRequired`, `dependentSchemas`, `unevaluated*`, a schema of
//!   any value (`true`, or untyped), `false`, a map (`additionalProperties` with a schema),
//!   a `$ref` beside validation keywords; on Anthropic also for a recursive document and
//!   array or object `enum`/`const` members.
//! - **Gemini `parameters`** (the OpenAPI subset): every reference inlined (a recursive one
//!   refused), then the subset's rules as for the vocabulary: one upper-case type
//!   (`["T","null"]` and an `anyOf` null branch as `nullable`), `additionalProperties`
//!   dropped with a warning, `const` as a one-string `enum`, the rest moved into
//!   descriptions or refused as for the strict targets.
//!
//! The runtime accepts what these exports let a model send, except where a warning says a
//! rule was moved into a description: strict targets make optional properties nullable,
//! and the registry reads a `null` member as omitted where only that matches.
//!
//! # The rules and their sources
//!
//! Each rule is documented where it is applied ([`Target`]'s variants and the crate's
//! projection flavors); the sources are the providers' documentation and SDKs, as
//! collected in the project's `providers.md`:
//!
//! - **OpenAI** function calling and Structured Outputs "Supported schemas"; tool names
//!   `^[a-zA-Z0-9_-]{1,64}$` (openai-python `FunctionDefinition`).
//! - **Anthropic** tool-use guide (names `^[a-zA-Z0-9_-]{1,64}$`, `input_schema` with an
//!   object root) and the structured-outputs page (strict limits and budgets).
//! - **Gemini** python-genai `FunctionDeclaration`/`Schema` and the Vertex/AI Studio REST
//!   references (names, the OpenAPI subset, `parameters` vs `parametersJsonSchema`).
//! - **MCP** `schema/2025-11-25/schema.ts` (object-rooted `outputSchema`) and
//!   `schema/2026-07-28/schema.ts` (any output root), `server/tools.mdx` (names,
//!   annotations).
//!
//! # What the tools cost
//!
//! With the `tokens` feature, `tokens::token_report` counts the o200k tokens of each
//! tool's entry and of each request's whole fragment, per target (exact for OpenAI, an
//! approximation for the others), and what deferred tools leave out of every request.
//!
//! # Handing the tools to each API
//!
//! The pattern is the same for every provider: put [`Export::fragment`] in the request's
//! `tools`, then send each tool call the model makes through [`Registry::execute`] and
//! give the model the result. The argument text a provider sends is passed through
//! unparsed: the registry snapshots and validates it. The examples below show the
//! fragment in a request with a hand-written minimal reply
//! ([`dsh_runtime::ToolResult::text`] only); [`crate::round_trip`] does the whole round trip
//! per provider, with the contexts (the note naming ignored arguments, deferred
//! contexts) and images that `text()` leaves out.
//!
//! **OpenAI Responses** (`Target::OpenAiResponsesStrict`, or `OpenAiResponses`):
//!
//! ```
//! # use dsh_runtime::{Registry, ToolCall, tool};
//! # use dsh_providers::export::{self, Target};
//! # /// Add two numbers.
//! # #[tool(read_only)]
//! # async fn add(a: i64, b: i64) -> i64 { a + b }
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let registry = Registry::new();
//! let _add = registry.register(Add).unwrap();
//! let tools = export::export_registry(&registry, Target::OpenAiResponsesStrict);
//! let request = serde_json::json!({ "model": "gpt-5", "input": "2 + 3?", "tools": tools.to_serde() });
//! # assert_eq!(request["tools"][0]["name"], "add");
//! // ... the response's `output` holds the model's calls:
//! let output = serde_json::json!([{ "type": "function_call", "call_id": "c1", "name": "add", "arguments": "{\"a\":2,\"b\":3}" }]);
//! let mut next_input = Vec::new();
//! for item in output.as_array().into_iter().flatten().filter(|i| i["type"] == "function_call") {
//!     let call = ToolCall::new(item["call_id"].as_str().unwrap_or(""), item["name"].as_str().unwrap_or(""), item["arguments"].as_str().unwrap_or("{}"));
//!     let result = registry.execute(call).await;
//!     next_input.push(serde_json::json!({ "type": "function_call_output", "call_id": item["call_id"], "output": result.text() }));
//! }
//! # assert_eq!(next_input[0]["output"], "5");
//! # });
//! ```
//!
//! **OpenAI Chat Completions** (`Target::OpenAiChatStrict`, or `OpenAiChat`):
//!
//! ```
//! # use dsh_runtime::{Registry, ToolCall, tool};
//! # use dsh_providers::export::{self, Target};
//! # /// Add two numbers.
//! # #[tool(read_only)]
//! # async fn add(a: i64, b: i64) -> i64 { a + b }
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! # let registry = Registry::new();
//! # let _add = registry.register(Add).unwrap();
//! let tools = export::export_registry(&registry, Target::OpenAiChatStrict);
//! let request = serde_json::json!({ "model": "gpt-5", "messages": [], "tools": tools.to_serde() });
//! # assert_eq!(request["tools"][0]["function"]["name"], "add");
//! // ... `choices[0].message.tool_calls` of the response:
//! let tool_calls = serde_json::json!([{ "id": "c1", "type": "function", "function": { "name": "add", "arguments": "{\"a\":2,\"b\":3}" } }]);
//! let mut messages = Vec::new();
//! for tc in tool_calls.as_array().into_iter().flatten() {
//!     let f = &tc["function"];
//!     let call = ToolCall::new(tc["id"].as_str().unwrap_or(""), f["name"].as_str().unwrap_or(""), f["arguments"].as_str().unwrap_or("{}"));
//!     let result = registry.execute(call).await;
//!     messages.push(serde_json::json!({ "role": "tool", "tool_call_id": tc["id"], "content": result.text() }));
//! }
//! # assert_eq!(messages[0]["content"], "5");
//! # });
//! ```
//!
//! **Anthropic Messages** (`Target::Anthropic`, or `AnthropicStrict`): `tool_use` blocks
//! carry parsed `input`, which is handed over as a value.
//!
//! ```
//! # use dsh_runtime::{Registry, ToolCall, tool};
//! # use dsh_providers::export::{self, Target};
//! # /// Add two numbers.
//! # #[tool(read_only)]
//! # async fn add(a: i64, b: i64) -> i64 { a + b }
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! # let registry = Registry::new();
//! # let _add = registry.register(Add).unwrap();
//! let tools = export::export_registry(&registry, Target::Anthropic);
//! let request = serde_json::json!({ "model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": [], "tools": tools.to_serde() });
//! # assert_eq!(request["tools"][0]["input_schema"]["type"], "object");
//! // ... the response's `content` blocks:
//! let content = serde_json::json!([{ "type": "tool_use", "id": "toolu_1", "name": "add", "input": { "a": 2, "b": 3 } }]);
//! let mut results = Vec::new();
//! for block in content.as_array().into_iter().flatten().filter(|b| b["type"] == "tool_use") {
//!     let call = ToolCall::new(block["id"].as_str().unwrap_or(""), block["name"].as_str().unwrap_or(""), block["input"].clone());
//!     let result = registry.execute(call).await;
//!     results.push(serde_json::json!({ "type": "tool_result", "tool_use_id": block["id"], "content": result.text(), "is_error": result.is_error() }));
//! }
//! # assert_eq!(results[0]["content"], "5");
//! # });
//! ```
//!
//! **Gemini** (`Target::GeminiJsonSchema`, or `GeminiOpenApi` for API versions without
//! `parametersJsonSchema`): the fragment is the request's whole `tools` array.
//!
//! ```
//! # use dsh_runtime::{Registry, ToolCall, tool};
//! # use dsh_providers::export::{self, Target};
//! # /// Add two numbers.
//! # #[tool(read_only)]
//! # async fn add(a: i64, b: i64) -> i64 { a + b }
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! # let registry = Registry::new();
//! # let _add = registry.register(Add).unwrap();
//! let tools = export::export_registry(&registry, Target::GeminiJsonSchema);
//! let request = serde_json::json!({ "contents": [], "tools": tools.to_serde() });
//! # assert_eq!(request["tools"][0]["functionDeclarations"][0]["name"], "add");
//! // ... `candidates[0].content.parts` of the response:
//! let parts = serde_json::json!([{ "functionCall": { "id": "fc1", "name": "add", "args": { "a": 2, "b": 3 } } }]);
//! let mut replies = Vec::new();
//! for (i, fc) in parts.as_array().into_iter().flatten().filter_map(|p| p.get("functionCall")).enumerate() {
//!     let id = fc["id"].as_str().map_or_else(|| format!("call_{i}"), str::to_string);
//!     let name = fc["name"].as_str().unwrap_or("");
//!     let result = registry.execute(ToolCall::new(id, name, fc["args"].clone())).await;
//!     replies.push(serde_json::json!({ "functionResponse": { "id": fc["id"], "name": name, "response": { "output": result.text() } } }));
//! }
//! # assert_eq!(replies[0]["functionResponse"]["response"]["output"], "5");
//! # });
//! ```
//!
//! **MCP** (`Target::Mcp2025_11_25`, or `Mcp2026_07_28`): the fragment is a `tools/list`
//! result. With an `outputSchema`, `structuredContent` must conform to it:
//! [`mcp_structured_content`] wraps a non-object value exactly as the 2025-11-25 export
//! wrapped its schema.
//!
//! ```
//! # use dsh_runtime::{Registry, ToolCall, tool};
//! # use dsh_providers::export::{self, Target};
//! # /// Add two numbers.
//! # #[tool(read_only)]
//! # async fn add(a: i64, b: i64) -> i64 { a + b }
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! # let registry = Registry::new();
//! # let _add = registry.register(Add).unwrap();
//! let list = export::export_registry(&registry, Target::Mcp2025_11_25);
//! let list_result = list.to_serde(); // the `tools/list` result
//! # assert_eq!(list_result["tools"][0]["outputSchema"]["required"][0], "result");
//! // `tools/call` with params { name, arguments }:
//! let params = serde_json::json!({ "name": "add", "arguments": { "a": 2, "b": 3 } });
//! let name = params["name"].as_str().unwrap_or("");
//! let result = registry.execute(ToolCall::new("req-7", name, params["arguments"].clone())).await;
//! let mut call_result = serde_json::json!({ "content": [{ "type": "text", "text": result.text() }], "isError": result.is_error() });
//! if let (Some(value), Some(tool)) = (result.value(), registry.view().get(name)) {
//!     let structured = export::mcp_structured_content(&tool.definition().output, value, Target::Mcp2025_11_25);
//!     call_result["structuredContent"] = dsh_runtime::json::to_serde(&structured);
//! }
//! # assert_eq!(call_result["structuredContent"]["result"], 5);
//! # });
//! ```

pub mod check;
mod project;
#[cfg(feature = "tokens")]
pub mod tokens;
mod verbatim;

use std::fmt;
use std::str::FromStr;

use dsh_runtime::Namespace;
use dsh_runtime::json::{Object, Value};
use dsh_runtime::schema::{Kind, Schema};
use dsh_runtime::{Registry, ToolDefinition};

use project::{Flavor, Projector};

/// Where the tools go: one provider API (and schema dialect) per variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Target {
    /// OpenAI Responses API function tools, `strict: false`:
    /// `{"type":"function","name","description","parameters","strict":false}`. The schema is
    /// ours, lossless. (The Responses API defaults `strict` to true, so it is stated.)
    OpenAiResponses,
    /// OpenAI Responses API function tools with `strict: true` (Structured Outputs): every
    /// object closed, every property required, optional properties nullable, `oneOf` as
    /// `anyOf`, `minLength`/`maxLength`/`default`/`examples` moved into descriptions; maps
    /// and any-JSON values cannot be exported; the limits of 5000 properties, 10 levels of
    /// object nesting, 1000 enum values, 120,000 characters of names and enum/const values,
    /// and 15,000 characters for a string enum of more than 250 values are enforced.
    /// Source: OpenAI Structured Outputs "Supported schemas".
    OpenAiResponsesStrict,
    /// OpenAI Chat Completions tools, `strict: false`:
    /// `{"type":"function","function":{"name","description","parameters","strict":false}}`.
    OpenAiChat,
    /// OpenAI Chat Completions tools with `strict: true`, under the rules of
    /// [`Target::OpenAiResponsesStrict`].
    OpenAiChatStrict,
    /// Anthropic Messages tools: `{"name","description","input_schema"}`, lossless.
    /// Source: Anthropic tool-use guide.
    Anthropic,
    /// Anthropic strict tool use (`"strict": true`): every object closed; numeric bounds,
    /// string lengths, `maxItems` and `minItems` above 1 moved into descriptions; `oneOf` as
    /// `anyOf`; maps and any-JSON values cannot be exported. Per request at most 20 strict
    /// tools, 24 optional properties and 16 union-typed properties across them. Source:
    /// Claude structured-outputs page.
    AnthropicStrict,
    /// Gemini function declarations with `parametersJsonSchema` (JSON Schema), lossless;
    /// the fragment is the request's `tools` array `[{"functionDeclarations":[…]}]`.
    /// Names: a letter or `_` first, then `[A-Za-z0-9_.:-]`, at most 64. Source:
    /// python-genai `FunctionDeclaration`.
    GeminiJsonSchema,
    /// Gemini function declarations with `parameters`, the OpenAPI 3.0 subset: upper-case
    /// single types, `nullable`, no `additionalProperties`, `const` or type arrays, `enum`
    /// only of strings, `oneOf` as `anyOf`. Source: python-genai `Schema` and the 400s
    /// observed for other keywords (providers.md).
    GeminiOpenApi,
    /// MCP `tools/list` result for protocol revision 2025-11-25: `outputSchema` must have an
    /// object root, so a non-object output is wrapped as `{"result": …}` (and
    /// [`mcp_structured_content`] wraps the value the same way). Source:
    /// `schema/2025-11-25/schema.ts`.
    Mcp2025_11_25,
    /// MCP `tools/list` result for revision 2026-07-28, where `outputSchema` may have any
    /// root. Source: `schema/2026-07-28/schema.ts`.
    Mcp2026_07_28,
}

impl Target {
    /// Whether the target's tool entries can be marked deferred (`defer_loading: true`,
    /// loaded through the provider's tool search): Anthropic (normal and strict) and
    /// OpenAI Responses (normal and strict). Sources: Anthropic "Tool search tool",
    /// OpenAI "Tool search" guides.
    pub fn can_defer(self) -> bool {
        matches!(
            self,
            Target::Anthropic
                | Target::AnthropicStrict
                | Target::OpenAiResponses
                | Target::OpenAiResponsesStrict
        )
    }

    /// Every target, in a fixed order.
    pub const ALL: [Target; 10] = [
        Target::OpenAiResponses,
        Target::OpenAiResponsesStrict,
        Target::OpenAiChat,
        Target::OpenAiChatStrict,
        Target::Anthropic,
        Target::AnthropicStrict,
        Target::GeminiJsonSchema,
        Target::GeminiOpenApi,
        Target::Mcp2025_11_25,
        Target::Mcp2026_07_28,
    ];

    /// The target's name, as the `dsh-tools export --provider` option spells it.
    pub fn name(self) -> &'static str {
        match self {
            Target::OpenAiResponses => "openai",
            Target::OpenAiResponsesStrict => "openai-strict",
            Target::OpenAiChat => "openai-chat",
            Target::OpenAiChatStrict => "openai-chat-strict",
            Target::Anthropic => "anthropic",
            Target::AnthropicStrict => "anthropic-strict",
            Target::GeminiJsonSchema => "gemini",
            Target::GeminiOpenApi => "gemini-openapi",
            Target::Mcp2025_11_25 => "mcp",
            Target::Mcp2026_07_28 => "mcp-2026-07-28",
        }
    }

    /// Whether the target uses a provider's strict mode.
    pub fn is_strict(self) -> bool {
        matches!(
            self,
            Target::OpenAiResponsesStrict | Target::OpenAiChatStrict | Target::AnthropicStrict
        )
    }

    fn flavor(self) -> Flavor {
        match self {
            Target::OpenAiResponsesStrict | Target::OpenAiChatStrict => Flavor::OpenAiStrict,
            Target::AnthropicStrict => Flavor::AnthropicStrict,
            Target::GeminiOpenApi => Flavor::GeminiOpenApi,
            _ => Flavor::Json,
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The text of an unknown target name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown provider {:?}; expected one of: {}", .0, target_names())]
pub struct UnknownTarget(pub String);

/// The names of [`Target::ALL`], comma-separated.
fn target_names() -> String {
    let names: Vec<&str> = Target::ALL.iter().map(|t| t.name()).collect();
    names.join(", ")
}

impl FromStr for Target {
    type Err = UnknownTarget;
    fn from_str(s: &str) -> Result<Target, UnknownTarget> {
        Target::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| UnknownTarget(s.to_string()))
    }
}

/// A transform that lost information: which tool, where (a JSON path into our schema,
/// `parameters…` or `output…`), and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportWarning {
    /// The tool's name.
    pub tool: String,
    /// Where in the tool's schemas (`parameters.properties.limit`, `output.oneOf[1]`, `name`).
    pub path: String,
    /// What was lost or changed.
    pub lost: String,
}

impl fmt::Display for ExportWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.tool, self.path, self.lost)
    }
}

/// Why a tool (or the request as a whole) cannot be exported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportError {
    /// The tool's name; `None` for a per-request budget.
    pub tool: Option<String>,
    /// Where in the tool's schemas (empty for the request).
    pub path: String,
    /// Why.
    pub reason: String,
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.tool, self.path.is_empty()) {
            (Some(tool), false) => write!(f, "{tool}: {}: {}", self.path, self.reason),
            (Some(tool), true) => write!(f, "{tool}: {}", self.reason),
            (None, _) => write!(f, "request: {}", self.reason),
        }
    }
}

impl std::error::Error for ExportError {}

/// One exported tool: its name and its definition in the target's shape.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportedTool {
    /// The tool's name.
    pub name: String,
    /// The tool's entry, exactly as the provider takes it.
    pub definition: Value,
    /// The namespace [`Export::fragment`] groups the entry under (OpenAI Responses only;
    /// `None` elsewhere, where namespaces do not exist).
    pub namespace: Option<Namespace>,
}

/// The provider's own tool search, which a request with a deferred tool must carry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ProviderSearch {
    /// Anthropic's BM25 tool search tool (`tool_search_tool_bm25_20251119`); OpenAI's
    /// hosted `tool_search`.
    #[default]
    Bm25,
    /// Anthropic's regex tool search tool (`tool_search_tool_regex_20251119`), where the
    /// model writes Python-style regular expressions; OpenAI's hosted `tool_search` (it
    /// has one kind).
    Regex,
}

/// The entry of `target`'s own tool-search tool: Anthropic's BM25 or regex tool search
/// tool, OpenAI Responses' hosted `tool_search`. `None` for the targets that cannot defer
/// a tool ([`Target::can_defer`]).
///
/// ```
/// # use dsh_providers::export::{self, ProviderSearch, Target};
/// let entry = export::provider_search_entry(Target::Anthropic, ProviderSearch::Regex).unwrap();
/// assert_eq!(entry.to_string(), r#"{"type":"tool_search_tool_regex_20251119","name":"tool_search_tool_regex"}"#);
/// assert_eq!(export::provider_search_entry(Target::OpenAiResponses, ProviderSearch::Bm25).unwrap().to_string(), r#"{"type":"tool_search"}"#);
/// assert!(export::provider_search_entry(Target::GeminiJsonSchema, ProviderSearch::Bm25).is_none());
/// ```
pub fn provider_search_entry(target: Target, search: ProviderSearch) -> Option<Value> {
    let mut o = Object::new();
    match target {
        Target::Anthropic | Target::AnthropicStrict => {
            let (kind, name) = match search {
                ProviderSearch::Bm25 => ("tool_search_tool_bm25_20251119", "tool_search_tool_bm25"),
                ProviderSearch::Regex => {
                    ("tool_search_tool_regex_20251119", "tool_search_tool_regex")
                }
            };
            o.insert("type", Value::from(kind));
            o.insert("name", Value::from(name));
        }
        Target::OpenAiResponses | Target::OpenAiResponsesStrict => {
            o.insert("type", Value::from("tool_search"));
        }
        _ => return None,
    }
    Some(Value::Object(o))
}

/// What [`export`] produced: the tools it could export, what it lost, what it refused.
#[derive(Clone, Debug)]
pub struct Export {
    /// The target.
    pub target: Target,
    /// The exported tools, in the order given.
    pub tools: Vec<ExportedTool>,
    /// Every lossy transform, in tool order.
    pub warnings: Vec<ExportWarning>,
    /// Tools left out (and per-request budgets exceeded), with the reason.
    pub errors: Vec<ExportError>,
    /// The provider's own tool-search tool, which [`Export::fragment`] adds after the
    /// tools: set by [`export`] when a tool is deferred on a target that can defer
    /// ([`ProviderSearch::Bm25`]), since the provider refuses deferred tools without it.
    /// [`Export::with_provider_search`] picks the other kind; `None` leaves it out (for a
    /// host that runs the built-in [`tool_search`](crate::tool_search) tool instead, with
    /// [`export_loaded`]).
    pub search: Option<Value>,
}

impl Export {
    /// Whether every tool was exported and no budget is exceeded.
    pub fn is_complete(&self) -> bool {
        self.errors.is_empty()
    }

    /// The request fragment: the `tools` array for OpenAI, Anthropic and Gemini (for
    /// Gemini one `{"functionDeclarations":[…]}` entry), the `tools/list` result
    /// `{"tools":[…]}` for MCP 2025-11-25, and for 2026-07-28
    /// `{"resultType":"complete","ttlMs":0,"cacheScope":"private","tools":[…]}` (the
    /// fields that revision requires, with the most cautious caching hints: stale at
    /// once, not shared across authorization contexts).
    ///
    /// On OpenAI Responses, the tools of one [`Namespace`] are one
    /// `{"type":"namespace","name":…,"description":…,"tools":[…]}` entry, at the place
    /// of the namespace's first tool. The provider's tool search ([`Export::search`])
    /// comes last.
    pub fn fragment(&self) -> Value {
        // Each slot is a tool's entry, or the index of a namespace's group.
        let mut slots: Vec<Result<Value, usize>> = Vec::with_capacity(self.tools.len() + 1);
        let mut groups: Vec<(&Namespace, Vec<Value>)> = Vec::new();
        for t in &self.tools {
            match &t.namespace {
                None => slots.push(Ok(t.definition.clone())),
                Some(ns) => match groups.iter().position(|(g, _)| *g == ns) {
                    Some(at) => groups[at].1.push(t.definition.clone()),
                    None => {
                        slots.push(Err(groups.len()));
                        groups.push((ns, vec![t.definition.clone()]));
                    }
                },
            }
        }
        let mut groups: Vec<Option<(&Namespace, Vec<Value>)>> =
            groups.into_iter().map(Some).collect();
        let mut entries: Vec<Value> = slots
            .into_iter()
            .filter_map(|slot| match slot {
                Ok(entry) => Some(entry),
                Err(at) => groups[at].take().map(|(ns, tools)| {
                    let mut o = Object::new();
                    o.insert("type", Value::from("namespace"));
                    o.insert("name", Value::from(ns.name()));
                    o.insert("description", Value::from(ns.description()));
                    o.insert("tools", Value::from(tools));
                    Value::Object(o)
                }),
            })
            .collect();
        entries.extend(self.search.clone());
        let list = Value::from(entries);
        match self.target {
            Target::GeminiJsonSchema | Target::GeminiOpenApi => {
                let mut o = Object::new();
                o.insert("functionDeclarations", list);
                Value::from(vec![Value::Object(o)])
            }
            Target::Mcp2025_11_25 => {
                let mut o = Object::new();
                o.insert("tools", list);
                Value::Object(o)
            }
            Target::Mcp2026_07_28 => {
                // The revision requires these on every complete `tools/list` result; the
                // most cautious caching hints (stale at once, not shared), as rmcp's
                // server sends them.
                let mut o = Object::new();
                o.insert("resultType", Value::from("complete"));
                o.insert("ttlMs", Value::from(0u64));
                o.insert("cacheScope", Value::from("private"));
                o.insert("tools", list);
                Value::Object(o)
            }
            _ => list,
        }
    }

    /// [`Export::fragment`] as a `serde_json::Value`, for building a request body. Its
    /// objects keep the declared key order only with `serde_json`'s `preserve_order`
    /// feature; [`Export::request_text`] keeps it without.
    pub fn to_serde(&self) -> serde_json::Value {
        dsh_runtime::json::to_serde(&self.fragment())
    }

    /// The request body `request` with this export as its `tools`, as JSON text, the
    /// tools' keys in their declared order: the order-keeping way to send a request.
    ///
    /// [`Export::to_serde`] goes through `serde_json::Value`, whose objects sort their
    /// keys unless `serde_json`'s `preserve_order` feature is on, so a schema's
    /// `title, body, tags` would reach the model as `body, tags, title`. Here the rest of
    /// the request is written as `serde_json` writes it and `tools` (replacing any
    /// `tools` already there) from the export itself. A `request` that is not an object
    /// is written as `{"tools": …}` alone.
    ///
    /// ```
    /// # use dsh_runtime::{tool, Registry, ToolError};
    /// # use dsh_providers::export::{self, Target};
    /// /// Add a note.
    /// #[tool]
    /// async fn add_note(title: String, body: String, tags: Vec<String>) -> Result<(), ToolError> { Ok(()) }
    /// let registry = Registry::new();
    /// let _n = registry.register(AddNote).unwrap();
    /// let tools = export::export_registry(&registry, Target::OpenAiChat);
    /// let body = tools.request_text(&serde_json::json!({"model": "gpt-5", "messages": []}));
    /// let title = body.find("\"title\"").unwrap();
    /// assert!(title < body.find("\"body\"").unwrap() && body.find("\"body\"").unwrap() < body.find("\"tags\"").unwrap());
    /// assert!(body.starts_with(r#"{"messages":[],"model":"gpt-5","tools":[{"#));
    /// ```
    pub fn request_text(&self, request: &serde_json::Value) -> String {
        let mut out = String::from("{");
        if let serde_json::Value::Object(fields) = request {
            for (key, value) in fields.iter().filter(|(k, _)| k.as_str() != "tools") {
                // Writing a `serde_json::Value` to text cannot fail.
                out.push_str(&serde_json::to_string(key).unwrap_or_default());
                out.push(':');
                out.push_str(&serde_json::to_string(value).unwrap_or_default());
                out.push(',');
            }
        }
        out.push_str("\"tools\":");
        out.push_str(&self.fragment().to_string());
        out.push('}');
        out
    }

    /// [`Export::fragment`] as pretty JSON text (two-space indent, a final newline):
    /// byte-identical for an unchanged tool set.
    pub fn to_pretty_string(&self) -> String {
        let mut text = serde_json::to_string_pretty(&self.fragment())
            .unwrap_or_else(|e| format!("(the export cannot be printed: {e})"));
        text.push('\n');
        text
    }

    /// This export with `search` as the provider's tool search ([`Export::search`]), if
    /// it has one: a no-op when no tool is deferred or the target cannot defer.
    ///
    /// ```
    /// # use dsh_runtime::{ToolDefinition, schema::Schema};
    /// # use dsh_providers::export::{self, ProviderSearch, Target};
    /// # use std::sync::Arc;
    /// let def = |name: &str, defer: bool| {
    ///     ToolDefinition::new(name.to_string(), "A tool.", Arc::new(Schema::closed_object(vec![])), Arc::new(Schema::json()))
    ///         .with_defer_loading(defer)
    /// };
    /// let e = export::export(&[def("search", false), def("weather", true)], Target::Anthropic);
    /// assert_eq!(e.fragment().as_array().unwrap()[2].get("name").and_then(|n| n.as_str()), Some("tool_search_tool_bm25"));
    /// let e = e.with_provider_search(ProviderSearch::Regex);
    /// assert_eq!(e.fragment().as_array().unwrap()[2].get("name").and_then(|n| n.as_str()), Some("tool_search_tool_regex"));
    /// ```
    pub fn with_provider_search(mut self, search: ProviderSearch) -> Self {
        if self.search.is_some() {
            self.search = provider_search_entry(self.target, search);
        }
        self
    }

    /// The exported entry of tool `name`.
    pub fn tool(&self, name: &str) -> Option<&Value> {
        self.tools
            .iter()
            .find(|t| t.name == name)
            .map(|t| &t.definition)
    }
}

/// Export what the global view of a registry publishes (see [`export`]; for a scope,
/// export [`ToolView::definitions`](dsh_runtime::ToolView::definitions)).
pub fn export_registry(registry: &Registry, target: Target) -> Export {
    export(&registry.view().definitions(), target)
}

/// Export for a host that runs its own tool search (the built-in
/// [`tool_search`](crate::tool_search) tool) instead of the provider's: the tools that are
/// not deferred, plus the deferred tools named in `found` exported loaded (without
/// `defer_loading`), in publication order. The other deferred tools are left out of the
/// request, without a warning: the search reaches them. `found` is typically the names of
/// every search result so far ([`tool_search::found_names`](crate::tool_search::found_names)).
///
/// ```
/// # use dsh_runtime::{ToolDefinition, schema::Schema};
/// # use dsh_providers::export::{self, Target};
/// # use std::sync::Arc;
/// let def = |name: &str, defer: bool| {
///     ToolDefinition::new(name.to_string(), "A tool.", Arc::new(Schema::closed_object(vec![])), Arc::new(Schema::json()))
///         .with_defer_loading(defer)
/// };
/// let defs = [def("search", false), def("weather", true), def("stocks", true)];
/// let e = export::export_loaded(&defs, &["weather"], Target::Anthropic);
/// let names: Vec<&str> = e.tools.iter().map(|t| t.name.as_str()).collect();
/// assert_eq!(names, ["search", "weather"]);
/// assert!(e.tool("weather").and_then(|t| t.as_object()).is_some_and(|o| !o.contains_key("defer_loading")));
/// ```
pub fn export_loaded<'a, I, S>(definitions: I, found: &[S], target: Target) -> Export
where
    I: IntoIterator<Item = &'a ToolDefinition>,
    S: AsRef<str>,
{
    let loaded: Vec<ToolDefinition> = definitions
        .into_iter()
        .filter(|d| !d.defer_loading || found.iter().any(|n| n.as_ref() == d.name.as_ref()))
        .map(|d| d.clone().with_defer_loading(false))
        .collect();
    export(&loaded, target)
}

/// The key a non-object MCP output is wrapped under for revision 2025-11-25.
pub const MCP_WRAP_KEY: &str = "result";

/// Whether the 2025-11-25 MCP export wraps this output schema as `{"result": …}` (it
/// does when the root is not an object node).
pub fn mcp_output_is_wrapped(output: &Schema, target: Target) -> bool {
    target == Target::Mcp2025_11_25 && !matches!(output.kind, Kind::Object(_))
}

/// The MCP `structuredContent` for a tool's canonical value, conforming to the
/// `outputSchema` the export published: wrapped as `{"result": value}` exactly when
/// [`mcp_output_is_wrapped`].
pub fn mcp_structured_content(output: &Schema, value: &Value, target: Target) -> Value {
    if mcp_output_is_wrapped(output, target) {
        let mut o = Object::new();
        o.insert(MCP_WRAP_KEY, value.clone());
        Value::Object(o)
    } else {
        value.clone()
    }
}

/// OpenAI and Anthropic: `^[a-zA-Z0-9_-]{1,64}$`.
pub(crate) fn openai_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Gemini: a letter or `_` first, then `[A-Za-z0-9_.:-]`, at most 64 characters.
pub(crate) fn gemini_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && name.len() <= 64
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'-'))
}

/// MCP (SHOULD): 1–128 characters of `[A-Za-z0-9_.-]`.
pub(crate) fn mcp_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// OpenAI strict limits per schema (Structured Outputs "Supported schemas").
const OPENAI_MAX_PROPERTIES: usize = 5000;
const OPENAI_MAX_OBJECT_DEPTH: usize = 10;
const OPENAI_MAX_ENUM_VALUES: usize = 1000;
const OPENAI_MAX_CHARS: usize = 120_000;
/// Anthropic strict budgets per request (structured-outputs page).
const ANTHROPIC_MAX_STRICT_TOOLS: usize = 20;
const ANTHROPIC_MAX_OPTIONAL: usize = 24;
const ANTHROPIC_MAX_UNIONS: usize = 16;

/// Export `definitions` for `target`. Never fails: tools that cannot be exported are
/// listed in [`Export::errors`] and left out.
pub fn export<'a, I>(definitions: I, target: Target) -> Export
where
    I: IntoIterator<Item = &'a ToolDefinition>,
{
    let mut out = Export {
        target,
        tools: Vec::new(),
        warnings: Vec::new(),
        errors: Vec::new(),
        search: None,
    };
    let mut flattened: Vec<&Namespace> = Vec::new();
    let mut deferred = false;
    let mut seen = std::collections::HashSet::new();
    let mut optional = 0usize;
    let mut unions = 0usize;
    for def in definitions {
        let name = def.name.as_ref();
        if !seen.insert(name.to_string()) {
            out.errors.push(ExportError {
                tool: Some(name.to_string()),
                path: "name".to_string(),
                reason: "a tool of this name was exported already (names must be unique)"
                    .to_string(),
            });
            continue;
        }
        let mut p = Projector::new(target.flavor(), name);
        p.mcp_header = matches!(target, Target::Mcp2025_11_25 | Target::Mcp2026_07_28);
        let entry = tool_entry(def, target, &mut p);
        let namespace = entry_namespace(def, target, &mut flattened, &mut p);
        if p.errors.is_empty() {
            optional += p.stats.optional;
            unions += p.stats.unions;
            deferred |= def.defer_loading && target.can_defer();
            out.warnings.append(&mut p.warnings);
            out.tools.push(ExportedTool {
                name: name.to_string(),
                definition: entry,
                namespace,
            });
        } else {
            out.errors.append(&mut p.errors);
        }
    }
    if target == Target::AnthropicStrict {
        anthropic_budgets(&mut out, optional, unions);
    }
    if deferred {
        out.search = provider_search_entry(target, ProviderSearch::default());
    }
    out
}

/// The namespace a tool is exported under: its own where the target has namespaces
/// (OpenAI's Responses API) and takes its name, else none, with a warning (once per
/// namespace, on its first tool, for a target without namespaces; `flattened` holds
/// those warned of).
fn entry_namespace<'d>(
    def: &'d ToolDefinition,
    target: Target,
    flattened: &mut Vec<&'d Namespace>,
    p: &mut Projector<'_>,
) -> Option<Namespace> {
    let ns = def.namespace.as_ref()?;
    let namespaces = matches!(
        target,
        Target::OpenAiResponses | Target::OpenAiResponsesStrict
    );
    if !namespaces {
        if !flattened.contains(&ns) {
            flattened.push(ns);
            p.warn(
                "namespace",
                format!(
                    "{target} has no namespaces: the tools of namespace `{}` are exported at the top level, without its description",
                    ns.name()
                ),
            );
        }
        None
    } else if !openai_name(ns.name()) {
        p.warn(
            "namespace",
            format!(
                "namespace `{}` is exported at the top level: OpenAI requires namespace names matching ^[a-zA-Z0-9_-]{{1,64}}$",
                ns.name()
            ),
        );
        None
    } else {
        Some(ns.clone())
    }
}

/// Anthropic strict mode's per-request budgets, an error each one exceeded.
fn anthropic_budgets(out: &mut Export, optional: usize, unions: usize) {
    let budgets = [
        (out.tools.len(), ANTHROPIC_MAX_STRICT_TOOLS, "strict tools"),
        (
            optional,
            ANTHROPIC_MAX_OPTIONAL,
            "optional properties across strict tools",
        ),
        (
            unions,
            ANTHROPIC_MAX_UNIONS,
            "union-typed properties across strict tools",
        ),
    ];
    for (count, limit, what) in budgets {
        if count > limit {
            out.errors.push(ExportError {
                tool: None,
                path: String::new(),
                reason: format!(
                    "{count} {what}; Anthropic allows at most {limit} per request (split the tools across requests or export them without strict)"
                ),
            });
        }
    }
}

/// The description. Where the target has no examples field (every target but
/// Anthropic's), the input examples are appended as `Examples: {..}; {..}`, with a
/// warning.
fn insert_description(o: &mut Object, def: &ToolDefinition, target: Target, p: &mut Projector<'_>) {
    let mut text = def.description.to_string();
    if !def.input_examples.is_empty() && !has_examples_field(target) {
        let shown: Vec<String> = def.input_examples.iter().map(Value::to_string).collect();
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str("Examples: ");
        text.push_str(&shown.join("; "));
        p.warn(
            "input_examples",
            format!(
                "{} has no input examples field: {} appended to the description",
                target,
                match shown.len() {
                    1 => "the example is".to_string(),
                    n => format!("the {n} examples are"),
                }
            ),
        );
    }
    if !text.is_empty() {
        o.insert("description", Value::from(text));
    }
}

/// Whether the target's tool entry has a field for input examples: Anthropic's
/// `input_examples` (normal and strict). Source: Anthropic SDK `ToolParam`.
fn has_examples_field(target: Target) -> bool {
    matches!(target, Target::Anthropic | Target::AnthropicStrict)
}

/// The input examples as Anthropic's `input_examples`, when there are any.
fn insert_examples(o: &mut Object, def: &ToolDefinition) {
    if !def.input_examples.is_empty() {
        o.insert("input_examples", Value::from(def.input_examples.clone()));
    }
}

/// One tool's entry in the target's shape; refusals are recorded in `p`.
fn tool_entry(def: &ToolDefinition, target: Target, p: &mut Projector<'_>) -> Value {
    check_name(def.name.as_ref(), target, p);
    let o = match target {
        Target::OpenAiResponses
        | Target::OpenAiResponsesStrict
        | Target::OpenAiChat
        | Target::OpenAiChatStrict => openai_entry(def, target, p),
        Target::Anthropic | Target::AnthropicStrict => anthropic_entry(def, target, p),
        Target::GeminiJsonSchema => gemini_json_entry(def, target, p),
        Target::GeminiOpenApi => gemini_openapi_entry(def, target, p),
        Target::Mcp2025_11_25 | Target::Mcp2026_07_28 => mcp_entry(def, target, p),
    };
    finish(def, target, p, o)
}

/// Fails (or, for MCP, warns) when the tool's name is outside the target's rule.
fn check_name(name: &str, target: Target, p: &mut Projector<'_>) {
    let name_ok = match target {
        Target::GeminiJsonSchema | Target::GeminiOpenApi => gemini_name(name),
        Target::Mcp2025_11_25 | Target::Mcp2026_07_28 => {
            if !mcp_name(name) {
                p.warn(
                    "name",
                    "the name is outside MCP's recommended 1-128 characters of [A-Za-z0-9_.-]; some clients may refuse the tool",
                );
            }
            true
        }
        _ => openai_name(name),
    };
    if !name_ok {
        let rule = match target {
            Target::GeminiJsonSchema | Target::GeminiOpenApi => {
                "a letter or _ first, then [A-Za-z0-9_.:-], at most 64 characters"
            }
            _ => "^[a-zA-Z0-9_-]{1,64}$",
        };
        p.fail(
            "name",
            format!("the provider requires tool names matching {rule}"),
        );
    }
}

/// The entry of OpenAI's Responses (flat) and Chat Completions (under `function`) APIs.
fn openai_entry(def: &ToolDefinition, target: Target, p: &mut Projector<'_>) -> Object {
    let mut o = Object::new();
    let params = parameters(def, target, p);
    if p.flavor == Flavor::OpenAiStrict {
        openai_limits(p);
    }
    let mut f = Object::new();
    f.insert("name", Value::from(def.name.as_ref()));
    insert_description(&mut f, def, target, p);
    f.insert("parameters", params);
    f.insert("strict", Value::Bool(target.is_strict()));
    o.insert("type", Value::from("function"));
    if matches!(target, Target::OpenAiChat | Target::OpenAiChatStrict) {
        o.insert("function", Value::Object(f));
    } else {
        for (k, v) in f {
            o.insert(k, v);
        }
        if def.defer_loading {
            o.insert("defer_loading", Value::Bool(true));
        }
    }
    o
}

/// The entry of Anthropic's Messages API (normal and strict).
fn anthropic_entry(def: &ToolDefinition, target: Target, p: &mut Projector<'_>) -> Object {
    let mut o = Object::new();
    o.insert("name", Value::from(def.name.as_ref()));
    insert_description(&mut o, def, target, p);
    o.insert("input_schema", parameters(def, target, p));
    insert_examples(&mut o, def);
    if target == Target::AnthropicStrict {
        o.insert("strict", Value::Bool(true));
    }
    if def.defer_loading {
        o.insert("defer_loading", Value::Bool(true));
    }
    o
}

/// The entry of Gemini's function declarations with `parametersJsonSchema`.
fn gemini_json_entry(def: &ToolDefinition, target: Target, p: &mut Projector<'_>) -> Object {
    let mut o = Object::new();
    o.insert("name", Value::from(def.name.as_ref()));
    insert_description(&mut o, def, target, p);
    o.insert("parametersJsonSchema", parameters(def, target, p));
    o
}

/// The entry of Gemini's function declarations with OpenAPI `parameters`.
fn gemini_openapi_entry(def: &ToolDefinition, target: Target, p: &mut Projector<'_>) -> Object {
    let mut o = Object::new();
    o.insert("name", Value::from(def.name.as_ref()));
    insert_description(&mut o, def, target, p);
    let params = parameters(def, target, p);
    // A tool without parameters omits `parameters` (Gemini refuses an OBJECT
    // without properties).
    let empty = match &def.verbatim_parameters {
        Some(schema) => verbatim::has_no_properties(schema),
        None => def
            .parameters
            .as_object()
            .is_some_and(|r| r.properties.is_empty()),
    };
    if !empty {
        o.insert("parameters", params);
    }
    o
}

/// The entry of MCP's `tools/list` (2025-11-25 and 2026-07-28).
fn mcp_entry(def: &ToolDefinition, target: Target, p: &mut Projector<'_>) -> Object {
    let mut o = Object::new();
    o.insert("name", Value::from(def.name.as_ref()));
    if let Some(t) = &def.title {
        o.insert("title", Value::from(t.as_ref()));
    }
    insert_description(&mut o, def, target, p);
    o.insert("inputSchema", parameters(def, target, p));
    o.insert("outputSchema", mcp_output_schema(def, target, p));
    o.insert("annotations", mcp_annotations(def));
    o
}

/// An MCP entry's `outputSchema`: wrapped as `{"result": …}` for 2025-11-25 when its
/// root is not an object.
fn mcp_output_schema(def: &ToolDefinition, target: Target, p: &mut Projector<'_>) -> Value {
    let wrapped = mcp_output_is_wrapped(&def.output, target);
    if let Some(schema) = &def.verbatim_output {
        // The document as written (wrapped for 2025-11-25 when its root is not
        // an object, see `verbatim`).
        if wrapped {
            p.warn(
                "output",
                format!(
                    "an output whose root is not an object is wrapped as {{\"{MCP_WRAP_KEY}\": …}} (2025-11-25 requires an object outputSchema); structuredContent is wrapped the same way"
                ),
            );
        }
        return verbatim::mcp_output(schema, wrapped, MCP_WRAP_KEY);
    }
    let output = p.value(&def.output, "output");
    if !wrapped {
        return output;
    }
    p.warn(
        "output",
        format!(
            "{} output is wrapped as {{\"{MCP_WRAP_KEY}\": …}} (2025-11-25 requires an object outputSchema); structuredContent is wrapped the same way",
            match def.output.kind_name() {
                k @ ("array" | "integer" | "object" | "oneOf") => format!("an {k}"),
                k => format!("a {k}"),
            }
        ),
    );
    let mut props = Object::new();
    props.insert(MCP_WRAP_KEY, output);
    let mut w = Object::new();
    w.insert("type", Value::from("object"));
    w.insert("additionalProperties", Value::Bool(false));
    w.insert("properties", Value::Object(props));
    w.insert("required", Value::from(vec![Value::from(MCP_WRAP_KEY)]));
    Value::Object(w)
}

/// The parameter schema `target` takes: the definition's verbatim document when it has
/// one (see `verbatim`), else the projection of its parameter schema.
fn parameters(def: &ToolDefinition, target: Target, p: &mut Projector<'_>) -> Value {
    match &def.verbatim_parameters {
        Some(schema) => verbatim::parameters(p, schema, target),
        None => p.parameters(&def.parameters),
    }
}

/// The end of every tool entry: the warning of a deferred tool on a target that cannot
/// defer.
fn finish(def: &ToolDefinition, target: Target, p: &mut Projector<'_>, o: Object) -> Value {
    if def.defer_loading && !target.can_defer() {
        p.warn(
            "defer_loading",
            format!(
                "{target} cannot defer a tool: it is exported loaded, in every request (expose the `tool_search` tool and export only the loaded tools with `export_loaded` to keep it out)"
            ),
        );
    }
    Value::Object(o)
}

/// MCP annotations from the `#[tool]` flags. A flag that is set is published; an unset
/// one is published only where MCP's default would claim more than the author did:
/// `readOnlyHint` is always stated, `destructiveHint`, `idempotentHint` and
/// `openWorldHint` only when set, so an undeclared tool keeps MCP's conservative defaults
/// (destructive, not idempotent, open world). Source: `schema.ts` `ToolAnnotations`.
fn mcp_annotations(def: &ToolDefinition) -> Value {
    let a = def.annotations;
    let mut o = Object::new();
    if let Some(t) = &def.title {
        o.insert("title", Value::from(t.as_ref()));
    }
    o.insert("readOnlyHint", Value::Bool(a.read_only));
    if a.destructive {
        o.insert("destructiveHint", Value::Bool(true));
    } else if a.read_only {
        // A read-only tool does not modify anything, so it destroys nothing.
        o.insert("destructiveHint", Value::Bool(false));
    }
    if a.idempotent {
        o.insert("idempotentHint", Value::Bool(true));
    }
    if a.open_world {
        o.insert("openWorldHint", Value::Bool(true));
    }
    Value::Object(o)
}

fn openai_limits(p: &mut Projector<'_>) {
    let s = p.stats;
    let checks = [
        (s.properties, OPENAI_MAX_PROPERTIES, "object properties"),
        (
            s.object_depth,
            OPENAI_MAX_OBJECT_DEPTH,
            "levels of object nesting",
        ),
        (
            s.enum_values,
            OPENAI_MAX_ENUM_VALUES,
            "enum and const values",
        ),
        (
            s.chars,
            OPENAI_MAX_CHARS,
            "characters of property names and enum/const values",
        ),
    ];
    for (count, limit, what) in checks {
        if count > limit {
            p.fail(
                "parameters",
                format!("has {count} {what}; OpenAI strict allows at most {limit}"),
            );
        }
    }
}

/// How well one tool fits one target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fit {
    /// Exported exactly.
    AsIs,
    /// Exported, with this many warnings.
    WithWarnings(usize),
    /// Not exported; the first reason.
    NotAtAll(String),
}

impl fmt::Display for Fit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fit::AsIs => f.write_str("as is"),
            Fit::WithWarnings(1) => f.write_str("1 warning"),
            Fit::WithWarnings(n) => write!(f, "{n} warnings"),
            Fit::NotAtAll(_) => f.write_str("not at all"),
        }
    }
}

/// Per tool and target: as is, with warnings, or not at all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Portability {
    /// The targets, in column order.
    pub targets: Vec<Target>,
    /// One row per tool: its name and one [`Fit`] per target.
    pub rows: Vec<(String, Vec<Fit>)>,
}

impl fmt::Display for Portability {
    /// A Markdown table, then the reasons for every "not at all".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "| tool |")?;
        for t in &self.targets {
            write!(f, " {t} |")?;
        }
        write!(f, "\n| --- |")?;
        for _ in &self.targets {
            write!(f, " --- |")?;
        }
        writeln!(f)?;
        for (tool, fits) in &self.rows {
            write!(f, "| {tool} |")?;
            for fit in fits {
                write!(f, " {fit} |")?;
            }
            writeln!(f)?;
        }
        for (tool, fits) in &self.rows {
            for (t, fit) in self.targets.iter().zip(fits) {
                if let Fit::NotAtAll(reason) = fit {
                    writeln!(f, "\n- {tool} / {t}: {reason}")?;
                }
            }
        }
        Ok(())
    }
}

/// The portability report of `definitions` over `targets` (each tool exported alone, so
/// per-request budgets count that tool only).
pub fn portability(definitions: &[ToolDefinition], targets: &[Target]) -> Portability {
    let rows = definitions
        .iter()
        .map(|def| {
            let fits = targets
                .iter()
                .map(|&t| {
                    let e = export(std::slice::from_ref(def), t);
                    match e.errors.first() {
                        Some(err) => Fit::NotAtAll(err.to_string()),
                        None if e.warnings.is_empty() => Fit::AsIs,
                        None => Fit::WithWarnings(e.warnings.len()),
                    }
                })
                .collect();
            (def.name.to_string(), fits)
        })
        .collect();
    Portability {
        targets: targets.to_vec(),
        rows,
    }
}
