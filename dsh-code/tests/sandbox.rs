//! The sandbox: what a program can reach, and every budget stopping it with the
//! registry still serving afterwards.

mod support;

use std::time::{Duration, Instant};

use dsh_code::{CodeConfig, Mode};
use dsh_runtime::PipelineCode;
use dsh_runtime::json::Value;
use support::*;
use tokio_util::sync::CancellationToken;

/// The global names a program may see: the language's builtins, plus `console`,
/// `tools` and `ToolCallError`.
const ALLOWED_GLOBALS: &[&str] = &[
    "Object",
    "Function",
    "Array",
    "Number",
    "parseFloat",
    "parseInt",
    "Infinity",
    "NaN",
    "undefined",
    "decodeURI",
    "decodeURIComponent",
    "encodeURI",
    "encodeURIComponent",
    "escape",
    "unescape",
    "isFinite",
    "isNaN",
    "globalThis",
    "Symbol",
    "Boolean",
    "String",
    "Math",
    "JSON",
    "Date",
    "RegExp",
    "Error",
    "EvalError",
    "RangeError",
    "ReferenceError",
    "SyntaxError",
    "TypeError",
    "URIError",
    "InternalError",
    "AggregateError",
    "SuppressedError",
    "Iterator",
    "Proxy",
    "Reflect",
    "Map",
    "Set",
    "WeakMap",
    "WeakSet",
    "WeakRef",
    "FinalizationRegistry",
    "ArrayBuffer",
    "SharedArrayBuffer",
    "Uint8ClampedArray",
    "Int8Array",
    "Uint8Array",
    "Int16Array",
    "Uint16Array",
    "Int32Array",
    "Uint32Array",
    "BigInt64Array",
    "BigUint64Array",
    "Float16Array",
    "Float32Array",
    "Float64Array",
    "DataView",
    "Atomics",
    "Promise",
    "BigInt",
    "eval",
    "queueMicrotask",
    "performance",
    "DOMException",
    "atob",
    "btoa",
    "CallSite",
    "DisposableStack",
    "AsyncDisposableStack",
    // Ours.
    "console",
    "tools",
    "ToolCallError",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escapes_fail() {
    let env = default_env();
    let r = env.run("return require('fs');").await;
    assert_eq!(
        r.message(),
        Some(
            "code run failed (exception): ReferenceError: require is not defined (at line 1, column 8)"
        )
    );
    let got = env
        .value(
            "const g: any = globalThis;
return [typeof g.process, typeof g.setTimeout, typeof g.setInterval, typeof g.fetch,
  typeof g.XMLHttpRequest, typeof g.WebAssembly, typeof g.std, typeof g.os, typeof g.Deno,
  typeof g.Bun, typeof g.print, typeof g.module, typeof g.exports];",
        )
        .await;
    assert_eq!(
        got,
        v(
            r#"["undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined"]"#
        )
    );
    let r = env.run("return await import('fs');").await;
    let message = r.message().unwrap();
    assert!(
        message.starts_with("code run failed (exception): "),
        "{message}"
    );
    assert!(message.contains("fs"), "{message}");
    // The engine's own prelude module, if reachable by name, is spent: calling its
    // export again hands the program nothing.
    let got = env
        .value(
            "try {
  const m: any = await import('prelude');
  try { m.default(() => 0, () => 0, [], 0); return 'called'; } catch (e) { return String(e); }
} catch (e) {
  return 'no module';
}",
        )
        .await;
    assert!(
        got == Value::from("no module") || got == Value::from("TypeError: not available"),
        "{got:?}"
    );

    // The global object reached through `Function` holds nothing beyond the builtins.
    let got = env
        .value(
            "const g = Function('return this')();
const viaEval = (0, eval)('this');
return {same: g === globalThis && viaEval === globalThis, names: Object.getOwnPropertyNames(g)};",
        )
        .await;
    assert_eq!(got.get("same"), Some(&Value::Bool(true)));
    let names = got.get("names").and_then(Value::as_array).unwrap();
    let extra: Vec<&str> = names
        .iter()
        .map(|n| n.as_str().unwrap())
        .filter(|n| !ALLOWED_GLOBALS.contains(n))
        .collect();
    assert!(extra.is_empty(), "unexpected globals: {extra:?}");
    for ours in ["console", "tools", "ToolCallError"] {
        assert!(
            names.iter().any(|n| n.as_str() == Some(ours)),
            "{ours} missing"
        );
    }

    // The host functions the bridge uses are not reachable.
    let got = env
        .value("const g: any = globalThis; return Object.getOwnPropertyNames(g).filter((n) => n.startsWith('__'));")
        .await;
    assert_eq!(got, v("[]"));
}

async fn still_serving(env: &Env) {
    let direct = env.direct("echo", r#"{"value":3}"#).await;
    assert_eq!(direct.value().cloned(), Some(v("3")));
    assert_eq!(
        env.value("return await tools.echo({value: 4});").await,
        v("4")
    );
}

fn short() -> Env {
    env(
        Mode::Both,
        CodeConfig::default()
            .deadline(Duration::from_millis(300))
            .memory_limit(16 << 20),
    )
}

/// Generous bound for "stopped within its budget" on a loaded machine.
const SLACK: Duration = Duration::from_secs(20);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_loop_is_interrupted_at_the_deadline_even_inside_try() {
    let env = short();
    for program in [
        "while (true) {}",
        "try { for (;;) {} } catch (e) { return 'caught'; }",
    ] {
        let start = Instant::now();
        let r = env.run(program).await;
        assert!(start.elapsed() < SLACK);
        assert_eq!(
            r.message(),
            Some("code run failed (timeout): the run exceeded its deadline of 300ms")
        );
    }
    still_serving(&env).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_catastrophic_regex_is_interrupted() {
    let env = short();
    let start = Instant::now();
    let r = env.run("return /(a+)+$/.test('a'.repeat(40) + 'b');").await;
    assert!(start.elapsed() < SLACK);
    assert_eq!(
        r.message(),
        Some("code run failed (timeout): the run exceeded its deadline of 300ms")
    );
    still_serving(&env).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_memory_bomb_hits_the_memory_limit() {
    let env = env(Mode::Both, CodeConfig::default().memory_limit(16 << 20));
    let r = env
        .run("const hoard: string[] = [];\nfor (let i = 0; ; i++) hoard.push('x'.repeat(65536) + i);")
        .await;
    assert_eq!(
        r.message(),
        Some("code run failed (worker-exit): the program ran out of memory (limit 16777216 bytes)")
    );
    let r = env
        .run("const a = new Array(1e8).fill(0); return a.length;")
        .await;
    assert_eq!(r.error_code(), Some(PipelineCode::CodeRunFailed));
    still_serving(&env).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unbounded_recursion_hits_the_stack_limit() {
    let env = default_env();
    let r = env
        .run("function f(n: number): number { return f(n + 1) + 1; }\nreturn f(0);")
        .await;
    let message = r.message().unwrap();
    assert!(
        message.starts_with(
            "code run failed (exception): RangeError: Maximum call stack size exceeded"
        ),
        "{message}"
    );
    // The overflow is an ordinary exception: a program may catch it and go on.
    let got = env
        .value("function f(n: number): number { return f(n + 1) + 1; }\ntry { f(0); } catch (e) { return (e as Error).name; }")
        .await;
    assert_eq!(got, Value::from("RangeError"));
    still_serving(&env).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_stuck_awaiting_a_tool_ends_at_the_deadline_and_its_call_is_cancelled() {
    let env = short();
    let start = Instant::now();
    let r = env.run(programs::AWAIT_SLOW).await;
    assert!(start.elapsed() < SLACK);
    assert_eq!(
        r.message(),
        Some("code run failed (timeout): the run exceeded its deadline of 300ms")
    );
    // Cancelled and awaited before run_code returned.
    assert_eq!(env.probe.labels("cancelled"), ["stuck"]);
    still_serving(&env).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_outer_call_stops_the_program_and_its_sub_calls() {
    let env = default_env();
    for program in [programs::AWAIT_SLOW, "while (true) {}"] {
        let token = CancellationToken::new();
        let call = run_code_call(program)
            .with_agent(env.scope.id())
            .with_cancellation(token.clone());
        let canceller = {
            let token = token.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(200)).await;
                token.cancel();
            })
        };
        let start = Instant::now();
        let r = env.registry.execute(call).await;
        canceller.await.unwrap();
        assert!(start.elapsed() < SLACK);
        assert_eq!(
            r.message(),
            Some("code run failed (abort): the run was cancelled"),
            "{program}"
        );
    }
    assert_eq!(env.probe.labels("cancelled"), ["stuck"]);
    still_serving(&env).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_is_capped_in_bytes() {
    let env = env(Mode::Both, CodeConfig::default().max_output_bytes(1000));
    let r = env
        .run("for (let i = 0; ; i++) console.log(String(i).padStart(99, '.'));")
        .await;
    let message = r.message().unwrap();
    let (head, logs) = message.split_once("\nCaptured output:\n").unwrap();
    assert_eq!(
        head,
        "code run failed (output-limit): the program printed more than 1000 bytes"
    );
    assert_eq!(logs.lines().count(), 10);
    assert!(logs.len() <= 1000);

    let r = env.run("return 'y'.repeat(2000);").await;
    assert_eq!(
        r.message(),
        Some(
            "code run failed (output-limit): the program's output (logs and result) is 2002 bytes, over the limit of 1000 bytes"
        )
    );
    still_serving(&env).await;
}
