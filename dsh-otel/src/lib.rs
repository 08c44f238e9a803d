//! OpenTelemetry for dsh: the OTLP/HTTP export of its spans and metrics.
//!
//! dsh's crates trace through [`tracing`] only, with the names, kinds and status of the
//! OpenTelemetry GenAI and MCP semantic conventions in the fields
//! `tracing-opentelemetry` reads (`otel.name`, `otel.kind`, `otel.status_code`), and
//! record their metrics as `histogram.*` events that its `MetricsLayer` turns into
//! histograms. Any `tracing-opentelemetry` layer therefore sees correct spans; this crate
//! is the ready-made wiring for an OTLP/HTTP backend:
//!
//! ```no_run
//! let _otel = dsh_otel::init("http://localhost:4318", "my-service")?;
//! // … serve; spans and metrics are exported until `_otel` is dropped.
//! # Ok::<(), dsh_otel::Error>(())
//! ```
//!
//! Call [`init`] before starting an async runtime: its HTTP client is a blocking one,
//! which exports from threads of its own.

use opentelemetry::KeyValue;
use opentelemetry::propagation::TextMapCompositePropagator;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{MetricExporter, Protocol, SpanExporter, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::registry::LookupSpan;

/// The instrumentation scope's name on every span and metric.
pub const SCOPE: &str = "dsh";

/// Why the export could not be set up.
#[derive(Debug)]
pub struct Error(String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

/// The exporters, flushed and shut down when dropped.
#[must_use = "the export stops when the guard is dropped"]
pub struct Guard {
    tracer: SdkTracerProvider,
    meter: SdkMeterProvider,
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard").finish_non_exhaustive()
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        // What is still buffered is sent now; a backend that is gone loses it.
        let _ = self.tracer.force_flush();
        let _ = self.meter.force_flush();
        let _ = self.tracer.shutdown();
        let _ = self.meter.shutdown();
    }
}

/// The propagator of W3C `traceparent`/`tracestate` and `baggage`: what dsh-mcp's client
/// injects into a request's `params._meta` and its server extracts from it (SEP-414).
pub fn propagator() -> TextMapCompositePropagator {
    TextMapCompositePropagator::new(vec![
        Box::new(TraceContextPropagator::new()),
        Box::new(BaggagePropagator::new()),
    ])
}

/// The `tracing` layers that turn dsh's spans and `histogram.*` events into
/// OpenTelemetry spans and histograms of these providers (the OTLP ones of [`init`], or
/// a test's in-memory ones).
pub fn layers<S>(
    tracer: &SdkTracerProvider,
    meter: &SdkMeterProvider,
) -> impl tracing_subscriber::Layer<S> + Send + Sync + 'static
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a> + Send + Sync,
{
    use tracing_subscriber::Layer as _;
    tracing_opentelemetry::layer()
        .with_tracer(tracer.tracer(SCOPE))
        .and_then(tracing_opentelemetry::MetricsLayer::new(meter.clone()))
}

/// Export spans and metrics to the OTLP/HTTP (protobuf) collector at `endpoint` (its
/// base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT` gives it: `/v1/traces` and `/v1/metrics`
/// are appended), as service `service`: installs the global `tracing` subscriber and the
/// W3C trace-context propagator. Call it before starting an async runtime, at most once.
pub fn init(endpoint: &str, service: &str) -> Result<Guard, Error> {
    let base = endpoint.trim_end_matches('/');
    // The process tells instances of one service apart (`process.pid`).
    let resource = Resource::builder()
        .with_service_name(service.to_owned())
        .with_attribute(KeyValue::new("process.pid", i64::from(std::process::id())))
        .build();
    let spans = SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(format!("{base}/v1/traces"))
        .build()
        .map_err(|e| Error(format!("cannot export traces to {base}: {e}")))?;
    let metrics = MetricExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(format!("{base}/v1/metrics"))
        .build()
        .map_err(|e| Error(format!("cannot export metrics to {base}: {e}")))?;
    let tracer = SdkTracerProvider::builder()
        .with_resource(resource.clone())
        .with_batch_exporter(spans)
        .build();
    let meter = SdkMeterProvider::builder()
        .with_resource(resource)
        .with_reader(PeriodicReader::builder(metrics).build())
        .build();
    let subscriber = tracing_subscriber::registry().with(layers(&tracer, &meter));
    tracing::subscriber::set_global_default(subscriber)
        .map_err(|e| Error(format!("cannot install the tracing subscriber: {e}")))?;
    opentelemetry::global::set_text_map_propagator(propagator());
    Ok(Guard { tracer, meter })
}
