//! Execution modes and the batch scheduler. Overlap is proven with
//! barriers (two bodies can only pass a two-party barrier together), never with sleeps;
//! a generous timeout turns a scheduling bug into a failure instead of a hang.

use crate::pipeline_support;

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dsh_runtime::hooks::{
    CallInfo, HookFuture, PreDecision, PreExecute, PreNext, observer_fn, post_execute_fn,
};
use dsh_runtime::json::Value;
use dsh_runtime::{ExecutionMode, Registry, Restriction, ToolCall, ToolError};
use pipeline_support::{Log, Probe};
use tokio::sync::{Barrier, Notify};

const LIMIT: Duration = Duration::from_secs(60);

fn text_of(args: &Value) -> String {
    args.as_object()
        .and_then(|o| o.get("text"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn c(id: &str, name: &str, text: &str) -> ToolCall {
    ToolCall::new(id, name, format!(r#"{{"text":"{text}"}}"#))
}

#[tokio::test]
async fn execution_mode_is_parallel_only_for_true_on_valid_arguments() {
    let registry = Registry::new();
    let log = Log::new();
    let _a = registry
        .register(Probe::new("reader", &log).safe(|args| text_of(args) != "write"))
        .unwrap();
    let _b = registry.register(Probe::new("plain", &log)).unwrap();
    let _c = registry
        .register(Probe::new("panicky", &log).safe(|_| panic!("classifier bug")))
        .unwrap();
    let m = |call: ToolCall| registry.execution_mode(&call);
    assert_eq!(m(c("1", "reader", "read")), ExecutionMode::Parallel);
    assert_eq!(m(c("1", "reader", "write")), ExecutionMode::Exclusive);
    // Invalid arguments: never parallel, whatever the classifier says.
    assert_eq!(
        m(ToolCall::new("1", "reader", "{}")),
        ExecutionMode::Exclusive
    );
    assert_eq!(
        m(ToolCall::new("1", "reader", "{")),
        ExecutionMode::Exclusive
    );
    // Undeclared classifier, unknown tool, panicking classifier.
    assert_eq!(m(c("1", "plain", "read")), ExecutionMode::Exclusive);
    assert_eq!(m(c("1", "nope", "read")), ExecutionMode::Exclusive);
    assert_eq!(m(c("1", "panicky", "read")), ExecutionMode::Exclusive);
    // Hidden for a scope: resolved per caller.
    let scope = registry.scope();
    scope.restrict(Restriction::deny(["reader"])).unwrap();
    assert_eq!(
        m(c("1", "reader", "read").with_agent(scope.id())),
        ExecutionMode::Exclusive
    );
    assert_eq!(
        log.get(),
        Vec::<String>::new(),
        "classification runs no stage"
    );
}

/// A tool whose bodies log start/end and, for texts starting with `meet`, wait at the
/// shared barrier.
fn rendezvous(
    log: &Log,
    barrier: Arc<Barrier>,
    active: Arc<AtomicUsize>,
    max: Arc<AtomicUsize>,
) -> Probe {
    let l = log.clone();
    Probe::new("job", log)
        .safe(|args| text_of(args).starts_with("meet") || text_of(args).starts_with("par"))
        .body(move |args, _| {
            let (l, barrier, active, max) =
                (l.clone(), barrier.clone(), active.clone(), max.clone());
            async move {
                let id = text_of(&args);
                l.push(format!("start {id}"));
                let now = active.fetch_add(1, Ordering::SeqCst) + 1;
                max.fetch_max(now, Ordering::SeqCst);
                if id.starts_with("meet") {
                    barrier.wait().await;
                } else {
                    for _ in 0..20 {
                        tokio::task::yield_now().await;
                    }
                }
                active.fetch_sub(1, Ordering::SeqCst);
                l.push(format!("end {id}"));
                Ok(Value::from(id))
            }
        })
}

fn pos(log: &[String], entry: &str) -> usize {
    log.iter()
        .position(|e| e == entry)
        .unwrap_or_else(|| panic!("{entry:?} not in {log:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_calls_overlap_and_an_exclusive_call_is_a_barrier() {
    let registry = Registry::new();
    let log = Log::new();
    let (active, max) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let _t = registry
        .register(rendezvous(&log, Arc::new(Barrier::new(2)), active, max))
        .unwrap();
    let l = log.clone();
    let _p = registry.add_post_execute(post_execute_fn(move |call, _| {
        l.push(format!("post {}", call.call_id()));
        None
    }));
    let calls = vec![
        c("1", "job", "meet-a1"),
        c("2", "job", "meet-a2"),
        c("3", "job", "exclusive"),
        c("4", "job", "meet-b1"),
        c("5", "job", "meet-b2"),
    ];
    let results = tokio::time::timeout(LIMIT, registry.execute_batch(calls, 4))
        .await
        .expect("the batch deadlocked: parallel calls did not overlap");
    let values: Vec<Value> = results
        .iter()
        .map(|r| (*r.value().unwrap()).clone())
        .collect();
    assert_eq!(
        values,
        ["meet-a1", "meet-a2", "exclusive", "meet-b1", "meet-b2"].map(Value::from)
    );
    let log = log.get();
    // The exclusive call starts after both earlier calls finished (post included)...
    assert!(pos(&log, "start exclusive") > pos(&log, "post 1"));
    assert!(pos(&log, "start exclusive") > pos(&log, "post 2"));
    // ...and later calls start only after it finished, post-execute included.
    assert!(pos(&log, "start meet-b1") > pos(&log, "post 3"));
    assert!(pos(&log, "start meet-b2") > pos(&log, "post 3"));
    // Post-execute keeps submission order.
    let posts: Vec<&String> = log.iter().filter(|e| e.starts_with("post")).collect();
    assert_eq!(posts, ["post 1", "post 2", "post 3", "post 4", "post 5"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_parallel_cap_is_honoured() {
    let registry = Registry::new();
    let log = Log::new();
    let (active, max) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let _t = registry
        .register(rendezvous(
            &log,
            Arc::new(Barrier::new(2)),
            active,
            max.clone(),
        ))
        .unwrap();
    // Pairs meet at the barrier: with a cap of 2 they must run pairwise.
    let calls = (0..6)
        .map(|i| c(&i.to_string(), "job", &format!("meet-{i}")))
        .collect();
    let results = tokio::time::timeout(LIMIT, registry.execute_batch(calls, 2))
        .await
        .expect("deadlock");
    assert!(results.iter().all(|r| r.is_success()));
    assert_eq!(max.load(Ordering::SeqCst), 2);

    // Cap 0 counts as 1: parallel-safe calls then run one at a time.
    max.store(0, Ordering::SeqCst);
    let calls = (0..4)
        .map(|i| c(&i.to_string(), "job", &format!("par-{i}")))
        .collect();
    let results = registry.execute_batch(calls, 0).await;
    assert_eq!(results.len(), 4);
    assert_eq!(max.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn post_execute_and_observers_keep_submission_order_when_a_later_body_finishes_first() {
    let registry = Registry::new();
    let log = Log::new();
    let gate = Arc::new(Notify::new());
    let (l, g) = (log.clone(), gate.clone());
    let _t = registry
        .register(Probe::new("job", &log).safe(|_| true).body(move |args, _| {
            let (l, g) = (l.clone(), g.clone());
            async move {
                let id = text_of(&args);
                if id == "first" {
                    // Waits until the second call's body has finished.
                    g.notified().await;
                } else {
                    g.notify_one();
                }
                l.push(format!("end {id}"));
                Ok(Value::from(id))
            }
        }))
        .unwrap();
    let (a, b) = (log.clone(), log.clone());
    let _p = registry.add_post_execute(post_execute_fn(move |call, _| {
        a.push(format!("post {}", call.call_id()));
        None
    }));
    let _o = registry.add_observer(observer_fn(move |call, _| {
        b.push(format!("observe {}", call.call_id()))
    }));
    let calls = vec![c("A", "job", "first"), c("B", "job", "second")];
    let results = tokio::time::timeout(LIMIT, registry.execute_batch(calls, 8))
        .await
        .expect("deadlock");
    assert_eq!(*results[0].value().unwrap(), Value::from("first"));
    assert_eq!(*results[1].value().unwrap(), Value::from("second"));
    let log = log.get();
    assert!(pos(&log, "end second") < pos(&log, "end first"));
    let tail: Vec<&String> = log
        .iter()
        .filter(|e| !e.starts_with("end") && *e != "body" && *e != "render" && *e != "finalize")
        .collect();
    assert_eq!(tail, ["post A", "observe A", "post B", "observe B"]);
}

/// A pre-execute hook that holds the first call until released.
struct HoldFirst {
    log: Log,
    release: Arc<Notify>,
}
impl PreExecute for HoldFirst {
    fn pre_execute<'a>(
        &'a self,
        call: &'a CallInfo<'a>,
        next: PreNext<'a>,
    ) -> HookFuture<'a, Result<PreDecision, ToolError>> {
        HookFuture::new(async move {
            self.log.push(format!("pre start {}", call.call_id()));
            if call.call_id() == "A" {
                self.release.notified().await;
            }
            self.log.push(format!("pre end {}", call.call_id()));
            next.run().await
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn policy_runs_one_call_at_a_time_in_submission_order() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry
        .register(Probe::new("job", &log).safe(|_| true))
        .unwrap();
    let release = Arc::new(Notify::new());
    let _h = registry.add_pre_execute(HoldFirst {
        log: log.clone(),
        release: release.clone(),
    });
    let batch = tokio::spawn({
        let registry = registry.clone();
        async move {
            registry
                .execute_batch(
                    vec![c("A", "job", "a"), c("B", "job", "b"), c("C", "job", "c")],
                    8,
                )
                .await
        }
    });
    while !log.get().contains(&"pre start A".to_string()) {
        tokio::task::yield_now().await;
    }
    for _ in 0..100 {
        tokio::task::yield_now().await;
    }
    assert!(
        !log.get()
            .iter()
            .any(|e| e == "pre start B" || e == "pre start C"),
        "a later call entered policy while an earlier one was in it: {:?}",
        log.get()
    );
    release.notify_one();
    let results = tokio::time::timeout(LIMIT, batch)
        .await
        .expect("deadlock")
        .unwrap();
    assert!(results.iter().all(|r| r.is_success()));
    let pres: Vec<String> = log
        .get()
        .into_iter()
        .filter(|e| e.starts_with("pre"))
        .collect();
    assert_eq!(
        pres,
        [
            "pre start A",
            "pre end A",
            "pre start B",
            "pre end B",
            "pre start C",
            "pre end C"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_calls_in_a_batch_never_block_the_rest() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry
        .register(Probe::new("job", &log).safe(|_| true))
        .unwrap();
    let mut pre_aborted = c("3", "job", "x");
    pre_aborted.cancellation().cancel();
    let calls = vec![
        ToolCall::new("1", "job", "{"),
        c("2", "missing", "x"),
        pre_aborted,
        ToolCall::new("4", "job", "{}"),
        c("5", "job", "ok"),
    ];
    let results = tokio::time::timeout(LIMIT, registry.execute_batch(calls, 3))
        .await
        .expect("deadlock");
    let codes: Vec<Option<&str>> = results.iter().map(|r| r.code_str()).collect();
    assert_eq!(
        codes,
        [
            Some("INVALID_ARGS"),
            Some("UNKNOWN_TOOL"),
            Some("ABORTED_BEFORE_DISPATCH"),
            Some("INVALID_ARGS"),
            None
        ]
    );
    assert!(results[0].is_error() && results[4].is_success());
}

/// A minimal executor (no Tokio): `execute` and `execute_batch` work on any executor.
fn block_on<F: Future>(fut: F) -> F::Output {
    use std::task::{Context, Poll, Wake, Waker};
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut fut = std::pin::pin!(fut);
    loop {
        match fut.as_mut().poll(&mut cx) {
            Poll::Ready(v) => return v,
            Poll::Pending => std::thread::park(),
        }
    }
}

#[test]
fn runs_without_a_tokio_runtime() {
    let registry = Registry::new();
    let log = Log::new();
    let _t = registry
        .register(Probe::new("job", &log).safe(|_| true))
        .unwrap();
    let r = block_on(registry.execute(c("1", "job", "one")));
    assert_eq!(*r.value().unwrap(), Value::from("one"));
    let order = Arc::new(Mutex::new(Vec::new()));
    let o = order.clone();
    let _p = registry.add_post_execute(post_execute_fn(move |call, _| {
        o.lock().unwrap().push(call.call_id().to_string());
        None
    }));
    let rs = block_on(registry.execute_batch(vec![c("a", "job", "1"), c("b", "job", "2")], 4));
    assert_eq!(rs.len(), 2);
    assert_eq!(*order.lock().unwrap(), ["a", "b"]);
}

/// A policy hook that records each call as it enters pre-execute.
struct Entered(Arc<Mutex<Vec<String>>>);

impl PreExecute for Entered {
    fn pre_execute<'a>(
        &'a self,
        call: &'a CallInfo<'a>,
        next: PreNext<'a>,
    ) -> HookFuture<'a, Result<PreDecision, ToolError>> {
        HookFuture::new(async move {
            self.0.lock().unwrap().push(call.call_id().to_string());
            next.run().await
        })
    }
}

#[tokio::test]
async fn an_ordered_call_dropped_before_its_turn_gives_its_place_up() {
    let registry = Registry::new();
    let log = Log::new();
    let _p = registry.register(Probe::new("plain", &log)).unwrap();
    let entered = Arc::new(Mutex::new(Vec::new()));
    let _hook = registry.add_pre_execute(Entered(entered.clone()));
    let order = dsh_runtime::CallOrder::new();
    let first = registry.execute_ordered(c("0", "plain", "a"), &order);
    let second = registry.execute_ordered(c("1", "plain", "b"), &order);
    let third = registry.execute_ordered(c("2", "plain", "c"), &order);
    let fourth = registry.execute_ordered(c("3", "plain", "d"), &order);
    // The second and third give up their places while the first still holds its turn.
    drop(second);
    drop(third);
    let (a, d) = tokio::time::timeout(LIMIT, async { tokio::join!(fourth, first) })
        .await
        .expect("a dropped call held back the calls after it");
    assert!(a.is_success() && d.is_success(), "{a:?} {d:?}");
    assert_eq!(*entered.lock().unwrap(), ["0", "3"]);

    // Dropping the call whose turn it is passes the turn on too.
    let first = registry.execute_ordered(c("4", "plain", "e"), &order);
    let second = registry.execute_ordered(c("5", "plain", "f"), &order);
    drop(first);
    let b = tokio::time::timeout(LIMIT, second)
        .await
        .expect("a dropped first call held back the second");
    assert!(b.is_success(), "{b:?}");
}
