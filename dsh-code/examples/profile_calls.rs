//! A driver for instruction-count profiles of code mode (not a benchmark: the timed
//! figures come from `cargo bench -p dsh-code --bench code`).
//!
//! ```sh
//! cargo build --release -p dsh-code --example profile_calls
//! valgrind --tool=callgrind target/release/examples/profile_calls awaited 20
//! ```
//!
//! `WHAT` is `direct` (1,000 `Registry::execute` calls of a trivial tool from Rust per
//! repetition), `awaited` (one run awaiting that tool 1,000 times), `concurrent` (one run
//! with 1,000 calls under `Promise.all`), `await_only` (one run awaiting 1,000 resolved
//! promises, no tool) or `trivial` (one run of `return 1`); `REPS` repetitions follow one
//! warm-up. Per-call costs are differences between two profiles, e.g. `awaited` minus
//! `await_only`, divided by the calls.

use std::process::ExitCode;

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
    args.insert("description", Value::from("Profile"));
    ToolCall::new("profile", "run_code", Value::Object(args))
}

const AWAITED: &str =
    "let s = 0;\nfor (let i = 0; i < 1000; i++) s += await tools.echo({value: i});\nreturn s;";
const AWAIT_ONLY: &str =
    "let s = 0;\nfor (let i = 0; i < 1000; i++) s += await Promise.resolve(i);\nreturn s;";
const CONCURRENT: &str = "const xs = await Promise.all(Array.from({length: 1000}, (_, i) => tools.echo({value: i})));\nreturn xs.length;";

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let what = args.next().unwrap_or_else(|| "awaited".to_string());
    let reps: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(10);
    let Ok(rt) = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    else {
        eprintln!("cannot start a runtime");
        return ExitCode::FAILURE;
    };
    let registry = Registry::new();
    let Ok(_echo) = registry.register(Echo) else {
        return ExitCode::FAILURE;
    };
    let scope = registry.scope();
    let Ok(_presentation) = CodeMode::new().present_as(&scope, Mode::Both) else {
        return ExitCode::FAILURE;
    };
    let agent = scope.id();
    let program = match what.as_str() {
        "direct" => None,
        "awaited" => Some(AWAITED),
        "concurrent" => Some(CONCURRENT),
        "await_only" => Some(AWAIT_ONLY),
        "trivial" => Some("return 1"),
        other => {
            eprintln!("unknown WHAT {other:?}: direct, awaited, concurrent, await_only, trivial");
            return ExitCode::from(2);
        }
    };
    rt.block_on(async {
        for _ in 0..=reps {
            match program {
                Some(code) => {
                    let r = registry.execute(run_call(code).with_agent(agent)).await;
                    if r.is_error() {
                        eprintln!("run failed: {:?}", r.message());
                    }
                }
                None => {
                    for i in 0..1000 {
                        let mut o = Object::new();
                        o.insert("value", Value::from(i));
                        let call = ToolCall::new("d", "echo", Value::Object(o)).with_agent(agent);
                        registry.execute(call).await;
                    }
                }
            }
        }
    });
    ExitCode::SUCCESS
}
