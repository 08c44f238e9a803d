//! `TestClient` answering what calls ask of their caller, in process: typed forms
//! (accepted, declined, dismissed, answered wrongly), URL requests, sampling, roots,
//! captured logs, no caller at all, a handler that panics, a request that never gets an
//! answer, and the tool a request comes from (sub-calls and typed calls included).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use dsh_runtime::caller::{
    CallerError, Elicited, FormAnswer, LogLevel, RequestKind, Root, SampleRequest, SampledMessage,
    UrlAnswer, UrlRequest, with_caller,
};
use dsh_runtime::hooks::Approval;
use dsh_runtime::{
    RegistrationHandle, Registry, ToolCall, ToolContext, ToolError, ToolSchema, tool,
};
use dsh_testing::{Asked, TestClient};
use serde::Deserialize;
use serde_json::json;

/// What to release.
#[derive(ToolSchema, Deserialize, Debug)]
struct ReleaseForm {
    /// The branch to release.
    branch: String,
    /// How many replicas.
    replicas: u32,
    /// Whether to only pretend.
    dry_run: bool,
}

/// Release a branch the user picks, with notes from the caller's model, into the
/// caller's first root.
#[tool]
async fn release(cx: ToolContext) -> Result<String, ToolError> {
    cx.log(LogLevel::Debug, "asking");
    let release = match cx.elicit::<ReleaseForm>("What to release?").await? {
        Elicited::Accepted(release) => release,
        Elicited::Declined => return Ok("declined".into()),
        Elicited::Cancelled => return Ok("cancelled".into()),
    };
    cx.log(LogLevel::Info, format!("releasing {}", release.branch));
    let notes = cx
        .sample(
            SampleRequest::new(format!("Notes for {}?", release.branch), 64).with_temperature(0.5),
        )
        .await?;
    let roots = cx.roots().await?;
    let root = roots.first().map(|r| r.uri.as_str()).unwrap_or("nowhere");
    cx.log(LogLevel::Warning, "released");
    Ok(format!(
        "{} x{}{} to {root}: {}",
        release.branch,
        release.replicas,
        if release.dry_run { " (dry run)" } else { "" },
        notes.text()
    ))
}

/// Only asks a form (for the form tests).
#[tool]
async fn pick(cx: ToolContext) -> Result<String, ToolError> {
    Ok(match cx.elicit::<ReleaseForm>("What to release?").await? {
        Elicited::Accepted(r) => format!("accepted {} x{} {}", r.branch, r.replicas, r.dry_run),
        Elicited::Declined => "declined".into(),
        Elicited::Cancelled => "cancelled".into(),
    })
}

/// Only samples.
#[tool]
async fn summarize(text: String, cx: ToolContext) -> Result<String, ToolError> {
    let reply = cx.sample(SampleRequest::new(text, 32)).await?;
    Ok(format!("{} ({})", reply.text(), reply.model))
}

/// Only lists roots.
#[tool]
async fn list_roots(cx: ToolContext) -> Result<String, ToolError> {
    let roots = cx.roots().await?;
    Ok(roots
        .iter()
        .map(|r| format!("{}={}", r.name.as_deref().unwrap_or("-"), r.uri))
        .collect::<Vec<_>>()
        .join(","))
}

/// Sends the user to sign in.
#[tool]
async fn sign_in(cx: ToolContext) -> Result<String, ToolError> {
    let answer = cx
        .elicit_url(UrlRequest::new(
            "Sign in, please",
            "https://example.com/login",
            "e-1",
        ))
        .await?;
    Ok(format!("{answer:?}"))
}

/// A confirmation form.
#[derive(ToolSchema, Deserialize)]
struct Confirm {
    /// Go on?
    go: bool,
}

/// How often `charge` charged.
static CHARGED: AtomicUsize = AtomicUsize::new(0);

/// Ask, charge, ask again: the charge between the two questions happens once.
#[tool]
async fn charge(cx: ToolContext) -> Result<String, ToolError> {
    let first = cx.elicit::<Confirm>("Charge the card?").await?;
    if !matches!(first, Elicited::Accepted(Confirm { go: true })) {
        return Ok("not charged".into());
    }
    let n = CHARGED.fetch_add(1, Ordering::SeqCst) + 1;
    let second = cx.elicit::<Confirm>("Send a receipt?").await?;
    let receipt = matches!(second, Elicited::Accepted(Confirm { go: true }));
    Ok(format!("charged {n} receipt {receipt}"))
}

/// Waits for a form that may never be answered, within its own deadline.
#[tool(timeout_ms = 200)]
async fn stuck(cx: ToolContext) -> Result<String, ToolError> {
    cx.elicit::<Confirm>("Anyone there?").await?;
    Ok("answered".into())
}

/// Calls `pick` on another task, with its caller installed around the call.
#[tool]
async fn delegate(cx: ToolContext) -> Result<String, ToolError> {
    let registry = REGISTRY.with(Clone::clone);
    let caller = cx.caller().cloned();
    let call = ToolCall::new(format!("{}-sub", cx.call_id()), "pick", "{}");
    let inner = tokio::spawn(async move {
        match caller {
            Some(caller) => with_caller(caller, registry.execute(call)).await,
            None => registry.execute(call).await,
        }
    });
    let result = inner.await.map_err(|e| ToolError::new(e.to_string()))?;
    Ok(format!("via delegate: {}", result.text()))
}

thread_local! {
    /// The registry `delegate` calls into (each test runs on its own thread).
    static REGISTRY: Registry = Registry::new();
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// The test's registry with every tool above.
fn registry() -> (Registry, Vec<RegistrationHandle>) {
    let registry = REGISTRY.with(Clone::clone);
    let regs = vec![
        registry.register(Release).expect("release"),
        registry.register(Pick).expect("pick"),
        registry.register(Summarize).expect("summarize"),
        registry.register(ListRoots).expect("list_roots"),
        registry.register(SignIn).expect("sign_in"),
        registry.register(Charge).expect("charge"),
        registry.register(Stuck).expect("stuck"),
        registry.register(Delegate).expect("delegate"),
    ];
    (registry, regs)
}

fn model(text: &str) -> SampledMessage {
    SampledMessage::new(dsh_runtime::content::ContentBlock::text(text), "test-model")
}

#[test]
fn a_tool_logs_asks_a_form_samples_and_lists_roots() {
    rt().block_on(async {
        let (registry, _regs) = registry();
        let client = TestClient::new(&registry);
        client
            .answer_form(
                "release",
                json!({"branch": "main", "replicas": 3, "dry_run": true}),
            )
            .answer_sample_with("release", |request| {
                let prompt = match &request.messages[0].content {
                    dsh_runtime::content::ContentBlock::Text { text, .. } => text.clone(),
                    _ => String::new(),
                };
                model(&format!("notes for [{prompt}]"))
            })
            .set_roots(vec![
                Root::new("file:///work/app").with_name("app"),
                Root::new("file:///work/lib"),
            ]);
        let result = client.call("release", "{}").await;
        assert!(result.is_success(), "{:?}", result.message());
        assert_eq!(
            result.text(),
            "main x3 (dry run) to file:///work/app: notes for [Notes for main?]"
        );

        let asked = client.requests();
        let kinds: Vec<RequestKind> = asked.iter().map(Asked::kind).collect();
        assert_eq!(
            kinds,
            [RequestKind::Form, RequestKind::Sample, RequestKind::Roots]
        );
        assert!(asked.iter().all(|a| a.tool() == Some("release")));
        assert!(asked.iter().all(|a| a.call_id == asked[0].call_id));
        assert_eq!(asked[0].message(), Some("What to release?"));
        assert_eq!(asked[0].form_fields(), ["branch", "replicas", "dry_run"]);
        let sample = asked[1].sample().expect("a sampling request");
        assert_eq!(sample.max_tokens, 64);
        assert_eq!(sample.temperature, Some(0.5));

        // The logs, with their levels, in order.
        let logs: Vec<(LogLevel, Option<String>)> = client
            .logs()
            .iter()
            .map(|l| (l.level(), l.text().map(str::to_string)))
            .collect();
        assert_eq!(
            logs,
            [
                (LogLevel::Debug, Some("asking".to_string())),
                (LogLevel::Info, Some("releasing main".to_string())),
                (LogLevel::Warning, Some("released".to_string())),
            ]
        );
        assert!(client.logs().iter().all(|l| l.tool() == Some("release")));

        // Below the level set, messages are not even made.
        client.clear_caller_record().log_level(LogLevel::Info);
        assert!(client.call("release", "{}").await.is_success());
        let levels: Vec<LogLevel> = client.logs().iter().map(|l| l.level()).collect();
        assert_eq!(levels, [LogLevel::Info, LogLevel::Warning]);
    });
}

#[test]
fn forms_are_accepted_declined_or_dismissed_in_script_order() {
    rt().block_on(async {
        let (registry, _regs) = registry();
        let client = TestClient::new(&registry);
        client
            .answer_form_once(
                "pick",
                json!({"branch": "a", "replicas": 1, "dry_run": false}),
            )
            .answer_form_once("pick", FormAnswer::Declined)
            .answer_form_once("pick", FormAnswer::Cancelled);
        assert_eq!(
            client.call("pick", "{}").await.text(),
            "accepted a x1 false"
        );
        assert_eq!(client.call("pick", "{}").await.text(), "declined");
        assert_eq!(client.call("pick", "{}").await.text(), "cancelled");
        // Nothing scripted is left: the form is dismissed.
        assert_eq!(client.call("pick", "{}").await.text(), "cancelled");

        // A standing answer after the one-shot ones.
        client
            .answer_form("pick", FormAnswer::Declined)
            .answer_form_once(
                "pick",
                json!({"branch": "b", "replicas": 2, "dry_run": true}),
            );
        assert_eq!(client.call("pick", "{}").await.text(), "accepted b x2 true");
        assert_eq!(client.call("pick", "{}").await.text(), "declined");
        assert_eq!(client.call("pick", "{}").await.text(), "declined");
        assert_eq!(client.requests().len(), 7);
    });
}

#[test]
fn a_predicate_answers_forms_by_message_schema_or_tool() {
    rt().block_on(async {
        let (registry, _regs) = registry();
        let client = TestClient::new(&registry);
        client
            // Predicates come before the per-tool answer...
            .answer_form("pick", FormAnswer::Declined)
            .answer_form_if(
                |asked| {
                    asked.message() == Some("What to release?")
                        && asked.form_fields().iter().any(|f| f == "replicas")
                        && asked.tool() == Some("pick")
                },
                json!({"branch": "p", "replicas": 9, "dry_run": false}),
            )
            // ...in the order added.
            .answer_form_if(|_| true, FormAnswer::Cancelled);
        assert_eq!(
            client.call("pick", "{}").await.text(),
            "accepted p x9 false"
        );
        // ...but after the one-shot answers.
        client.answer_form_once("pick", FormAnswer::Declined);
        assert_eq!(client.call("pick", "{}").await.text(), "declined");
        assert_eq!(
            client.call("pick", "{}").await.text(),
            "accepted p x9 false"
        );
    });
}

#[test]
fn an_answer_of_the_wrong_type_is_an_invalid_answer() {
    rt().block_on(async {
        let (registry, _regs) = registry();
        let client = TestClient::new(&registry);
        client.answer_form(
            "pick",
            json!({"branch": 5, "replicas": "three", "dry_run": false}),
        );
        let result = client.call("pick", "{}").await;
        assert_eq!(result.code_str(), Some("CALLER_INVALID_ANSWER"));
        let message = result.message().unwrap_or_default();
        assert!(
            message.contains("branch") && message.contains("replicas"),
            "every violation is named: {message}"
        );

        // A missing required field too.
        client.answer_form("pick", json!({"branch": "main"}));
        let result = client.call("pick", "{}").await;
        assert_eq!(result.code_str(), Some("CALLER_INVALID_ANSWER"));
        assert!(
            result.message().unwrap_or_default().contains("replicas"),
            "{:?}",
            result.message()
        );
    });
}

#[test]
fn sampling_replies_per_tool_and_for_every_tool() {
    rt().block_on(async {
        let (registry, _regs) = registry();
        let client = TestClient::new(&registry);
        // Unscripted: the caller has no model.
        let none = client.call("summarize", r#"{"text":"long text"}"#).await;
        assert_eq!(none.code_str(), Some("CALLER_CAPABILITY_MISSING"));

        client.answer_samples(model("for everyone"));
        assert_eq!(
            client.call("summarize", r#"{"text":"x"}"#).await.text(),
            "for everyone (test-model)"
        );
        client.answer_samples_with(|request| {
            model(&format!("{} tokens at most", request.max_tokens))
        });
        assert_eq!(
            client.call("summarize", r#"{"text":"x"}"#).await.text(),
            "32 tokens at most (test-model)"
        );
        // A tool's own reply comes first, a one-shot reply before it.
        client
            .answer_sample("summarize", model("just for summarize"))
            .answer_sample_once("summarize", model("once"));
        assert_eq!(
            client.call("summarize", r#"{"text":"x"}"#).await.text(),
            "once (test-model)"
        );
        assert_eq!(
            client.call("summarize", r#"{"text":"x"}"#).await.text(),
            "just for summarize (test-model)"
        );
        // A predicate over the request.
        client.answer_sample_if(
            |asked| {
                asked
                    .sample()
                    .is_some_and(|s| s.messages.len() == 1 && s.max_tokens == 32)
            },
            model("by predicate"),
        );
        assert_eq!(
            client.call("summarize", r#"{"text":"x"}"#).await.text(),
            "by predicate (test-model)"
        );
    });
}

#[test]
fn roots_and_url_requests() {
    rt().block_on(async {
        let (registry, _regs) = registry();
        let client = TestClient::new(&registry);
        assert_eq!(
            client.call("list_roots", "{}").await.code_str(),
            Some("CALLER_CAPABILITY_MISSING")
        );
        client.set_roots(vec![
            Root::new("file:///a").with_name("a"),
            Root::new("file:///b"),
        ]);
        assert_eq!(
            client.call("list_roots", "{}").await.text(),
            "a=file:///a,-=file:///b"
        );
        client.set_roots(Vec::new());
        assert_eq!(client.call("list_roots", "{}").await.text(), "");

        // URL requests: dismissed unless scripted.
        assert_eq!(client.call("sign_in", "{}").await.text(), "Cancelled");
        client
            .answer_url("sign_in", UrlAnswer::Declined)
            .answer_url_once("sign_in", UrlAnswer::Accepted);
        assert_eq!(client.call("sign_in", "{}").await.text(), "Accepted");
        assert_eq!(client.call("sign_in", "{}").await.text(), "Declined");
        client.answer_url_if(
            |asked| matches!(&asked.request, dsh_runtime::caller::CallerRequest::Url(u) if u.url.ends_with("/login")),
            UrlAnswer::Accepted,
        );
        assert_eq!(client.call("sign_in", "{}").await.text(), "Accepted");
        let urls: Vec<Asked> = client
            .requests()
            .into_iter()
            .filter(|a| a.kind() == RequestKind::Url)
            .collect();
        assert_eq!(urls.len(), 4);
        assert_eq!(urls[0].message(), Some("Sign in, please"));
    });
}

#[test]
fn without_a_caller_every_request_is_caller_unavailable() {
    rt().block_on(async {
        let (registry, _regs) = registry();
        let client = TestClient::new(&registry);
        client.answer_form(
            "pick",
            json!({"branch": "a", "replicas": 1, "dry_run": false}),
        );
        client.without_caller();
        for (tool, args) in [
            ("pick", "{}"),
            ("summarize", r#"{"text":"x"}"#),
            ("list_roots", "{}"),
            ("sign_in", "{}"),
        ] {
            let result = client.call(tool, args).await;
            assert_eq!(result.code_str(), Some("CALLER_UNAVAILABLE"), "{tool}");
        }
        assert!(client.requests().is_empty());
        assert!(client.logs().is_empty());
    });
}

#[test]
fn a_panicking_caller_fails_the_request_not_the_process() {
    rt().block_on(async {
        let (registry, _regs) = registry();
        let client = TestClient::new(&registry);
        client.answer_sample_with("summarize", |_| panic!("the model fell over"));
        let result = client.call("summarize", r#"{"text":"x"}"#).await;
        assert_eq!(result.code_str(), Some("CALLER_FAILED"));
        assert!(
            result
                .message()
                .is_some_and(|m| m.contains("panicked") && m.contains("the model fell over")),
            "{:?}",
            result.message()
        );
        // The client's script still works afterwards.
        client.answer_sample("summarize", model("fine again"));
        assert_eq!(
            client.call("summarize", r#"{"text":"x"}"#).await.text(),
            "fine again (test-model)"
        );
        // A panicking predicate is contained the same way.
        client.answer_form_if(|_| panic!("bad predicate"), FormAnswer::Declined);
        assert_eq!(
            client.call("pick", "{}").await.code_str(),
            Some("CALLER_FAILED")
        );
    });
}

#[test]
fn scripted_failures_keep_their_code() {
    rt().block_on(async {
        let (registry, _regs) = registry();
        let client = TestClient::new(&registry);
        client
            .answer_form(
                "pick",
                json!({"branch": "a", "replicas": 1, "dry_run": false}),
            )
            .fail_requests(
                "pick",
                CallerError::Unsupported {
                    capability: "elicitation",
                },
            );
        let result = client.call("pick", "{}").await;
        assert_eq!(result.code_str(), Some("CALLER_CAPABILITY_MISSING"));
        client.fail_requests("pick", CallerError::Failed("the line dropped".into()));
        let result = client.call("pick", "{}").await;
        assert_eq!(result.code_str(), Some("CALLER_FAILED"));
        assert!(
            result
                .message()
                .unwrap_or_default()
                .contains("the line dropped")
        );
    });
}

#[test]
fn a_request_never_answered_ends_with_the_calls_timeout() {
    rt().block_on(async {
        let (registry, _regs) = registry();
        let client = TestClient::new(&registry);
        client.leave_unanswered("stuck");
        let result = tokio::time::timeout(Duration::from_secs(10), client.call("stuck", "{}"))
            .await
            .expect("the call ends at its deadline, it does not hang");
        assert_eq!(result.code_str(), Some("TOOL_TIMEOUT"));
        assert_eq!(client.requests().len(), 1);
        assert_eq!(client.requests()[0].tool(), Some("stuck"));

        // Answered, the same tool finishes.
        let client = TestClient::new(&registry);
        client.answer_form("stuck", json!({"go": true}));
        assert_eq!(client.call("stuck", "{}").await.text(), "answered");
    });
}

#[test]
fn a_side_effect_between_two_questions_happens_once() {
    rt().block_on(async {
        let (registry, _regs) = registry();
        let client = TestClient::new(&registry);
        let before = CHARGED.load(Ordering::SeqCst);
        client
            .answer_form_if(
                |a| a.message() == Some("Charge the card?"),
                json!({"go": true}),
            )
            .answer_form_if(
                |a| a.message() == Some("Send a receipt?"),
                json!({"go": false}),
            );
        let result = client.call("charge", "{}").await;
        assert_eq!(
            result.text(),
            format!("charged {} receipt false", before + 1)
        );
        assert_eq!(CHARGED.load(Ordering::SeqCst), before + 1);
        let messages: Vec<Option<String>> = client
            .requests()
            .iter()
            .map(|a| a.message().map(str::to_string))
            .collect();
        assert_eq!(
            messages,
            [
                Some("Charge the card?".to_string()),
                Some("Send a receipt?".to_string())
            ]
        );
    });
}

#[test]
fn requests_of_sub_calls_and_typed_calls_name_their_tool() {
    rt().block_on(async {
        let (registry, _regs) = registry();
        let client = TestClient::new(&registry);
        client
            .answer_form(
                "pick",
                json!({"branch": "inner", "replicas": 1, "dry_run": false}),
            )
            .answer_form("delegate", FormAnswer::Declined);
        // `delegate` calls `pick` on another task: `pick`'s script answers its form.
        assert_eq!(
            client.call("delegate", "{}").await.text(),
            "via delegate: accepted inner x1 false"
        );
        let asked = client.requests();
        assert_eq!(asked.len(), 1);
        assert_eq!(asked[0].tool(), Some("pick"));
        assert!(asked[0].call_id.ends_with("-sub"), "{}", asked[0].call_id);

        // A typed call is answered by its tool's script too.
        client.answer_sample("summarize", model("typed"));
        let out = client
            .call_typed::<Summarize>(SummarizeArgs { text: "t".into() })
            .await;
        assert_eq!(out.as_deref(), Ok("typed (test-model)"));
        assert_eq!(client.requests()[1].tool(), Some("summarize"));
    });
}

#[test]
fn approvals_and_caller_answers_are_scripted_side_by_side() {
    rt().block_on(async {
        let (registry, _regs) = registry();
        let _ask = registry.add_pre_execute(dsh_runtime::hooks::pre_execute_fn(|call| {
            (call.name() == "pick").then(|| dsh_runtime::hooks::PreDecision::ask("sure?"))
        }));
        let client = TestClient::new(&registry);
        client
            .answer_once("pick", Approval::Rejected)
            .approve("pick")
            .answer_form("pick", FormAnswer::Declined);
        assert_eq!(
            client.call("pick", "{}").await.code_str(),
            Some("APPROVAL_REJECTED")
        );
        assert_eq!(client.call("pick", "{}").await.text(), "declined");
        assert_eq!(client.approvals_asked(), ["pick", "pick"]);
        // The rejected call never ran: one form was asked.
        assert_eq!(client.requests().len(), 1);
    });
}

#[test]
fn a_batch_is_answered_per_tool() {
    rt().block_on(async {
        let (registry, _regs) = registry();
        let client = TestClient::new(&registry);
        client
            .answer_form("pick", FormAnswer::Declined)
            .answer_sample("summarize", model("s"));
        let texts: Vec<String> = client
            .batch(&[("pick", "{}"), ("summarize", r#"{"text":"x"}"#)], 4)
            .await
            .iter()
            .map(|r| r.text())
            .collect();
        assert_eq!(texts, ["declined", "s (test-model)"]);
        let mut tools: Vec<Option<String>> =
            client.requests().into_iter().map(|a| a.tool).collect();
        tools.sort();
        assert_eq!(
            tools,
            [Some("pick".to_string()), Some("summarize".to_string())]
        );
    });
}

#[test]
fn a_host_installs_the_clients_handler_around_its_own_calls() {
    rt().block_on(async {
        let (registry, _regs) = registry();
        let client = TestClient::new(&registry);
        client.answer_form("pick", FormAnswer::Declined);
        let result = with_caller(
            client.caller_route(),
            registry.execute(ToolCall::new("host-1", "pick", "{}")),
        )
        .await;
        assert_eq!(result.text(), "declined");
        let asked = client.requests();
        assert_eq!(asked[0].call_id, "host-1");
        assert_eq!(asked[0].tool(), Some("pick"));
        // Nobody installed it: no caller.
        let result = registry
            .execute(ToolCall::new("host-2", "pick", "{}"))
            .await;
        assert_eq!(result.code_str(), Some("CALLER_UNAVAILABLE"));
    });
}
