//! A deadline that restarts on progress (`#[tool(timeout_ms = N,
//! timeout_restarts_on_progress)]`), on Tokio's paused clock: a call that keeps reporting
//! outlives `timeout_ms`, one that goes quiet for longer times out, the same call without
//! the flag times out, and the reports still reach the caller's reporter.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use dsh_runtime::{
    ProgressReporter, Registry, TaskSupport, Tool, ToolCall, ToolContext, ToolError, tool,
    with_progress,
};
use serde_json::json;

/// Wait `gap_ms` then report, `steps` times; a 1 s deadline that restarts on progress.
#[tool(timeout_ms = 1000, timeout_restarts_on_progress)]
async fn steady(cx: ToolContext, steps: u32, gap_ms: u64) -> Result<u32, ToolError> {
    reporting(&cx, steps, gap_ms).await
}

/// The same work under a fixed 1 s deadline.
#[tool(timeout_ms = 1000, task = "optional")]
async fn fixed(cx: ToolContext, steps: u32, gap_ms: u64) -> Result<u32, ToolError> {
    reporting(&cx, steps, gap_ms).await
}

async fn reporting(cx: &ToolContext, steps: u32, gap_ms: u64) -> Result<u32, ToolError> {
    for step in 1..=steps {
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(gap_ms)) => {}
            () = cx.cancellation().cancelled() => return Err(ToolError::new("cancelled")),
        }
        cx.report_progress(f64::from(step), Some(f64::from(steps)), None);
    }
    Ok(steps)
}

fn registry() -> (Registry, Vec<dsh_runtime::RegistrationHandle>) {
    let registry = Registry::new();
    let regs = vec![
        registry.register(Steady).unwrap(),
        registry.register(Fixed).unwrap(),
    ];
    (registry, regs)
}

fn call(name: &str, steps: u32, gap_ms: u64) -> ToolCall {
    ToolCall::new(
        "1",
        name,
        json!({"steps": steps, "gap_ms": gap_ms}).to_string(),
    )
}

#[test]
fn the_attributes_set_the_definition() {
    let steady = Steady.definition();
    assert!(steady.timeout_restarts_on_progress);
    assert_eq!(steady.task_support, TaskSupport::Forbidden);
    let fixed = Fixed.definition();
    assert!(!fixed.timeout_restarts_on_progress);
    assert_eq!(fixed.task_support, TaskSupport::Optional);
    assert_eq!(fixed.task_support.as_str(), "optional");
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_call_that_keeps_reporting_outlives_its_timeout() {
    let (registry, _regs) = registry();
    // 5 reports 600 ms apart: 3 s in all, never 1 s without a report.
    let r = registry.execute(call("steady", 5, 600)).await;
    assert!(!r.is_error(), "{}", r.text());
    assert_eq!(r.text(), "5");
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_call_quiet_for_longer_than_its_timeout_times_out() {
    let (registry, _regs) = registry();
    let r = registry.execute(call("steady", 2, 1500)).await;
    assert_eq!(r.code_str(), Some("TOOL_TIMEOUT"), "{}", r.text());
    assert!(r.text().contains("timed out after 1000ms"), "{}", r.text());
    // Quiet after two reports: the deadline counts from the last one.
    let started = tokio::time::Instant::now();
    let r = registry.execute(call("steady", 3, 600)).await;
    assert!(!r.is_error(), "{}", r.text());
    let r = registry
        .execute(ToolCall::new(
            "2",
            "steady",
            json!({"steps": 2, "gap_ms": 2500}).to_string(),
        ))
        .await;
    assert_eq!(r.code_str(), Some("TOOL_TIMEOUT"));
    // 1.8 s for the first call, then 1 s until the second one's deadline.
    assert!(started.elapsed() >= Duration::from_millis(2800));
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn without_the_flag_the_deadline_is_fixed() {
    let (registry, _regs) = registry();
    let r = registry.execute(call("fixed", 5, 600)).await;
    assert_eq!(r.code_str(), Some("TOOL_TIMEOUT"), "{}", r.text());
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn the_reports_still_reach_the_callers_reporter() {
    let (registry, _regs) = registry();
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = seen.clone();
    let reporter = ProgressReporter::new(move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
    });
    let r = with_progress(reporter, registry.execute(call("steady", 4, 700))).await;
    assert!(!r.is_error(), "{}", r.text());
    assert_eq!(seen.load(Ordering::SeqCst), 4);
}
