//! Bodies that may have to be left behind: a call with a deadline or a caller's token
//! runs its body on a task of its own, so that a body stuck where no cancellation reaches
//! it (a blocking system call inside an async body, a future that ignores its token) does
//! not hold the call's result past its deadline.
//!
//! The caller's task races the body's task against the body's token. When the token is
//! cancelled (the timeout wrapper's deadline, the caller's abort, a wrapper's replacement
//! token), the body gets a grace period to return, as a cooperative body does; after it,
//! the body is *detached*: it keeps running on its task (it is never dropped), the call
//! answers as a cancelled call does (`ABORTED`, which the timeout wrapper turns into
//! `TOOL_TIMEOUT`), and the registry counts it until it returns. While as many bodies as
//! the registry's limit are detached, calls that would run this way are refused before
//! their body starts.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::panic::{self, CatchUnwind};
use crate::tool::{BodyOutcome, BoxFuture};

/// The registry's default limit on detached bodies.
pub(crate) const DEFAULT_MAX_DETACHED: usize = 16;
/// The default time a cancelled body gets to return before it is detached.
pub(crate) const DEFAULT_GRACE: Duration = Duration::from_millis(200);

/// The registry-wide accounting of detached bodies.
#[derive(Debug)]
pub(crate) struct Detacher {
    /// The most bodies detached at once; 0: bodies always run on the caller's task.
    max: usize,
    grace: Duration,
    /// Detached bodies that have not returned yet.
    running: AtomicUsize,
    /// Bodies ever detached.
    total: AtomicU64,
}

/// How an isolated body ended, seen from the call.
pub(crate) enum Isolated {
    /// It returned (or panicked: the panic's message).
    Returned(Result<BodyOutcome, String>),
    /// It did not return within the grace period after its token was cancelled, and runs
    /// on, detached.
    Detached,
}

const RUNNING: u8 = 0;
const DETACHED: u8 = 1;
const DONE: u8 = 2;

impl Detacher {
    pub(crate) fn new(max: usize, grace: Duration) -> Arc<Detacher> {
        Arc::new(Detacher {
            max,
            grace,
            running: AtomicUsize::new(0),
            total: AtomicU64::new(0),
        })
    }

    /// Whether bodies may run on a task of their own here: detaching is on and a Tokio
    /// runtime is current.
    pub(crate) fn available(&self) -> bool {
        self.max > 0 && tokio::runtime::Handle::try_current().is_ok()
    }

    /// The refusal of a call while the limit is reached, or `None`.
    pub(crate) fn refusal(&self, quoted_name: impl FnOnce() -> String) -> Option<String> {
        let running = self.running.load(Ordering::Acquire);
        (running >= self.max).then(|| {
            format!(
                "tool {} was not started: {running} bodies of timed-out or aborted calls are \
                 still running detached, the registry's limit (RegistryBuilder::max_detached)",
                quoted_name()
            )
        })
    }

    /// Detached bodies still running.
    pub(crate) fn running(&self) -> usize {
        self.running.load(Ordering::Acquire)
    }

    /// Bodies ever detached.
    pub(crate) fn total(&self) -> u64 {
        self.total.load(Ordering::Acquire)
    }

    /// Run `body` on a task of its own until it returns, or until the call is cancelled
    /// from outside (the `caller`'s token, or `watch`, a wrapper's replacement token) and
    /// the grace period has passed. `token` is the body's (a child of the caller's); it is
    /// cancelled when `watch` fires. A body cancelling its own token is not a reason to
    /// stop waiting for it.
    pub(crate) async fn run(
        self: &Arc<Self>,
        body: BoxFuture<'static, BodyOutcome>,
        token: &CancellationToken,
        caller: &CancellationToken,
        watch: Option<&CancellationToken>,
        tool: &str,
    ) -> Isolated {
        let state = Arc::new(AtomicU8::new(RUNNING));
        let on_return = (Arc::clone(&state), Arc::clone(self));
        let task = crate::caller::caller_scoped(crate::tool::progress_scoped(async move {
            let out = CatchUnwind::new(body).await;
            let (state, detacher) = on_return;
            if state.swap(DONE, Ordering::AcqRel) == DETACHED {
                detacher.running.fetch_sub(1, Ordering::AcqRel);
                tracing::info!("a detached tool body returned");
            }
            out
        }));
        let mut handle = tokio::spawn(tracing::Instrument::in_current_span(task));
        // Should this future be dropped before the body returns, the body is cancelled
        // and detached.
        let mut guard = DetachOnDrop {
            detacher: self,
            state: &state,
            token,
            tool,
            armed: true,
        };
        let joined = |r: Result<Result<BodyOutcome, String>, tokio::task::JoinError>| {
            Isolated::Returned(r.unwrap_or_else(|e| Err(format!("its task ended: {e}"))))
        };
        // Until the body returns or its token is cancelled.
        let watched = async {
            match watch {
                Some(w) => w.cancelled().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            r = &mut handle => {
                guard.armed = false;
                return joined(r);
            }
            () = caller.cancelled() => {}
            () = watched => token.cancel(),
        }
        // The grace period (without a timer, the body is awaited as before).
        let Ok(grace) = panic::contain(|| tokio::time::sleep(self.grace)) else {
            let r = handle.await;
            guard.armed = false;
            return joined(r);
        };
        tokio::select! {
            biased;
            r = &mut handle => {
                guard.armed = false;
                return joined(r);
            }
            () = grace => {}
        }
        guard.armed = false;
        if self.detach(&state, tool) {
            Isolated::Detached
        } else {
            // It returned just now.
            joined(handle.await)
        }
    }

    /// Counts the body of `state` as detached, unless it returned already (`false`).
    fn detach(&self, state: &AtomicU8, tool: &str) -> bool {
        self.running.fetch_add(1, Ordering::AcqRel);
        if state
            .compare_exchange(RUNNING, DETACHED, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            self.running.fetch_sub(1, Ordering::AcqRel);
            return false;
        }
        let total = self.total.fetch_add(1, Ordering::AcqRel) + 1;
        tracing::warn!(
            tool,
            grace_ms = u64::try_from(self.grace.as_millis()).unwrap_or(u64::MAX),
            detached = self.running(),
            detached_total = total,
            "a cancelled tool body did not return in time: detached"
        );
        true
    }
}

/// Cancels and detaches a body whose call was dropped while it ran.
struct DetachOnDrop<'a> {
    detacher: &'a Detacher,
    state: &'a AtomicU8,
    token: &'a CancellationToken,
    tool: &'a str,
    armed: bool,
}

impl Drop for DetachOnDrop<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.token.cancel();
            self.detacher.detach(self.state, self.tool);
        }
    }
}
