//! Approval of a program's tool calls: a registry handler asked about a sub-call learns
//! the `run_code` call it was made for; the fallback handler installed around the outer
//! call (as an MCP session installs its client) answers the sub-calls, which run on the
//! run's thread; the program waits for the answer; and the outer call's cancellation or
//! deadline ends a program whose sub-call is still waiting.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use dsh_code::{CodeConfig, Mode};
use dsh_runtime::hooks::{
    Approval, ApprovalHandler, ApprovalRequest, HookFuture, PreDecision, approval_fn, observer_fn,
    pre_execute_fn, with_approval,
};
use dsh_runtime::{CancellationToken, RegistrationHandle, ToolCall, ToolError};
use support::*;

/// What one approval request showed: the call's name and id, the parent call's name and
/// id, and the reason.
type Seen = (String, String, Option<(String, String)>, Option<String>);

fn seen(request: &ApprovalRequest<'_>) -> Seen {
    (
        request.call.name().to_string(),
        request.call.call_id().to_string(),
        request
            .via
            .map(|p| (p.name.to_string(), p.call_id.to_string())),
        request.reason.map(str::to_string),
    )
}

/// `echo` asks for approval.
fn ask_for_echo(env: &Env) -> RegistrationHandle {
    env.registry.add_pre_execute(pre_execute_fn(|call| {
        (call.name() == "echo").then(|| PreDecision::ask("echo needs a yes"))
    }))
}

/// The outer call, with a token of the caller's (so that its body runs on a task of its
/// own, as an MCP server's calls do).
fn outer(env: &Env, code: &str, cancel: &CancellationToken) -> ToolCall {
    run_code_call(code)
        .with_agent(env.scope.id())
        .with_cancellation(cancel.clone())
}

const YES_AND_NO: &str = "const a = await tools.echo({value: \"yes\"});\n\
     let b;\n\
     try { await tools.echo({value: \"no\"}); b = \"ran\"; } catch (e) { b = (e as ToolCallError).message; }\n\
     return [a, b];";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registry_handler_asked_about_a_sub_call_sees_the_run_code_call() {
    let env = default_env();
    let _ask = ask_for_echo(&env);
    let asked: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let log = asked.clone();
    let _handler = env.registry.set_approval_handler(approval_fn(move |req| {
        log.lock().unwrap().push(seen(req));
        Approval::AllowedOnce
    }));
    assert_eq!(
        env.value("return await tools.echo({value: 1});").await,
        v("1")
    );
    // A direct call names no parent.
    assert!(env.direct("echo", r#"{"value":2}"#).await.is_success());
    let asked = asked.lock().unwrap().clone();
    let reason = Some("echo needs a yes".to_string());
    assert_eq!(
        asked,
        [
            (
                "echo".to_string(),
                "outer:code:1".to_string(),
                Some(("run_code".to_string(), "outer".to_string())),
                reason.clone()
            ),
            ("echo".to_string(), "direct".to_string(), None, reason),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_outer_calls_fallback_handler_answers_its_sub_calls() {
    let env = default_env();
    let _ask = ask_for_echo(&env);
    let asked: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let log = asked.clone();
    let fallback: Arc<dyn ApprovalHandler> = Arc::new(approval_fn(move |req| {
        log.lock().unwrap().push(seen(req));
        let yes = req.call.arguments().get("value").and_then(|v| v.as_str()) == Some("yes");
        if yes {
            Approval::AllowedOnce
        } else {
            Approval::Rejected
        }
    }));
    let cancel = CancellationToken::new();
    let result = with_approval(
        fallback,
        env.registry.execute(outer(&env, YES_AND_NO, &cancel)),
    )
    .await;
    assert!(result.is_success(), "{:?}", result.message());
    assert_eq!(
        result.value().unwrap().get("result"),
        Some(&v(r#"["yes","the user rejected tool \"echo\""]"#))
    );
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert_eq!(asked[1].1, "outer:code:2");
    assert!(
        asked
            .iter()
            .all(|s| s.2 == Some(("run_code".to_string(), "outer".to_string()))),
        "{asked:?}"
    );

    // Without a fallback the sub-call gets the denial of a call with no handler.
    let result = env
        .registry
        .execute(outer(&env, YES_AND_NO, &CancellationToken::new()))
        .await;
    assert!(
        result.message().is_some_and(
            |m| m.contains("code run failed (exception)") && m.contains("echo needs a yes")
        ),
        "{:?}",
        result.message()
    );
}

/// A handler that says it was asked, then answers what it is told to (or `Cancelled`
/// when the asking call is cancelled first, noting that).
struct Waiting {
    asked: tokio::sync::Notify,
    answer: tokio::sync::Mutex<Option<tokio::sync::oneshot::Receiver<Approval>>>,
    saw_cancellation: std::sync::atomic::AtomicBool,
}

impl Waiting {
    fn new() -> (Arc<Waiting>, tokio::sync::oneshot::Sender<Approval>) {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let w = Arc::new(Waiting {
            asked: tokio::sync::Notify::new(),
            answer: tokio::sync::Mutex::new(Some(rx)),
            saw_cancellation: Default::default(),
        });
        (w, tx)
    }
}

impl ApprovalHandler for Waiting {
    fn request<'a>(
        &'a self,
        request: ApprovalRequest<'a>,
    ) -> HookFuture<'a, Result<Approval, ToolError>> {
        HookFuture::new(async move {
            self.asked.notify_one();
            let rx = self.answer.lock().await.take();
            let Some(rx) = rx else {
                return Ok(Approval::Unavailable);
            };
            tokio::select! {
                answer = rx => Ok(answer.unwrap_or(Approval::Cancelled)),
                () = request.call.cancellation().cancelled() => {
                    self.saw_cancellation.store(true, std::sync::atomic::Ordering::SeqCst);
                    Ok(Approval::Cancelled)
                }
            }
        })
    }
}

/// Wait until the handler is asked (a bounded wait: a sub-call that is never put to the
/// handler fails the test).
async fn asked(handler: &Waiting) {
    tokio::time::timeout(Duration::from_secs(20), handler.asked.notified())
        .await
        .expect("the sub-call is put to the fallback handler");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_program_waits_for_the_answer_of_its_sub_call() {
    let env = default_env();
    let _ask = ask_for_echo(&env);
    let (handler, answer) = Waiting::new();
    let cancel = CancellationToken::new();
    let call = outer(
        &env,
        "console.log('before'); const r = await tools.echo({value: 5}); console.log('after'); return r;",
        &cancel,
    );
    let registry = env.registry.clone();
    let fallback: Arc<dyn ApprovalHandler> = handler.clone();
    let run = tokio::spawn(with_approval(fallback, async move {
        registry.execute(call).await
    }));
    asked(&handler).await;
    assert!(!run.is_finished(), "the program waits for the answer");
    answer.send(Approval::AllowedOnce).unwrap();
    let result = run.await.unwrap();
    assert!(result.is_success(), "{:?}", result.message());
    assert_eq!(
        result.value().unwrap(),
        &v(r#"{"logs":["before","after"],"result":5}"#)
    );
}

/// A final result as an observer saw it: the call id and the code.
type Observed = (String, Option<String>);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_outer_call_while_its_sub_call_waits_ends_the_program() {
    let env = default_env();
    let _ask = ask_for_echo(&env);
    let codes: Arc<Mutex<Vec<Observed>>> = Arc::default();
    let log = codes.clone();
    let _observer = env.registry.add_observer(observer_fn(move |call, result| {
        log.lock().unwrap().push((
            call.call_id().to_string(),
            result.code_str().map(str::to_string),
        ));
    }));
    let (handler, _answer) = Waiting::new();
    let cancel = CancellationToken::new();
    let call = outer(&env, "return await tools.echo({value: 5});", &cancel);
    let registry = env.registry.clone();
    let fallback: Arc<dyn ApprovalHandler> = handler.clone();
    let run = tokio::spawn(with_approval(fallback, async move {
        registry.execute(call).await
    }));
    asked(&handler).await;
    cancel.cancel();
    let result = tokio::time::timeout(Duration::from_secs(20), run)
        .await
        .expect("the program ends")
        .unwrap();
    assert!(!result.is_success());
    // The run sees the cancellation itself, or first through its sub-call's rejection
    // (the sub-call's token and the run's are cancelled from different tasks).
    assert!(
        matches!(
            result.message(),
            Some(
                "code run failed (abort): the run was cancelled"
                    | "code run failed (exception): ToolCallError: tool call aborted before dispatch"
            )
        ),
        "{:?}",
        result.message()
    );
    assert!(
        handler
            .saw_cancellation
            .load(std::sync::atomic::Ordering::SeqCst)
    );
    // The waiting sub-call ended as aborted before its dispatch; then the outer call.
    let codes = codes.lock().unwrap().clone();
    assert_eq!(
        codes,
        [
            (
                "outer:code:1".to_string(),
                Some("ABORTED_BEFORE_DISPATCH".to_string())
            ),
            ("outer".to_string(), Some("CODE_RUN_FAILED".to_string())),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_runs_deadline_applies_while_a_sub_call_waits() {
    let env = env(
        Mode::Both,
        CodeConfig::default().deadline(Duration::from_millis(300)),
    );
    let _ask = ask_for_echo(&env);
    let (handler, _answer) = Waiting::new();
    let fallback: Arc<dyn ApprovalHandler> = handler.clone();
    let result = with_approval(
        fallback,
        env.registry.execute(outer(
            &env,
            "return await tools.echo({value: 5});",
            &CancellationToken::new(),
        )),
    )
    .await;
    assert_eq!(
        result.message(),
        Some("code run failed (timeout): the run exceeded its deadline of 300ms")
    );
    assert!(
        handler
            .saw_cancellation
            .load(std::sync::atomic::Ordering::SeqCst)
    );
}
