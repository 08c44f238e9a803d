//! Code mode per scope: collapse of direct calls, exemption of sub-calls, what the
//! model is shown, and presentations as RAII guards.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use dsh_code::sdk::CODE_ONLY_RULE;
use dsh_code::{CodeConfig, CodeMode, Mode, PresentAsError, effective_mode, prompt};
use dsh_runtime::hooks::guard_fn;
use dsh_runtime::{PipelineCode, ToolCall};
use support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_code_mode_a_direct_call_is_unknown_and_runs_no_policy() {
    let env = env(Mode::Code, CodeConfig::default());
    let guarded = Arc::new(AtomicUsize::new(0));
    let _guard = env.scope.add_guard(guard_fn({
        let guarded = guarded.clone();
        move |_| {
            guarded.fetch_add(1, Ordering::SeqCst);
            None
        }
    }));
    let r = env.direct("echo", r#"{"value":1}"#).await;
    assert_eq!(r.error_code(), Some(PipelineCode::UnknownTool));
    assert_eq!(
        r.message(),
        Some(
            "unknown tool \"echo\": this agent calls tools from programs only; call run_code with a program that uses `await tools[\"echo\"](args)`"
        )
    );
    assert_eq!(guarded.load(Ordering::SeqCst), 0);
    assert!(env.probe.events().is_empty());

    // A name nobody registered stays a plain unknown tool (with the scope's tools).
    let r = env.direct("nope", "{}").await;
    assert_eq!(
        r.message(),
        Some(
            r#"unknown tool "nope"; available tools: "echo", "slow", "exclusive", "fail", "picture", "remark", "run_code""#
        )
    );

    // The same tool from a program (a call with a parent) runs, through policy.
    assert_eq!(
        env.value("return await tools.echo({value: 2});").await,
        v("2")
    );
    assert_eq!(
        guarded.load(Ordering::SeqCst),
        2,
        "run_code and its sub-call"
    );

    // Calls with a parent are exempt even when made directly.
    let parent = dsh_runtime::ExecutionId::mint();
    let r = env
        .registry
        .execute(
            ToolCall::new("p", "echo", r#"{"value":3}"#)
                .with_agent(env.scope.id())
                .with_parent(parent),
        )
        .await;
    assert!(r.is_success());

    // A child scope inherits code mode.
    let child = env.scope.child();
    let r = env
        .registry
        .execute(ToolCall::new("c", "echo", r#"{"value":1}"#).with_agent(child.id()))
        .await;
    assert_eq!(r.error_code(), Some(PipelineCode::UnknownTool));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_keeps_direct_calls_and_the_nearest_scope_wins() {
    let env = env(Mode::Code, CodeConfig::default());
    let code_mode = CodeMode::new();

    let both = env.scope.child();
    let _both = code_mode.present_as(&both, Mode::Both).unwrap();
    assert_eq!(effective_mode(&env.registry, Some(both.id())), Mode::Both);
    let r = env
        .registry
        .execute(ToolCall::new("b", "echo", r#"{"value":1}"#).with_agent(both.id()))
        .await;
    assert!(r.is_success(), "{:?}", r.message());

    let native = env.scope.child();
    let _native = code_mode.present_as(&native, Mode::Native).unwrap();
    assert_eq!(
        effective_mode(&env.registry, Some(native.id())),
        Mode::Native
    );
    let r = env
        .registry
        .execute(ToolCall::new("n", "echo", r#"{"value":1}"#).with_agent(native.id()))
        .await;
    assert!(r.is_success(), "{:?}", r.message());
    let r = env
        .registry
        .execute(run_code_call("return 1;").with_agent(native.id()))
        .await;
    assert_eq!(r.message(), Some("unknown tool \"run_code\""));
    let shown = prompt(&env.registry, Some(native.id()));
    assert!(shown.tools.iter().all(|t| &*t.name != "run_code"));
    assert!(shown.instructions.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_prompt_shows_what_the_mode_allows() {
    let env = env(Mode::Code, CodeConfig::default());
    let shown = prompt(&env.registry, Some(env.scope.id()));
    assert_eq!(shown.mode, Mode::Code);
    let names: Vec<&str> = shown.tools.iter().map(|t| &*t.name).collect();
    assert_eq!(names, ["run_code"]);
    let text = shown.instructions.unwrap();
    assert!(text.starts_with(CODE_ONLY_RULE));
    assert!(text.contains("```ts\ntype JsonValue"));
    assert!(text.contains("  /** Return the value it was given. */\n  echo: "));
    assert!(text.contains("  slow: string;\n"), "{text}");
    assert!(shown.warnings.is_empty(), "{:?}", shown.warnings);
    assert!(!text.contains("run_code: "));
    // Byte-identical for an unchanged tool set.
    assert_eq!(
        prompt(&env.registry, Some(env.scope.id()))
            .instructions
            .unwrap(),
        text
    );

    let both = env.registry.scope();
    let _p = CodeMode::new().present_as(&both, Mode::Both).unwrap();
    let shown = prompt(&env.registry, Some(both.id()));
    let names: Vec<&str> = shown.tools.iter().map(|t| &*t.name).collect();
    assert_eq!(
        names,
        [
            "echo",
            "slow",
            "exclusive",
            "fail",
            "picture",
            "remark",
            "run_code"
        ]
    );
    assert!(
        shown
            .instructions
            .unwrap()
            .starts_with("## Programs for run_code")
    );

    // The global view never has run_code.
    let shown = prompt(&env.registry, None);
    assert_eq!(shown.mode, Mode::Native);
    assert!(shown.tools.iter().all(|t| &*t.name != "run_code"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_presentation_is_once_per_scope_and_undone_on_drop() {
    let mut env = env(Mode::Code, CodeConfig::default());
    let code_mode = CodeMode::new();
    let first = code_mode.present_as(&env.scope.child(), Mode::Both);
    assert!(first.is_ok());
    let scope = env.registry.scope();
    let p = code_mode.present_as(&scope, Mode::Code).unwrap();
    assert!(matches!(
        code_mode.present_as(&scope, Mode::Both),
        Err(PresentAsError::AlreadyPresented)
    ));
    drop(p);
    assert_eq!(
        effective_mode(&env.registry, Some(scope.id())),
        Mode::Native
    );
    assert!(code_mode.present_as(&scope, Mode::Both).is_ok());

    env.presentation = None;
    assert_eq!(
        effective_mode(&env.registry, Some(env.scope.id())),
        Mode::Native
    );
    let r = env.direct("echo", r#"{"value":1}"#).await;
    assert!(r.is_success());
    let r = env
        .direct("run_code", r#"{"code":"return 1;","description":"x"}"#)
        .await;
    assert_eq!(r.error_code(), Some(PipelineCode::UnknownTool));
}
