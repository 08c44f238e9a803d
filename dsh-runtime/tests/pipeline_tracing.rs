//! One `tracing` span per call, `execute_tool` of the OpenTelemetry GenAI conventions:
//! the tool name, call id, and on failure the error code and status (what
//! `tracing-opentelemetry` reads; dsh-otel's tests see them through it).
//!
//! A test binary of its own: `tracing` caches each callsite's interest process-wide, so a
//! call made on another test's thread before this test installs its subscriber can leave
//! the span disabled for it.

#[path = "pipeline/pipeline_support.rs"]
mod pipeline_support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use dsh_runtime::{Registry, ToolCall};
use pipeline_support::{Log, Probe};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// A span's name and its `(field, value)` pairs.
type SpanRecord = (String, Vec<(String, String)>);

#[derive(Default)]
struct Recorder {
    next: AtomicU64,
    spans: Mutex<Vec<SpanRecord>>,
}

struct Fields<'a>(&'a mut Vec<(String, String)>);
impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0
            .push((field.name().to_string(), format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name().to_string(), value.to_string()));
    }
}

struct Shared(Arc<Recorder>);
impl Subscriber for Shared {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let mut fields = Vec::new();
        attrs.record(&mut Fields(&mut fields));
        let mut spans = self.0.spans.lock().unwrap();
        spans.push((attrs.metadata().name().to_string(), fields));
        self.0.next.fetch_add(1, Ordering::SeqCst);
        Id::from_u64(spans.len() as u64)
    }
    fn record(&self, span: &Id, values: &Record<'_>) {
        let mut spans = self.0.spans.lock().unwrap();
        let i = span.into_u64() as usize - 1;
        values.record(&mut Fields(&mut spans[i].1));
    }
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, _: &Event<'_>) {}
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[test]
fn each_call_has_a_span_with_its_outcome() {
    let recorder = Arc::new(Recorder::default());
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry.register(Probe::new("echo", &log)).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    tracing::subscriber::with_default(Shared(recorder.clone()), || {
        rt.block_on(async {
            registry
                .execute(ToolCall::new("c1", "echo", r#"{"text":"x"}"#))
                .await;
            registry.execute(ToolCall::new("c2", "missing", "{}")).await;
        })
    });
    let spans = recorder.spans.lock().unwrap();
    let calls: Vec<_> = spans.iter().filter(|(n, _)| n == "execute_tool").collect();
    assert_eq!(calls.len(), 2);
    let get = |fields: &Vec<(String, String)>, k: &str| {
        fields.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
    };
    assert_eq!(
        get(&calls[0].1, "otel.name").as_deref(),
        Some("execute_tool echo")
    );
    assert_eq!(get(&calls[0].1, "otel.kind").as_deref(), Some("internal"));
    assert_eq!(
        get(&calls[0].1, "gen_ai.tool.name").as_deref(),
        Some("echo")
    );
    assert_eq!(
        get(&calls[0].1, "gen_ai.tool.call.id").as_deref(),
        Some("c1")
    );
    assert_eq!(get(&calls[0].1, "error.type"), None);
    assert_eq!(get(&calls[0].1, "otel.status_code"), None);
    assert_eq!(
        get(&calls[1].1, "gen_ai.tool.name").as_deref(),
        Some("missing")
    );
    assert_eq!(
        get(&calls[1].1, "error.type").as_deref(),
        Some("UNKNOWN_TOOL")
    );
    assert_eq!(
        get(&calls[1].1, "otel.status_code").as_deref(),
        Some("error")
    );
}
