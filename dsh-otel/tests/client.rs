//! dsh-mcp's client spans as an OpenTelemetry SDK sees them (dsh-otel's layers and
//! propagator, in-memory exporters): every request a `ClientBuilder` connection sends
//! (the 2026-07-28 `server/discover` handshake, `tools/list`, a failing request; the
//! 2025-11-25 `initialize`, `ping`) is a CLIENT span `{method} {target}` under the
//! caller's span, with its attributes, and the parent of the server's SERVER span of the
//! same request (its trace context went in `params._meta`); each is a point of
//! `mcp.client.operation.duration`.
//!
//! A test binary of its own: the subscriber and propagator are global.

use dsh_mcp::rmcp::model::{
    ClientRequest, PingRequest, ProtocolVersion, ReadResourceRequestParams,
};
use dsh_mcp::{ClientBuilder, ImportOptions, McpServer};
use dsh_runtime::{Registry, tool};
use opentelemetry::trace::SpanKind;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use tracing::Instrument as _;
use tracing_subscriber::layer::SubscriberExt as _;

/// Echo `text`.
#[tool]
async fn echo(
    /** What to echo. */
    text: String,
) -> String {
    text
}

/// A client connected over a pipe to a server of `echo`, offering `revisions`.
async fn connect(revisions: &[ProtocolVersion]) -> dsh_mcp::McpClient {
    let registry = Registry::new();
    let _echo = registry.register(Echo).unwrap();
    let server = McpServer::new(registry);
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move { server.serve(server_io).await });
    ClientBuilder::new("otel-test", "0")
        .revisions(revisions.iter().cloned())
        .connect(client_io)
        .await
        .unwrap()
}

fn attr(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.to_string())
}

/// The one span of `kind` named `name` whose request id is `id`.
fn span<'a>(spans: &'a [SpanData], kind: SpanKind, name: &str, id: Option<&str>) -> &'a SpanData {
    let found: Vec<_> = spans
        .iter()
        .filter(|s| s.span_kind == kind && s.name == name)
        .filter(|s| id.is_none() || attr(s, "jsonrpc.request.id").as_deref() == id)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one {kind:?} span {name} ({id:?}): {spans:#?}"
    );
    found[0]
}

#[test]
fn every_request_the_client_sends_is_a_client_span_parenting_the_servers() {
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

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let modern = tracing::info_span!("modern");
    let failure = rt.block_on(
        async {
            let client = connect(&dsh_mcp::DEFAULT_REVISIONS).await;
            let imported = dsh_mcp::import_from(&client, &ImportOptions::new())
                .await
                .unwrap();
            assert_eq!(imported.tools.len(), 1);
            // A request the server refuses (this server has no resources).
            let failed = client
                .peer()
                .read_resource(ReadResourceRequestParams::new("notes://none"))
                .await;
            let Err(dsh_mcp::rmcp::ServiceError::McpError(error)) = failed else {
                panic!("an error answer: {failed:?}");
            };
            client.cancel().await.unwrap();
            error.code.0.to_string()
        }
        .instrument(modern.clone()),
    );
    let legacy = tracing::info_span!("legacy");
    rt.block_on(
        async {
            let client = connect(&[ProtocolVersion::V_2025_11_25]).await;
            client
                .peer()
                .send_request(ClientRequest::PingRequest(PingRequest::default()))
                .await
                .unwrap();
            client.cancel().await.unwrap();
        }
        .instrument(legacy.clone()),
    );
    drop((modern, legacy));

    let finished = spans.get_finished_spans().unwrap();
    let root = |name: &str| {
        finished
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("the test's span {name}"))
    };
    // The handshake and the import's listing are children of the caller's span; a
    // request sent through rmcp's `Peer` directly of the connection's span (rmcp's
    // service loop, opened under the caller's when it connected).
    let cases = [
        ("modern", "server/discover", "2026-07-28", None, false),
        ("modern", "tools/list", "2026-07-28", None, false),
        (
            "modern",
            "resources/read",
            "2026-07-28",
            Some(failure.as_str()),
            true,
        ),
        ("legacy", "initialize", "2025-11-25", None, false),
        ("legacy", "ping", "2025-11-25", None, true),
    ];
    for (parent, method, revision, error, direct) in cases {
        let client = span(&finished, SpanKind::Client, method, None);
        let id = attr(client, "jsonrpc.request.id").expect("the request id");
        let caller = root(parent).span_context.span_id();
        assert_eq!(
            client.span_context.trace_id(),
            root(parent).span_context.trace_id(),
            "{method}: the caller's trace"
        );
        if direct {
            let connection = finished
                .iter()
                .find(|s| s.span_context.span_id() == client.parent_span_id)
                .expect("the connection's span");
            assert_eq!(connection.parent_span_id, caller, "{method}");
        } else {
            assert_eq!(client.parent_span_id, caller, "{method}: the caller's span");
        }
        assert_eq!(attr(client, "mcp.method.name").as_deref(), Some(method));
        assert_eq!(
            attr(client, "mcp.protocol.version").as_deref(),
            Some(revision),
            "{method}"
        );
        assert_eq!(attr(client, "network.transport").as_deref(), Some("pipe"));
        assert_eq!(attr(client, "error.type").as_deref(), error, "{method}");
        // The server's span of the same request: a child, through `_meta`.
        let server = span(&finished, SpanKind::Server, method, Some(&id));
        assert_eq!(
            server.span_context.trace_id(),
            client.span_context.trace_id(),
            "{method}"
        );
        assert_eq!(
            server.parent_span_id,
            client.span_context.span_id(),
            "{method}: the server's span is the client's child"
        );
        assert!(server.parent_span_is_remote, "{method}");
        let point = histogram(&meter, &metrics, "mcp.client.operation.duration", method);
        let (count, sum, attributes) = point.unwrap_or_else(|| panic!("{method}'s duration"));
        assert_eq!(count, 1, "{method}");
        assert!(sum > 0.0 && sum < 60.0, "{method}: {sum}");
        let recorded_error = attributes
            .iter()
            .find(|(k, _)| k == "error.type")
            .map(|(_, v)| v.as_str());
        assert_eq!(recorded_error, error, "{method}");
    }
    // The resource's URI is an attribute, not in the name.
    let read = span(&finished, SpanKind::Client, "resources/read", None);
    assert_eq!(
        attr(read, "mcp.resource.uri").as_deref(),
        Some("notes://none")
    );
    // The imported tool was listed, not called: no `tools/call` span.
    assert!(!finished.iter().any(|s| s.name.starts_with("tools/call")));
}

/// A histogram's count, sum and attributes.
type Point = (u64, f64, Vec<(String, String)>);

/// The count, sum and attributes of histogram `name`'s point of `method`, exported now.
fn histogram(
    meter: &SdkMeterProvider,
    metrics: &InMemoryMetricExporter,
    name: &str,
    method: &str,
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
        p.attributes()
            .any(|kv| kv.key.as_str() == "mcp.method.name" && kv.value.as_str() == method)
    })?;
    let attributes = point
        .attributes()
        .map(|kv| (kv.key.to_string(), kv.value.to_string()))
        .collect();
    Some((point.count(), point.sum(), attributes))
}
