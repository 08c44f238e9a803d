//! Many tasks × calls while registrations, hooks and scopes are added and dropped: every
//! call gets exactly one result, observed exactly once, and each result is consistent
//! with one snapshot of the registry.
//!
//! The default count finishes in a few seconds in a debug build; set
//! `DSH_STRESS_CALLS=100000` for the long run.

use crate::pipeline_support;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use dsh_runtime::hooks::{guard_fn, observer_fn};
use dsh_runtime::json::Value;
use dsh_runtime::{Registry, ToolCall};
use pipeline_support::{Log, Probe};

fn calls_from_env() -> usize {
    std::env::var("DSH_STRESS_CALLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_call_gets_exactly_one_result_under_registration_churn() {
    let total = calls_from_env();
    let tasks = 8;
    let per_task = total.div_ceil(tasks);
    let total = per_task * tasks;

    let registry = Registry::new();
    let quiet = Log::new();
    let _stable = registry
        .register(Probe::new("stable", &quiet).body(|_, _| async { Ok(Value::from("stable")) }))
        .unwrap();
    let observed = Arc::new(Mutex::new(HashSet::<String>::new()));
    let duplicates = Arc::new(AtomicUsize::new(0));
    let (o, d) = (observed.clone(), duplicates.clone());
    let _obs = registry.add_observer(observer_fn(move |call, _| {
        if !o.lock().unwrap().insert(call.call_id().to_string()) {
            d.fetch_add(1, Ordering::SeqCst);
        }
    }));

    // Churn: a tool, a guard and a scope come and go until the callers are done.
    let done = Arc::new(AtomicBool::new(false));
    let churn = tokio::spawn({
        let (registry, done, quiet) = (registry.clone(), done.clone(), quiet.clone());
        async move {
            let mut rounds = 0u64;
            while !done.load(Ordering::SeqCst) {
                let tool = registry
                    .register(
                        Probe::new("churn", &quiet).body(|_, _| async { Ok(Value::from("churn")) }),
                    )
                    .unwrap();
                let guard = registry.add_guard(guard_fn(|call| {
                    (call.name() == "stable" && call.call_id().ends_with("-13"))
                        .then(|| "guarded".to_string())
                }));
                let scope = registry.scope();
                let shadow = scope
                    .register(
                        Probe::new("stable", &quiet)
                            .body(|_, _| async { Ok(Value::from("shadow")) }),
                    )
                    .unwrap();
                tokio::task::yield_now().await;
                shadow.unregister();
                drop(scope);
                guard.unregister();
                tool.unregister();
                rounds += 1;
                tokio::task::yield_now().await;
            }
            rounds
        }
    });

    let results = Arc::new(AtomicUsize::new(0));
    let mut handles = Vec::new();
    for t in 0..tasks {
        let (registry, results) = (registry.clone(), results.clone());
        handles.push(tokio::spawn(async move {
            let mut outcomes = Vec::with_capacity(per_task);
            let mut i = 0;
            while i < per_task {
                let make = |i: usize| {
                    let name = if i.is_multiple_of(2) {
                        "stable"
                    } else {
                        "churn"
                    };
                    ToolCall::new(format!("t{t}-{i}"), name, r#"{"text":"x"}"#)
                };
                if i.is_multiple_of(10) && i + 4 <= per_task {
                    let batch = (i..i + 4).map(make).collect();
                    for r in registry.execute_batch(batch, 2).await {
                        results.fetch_add(1, Ordering::SeqCst);
                        outcomes.push(r);
                    }
                    i += 4;
                } else {
                    let r = registry.execute(make(i)).await;
                    results.fetch_add(1, Ordering::SeqCst);
                    outcomes.push(r);
                    i += 1;
                }
            }
            outcomes
        }));
    }
    let mut all = Vec::with_capacity(total);
    for h in handles {
        all.extend(h.await.unwrap());
    }
    done.store(true, Ordering::SeqCst);
    let rounds = churn.await.unwrap();

    assert_eq!(results.load(Ordering::SeqCst), total);
    assert_eq!(all.len(), total);
    assert_eq!(observed.lock().unwrap().len(), total);
    assert_eq!(duplicates.load(Ordering::SeqCst), 0);
    assert!(rounds > 0);
    for r in &all {
        match (r.value().cloned(), r.code_str(), r.message()) {
            (Some(v), None, None) => {
                assert!(
                    v == Value::from("stable") || v == Value::from("churn"),
                    "{r:?}"
                )
            }
            // The tools listed depend on the moment the call resolved.
            (None, Some("UNKNOWN_TOOL"), Some(m)) => {
                assert!(m.starts_with(r#"unknown tool "churn""#), "{m}")
            }
            (None, None, Some("guarded")) => {}
            other => panic!("unexpected outcome {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schemas_are_consistent_snapshots_under_churn() {
    let registry = Registry::new();
    let quiet = Log::new();
    let _a = registry.register(Probe::new("a", &quiet)).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let churn = tokio::spawn({
        let (registry, done, quiet) = (registry.clone(), done.clone(), quiet.clone());
        async move {
            while !done.load(Ordering::SeqCst) {
                let b = registry.register(Probe::new("b", &quiet)).unwrap();
                let c = registry.register(Probe::new("c", &quiet)).unwrap();
                tokio::task::yield_now().await;
                b.unregister();
                tokio::task::yield_now().await;
                c.unregister();
            }
        }
    });
    for _ in 0..2_000 {
        let names: Vec<String> = registry
            .view()
            .names()
            .iter()
            .map(|n| n.to_string())
            .collect();
        assert!(
            [
                vec!["a"],
                vec!["a", "b"],
                vec!["a", "b", "c"],
                vec!["a", "c"]
            ]
            .iter()
            .any(|expected| *expected == names),
            "{names:?}"
        );
        tokio::task::yield_now().await;
    }
    done.store(true, Ordering::SeqCst);
    churn.await.unwrap();
}
