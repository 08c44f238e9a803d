//! Every MCP content block kind on the wire: a tool returning text, an image, audio,
//! embedded text and blob resources and a resource link, each with annotations, is
//! answered with exactly MCP's JSON over the byte stream (as stdio) and over HTTP; an
//! invalid block goes out as a text block naming the problem; and an imported server's
//! blocks of every kind arrive in the registry unchanged.

use dsh_mcp::{HttpOptions, import, serve_http};
use dsh_runtime::content::{Annotations, ContentBlock, ResourceLink, Role};
use dsh_runtime::{Registry, ToolCall, ToolContext, ToolError, tool};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{ErrorData, ServerHandler, ServiceExt, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::common::http::HttpClient;
use crate::common::rpc::{Rpc, tools_call};
use crate::common::tools::Toolset;
use crate::common::wire::Revision;

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";

/// One block of every kind, each annotated differently.
fn every_kind() -> Vec<ContentBlock> {
    vec![
        ContentBlock::text("all kinds").with_annotations(Annotations::new().with_priority(0.5)),
        ContentBlock::image(PNG, "image/png")
            .with_annotations(Annotations::new().with_audience([Role::User])),
        ContentBlock::audio(WAV, "audio/wav")
            .with_annotations(Annotations::new().with_last_modified("2025-05-03T14:30:00Z")),
        ContentBlock::resource_text("file:///project/src/main.rs", "fn main() {}")
            .with_mime_type("text/x-rust")
            .with_annotations(
                Annotations::new()
                    .with_audience([Role::User, Role::Assistant])
                    .with_priority(0.7),
            ),
        ContentBlock::resource_blob("file:///project/logo.png", PNG, "image/png"),
        ResourceLink::new("file:///project/README.md", "README.md")
            .with_title("Read me")
            .with_description("How to build")
            .with_mime_type("text/markdown")
            .with_size(2048)
            .with_annotations(Annotations::new().with_priority(0.25))
            .into(),
    ]
}

/// The same blocks as MCP's JSON.
fn every_kind_json() -> Value {
    json!([
        {"type": "text", "text": "all kinds", "annotations": {"priority": 0.5}},
        {"type": "image", "data": PNG, "mimeType": "image/png", "annotations": {"audience": ["user"]}},
        {"type": "audio", "data": WAV, "mimeType": "audio/wav", "annotations": {"lastModified": "2025-05-03T14:30:00Z"}},
        {"type": "resource", "resource": {"uri": "file:///project/src/main.rs", "mimeType": "text/x-rust", "text": "fn main() {}"},
         "annotations": {"audience": ["user", "assistant"], "priority": 0.7}},
        {"type": "resource", "resource": {"uri": "file:///project/logo.png", "mimeType": "image/png", "blob": PNG}},
        {"type": "resource_link", "uri": "file:///project/README.md", "name": "README.md", "title": "Read me",
         "description": "How to build", "mimeType": "text/markdown", "size": 2048, "annotations": {"priority": 0.25}},
    ])
}

/// Show one block of every kind.
#[tool(read_only, render = show_every_kind)]
async fn gallery() -> String {
    "unused: the content is rendered".to_string()
}

fn show_every_kind(_: &GalleryArgs, _: &String) -> Vec<ContentBlock> {
    every_kind()
}

/// Attach audio that is not base64, after the text.
#[tool(read_only)]
async fn broken_audio(cx: ToolContext) -> String {
    cx.attach_content(ContentBlock::audio("UklG RiQ=", "audio/wav"));
    "recorded".to_string()
}

fn tools() -> Toolset {
    Toolset::new().with(Gallery).with(BrokenAudio)
}

/// `tools/call` of `name` on `client`: the result as it crossed the wire.
async fn call(client: &mut Rpc, id: u64, name: &str) -> Value {
    let answer = client.call(tools_call(id, name, json!({}))).await;
    assert!(answer.get("error").is_none(), "{answer}");
    answer["result"].clone()
}

async fn check_the_wire(client: &mut Rpc) {
    let result = call(client, 7, "gallery").await;
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(result["content"], every_kind_json());
    let result = call(client, 8, "broken_audio").await;
    assert_eq!(
        result["content"],
        json!([
            {"type": "text", "text": "recorded"},
            {"type": "text", "text": "[audio content omitted: audio `data` is not base64: unexpected ' ' at offset 4]"},
        ])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_crosses_the_byte_stream_as_mcp_json() {
    let tools = tools();
    let mut client = Rpc::stream(&tools.server());
    client.initialize(Revision::V2025_11_25, json!({})).await;
    check_the_wire(&mut client).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_crosses_http_as_mcp_json() {
    let tools = tools();
    let http = serve_http(&tools.server(), HttpOptions::default())
        .await
        .unwrap();
    let mut client = Rpc::http(HttpClient::new(http.url()).revision(Revision::V2025_11_25));
    client.initialize(Revision::V2025_11_25, json!({})).await;
    check_the_wire(&mut client).await;
    http.shutdown().await.unwrap();
}

#[derive(Deserialize, JsonSchema)]
struct Nothing {}

/// An rmcp server whose tool answers with every kind (and no output schema).
#[derive(Clone)]
struct Remote;

#[tool_router]
impl Remote {
    /// Every kind of block.
    #[rmcp::tool]
    async fn blocks(
        &self,
        Parameters(_): Parameters<Nothing>,
    ) -> Result<CallToolResult, ErrorData> {
        let content = serde_json::from_value(every_kind_json())
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(CallToolResult::success(content))
    }
}

#[tool_handler]
impl ServerHandler for Remote {}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_imported_servers_blocks_arrive_unchanged() {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = Remote.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let client = ().serve(client_io).await.unwrap();
    let imported = import(client.peer()).await.unwrap();
    assert!(imported.rejected.is_empty(), "{:?}", imported.rejected);
    let registry = Registry::new();
    let _r = registry.register_dyn(imported.tools[0].clone()).unwrap();
    let r = registry.execute(ToolCall::new("1", "blocks", "{}")).await;
    assert!(!r.is_error(), "{r:?}");
    assert_eq!(r.content(), every_kind().as_slice());
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn content_of_a_tool_error_is_text() {
    // The error path is unchanged: its content is the `Error: …` text alone.
    let tools = Toolset::new().with(Fails);
    let mut client = Rpc::stream(&tools.server());
    client.initialize(Revision::V2025_11_25, json!({})).await;
    let result = call(&mut client, 3, "fails").await;
    assert_eq!(result["isError"], true);
    assert_eq!(
        result["content"],
        json!([{"type": "text", "text": "Error: no pictures today"}])
    );
}

/// Attach an image, then fail.
#[tool]
async fn fails(cx: ToolContext) -> Result<String, ToolError> {
    cx.attach_content(ContentBlock::image(PNG, "image/png"));
    Err(ToolError::new("no pictures today"))
}
