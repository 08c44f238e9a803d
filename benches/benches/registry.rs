//! `registry`: what registry changes cost as agent scopes accumulate.
//!
//! Each case runs with a registry that already holds `N` agent scopes (each with one
//! tool) and measures one operation: creating (and dropping) a scope, registering (and
//! dropping) a tool in one scope, registering (and dropping) a tool in the global layer,
//! which every scope inherits, and the same followed by one lookup from one scope (which
//! rebuilds that scope's view, stale since the global change). Read the results as
//! ratios to the `N = 10` row of the same case, measured in the same run: every case
//! should stay near 1x as `N` grows (a scope change rebuilds only that scope's view, a
//! global change only the global view; each scope's view is rebuilt on its next use).
//!
//! Run: `cargo bench -p dsh-benches --bench registry`.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use dsh_runtime::{AgentScope, RegistrationHandle, Registry, ToolContext, ToolError, tool};

/// Echo the text.
#[tool]
async fn echo(text: String) -> Result<String, ToolError> {
    Ok(text)
}

/// Echo the text, quietly.
#[tool]
async fn quiet(text: String, cx: ToolContext) -> String {
    let _ = cx;
    text
}

/// A registry with `n` scopes, each holding one tool.
fn populated(n: usize) -> (Registry, Vec<AgentScope>, Vec<RegistrationHandle>) {
    let registry = Registry::new();
    let mut scopes = Vec::with_capacity(n);
    let mut regs = Vec::with_capacity(n);
    for _ in 0..n {
        let scope = registry.scope();
        regs.push(scope.register(Echo).expect("register"));
        scopes.push(scope);
    }
    (registry, scopes, regs)
}

fn registry_changes(c: &mut Criterion) {
    let mut group = c.benchmark_group("registry");
    for n in [10usize, 1_000, 4_000] {
        let (registry, scopes, _regs) = populated(n);
        group.bench_with_input(BenchmarkId::new("create_scope", n), &n, |b, _| {
            b.iter(|| drop(black_box(registry.scope())))
        });
        let target = &scopes[n / 2];
        group.bench_with_input(BenchmarkId::new("register_in_scope", n), &n, |b, _| {
            b.iter(|| drop(black_box(target.register(Quiet).expect("register"))))
        });
        group.bench_with_input(BenchmarkId::new("register_global", n), &n, |b, _| {
            b.iter(|| drop(black_box(registry.register(Quiet).expect("register"))))
        });
        group.bench_with_input(
            BenchmarkId::new("register_global_then_use_scope", n),
            &n,
            |b, _| {
                b.iter(|| {
                    let registration = registry.register(Quiet).expect("register");
                    assert!(black_box(target.view().get("quiet")).is_some());
                    registration.unregister();
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, registry_changes);
criterion_main!(benches);
