//! Timeouts and aborts that answer on time although the body is stuck in a blocking system
//! call (a synchronous open of a FIFO nobody writes to), and the accounting of the bodies
//! left running.
//!
//! Each blocked body is released by opening its FIFO for writing: by the test once it has
//! asserted, or by a release thread after `RELEASE_AFTER`, so that a pipeline waiting for
//! the body (the behaviour before detaching) fails the time bound instead of hanging.

use crate::pipeline_support;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use dsh_runtime::json::Value;
use dsh_runtime::{PipelineCode, Registry, ToolCall};
use pipeline_support::{Log, Probe};

/// When a blocked body is released at the latest.
const RELEASE_AFTER: Duration = Duration::from_secs(10);
/// The bound on a result that must come at its deadline (far below `RELEASE_AFTER`).
const ON_TIME: Duration = Duration::from_secs(4);

/// A FIFO in a fresh temporary directory, and the thread that releases its reader.
struct Fifo {
    path: PathBuf,
    release: Option<mpsc::Sender<()>>,
}

impl Fifo {
    fn new() -> Fifo {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "dsh-runtime-detach-{}-{}.fifo",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_file(&path);
        let status = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .expect("running `mkfifo` (coreutils) to make the test's FIFO");
        assert!(
            status.success(),
            "mkfifo {} failed: {status}",
            path.display()
        );
        let (tx, rx) = mpsc::channel::<()>();
        let p = path.clone();
        // Opening the FIFO for writing completes the reader's blocked open. The thread
        // is not joined: if no reader ever comes, it stays blocked until the test
        // process exits.
        std::thread::spawn(move || {
            let _ = rx.recv_timeout(RELEASE_AFTER);
            let _ = std::fs::OpenOptions::new().write(true).open(&p);
        });
        Fifo {
            path,
            release: Some(tx),
        }
    }

    fn release(&mut self) {
        if let Some(tx) = self.release.take() {
            let _ = tx.send(());
        }
    }
}

impl Drop for Fifo {
    fn drop(&mut self) {
        self.release();
        let _ = std::fs::remove_file(&self.path);
    }
}

/// A tool whose body blocks its thread in `open(2)` of `fifo` (which ignores every
/// cancellation), then succeeds.
fn stuck(name: &'static str, fifo: &Path, log: &Log) -> Probe {
    let fifo = fifo.to_path_buf();
    Probe::new(name, log).body(move |_, _cx| {
        let fifo = fifo.clone();
        async move {
            // Deliberately synchronous inside an async body.
            let opened = std::fs::File::open(&fifo).map_err(|e| {
                dsh_runtime::ToolError::new(format!("open {}: {e}", fifo.display()))
            })?;
            drop(opened);
            Ok(Value::from("released"))
        }
    })
}

fn call(name: &str) -> ToolCall {
    ToolCall::new("c", name, r#"{"text":"x"}"#)
}

/// Poll `cond` every 10 ms for at most `limit`.
async fn eventually(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if cond() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    cond()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_fires_on_time_while_the_body_is_blocked_in_a_system_call() {
    let registry = Registry::new();
    let log = Log::new();
    let mut fifo = Fifo::new();
    let _t = registry
        .register(stuck("stuck", &fifo.path, &log).timeout_ms(100))
        .unwrap();
    let start = Instant::now();
    let r = registry.execute(call("stuck")).await;
    let took = start.elapsed();
    assert_eq!(r.error_code(), Some(PipelineCode::ToolTimeout), "{r:?}");
    assert_eq!(r.message(), Some("tool call timed out after 100ms"));
    assert!(
        took < ON_TIME,
        "the timeout answered after {took:?}, not at its 100ms deadline (plus the grace)"
    );
    assert!(
        took >= Duration::from_millis(100),
        "answered early: {took:?}"
    );
    // The stuck body is counted until it returns.
    assert_eq!(registry.detached_bodies(), 1);
    assert_eq!(registry.detached_total(), 1);
    fifo.release();
    assert!(
        eventually(Duration::from_secs(5), || registry.detached_bodies() == 0).await,
        "the released body was still counted as detached"
    );
    assert_eq!(registry.detached_total(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_abort_answers_on_time_while_the_body_is_blocked() {
    let registry = Registry::new();
    let log = Log::new();
    let mut fifo = Fifo::new();
    let _t = registry.register(stuck("stuck", &fifo.path, &log)).unwrap();
    let mut c = call("stuck");
    let token = c.cancellation().clone();
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        token.cancel();
    });
    let start = Instant::now();
    let r = registry.execute(c).await;
    let took = start.elapsed();
    assert_eq!(r.error_code(), Some(PipelineCode::Aborted), "{r:?}");
    assert!(took < ON_TIME, "the abort answered after {took:?}");
    assert_eq!(registry.detached_bodies(), 1);
    canceller.await.unwrap();
    fifo.release();
    assert!(eventually(Duration::from_secs(5), || registry.detached_bodies() == 0).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 3)]
async fn calls_beyond_the_detached_limit_are_refused_before_their_body_starts() {
    let registry = Registry::builder()
        .max_detached(1)
        .detach_grace(Duration::from_millis(20))
        .build();
    let log = Log::new();
    let mut fifo = Fifo::new();
    let _t = registry
        .register(stuck("stuck", &fifo.path, &log).timeout_ms(50))
        .unwrap();
    let _q = registry
        .register(
            Probe::new("quick", &log)
                .timeout_ms(60_000)
                .body(|_, _| async { Ok(Value::from("ran")) }),
        )
        .unwrap();
    let r = registry.execute(call("stuck")).await;
    assert_eq!(r.error_code(), Some(PipelineCode::ToolTimeout), "{r:?}");
    assert_eq!(registry.detached_bodies(), 1);
    log.take();

    // At the limit: refused, the body never ran.
    let r = registry.execute(call("quick")).await;
    assert!(r.is_error(), "{r:?}");
    assert_eq!(r.code_str(), Some("DETACHED_LIMIT"));
    assert_eq!(
        r.message(),
        Some(
            "tool \"quick\" was not started: 1 bodies of timed-out or aborted calls are still \
             running detached, the registry's limit (RegistryBuilder::max_detached)"
        )
    );
    assert!(!log.get().contains(&"body".to_string()), "{:?}", log.get());
    fifo.release();
    assert!(eventually(Duration::from_secs(5), || registry.detached_bodies() == 0).await);
    let r = registry.execute(call("quick")).await;
    assert!(r.is_success(), "{r:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_returns_within_the_grace_is_awaited_not_detached() {
    let registry = Registry::new();
    let log = Log::new();
    let l = log.clone();
    let _t = registry
        .register(
            Probe::new("slow_cleanup", &log)
                .timeout_ms(20)
                .body(move |_, cx| {
                    let l = l.clone();
                    async move {
                        cx.cancellation().cancelled().await;
                        tokio::time::sleep(Duration::from_millis(30)).await;
                        l.push("cleaned up");
                        Ok(Value::from("late"))
                    }
                }),
        )
        .unwrap();
    let r = registry.execute(call("slow_cleanup")).await;
    assert_eq!(r.error_code(), Some(PipelineCode::ToolTimeout));
    assert!(log.get().contains(&"cleaned up".to_string()));
    assert_eq!(registry.detached_total(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_call_cancels_its_body_and_counts_it_until_it_returns() {
    let registry = Registry::new();
    let log = Log::new();
    let l = log.clone();
    let _t = registry
        .register(Probe::new("waits", &log).body(move |_, cx| {
            let l = l.clone();
            async move {
                cx.cancellation().cancelled().await;
                tokio::time::sleep(Duration::from_millis(50)).await;
                l.push("body saw cancellation");
                Ok(Value::from("late"))
            }
        }))
        .unwrap();
    let mut c = call("waits");
    let _token = c.cancellation().clone();
    let dropped = tokio::time::timeout(Duration::from_millis(50), registry.execute(c)).await;
    assert!(dropped.is_err(), "the call ended on its own: {dropped:?}");
    assert_eq!(registry.detached_total(), 1);
    assert!(
        eventually(Duration::from_secs(5), || log
            .get()
            .contains(&"body saw cancellation".to_string()))
        .await,
        "the body of the dropped call was never cancelled: {:?}",
        log.get()
    );
    assert!(eventually(Duration::from_secs(5), || registry.detached_bodies() == 0).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_cancelling_its_own_token_is_awaited_past_the_grace() {
    let registry = Registry::builder()
        .detach_grace(Duration::from_millis(20))
        .build();
    let log = Log::new();
    let l = log.clone();
    let _t = registry
        .register(Probe::new("self_cancel", &log).body(move |_, cx| {
            let l = l.clone();
            async move {
                cx.cancellation().cancel();
                tokio::time::sleep(Duration::from_millis(200)).await;
                l.push("finished");
                Ok(Value::from("done"))
            }
        }))
        .unwrap();
    let mut c = call("self_cancel");
    let caller = c.cancellation().clone();
    let r = registry.execute(c).await;
    assert!(!caller.is_cancelled());
    assert!(
        log.get().contains(&"finished".to_string()),
        "{:?}",
        log.get()
    );
    // As on the caller's task: the body's own token was cancelled when it returned.
    assert_eq!(r.code_str(), Some("ABORTED"));
    assert_eq!(registry.detached_total(), 0);
}
