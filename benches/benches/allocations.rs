//! `allocations`: how many heap allocations one call makes, per contender and case.
//!
//! Not a timing bench: a counting `#[global_allocator]` wraps the system allocator, each
//! operation runs a few times to warm lazily built statics, then 1,000 times while counted,
//! and the per-call averages are printed as a table (they are whole numbers when the
//! operation is deterministic). Rows:
//!
//! - `ours_text`: `Registry::execute` from raw text, polled once with a no-op waker;
//! - `ours_value`: the same from an already-snapshotted value;
//! - `snapshot_only`: `dsh_runtime::json::parse` of the text alone (part of `ours_text`);
//! - `unknown_tool`: `execute` of a name that is not registered (resolve fails: the
//!   result and the call's own bookkeeping, no arguments work);
//! - `floor_text`, `floor_value`: serde into the args struct + the body;
//! - `rmcp_router`, `rmcp_handler`: rmcp's dispatch from a clone of the parsed map.
//!
//! Run: `cargo bench -p dsh-benches --bench allocations`.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{
    CASES, CallParts, RmcpServer, SearchArgs, registry, rmcp_context, rmcp_params, run_sync,
};
use dsh_runtime::ToolCall;
use rmcp::ServerHandler;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::JsonObject;
use serde::Deserialize;

struct Counting;

static ALLOCS: AtomicUsize = AtomicUsize::new(0);
static BYTES: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every method forwards to `System` with the caller's arguments unchanged; the
// counters are side effects only.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded as received.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded as received.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as received.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(new_size, Ordering::Relaxed);
        // SAFETY: forwarded as received.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const RUNS: usize = 1_000;

/// Average allocations and bytes per run of `f` (reallocations count as allocations).
fn count<R>(mut f: impl FnMut() -> R) -> (f64, f64) {
    for _ in 0..10 {
        black_box(f());
    }
    let (a0, b0) = (
        ALLOCS.load(Ordering::Relaxed),
        BYTES.load(Ordering::Relaxed),
    );
    for _ in 0..RUNS {
        black_box(f());
    }
    let (a1, b1) = (
        ALLOCS.load(Ordering::Relaxed),
        BYTES.load(Ordering::Relaxed),
    );
    (
        (a1 - a0) as f64 / RUNS as f64,
        (b1 - b0) as f64 / RUNS as f64,
    )
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is not supported (the run is short).
    let (registry, _registrations) = registry();
    let server = RmcpServer::new();
    let (rmcp_cx, _keep) = rmcp_context(&server);

    let mut rows: Vec<(&str, Vec<(f64, f64)>)> = Vec::new();
    let mut push = |name: &'static str, i: usize, v: (f64, f64)| {
        if let Some(row) = rows.iter_mut().find(|(n, _)| *n == name) {
            row.1.push(v);
        } else {
            assert_eq!(i, 0);
            rows.push((name, vec![v]));
        }
    };

    for (i, case) in CASES.iter().enumerate() {
        let parts = CallParts::new(case);
        let serde_value: serde_json::Value = serde_json::from_str(case.text).expect("input");
        let map: JsonObject = match &serde_value {
            serde_json::Value::Object(m) => m.clone(),
            _ => unreachable!("inputs are objects"),
        };
        let frozen = Arc::new(dsh_runtime::json::parse(case.text).expect("snapshot"));
        let unknown: Arc<str> = Arc::from("no_such_tool");

        push(
            "ours_text",
            i,
            count(|| run_sync(registry.execute(parts.text_call()))),
        );
        push(
            "ours_value",
            i,
            count(|| {
                let call = ToolCall::new(parts.id.clone(), parts.name.clone(), frozen.clone());
                run_sync(registry.execute(call))
            }),
        );
        push(
            "snapshot_only",
            i,
            count(|| dsh_runtime::json::parse(&parts.text).expect("snapshot")),
        );
        push(
            "unknown_tool",
            i,
            count(|| {
                let call = ToolCall::new(parts.id.clone(), unknown.clone(), frozen.clone());
                run_sync(registry.execute(call))
            }),
        );
        push(
            "floor_text",
            i,
            count(|| {
                if case.tool == "read_window" {
                    serde_json::from_str::<common::ReadWindowArgs>(case.text)
                        .ok()
                        .map(|a| run_sync(common::read_window(a.path, a.offset, a.limit)))
                } else {
                    serde_json::from_str::<SearchArgs>(case.text)
                        .ok()
                        .map(|a| run_sync(common::search(a)))
                }
            }),
        );
        push(
            "floor_value",
            i,
            count(|| {
                if case.tool == "read_window" {
                    common::ReadWindowArgs::deserialize(&serde_value)
                        .ok()
                        .map(|a| run_sync(common::read_window(a.path, a.offset, a.limit)))
                } else {
                    SearchArgs::deserialize(&serde_value)
                        .ok()
                        .map(|a| run_sync(common::search(a)))
                }
            }),
        );
        push(
            "rmcp_router",
            i,
            count(|| {
                run_sync(server.tool_router.call(ToolCallContext::new(
                    &server,
                    rmcp_params(case.tool, map.clone()),
                    rmcp_cx.clone(),
                )))
            }),
        );
        push(
            "rmcp_handler",
            i,
            count(|| {
                run_sync(server.call_tool(rmcp_params(case.tool, map.clone()), rmcp_cx.clone()))
            }),
        );
    }

    println!("allocations per call (bytes requested per call), {RUNS} calls each");
    print!("| contender |");
    for case in CASES {
        print!(" {} |", case.label);
    }
    println!();
    println!("|---|{}", "---|".repeat(CASES.len()));
    for (name, cells) in &rows {
        print!("| {name} |");
        for (a, b) in cells {
            print!(" {a} ({b:.0} B) |");
        }
        println!();
    }
}
