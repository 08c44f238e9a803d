//! Bringing the tools of a running MCP server into a [`dsh_runtime::Registry`].
//!
//! Each remote tool becomes a [`RawTool`] whose schemas are the server's, read through
//! the registry's raw JSON Schema import, so calls pass the same pipeline as local tools
//! (validation against the published schema, policy, guards, timeouts, observers) before
//! they are forwarded. A tool whose schema is outside the vocabulary is not imported: it
//! is reported with `UNSUPPORTED_SCHEMA` and every violation, and the others still are.
//!
//! Before that import, three spellings that mean the same in JSON Schema 2020-12 are
//! brought into the vocabulary's form, since nearly every server emits them: a root
//! `$schema` naming draft 2020-12, 2019-09 or 07 is dropped (MCP's dialect is 2020-12,
//! and these drafts agree on every keyword of the vocabulary); `format` is dropped (an
//! annotation, never asserted by default in 2020-12); and an object node without
//! `additionalProperties` states the JSON Schema default, `true`. Nothing else is
//! rewritten: `anyOf`, `$ref`, `minLength` and the like stay violations.
//!
//! The canonical value of an imported call is the server's `structuredContent` when the
//! tool publishes an output schema, and otherwise the result's `content` array as the
//! protocol encodes it (rendered back to text and image blocks). Served again by a
//! dsh-mcp server, an imported tool keeps its server's hints, and one without an output
//! schema publishes none either and sends its content blocks as they came, without
//! `structuredContent` (see [`crate::definition`]). An output schema that is
//! exactly the wrapping a dsh-mcp server publishes for a non-object output
//! (`{"type":"object","properties":{"result":S},"required":["result"],"additionalProperties":false}`
//! with `S` not an object schema, see [`crate::definition`]) is imported as `S`, and the
//! value is taken out of `{"result": …}`; an object output that is not such a wrapping
//! (its `result` an object) is imported as it is. A result with `isError: true` fails with
//! code `MCP_TOOL_ERROR` and the result's text (a leading `Error: ` taken off, since the
//! registry words every failure so); a protocol or transport error fails with
//! `MCP_REQUEST_FAILED`. Text blocks marked as contexts
//! ([`CONTEXT_META_KEY`], e.g. the served registry's
//! note on arguments it ignored) become contexts of the imported result, not content.

use std::fmt;

use dsh_runtime::json::Value as JsonValue;
use dsh_runtime::schema::SchemaError;
use dsh_runtime::{DynTool, PipelineCode, RawTool, ToolContext, ToolError, content::ContentBlock};
use dsh_runtime::{Namespace, ToolAnnotations};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, CallToolResult,
    CancelledNotificationParam, ClientRequest, JsonObject, ListToolsRequest,
    PaginatedRequestParams, ServerResult, Tool,
};
use rmcp::service::{PeerRequestOptions, ServiceError};
use rmcp::{Peer, RoleClient};
use serde_json::{Value, json};

use crate::client::relay::{self, ClientRelay};
use crate::definition::{CONTEXT_META_KEY, Imported as ImportedTool, RESULT_KEY};

/// The code of an imported call whose result had `isError: true`.
pub const MCP_TOOL_ERROR: &str = "MCP_TOOL_ERROR";
/// The code of an imported call the server answered with an error, or that could not be
/// sent.
pub const MCP_REQUEST_FAILED: &str = "MCP_REQUEST_FAILED";

#[cfg(feature = "http")]
pub use crate::client::connect_http;
pub use crate::client::{ConnectError, McpClient, connect_command};

/// What [`import`] brought in.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Imported {
    /// The imported tools, in the server's order, ready to register.
    pub tools: Vec<DynTool>,
    /// The tools left out, with why.
    pub rejected: Vec<Rejected>,
}

/// A remote tool that was not imported because a schema is outside the vocabulary.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Rejected {
    /// The remote tool's name.
    pub name: String,
    /// Every violation of its `inputSchema`, if any.
    pub input: Option<SchemaError>,
    /// Every violation of its `outputSchema`, if any.
    pub output: Option<SchemaError>,
}

impl Rejected {
    /// Always [`PipelineCode::UnsupportedSchema`].
    pub fn code(&self) -> PipelineCode {
        PipelineCode::UnsupportedSchema
    }
}

impl fmt::Display for Rejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tool {:?} not imported ({}): ", self.name, self.code())?;
        let parts: Vec<String> = [("inputSchema", &self.input), ("outputSchema", &self.output)]
            .into_iter()
            .filter_map(|(label, e)| e.as_ref().map(|e| format!("{label}: {e}")))
            .collect();
        f.write_str(&parts.join("; "))
    }
}

impl std::error::Error for Rejected {}

/// How a server's tools are imported: settings that apply to every tool of the server.
///
/// A large server is best imported deferred and grouped: its tools stay out of a model's
/// first request (Anthropic and OpenAI Responses load them through tool search; elsewhere
/// the built-in [`dsh_providers::tool_search`] tool finds them), and OpenAI Responses shows
/// the server as one namespace entry until its tools are needed.
///
/// ```
/// # use dsh_mcp::ImportOptions;
/// # use dsh_runtime::Namespace;
/// let options = ImportOptions::new()
///     .defer_loading(true)
///     .namespace(Namespace::new("tracker", "Issue tracker: search, read and file issues."));
/// # let _ = options;
/// ```
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct ImportOptions {
    /// Mark every imported tool deferred ([`dsh_runtime::ToolDefinition::defer_loading`]).
    pub defer_loading: bool,
    /// Put every imported tool in this namespace
    /// ([`dsh_runtime::ToolDefinition::namespace`]).
    pub namespace: Option<Namespace>,
}

impl ImportOptions {
    /// The defaults: tools loaded, no namespace.
    pub fn new() -> Self {
        ImportOptions::default()
    }

    /// Set [`ImportOptions::defer_loading`].
    pub fn defer_loading(mut self, defer: bool) -> Self {
        self.defer_loading = defer;
        self
    }

    /// Set [`ImportOptions::namespace`].
    pub fn namespace(mut self, namespace: Namespace) -> Self {
        self.namespace = Some(namespace);
        self
    }
}

/// Import every tool `client` lists (following pagination).
///
/// The server's requests during a call are not relayed to the call's caller this way
/// (a peer does not carry the client's relay): prefer [`import_from`].
///
/// # Errors
///
/// When listing the tools fails; schema problems are reported per tool in
/// [`Imported::rejected`].
pub async fn import(client: &Peer<RoleClient>) -> Result<Imported, ServiceError> {
    import_with(client, &ImportOptions::new()).await
}

/// [`import`] with options for every tool of the server.
///
/// # Errors
///
/// As [`import`].
pub async fn import_with(
    client: &Peer<RoleClient>,
    options: &ImportOptions,
) -> Result<Imported, ServiceError> {
    let tools = client.list_all_tools().await?;
    Ok(import_tools_with(client, tools, options))
}

/// Import every tool of a server connected with a
/// [`ClientBuilder`](crate::ClientBuilder) (or [`connect_command`],
/// [`connect_http`]): what the server asks during a call (forms, sampling, roots), its
/// logs and its progress reach the caller of the imported call (see
/// [`ClientRelay`](crate::ClientRelay)).
///
/// # Errors
///
/// As [`import`].
pub async fn import_from(
    client: &McpClient,
    options: &ImportOptions,
) -> Result<Imported, ServiceError> {
    let tools = list_tools(client.peer()).await?;
    Ok(import_tools_from(
        client.peer(),
        Some(client.service()),
        tools,
        options,
    ))
}

/// Every tool `peer` lists, following pagination. Each `tools/list` carries the span
/// current here as its client span's parent (the connection's transport opens it, see
/// `client::trace`): rmcp's own listing would leave it to the connection's span.
async fn list_tools(peer: &Peer<RoleClient>) -> Result<Vec<Tool>, ServiceError> {
    let parent = crate::client::trace::ParentSpan(tracing::Span::current());
    let mut tools = Vec::new();
    let mut cursor = None;
    loop {
        let mut request =
            ListToolsRequest::with_param(PaginatedRequestParams::default().with_cursor(cursor));
        request.extensions.insert(parent.clone());
        match peer
            .send_request(ClientRequest::ListToolsRequest(request))
            .await?
        {
            ServerResult::ListToolsResult(page) => {
                tools.extend(page.tools);
                cursor = page.next_cursor;
            }
            _ => return Err(ServiceError::UnexpectedResponse),
        }
        if cursor.is_none() {
            return Ok(tools);
        }
    }
}

/// Import these tools (already listed) of `client`.
pub fn import_tools(client: &Peer<RoleClient>, tools: Vec<Tool>) -> Imported {
    import_tools_with(client, tools, &ImportOptions::new())
}

/// [`import_tools`] with options for every tool.
pub fn import_tools_with(
    client: &Peer<RoleClient>,
    tools: Vec<Tool>,
    options: &ImportOptions,
) -> Imported {
    import_tools_from(client, None, tools, options)
}

fn import_tools_from(
    client: &Peer<RoleClient>,
    relay: Option<&ClientRelay>,
    tools: Vec<Tool>,
    options: &ImportOptions,
) -> Imported {
    let mut out = Imported::default();
    for tool in tools {
        match import_tool(client, relay, tool, options) {
            Ok(tool) => out.tools.push(tool),
            Err(rejected) => out.rejected.push(rejected),
        }
    }
    out
}

fn import_tool(
    client: &Peer<RoleClient>,
    relay: Option<&ClientRelay>,
    tool: Tool,
    options: &ImportOptions,
) -> Result<DynTool, Rejected> {
    let name = tool.name.to_string();
    let parameters = to_lossless(&normalized(&tool.input_schema));
    let structured = tool.output_schema.is_some();
    let wrapped = tool.output_schema.as_deref().and_then(wrapped_output);
    let unwrap = wrapped.is_some();
    let output = match (wrapped, &tool.output_schema) {
        (Some(inner), _) => to_lossless(&normalized(inner)),
        (None, Some(schema)) => to_lossless(&normalized(schema)),
        // Without an output schema the value is the content array.
        (None, None) => to_lossless(&json!({"type": "array"})),
    };
    let input_error = dsh_runtime::schema::Schema::parameters_from_json_schema(&parameters).err();
    let output_error = dsh_runtime::schema::Schema::from_json_schema(&output).err();
    if input_error.is_some() || output_error.is_some() {
        return Err(Rejected {
            name,
            input: input_error,
            output: output_error,
        });
    }
    let remote = Remote {
        peer: client.clone(),
        relay: relay.cloned(),
        name: tool.name.clone(),
        structured,
        unwrap,
    };
    let handler = move |args: JsonValue, cx: ToolContext| {
        let remote = remote.clone();
        async move { remote.forward(&args, &cx).await }
    };
    let description = tool.description.as_deref().unwrap_or("").to_string();
    let raw = RawTool::new(name.clone(), description, &parameters, &output, handler).map_err(
        // Unreachable after the checks above; report it the same way.
        |e| Rejected {
            name,
            input: Some(e),
            output: None,
        },
    )?;
    let hints = tool.annotations.unwrap_or_default();
    let annotations = imported_annotations(&hints);
    let mut raw = raw
        .with_annotations(annotations)
        .with_concurrency_safe(annotations.read_only)
        .with_defer_loading(options.defer_loading)
        .with_namespace(options.namespace.clone());
    if !structured {
        raw = raw.with_render(|_args, value| Ok(render_content(value)));
    }
    // Re-served with the server's hints, and without an output schema where it had none.
    Ok(DynTool::new(ImportedTool {
        tool: raw,
        structured,
        hints,
    }))
}

/// The registry's hints for a server's: each as given, an absent one the protocol's
/// default. `destructiveHint` means something only for a tool that is not read-only, so
/// a read-only tool is not destructive whatever the server said.
fn imported_annotations(hints: &rmcp::model::ToolAnnotations) -> ToolAnnotations {
    let mut annotations = ToolAnnotations::default();
    annotations.read_only = hints.read_only_hint.unwrap_or(false);
    annotations.destructive = !annotations.read_only && hints.destructive_hint.unwrap_or(true);
    annotations.idempotent = hints.idempotent_hint.unwrap_or(false);
    annotations.open_world = hints.open_world_hint.unwrap_or(true);
    annotations
}

/// The rounds of `InputRequiredResult` one imported call may go through (2026-07-28).
const MAX_INPUT_ROUNDS: usize = 16;

/// One imported tool: where and how its calls are forwarded.
#[derive(Clone)]
struct Remote {
    peer: Peer<RoleClient>,
    relay: Option<ClientRelay>,
    name: std::borrow::Cow<'static, str>,
    structured: bool,
    unwrap: bool,
}

impl Remote {
    async fn forward(&self, args: &JsonValue, cx: &ToolContext) -> Result<JsonValue, ToolError> {
        let arguments = match serde_json::to_value(args) {
            Ok(Value::Object(o)) => o,
            Ok(_) => JsonObject::new(),
            Err(e) => return Err(ToolError::with_code(MCP_REQUEST_FAILED, e.to_string())),
        };
        let mut params = CallToolRequestParams::new(self.name.clone()).with_arguments(arguments);
        let mut rounds = 0;
        let result = loop {
            let protocol = || {
                let info = self.peer.peer_info()?;
                Some(info.protocol_version.to_string())
            };
            let traced = crate::server::trace::client_call(
                params.clone(),
                cx.execution().span(),
                protocol,
                |p, span| self.send(p, cx, span),
            );
            match traced.await? {
                CallToolResponse::Complete(result) => break result,
                CallToolResponse::InputRequired(input) => {
                    rounds += 1;
                    if rounds > MAX_INPUT_ROUNDS {
                        return Err(ToolError::with_code(
                            MCP_REQUEST_FAILED,
                            format!(
                                "the server asked for input more than {MAX_INPUT_ROUNDS} times"
                            ),
                        ));
                    }
                    let requests = input.input_requests.unwrap_or_default();
                    let responses = match &self.relay {
                        Some(relay) => relay.answer_input_requests(cx, requests).await,
                        None => relay::answer_all(cx, requests, &|_| true).await,
                    }
                    .map_err(|e| ToolError::with_code(e.code(), e.to_string()))?;
                    params.input_responses = (!responses.is_empty()).then_some(responses);
                    params.request_state = input.request_state;
                }
                _ => {
                    return Err(ToolError::with_code(
                        MCP_REQUEST_FAILED,
                        "the server started a task, which imported tools do not support",
                    ));
                }
            }
        };
        self.read_result(result, cx)
    }

    /// Send one `tools/call`, the call registered with the relay while it is open;
    /// cancelling the call sends `notifications/cancelled`. Its id goes on `span`, the
    /// client span of the request if one was opened.
    async fn send(
        &self,
        params: CallToolRequestParams,
        cx: &ToolContext,
        span: tracing::Span,
    ) -> Result<CallToolResponse, ToolError> {
        let failed = |e: ServiceError| ToolError::with_code(MCP_REQUEST_FAILED, e.to_string());
        let entered = self.relay.as_ref().map(|r| r.enter(cx));
        let mut options = PeerRequestOptions::no_options();
        options.timeout = self.relay.as_ref().and_then(ClientRelay::request_timeout);
        let mut request = CallToolRequest::new(params);
        // Its span is `client_call`'s (or the registry's): the transport opens none.
        request.extensions.insert(crate::client::trace::Traced);
        let request = ClientRequest::CallToolRequest(request);
        let handle = self
            .peer
            .send_request_with_option(request, options)
            .await
            .map_err(failed)?;
        if let Some(entered) = &entered {
            entered.bind(handle.id.clone(), handle.progress_token.clone());
        }
        if !span.is_disabled() {
            span.record("jsonrpc.request.id", handle.id.to_string().as_str());
        }
        // Dropped before the response (the call cancelled, its future dropped), it
        // sends `notifications/cancelled`.
        let mut abandon = Abandon {
            peer: self.peer.clone(),
            id: Some(handle.id.clone()),
        };
        let response = tokio::select! {
            response = handle.await_response() => response,
            () = cx.cancellation().cancelled() => {
                return Err(ToolError::with_code(PipelineCode::Aborted, "tool call aborted"));
            }
        };
        abandon.id = None;
        let response = response.map_err(failed)?;
        match response {
            ServerResult::CallToolResult(result) => Ok(CallToolResponse::Complete(result)),
            ServerResult::InputRequiredResult(result) => {
                Ok(CallToolResponse::InputRequired(result))
            }
            ServerResult::CreateTaskResult(result) => Ok(CallToolResponse::Task(result)),
            // A result without `content` reads as an empty one.
            ServerResult::EmptyResult(_) => Ok(CallToolResponse::Complete(
                CallToolResult::success(Vec::new()),
            )),
            _ => Err(ToolError::with_code(
                MCP_REQUEST_FAILED,
                "the server answered tools/call with another kind of result",
            )),
        }
    }

    fn read_result(
        &self,
        mut result: CallToolResult,
        cx: &ToolContext,
    ) -> Result<JsonValue, ToolError> {
        // The server's contexts (e.g. which undeclared arguments it ignored) stay contexts.
        result.content.retain(|block| match context_text(block) {
            Some(text) => {
                cx.defer_context(text);
                false
            }
            None => true,
        });
        if result.is_error == Some(true) {
            let text = result_text(&result);
            // The registry prefixes the message with `Error: ` itself; a server that
            // already did (a dsh-mcp server always does) is not prefixed twice.
            let message = text.strip_prefix("Error: ").unwrap_or(&text);
            return Err(ToolError::with_code(MCP_TOOL_ERROR, message));
        }
        if self.structured {
            return structured_value(result, self.unwrap);
        }
        let content = serde_json::to_value(&result.content)
            .map_err(|e| ToolError::with_code(MCP_TOOL_ERROR, e.to_string()))?;
        Ok(to_lossless(&content))
    }
}

/// Sends `notifications/cancelled` for a request dropped before its response.
struct Abandon {
    peer: Peer<RoleClient>,
    id: Option<rmcp::model::RequestId>,
}

impl Drop for Abandon {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        let peer = self.peer.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let cancel =
                    CancelledNotificationParam::new(Some(id), Some("tool call aborted".into()));
                let _ = peer.notify_cancelled(cancel).await;
            });
        }
    }
}

/// The value of a result of a tool with an output schema.
fn structured_value(result: CallToolResult, unwrap: bool) -> Result<JsonValue, ToolError> {
    let value = match result.structured_content {
        Some(ref value) => value.clone(),
        // A server that sent no structured content: its text should be the JSON.
        None => serde_json::from_str(&result_text(&result)).map_err(|e| {
            ToolError::with_code(
                MCP_TOOL_ERROR,
                format!("the result has no structuredContent and its text is not JSON: {e}"),
            )
        })?,
    };
    if !unwrap {
        return Ok(to_lossless(&value));
    }
    match value {
        Value::Object(mut o) if o.len() == 1 && o.contains_key(RESULT_KEY) => {
            Ok(to_lossless(&o.remove(RESULT_KEY).unwrap_or(Value::Null)))
        }
        _ => Err(ToolError::with_code(
            MCP_TOOL_ERROR,
            format!(
                "the structuredContent is not wrapped as {{\"{RESULT_KEY}\": …}}, as the tool's outputSchema says"
            ),
        )),
    }
}

/// The text of a block the server marked as one of the result's contexts.
fn context_text(block: &rmcp::model::ContentBlock) -> Option<String> {
    let rmcp::model::ContentBlock::Text(text) = block else {
        return None;
    };
    let marked = text
        .meta
        .as_ref()
        .and_then(|m| m.0.get(CONTEXT_META_KEY))
        .is_some_and(|v| v == &Value::Bool(true));
    marked.then(|| text.text.clone())
}

/// The schema inside an output schema that is exactly the wrapping a dsh-mcp server
/// publishes for a non-object output (see [`crate::definition`]):
/// `{"type":"object","properties":{"result":S},"required":["result"],"additionalProperties":false}`
/// with `S` not an object schema.
fn wrapped_output(schema: &JsonObject) -> Option<&JsonObject> {
    if schema.len() != 4
        || schema.get("type") != Some(&json!("object"))
        || schema.get("additionalProperties") != Some(&Value::Bool(false))
        || schema.get("required") != Some(&json!([RESULT_KEY]))
    {
        return None;
    }
    let properties = schema.get("properties")?.as_object()?;
    if properties.len() != 1 {
        return None;
    }
    let inner = properties.get(RESULT_KEY)?.as_object()?;
    (inner.get("type") != Some(&json!("object"))).then_some(inner)
}

fn result_text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A content array (the canonical value of a tool without an output schema) as content
/// blocks: every MCP kind as it is, annotations kept (see [`crate::content`]).
fn render_content(value: &JsonValue) -> Vec<ContentBlock> {
    let blocks: Vec<rmcp::model::ContentBlock> = serde_json::to_value(value)
        .ok()
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default();
    blocks.iter().map(crate::content::from_mcp).collect()
}

/// A copy of a published schema with the equivalent spellings brought into the
/// vocabulary's form (see the module docs).
fn normalized(schema: &JsonObject) -> Value {
    let mut schema = Value::Object(schema.clone());
    if let Some(root) = schema.as_object_mut() {
        let known_dialect = root
            .get("$schema")
            .and_then(Value::as_str)
            .is_some_and(|s| {
                const DIALECTS: [&str; 3] = [
                    "json-schema.org/draft/2020-12/schema",
                    "json-schema.org/draft/2019-09/schema",
                    "json-schema.org/draft-07/schema",
                ];
                let s = s.trim_end_matches('#');
                DIALECTS
                    .iter()
                    .any(|d| s == format!("https://{d}") || s == format!("http://{d}"))
            });
        if known_dialect {
            root.remove("$schema");
        }
    }
    // Walk the schema positions of the vocabulary without recursion.
    let mut stack = vec![&mut schema];
    while let Some(node) = stack.pop() {
        let Some(o) = node.as_object_mut() else {
            continue;
        };
        o.remove("format");
        if o.get("type").and_then(Value::as_str) == Some("object")
            && !o.contains_key("additionalProperties")
        {
            o.insert("additionalProperties".to_string(), Value::Bool(true));
        }
        for (key, child) in o.iter_mut() {
            match (key.as_str(), child) {
                ("properties", Value::Object(props)) => stack.extend(props.values_mut()),
                ("items" | "additionalProperties", child @ Value::Object(_)) => stack.push(child),
                ("oneOf", Value::Array(branches)) => stack.extend(branches.iter_mut()),
                _ => {}
            }
        }
    }
    schema
}

fn to_lossless(value: &Value) -> JsonValue {
    dsh_runtime::json::to_value(value).unwrap_or(JsonValue::Null)
}
