//! Every row of the outcome table (the `PipelineCode` docs and PIPELINE.md), with the exact code, message, content,
//! and which stages ran.

use crate::pipeline_support;

use dsh_runtime::hooks::{
    Approval, ApprovalHandler, ApprovalRequest, CallInfo, Guard, HookFuture, Next, PreDecision,
    PreExecute, PreNext, Wrapper, approval_fn, guard_fn, pre_execute_fn,
};
use dsh_runtime::json::Value;
use dsh_runtime::schema::Schema;
use dsh_runtime::{
    DispatchOutcome, PipelineCode, Registry, ToolCall, ToolError, ToolResult, content::ContentBlock,
};
use pipeline_support::{Log, Probe, instrument, v};
use std::sync::{Arc, Mutex};

fn failure(r: &ToolResult) -> (Option<&str>, &str, Vec<String>) {
    assert!(r.is_error(), "expected a failure, got {r:?}");
    assert!(r.value().is_none());
    (
        r.code_str(),
        r.message().unwrap(),
        r.content()
            .iter()
            .map(|b| b.as_text().unwrap().to_string())
            .collect(),
    )
}

fn setup() -> (Registry, Log, Vec<dsh_runtime::RegistrationHandle>) {
    let registry = Registry::new();
    let log = Log::new();
    let mut regs = instrument(&registry, &log);
    regs.push(registry.register(Probe::new("echo", &log)).unwrap());
    (registry, log, regs)
}

#[tokio::test]
async fn success_runs_every_stage_in_order() {
    let (registry, log, _regs) = setup();
    let r = registry
        .execute(ToolCall::new("c1", "echo", r#"{"text":"hi"}"#))
        .await;
    assert!(r.is_success());
    assert_eq!(*r.value().unwrap(), v(r#""hi""#));
    assert_eq!(r.content(), &[ContentBlock::text("hi")]);
    assert_eq!(r.code_str(), None);
    assert_eq!(
        log.take(),
        [
            "pre", "guard", "wrap", "body", "render", "post", "finalize", "observe"
        ]
    );
}

/// The numbered stages of a Markdown table (`| 4 | **pre-execute** hooks ...`): number
/// and the first bold word, in order. `prefix` is what precedes each row (`//! ` in
/// rustdoc).
fn stage_table(text: &str, prefix: &str) -> Vec<(u32, String)> {
    text.lines()
        .filter_map(|line| {
            let row = line.strip_prefix(prefix)?.strip_prefix("| ")?;
            let (number, rest) = row.split_once(" | ")?;
            let number: u32 = number.parse().ok()?;
            let name = rest.strip_prefix("**")?.split("**").next()?;
            Some((number, name.to_string()))
        })
        .collect()
}

#[tokio::test]
async fn one_numbering_of_the_stages_in_docs_and_trace() {
    let pipeline_md = stage_table(include_str!("../../PIPELINE.md"), "");
    let rustdoc = stage_table(include_str!("../../src/lib.rs"), "//! ");
    let expected: Vec<(u32, String)> = [
        "resolve",
        "snapshot",
        "validate",
        "pre-execute",
        "guards",
        "wrappers",
        "body",
        "output",
        "post-execute",
        "finalize",
    ]
    .iter()
    .zip(1..)
    .map(|(name, n)| (n, name.to_string()))
    .collect();
    assert_eq!(pipeline_md, expected, "PIPELINE.md");
    assert_eq!(rustdoc, expected, "the crate docs (lib.rs)");

    // The trace of a successful call, each event mapped to its documented stage: the
    // stages run in their documented order.
    let stage_of = |event: &str| -> u32 {
        let name = match event {
            "pre" => "pre-execute",
            "guard" => "guards",
            "wrap" => "wrappers",
            "body" => "body",
            "render" => "output",
            "post" => "post-execute",
            "finalize" | "observe" => "finalize",
            other => panic!("unmapped event {other}"),
        };
        expected.iter().find(|(_, n)| n == name).unwrap().0
    };
    let (registry, log, _regs) = setup();
    let r = registry
        .execute(ToolCall::new("c1", "echo", r#"{"text":"hi"}"#))
        .await;
    assert!(r.is_success());
    let stages: Vec<u32> = log.take().iter().map(|e| stage_of(e)).collect();
    assert_eq!(stages, [4, 5, 6, 7, 8, 9, 10, 10]);
}

#[test]
fn every_error_code_is_in_both_tables() {
    let pipeline_md = include_str!("../../PIPELINE.md");
    let rustdoc = include_str!("../../src/error_code.rs");
    for code in PipelineCode::ALL {
        let row = format!("| `{}` | `{}` |", code.as_str(), code.error_name());
        assert!(pipeline_md.contains(&row), "PIPELINE.md lacks {row}");
        assert!(
            rustdoc.contains(&format!("/// {row}")),
            "PipelineCode docs lack {row}"
        );
        assert_eq!(code.as_str().parse::<PipelineCode>(), Ok(code));
    }
}

#[tokio::test]
async fn non_lossless_arguments_go_straight_to_finalize_and_observers() {
    let (registry, log, _regs) = setup();
    let r = registry
        .execute(ToolCall::new("c1", "echo", r#"{"text": "#))
        .await;
    let (code, message, content) = failure(&r);
    assert_eq!(code, Some("INVALID_ARGS"));
    assert_eq!(
        message,
        "arguments are not valid JSON: unexpected end of input at arguments.text (line 1, column 10)"
    );
    assert_eq!(content, [format!("Error: {message}")]);
    assert_eq!(log.take(), ["finalize", "observe"]);

    // Each kind of snapshot failure has its own plain first sentence.
    for (text, first) in [
        (
            r#"{"text":"a","text":"b"}"#,
            "arguments have a duplicate key: ",
        ),
        (
            r#"{"text":"a","n":-0}"#,
            "arguments are not lossless JSON: ",
        ),
        (
            r#"{"text":"a","n":12345678901234567890123}"#,
            "arguments are not lossless JSON: ",
        ),
        ("[1,2", "arguments are not valid JSON: "),
    ] {
        let r = registry.execute(ToolCall::new("c", "echo", text)).await;
        assert_eq!(r.code_str(), Some("INVALID_ARGS"), "{text}");
        assert_eq!(
            r.error_code(),
            Some(dsh_runtime::PipelineCode::InvalidArgs),
            "{text}"
        );
        let message = r.message().unwrap();
        assert!(message.starts_with(first), "{text}: {message}");
        assert_eq!(log.take(), ["finalize", "observe"]);
    }

    // A serde_json value holding -0.0 is not lossless either.
    let r = registry
        .execute(ToolCall::new(
            "c2",
            "echo",
            serde_json::json!({ "text": "x", "n": -0.0 }),
        ))
        .await;
    assert_eq!(r.code_str(), Some("INVALID_ARGS"));
    assert!(
        r.message()
            .unwrap()
            .starts_with("arguments are not lossless JSON: "),
        "{:?}",
        r.message()
    );
    assert_eq!(log.take(), ["finalize", "observe"]);
}

#[tokio::test]
async fn non_lossless_arguments_outrank_a_pre_aborted_token_and_an_unknown_name() {
    let (registry, log, _regs) = setup();
    let mut call = ToolCall::new("c1", "nope", "[1,");
    call.cancellation().cancel();
    let r = registry.execute(call).await;
    assert_eq!(r.code_str(), Some("INVALID_ARGS"));
    assert!(
        r.message()
            .unwrap()
            .starts_with("arguments are not valid JSON: ")
    );
    // Unknown tool: no finalizer was captured.
    assert_eq!(log.take(), ["observe"]);
}

#[tokio::test]
async fn observers_see_an_execution_without_arguments_after_a_snapshot_failure() {
    let registry = Registry::new();
    let seen = Arc::new(Mutex::new(None));
    let s = seen.clone();
    let _o = registry.add_observer(dsh_runtime::hooks::observer_fn(move |call, _| {
        *s.lock().unwrap() = Some((
            call.execution().has_arguments(),
            (**call.arguments()).clone(),
        ));
    }));
    registry.execute(ToolCall::new("c1", "x", "{")).await;
    assert_eq!(*seen.lock().unwrap(), Some((false, Value::Null)));
    registry.execute(ToolCall::new("c2", "x", "{}")).await;
    assert_eq!(*seen.lock().unwrap(), Some((true, v("{}"))));
}

#[tokio::test]
async fn pre_aborted_call_is_aborted_before_dispatch_without_post() {
    let (registry, log, _regs) = setup();
    let mut call = ToolCall::new("c1", "echo", r#"{"text":"hi"}"#);
    call.cancellation().cancel();
    let r = registry.execute(call).await;
    let (code, message, content) = failure(&r);
    assert_eq!(code, Some("ABORTED_BEFORE_DISPATCH"));
    assert_eq!(r.error_code(), Some(PipelineCode::AbortedBeforeDispatch));
    assert_eq!(message, "tool call aborted before dispatch");
    assert_eq!(content, ["Error: tool call aborted before dispatch"]);
    assert_eq!(log.take(), ["finalize", "observe"]);
}

#[tokio::test]
async fn abort_during_policy_is_aborted_before_dispatch_through_post() {
    let (registry, log, _regs) = setup();
    // A guard registered after the logging guard aborts the caller's token and allows.
    let _g = registry.add_guard(guard_fn(|call| {
        call.cancellation().cancel();
        None
    }));
    let r = registry
        .execute(ToolCall::new("c1", "echo", r#"{"text":"hi"}"#))
        .await;
    assert_eq!(r.code_str(), Some("ABORTED_BEFORE_DISPATCH"));
    assert_eq!(r.message(), Some("tool call aborted before dispatch"));
    assert_eq!(
        log.take(),
        ["pre", "guard", "wrap", "post", "finalize", "observe"]
    );
}

#[tokio::test]
async fn pre_execute_deny_is_policy_denied_through_post() {
    let (registry, log, _regs) = setup();
    let _d = registry.add_pre_execute(pre_execute_fn(|_| Some(PreDecision::deny("not today"))));
    let r = registry
        .execute(ToolCall::new("c1", "echo", r#"{"text":"hi"}"#))
        .await;
    let (code, message, content) = failure(&r);
    assert_eq!(code, Some("POLICY_DENIED"));
    assert_eq!(message, "not today");
    assert_eq!(content, ["Error: not today"]);
    assert_eq!(log.take(), ["pre", "post", "finalize", "observe"]);
}

#[tokio::test]
async fn deny_with_caller_aborted_is_aborted_before_dispatch_through_post() {
    let (registry, log, _regs) = setup();
    let _d = registry.add_pre_execute(pre_execute_fn(|call| {
        call.cancellation().cancel();
        Some(PreDecision::deny("no"))
    }));
    let r = registry
        .execute(ToolCall::new("c1", "echo", r#"{"text":"hi"}"#))
        .await;
    assert_eq!(r.code_str(), Some("ABORTED_BEFORE_DISPATCH"));
    assert_eq!(log.take(), ["pre", "post", "finalize", "observe"]);
}

#[tokio::test]
async fn first_pre_execute_decision_short_circuits_the_waterfall() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry.register(Probe::new("echo", &log)).unwrap();
    let (a, b) = (log.clone(), log.clone());
    let _p1 = registry.add_pre_execute(pre_execute_fn(move |_| {
        a.push("p1");
        Some(PreDecision::Allow)
    }));
    let _p2 = registry.add_pre_execute(pre_execute_fn(move |_| {
        b.push("p2");
        Some(PreDecision::deny("p2 denies"))
    }));
    let r = registry
        .execute(ToolCall::new("c", "echo", r#"{"text":"x"}"#))
        .await;
    assert!(r.is_success());
    assert_eq!(log.take(), ["p1", "body", "render", "finalize"]);
}

/// A listener that calls `next` and overrides what the later ones decided.
struct Override;
impl PreExecute for Override {
    fn pre_execute<'a>(
        &'a self,
        _call: &'a CallInfo<'a>,
        next: PreNext<'a>,
    ) -> HookFuture<'a, Result<PreDecision, ToolError>> {
        HookFuture::new(async move {
            match next.run().await? {
                PreDecision::Deny { reason } => {
                    Ok(PreDecision::deny(format!("outer saw: {reason}")))
                }
                other => Ok(other),
            }
        })
    }
}

#[tokio::test]
async fn a_pre_execute_listener_can_wrap_next() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry.register(Probe::new("echo", &log)).unwrap();
    let _p1 = registry.add_pre_execute(Override);
    let _p2 = registry.add_pre_execute(pre_execute_fn(|_| Some(PreDecision::deny("inner"))));
    let r = registry
        .execute(ToolCall::new("c", "echo", r#"{"text":"x"}"#))
        .await;
    assert_eq!(r.message(), Some("outer saw: inner"));
}

async fn ask_with(registry: &Registry, agent: Option<dsh_runtime::AgentScopeId>) -> ToolResult {
    let mut call = ToolCall::new("c1", "echo", r#"{"text":"hi"}"#);
    if let Some(agent) = agent {
        call = call.with_agent(agent);
    }
    registry.execute(call).await
}

#[tokio::test]
async fn ask_without_an_approval_handler_denies() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry.register(Probe::new("echo", &log)).unwrap();
    let ask = registry.add_pre_execute(pre_execute_fn(|_| Some(PreDecision::Ask { reason: None })));
    let r = ask_with(&registry, None).await;
    assert_eq!(r.code_str(), Some("POLICY_DENIED"));
    assert_eq!(r.error_code(), Some(PipelineCode::PolicyDenied));
    assert_eq!(
        r.message(),
        Some(r#"tool "echo" requires approval (not yet supported)"#)
    );
    ask.unregister();
    let _ask = registry.add_pre_execute(pre_execute_fn(|_| Some(PreDecision::ask("writes files"))));
    let r = ask_with(&registry, None).await;
    assert_eq!(r.message(), Some("writes files"));
    assert!(!log.get().contains(&"body".to_string()));
}

/// A call from the global view (no agent scope) is asked through the registry's
/// handler too: the request says it has no agent.
#[tokio::test]
async fn ask_from_the_global_view_goes_to_the_registry_handler() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry.register(Probe::new("echo", &log)).unwrap();
    let _ask = registry.add_pre_execute(pre_execute_fn(|_| Some(PreDecision::ask("why"))));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let _h = registry.set_approval_handler(approval_fn(move |req: &ApprovalRequest<'_>| {
        s.lock().unwrap().push(req.agent);
        Approval::AllowedOnce
    }));
    let r = ask_with(&registry, None).await;
    assert_eq!(*r.value().unwrap(), v(r#""hi""#));
    assert_eq!(*seen.lock().unwrap(), [None]);
    assert!(log.get().contains(&"body".to_string()));
}

#[tokio::test]
async fn a_fallback_approval_handler_answers_what_no_registry_handler_did() {
    use dsh_runtime::hooks::with_approval;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry.register(Probe::new("echo", &log)).unwrap();
    let _ask = registry.add_pre_execute(pre_execute_fn(|_| Some(PreDecision::ask("why"))));
    let asked = Arc::new(AtomicUsize::new(0));
    let fallback = |answer: Approval| -> Arc<dyn ApprovalHandler> {
        let asked = asked.clone();
        Arc::new(approval_fn(move |_| {
            asked.fetch_add(1, Ordering::SeqCst);
            answer
        }))
    };
    // No registry handler: the fallback answers.
    let r = with_approval(fallback(Approval::AllowedOnce), ask_with(&registry, None)).await;
    assert_eq!(*r.value().unwrap(), v(r#""hi""#));
    let r = with_approval(fallback(Approval::Rejected), ask_with(&registry, None)).await;
    assert_eq!(r.code_str(), Some("APPROVAL_REJECTED"));
    // A fallback without a channel leaves the denial of a call with no handler.
    let r = with_approval(fallback(Approval::Unavailable), ask_with(&registry, None)).await;
    assert_eq!(r.code_str(), Some("POLICY_DENIED"));
    assert_eq!(r.message(), Some("why"));
    // One that says why adds it to that denial.
    let r = with_approval(
        fallback(Approval::UnavailableBecause("no phone")),
        ask_with(&registry, None),
    )
    .await;
    assert_eq!(r.code_str(), Some("POLICY_DENIED"));
    assert_eq!(r.message(), Some("why (no phone)"));
    assert_eq!(asked.load(Ordering::SeqCst), 4);

    // A registry handler answers first, and the fallback is not asked...
    let rejecting = registry.set_approval_handler(approval_fn(|_| Approval::Rejected));
    let r = with_approval(fallback(Approval::AllowedOnce), ask_with(&registry, None)).await;
    assert_eq!(r.code_str(), Some("APPROVAL_REJECTED"));
    assert_eq!(asked.load(Ordering::SeqCst), 4);
    rejecting.unregister();
    // ...unless it has no channel.
    let _none = registry.set_approval_handler(approval_fn(|_| Approval::Unavailable));
    let r = with_approval(fallback(Approval::AllowedOnce), ask_with(&registry, None)).await;
    assert_eq!(*r.value().unwrap(), v(r#""hi""#));
    let r = with_approval(fallback(Approval::Unavailable), ask_with(&registry, None)).await;
    assert_eq!(
        r.message(),
        Some(r#"tool "echo" requires approval, but no approval channel is available"#)
    );
    let r = with_approval(
        fallback(Approval::UnavailableBecause("no phone")),
        ask_with(&registry, None),
    )
    .await;
    assert_eq!(
        r.message(),
        Some(r#"tool "echo" requires approval, but no approval channel is available (no phone)"#)
    );
    assert_eq!(asked.load(Ordering::SeqCst), 7);
}

#[tokio::test]
async fn approval_outcomes() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry.register(Probe::new("echo", &log)).unwrap();
    let scope = registry.scope();
    let _ask = registry.add_pre_execute(pre_execute_fn(|_| Some(PreDecision::ask("why"))));
    let seen = Arc::new(Mutex::new(Vec::new()));
    for (answer, expected) in [
        (Approval::AllowedOnce, None),
        (
            Approval::Rejected,
            Some(("APPROVAL_REJECTED", r#"the user rejected tool "echo""#)),
        ),
        (
            Approval::Cancelled,
            Some((
                "APPROVAL_CANCELLED",
                r#"approval for tool "echo" was cancelled"#,
            )),
        ),
        (
            Approval::Unavailable,
            Some((
                "POLICY_DENIED",
                r#"tool "echo" requires approval, but no approval channel is available"#,
            )),
        ),
        (
            Approval::UnavailableBecause("it is 3 a.m."),
            Some((
                "POLICY_DENIED",
                r#"tool "echo" requires approval, but no approval channel is available (it is 3 a.m.)"#,
            )),
        ),
    ] {
        let s = seen.clone();
        let _h = registry.set_approval_handler(approval_fn(move |req: &ApprovalRequest<'_>| {
            s.lock().unwrap().push((
                req.reason.map(str::to_string),
                req.agent,
                req.call.name().to_string(),
            ));
            answer
        }));
        let r = ask_with(&registry, Some(scope.id())).await;
        match expected {
            None => assert_eq!(*r.value().unwrap(), v(r#""hi""#)),
            Some((code, msg)) => {
                assert_eq!(r.code_str(), Some(code));
                assert_eq!(r.message(), Some(msg));
            }
        }
    }
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 5);
    assert!(
        seen.iter()
            .all(|(reason, agent, name)| reason.as_deref() == Some("why")
                && *agent == Some(scope.id())
                && name == "echo")
    );
}

#[tokio::test]
async fn cancelled_approval_with_caller_aborted_is_aborted_before_dispatch() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry.register(Probe::new("echo", &log)).unwrap();
    let scope = registry.scope();
    let _ask = registry.add_pre_execute(pre_execute_fn(|_| Some(PreDecision::ask("why"))));
    let _h = registry.set_approval_handler(approval_fn(|req: &ApprovalRequest<'_>| {
        req.call.cancellation().cancel();
        Approval::Cancelled
    }));
    let r = ask_with(&registry, Some(scope.id())).await;
    assert_eq!(r.code_str(), Some("ABORTED_BEFORE_DISPATCH"));
}

#[tokio::test]
async fn latest_live_approval_handler_wins() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry.register(Probe::new("echo", &log)).unwrap();
    let scope = registry.scope();
    let _ask = registry.add_pre_execute(pre_execute_fn(|_| Some(PreDecision::ask("why"))));
    let _a = registry.set_approval_handler(approval_fn(|_| Approval::AllowedOnce));
    let b = registry.set_approval_handler(approval_fn(|_| Approval::Rejected));
    assert!(ask_with(&registry, Some(scope.id())).await.is_error());
    b.unregister();
    assert!(ask_with(&registry, Some(scope.id())).await.is_success());
}

/// An asynchronous approval handler that waits for the caller to give up.
struct WaitsForCancel;
impl ApprovalHandler for WaitsForCancel {
    fn request<'a>(
        &'a self,
        request: ApprovalRequest<'a>,
    ) -> HookFuture<'a, Result<Approval, ToolError>> {
        HookFuture::new(async move {
            request.call.cancellation().cancelled().await;
            Ok(Approval::Cancelled)
        })
    }
}

#[tokio::test]
async fn async_approval_handler_observes_caller_cancellation() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry.register(Probe::new("echo", &log)).unwrap();
    let scope = registry.scope();
    let _ask = registry.add_pre_execute(pre_execute_fn(|_| Some(PreDecision::ask("why"))));
    let _h = registry.set_approval_handler(WaitsForCancel);
    let mut call = ToolCall::new("c1", "echo", r#"{"text":"hi"}"#).with_agent(scope.id());
    let token = call.cancellation().clone();
    let task = tokio::spawn({
        let registry = registry.clone();
        async move { registry.execute(call).await }
    });
    tokio::task::yield_now().await;
    token.cancel();
    let r = task.await.unwrap();
    assert_eq!(r.code_str(), Some("ABORTED_BEFORE_DISPATCH"));
}

#[tokio::test]
async fn guard_denial_is_guard_denied_and_passes_post() {
    let (registry, log, _regs) = setup();
    let l = log.clone();
    let _g = registry.add_guard(guard_fn(move |_| {
        l.push("deny-guard");
        Some("blocked by guard".to_string())
    }));
    let l = log.clone();
    let _later = registry.add_guard(guard_fn(move |_| {
        l.push("later-guard");
        None
    }));
    let r = registry
        .execute(ToolCall::new("c1", "echo", r#"{"text":"hi"}"#))
        .await;
    let (code, message, content) = failure(&r);
    assert_eq!(code, Some("GUARD_DENIED"));
    assert_eq!(message, "blocked by guard");
    assert_eq!(content, ["Error: blocked by guard"]);
    assert_eq!(
        log.take(),
        ["pre", "guard", "deny-guard", "post", "finalize", "observe"]
    );
}

#[tokio::test]
async fn guards_run_only_after_allow() {
    let (registry, log, _regs) = setup();
    let _d = registry.add_pre_execute(pre_execute_fn(|_| Some(PreDecision::deny("no"))));
    registry
        .execute(ToolCall::new("c1", "echo", r#"{"text":"hi"}"#))
        .await;
    assert!(!log.take().contains(&"guard".to_string()));
}

struct ErrPre;
impl PreExecute for ErrPre {
    fn pre_execute<'a>(
        &'a self,
        _call: &'a CallInfo<'a>,
        _next: PreNext<'a>,
    ) -> HookFuture<'a, Result<PreDecision, ToolError>> {
        HookFuture::ready(Err(ToolError::with_code(
            "POLICY_DOWN",
            "policy service down",
        )))
    }
}

struct ErrGuard;
impl Guard for ErrGuard {
    fn check<'a>(
        &'a self,
        _call: &'a CallInfo<'a>,
    ) -> HookFuture<'a, Result<Option<String>, ToolError>> {
        HookFuture::new(async { Err(ToolError::new("guard exploded")) })
    }
}

struct ErrApproval;
impl ApprovalHandler for ErrApproval {
    fn request<'a>(
        &'a self,
        _request: ApprovalRequest<'a>,
    ) -> HookFuture<'a, Result<Approval, ToolError>> {
        HookFuture::ready(Err(ToolError::with_code("UI_GONE", "approval UI crashed")))
    }
}

struct ErrWrapper;
impl Wrapper for ErrWrapper {
    fn around<'a>(
        &'a self,
        _call: &'a CallInfo<'a>,
        next: Next<'a>,
    ) -> HookFuture<'a, Result<DispatchOutcome, ToolError>> {
        HookFuture::new(async move {
            let _ = next.run().await?;
            Err(ToolError::with_code(
                "WRAP_FAIL",
                "wrapper failed after the body",
            ))
        })
    }
}

#[tokio::test]
async fn throwing_callbacks_end_the_call_with_their_error_and_skip_post() {
    // pre-execute returning Err
    let (registry, log, _regs) = setup();
    let _h = registry.add_pre_execute(ErrPre);
    let r = registry
        .execute(ToolCall::new("c", "echo", r#"{"text":"x"}"#))
        .await;
    let (code, message, content) = failure(&r);
    assert_eq!(
        (code, message),
        (Some("POLICY_DOWN"), "policy service down")
    );
    assert_eq!(content, ["Error: policy service down"]);
    assert_eq!(log.take(), ["pre", "finalize", "observe"]);

    // guard returning Err
    let (registry, log, _regs) = setup();
    let _h = registry.add_guard(ErrGuard);
    let r = registry
        .execute(ToolCall::new("c", "echo", r#"{"text":"x"}"#))
        .await;
    assert_eq!((r.code_str(), r.message()), (None, Some("guard exploded")));
    assert_eq!(log.take(), ["pre", "guard", "finalize", "observe"]);

    // approval handler returning Err
    let (registry, log, _regs) = setup();
    let scope = registry.scope();
    let _ask = registry.add_pre_execute(pre_execute_fn(|_| Some(PreDecision::ask("?"))));
    let _h = registry.set_approval_handler(ErrApproval);
    let r = registry
        .execute(ToolCall::new("c", "echo", r#"{"text":"x"}"#).with_agent(scope.id()))
        .await;
    assert_eq!(
        (r.code_str(), r.message()),
        (Some("UI_GONE"), Some("approval UI crashed"))
    );
    assert_eq!(log.take(), ["pre", "finalize", "observe"]);

    // wrapper returning Err (after the body ran)
    let (registry, log, _regs) = setup();
    let _h = registry.add_wrapper(ErrWrapper);
    let r = registry
        .execute(ToolCall::new("c", "echo", r#"{"text":"x"}"#))
        .await;
    assert_eq!(
        (r.code_str(), r.message()),
        (Some("WRAP_FAIL"), Some("wrapper failed after the body"))
    );
    assert_eq!(
        log.take(),
        [
            "pre", "guard", "wrap", "body", "render", "finalize", "observe"
        ]
    );
}

struct PanicWrapper;
impl Wrapper for PanicWrapper {
    fn around<'a>(
        &'a self,
        _call: &'a CallInfo<'a>,
        _next: Next<'a>,
    ) -> HookFuture<'a, Result<DispatchOutcome, ToolError>> {
        HookFuture::new(async { panic!("wrapper bug") })
    }
}

#[tokio::test]
async fn panicking_callbacks_are_contained_as_final_errors() {
    type Install = Box<dyn Fn(&Registry) -> dsh_runtime::RegistrationHandle>;
    let cases: Vec<(&str, Install, &str, Vec<&str>)> = vec![
        (
            "pre",
            Box::new(|r: &Registry| r.add_pre_execute(pre_execute_fn(|_| panic!("pre bug")))),
            "pre-execute hook panicked: pre bug",
            vec!["pre", "finalize", "observe"],
        ),
        (
            "guard",
            Box::new(|r: &Registry| r.add_guard(guard_fn(|_| panic!("guard bug")))),
            "guard panicked: guard bug",
            vec!["pre", "guard", "finalize", "observe"],
        ),
        (
            "wrapper",
            Box::new(|r: &Registry| r.add_wrapper(PanicWrapper)),
            "dispatch wrapper panicked: wrapper bug",
            vec!["pre", "guard", "wrap", "finalize", "observe"],
        ),
    ];
    for (what, install, message, stages) in cases {
        let (registry, log, _regs) = setup();
        let _h = install(&registry);
        let r = registry
            .execute(ToolCall::new("c", "echo", r#"{"text":"x"}"#))
            .await;
        assert_eq!(r.code_str(), Some("TOOL_PANICKED"), "{what}");
        assert_eq!(r.message(), Some(message), "{what}");
        assert_eq!(log.take(), stages, "{what}");
    }

    // An approval handler that panics.
    let (registry, log, _regs) = setup();
    let scope = registry.scope();
    let _ask = registry.add_pre_execute(pre_execute_fn(|_| Some(PreDecision::ask("?"))));
    let _h = registry.set_approval_handler(approval_fn(|_| panic!("approval bug")));
    let r = registry
        .execute(ToolCall::new("c", "echo", r#"{"text":"x"}"#).with_agent(scope.id()))
        .await;
    assert_eq!(r.message(), Some("approval handler panicked: approval bug"));
    assert_eq!(r.code_str(), Some("TOOL_PANICKED"));
    assert_eq!(log.take(), ["pre", "finalize", "observe"]);
}

#[tokio::test]
async fn unknown_tool_fails_at_entry_without_policy_but_through_post() {
    let (registry, log, _regs) = setup();
    let r = registry
        .execute(ToolCall::new("c1", "missing", r#"{"text":"hi"}"#))
        .await;
    let (code, message, content) = failure(&r);
    assert_eq!(code, Some("UNKNOWN_TOOL"));
    assert_eq!(
        message,
        r#"unknown tool "missing"; available tools: "echo""#
    );
    assert_eq!(
        content,
        [r#"Error: unknown tool "missing"; available tools: "echo""#]
    );
    // No finalizer: nothing was resolved.
    assert_eq!(log.take(), ["post", "observe"]);
}

#[tokio::test]
async fn unknown_tool_name_is_json_quoted() {
    let registry = Registry::new();
    let r = registry.execute(ToolCall::new("c", "a\"b", "{}")).await;
    assert_eq!(
        r.message(),
        Some(r#"unknown tool "a\"b"; no tool is available"#)
    );
}

#[tokio::test]
async fn tool_gone_at_dispatch_is_unknown_tool_through_post() {
    let (registry, log, regs) = setup();
    // The echo registration is the last one; a guard drops it during policy.
    let mut regs = regs;
    let echo = Arc::new(Mutex::new(regs.pop()));
    let e = echo.clone();
    let _g = registry.add_guard(guard_fn(move |_| {
        if let Some(echo) = e.lock().unwrap().take() {
            echo.unregister();
        }
        None
    }));
    let r = registry
        .execute(ToolCall::new("c", "echo", r#"{"text":"x"}"#))
        .await;
    assert_eq!(r.code_str(), Some("UNKNOWN_TOOL"));
    assert_eq!(r.message(), Some(r#"unknown tool "echo""#));
    // The finalizer captured at entry still runs.
    assert_eq!(
        log.take(),
        ["pre", "guard", "wrap", "post", "finalize", "observe"]
    );
}

#[tokio::test]
async fn invalid_arguments_skip_policy_and_body_but_pass_post() {
    let (registry, log, _regs) = setup();
    let r = registry
        .execute(ToolCall::new("c1", "echo", r#"{"n":1.5,"extra":true}"#))
        .await;
    let (code, message, content) = failure(&r);
    assert_eq!(code, Some("INVALID_ARGS"));
    assert_eq!(
        message,
        r#"invalid arguments: missing required property "text"; "n" must be an integer; "extra" is not a declared property (additionalProperties: false)"#
    );
    assert_eq!(content, [format!("Error: {message}")]);
    assert_eq!(log.take(), ["post", "finalize", "observe"]);
}

#[tokio::test]
async fn invalid_arguments_outrank_a_pre_aborted_token() {
    let (registry, log, _regs) = setup();
    let mut call = ToolCall::new("c1", "echo", "{}");
    call.cancellation().cancel();
    let r = registry.execute(call).await;
    assert_eq!(r.code_str(), Some("INVALID_ARGS"));
    assert_eq!(log.take(), ["post", "finalize", "observe"]);
}

#[tokio::test]
async fn null_for_an_optional_property_means_omitted() {
    let registry = Registry::new();
    let log = Log::new();
    let seen = Arc::new(Mutex::new(None));
    let s = seen.clone();
    let _t = registry
        .register(Probe::new("echo", &log).body(move |args, _| {
            *s.lock().unwrap() = Some(args.clone());
            async { Ok(Value::from("ok")) }
        }))
        .unwrap();
    let r = registry
        .execute(ToolCall::new("c", "echo", r#"{"text":"t","n":null}"#))
        .await;
    assert!(r.is_success(), "{r:?}");
    assert_eq!(seen.lock().unwrap().clone(), Some(v(r#"{"text":"t"}"#)));
}

#[tokio::test]
async fn body_errors_keep_their_own_code_and_pass_post() {
    let (registry, log, _regs) = setup();
    let _t =
        registry
            .register(Probe::new("fails", &log).body(|_, _| async {
                Err(ToolError::with_code("FS_NOT_FOUND", "no such file: /x"))
            }))
            .unwrap();
    let r = registry
        .execute(ToolCall::new("c", "fails", r#"{"text":"x"}"#))
        .await;
    let (code, message, content) = failure(&r);
    assert_eq!((code, message), (Some("FS_NOT_FOUND"), "no such file: /x"));
    assert_eq!(content, ["Error: no such file: /x"]);
    assert_eq!(r.error_code(), None);
    assert_eq!(
        log.take(),
        [
            "pre", "guard", "wrap", "body", "post", "finalize", "observe"
        ]
    );

    let _t = registry
        .register(Probe::new("plain", &log).body(|_, _| async { Err(ToolError::new("nope")) }))
        .unwrap();
    let r = registry
        .execute(ToolCall::new("c", "plain", r#"{"text":"x"}"#))
        .await;
    assert_eq!((r.code_str(), r.message()), (None, Some("nope")));
}

#[tokio::test]
async fn body_panics_are_contained_and_pass_post() {
    let (registry, log, _regs) = setup();
    let _t = registry
        .register(Probe::new("boom", &log).body(|_, _| async {
            tokio::task::yield_now().await;
            panic!("kaboom")
        }))
        .unwrap();
    let r = registry
        .execute(ToolCall::new("c", "boom", r#"{"text":"x"}"#))
        .await;
    assert_eq!(r.code_str(), Some("TOOL_PANICKED"));
    assert_eq!(r.message(), Some(r#"tool "boom" panicked: kaboom"#));
    assert_eq!(
        log.take(),
        [
            "pre", "guard", "wrap", "body", "post", "finalize", "observe"
        ]
    );
}

#[tokio::test]
async fn output_failing_its_schema_is_invalid_tool_output_with_every_violation() {
    let (registry, log, _regs) = setup();
    let out = Schema::closed_object(vec![
        dsh_runtime::schema::Property::new("a", Schema::string(), true),
        dsh_runtime::schema::Property::new("b", Schema::integer(), true),
    ]);
    let _t = registry
        .register(
            Probe::new("bad", &log)
                .output(out)
                .body(|_, _| async { Ok(v(r#"{"a":1,"c":true}"#)) }),
        )
        .unwrap();
    let r = registry
        .execute(ToolCall::new("c", "bad", r#"{"text":"x"}"#))
        .await;
    let (code, message, _) = failure(&r);
    assert_eq!(code, Some("INVALID_TOOL_OUTPUT"));
    assert_eq!(
        message,
        r#"tool "bad" returned invalid output: missing required property "value.b"; "value.a" must be a string; "value.c" is not a declared property (additionalProperties: false)"#
    );
    assert_eq!(
        log.take(),
        [
            "pre", "guard", "wrap", "body", "post", "finalize", "observe"
        ]
    );
}

#[tokio::test]
async fn projector_failures_are_invalid_tool_output() {
    let registry = Registry::new();
    let log = Log::new();
    let _a = registry
        .register(
            Probe::new("render_err", &log).render(|_, _| Err(ToolError::new("template missing"))),
        )
        .unwrap();
    let _b = registry
        .register(Probe::new("render_panic", &log).render(|_, _| panic!("renderer bug")))
        .unwrap();
    let _c = registry
        .register(Probe::new("meta_err", &log).meta(|_, _| Err(ToolError::new("no meta"))))
        .unwrap();
    let _d = registry
        .register(Probe::new("meta_panic", &log).meta(|_, _| panic!("meta bug")))
        .unwrap();
    for (name, expected) in [
        ("render_err", "output.render failed: template missing"),
        ("meta_err", "output.presentation_meta failed: no meta"),
    ] {
        let r = registry
            .execute(ToolCall::new("c", name, r#"{"text":"x"}"#))
            .await;
        assert_eq!(r.code_str(), Some("INVALID_TOOL_OUTPUT"), "{name}");
        assert_eq!(
            r.message().unwrap(),
            format!("tool \"{name}\" returned invalid output: {expected}")
        );
    }
    // A projector that panics is `TOOL_PANICKED`.
    for (name, expected) in [
        ("render_panic", "output.render panicked: renderer bug"),
        ("meta_panic", "output.presentation_meta panicked: meta bug"),
    ] {
        let r = registry
            .execute(ToolCall::new("c", name, r#"{"text":"x"}"#))
            .await;
        assert_eq!(r.code_str(), Some("TOOL_PANICKED"), "{name}");
        assert_eq!(r.message().unwrap(), format!("tool \"{name}\": {expected}"));
    }
}

#[tokio::test]
async fn presentation_meta_is_built_for_top_level_calls_only() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry
        .register(Probe::new("m", &log).meta(|args, value| {
            let mut o = dsh_runtime::json::Object::new();
            o.insert("args", args.clone());
            o.insert("value", value.clone());
            Ok(Some(Value::Object(o)))
        }))
        .unwrap();
    let top = registry
        .execute(ToolCall::new("c", "m", r#"{"text":"x"}"#))
        .await;
    assert_eq!(
        **top.meta().unwrap(),
        v(r#"{"args":{"text":"x"},"value":"x"}"#)
    );
    let sub = registry
        .execute(
            ToolCall::new("c:1", "m", r#"{"text":"x"}"#)
                .with_parent(dsh_runtime::ExecutionId::mint()),
        )
        .await;
    assert!(sub.is_success());
    assert_eq!(sub.meta(), None);
    assert_eq!(
        log.take(),
        [
            "body", "render", "meta", "finalize", "body", "render", "finalize"
        ]
    );
}

#[tokio::test]
async fn abort_after_the_body_started_turns_success_into_aborted() {
    let (registry, log, _regs) = setup();
    let _t = registry
        .register(Probe::new("slow", &log).body(|_, cx| async move {
            // Abort from inside: the caller's token is the parent of the body's.
            cx.cancellation().cancelled().await;
            Ok(Value::from("finished anyway"))
        }))
        .unwrap();
    let mut call = ToolCall::new("c", "slow", r#"{"text":"x"}"#);
    let token = call.cancellation().clone();
    let task = tokio::spawn({
        let registry = registry.clone();
        async move { registry.execute(call).await }
    });
    while !log.get().contains(&"body".to_string()) {
        tokio::task::yield_now().await;
    }
    token.cancel();
    let r = task.await.unwrap();
    let (code, message, content) = failure(&r);
    assert_eq!(code, Some("ABORTED"));
    assert_eq!(r.error_code(), Some(PipelineCode::Aborted));
    assert_eq!(message, "tool call aborted");
    assert_eq!(content, ["Error: tool call aborted"]);
    assert_eq!(
        log.take(),
        [
            "pre", "guard", "wrap", "body", "render", "post", "finalize", "observe"
        ]
    );
}

#[tokio::test]
async fn envelope_serialization() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry
        .register(Probe::new("echo", &log).body(|_, cx| async move {
            cx.defer_context("remember this");
            cx.conclude_turn();
            Ok(Value::from("hi"))
        }))
        .unwrap();
    let ok = registry
        .execute(ToolCall::new("c", "echo", r#"{"text":"x"}"#))
        .await;
    let expected = r#"{"isError":false,"value":"hi","content":[{"type":"text","text":"hi"}],"additionalContexts":["remember this"],"concludesTurn":true}"#;
    assert_eq!(serde_json::to_string(&ok).unwrap(), expected);
    assert_eq!(ok.to_json().to_string(), expected);

    let unknown = registry.execute(ToolCall::new("c", "nope", "{}")).await;
    let expected = r#"{"isError":true,"error":{"message":"unknown tool \"nope\"; available tools: \"echo\"","info":{"name":"UnknownToolError","code":"UNKNOWN_TOOL"}},"content":[{"type":"text","text":"Error: unknown tool \"nope\"; available tools: \"echo\""}]}"#;
    assert_eq!(serde_json::to_string(&unknown).unwrap(), expected);
    assert_eq!(unknown.to_json().to_string(), expected);

    let invalid = registry.execute(ToolCall::new("c", "echo", "{}")).await;
    assert!(
        serde_json::to_string(&invalid)
            .unwrap()
            .contains(r#""info":{"name":"ToolArgsError","code":"INVALID_ARGS"}"#)
    );

    let _d = registry.add_pre_execute(pre_execute_fn(|_| Some(PreDecision::deny("no"))));
    let denied = registry
        .execute(ToolCall::new("c", "echo", r#"{"text":"x"}"#))
        .await;
    let expected = r#"{"isError":true,"error":{"message":"no","info":{"name":"PolicyDeniedError","code":"POLICY_DENIED"}},"content":[{"type":"text","text":"Error: no"}]}"#;
    assert_eq!(serde_json::to_string(&denied).unwrap(), expected);
}

#[tokio::test]
async fn error_codes_round_trip() {
    for code in PipelineCode::ALL {
        assert_eq!(code.as_str().parse::<PipelineCode>(), Ok(code));
        assert_eq!(code.to_string(), code.as_str());
    }
    assert_eq!(PipelineCode::UnknownTool.as_str(), "UNKNOWN_TOOL");
    assert_eq!(PipelineCode::InvalidArgs.as_str(), "INVALID_ARGS");
    assert_eq!(
        PipelineCode::InvalidToolOutput.as_str(),
        "INVALID_TOOL_OUTPUT"
    );
    assert_eq!(
        PipelineCode::AbortedBeforeDispatch.as_str(),
        "ABORTED_BEFORE_DISPATCH"
    );
    assert_eq!(PipelineCode::Aborted.as_str(), "ABORTED");
    assert_eq!(PipelineCode::ToolTimeout.as_str(), "TOOL_TIMEOUT");
    assert_eq!(
        PipelineCode::UnsupportedSchema.as_str(),
        "UNSUPPORTED_SCHEMA"
    );
    assert_eq!(PipelineCode::CodeRunFailed.as_str(), "CODE_RUN_FAILED");
    let unknown = "FS_NOT_FOUND".parse::<PipelineCode>().unwrap_err();
    assert_eq!(unknown.as_str(), "FS_NOT_FOUND");
    assert_eq!(
        unknown.to_string(),
        r#"unknown error code "FS_NOT_FOUND" (the registry's codes are UNKNOWN_TOOL, INVALID_ARGS, INVALID_TOOL_OUTPUT, TOOL_PANICKED, ABORTED_BEFORE_DISPATCH, ABORTED, TOOL_TIMEOUT, UNSUPPORTED_SCHEMA, CODE_RUN_FAILED, POLICY_DENIED, GUARD_DENIED, APPROVAL_REJECTED, APPROVAL_CANCELLED, RESULT_BLOCKED, TASK_FAILED, DETACHED_LIMIT)"#
    );
    let _: &dyn std::error::Error = &unknown;
}

/// A tool failing with a code of its own, or with a registry code's wire form.
#[dsh_runtime::tool]
async fn coded(registry_code: bool) -> Result<(), dsh_runtime::ToolError> {
    Err(if registry_code {
        dsh_runtime::ToolError::with_code(PipelineCode::ToolTimeout, "late")
    } else {
        dsh_runtime::ToolError::with_code("FS_NOT_FOUND", "no such file")
    })
}

#[tokio::test]
async fn result_codes_are_typed() {
    use dsh_runtime::FailureCode;
    let registry = Registry::new();
    let _t = registry.register(Coded).unwrap();
    let own = registry
        .execute(ToolCall::new("1", "coded", r#"{"registry_code":false}"#))
        .await;
    assert_eq!(own.code(), Some(FailureCode::Tool("FS_NOT_FOUND")));
    assert_eq!(own.code_str(), Some("FS_NOT_FOUND"));
    assert_eq!(own.error_code(), None);
    let pipeline = registry
        .execute(ToolCall::new("2", "coded", r#"{"registry_code":true}"#))
        .await;
    assert_eq!(
        pipeline.code(),
        Some(FailureCode::Pipeline(PipelineCode::ToolTimeout))
    );
    let unknown = registry.execute(ToolCall::new("3", "nope", "{}")).await;
    assert!(matches!(
        unknown.code(),
        Some(FailureCode::Pipeline(PipelineCode::UnknownTool))
    ));
    assert_eq!(registry.view().names().len(), 1);
    let e = dsh_runtime::ToolError::with_code("FS_NOT_FOUND", "x");
    assert_eq!(e.code(), Some(FailureCode::Tool("FS_NOT_FOUND")));
    assert!(
        registry
            .execute(ToolCall::new("4", "coded", r#"{"registry_code":true}"#))
            .await
            .code()
            .is_some_and(|c| c == PipelineCode::ToolTimeout)
    );
}

// --- the open parameter root ---

/// Read some lines.
#[dsh_runtime::tool]
async fn read_lines(
    path: String,
    limit: Option<u32>,
    cx: dsh_runtime::ToolContext,
) -> Result<String, ToolError> {
    cx.defer_context("deferred by the body");
    if path == "missing" {
        return Err(ToolError::with_code("FS_NOT_FOUND", "no such file"));
    }
    Ok(format!("{path}:{limit:?}"))
}

/// Read some lines, strictly.
#[dsh_runtime::tool(deny_unknown_args)]
async fn read_strict(path: String) -> String {
    path
}

#[tokio::test]
async fn unknown_arguments_are_ignored_and_named_in_a_context() {
    let registry = Registry::new();
    let _t = registry.register(ReadLines).unwrap();
    // A misspelt optional parameter: the call succeeds without it, and the model is told.
    let r = registry
        .execute(ToolCall::new("c", "read_lines", r#"{"path":"a","limt":5}"#))
        .await;
    assert!(r.is_success(), "{r:?}");
    assert_eq!(r.text(), "a:None");
    assert_eq!(
        r.contexts(),
        [
            r#"ignored unknown argument "limt": did you mean "limit"? (tool "read_lines" takes "path", "limit")"#,
            "deferred by the body",
        ]
    );
    // Not part of the canonical value, but of the envelope's contexts.
    assert_eq!(*r.value().unwrap(), v(r#""a:None""#));
    assert!(
        r.to_json()
            .to_string()
            .contains(r#""additionalContexts":["ignored unknown argument \"limt\""#)
    );
    // Failures carry the note too.
    let r = registry
        .execute(ToolCall::new(
            "c",
            "read_lines",
            r#"{"path":"missing","x":1,"y":2}"#,
        ))
        .await;
    assert_eq!(r.code_str(), Some("FS_NOT_FOUND"));
    assert_eq!(
        r.contexts()[0],
        r#"ignored unknown arguments "x", "y" (tool "read_lines" takes "path", "limit")"#
    );
    // A call that fails validation names them too, next to the violations.
    let r = registry
        .execute(ToolCall::new("c", "read_lines", r#"{"limt":5}"#))
        .await;
    assert_eq!(r.code_str(), Some("INVALID_ARGS"));
    assert_eq!(
        r.message(),
        Some(r#"invalid arguments: missing required property "path""#)
    );
    assert_eq!(
        r.contexts(),
        [
            r#"ignored unknown argument "limt": did you mean "limit"? (tool "read_lines" takes "path", "limit")"#
        ]
    );
    // Without unknown keys there is no note.
    let r = registry
        .execute(ToolCall::new(
            "c",
            "read_lines",
            r#"{"path":"a","limit":2}"#,
        ))
        .await;
    assert_eq!(r.contexts(), ["deferred by the body"]);
    // Many or long keys are named within bounds.
    let keys: Vec<String> = (0..12).map(|i| format!(r#""k{i}":0"#)).collect();
    let long = "z".repeat(100);
    let text = format!(r#"{{"path":"a",{},"{long}":1}}"#, keys.join(","));
    let r = registry
        .execute(ToolCall::new("c", "read_lines", text))
        .await;
    let note = &r.contexts()[0];
    assert!(
        note.starts_with(r#"ignored unknown arguments "k0", "k1","#),
        "{note}"
    );
    assert!(note.contains(" and 5 more (tool"), "{note}");
    assert!(!note.contains(&long), "{note}");
    // A long key that is named is cut after its 64th character (a character boundary,
    // whatever the bytes), then marked as cut; a key of exactly 64 is named whole.
    let long = "é".repeat(70);
    let exact = "y".repeat(64);
    let text = format!(r#"{{"path":"a","{long}":1,"{exact}":2}}"#);
    let r = registry
        .execute(ToolCall::new("c", "read_lines", text))
        .await;
    assert_eq!(
        r.contexts()[0],
        format!(
            r#"ignored unknown arguments "{}"…, "{exact}" (tool "read_lines" takes "path", "limit")"#,
            "é".repeat(64)
        )
    );
}

/// Open a ticket.
#[dsh_runtime::tool]
async fn create_ticket(
    title: String,
    priority: Option<u8>,
    tags: Option<Vec<String>>,
    due: Option<String>,
) -> String {
    let _ = (priority, tags, due);
    title
}

#[tokio::test]
async fn a_misspelt_optional_argument_gets_a_did_you_mean() {
    let registry = Registry::new();
    let _t = registry.register(CreateTicket).unwrap();
    let note = |args: &'static str| {
        let registry = registry.clone();
        async move {
            let r = registry
                .execute(ToolCall::new("c", "create_ticket", args))
                .await;
            assert!(r.is_success(), "{r:?}");
            r.contexts().to_vec()
        }
    };
    assert_eq!(
        note(r#"{"title":"t","tag":["a"]}"#).await,
        [
            r#"ignored unknown argument "tag": did you mean "tags"? (tool "create_ticket" takes "title", "priority", "tags", "due")"#
        ]
    );
    // Several keys: each misspelling in parentheses; a key close to nothing left out
    // gets none, and one parameter is suggested once.
    assert_eq!(
        note(r#"{"title":"t","tag":["a"],"prio":1,"colour":"red","tagz":[]}"#).await,
        [
            r#"ignored unknown arguments "tag" (did you mean "tags"?), "prio" (did you mean "priority"?), "colour", "tagz" (tool "create_ticket" takes "title", "priority", "tags", "due")"#
        ]
    );
    // A parameter the call did give is not suggested.
    assert_eq!(
        note(r#"{"title":"t","tags":["a"],"tag":["b"]}"#).await,
        [
            r#"ignored unknown argument "tag" (tool "create_ticket" takes "title", "priority", "tags", "due")"#
        ]
    );
    // A misspelt required parameter is named by the failure, not by the note.
    let r = registry
        .execute(ToolCall::new("c", "create_ticket", r#"{"titel":"t"}"#))
        .await;
    assert_eq!(
        r.message(),
        Some(r#"invalid arguments: unknown argument "titel": did you mean "title"?"#)
    );
    assert!(r.contexts().is_empty(), "{:?}", r.contexts());
}

#[tokio::test]
async fn unknown_arguments_never_reach_the_body() {
    let registry = Registry::new();
    let seen = Arc::new(Mutex::new(None));
    let s = seen.clone();
    // A raw tool sees what it is given: its schema's openness is its own.
    let params = v(r#"{"type":"object","properties":{"path":{"type":"string"}}}"#);
    let raw = dsh_runtime::RawTool::new("raw", "Raw.", &params, &v("{}"), move |args, _| {
        *s.lock().unwrap() = Some(args.clone());
        async { Ok(Value::Null) }
    })
    .unwrap();
    let _raw = registry.register(raw).unwrap();
    let r = registry
        .execute(ToolCall::new("c", "raw", r#"{"path":"a","extra":1}"#))
        .await;
    assert!(r.is_success());
    assert_eq!(
        seen.lock().unwrap().take(),
        Some(v(r#"{"path":"a","extra":1}"#))
    );
    assert!(r.contexts().is_empty());

    // A `#[tool]`'s typed body reads only its parameters; the erased body gets the
    // arguments without the unknown key.
    let _t = registry.register(ReadLines).unwrap();
    let tool = registry.view().get("read_lines").unwrap();
    let def = tool.definition();
    let raw_args = v(r#"{"path":"a","limit":1,"extra":{"deep":[1]}}"#);
    let validated = dsh_runtime::validate::validate_arguments(&def.parameters, &raw_args).unwrap();
    assert_eq!(
        *validated.normalized(&def.parameters, &raw_args),
        v(r#"{"path":"a","limit":1}"#)
    );
}

#[tokio::test]
async fn deny_unknown_args_makes_an_unknown_key_invalid() {
    let registry = Registry::new();
    let _t = registry.register(ReadStrict).unwrap();
    let r = registry
        .execute(ToolCall::new(
            "c",
            "read_strict",
            r#"{"path":"a","limt":5}"#,
        ))
        .await;
    assert_eq!(r.code_str(), Some("INVALID_ARGS"));
    assert_eq!(
        r.message(),
        Some(
            r#"invalid arguments: "limt" is not a declared property (additionalProperties: false)"#
        )
    );
    assert!(r.contexts().is_empty());
}

mod model_facing_errors {
    use dsh_runtime::{Registry, ToolCall, ToolError, tool};

    /// Return negative zero.
    #[tool]
    async fn negative_zero() -> Result<f64, ToolError> {
        Ok(-0.0)
    }

    /// Search the notes.
    #[tool]
    async fn search_notes(query: String, limit: Option<u32>) -> Result<String, ToolError> {
        Ok(format!("{query} {limit:?}"))
    }

    /// Add a note.
    #[tool]
    async fn add_note(title: String) -> Result<String, ToolError> {
        Ok(title)
    }

    fn registry() -> (Registry, Vec<dsh_runtime::RegistrationHandle>) {
        let registry = Registry::new();
        let regs = vec![
            registry.register(NegativeZero).unwrap(),
            registry.register(SearchNotes).unwrap(),
            registry.register(AddNote).unwrap(),
        ];
        (registry, regs)
    }

    #[tokio::test]
    async fn negative_zero_output_is_reported_once() {
        let (registry, _regs) = registry();
        let r = registry
            .execute(ToolCall::new("c", "negative_zero", "{}"))
            .await;
        assert_eq!(r.code_str(), Some("INVALID_TOOL_OUTPUT"));
        let m = r.message().unwrap();
        assert_eq!(m.matches("not lossless JSON").count(), 1, "{m}");
    }

    /// An unknown name is answered with the closest visible names and, the list being
    /// short, every visible tool.
    #[tokio::test]
    async fn an_unknown_tool_names_the_closest_and_the_available_tools() {
        let (registry, _regs) = registry();
        let r = registry
            .execute(ToolCall::new("c", "serach_notes", r#"{"query":"q"}"#))
            .await;
        assert_eq!(r.code_str(), Some("UNKNOWN_TOOL"));
        assert_eq!(
            r.message(),
            Some(
                r#"unknown tool "serach_notes"; did you mean "search_notes"?; available tools: "negative_zero", "search_notes", "add_note""#
            )
        );
        let r = registry.execute(ToolCall::new("c", "zzz", "{}")).await;
        assert_eq!(
            r.message(),
            Some(
                r#"unknown tool "zzz"; available tools: "negative_zero", "search_notes", "add_note""#
            )
        );
        let empty = Registry::new();
        let r = empty.execute(ToolCall::new("c", "zzz", "{}")).await;
        assert_eq!(
            r.message(),
            Some(r#"unknown tool "zzz"; no tool is available"#)
        );
    }

    /// A required argument given under a close misspelling is one message naming both,
    /// not a missing property plus a note about an ignored key.
    #[tokio::test]
    async fn a_misspelt_required_argument_is_one_message() {
        let (registry, _regs) = registry();
        let r = registry
            .execute(ToolCall::new(
                "c",
                "search_notes",
                r#"{"qeury":"q","other":1}"#,
            ))
            .await;
        assert_eq!(r.code_str(), Some("INVALID_ARGS"));
        assert_eq!(
            r.message(),
            Some(r#"invalid arguments: unknown argument "qeury": did you mean "query"?"#)
        );
        // The unrelated key is still noted; the misspelt one is not noted twice.
        assert_eq!(
            r.contexts(),
            [r#"ignored unknown argument "other" (tool "search_notes" takes "query", "limit")"#]
        );
        // A far-off key is no misspelling: the property is missing.
        let r = registry
            .execute(ToolCall::new("c", "search_notes", r#"{"zzz":"q"}"#))
            .await;
        assert_eq!(
            r.message(),
            Some(r#"invalid arguments: missing required property "query""#)
        );
    }
}

/// Says whether its context carries a fallback approval handler.
#[dsh_runtime::tool]
async fn relay(cx: dsh_runtime::ToolContext) -> String {
    match cx.approval_fallback() {
        Some(_) => "carried".to_string(),
        None => "none".to_string(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_receives_the_fallback_handler_and_a_sub_dispatch_names_its_parent() {
    use dsh_runtime::ParentCall;
    use dsh_runtime::hooks::with_approval;
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry.register(Probe::new("echo", &log)).unwrap();
    let _r = registry.register(Relay).unwrap();
    let _ask = registry.add_pre_execute(pre_execute_fn(|call| {
        (call.name() == "echo").then(|| PreDecision::ask("why"))
    }));
    // The parent call each request named, by tool name and call id.
    type Via = Option<(String, String)>;
    let seen: Arc<Mutex<Vec<Via>>> = Arc::default();
    let log_seen = seen.clone();
    let fallback: Arc<dyn ApprovalHandler> = Arc::new(approval_fn(move |req| {
        log_seen
            .lock()
            .unwrap()
            .push(req.via.map(|p| (p.name.to_string(), p.call_id.to_string())));
        Approval::AllowedOnce
    }));
    // A caller's token: the body runs on a task of its own, and still gets the handler.
    let call =
        ToolCall::new("r1", "relay", "{}").with_cancellation(dsh_runtime::CancellationToken::new());
    let r = with_approval(fallback.clone(), registry.execute(call)).await;
    assert_eq!(*r.value().unwrap(), v(r#""carried""#));
    let r = registry.execute(ToolCall::new("r2", "relay", "{}")).await;
    assert_eq!(*r.value().unwrap(), v(r#""none""#));

    // Handed on to another task, it answers a sub-dispatch that names its parent.
    let sub = ToolCall::new("r1:1", "echo", r#"{"text":"hi"}"#)
        .with_parent_call(ParentCall::new("relay", "r1"));
    let registry2 = registry.clone();
    let r = tokio::spawn(with_approval(fallback, async move {
        registry2.execute(sub).await
    }))
    .await
    .unwrap();
    assert!(r.is_success(), "{:?}", r.message());
    assert_eq!(
        *seen.lock().unwrap(),
        [Some(("relay".to_string(), "r1".to_string()))]
    );
}
