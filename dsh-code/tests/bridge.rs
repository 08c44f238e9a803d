//! See each test.
//! The `tools.<name>(args)` bridge, rule by rule.

mod support;

use dsh_code::{CodeConfig, CodeMode, Mode, SubCall, SubCallObserver};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dsh_runtime::hooks::{
    Accept, CallInfo, HookFuture, PostDecision, PostExecute, PostNext, PreDecision, PreExecute,
    PreNext, post_execute_fn,
};
use dsh_runtime::json::Value;
use dsh_runtime::{PipelineCode, ToolCall};
use dsh_runtime::{ToolResult, content::ContentBlock};
use support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sub_calls_are_numbered_in_submission_order_and_carry_the_outer_identity() {
    let env = default_env();
    let call = run_code_call(programs::TWO_ECHOES)
        .with_agent(env.scope.id())
        .with_root_call_id("root-7");
    let result = env.registry.execute(call).await;
    assert!(result.is_success(), "{:?}", result.message());
    let events = env.probe.events();
    let ids: Vec<&str> = events.iter().map(|e| e.call_id.as_str()).collect();
    assert_eq!(ids, ["outer:code:1", "outer:code:2"]);
    assert!(events.iter().all(|e| e.has_parent));
    assert!(events.iter().all(|e| e.root_call_id == "root-7"));
    assert_eq!(
        result.value().unwrap().get("result"),
        Some(&v("[1,{\"b\":[true,null]}]"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_lossless_arguments_reject_only_that_call_and_use_no_number() {
    let env = default_env();
    let got = env.value(programs::LOSSY_ARGUMENTS).await;
    let list = got.as_array().unwrap();
    let messages: Vec<&str> = list.iter().map(|m| m.as_str().unwrap()).collect();
    let expected = [
        "args.value is NaN, not a finite number",
        "args.value is -0",
        "args.value is Infinity, not a finite number",
        "args.value is undefined",
        "args.value.self contains itself (a cycle)",
        "args.value[1] is a hole (sparse array)",
        "args.value is a Date object, not a plain object",
        "args.value is a Map object, not a plain object",
        "args.value has a symbol key",
        "args.value.g is an accessor",
        "args.value is a BigInt",
        "args.value is a function",
        "args.value[\"not an ident\"] is undefined",
        "(call the tool with an arguments object, e.g. `{}`)",
    ];
    assert_eq!(messages.len(), expected.len() + 1, "{messages:?}");
    for (m, want) in messages.iter().zip(expected) {
        assert_eq!(*m, format!("tool arguments must be lossless JSON: {want}"));
    }
    // The last entry is the one call that was dispatched: it got number 1.
    assert_eq!(messages[expected.len()], "ok");
    let ids: Vec<String> = env.probe.events().into_iter().map(|e| e.call_id).collect();
    assert_eq!(ids, ["outer:code:1"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_substructure_is_lossless() {
    let env = default_env();
    let got = env.value(programs::SHARED_SUBSTRUCTURE).await;
    assert_eq!(got, v(r#"[{"a":1},{"a":1}]"#));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deep_arguments_cross_and_a_deep_cycle_is_named() {
    let env = default_env();
    let got = env.value(programs::DEEP_ARGUMENTS).await;
    assert_eq!(got.get("deep"), Some(&Value::from(201)));
    assert_eq!(got.get("twice"), Some(&Value::from(337)));
    let message = got.get("message").and_then(Value::as_str).unwrap();
    // The cycle closes below `nodes[100]` (101 levels), back to a node 70 levels down:
    // past the ancestors kept in a list, in the set.
    let path = format!("args.value{}", "[0]".repeat(101));
    assert_eq!(
        message,
        format!("tool arguments must be lossless JSON: {path} contains itself (a cycle)")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_call_rejects_with_a_tool_call_error_carrying_only_name_tool_name_and_message() {
    let env = default_env();
    let got = env.value(programs::TOOL_CALL_ERROR_SHAPE).await;
    assert_eq!(
        got,
        v(
            r#"{"name":"ToolCallError","toolName":"fail","message":"boom","own":["message","name","toolName"],"isToolCallError":true,"isError":true,"code":"undefined","invalid":"invalid arguments: missing required property \"value\""}"#
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_success_resolves_to_the_final_value_after_post_execute() {
    let env = default_env();
    let _hook = env.scope.add_post_execute(post_execute_fn(|call, _result| {
        (call.name() == "echo").then(|| PostDecision::from(Accept::value(Value::from("replaced"))))
    }));
    let got = env.value("return await tools.echo({value: 1});").await;
    assert_eq!(got, Value::from("replaced"));
}

/// The indices of `what` events in the probe's log, by label.
fn order(env: &Env) -> Vec<(String, String)> {
    env.probe
        .events()
        .into_iter()
        .map(|e| (e.what.to_string(), e.label))
        .collect()
}

fn most_running(events: &[(String, String)]) -> usize {
    let mut running = 0usize;
    let mut most = 0;
    for (what, _) in events {
        match what.as_str() {
            "start" => {
                running += 1;
                most = most.max(running);
            }
            "end" | "cancelled" => running -= 1,
            _ => {}
        }
    }
    most
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consecutive_parallel_calls_overlap_up_to_the_cap() {
    let env = env(Mode::Both, CodeConfig::default().max_parallel_sub_calls(2));
    let got = env.value(programs::FOUR_SLOW).await;
    assert_eq!(got, v(r#"["a","b","c","d"]"#));
    let events = order(&env);
    assert_eq!(most_running(&events), 2, "{events:?}");
    // Admitted in submission order, two at a time: a and b first, then c and d (the
    // bodies of overlapping calls run on tasks of their own, so which of two admitted
    // together starts its body first is not fixed).
    let mut starts = env.probe.labels("start");
    assert_eq!(starts.len(), 4);
    starts[..2].sort();
    starts[2..].sort();
    assert_eq!(starts, ["a", "b", "c", "d"]);

    let env = default_env();
    env.value(programs::FOUR_SLOW).await;
    let events = order(&env);
    assert_eq!(most_running(&events), 4, "{events:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exclusive_call_is_a_barrier() {
    let env = default_env();
    let got = env.value(programs::BARRIER).await;
    assert_eq!(got, v(r#"["a","b","x","c","d"]"#));
    let events = order(&env);
    let pos = |what: &str, label: &str| {
        events
            .iter()
            .position(|(w, l)| w == what && l == label)
            .unwrap_or_else(|| panic!("no {what} {label} in {events:?}"))
    };
    // a and b overlap; x starts only after both ended; c and d only after x ended.
    assert!(pos("start", "b") < pos("end", "a"), "{events:?}");
    assert!(pos("end", "a") < pos("start", "x") && pos("end", "b") < pos("start", "x"));
    assert!(pos("end", "x") < pos("start", "c") && pos("end", "x") < pos("start", "d"));
    assert!(pos("start", "d") < pos("end", "c"), "{events:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_are_delivered_in_submission_order() {
    let env = default_env();
    let got = env.value(programs::DELIVERY_ORDER).await;
    assert_eq!(got, v(r#"["slow","fast"]"#));
    // ... although the later call finished first.
    let ends = env.probe.labels("end");
    assert_eq!(ends, ["fast", "slow"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sub_call_contexts_and_concludes_turn_reach_the_outer_call() {
    let env = default_env();
    let r = env.run(programs::REMARKS).await;
    assert!(r.is_success(), "{:?}", r.message());
    assert_eq!(r.contexts(), ["first", "second"]);
    assert!(r.concludes_turn());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settlement_cancels_running_calls_abandons_queued_ones_and_drains() {
    let env = default_env();
    let r = env.run(programs::FIRE_AND_FORGET).await;
    assert_eq!(r.value().unwrap().get("result"), Some(&Value::from("done")));
    // By the time run_code returned, the running call was cancelled and awaited...
    assert_eq!(env.probe.labels("cancelled"), ["long"]);
    // ... and the queued one never started.
    assert_eq!(env.probe.labels("start"), ["long"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_run_failed_carries_the_kind_and_the_captured_logs() {
    let env = default_env();
    let r = env
        .run("console.log('a');\nconsole.log({b: 1});\nthrow new Error('boom');")
        .await;
    assert_eq!(r.error_code(), Some(PipelineCode::CodeRunFailed));
    let message = r.message().unwrap();
    assert_eq!(
        message,
        "code run failed (exception): Error: boom (at line 3, column 11)\nCaptured output:\na\n{\"b\":1}"
    );
    assert_eq!(r.text(), format!("Error: {message}"));
    let envelope = r.to_json();
    assert_eq!(
        envelope.get("error").and_then(|e| e.get("info")),
        Some(&v(r#"{"name":"CodeRunError","code":"CODE_RUN_FAILED"}"#))
    );

    let r = env.run("throw 'plain';").await;
    assert_eq!(
        r.message(),
        Some("code run failed (exception): uncaught plain")
    );

    let r = env.run("const a = 1;\nenum E { A }\nreturn a;").await;
    let message = r.message().unwrap();
    assert!(
        message.starts_with("code run failed (exception): TypeScript: 2:1: "),
        "{message}"
    );

    let r = env.run("return NaN;").await;
    assert_eq!(
        r.message(),
        Some(
            "code run failed (invalid-output): the result is not lossless JSON: result is NaN, not a finite number"
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_content_renders_logs_then_the_result() {
    let env = default_env();
    let text = |code: &'static str| {
        let env = &env;
        async move { env.run(code).await.text() }
    };
    assert_eq!(text("return 'raw text';").await, "raw text");
    assert_eq!(text("console.log('x'); return null;").await, "x\nnull");
    assert_eq!(text("return;").await, "(run_code completed with no output)");
    assert_eq!(
        text("return '';").await,
        "(run_code completed with no output)"
    );
    assert_eq!(
        text("console.log('n', 1, [2]); return {a: [1, {b: {c: {d: {e: [1, 2]}}}}], s: 'x'};")
            .await,
        "n 1 [2]\n{\n  \"a\": [\n    1,\n    {\n      \"b\": {\n        \"c\": {\n          \"d\": {\"e\":[1,2]}\n        }\n      }\n    }\n  ],\n  \"s\": \"x\"\n}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blank_description_is_refused() {
    let env = default_env();
    let call =
        run_code_call("return 1;").with_arguments(r#"{"code":"return 1;","description":"  "}"#);
    let r = env.registry.execute(call.with_agent(env.scope.id())).await;
    assert_eq!(
        r.message(),
        Some("invalid description: expected a non-empty string")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_program_sees_the_scopes_tools_except_run_code() {
    let env = default_env();
    let got = env.value(programs::TOOL_NAMES).await;
    assert_eq!(
        got,
        v(
            r#"{"names":["echo","slow","exclusive","fail","picture","remark"],"hasRunCode":false,"unknown":"unknown tool \"nope\"; available tools: echo, slow, exclusive, fail, picture, remark"}"#
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_calling_a_thousand_tools_completes() {
    let env = default_env();
    let got = env.value(programs::THOUSAND_CALLS).await;
    assert_eq!(got, v(r#"{"sequential":499500,"concurrent":499500}"#));
    let events = env.probe.events();
    assert_eq!(events.len(), 2000);
    // Every sub-call ran once, under its own id. (Concurrent bodies run on tasks of their
    // own, so the order of their events is not fixed; policy and observers keep it.)
    let mut ids: Vec<String> = events.iter().map(|e| e.call_id.clone()).collect();
    ids.sort();
    let mut expected: Vec<String> = (1..=2000).map(|i| format!("outer:code:{i}")).collect();
    expected.sort();
    assert_eq!(ids, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_call_gets_the_outer_agent() {
    let env = default_env();
    // The scope's own tool shadows the global echo: the program must reach it.
    let scoped = env.registry.scope();
    let _p = dsh_code::CodeMode::new()
        .present_as(&scoped, Mode::Code)
        .unwrap();
    let call = ToolCall::new(
        "o2",
        "run_code",
        r#"{"code":"return await tools.echo({value: 5});","description":"Echo"}"#,
    )
    .with_agent(scoped.id());
    let r = env.registry.execute(call).await;
    assert_eq!(r.value().unwrap().get("result"), Some(&v("5")));
}

/// Records when each `slow` call enters and leaves a policy or closing stage, and
/// sleeps in between: longer for earlier labels, so stages running unordered would
/// interleave.
#[derive(Clone, Default)]
struct StageLog(Arc<Mutex<Vec<String>>>);

impl StageLog {
    fn label(call: &CallInfo<'_>) -> Option<String> {
        if call.name() != "slow" {
            return None;
        }
        call.arguments()
            .get("label")
            .and_then(Value::as_str)
            .map(str::to_string)
    }

    async fn stay(&self, stage: &str, label: &str) {
        self.0.lock().unwrap().push(format!("{stage}>{label}"));
        let ms = match label {
            "a" => 40,
            "b" => 30,
            "c" => 20,
            _ => 10,
        };
        tokio::time::sleep(Duration::from_millis(ms)).await;
        tokio::task::yield_now().await;
        self.0.lock().unwrap().push(format!("{stage}<{label}"));
    }

    fn entries(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

impl PreExecute for StageLog {
    fn pre_execute<'a>(
        &'a self,
        call: &'a CallInfo<'a>,
        next: PreNext<'a>,
    ) -> HookFuture<'a, Result<PreDecision, dsh_runtime::ToolError>> {
        let Some(label) = StageLog::label(call) else {
            return next.run();
        };
        HookFuture::new(async move {
            self.stay("pre", &label).await;
            next.run().await
        })
    }
}

impl PostExecute for StageLog {
    fn post_execute<'a>(
        &'a self,
        call: &'a CallInfo<'a>,
        result: &'a ToolResult,
        next: PostNext<'a>,
    ) -> HookFuture<'a, Result<PostDecision, dsh_runtime::ToolError>> {
        let _ = result;
        let Some(label) = StageLog::label(call) else {
            return next.run();
        };
        HookFuture::new(async move {
            self.stay("post", &label).await;
            next.run().await
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn policy_and_closing_stages_of_overlapping_calls_run_one_at_a_time_in_submission_order() {
    let env = default_env();
    let log = StageLog::default();
    let _pre = env.scope.add_pre_execute(log.clone());
    let _post = env.scope.add_post_execute(log.clone());
    let got = env.value(programs::STAGGERED).await;
    assert_eq!(got, v(r#"["a","b","c","d"]"#));
    let entries = log.entries();
    let stage = |name: &str| -> Vec<String> {
        entries
            .iter()
            .filter(|e| e.starts_with(name))
            .cloned()
            .collect()
    };
    // One call at a time in each stage, in submission order, although the hook keeps
    // earlier calls longer...
    assert_eq!(
        stage("pre"),
        [
            "pre>a", "pre<a", "pre>b", "pre<b", "pre>c", "pre<c", "pre>d", "pre<d"
        ],
        "{entries:?}"
    );
    // ... and although the last body ended first.
    assert_eq!(
        env.probe.labels("end").first().map(String::as_str),
        Some("d")
    );
    assert_eq!(
        stage("post"),
        [
            "post>a", "post<a", "post>b", "post<b", "post>c", "post<c", "post>d", "post<d"
        ],
        "{entries:?}"
    );
    // The bodies still overlapped: all four were running at once.
    let events = order(&env);
    assert_eq!(most_running(&events), 4, "{events:?}");
}

/// What a sub-call observer heard, one line per event.
#[derive(Clone, Default)]
struct Heard(Arc<Mutex<Vec<String>>>);

impl SubCallObserver for Heard {
    fn started(&self, call: &SubCall<'_>, arguments: &Value) {
        self.0.lock().unwrap().push(format!(
            "start {} {} {arguments} parent={} root={}",
            call.call_id, call.name, call.parent_call_id, call.root_call_id
        ));
    }

    fn settled(&self, call: &SubCall<'_>, result: &ToolResult) {
        self.0.lock().unwrap().push(format!(
            "settle {} {} error={} {}",
            call.call_id,
            call.name,
            result.is_error(),
            result.text()
        ));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_started_call_is_heard_starting_and_settling_and_abandoned_ones_are_not() {
    let heard = Heard::default();
    let env = env_with(Mode::Both, CodeMode::new().observe_sub_calls(heard.clone()));
    let got = env.value(programs::OBSERVED).await;
    assert_eq!(got, v(r#"[{"n":1},"boom"]"#));
    // By the time run_code returned, the call cancelled at settlement had settled too.
    assert_eq!(
        *heard.0.lock().unwrap(),
        [
            r#"start outer:code:1 echo {"value":{"n":1}} parent=outer root=outer"#,
            r#"settle outer:code:1 echo error=false {"n":1}"#,
            r#"start outer:code:2 fail {"message":"boom"} parent=outer root=outer"#,
            "settle outer:code:2 fail error=true Error: boom",
            r#"start outer:code:3 slow {"label":"long","ms":60000} parent=outer root=outer"#,
            "settle outer:code:3 slow error=true Error: long was cancelled",
        ]
    );
    assert_eq!(env.probe.labels("cancelled"), ["long"]);

    // A panicking observer is contained: the run and its calls go on.
    struct Panics;
    impl SubCallObserver for Panics {
        fn started(&self, _: &SubCall<'_>, _: &Value) {
            panic!("observer bug");
        }
    }
    let env = env_with(Mode::Both, CodeMode::new().observe_sub_calls(Panics));
    assert_eq!(
        env.value(programs::TWO_ECHOES).await,
        v(r#"[1,{"b":[true,null]}]"#)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn image_bearing_results_are_appended_to_the_outer_content_in_dispatch_order() {
    let env = default_env();
    let r = env.run(programs::PICTURES).await;
    assert!(r.is_success(), "{:?}", r.message());
    let image = |caption: &str| ContentBlock::image(format!("BASE64-{caption}"), "image/png");
    assert_eq!(
        r.content(),
        [
            ContentBlock::text("first plain second\nseen"),
            ContentBlock::text("picture: first"),
            image("first"),
            ContentBlock::text("picture: second"),
            image("second"),
        ]
    );
    // The value is the program's output alone.
    assert_eq!(
        *r.value().unwrap(),
        v(r#"{"logs":["first plain second"],"result":"seen"}"#)
    );

    // A failed run forwards no images.
    let r = env.run(programs::PICTURE_THEN_THROW).await;
    assert_eq!(r.error_code(), Some(PipelineCode::CodeRunFailed));
    assert_eq!(r.content().len(), 1, "{:?}", r.content());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_read_by_the_host_or_the_encoder_give_the_same_calls() {
    let env = default_env();
    let got = env.value(programs::HOST_READS).await;
    assert_eq!(
        got,
        v(r#"{
            "numbers": [0.1, 1e21, 9007199254740992, -5, 1.5e-7, 3.5, 3, "é ✓", {}, [], null, true],
            "keys": {"0": "zero", "1": "one", "b": 2, "\ufffd": "replacement"},
            "lone": "tool arguments must be lossless JSON: unpaired surrogate in \\u escape (lone half of a UTF-16 pair) at arguments.value (line 1, column 12)",
            "nullProto": {"x": [[1]]},
            "proxied": {"outer": [1, {"inner": {"a": 1}}]},
            "message": "tool arguments must be lossless JSON: args.value.bad.g is an accessor",
            "counts": {"getPrototypeOf": 1, "ownKeys": 1, "getOwnPropertyDescriptor": 1}
        }"#)
    );
}
