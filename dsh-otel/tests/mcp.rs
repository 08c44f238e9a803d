//! dsh-mcp's server spans and metrics as an OpenTelemetry SDK sees them (dsh-otel's
//! layers and propagator, in-memory exporters): a `tools/call` over HTTP whose `_meta`
//! carries a `traceparent` is a SERVER span of that trace, parented on the client's span,
//! with the `execute_tool` span under it; its duration is a point of the
//! `mcp.server.operation.duration` histogram.
//!
//! A test binary of its own: the subscriber and propagator are global.

use dsh_mcp::{HttpOptions, McpServer, serve_http};
use dsh_runtime::{Registry, tool};
use opentelemetry::trace::{SpanId, SpanKind, TraceId};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
use tracing_subscriber::layer::SubscriberExt as _;

/// Echo `text`.
#[tool]
async fn echo(
    /** What to echo. */
    text: String,
) -> String {
    text
}

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN: &str = "00f067aa0ba902b7";

#[test]
fn a_traceparent_parents_the_server_span_and_the_call_is_measured() {
    let spans = InMemorySpanExporter::default();
    let tracer = SdkTracerProvider::builder()
        .with_simple_exporter(spans.clone())
        .build();
    let metrics = InMemoryMetricExporter::default();
    let meter = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(metrics.clone()).build())
        .build();
    let subscriber = tracing_subscriber::registry().with(dsh_otel::layers(&tracer, &meter));
    tracing::subscriber::set_global_default(subscriber).unwrap();
    opentelemetry::global::set_text_map_propagator(dsh_otel::propagator());

    let registry = Registry::new();
    let _echo = registry.register(Echo).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let answer = rt.block_on(async {
        let http = serve_http(&McpServer::new(registry.clone()), HttpOptions::default())
            .await
            .unwrap();
        let body = serde_json::json!({
            "jsonrpc": "2.0", "id": 5, "method": "tools/call",
            "params": {
                "name": "echo",
                "arguments": {"text": "hi"},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "io.modelcontextprotocol/clientInfo": {"name": "otel-test", "version": "0"},
                    "traceparent": format!("00-{TRACE}-{CLIENT_SPAN}-01"),
                    "tracestate": "vendor=1",
                },
            },
        });
        reqwest::Client::new()
            .post(http.url())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "echo")
            .body(body.to_string())
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    });
    assert!(answer.contains("hi"), "{answer}");

    let finished = spans.get_finished_spans().unwrap();
    let server = finished
        .iter()
        .find(|s| s.name == "tools/call echo")
        .expect("the server span");
    assert_eq!(server.span_kind, SpanKind::Server);
    assert_eq!(
        server.span_context.trace_id(),
        TraceId::from_hex(TRACE).unwrap()
    );
    assert_eq!(
        server.parent_span_id,
        SpanId::from_hex(CLIENT_SPAN).unwrap()
    );
    assert!(server.parent_span_is_remote);
    assert_eq!(
        server.span_context.trace_state().get("vendor"),
        Some("1"),
        "tracestate travels too"
    );
    let tool = finished
        .iter()
        .find(|s| s.name == "execute_tool echo")
        .expect("the tool's span");
    assert_eq!(tool.parent_span_id, server.span_context.span_id());
    assert_eq!(tool.span_context.trace_id(), server.span_context.trace_id());

    meter.force_flush().unwrap();
    let exported = metrics.get_finished_metrics().unwrap();
    let histogram = exported
        .iter()
        .flat_map(|r| r.scope_metrics())
        .flat_map(|s| s.metrics())
        .find(|m| m.name() == "mcp.server.operation.duration")
        .expect("the server's duration histogram");
    let AggregatedMetrics::F64(MetricData::Histogram(data)) = histogram.data() else {
        panic!("a histogram of seconds: {:?}", histogram.data());
    };
    let point = data.data_points().next().expect("a point");
    assert_eq!(point.count(), 1);
    assert!(point.sum() > 0.0 && point.sum() < 30.0, "{}", point.sum());
    assert!(
        point
            .attributes()
            .any(|kv| kv.key.as_str() == "mcp.method.name" && kv.value.as_str() == "tools/call")
    );
}
