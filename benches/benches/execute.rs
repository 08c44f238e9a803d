//! `execute`: one call of a trivial tool, end to end, against the floor and rmcp.
//!
//! Shapes A (`{path, offset?, limit?}`) and B (`{query, filters: [5 x {field, op, value}],
//! page?}`), each valid and invalid (see `common/mod.rs`). Contenders, per case, all in one
//! run (criterion group `<case>`):
//!
//! | id | what one iteration does |
//! | --- | --- |
//! | `floor_value` | `T::deserialize(&serde_json::Value)` + the body (poll once) |
//! | `floor_text` | `serde_json::from_str::<T>(text)` + the body (poll once) |
//! | `ours_text_noop` | `Registry::execute` with the raw text, polled once with a no-op waker |
//! | `ours_value_noop` | the same with an already-snapshotted `dsh_runtime::json::Value` |
//! | `ours_serde_noop` | the same from a `serde_json::Value` (clone + lossless conversion) |
//! | `ours_text_tokio` | `ours_text` driven by a current-thread tokio runtime's `block_on` |
//! | `rmcp_router_map_noop` | `ToolRouter::call` (router in a field) with a clone of the parsed argument map |
//! | `rmcp_router_text_noop` | the same after `serde_json::from_str` of the raw text into the map |
//! | `rmcp_router_map_tokio` | `rmcp_router_map` driven by `block_on` |
//! | `rmcp_handler_map_noop` | the default `#[tool_handler]` `ServerHandler::call_tool` (it builds `Self::tool_router()` per call) |
//! | `rmcp_handler_text_noop` | the same after `serde_json::from_str` of the raw text |
//! | `rmcp_handler_map_tokio` | the same driven by `block_on` |
//!
//! Run: `cargo bench -p dsh-benches --bench execute`; `benches/report.py` repeats runs and
//! prints the ratios recorded in BENCHMARKS.md.

mod common;

use std::hint::black_box;

use common::{
    CASES, CallParts, RmcpServer, SearchArgs, poll_once, registry, rmcp_context, rmcp_message,
    rmcp_params, rmcp_succeeded, run_sync,
};
use criterion::{Criterion, criterion_group, criterion_main};
use dsh_runtime::ToolCall;
use rmcp::ServerHandler;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::JsonObject;
use serde::Deserialize;

/// The floor's body call for a case: deserialize into the tool's own args type and run it.
fn floor_from_value(tool: &str, value: &serde_json::Value) -> Option<String> {
    if tool == "read_window" {
        let a = common::ReadWindowArgs::deserialize(value).ok()?;
        Some(run_sync(common::read_window(a.path, a.offset, a.limit)))
    } else {
        let a = SearchArgs::deserialize(value).ok()?;
        Some(run_sync(common::search(a)))
    }
}

fn floor_from_text(tool: &str, text: &str) -> Option<String> {
    if tool == "read_window" {
        let a: common::ReadWindowArgs = serde_json::from_str(text).ok()?;
        Some(run_sync(common::read_window(a.path, a.offset, a.limit)))
    } else {
        let a: SearchArgs = serde_json::from_str(text).ok()?;
        Some(run_sync(common::search(a)))
    }
}

fn bench(c: &mut Criterion) {
    let (registry, _registrations) = registry();
    let server = RmcpServer::new();
    let (rmcp_cx, _keep) = rmcp_context(&server);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("tokio runtime");

    for case in CASES {
        let parts = CallParts::new(&case);
        let serde_value: serde_json::Value = serde_json::from_str(case.text).expect("input");
        let map: JsonObject = match &serde_value {
            serde_json::Value::Object(m) => m.clone(),
            _ => unreachable!("inputs are objects"),
        };
        let frozen = std::sync::Arc::new(dsh_runtime::json::parse(case.text).expect("snapshot"));

        // Check every contender says what the case claims before timing it.
        assert_eq!(
            floor_from_value(case.tool, &serde_value).is_some(),
            case.valid
        );
        assert_eq!(floor_from_text(case.tool, case.text).is_some(), case.valid);
        let ours = poll_once(registry.execute(parts.text_call()));
        let ours_sync = ours.is_some();
        let ours = ours.unwrap_or_else(|| rt.block_on(registry.execute(parts.text_call())));
        assert_eq!(
            ours.is_success(),
            case.valid,
            "{}: {:?}",
            case.label,
            ours.message()
        );
        if !case.valid {
            assert_eq!(ours.code_str(), Some("INVALID_ARGS"));
            eprintln!(
                "{}: ours reports: {}",
                case.label,
                ours.message().unwrap_or("")
            );
        }
        let rmcp_call = || {
            server.tool_router.call(ToolCallContext::new(
                &server,
                rmcp_params(case.tool, map.clone()),
                rmcp_cx.clone(),
            ))
        };
        let theirs = poll_once(rmcp_call());
        let rmcp_sync = theirs.is_some();
        let theirs = theirs.unwrap_or_else(|| rt.block_on(rmcp_call()));
        assert_eq!(
            rmcp_succeeded(&theirs),
            case.valid,
            "{}: {theirs:?}",
            case.label
        );
        if !case.valid {
            eprintln!("{}: rmcp reports: {}", case.label, rmcp_message(&theirs));
        }
        let handler_call =
            || server.call_tool(rmcp_params(case.tool, map.clone()), rmcp_cx.clone());
        let handler_sync = poll_once(handler_call()).is_some();
        if !(ours_sync && rmcp_sync && handler_sync) {
            eprintln!(
                "{}: completes on the first poll: ours {ours_sync}, rmcp router {rmcp_sync}, rmcp handler {handler_sync}; the no-op driver skips those that do not",
                case.label
            );
        }

        let mut g = c.benchmark_group(case.label);
        g.bench_function("floor_value", |b| {
            b.iter(|| floor_from_value(case.tool, black_box(&serde_value)))
        });
        g.bench_function("floor_text", |b| {
            b.iter(|| floor_from_text(case.tool, black_box(case.text)))
        });
        if ours_sync {
            g.bench_function("ours_text_noop", |b| {
                b.iter(|| run_sync(registry.execute(black_box(parts.text_call()))))
            });
            g.bench_function("ours_value_noop", |b| {
                b.iter(|| {
                    let call = ToolCall::new(parts.id.clone(), parts.name.clone(), frozen.clone());
                    run_sync(registry.execute(black_box(call)))
                })
            });
            g.bench_function("ours_serde_noop", |b| {
                b.iter(|| {
                    let call =
                        ToolCall::new(parts.id.clone(), parts.name.clone(), serde_value.clone());
                    run_sync(registry.execute(black_box(call)))
                })
            });
        }
        g.bench_function("ours_text_tokio", |b| {
            b.iter(|| rt.block_on(registry.execute(black_box(parts.text_call()))))
        });
        if rmcp_sync {
            g.bench_function("rmcp_router_map_noop", |b| b.iter(|| run_sync(rmcp_call())));
            g.bench_function("rmcp_router_text_noop", |b| {
                b.iter(|| {
                    let map: JsonObject =
                        serde_json::from_str(black_box(case.text)).expect("object");
                    run_sync(server.tool_router.call(ToolCallContext::new(
                        &server,
                        rmcp_params(case.tool, map),
                        rmcp_cx.clone(),
                    )))
                })
            });
        }
        g.bench_function("rmcp_router_map_tokio", |b| {
            b.iter(|| rt.block_on(rmcp_call()))
        });
        if handler_sync {
            g.bench_function("rmcp_handler_map_noop", |b| {
                b.iter(|| run_sync(handler_call()))
            });
            g.bench_function("rmcp_handler_text_noop", |b| {
                b.iter(|| {
                    let map: JsonObject =
                        serde_json::from_str(black_box(case.text)).expect("object");
                    run_sync(server.call_tool(rmcp_params(case.tool, map), rmcp_cx.clone()))
                })
            });
        }
        g.bench_function("rmcp_handler_map_tokio", |b| {
            b.iter(|| rt.block_on(handler_call()))
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
