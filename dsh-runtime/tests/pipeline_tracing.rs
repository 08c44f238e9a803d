//! One `tracing` span per call, `execute_tool` of the OpenTelemetry GenAI conventions:
//! the tool name, call id, description, and on failure the error code and status (what
//! `tracing-opentelemetry` reads; dsh-otel's tests see them through it); the arguments
//! and result only where the registry opts in; and no stage span at all where the call's
//! own span is disabled.
//!
//! A test binary of its own: `tracing` caches each callsite's interest process-wide, so a
//! call made on another test's thread before this test installs its subscriber can leave
//! the span disabled for it.

#[path = "pipeline/pipeline_support.rs"]
mod pipeline_support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use dsh_runtime::hooks::{Approval, PreDecision, approval_fn, pre_execute_fn};
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

/// Records every span, except those named `disabled` (a subscriber that filters the
/// call's own span out); decides per span, so that no callsite's interest is cached.
struct Shared(Arc<Recorder>, Option<&'static str>);
impl Subscriber for Shared {
    fn register_callsite(&self, _: &'static Metadata<'static>) -> tracing::subscriber::Interest {
        tracing::subscriber::Interest::sometimes()
    }
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        Some(metadata.name()) != self.1
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
    tracing::subscriber::with_default(Shared(recorder.clone(), None), || {
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
    assert_eq!(
        get(&calls[0].1, "gen_ai.tool.description").as_deref(),
        Some("The echo probe.")
    );
    // Not opted in: neither the arguments nor the result.
    assert_eq!(get(&calls[0].1, "gen_ai.tool.call.arguments"), None);
    assert_eq!(get(&calls[0].1, "gen_ai.tool.call.result"), None);
    assert_eq!(get(&calls[0].1, "error.type"), None);
    assert_eq!(get(&calls[0].1, "otel.status_code"), None);
    assert_eq!(
        get(&calls[1].1, "gen_ai.tool.name").as_deref(),
        Some("missing")
    );
    // An unknown tool has no description.
    assert_eq!(get(&calls[1].1, "gen_ai.tool.description"), None);
    assert_eq!(
        get(&calls[1].1, "error.type").as_deref(),
        Some("UNKNOWN_TOOL")
    );
    assert_eq!(
        get(&calls[1].1, "otel.status_code").as_deref(),
        Some("error")
    );
}

fn field(fields: &[(String, String)], key: &str) -> Option<String> {
    fields
        .iter()
        .find(|(n, _)| n == key)
        .map(|(_, v)| v.clone())
}

/// Run `calls` on `registry` under `subscriber`; the spans it recorded.
fn spans_of(
    registry: &Registry,
    disabled: Option<&'static str>,
    calls: Vec<ToolCall>,
) -> Vec<SpanRecord> {
    let recorder = Arc::new(Recorder::default());
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    tracing::subscriber::with_default(Shared(recorder.clone(), disabled), || {
        rt.block_on(async {
            for call in calls {
                registry.execute(call).await;
            }
        })
    });
    recorder.spans.lock().unwrap().clone()
}

#[test]
fn arguments_and_results_are_recorded_only_when_opted_in() {
    let log = Log::new();
    let registry = Registry::builder().trace_content(true).build();
    assert!(registry.traces_content());
    let _t = registry.register(Probe::new("echo", &log)).unwrap();
    let spans = spans_of(
        &registry,
        None,
        vec![
            ToolCall::new("in-1", "echo", r#"{"text":"secret"}"#),
            ToolCall::new("in-2", "echo", r#"{"text":7}"#),
        ],
    );
    let calls: Vec<_> = spans.iter().filter(|(n, _)| n == "execute_tool").collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(
        field(&calls[0].1, "gen_ai.tool.call.arguments").as_deref(),
        Some(r#"{"text":"secret"}"#)
    );
    assert_eq!(
        field(&calls[0].1, "gen_ai.tool.call.result").as_deref(),
        Some(r#""secret""#)
    );
    // A failed call: its arguments, and no result (the conventions' result is a
    // successful one's).
    assert_eq!(
        field(&calls[1].1, "gen_ai.tool.call.arguments").as_deref(),
        Some(r#"{"text":7}"#)
    );
    assert_eq!(field(&calls[1].1, "gen_ai.tool.call.result"), None);
    assert_eq!(
        field(&calls[1].1, "error.type").as_deref(),
        Some("INVALID_ARGS")
    );
    assert!(!Registry::new().traces_content(), "off by default");
}

#[test]
fn a_call_whose_span_is_disabled_opens_no_stage_span() {
    let log = Log::new();
    let registry = Registry::new();
    let _t = registry.register(Probe::new("echo", &log)).unwrap();
    let _p = registry.add_pre_execute(pre_execute_fn(|_| Some(PreDecision::ask("sure?"))));
    let _a = registry.set_approval_handler(approval_fn(|_| Approval::AllowedOnce));
    let call = || ToolCall::new("quiet-1", "echo", r#"{"text":"x"}"#);
    // Everything enabled: the call's span and its stages' (approval included).
    let traced = spans_of(&registry, None, vec![call()]);
    let mut names: Vec<&str> = traced.iter().map(|(n, _)| n.as_str()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "await_approval",
            "dispatch",
            "execute_tool",
            "policy",
            "validate_output"
        ]
    );
    // The call's span filtered out: the stages run without spans, though the
    // subscriber would record theirs.
    let quiet = spans_of(&registry, Some("execute_tool"), vec![call()]);
    assert!(quiet.is_empty(), "{quiet:?}");
    let bodies = log.get().iter().filter(|e| *e == "body").count();
    assert_eq!(bodies, 2, "both calls ran their body");
}
