//! A forwarded answer stays in its retry's trace: two instances on one store, a call
//! suspended on its question (2026-07-28, `InputRequiredResult`) on instance A, its
//! retry with a `traceparent` on instance B. B forwards the answer to A through the
//! store's inbox; A applies it in span `forwarded_answer {tool}` (kind CONSUMER), a child
//! of B's span of the retry, in the retry's trace.
//!
//! A test binary of its own: the subscriber and propagator are global.

use std::sync::Arc;

use dsh_mcp::store::MemoryStore;
use dsh_mcp::{HttpOptions, McpServer, StateKeys, serve_http};
use dsh_runtime::caller::SampleRequest;
use dsh_runtime::{Registry, ToolContext, ToolError, tool};
use opentelemetry::trace::{SpanId, SpanKind, TraceId};
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::{Value, json};
use tracing_subscriber::layer::SubscriberExt as _;

/// Ask the model, then answer what it said.
#[tool]
async fn ask_model(cx: ToolContext) -> Result<String, ToolError> {
    let answer = cx.sample(SampleRequest::new("say something", 20)).await?;
    Ok(format!("the model said: {}", answer.text()))
}

const TRACE: &str = "5bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN: &str = "10f067aa0ba902b7";

/// A 2026-07-28 `tools/call` of `ask_model` by a client that can sample, with `extra`
/// params and `_meta` entries.
fn call(id: u64, extra: Value, meta: Value) -> String {
    let mut params = json!({
        "name": "ask_model",
        "arguments": {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"sampling": {}},
            "io.modelcontextprotocol/clientInfo": {"name": "otel-test", "version": "0"},
        },
    });
    if let (Value::Object(params), Value::Object(extra)) = (&mut params, extra) {
        params.extend(extra);
    }
    if let (Some(into), Value::Object(meta)) = (params["_meta"].as_object_mut(), meta) {
        into.extend(meta);
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
}

async fn post(url: &str, body: String) -> Value {
    let text = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "ask_model")
        .body(body)
        .send()
        .await
        .expect("the server answers")
        .text()
        .await
        .expect("a body");
    // A JSON body, or one SSE event holding it.
    let json = text
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .unwrap_or(&text);
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn a_forwarded_answer_is_applied_in_a_child_of_the_retrys_span() {
    let spans = InMemorySpanExporter::default();
    let tracer = SdkTracerProvider::builder()
        .with_simple_exporter(spans.clone())
        .build();
    let meter = SdkMeterProvider::builder().build();
    let subscriber = tracing_subscriber::registry().with(dsh_otel::layers(&tracer, &meter));
    tracing::subscriber::set_global_default(subscriber).unwrap();
    opentelemetry::global::set_text_map_propagator(dsh_otel::propagator());

    let registry = Registry::new();
    let _tool = registry.register(AskModel).unwrap();
    let store = Arc::new(MemoryStore::new());
    let keys = StateKeys::random().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let answer = rt.block_on(async {
        let mut servers = Vec::new();
        for _ in 0..2 {
            let server = McpServer::new(registry.clone())
                .with_store(store.clone())
                .with_state_keys(keys.clone());
            servers.push(serve_http(&server, HttpOptions::default()).await.unwrap());
        }
        // Asked on A.
        let first = post(&servers[0].url(), call(1, json!({}), json!({}))).await;
        let input = &first["result"];
        assert_eq!(input["resultType"], "input_required", "{first}");
        let mut responses = serde_json::Map::new();
        for key in input["inputRequests"].as_object().expect("requests").keys() {
            responses.insert(
                key.clone(),
                json!({
                    "role": "assistant",
                    "content": {"type": "text", "text": "hello"},
                    "model": "m",
                }),
            );
        }
        // Answered on B, in the client's trace.
        let retry = call(
            2,
            json!({"requestState": input["requestState"], "inputResponses": responses}),
            json!({"traceparent": format!("00-{TRACE}-{CLIENT_SPAN}-01")}),
        );
        post(&servers[1].url(), retry).await
    });
    assert_eq!(
        answer["result"]["content"][0]["text"], "the model said: hello",
        "{answer}"
    );

    let finished = spans.get_finished_spans().unwrap();
    let trace: Vec<&SpanData> = finished
        .iter()
        .filter(|s| s.span_context.trace_id() == TraceId::from_hex(TRACE).unwrap())
        .collect();
    let retry = trace
        .iter()
        .find(|s| s.name == "tools/call ask_model")
        .expect("B's span of the retry");
    assert_eq!(retry.span_kind, SpanKind::Server);
    assert_eq!(retry.parent_span_id, SpanId::from_hex(CLIENT_SPAN).unwrap());
    let applied = trace
        .iter()
        .find(|s| s.name == "forwarded_answer ask_model")
        .expect("A's span of the forwarded answer, in the retry's trace");
    assert_eq!(applied.span_kind, SpanKind::Consumer);
    // A child of the retry's span (directly, or of a span under it).
    let mut parent = applied.parent_span_id;
    let mut under_retry = false;
    while let Some(span) = trace.iter().find(|s| s.span_context.span_id() == parent) {
        if span.span_context.span_id() == retry.span_context.span_id() {
            under_retry = true;
            break;
        }
        parent = span.parent_span_id;
    }
    assert!(under_retry, "{applied:?}");
    assert!(applied.parent_span_is_remote, "parented through the inbox");
}
