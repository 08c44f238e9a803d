//! The MCP server spans (OpenTelemetry MCP conventions, as `tracing` fields): a
//! `tools/call`'s name, kind and attributes over HTTP on both revisions, and
//! `mcp.session.id` present on a 2025-11-25 session, absent on 2026-07-28 (which has no
//! sessions); a span for every other request (lists, reads, prompts, completion,
//! `initialize`, the 2025-11-25 task methods), with its target where the conventions
//! name one and the connection's addresses; a `ClientBuilder` connection's handshake
//! and listing as client spans (over a pipe and over HTTP), and an imported tool's call
//! as one span only.
//!
//! The server runs on a current-thread runtime with a subscriber of this thread only,
//! so the other tests of the binary, on threads of their own, are neither seen nor
//! slowed.

use std::sync::{Arc, Mutex};

use dsh_mcp::{HttpOptions, serve_http};
use serde_json::json;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

use crate::common::http::HttpClient;
use crate::common::rpc::{request, tools_call};
use crate::common::tools::{Greet, Toolset};
use crate::common::wire::Revision;

/// A span's name and its `(field, value)` pairs.
type Span = (String, Vec<(String, String)>);

/// Every span, with its fields as recorded; except those named `.1` (decided per span, so
/// that no callsite's interest is cached).
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<Span>>>, Option<&'static str>);

struct Fields<'a>(&'a mut Vec<(String, String)>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push((field.name().to_owned(), format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name().to_owned(), value.to_owned()));
    }
}

impl Subscriber for Recorder {
    fn register_callsite(&self, _: &'static Metadata<'static>) -> tracing::subscriber::Interest {
        tracing::subscriber::Interest::sometimes()
    }
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        Some(metadata.name()) != self.1
    }
    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let mut fields = Vec::new();
        attrs.record(&mut Fields(&mut fields));
        let mut spans = self.0.lock().unwrap();
        spans.push((attrs.metadata().name().to_owned(), fields));
        Id::from_u64(spans.len() as u64)
    }
    fn record(&self, span: &Id, values: &Record<'_>) {
        let mut spans = self.0.lock().unwrap();
        let i = span.into_u64() as usize - 1;
        values.record(&mut Fields(&mut spans[i].1));
    }
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, _: &Event<'_>) {}
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

impl Recorder {
    /// The fields of the server spans of `tools/call` with this request id.
    /// The spans named `name`.
    fn named(&self, name: &str) -> Vec<Vec<(String, String)>> {
        let spans = self.0.lock().unwrap();
        spans
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, fields)| fields.clone())
            .collect()
    }

    fn server_call(&self, request_id: &str) -> Vec<(String, String)> {
        let spans = self.0.lock().unwrap();
        let found: Vec<_> = spans
            .iter()
            .filter(|(name, fields)| {
                name == "mcp_server"
                    && fields
                        .iter()
                        .any(|(k, v)| k == "jsonrpc.request.id" && v == request_id)
            })
            .collect();
        assert_eq!(found.len(), 1, "one server span of request {request_id}");
        found[0].1.clone()
    }
}

fn get<'a>(fields: &'a [(String, String)], key: &str) -> Option<&'a str> {
    fields
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// The attributes every `tools/call greet` span over HTTP has.
fn assert_call_span(fields: &[(String, String)], revision: Revision) {
    assert_eq!(get(fields, "otel.name"), Some("tools/call greet"));
    assert_eq!(get(fields, "otel.kind"), Some("server"));
    assert_eq!(get(fields, "mcp.method.name"), Some("tools/call"));
    assert_eq!(get(fields, "mcp.protocol.version"), Some(revision.as_str()));
    assert_eq!(get(fields, "network.transport"), Some("tcp"));
    assert_eq!(get(fields, "gen_ai.tool.name"), Some("greet"));
    assert_eq!(get(fields, "gen_ai.operation.name"), Some("execute_tool"));
    assert_eq!(get(fields, "error.type"), None);
}

#[test]
fn the_session_id_is_on_2025_11_25_spans_only() {
    let recorder = Recorder::default();
    let _subscriber = tracing::subscriber::set_default(recorder.clone());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let tools = Toolset::new().with(Greet);
        let http = serve_http(&tools.server(), HttpOptions::default())
            .await
            .unwrap();

        let mut old = HttpClient::new(http.url());
        let session = old.start_session(Revision::V2025_11_25).await;
        let call = tools_call(71, "greet", json!({"name": "a"}));
        assert_eq!(old.post(&call.to_string()).await.status, 200);
        let fields = recorder.server_call("71");
        assert_call_span(&fields, Revision::V2025_11_25);
        assert_eq!(get(&fields, "mcp.session.id"), Some(session.as_str()));

        let new = HttpClient::new(http.url()).revision(Revision::V2026_07_28);
        let mut call = tools_call(72, "greet", json!({"name": "b"}));
        call["params"]["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": Revision::V2026_07_28.as_str(),
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "trace-test", "version": "0"},
        });
        let reply = new.post(&call.to_string()).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        let fields = recorder.server_call("72");
        assert_call_span(&fields, Revision::V2026_07_28);
        assert_eq!(get(&fields, "mcp.session.id"), None);
    });
}

#[test]
fn a_tool_error_is_an_error_of_its_server_span() {
    let recorder = Recorder::default();
    let _subscriber = tracing::subscriber::set_default(recorder.clone());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let tools = Toolset::new().with(Greet);
        let http = serve_http(&tools.server(), HttpOptions::default())
            .await
            .unwrap();
        let mut client = HttpClient::new(http.url());
        client.start_session(Revision::V2025_11_25).await;
        // Invalid arguments: a result with `isError`.
        let call = tools_call(81, "greet", json!({"name": 7}));
        assert_eq!(client.post(&call.to_string()).await.status, 200);
        let fields = recorder.server_call("81");
        assert_eq!(get(&fields, "error.type"), Some("tool_error"));
        assert_eq!(get(&fields, "otel.status_code"), Some("error"));
    });
}

/// One resource and one prompt with a completer.
fn collections() -> (
    dsh_runtime::resources::Resources,
    dsh_runtime::prompts::Prompts,
) {
    use dsh_runtime::complete::Completer;
    use dsh_runtime::content::{ContentBlock, ResourceContents};
    use dsh_runtime::prompts::{Prompt, PromptArgument, PromptMessage, Prompts};
    use dsh_runtime::resources::{Resource, Resources};
    let resources = Resources::new();
    resources
        .register(Resource::fixed(
            "notes://today",
            "today",
            |uri, _| async move { Ok(vec![ResourceContents::text(uri, "buy milk")]) },
        ))
        .unwrap()
        .keep();
    let prompts = Prompts::new();
    prompts
        .register(
            Prompt::new("review", |args| async move {
                let file = args.get("file").unwrap_or_default().to_string();
                Ok(vec![PromptMessage::user(ContentBlock::text(format!(
                    "Review {file}."
                )))])
            })
            .with_argument(PromptArgument::required("file"))
            .with_completer("file", Completer::values(["main.rs", "mod.rs"])),
        )
        .unwrap()
        .keep();
    (resources, prompts)
}

#[test]
fn every_request_has_its_server_span() {
    let recorder = Recorder::default();
    let _subscriber = tracing::subscriber::set_default(recorder.clone());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (resources, prompts) = collections();
        let tools = Toolset::with_jobs().with(Greet);
        let server = tools
            .server()
            .with_resources(resources)
            .with_prompts(prompts);
        let http = serve_http(&server, HttpOptions::default()).await.unwrap();
        let port = http.local_addr().port().to_string();
        let mut client = HttpClient::new(http.url());
        // `initialize` is request 1.
        let session = client.start_session(Revision::V2025_11_25).await;
        let requests = [
            (2, "tools/list", json!({}), "tools/list"),
            (3, "resources/list", json!({}), "resources/list"),
            (
                4,
                "resources/templates/list",
                json!({}),
                "resources/templates/list",
            ),
            (
                5,
                "resources/read",
                json!({"uri": "notes://today"}),
                "resources/read",
            ),
            (6, "prompts/list", json!({}), "prompts/list"),
            (
                7,
                "prompts/get",
                json!({"name": "review", "arguments": {"file": "a.rs"}}),
                "prompts/get review",
            ),
            (
                8,
                "completion/complete",
                json!({
                    "ref": {"type": "ref/prompt", "name": "review"},
                    "argument": {"name": "file", "value": "m"},
                }),
                "completion/complete",
            ),
            // Rerouted to the session's task store (2025-11-25's task model).
            (9, "tasks/list", json!({}), "tasks/list"),
        ];
        for (id, method, params, _) in &requests {
            let reply = client
                .post(&request(*id, method, params.clone()).to_string())
                .await;
            assert_eq!(reply.status, 200, "{method}: {}", reply.body);
        }
        let mut all = vec![(1, "initialize", json!({}), "initialize")];
        all.extend(requests);
        for (id, method, _, name) in &all {
            let fields = recorder.server_call(&id.to_string());
            assert_eq!(get(&fields, "otel.name"), Some(*name), "{method}");
            assert_eq!(get(&fields, "otel.kind"), Some("server"), "{method}");
            assert_eq!(get(&fields, "mcp.method.name"), Some(*method));
            assert_eq!(get(&fields, "network.transport"), Some("tcp"), "{method}");
            assert_eq!(get(&fields, "network.protocol.name"), Some("http"));
            assert_eq!(get(&fields, "network.protocol.version"), Some("1.1"));
            assert_eq!(get(&fields, "network.peer.address"), Some("127.0.0.1"));
            assert_eq!(get(&fields, "client.address"), Some("127.0.0.1"));
            let peer_port = get(&fields, "network.peer.port").expect("the peer's port");
            assert!(peer_port.parse::<u16>().is_ok_and(|p| p > 0), "{peer_port}");
            assert_eq!(get(&fields, "client.port"), Some(peer_port));
            assert_eq!(get(&fields, "server.address"), Some("127.0.0.1"));
            assert_eq!(get(&fields, "server.port"), Some(port.as_str()));
            assert_eq!(get(&fields, "error.type"), None, "{method}");
            // Only a tool call is a tool execution.
            assert_eq!(get(&fields, "gen_ai.operation.name"), None, "{method}");
            if *id > 1 {
                assert_eq!(get(&fields, "mcp.session.id"), Some(session.as_str()));
            }
        }
        let read = recorder.server_call("5");
        assert_eq!(get(&read, "mcp.resource.uri"), Some("notes://today"));
        let prompt = recorder.server_call("7");
        assert_eq!(get(&prompt, "gen_ai.prompt.name"), Some("review"));
        // A request that fails: its JSON-RPC code.
        let reply = client
            .post(&request(10, "prompts/get", json!({"name": "nope"})).to_string())
            .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        let failed = recorder.server_call("10");
        assert_eq!(get(&failed, "error.type"), Some("-32602"));
        assert_eq!(get(&failed, "rpc.response.status_code"), Some("-32602"));
        assert_eq!(get(&failed, "otel.status_code"), Some("error"));
    });
}

/// Call `greet`, imported over a pipe from a server of it (a `ClientBuilder`
/// connection), through a registry, with `recorder` installed.
fn call_imported_greet(recorder: &Recorder) {
    let _subscriber = tracing::subscriber::set_default(recorder.clone());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let server = Toolset::new().with(Greet).server();
        let (client_io, server_io) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move { server.serve(server_io).await });
        let client = dsh_mcp::ClientBuilder::new("trace-test", "0")
            .connect(client_io)
            .await
            .unwrap();
        let options = dsh_mcp::ImportOptions::new();
        let imported = dsh_mcp::import_from(&client, &options).await.unwrap();
        let registry = dsh_runtime::Registry::new();
        let _r = registry.register_dyn(imported.tools[0].clone()).unwrap();
        let result = registry
            .execute(dsh_runtime::ToolCall::new(
                "imp-1",
                "greet",
                r#"{"name":"x"}"#,
            ))
            .await;
        assert!(result.is_success(), "{}", result.text());
        client.cancel().await.unwrap();
    });
}

#[test]
fn an_imported_tools_call_adds_its_mcp_attributes_to_the_calls_span() {
    // The registry traces the call: its `execute_tool` span carries the MCP attributes,
    // and the client opens no span of its own.
    let recorder = Recorder::default();
    call_imported_greet(&recorder);
    let calls = recorder.named("execute_tool");
    let call = calls
        .iter()
        .find(|f| get(f, "gen_ai.tool.call.id") == Some("imp-1"))
        .expect("the registry's span");
    assert_eq!(get(call, "otel.name"), Some("execute_tool greet"));
    assert_eq!(get(call, "mcp.method.name"), Some("tools/call"));
    assert_eq!(
        get(call, "mcp.protocol.version"),
        Some(Revision::V2026_07_28.as_str())
    );
    let clients = recorder.named("mcp_client");
    let calls = |spans: &[Vec<(String, String)>]| {
        spans
            .iter()
            .filter(|f| get(f, "mcp.method.name") == Some("tools/call"))
            .count()
    };
    assert_eq!(calls(&clients), 0, "no second span: {clients:?}");
    // The connection's other requests are client spans of their own.
    for method in ["server/discover", "tools/list"] {
        let span = clients
            .iter()
            .find(|f| get(f, "otel.name") == Some(method))
            .unwrap_or_else(|| panic!("a client span of {method}: {clients:?}"));
        assert_eq!(get(span, "otel.kind"), Some("client"));
        assert_eq!(get(span, "mcp.method.name"), Some(method));
        assert_eq!(get(span, "network.transport"), Some("pipe"));
        assert_eq!(
            get(span, "mcp.protocol.version"),
            Some(Revision::V2026_07_28.as_str())
        );
        assert!(get(span, "jsonrpc.request.id").is_some(), "{span:?}");
    }
    // The server's span of the same request.
    let served = recorder.named("mcp_server");
    assert!(
        served
            .iter()
            .any(|f| get(f, "otel.name") == Some("tools/call greet")
                && get(f, "network.transport") == Some("pipe")),
        "{served:?}"
    );

    // Nothing traces the tool's execution: the client's own span, kind CLIENT.
    let recorder = Recorder(Arc::default(), Some("execute_tool"));
    call_imported_greet(&recorder);
    assert!(recorder.named("execute_tool").is_empty());
    let clients = recorder.named("mcp_client");
    let client: Vec<_> = clients
        .iter()
        .filter(|f| get(f, "mcp.method.name") == Some("tools/call"))
        .collect();
    assert_eq!(
        client.len(),
        1,
        "one span, not the transport's too: {clients:?}"
    );
    assert_eq!(get(client[0], "otel.name"), Some("tools/call greet"));
    let id = get(client[0], "jsonrpc.request.id").expect("the request id");
    assert!(id.parse::<u64>().is_ok(), "{id}");
    assert_eq!(get(client[0], "otel.kind"), Some("client"));
    assert_eq!(get(client[0], "gen_ai.tool.name"), Some("greet"));
}

#[test]
fn a_connection_over_http_traces_its_requests_over_tcp() {
    let recorder = Recorder::default();
    let _subscriber = tracing::subscriber::set_default(recorder.clone());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let url = rt.block_on(async {
        let tools = Toolset::new().with(Greet);
        let http = serve_http(&tools.server(), HttpOptions::default())
            .await
            .unwrap();
        let client = dsh_mcp::ClientBuilder::new("trace-test", "0")
            .connect_http(&http.url())
            .await
            .unwrap();
        let tools = client.peer().list_all_tools().await.unwrap();
        assert_eq!(tools.len(), 1);
        client.cancel().await.unwrap();
        http.url()
    });
    let url = reqwest::Url::parse(&url).unwrap();
    let (host, port) = (url.host_str().unwrap(), url.port().unwrap().to_string());
    let clients = recorder.named("mcp_client");
    for method in ["server/discover", "tools/list"] {
        let span = clients
            .iter()
            .find(|f| get(f, "otel.name") == Some(method))
            .unwrap_or_else(|| panic!("a client span of {method}: {clients:?}"));
        assert_eq!(get(span, "otel.kind"), Some("client"));
        assert_eq!(get(span, "network.transport"), Some("tcp"), "{method}");
        assert_eq!(get(span, "server.address"), Some(host), "{method}");
        assert_eq!(get(span, "server.port"), Some(port.as_str()), "{method}");
        assert_eq!(
            get(span, "mcp.protocol.version"),
            Some(Revision::V2026_07_28.as_str())
        );
        assert_eq!(get(span, "error.type"), None, "{method}");
        // The server's span of the same request.
        let id = get(span, "jsonrpc.request.id").expect("the request id");
        let served = recorder.server_call(id);
        assert_eq!(get(&served, "mcp.method.name"), Some(method));
    }
}
