//! Cooperative cancellation, fused tokens, the timeout wrapper.
//!
//! Deadlines here are short, but no assertion depends on how long anything takes: a
//! body that waits for cancellation can only be released by the deadline (or by the
//! test cancelling explicitly).

use crate::pipeline_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use dsh_runtime::hooks::{Accept, CallInfo, HookFuture, Next, Wrapper, post_execute_fn};
use dsh_runtime::json::Value;
use dsh_runtime::{
    DispatchOutcome, PipelineCode, Registry, TimeoutWrapper, ToolCall, ToolError,
    content::ContentBlock,
};
use pipeline_support::{Log, Probe, instrument};
use tokio_util::sync::CancellationToken;

fn call(name: &str) -> ToolCall {
    ToolCall::new("c", name, r#"{"text":"x"}"#)
}

/// A body that waits until its token is cancelled, logs it, and succeeds.
fn waits_for_cancel(name: &'static str, log: &Log) -> Probe {
    let l = log.clone();
    Probe::new(name, log).body(move |_, cx| {
        let l = l.clone();
        async move {
            cx.cancellation().cancelled().await;
            l.push("body saw cancellation");
            Ok(Value::from("finished late"))
        }
    })
}

#[tokio::test]
async fn timeout_wrapper_yields_tool_timeout_when_its_deadline_fires() {
    let registry = Registry::new();
    let log = Log::new();
    let _regs = instrument(&registry, &log);
    let _t = registry
        .register(waits_for_cancel("slow", &log).timeout_ms(20))
        .unwrap();
    let r = registry.execute(call("slow")).await;
    assert_eq!(r.code_str(), Some("TOOL_TIMEOUT"));
    assert_eq!(r.error_code(), Some(PipelineCode::ToolTimeout));
    assert_eq!(r.message(), Some("tool call timed out after 20ms"));
    assert_eq!(
        r.content(),
        &[ContentBlock::text("Error: tool call timed out after 20ms")]
    );
    assert!(
        serde_json::to_string(&r)
            .unwrap()
            .contains(r#""info":{"name":"ToolTimeoutError","code":"TOOL_TIMEOUT"}"#)
    );
    // The built-in wrapper is outside the user's wrappers; the body was awaited; the
    // timeout is a wrapper-authored failure, which passes post-execute.
    assert_eq!(
        log.take(),
        [
            "pre",
            "guard",
            "wrap",
            "body",
            "body saw cancellation",
            "render",
            "post",
            "finalize",
            "observe"
        ]
    );
}

#[tokio::test]
async fn a_timed_out_body_error_is_still_a_timeout() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry
        .register(
            Probe::new("slow", &log)
                .timeout_ms(10)
                .body(|_, cx| async move {
                    cx.cancellation().cancelled().await;
                    Err(ToolError::with_code("INTERRUPTED", "interrupted"))
                }),
        )
        .unwrap();
    let r = registry.execute(call("slow")).await;
    assert_eq!(r.code_str(), Some("TOOL_TIMEOUT"));
}

#[tokio::test]
async fn a_call_within_its_deadline_is_unaffected() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry
        .register(Probe::new("fast", &log).timeout_ms(600_000))
        .unwrap();
    let r = registry.execute(call("fast")).await;
    assert_eq!(*r.value().unwrap(), Value::from("x"));
}

#[tokio::test]
async fn a_caller_abort_is_not_a_timeout() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry
        .register(waits_for_cancel("slow", &log).timeout_ms(600_000))
        .unwrap();
    let mut c = call("slow");
    let token = c.cancellation().clone();
    let task = tokio::spawn({
        let registry = registry.clone();
        async move { registry.execute(c).await }
    });
    while !log.get().contains(&"body".to_string()) {
        tokio::task::yield_now().await;
    }
    token.cancel();
    let r = task.await.unwrap();
    assert_eq!(r.code_str(), Some("ABORTED"));
    assert_eq!(r.message(), Some("tool call aborted"));
}

#[tokio::test]
async fn timeouts_can_be_turned_off() {
    let registry = Registry::builder().timeouts(false).build();
    let log = Log::new();
    let _t = registry
        .register(
            Probe::new("t", &log)
                .timeout_ms(1)
                .body(|_, cx| async move {
                    for _ in 0..50 {
                        tokio::task::yield_now().await;
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(30)).await;
                    Ok(Value::from(if cx.is_cancelled() {
                        "cancelled"
                    } else {
                        "not cancelled"
                    }))
                }),
        )
        .unwrap();
    let r = registry.execute(call("t")).await;
    assert_eq!(*r.value().unwrap(), Value::from("not cancelled"));
}

/// Retries once after a timeout.
struct RetryTimeouts(Log);
impl Wrapper for RetryTimeouts {
    fn around<'a>(
        &'a self,
        _call: &'a CallInfo<'a>,
        next: Next<'a>,
    ) -> HookFuture<'a, Result<DispatchOutcome, ToolError>> {
        HookFuture::new(async move {
            let first = next.run().await?;
            if first.code_str() == Some("TOOL_TIMEOUT") {
                self.0.push("retry");
                return next.run().await;
            }
            Ok(first)
        })
    }
}

#[tokio::test]
async fn the_timeout_wrapper_can_be_placed_inside_a_retry() {
    let registry = Registry::builder().timeouts(false).build();
    let log = Log::new();
    let first = Arc::new(AtomicBool::new(true));
    let f = first.clone();
    let _t = registry
        .register(Probe::new("t", &log).timeout_ms(10).body(move |_, cx| {
            let first = f.swap(false, Ordering::SeqCst);
            async move {
                if first {
                    cx.cancellation().cancelled().await;
                }
                Ok(Value::from("second attempt"))
            }
        }))
        .unwrap();
    let _r = registry.add_wrapper(RetryTimeouts(log.clone()));
    let _w = registry.add_wrapper(TimeoutWrapper);
    let r = registry.execute(call("t")).await;
    assert_eq!(*r.value().unwrap(), Value::from("second attempt"));
    assert_eq!(
        log.take(),
        ["body", "render", "retry", "body", "render", "finalize"]
    );
}

/// Dispatches with an unrelated token it controls, and cancels it when told to.
struct Detach {
    token: CancellationToken,
}
impl Wrapper for Detach {
    fn around<'a>(
        &'a self,
        _call: &'a CallInfo<'a>,
        next: Next<'a>,
    ) -> HookFuture<'a, Result<DispatchOutcome, ToolError>> {
        let next = next.with_cancellation(self.token.clone());
        HookFuture::new(async move { next.run().await })
    }
}

#[tokio::test]
async fn a_replaced_token_cannot_detach_the_caller() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry.register(waits_for_cancel("slow", &log)).unwrap();
    let _w = registry.add_wrapper(Detach {
        token: CancellationToken::new(),
    });
    let mut c = call("slow");
    let caller = c.cancellation().clone();
    let task = tokio::spawn({
        let registry = registry.clone();
        async move { registry.execute(c).await }
    });
    while !log.get().contains(&"body".to_string()) {
        tokio::task::yield_now().await;
    }
    caller.cancel();
    let r = task.await.unwrap();
    assert_eq!(r.code_str(), Some("ABORTED"));
    assert!(log.get().contains(&"body saw cancellation".to_string()));
}

#[tokio::test]
async fn a_replaced_token_reaches_the_body() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry.register(waits_for_cancel("slow", &log)).unwrap();
    let token = CancellationToken::new();
    let _w = registry.add_wrapper(Detach {
        token: token.clone(),
    });
    let task = tokio::spawn({
        let registry = registry.clone();
        async move { registry.execute(call("slow")).await }
    });
    while !log.get().contains(&"body".to_string()) {
        tokio::task::yield_now().await;
    }
    token.cancel();
    let r = task.await.unwrap();
    // The body's (fused) token was cancelled when it returned: ABORTED.
    assert_eq!(r.code_str(), Some("ABORTED"));
    assert!(log.get().contains(&"body saw cancellation".to_string()));
}

#[tokio::test]
async fn an_already_cancelled_replacement_aborts_before_dispatch() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry.register(Probe::new("echo", &log)).unwrap();
    let token = CancellationToken::new();
    token.cancel();
    let _w = registry.add_wrapper(Detach { token });
    let r = registry.execute(call("echo")).await;
    assert_eq!(r.code_str(), Some("ABORTED_BEFORE_DISPATCH"));
    assert!(!log.get().contains(&"body".to_string()));
}

#[tokio::test]
async fn cancellation_only_replaces_a_success() {
    let registry = Registry::new();
    let log = Log::new();
    let _a = registry
        .register(Probe::new("fails", &log).body(|_, cx| async move {
            cx.cancellation().cancelled().await;
            Err(ToolError::with_code("FS_BUSY", "busy"))
        }))
        .unwrap();
    let _b = registry
        .register(
            Probe::new("bad_output", &log)
                .output(dsh_runtime::schema::Schema::integer())
                .body(|_, cx| async move {
                    cx.cancellation().cancelled().await;
                    Ok(Value::from("not an integer"))
                }),
        )
        .unwrap();
    for (name, code) in [("fails", "FS_BUSY"), ("bad_output", "INVALID_TOOL_OUTPUT")] {
        let mut c = call(name);
        let token = c.cancellation().clone();
        let task = tokio::spawn({
            let registry = registry.clone();
            async move { registry.execute(c).await }
        });
        while !log.get().contains(&"body".to_string()) {
            tokio::task::yield_now().await;
        }
        token.cancel();
        assert_eq!(task.await.unwrap().code_str(), Some(code), "{name}");
        log.take();
    }
}

#[tokio::test]
async fn a_post_execute_content_replacement_is_lost_on_abort() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry.register(Probe::new("echo", &log)).unwrap();
    let _p = registry.add_post_execute(post_execute_fn(|call, _| {
        call.cancellation().cancel();
        Some(
            Accept::content(vec![ContentBlock::text("replaced")])
                .with_context("kept")
                .into(),
        )
    }));
    let r = registry.execute(call("echo")).await;
    assert_eq!(r.code_str(), Some("ABORTED"));
    assert_eq!(
        r.content(),
        &[ContentBlock::text("Error: tool call aborted")]
    );
    assert_eq!(r.contexts(), ["kept"]);
}

#[tokio::test]
async fn a_started_body_is_awaited_to_completion() {
    let registry = Registry::new();
    let log = Log::new();
    let completed = Arc::new(AtomicBool::new(false));
    let dropped_early = Arc::new(AtomicBool::new(false));
    struct Sentinel(Arc<AtomicBool>, Arc<AtomicBool>);
    impl Drop for Sentinel {
        fn drop(&mut self) {
            if !self.0.load(Ordering::SeqCst) {
                self.1.store(true, Ordering::SeqCst);
            }
        }
    }
    let (c2, d2) = (completed.clone(), dropped_early.clone());
    let _t = registry
        .register(
            Probe::new("cleanup", &log)
                .timeout_ms(5)
                .body(move |_, cx| {
                    let sentinel = Sentinel(c2.clone(), d2.clone());
                    async move {
                        cx.cancellation().cancelled().await;
                        // Cleanup that takes a few polls after cancellation.
                        for _ in 0..10 {
                            tokio::task::yield_now().await;
                        }
                        sentinel.0.store(true, Ordering::SeqCst);
                        Ok(Value::from("cleaned up"))
                    }
                }),
        )
        .unwrap();
    let r = registry.execute(call("cleanup")).await;
    assert_eq!(r.code_str(), Some("TOOL_TIMEOUT"));
    assert!(completed.load(Ordering::SeqCst));
    assert!(!dropped_early.load(Ordering::SeqCst));
}

#[tokio::test]
async fn the_body_cannot_cancel_the_caller() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry
        .register(Probe::new("self_cancel", &log).body(|_, cx| async move {
            cx.cancellation().cancel();
            Ok(Value::from("done"))
        }))
        .unwrap();
    let mut c = call("self_cancel");
    let caller = c.cancellation().clone();
    let r = registry.execute(c).await;
    assert!(!caller.is_cancelled());
    // The body's own token was cancelled when it returned.
    assert_eq!(r.code_str(), Some("ABORTED"));
}
