//! dsh-runtime's spans as an OpenTelemetry SDK sees them through `tracing-opentelemetry`
//! (dsh-otel's layers, an in-memory exporter): names, kinds, attributes, status and
//! parentage of each kind of call.
//!
//! One global subscriber for the binary: code mode runs its program on a thread of its
//! own, which sees only a global one. Each test finds its spans by its own call ids.

use std::sync::OnceLock;

use dsh_runtime::hooks::{Approval, PreDecision, approval_fn, pre_execute_fn};
use dsh_runtime::jobs::{FinalStatus, JobRuntime, JobSettlement, JobSpec, RunningJob};
use dsh_runtime::{Registry, ToolCall, ToolContext, ToolError, tool};
use opentelemetry::trace::{SpanId, SpanKind, Status};
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use tracing_subscriber::layer::SubscriberExt as _;

/// The exporter every test's spans end in.
fn exporter() -> &'static InMemorySpanExporter {
    static EXPORTER: OnceLock<InMemorySpanExporter> = OnceLock::new();
    EXPORTER.get_or_init(|| {
        let exporter = InMemorySpanExporter::default();
        let tracer = SdkTracerProvider::builder()
            .with_simple_exporter(exporter.clone())
            .build();
        let meter = SdkMeterProvider::builder().build();
        let subscriber = tracing_subscriber::registry().with(dsh_otel::layers(&tracer, &meter));
        tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");
        // The providers live as long as the process.
        std::mem::forget(tracer);
        std::mem::forget(meter);
        exporter
    })
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}

/// Echo `text`.
#[tool]
async fn echo(
    /** What to echo. */
    text: String,
) -> String {
    text
}

/// Panic.
#[tool]
async fn boom() -> String {
    panic!("boom")
}

/// Start a background job that settles at once.
#[tool]
async fn background(cx: ToolContext) -> Result<String, ToolError> {
    let jobs = cx.jobs()?;
    let id = jobs
        .start(JobSpec::new("test", "settles"), |_ctx| {
            Ok::<_, ToolError>(RunningJob::new(async {
                JobSettlement::new(FinalStatus::Completed)
            }))
        })
        .map_err(|e| ToolError::new(e.to_string()))?;
    Ok(id.to_string())
}

fn attr(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.to_string())
}

/// Every finished span of the trace whose `execute_tool` span has this call id, and
/// that span.
fn trace_of(call_id: &str) -> (SpanData, Vec<SpanData>) {
    let spans = exporter().get_finished_spans().expect("the spans");
    let call = spans
        .iter()
        .find(|s| attr(s, "gen_ai.tool.call.id").as_deref() == Some(call_id))
        .unwrap_or_else(|| panic!("no execute_tool span for {call_id}"))
        .clone();
    let trace = call.span_context.trace_id();
    let all = spans
        .into_iter()
        .filter(|s| s.span_context.trace_id() == trace)
        .collect();
    (call, all)
}

fn children(spans: &[SpanData], parent: SpanId) -> Vec<&SpanData> {
    spans
        .iter()
        .filter(|s| s.parent_span_id == parent)
        .collect()
}

fn names(spans: &[&SpanData]) -> Vec<String> {
    let mut names: Vec<String> = spans.iter().map(|s| s.name.to_string()).collect();
    names.sort();
    names
}

/// The conventions' attributes of every `execute_tool` span.
fn assert_execute_tool(span: &SpanData, tool: &str, call_id: &str) {
    assert_eq!(span.name, format!("execute_tool {tool}"));
    assert_eq!(span.span_kind, SpanKind::Internal);
    assert_eq!(
        attr(span, "gen_ai.operation.name").as_deref(),
        Some("execute_tool")
    );
    assert_eq!(attr(span, "gen_ai.tool.name").as_deref(), Some(tool));
    assert_eq!(attr(span, "gen_ai.tool.call.id").as_deref(), Some(call_id));
    assert_eq!(attr(span, "gen_ai.tool.type").as_deref(), Some("function"));
}

#[test]
fn a_successful_call_and_its_stages() {
    exporter();
    let registry = Registry::new();
    let _t = registry.register(Echo).unwrap();
    let result =
        runtime().block_on(registry.execute(ToolCall::new("ok-1", "echo", r#"{"text":"x"}"#)));
    assert!(result.is_success());
    let (call, trace) = trace_of("ok-1");
    assert_execute_tool(&call, "echo", "ok-1");
    assert_eq!(
        attr(&call, "gen_ai.tool.description").as_deref(),
        Some("Echo `text`.")
    );
    // Not opted in (`RegistryBuilder::trace_content`): no arguments, no result.
    assert_eq!(attr(&call, "gen_ai.tool.call.arguments"), None);
    assert_eq!(attr(&call, "gen_ai.tool.call.result"), None);
    assert_eq!(call.status, Status::Unset);
    assert_eq!(attr(&call, "error.type"), None);
    let stages = children(&trace, call.span_context.span_id());
    assert_eq!(names(&stages), ["dispatch", "policy"]);
    let dispatch = stages.iter().find(|s| s.name == "dispatch").unwrap();
    let inner = children(&trace, dispatch.span_context.span_id());
    assert_eq!(names(&inner), ["validate_output"]);
}

#[test]
fn an_invalid_call_is_an_error_with_its_code() {
    exporter();
    let registry = Registry::new();
    let _t = registry.register(Echo).unwrap();
    let result =
        runtime().block_on(registry.execute(ToolCall::new("bad-1", "echo", r#"{"text":7}"#)));
    assert_eq!(result.code_str(), Some("INVALID_ARGS"));
    let (call, trace) = trace_of("bad-1");
    assert_execute_tool(&call, "echo", "bad-1");
    assert!(
        matches!(call.status, Status::Error { .. }),
        "{:?}",
        call.status
    );
    assert_eq!(attr(&call, "error.type").as_deref(), Some("INVALID_ARGS"));
    // Validation failed: neither policy nor the body ran.
    assert!(children(&trace, call.span_context.span_id()).is_empty());
}

#[test]
fn a_denied_call_stops_at_policy() {
    exporter();
    let registry = Registry::new();
    let _t = registry.register(Echo).unwrap();
    let _p = registry.add_pre_execute(pre_execute_fn(|_| Some(PreDecision::deny("no"))));
    let result =
        runtime().block_on(registry.execute(ToolCall::new("deny-1", "echo", r#"{"text":"x"}"#)));
    assert_eq!(result.code_str(), Some("POLICY_DENIED"));
    let (call, trace) = trace_of("deny-1");
    assert_execute_tool(&call, "echo", "deny-1");
    assert_eq!(attr(&call, "error.type").as_deref(), Some("POLICY_DENIED"));
    assert_eq!(
        names(&children(&trace, call.span_context.span_id())),
        ["policy"]
    );
}

#[test]
fn a_panicking_body_is_an_error_under_its_dispatch() {
    exporter();
    let registry = Registry::new();
    let _t = registry.register(Boom).unwrap();
    let result = runtime().block_on(registry.execute(ToolCall::new("panic-1", "boom", "{}")));
    assert_eq!(result.code_str(), Some("TOOL_PANICKED"));
    let (call, trace) = trace_of("panic-1");
    assert_execute_tool(&call, "boom", "panic-1");
    assert!(matches!(call.status, Status::Error { .. }));
    assert_eq!(attr(&call, "error.type").as_deref(), Some("TOOL_PANICKED"));
    assert_eq!(
        names(&children(&trace, call.span_context.span_id())),
        ["dispatch", "policy"]
    );
}

#[test]
fn an_approval_wait_is_a_span_under_policy() {
    exporter();
    let registry = Registry::new();
    let _t = registry.register(Echo).unwrap();
    let _p = registry.add_pre_execute(pre_execute_fn(|_| Some(PreDecision::ask("sure?"))));
    let _a = registry.set_approval_handler(approval_fn(|_| Approval::AllowedOnce));
    let result =
        runtime().block_on(registry.execute(ToolCall::new("ask-1", "echo", r#"{"text":"x"}"#)));
    assert!(result.is_success());
    let (call, trace) = trace_of("ask-1");
    let stages = children(&trace, call.span_context.span_id());
    let policy = stages.iter().find(|s| s.name == "policy").expect("policy");
    assert_eq!(
        names(&children(&trace, policy.span_context.span_id())),
        ["await_approval"]
    );
}

#[test]
fn a_background_job_is_a_trace_linked_to_its_call() {
    exporter();
    let registry = Registry::builder().jobs(JobRuntime::new()).build();
    let _t = registry.register(Background).unwrap();
    let rt = runtime();
    let result = rt.block_on(registry.execute(ToolCall::new("job-1", "background", "{}")));
    assert!(result.is_success(), "{}", result.text());
    let job_id = result
        .value()
        .and_then(|v| v.as_str().map(str::to_owned))
        .expect("an id");
    rt.block_on(async {
        let jobs = registry.jobs().unwrap().clone();
        jobs.shutdown().await;
    });
    // The job's span ends when its task's future is dropped, which the runtime may do
    // just after `shutdown` returns: wait for it (bounded), never a fixed sleep.
    let is_job = |s: &SpanData| {
        s.name == "background_job" && attr(s, "dsh.job.id").as_deref() == Some(&*job_id)
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !exporter().get_finished_spans().unwrap().iter().any(is_job)
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let (call, trace) = trace_of("job-1");
    let spans = exporter().get_finished_spans().unwrap();
    let job = spans.iter().find(|s| is_job(s)).expect("the job's span");
    // A root of its own, linked to the span it was started from (the call's dispatch).
    assert_eq!(job.parent_span_id, SpanId::INVALID);
    let from = job
        .links
        .links
        .first()
        .expect("a link")
        .span_context
        .clone();
    assert_eq!(from.trace_id(), call.span_context.trace_id());
    assert!(
        trace
            .iter()
            .any(|s| s.span_context.span_id() == from.span_id())
    );
}

#[test]
fn a_code_mode_sub_call_is_a_child_of_run_code() {
    exporter();
    let registry = Registry::new();
    let _t = registry.register(Echo).unwrap();
    let scope = registry.scope();
    let _code = dsh_code::CodeMode::new()
        .present_as(&scope, dsh_code::Mode::Both)
        .unwrap();
    let call = ToolCall::new(
        "code-1",
        "run_code",
        r#"{"code":"return await tools.echo({text: 'hi'});","description":"echo"}"#,
    )
    .with_agent(scope.id());
    let result = runtime().block_on(registry.execute(call));
    assert!(result.is_success(), "{}", result.text());
    let (outer, trace) = trace_of("code-1");
    assert_execute_tool(&outer, "run_code", "code-1");
    let sub = trace
        .iter()
        .find(|s| s.name == "execute_tool echo")
        .expect("the sub-call's span, in run_code's trace");
    // Under run_code's dispatch (its body), itself under run_code's span.
    let parent = trace
        .iter()
        .find(|s| s.span_context.span_id() == sub.parent_span_id)
        .expect("the sub-call's parent");
    assert_eq!(parent.name, "dispatch");
    assert_eq!(parent.parent_span_id, outer.span_context.span_id());
}
