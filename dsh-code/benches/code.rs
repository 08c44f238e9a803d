//! Code mode costs, each against a baseline measured in the same run:
//!
//! - `sub_call/direct_execute`: one `Registry::execute` of a trivial tool from Rust
//!   (the baseline);
//! - `sub_call/awaited_in_program`: one run whose program awaits the same tool 1,000
//!   times in a row (throughput per element = per sub-call, the run's fixed cost
//!   spread over them);
//! - `sub_call/promise_all_in_program`: 1,000 calls under one `Promise.all`;
//! - `sub_call/await_only_in_program`: the same loop awaiting a resolved promise and
//!   calling no tool: the engine's own share of an awaited call (a floor, not a target);
//! - `run/trivial`: one whole `run_code` call of `return 1` (fresh engine, strip, run),
//!   against `run/direct_execute`, the same pipeline around a trivial Rust tool.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dsh_code::{CodeMode, Mode};
use dsh_runtime::json::{Object, Value};
use dsh_runtime::{Registry, ToolCall, tool};

/// Return the number given.
#[tool(read_only, concurrency_safe)]
async fn echo(
    /// Any number.
    value: i64,
) -> i64 {
    value
}

fn run_call(code: &str) -> ToolCall {
    let mut args = Object::new();
    args.insert("code", Value::from(code));
    args.insert("description", Value::from("Bench"));
    ToolCall::new("bench", "run_code", Value::Object(args))
}

const SEQUENTIAL: &str =
    "let s = 0;\nfor (let i = 0; i < 1000; i++) s += await tools.echo({value: i});\nreturn s;";
const AWAIT_ONLY: &str =
    "let s = 0;\nfor (let i = 0; i < 1000; i++) s += await Promise.resolve(i);\nreturn s;";
const CONCURRENT: &str = "const xs = await Promise.all(Array.from({length: 1000}, (_, i) => tools.echo({value: i})));\nreturn xs.length;";

fn benches(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let registry = Registry::new();
    let _echo = registry.register(Echo).expect("register");
    let scope = registry.scope();
    let _p = CodeMode::new()
        .present_as(&scope, Mode::Both)
        .expect("present");
    let agent = scope.id();

    // Sanity: the programs do what the figures claim.
    let check = rt.block_on(registry.execute(run_call(SEQUENTIAL).with_agent(agent)));
    assert_eq!(check.text(), "499500", "{:?}", check.message());
    let check = rt.block_on(registry.execute(run_call(CONCURRENT).with_agent(agent)));
    assert_eq!(check.text(), "1000", "{:?}", check.message());
    let check = rt.block_on(registry.execute(run_call(AWAIT_ONLY).with_agent(agent)));
    assert_eq!(check.text(), "499500", "{:?}", check.message());

    let mut g = c.benchmark_group("sub_call");
    g.throughput(Throughput::Elements(1));
    g.bench_function("direct_execute", |b| {
        b.iter(|| {
            rt.block_on(
                registry.execute(
                    ToolCall::new(
                        "d",
                        "echo",
                        Value::from_iter_object([("value", Value::from(7))]),
                    )
                    .with_agent(agent),
                ),
            )
        })
    });
    g.throughput(Throughput::Elements(1000));
    g.sample_size(20);
    g.bench_function("awaited_in_program", |b| {
        b.iter(|| rt.block_on(registry.execute(run_call(SEQUENTIAL).with_agent(agent))))
    });
    g.bench_function("promise_all_in_program", |b| {
        b.iter(|| rt.block_on(registry.execute(run_call(CONCURRENT).with_agent(agent))))
    });
    g.bench_function("await_only_in_program", |b| {
        b.iter(|| rt.block_on(registry.execute(run_call(AWAIT_ONLY).with_agent(agent))))
    });
    g.finish();

    let mut g = c.benchmark_group("run");
    g.bench_function("direct_execute", |b| {
        b.iter(|| {
            rt.block_on(
                registry.execute(
                    ToolCall::new(
                        "d",
                        "echo",
                        Value::from_iter_object([("value", Value::from(7))]),
                    )
                    .with_agent(agent),
                ),
            )
        })
    });
    g.bench_function("trivial", |b| {
        b.iter(|| rt.block_on(registry.execute(run_call("return 1").with_agent(agent))))
    });
    g.finish();
}

trait FromIterObject {
    fn from_iter_object<const N: usize>(entries: [(&str, Value); N]) -> Value;
}

impl FromIterObject for Value {
    fn from_iter_object<const N: usize>(entries: [(&str, Value); N]) -> Value {
        let mut o = Object::new();
        for (k, v) in entries {
            o.insert(k, v);
        }
        Value::Object(o)
    }
}

criterion_group!(code, benches);
criterion_main!(code);
