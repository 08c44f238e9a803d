//! dsh-mcp's server spans and metrics as an OpenTelemetry SDK sees them (dsh-otel's
//! layers and propagator, in-memory exporters): a `tools/call` over HTTP whose `_meta`
//! carries a `traceparent` is a SERVER span of that trace, parented on the client's span,
//! with the `execute_tool` span under it; its duration is a point of the
//! `mcp.server.operation.duration` histogram; a 2025-11-25 session, once closed, is a
//! point of `mcp.server.session.duration`.
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
    let (answer, http) = rt.block_on(async {
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
        let answer = reqwest::Client::new()
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
            .unwrap();
        (answer, http)
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

    rt.block_on(open_and_close_a_session(&http.url()));
    // Every request is measured (the session's `initialize` too): the call's point.
    let (count, sum, attributes) = histogram(
        &meter,
        &metrics,
        "mcp.server.operation.duration",
        Some("tools/call"),
    )
    .expect("the server's duration histogram");
    assert_eq!(count, 1);
    assert!(sum > 0.0 && sum < 30.0, "{sum}");
    assert!(
        attributes
            .iter()
            .any(|(k, v)| k == "mcp.method.name" && v == "tools/call"),
        "{attributes:?}"
    );
    // The session's end is recorded once it is dropped, which may follow the answer.
    let start = std::time::Instant::now();
    loop {
        if let Some((count, _, _)) =
            histogram(&meter, &metrics, "mcp.server.session.duration", None)
        {
            assert_eq!(count, 1);
            break;
        }
        assert!(
            start.elapsed().as_secs() < 20,
            "no session duration recorded"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A histogram's count, sum and attributes.
type Point = (u64, f64, Vec<(String, String)>);

/// The count, sum and attributes of histogram `name`'s point of `method` (any point when
/// `None`), exported now.
fn histogram(
    meter: &SdkMeterProvider,
    metrics: &InMemoryMetricExporter,
    name: &str,
    method: Option<&str>,
) -> Option<Point> {
    meter.force_flush().unwrap();
    let exported = metrics.get_finished_metrics().unwrap();
    let histogram = exported
        .iter()
        .rev()
        .flat_map(|r| r.scope_metrics())
        .flat_map(|s| s.metrics())
        .find(|m| m.name() == name)?;
    let AggregatedMetrics::F64(MetricData::Histogram(data)) = histogram.data() else {
        panic!("a histogram of seconds: {:?}", histogram.data());
    };
    let point = data.data_points().find(|p| {
        method.is_none_or(|method| {
            p.attributes()
                .any(|kv| kv.key.as_str() == "mcp.method.name" && kv.value.as_str() == method)
        })
    })?;
    let attributes = point
        .attributes()
        .map(|kv| (kv.key.to_string(), kv.value.to_string()))
        .collect();
    Some((point.count(), point.sum(), attributes))
}

/// Open a 2025-11-25 session at `url` and close it (`DELETE`).
async fn open_and_close_a_session(url: &str) {
    let client = reqwest::Client::new();
    let initialize = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "otel-test", "version": "0"},
        },
    });
    let response = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(initialize.to_string())
        .send()
        .await
        .unwrap();
    let session = response
        .headers()
        .get("mcp-session-id")
        .expect("a session")
        .to_str()
        .unwrap()
        .to_owned();
    response.text().await.unwrap();
    let closed = client
        .delete(url)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert!(closed.status().is_success(), "{}", closed.status());
}
