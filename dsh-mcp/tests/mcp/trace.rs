//! The MCP server span of a `tools/call` (OpenTelemetry MCP conventions, as `tracing`
//! fields): its name, kind and attributes over HTTP on both revisions, and
//! `mcp.session.id` present on a 2025-11-25 session, absent on 2026-07-28 (which has no
//! sessions).
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
use crate::common::rpc::tools_call;
use crate::common::tools::{Greet, Toolset};
use crate::common::wire::Revision;

/// A span's name and its `(field, value)` pairs.
type Span = (String, Vec<(String, String)>);

/// Every span, with its fields as recorded.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<Span>>>);

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
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
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
