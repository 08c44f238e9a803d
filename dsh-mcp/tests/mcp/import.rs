//! Importing the tools of an rmcp server (written with rmcp's own macros) into a
//! registry, and calling them through the pipeline: local validation against the
//! published schema, structured and content values, remote errors, policy, and
//! cancellation forwarded as `notifications/cancelled`. One tool's schema is outside the
//! vocabulary: it is rejected with every violation while the others import.

use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use dsh_mcp::{McpServer, import};

use crate::common::tools::Greet;
use dsh_runtime::hooks::{CallInfo, guard_fn};
use dsh_runtime::{PipelineCode, Registry, ToolCall, ToolError, tool};
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{ErrorData, ServerHandler, ServiceExt, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio_util::sync::CancellationToken;

static REMOTE_CALLS: AtomicUsize = AtomicUsize::new(0);
static REMOTE_CANCELLED: std::sync::LazyLock<tokio::sync::watch::Sender<bool>> =
    std::sync::LazyLock::new(|| tokio::sync::watch::Sender::new(false));

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct SumArgs {
    a: i64,
    b: i64,
}

#[derive(Serialize, JsonSchema)]
struct SumOut {
    sum: i64,
}

#[derive(Deserialize, JsonSchema)]
struct Nothing {}

/// Arguments whose published schema uses keywords outside the vocabulary.
#[derive(Deserialize)]
#[allow(dead_code)]
struct WeirdArgs {
    a: String,
}

impl JsonSchema for WeirdArgs {
    fn schema_name() -> Cow<'static, str> {
        "WeirdArgs".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "object",
            "properties": {
                "a": {"type": "string", "not": {"const": "x"}},
                "b": {"allOf": [{"type": "integer"}]}
            },
            "required": ["a"]
        })
    }
}

/// The remote server's tools (rmcp's `#[tool_handler]` builds the router from
/// `Self::tool_router()`).
#[derive(Clone)]
struct RemoteTools;

#[tool_router]
impl RemoteTools {
    /// Send the text back.
    #[rmcp::tool(annotations(read_only_hint = true))]
    async fn echo(&self, Parameters(args): Parameters<EchoArgs>) -> String {
        REMOTE_CALLS.fetch_add(1, Ordering::SeqCst);
        args.text
    }

    /// Add two integers.
    #[rmcp::tool]
    async fn sum(&self, Parameters(args): Parameters<SumArgs>) -> Json<SumOut> {
        REMOTE_CALLS.fetch_add(1, Ordering::SeqCst);
        Json(SumOut {
            sum: args.a + args.b,
        })
    }

    /// Always fail.
    #[rmcp::tool]
    async fn fail(&self, Parameters(_): Parameters<Nothing>) -> Result<CallToolResult, ErrorData> {
        REMOTE_CALLS.fetch_add(1, Ordering::SeqCst);
        Ok(CallToolResult::error(vec![ContentBlock::text(
            "the disk is full",
        )]))
    }

    /// Wait until the call is cancelled.
    #[rmcp::tool]
    async fn hold(&self, Parameters(_): Parameters<Nothing>, ct: CancellationToken) -> String {
        ct.cancelled().await;
        REMOTE_CANCELLED.send_replace(true);
        "cancelled".to_string()
    }

    /// A tool with a schema outside the vocabulary.
    #[rmcp::tool]
    async fn weird(&self, Parameters(args): Parameters<WeirdArgs>) -> String {
        args.a
    }
}

#[tool_handler]
impl ServerHandler for RemoteTools {
    fn get_info(&self) -> rmcp::model::ServerConfig {
        rmcp::model::ServerConfig::new(
            rmcp::model::ServerCapabilities::builder()
                .enable_tools()
                .build(),
        )
    }
}

async fn connect_fixture() -> dsh_mcp::McpClient {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let running = RemoteTools
            .serve(server_io)
            .await
            .expect("fixture handshake");
        let _ = running.waiting().await;
    });
    dsh_mcp::ClientBuilder::new("import-tests", "0")
        .connect(client_io)
        .await
        .expect("client handshake")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn imports_every_tool_in_the_vocabulary_and_reports_the_rest() {
    let client = connect_fixture().await;
    let imported = import(client.peer()).await.unwrap();
    let names: Vec<&str> = imported
        .tools
        .iter()
        .map(|t| t.definition().name.as_ref())
        .collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, ["echo", "fail", "hold", "sum"]);

    assert_eq!(imported.rejected.len(), 1);
    let rejected = &imported.rejected[0];
    assert_eq!(rejected.name, "weird");
    assert_eq!(rejected.code(), PipelineCode::UnsupportedSchema);
    let input = rejected.input.as_ref().expect("input schema violations");
    // Every violation, not only the first.
    assert_eq!(input.violations().len(), 2, "{input}");
    let text = rejected.to_string();
    assert!(text.starts_with("tool \"weird\" not imported (UNSUPPORTED_SCHEMA): inputSchema: unsupported JSON schema: "), "{text}");
    assert!(
        text.contains("properties.a") && text.contains("\"not\""),
        "{text}"
    );
    assert!(
        text.contains("properties.b") && text.contains("\"allOf\""),
        "{text}"
    );

    // Definitions carry the remote description and hints.
    let echo = imported
        .tools
        .iter()
        .find(|t| t.definition().name == "echo")
        .unwrap();
    assert_eq!(echo.definition().description, "Send the text back.");
    assert!(echo.definition().annotations.read_only);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn imported_tools_run_through_the_pipeline() {
    let client = connect_fixture().await;
    let imported = import(client.peer()).await.unwrap();
    let registry = Registry::new();
    let _regs: Vec<_> = imported
        .tools
        .into_iter()
        .map(|t| registry.register_dyn(t).unwrap())
        .collect();
    let _deny = registry.add_guard(guard_fn(|call: &CallInfo<'_>| {
        (call.arguments().get("text").and_then(|v| v.as_str()) == Some("forbidden"))
            .then(|| "not that text".to_string())
    }));

    // A tool without an output schema: the value is the content array.
    let r = registry
        .execute(ToolCall::new("1", "echo", r#"{"text":"hi"}"#))
        .await;
    assert!(r.is_success(), "{:?}", r.message());
    assert_eq!(r.text(), "hi");
    assert_eq!(
        serde_json::to_value(r.value().unwrap()).unwrap(),
        json!([{"type": "text", "text": "hi"}])
    );

    // With an output schema: the value is the structured content.
    let r = registry
        .execute(ToolCall::new("2", "sum", r#"{"a":2,"b":3}"#))
        .await;
    assert_eq!(
        serde_json::to_value(r.value().unwrap()).unwrap(),
        json!({"sum": 5})
    );
    assert_eq!(r.text(), r#"{"sum":5}"#);

    // Invalid arguments and policy denials never reach the server.
    let before = REMOTE_CALLS.load(Ordering::SeqCst);
    let r = registry
        .execute(ToolCall::new("3", "sum", r#"{"a":"two"}"#))
        .await;
    assert_eq!(r.error_code(), Some(PipelineCode::InvalidArgs));
    let message = r.message().unwrap();
    assert!(message.contains("a") && message.contains("b"), "{message}");
    let r = registry
        .execute(ToolCall::new("4", "echo", r#"{"text":"forbidden"}"#))
        .await;
    assert_eq!(r.message(), Some("not that text"));
    assert_eq!(REMOTE_CALLS.load(Ordering::SeqCst), before);

    // A remote error result.
    let r = registry.execute(ToolCall::new("5", "fail", "{}")).await;
    assert_eq!(r.code_str(), Some(dsh_mcp::MCP_TOOL_ERROR));
    assert_eq!(r.message(), Some("the disk is full"));
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_an_imported_call_cancels_the_remote_one() {
    let client = connect_fixture().await;
    let imported = import(client.peer()).await.unwrap();
    let registry = Registry::new();
    let hold = imported
        .tools
        .into_iter()
        .find(|t| t.definition().name == "hold")
        .unwrap();
    let _reg = registry.register_dyn(hold).unwrap();
    let mut seen = REMOTE_CANCELLED.subscribe();
    let token = CancellationToken::new();
    let call = ToolCall::new("1", "hold", "{}").with_cancellation(token.clone());
    let running = tokio::spawn({
        let registry = registry.clone();
        async move { registry.execute(call).await }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!running.is_finished());
    token.cancel();
    let r = tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("the call ends")
        .unwrap();
    assert_eq!(r.error_code(), Some(PipelineCode::Aborted));
    tokio::time::timeout(Duration::from_secs(10), seen.wait_for(|s| *s))
        .await
        .expect("the server saw notifications/cancelled")
        .unwrap();
    client.cancel().await.unwrap();
}

/// Double a number.
#[tool]
async fn double(n: i64) -> Result<i64, ToolError> {
    Ok(n * 2)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_registry_imports_back_unchanged() {
    // Round trip: serve a registry, import its tools into another one.
    let served = Registry::new();
    let _reg = served.register(Double).unwrap();
    let server = McpServer::new(served.clone());
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move { server.serve(server_io).await });
    let client = ().serve(client_io).await.unwrap();
    let imported = import(client.peer()).await.unwrap();
    assert!(imported.rejected.is_empty(), "{:?}", imported.rejected);
    let def = imported.tools[0].definition();
    // The served root is the implicit open one (no `additionalProperties`); the import
    // reads an object without the key as JSON Schema does, open, and states it.
    assert_eq!(
        def.parameters.to_json_string(),
        served
            .view()
            .get("double")
            .unwrap()
            .definition()
            .parameters
            .to_json_string()
            .replacen(
                r#""type":"object","#,
                r#""type":"object","additionalProperties":true,"#,
                1
            )
    );
    let registry = Registry::new();
    let _r = registry.register_dyn(imported.tools[0].clone()).unwrap();
    let r = registry
        .execute(ToolCall::new("1", "double", r#"{"n":21}"#))
        .await;
    // The served value is wrapped (a non-object output); the import reads the wrapping
    // from the output schema and takes it off.
    assert_eq!(serde_json::to_value(r.value().unwrap()).unwrap(), json!(42));
    assert_eq!(
        def.output.to_json_string(),
        served
            .view()
            .get("double")
            .unwrap()
            .definition()
            .output
            .to_json_string()
    );
    client.cancel().await.unwrap();
}

/// Always refuse.
#[tool]
async fn refuse() -> Result<String, ToolError> {
    Err(ToolError::new("the user rejected tool `refuse`"))
}

/// Where the object a tool answers came from.
#[derive(Serialize, Deserialize, dsh_runtime::ToolSchema)]
struct Wrapper {
    /// Not a wrapping: an object output whose one property happens to be `result`.
    result: Inner,
}

/// An inner object.
#[derive(Serialize, Deserialize, dsh_runtime::ToolSchema)]
struct Inner {
    /// A number.
    n: i64,
}

/// Answer an object with a `result` property.
#[tool]
async fn boxed() -> Result<Wrapper, ToolError> {
    Ok(Wrapper {
        result: Inner { n: 1 },
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn imported_results_keep_their_message_value_and_notes() {
    let served = Registry::new();
    let _regs = [
        served.register(Double).unwrap(),
        served.register(Greet).unwrap(),
        served.register(Refuse).unwrap(),
        served.register(Boxed).unwrap(),
    ];
    let server = McpServer::new(served.clone());
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move { server.serve(server_io).await });
    let client = ().serve(client_io).await.unwrap();
    let imported = import(client.peer()).await.unwrap();
    assert!(imported.rejected.is_empty(), "{:?}", imported.rejected);
    let registry = Registry::new();
    let _r: Vec<_> = imported
        .tools
        .iter()
        .map(|t| registry.register_dyn(t.clone()).unwrap())
        .collect();

    // A failure is prefixed once, as the served registry words it.
    let direct = served.execute(ToolCall::new("1", "refuse", "{}")).await;
    let r = registry.execute(ToolCall::new("1", "refuse", "{}")).await;
    assert!(r.is_error());
    assert_eq!(r.code_str(), Some(dsh_mcp::MCP_TOOL_ERROR));
    assert!(!r.text().contains("Error: Error:"), "{}", r.text());
    assert_eq!(r.text(), direct.text());

    // A wrapped value comes back as the served value.
    let r = registry
        .execute(ToolCall::new("2", "double", r#"{"n":4}"#))
        .await;
    assert_eq!(serde_json::to_value(r.value().unwrap()).unwrap(), json!(8));
    assert_eq!(r.text(), "8");

    // An object output with a `result` property is not a wrapping.
    let r = registry.execute(ToolCall::new("3", "boxed", "{}")).await;
    assert_eq!(
        serde_json::to_value(r.value().unwrap()).unwrap(),
        json!({"result": {"n": 1}})
    );

    // The served registry's ignored-argument note is a context of the imported result.
    let args = r#"{"name":"Ada","nmae":"x"}"#;
    let direct = served.execute(ToolCall::new("4", "greet", args)).await;
    assert_eq!(direct.contexts().len(), 1, "{direct:?}");
    let r = registry.execute(ToolCall::new("4", "greet", args)).await;
    assert!(!r.is_error(), "{}", r.text());
    assert_eq!(r.contexts(), direct.contexts());
    assert_eq!(r.text(), direct.text());
    client.cancel().await.unwrap();
}

/// An upstream server whose hints and outputs a dsh-mcp server re-serves after an import.
#[derive(Clone)]
struct Upstream;

#[tool_router]
impl Upstream {
    /// Look at something: a text and an image, no output schema. Read-only, with a
    /// `destructiveHint` that means nothing next to it.
    #[rmcp::tool(annotations(read_only_hint = true, destructive_hint = true))]
    async fn look(&self, Parameters(_): Parameters<Nothing>) -> Result<CallToolResult, ErrorData> {
        Ok(CallToolResult::success(vec![
            ContentBlock::text("a red square"),
            ContentBlock::image("iVBORw0KGgo=", "image/png"),
        ]))
    }

    /// Add two integers (an output schema).
    #[rmcp::tool(annotations(
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn add(&self, Parameters(args): Parameters<SumArgs>) -> Json<SumOut> {
        Json(SumOut {
            sum: args.a + args.b,
        })
    }
}

#[tool_handler]
impl ServerHandler for Upstream {
    fn get_info(&self) -> rmcp::model::ServerConfig {
        rmcp::model::ServerConfig::new(
            rmcp::model::ServerCapabilities::builder()
                .enable_tools()
                .build(),
        )
    }
}

/// The first hop: `Upstream` imported into a registry served by dsh-mcp, and a client of
/// that server (with the upstream client, which must stay open).
async fn reserved_upstream() -> (dsh_mcp::McpClient, dsh_mcp::McpClient) {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let running = Upstream.serve(server_io).await.expect("upstream handshake");
        let _ = running.waiting().await;
    });
    let upstream = dsh_mcp::ClientBuilder::new("hop-1", "0")
        .connect(client_io)
        .await
        .expect("upstream client handshake");
    let imported = dsh_mcp::import_from(&upstream, &dsh_mcp::ImportOptions::new())
        .await
        .unwrap();
    assert!(imported.rejected.is_empty(), "{:?}", imported.rejected);
    let middle = Registry::new();
    for tool in imported.tools {
        // Registered until unregistered: the handle may go.
        let _ = middle.register_dyn(tool).unwrap();
    }
    let server = McpServer::new(middle);
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move { server.serve(server_io).await });
    let reserved = dsh_mcp::ClientBuilder::new("hop-2", "0")
        .connect(client_io)
        .await
        .expect("re-served client handshake");
    (upstream, reserved)
}

fn listed<'a>(tools: &'a [rmcp::model::Tool], name: &str) -> &'a rmcp::model::Tool {
    tools
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("{name} is listed"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_re_served_import_keeps_content_as_content_and_schemas_as_published() {
    let (upstream, reserved) = reserved_upstream().await;
    let tools = reserved.peer().list_all_tools().await.unwrap();

    // No output schema upstream: none re-served, and no structuredContent invented.
    let look = listed(&tools, "look");
    assert_eq!(look.output_schema, None);
    let answer = reserved
        .peer()
        .call_tool(rmcp::model::CallToolRequestParams::new("look"))
        .await
        .unwrap();
    assert_eq!(answer.structured_content, None);
    assert_eq!(
        serde_json::to_value(&answer.content).unwrap(),
        json!([
            {"type": "text", "text": "a red square"},
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
        ])
    );
    // An output schema upstream: re-served, with its structured content.
    let add = listed(&tools, "add");
    let schema = serde_json::Value::Object((*add.output_schema.clone().unwrap()).clone());
    assert_eq!(schema["properties"]["sum"]["type"], "integer", "{schema}");
    let answer = reserved
        .peer()
        .call_tool(
            rmcp::model::CallToolRequestParams::new("add")
                .with_arguments(json!({"a": 2, "b": 3}).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    assert_eq!(answer.structured_content, Some(json!({"sum": 5})));

    // The second hop reads the text as text and the value as the first hop did.
    let imported = dsh_mcp::import_from(&reserved, &dsh_mcp::ImportOptions::new())
        .await
        .unwrap();
    assert!(imported.rejected.is_empty(), "{:?}", imported.rejected);
    let last = Registry::new();
    let _regs: Vec<_> = imported
        .tools
        .into_iter()
        .map(|t| last.register_dyn(t).unwrap())
        .collect();
    let r = last.execute(ToolCall::new("1", "look", "{}")).await;
    assert!(r.is_success(), "{:?}", r.message());
    assert_eq!(r.text(), "a red square");
    let content = serde_json::to_value(r.content()).unwrap();
    assert_eq!(content[1]["type"], "image", "{content}");
    assert_eq!(
        serde_json::to_value(r.value().unwrap()).unwrap(),
        json!([
            {"type": "text", "text": "a red square"},
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
        ])
    );
    let r = last
        .execute(ToolCall::new("2", "add", r#"{"a":2,"b":3}"#))
        .await;
    assert_eq!(
        serde_json::to_value(r.value().unwrap()).unwrap(),
        json!({"sum": 5})
    );
    reserved.cancel().await.unwrap();
    upstream.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_re_served_import_keeps_the_upstream_hints_consistent() {
    let (upstream, reserved) = reserved_upstream().await;
    let tools = reserved.peer().list_all_tools().await.unwrap();

    // Read-only upstream: read-only, and no destructive hint (the upstream's
    // `destructiveHint: true` means nothing next to `readOnlyHint: true`).
    let look = listed(&tools, "look").annotations.clone().unwrap();
    assert_eq!(look.read_only_hint, Some(true));
    assert_eq!(look.destructive_hint, None, "{look:?}");

    // Every hint of a tool that is not read-only as the upstream gave it, `false`s
    // included (absent, they would read as the protocol's defaults).
    let add = listed(&tools, "add").annotations.clone().unwrap();
    assert_eq!(add.read_only_hint, Some(false));
    assert_eq!(add.destructive_hint, Some(false));
    assert_eq!(add.idempotent_hint, Some(true));
    assert_eq!(add.open_world_hint, Some(false));

    // The registry's own view agrees: read-only is not destructive.
    let imported = dsh_mcp::import_from(&reserved, &dsh_mcp::ImportOptions::new())
        .await
        .unwrap();
    let look = imported
        .tools
        .iter()
        .find(|t| t.definition().name == "look")
        .unwrap();
    assert!(look.definition().annotations.read_only);
    assert!(!look.definition().annotations.destructive);
    reserved.cancel().await.unwrap();
    upstream.cancel().await.unwrap();
}
