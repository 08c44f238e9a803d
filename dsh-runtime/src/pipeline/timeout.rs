//! The built-in timeout wrapper.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::Instant;

use tokio_util::sync::CancellationToken;

use crate::error_code::PipelineCode;
use crate::hooks::{CallInfo, HookFuture, Next, Wrapper};
use crate::panic;
use crate::result::DispatchOutcome;
use crate::tool::{ToolError, progress_observed};

/// Honours a tool's [`crate::ToolDefinition::timeout_ms`]: arms a deadline on the
/// dispatch's cancellation token and, when *its own* deadline fired, turns whatever the
/// dispatch returned into `TOOL_TIMEOUT` (`tool call timed out after <ms>ms`).
///
/// Cancellation is cooperative: when the deadline fires the body's token is cancelled
/// and the body gets the registry's grace period to return
/// ([`crate::RegistryBuilder::detach_grace`]); a cooperative body is awaited. A body that
/// does not return by then (stuck in a blocking system call, or ignoring its token) is
/// detached: it runs on, on its own task, counted by [`crate::Registry::detached_bodies`],
/// and the call answers `TOOL_TIMEOUT` at once (see
/// [`crate::RegistryBuilder::max_detached`]). A caller abort is not a timeout. Tools
/// without `timeout_ms` pass through untouched.
///
/// With [`crate::ToolDefinition::timeout_restarts_on_progress`], the deadline is
/// `timeout_ms` after the call's latest progress report
/// ([`crate::ToolContext::report_progress`]) rather than after its start: a call fails
/// only when it goes `timeout_ms` without reporting. Reports still reach the caller's
/// reporter.
///
/// The registry runs this wrapper outermost by default (see
/// [`crate::RegistryBuilder::timeouts`]); register it yourself with
/// [`crate::Registry::add_wrapper`] to choose its position. It needs a Tokio runtime with
/// timers; without one, no deadline is armed (and a warning is logged).
#[derive(Clone, Copy, Debug, Default)]
pub struct TimeoutWrapper;

impl Wrapper for TimeoutWrapper {
    fn around<'a>(
        &'a self,
        call: &'a CallInfo<'a>,
        next: Next<'a>,
    ) -> HookFuture<'a, Result<DispatchOutcome, ToolError>> {
        let Some(ms) = call.definition().and_then(|d| d.timeout_ms) else {
            return next.run();
        };
        let restarts = call
            .definition()
            .is_some_and(|d| d.timeout_restarts_on_progress);
        HookFuture::new(async move {
            let deadline = next.cancellation().child_token();
            let next = next.with_cancellation(deadline.clone());
            let sleep = start_timer(ms.get());
            if sleep.is_none() {
                tracing::warn!(
                    tool = call.name(),
                    "no Tokio timer is available: the {ms}ms deadline is not armed"
                );
            }
            let last_progress: Option<Arc<Mutex<Option<Instant>>>> = restarts.then(Arc::default);
            let run: Pin<Box<dyn Future<Output = _> + Send + '_>> = match &last_progress {
                Some(last) => {
                    let last = last.clone();
                    let observe = move || {
                        *last.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
                    };
                    Box::pin(progress_observed(observe, next.run()))
                }
                None => Box::pin(next.run()),
            };
            let (out, fired) = WithDeadline {
                run,
                sleep,
                deadline: &deadline,
                fired: false,
                restart: last_progress.map(|last| (last, Duration::from_millis(ms.get()))),
            }
            .await;
            if fired {
                return Ok(DispatchOutcome::failure(ToolError::with_code(
                    PipelineCode::ToolTimeout,
                    format!("tool call timed out after {ms}ms"),
                )));
            }
            out
        })
    }
}

fn start_timer(ms: u64) -> Option<Pin<Box<tokio::time::Sleep>>> {
    tokio::runtime::Handle::try_current().ok()?;
    // A runtime without the time driver panics here; treat it as "no timer".
    panic::contain(|| Box::pin(tokio::time::sleep(Duration::from_millis(ms)))).ok()
}

struct WithDeadline<'d, F> {
    run: F,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    deadline: &'d CancellationToken,
    fired: bool,
    /// When the deadline restarts on progress: the latest report's time, and the span
    /// the deadline is after it.
    restart: Option<(Arc<Mutex<Option<Instant>>>, Duration)>,
}

impl<F> WithDeadline<'_, F> {
    /// The later deadline a progress report set, if the timer's own has passed it.
    fn restarted(&self) -> Option<Instant> {
        let (last, span) = self.restart.as_ref()?;
        let at = (*last.lock().unwrap_or_else(|e| e.into_inner()))? + *span;
        (at > Instant::now()).then_some(at)
    }
}

impl<F: Future + Unpin> Future for WithDeadline<'_, F> {
    type Output = (F::Output, bool);

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        while let Some(sleep) = self.sleep.as_mut() {
            match panic::contain(|| sleep.as_mut().poll(cx)) {
                Ok(Poll::Pending) => break,
                Ok(Poll::Ready(())) => {
                    if let Some(at) = self.restarted() {
                        // Progress since the timer was armed: wait from the latest report.
                        if let Some(sleep) = self.sleep.as_mut() {
                            sleep.as_mut().reset(at);
                        }
                        continue;
                    }
                    self.sleep = None;
                    self.fired = true;
                    self.deadline.cancel();
                }
                Err(_) => self.sleep = None,
            }
        }
        match Pin::new(&mut self.run).poll(cx) {
            Poll::Ready(out) => Poll::Ready((out, self.fired)),
            Poll::Pending => Poll::Pending,
        }
    }
}
