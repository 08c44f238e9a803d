//! Pipeline stages 6 to 10 (see `dsh_runtime::pipeline`): around-dispatch wrappers,
//! post-execute, finalize, observers.

use crate::pipeline_support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use dsh_runtime::hooks::{
    Accept, Block, CallInfo, HookFuture, Next, PostDecision, Wrapper, observer_fn, post_execute_fn,
};
use dsh_runtime::json::Value;
use dsh_runtime::schema::Schema;
use dsh_runtime::{
    DispatchOutcome, Registry, ToolCall, ToolError, ToolResult, content::ContentBlock,
};
use pipeline_support::{Log, Probe, instrument, v};

fn call(name: &str) -> ToolCall {
    ToolCall::new("c", name, r#"{"text":"x"}"#)
}

/// Retries once when the first attempt fails.
struct Retry(Log);
impl Wrapper for Retry {
    fn around<'a>(
        &'a self,
        _call: &'a CallInfo<'a>,
        next: Next<'a>,
    ) -> HookFuture<'a, Result<DispatchOutcome, ToolError>> {
        HookFuture::new(async move {
            let first = next.run().await?;
            if first.is_success() {
                return Ok(first);
            }
            self.0.push("retry");
            next.run().await
        })
    }
}

#[tokio::test]
async fn a_wrapper_may_call_next_more_than_once() {
    let registry = Registry::new();
    let log = Log::new();
    let attempts = Arc::new(AtomicUsize::new(0));
    let a = attempts.clone();
    let _t = registry
        .register(Probe::new("flaky", &log).body(move |_, _| {
            let n = a.fetch_add(1, Ordering::SeqCst);
            async move {
                if n == 0 {
                    Err(ToolError::with_code("TRANSIENT", "try again"))
                } else {
                    Ok(Value::from("second time lucky"))
                }
            }
        }))
        .unwrap();
    let _w = registry.add_wrapper(Retry(log.clone()));
    let r = registry.execute(call("flaky")).await;
    assert_eq!(*r.value().unwrap(), Value::from("second time lucky"));
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
    assert_eq!(log.take(), ["body", "retry", "body", "render", "finalize"]);
}

#[tokio::test]
async fn wrappers_nest_in_registration_order() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry.register(Probe::new("echo", &log)).unwrap();
    let _a = registry.add_wrapper(pipeline_support::LogWrapper(log.clone(), "outer"));
    let _b = registry.add_wrapper(pipeline_support::LogWrapper(log.clone(), "inner"));
    registry.execute(call("echo")).await;
    assert_eq!(log.take(), ["outer", "inner", "body", "render", "finalize"]);
}

/// Ignores the body and returns its own value.
struct Author(Value);
impl Wrapper for Author {
    fn around<'a>(
        &'a self,
        _call: &'a CallInfo<'a>,
        _next: Next<'a>,
    ) -> HookFuture<'a, Result<DispatchOutcome, ToolError>> {
        HookFuture::ready(Ok(DispatchOutcome::success(self.0.clone())))
    }
}

#[tokio::test]
async fn a_wrapper_authored_success_is_revalidated_and_rendered_again() {
    let (registry, log) = (Registry::new(), Log::new());
    let mut regs = instrument(&registry, &log);
    regs.push(
        registry
            .register(
                Probe::new("echo", &log)
                    .render(|_, v| Ok(vec![ContentBlock::text(format!("rendered {v}"))])),
            )
            .unwrap(),
    );
    let w = registry.add_wrapper(Author(Value::from("from the wrapper")));
    let r = registry.execute(call("echo")).await;
    assert_eq!(*r.value().unwrap(), Value::from("from the wrapper"));
    assert_eq!(
        r.content(),
        &[ContentBlock::text(r#"rendered "from the wrapper""#)]
    );
    assert_eq!(
        log.take(),
        [
            "pre", "guard", "wrap", "render", "post", "finalize", "observe"
        ]
    );
    w.unregister();

    // A wrapper success that fails the output schema is a final error: post is skipped.
    let _w = registry.add_wrapper(Author(Value::from(42u64)));
    let r = registry.execute(call("echo")).await;
    assert_eq!(r.code_str(), Some("INVALID_TOOL_OUTPUT"));
    assert_eq!(
        r.message(),
        Some(r#"tool "echo" returned invalid output: "value" must be a string"#)
    );
    assert_eq!(log.take(), ["pre", "guard", "wrap", "finalize", "observe"]);
}

/// Returns a failure of its own, with a code.
struct Refuse;
impl Wrapper for Refuse {
    fn around<'a>(
        &'a self,
        _call: &'a CallInfo<'a>,
        _next: Next<'a>,
    ) -> HookFuture<'a, Result<DispatchOutcome, ToolError>> {
        HookFuture::ready(Ok(DispatchOutcome::failure(ToolError::with_code(
            "RATE_LIMITED",
            "too many calls",
        ))))
    }
}

#[tokio::test]
async fn a_wrapper_authored_failure_is_kept_and_passes_post() {
    let (registry, log) = (Registry::new(), Log::new());
    let _regs = instrument(&registry, &log);
    let _t = registry.register(Probe::new("echo", &log)).unwrap();
    let _w = registry.add_wrapper(Refuse);
    let r = registry.execute(call("echo")).await;
    assert_eq!(
        (r.code_str(), r.message()),
        (Some("RATE_LIMITED"), Some("too many calls"))
    );
    assert_eq!(r.content(), &[ContentBlock::text("Error: too many calls")]);
    assert_eq!(
        log.take(),
        ["pre", "guard", "wrap", "post", "finalize", "observe"]
    );
}

/// Returns the canonical outcome of its first attempt after a second one.
struct KeepFirst;
impl Wrapper for KeepFirst {
    fn around<'a>(
        &'a self,
        _call: &'a CallInfo<'a>,
        next: Next<'a>,
    ) -> HookFuture<'a, Result<DispatchOutcome, ToolError>> {
        HookFuture::new(async move {
            let first = next.run().await?;
            let _second = next.run().await?;
            Ok(first)
        })
    }
}

#[tokio::test]
async fn a_canonical_outcome_passes_through_unchanged() {
    let registry = Registry::new();
    let log = Log::new();
    let n = Arc::new(AtomicUsize::new(0));
    let n2 = n.clone();
    let _t = registry
        .register(Probe::new("count", &log).body(move |_, _| {
            let i = n2.fetch_add(1, Ordering::SeqCst);
            async move { Ok(Value::from(format!("attempt {i}"))) }
        }))
        .unwrap();
    let _w = registry.add_wrapper(KeepFirst);
    let r = registry.execute(call("count")).await;
    assert_eq!(*r.value().unwrap(), Value::from("attempt 0"));
    // The canonical result is not rendered again.
    assert_eq!(log.take(), ["body", "render", "body", "render", "finalize"]);
}

#[tokio::test]
async fn post_execute_sees_every_result_that_reaches_it() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry.register(Probe::new("echo", &log)).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let _p = registry.add_post_execute(post_execute_fn(move |call, result| {
        s.lock().unwrap().push((
            call.name().to_string(),
            result.is_error(),
            result.code_str().map(str::to_string),
        ));
        None
    }));
    registry.execute(call("echo")).await;
    registry.execute(call("nope")).await;
    registry.execute(ToolCall::new("c", "echo", "{}")).await;
    assert_eq!(
        *seen.lock().unwrap(),
        [
            ("echo".to_string(), false, None),
            ("nope".to_string(), true, Some("UNKNOWN_TOOL".to_string())),
            ("echo".to_string(), true, Some("INVALID_ARGS".to_string())),
        ]
    );
}

#[tokio::test]
async fn post_execute_content_replacement_keeps_value_and_meta() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry
        .register(Probe::new("echo", &log).meta(|_, _| Ok(Some(Value::from("m")))))
        .unwrap();
    let _p = registry.add_post_execute(post_execute_fn(|_, _| {
        Some(Accept::content(vec![ContentBlock::text("redacted")]).into())
    }));
    let r = registry.execute(call("echo")).await;
    assert_eq!(*r.value().unwrap(), Value::from("x"));
    assert_eq!(**r.meta().unwrap(), Value::from("m"));
    assert_eq!(r.content(), &[ContentBlock::text("redacted")]);
}

#[tokio::test]
async fn post_execute_content_replacement_applies_to_failures() {
    let registry = Registry::new();
    let _p = registry.add_post_execute(post_execute_fn(|_, _| {
        Some(Accept::content(vec![ContentBlock::text("try another tool")]).into())
    }));
    let r = registry.execute(call("nope")).await;
    assert_eq!(r.code_str(), Some("UNKNOWN_TOOL"));
    assert_eq!(r.content(), &[ContentBlock::text("try another tool")]);
    // The message is the failure's own, whatever the content became (the registry keeps
    // it once, in its `Error: ` block, until that block is replaced).
    assert_eq!(
        r.message(),
        Some(r#"unknown tool "nope"; no tool is available"#)
    );
    let json = r.to_json();
    assert_eq!(
        json.get("error").and_then(|e| e.get("message")),
        Some(&Value::from(r#"unknown tool "nope"; no tool is available"#))
    );
    let serialized = serde_json::to_value(&r).unwrap();
    assert_eq!(
        serialized["error"]["message"],
        r#"unknown tool "nope"; no tool is available"#
    );
    assert_eq!(serialized["content"][0]["text"], "try another tool");
}

#[tokio::test]
async fn a_failure_keeps_its_message_when_its_content_is_finalized() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry
        .register(
            Probe::new("echo", &log)
                .body(|_, _| async { Err(ToolError::with_code("E_BOOM", "boom")) })
                .finalize(|_, _| Some(vec![ContentBlock::text("finalized")])),
        )
        .unwrap();
    let r = registry.execute(call("echo")).await;
    assert_eq!(r.code_str(), Some("E_BOOM"));
    assert_eq!(r.message(), Some("boom"));
    assert_eq!(r.content(), &[ContentBlock::text("finalized")]);

    // Without a replacement the message and the `Error: ` block agree.
    let r = registry.execute(call("missing")).await;
    assert_eq!(
        r.message(),
        Some(r#"unknown tool "missing"; available tools: "echo""#)
    );
    assert_eq!(
        r.content(),
        &[ContentBlock::text(
            r#"Error: unknown tool "missing"; available tools: "echo""#
        )]
    );
}

#[tokio::test]
async fn post_execute_value_replacement_is_revalidated_rendered_and_meta_recomputed() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry
        .register(
            Probe::new("echo", &log)
                .render(|_, v| Ok(vec![ContentBlock::text(format!("<{v}>"))]))
                .meta(|_, v| Ok(Some(v.clone()))),
        )
        .unwrap();
    let p = registry.add_post_execute(post_execute_fn(|_, _| {
        Some(Accept::value(Value::from("replaced")).into())
    }));
    let r = registry.execute(call("echo")).await;
    assert_eq!(*r.value().unwrap(), Value::from("replaced"));
    assert_eq!(r.content(), &[ContentBlock::text(r#"<"replaced">"#)]);
    assert_eq!(**r.meta().unwrap(), Value::from("replaced"));
    assert_eq!(
        log.take(),
        ["body", "render", "meta", "render", "meta", "finalize"]
    );
    p.unregister();

    let _p =
        registry.add_post_execute(post_execute_fn(|_, _| Some(Accept::value(v("[1]")).into())));
    let r = registry.execute(call("echo")).await;
    assert_eq!(r.code_str(), Some("INVALID_TOOL_OUTPUT"));
    assert_eq!(
        r.message(),
        Some(r#"tool "echo" returned invalid output: "value" must be a string"#)
    );
}

#[tokio::test]
async fn post_execute_accept_errors() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry.register(Probe::new("echo", &log)).unwrap();
    // Replacing both the value and the content is unrepresentable (`Replacement`).
    let _value_on_failure = registry.add_post_execute(post_execute_fn(|_, _| {
        Some(Accept::value(Value::from("v")).into())
    }));
    let r = registry.execute(ToolCall::new("c", "echo", "{}")).await;
    assert_eq!(
        r.message(),
        Some("tools/post-execute cannot replace the value of a failed result")
    );
}

#[tokio::test]
async fn contexts_are_deferred_ones_then_the_decisions() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry
        .register(Probe::new("echo", &log).body(|_, cx| async move {
            cx.defer_context("deferred 1");
            cx.defer_context("deferred 2");
            Ok(Value::from("ok"))
        }))
        .unwrap();
    let _p = registry.add_post_execute(post_execute_fn(|_, _| {
        Some(Accept::new().with_context("from post").into())
    }));
    let r = registry.execute(call("echo")).await;
    assert_eq!(r.contexts(), ["deferred 1", "deferred 2", "from post"]);
}

#[tokio::test]
async fn deferred_contexts_are_kept_on_failures_and_aborts() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry
        .register(Probe::new("fails", &log).body(|_, cx| async move {
            cx.defer_context("note");
            cx.conclude_turn();
            Err(ToolError::new("failed"))
        }))
        .unwrap();
    let r = registry.execute(call("fails")).await;
    assert_eq!(r.contexts(), ["note"]);
    // concludes_turn is for successes only.
    assert!(!r.concludes_turn());
}

#[tokio::test]
async fn block_turns_a_result_into_a_failure_with_feedback() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry
        .register(Probe::new("echo", &log).body(|_, cx| async move {
            cx.defer_context("dropped on block");
            Ok(Value::from("secret"))
        }))
        .unwrap();
    let b = registry.add_post_execute(post_execute_fn(|_, _| {
        Some(
            Block::new(vec![
                ContentBlock::text("output withheld"),
                ContentBlock::image("AAAA", "image/png"),
                ContentBlock::text("ask the user"),
            ])
            .with_context("policy note")
            .into(),
        )
    }));
    let r = registry.execute(call("echo")).await;
    assert!(r.is_error() && r.value().is_none());
    assert_eq!(r.code_str(), Some("RESULT_BLOCKED"));
    assert_eq!(
        r.message(),
        Some("output withheld\n[image content]\nask the user")
    );
    assert_eq!(r.content().len(), 3);
    assert_eq!(r.content()[0], ContentBlock::text("output withheld"));
    assert_eq!(r.contexts(), ["policy note"]);
    b.unregister();

    let _b = registry.add_post_execute(post_execute_fn(|_, _| Some(PostDecision::block(vec![]))));
    let r = registry.execute(call("echo")).await;
    assert_eq!(
        r.message(),
        Some("tool result blocked by post-execute policy")
    );
    assert_eq!(
        r.content(),
        &[ContentBlock::text(
            "Error: tool result blocked by post-execute policy"
        )]
    );
}

#[tokio::test]
async fn a_throwing_post_execute_hook_is_a_final_error() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry.register(Probe::new("echo", &log)).unwrap();
    let _p = registry.add_post_execute(post_execute_fn(|_, _| panic!("post bug")));
    let l = log.clone();
    let _o = registry.add_observer(observer_fn(move |_, r| {
        l.push(format!("observe {}", r.message().unwrap_or("ok")))
    }));
    let r = registry.execute(call("echo")).await;
    assert_eq!(r.message(), Some("post-execute hook panicked: post bug"));
    assert_eq!(r.code_str(), Some("TOOL_PANICKED"));
    assert_eq!(
        log.take(),
        [
            "body",
            "render",
            "finalize",
            "observe post-execute hook panicked: post bug"
        ]
    );
}

#[tokio::test]
async fn finalize_content_replaces_content_once() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry
        .register(Probe::new("echo", &log).finalize(|args, content| {
            let mut c = content.to_vec();
            c.push(ContentBlock::text(format!("args were {args}")));
            Some(c)
        }))
        .unwrap();
    let r = registry.execute(call("echo")).await;
    assert_eq!(
        r.content(),
        &[
            ContentBlock::text("x"),
            ContentBlock::text(r#"args were {"text":"x"}"#)
        ]
    );
    // Failures are finalized too.
    let r = registry.execute(ToolCall::new("c", "echo", "{}")).await;
    assert_eq!(r.content().len(), 2);
    assert_eq!(log.take().iter().filter(|s| *s == "finalize").count(), 2);
}

#[tokio::test]
async fn a_panicking_finalizer_turns_the_outcome_into_an_error() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry
        .register(Probe::new("echo", &log).finalize(|_, _| panic!("finalizer bug")))
        .unwrap();
    let r = registry.execute(call("echo")).await;
    assert!(r.is_error());
    assert_eq!(
        r.message(),
        Some("finalize_content panicked: finalizer bug")
    );
    assert_eq!(r.code_str(), Some("TOOL_PANICKED"));
    assert_eq!(
        r.content(),
        &[ContentBlock::text(
            "Error: finalize_content panicked: finalizer bug"
        )]
    );
}

#[tokio::test]
async fn the_finalizer_is_captured_at_entry() {
    let registry = Registry::new();
    let log = Log::new();
    let old = registry
        .register(
            Probe::new("t", &log).finalize(|_, _| Some(vec![ContentBlock::text("old finalizer")])),
        )
        .unwrap();
    let slot = Arc::new(Mutex::new(Some(old)));
    let (s, r2, l2) = (slot.clone(), registry.clone(), log.clone());
    // During policy, swap the registration for a new tool of the same name.
    let _g = registry.add_guard(dsh_runtime::hooks::guard_fn(move |_| {
        if let Some(old) = s.lock().unwrap().take() {
            old.unregister();
            let _ = r2
                .register(
                    Probe::new("t", &l2)
                        .body(|_, _| async { Ok(Value::from("new body")) })
                        .finalize(|_, _| Some(vec![ContentBlock::text("new finalizer")])),
                )
                .unwrap();
        }
        None
    }));
    let r = registry.execute(call("t")).await;
    // The new tool's body ran (re-resolved at dispatch), the old finalizer applied.
    assert_eq!(*r.value().unwrap(), Value::from("new body"));
    assert_eq!(r.content(), &[ContentBlock::text("old finalizer")]);
}

#[tokio::test]
async fn observers_see_the_frozen_final_result_and_panics_are_contained() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry
        .register(Probe::new("echo", &log).finalize(|_, _| Some(vec![ContentBlock::text("final")])))
        .unwrap();
    let seen: Arc<Mutex<Vec<ToolResult>>> = Arc::default();
    let s = seen.clone();
    let _a = registry.add_observer(observer_fn(|_, _| panic!("observer bug")));
    let _b = registry.add_observer(observer_fn(move |_, r| s.lock().unwrap().push(r.clone())));
    let r = registry.execute(call("echo")).await;
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert!(ToolResult::ptr_eq(&seen[0], &r));
    assert_eq!(r.content(), &[ContentBlock::text("final")]);
    assert!(r.is_success());
}

#[tokio::test]
async fn hooks_see_the_validated_frozen_arguments_and_identity() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry.register(Probe::new("echo", &log)).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let _g = registry.add_guard(dsh_runtime::hooks::guard_fn(move |call| {
        s.lock().unwrap().push((
            call.call_id().to_string(),
            call.execution().root_call_id.to_string(),
            (**call.arguments()).clone(),
            call.definition().map(|d| d.name.to_string()),
        ));
        None
    }));
    registry
        .execute(ToolCall::new("c9", "echo", r#"{"text":"x","n":null}"#).with_root_call_id("root"))
        .await;
    assert_eq!(
        *seen.lock().unwrap(),
        [(
            "c9".to_string(),
            "root".to_string(),
            v(r#"{"text":"x","n":null}"#),
            Some("echo".to_string())
        )]
    );
}

#[tokio::test]
async fn wrapper_failing_output_schema_for_a_different_output_kind() {
    // Output schema of a closed object: a wrapper value with an undeclared key is
    // reported with the `value.` prefix.
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry
        .register(
            Probe::new("obj", &log)
                .output(Schema::closed_object(vec![]))
                .body(|_, _| async { Ok(pipeline_support::v("{}")) }),
        )
        .unwrap();
    let _w = registry.add_wrapper(Author(v(r#"{"k":1}"#)));
    let r = registry.execute(call("obj")).await;
    assert_eq!(
        r.message(),
        Some(
            r#"tool "obj" returned invalid output: "value.k" is not a declared property (additionalProperties: false)"#
        )
    );
}
