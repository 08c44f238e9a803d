//! Containing panics from user callbacks.
//!
//! Every user callback (body, hook, guard, wrapper, renderer, presenter, finalizer,
//! observer, job producer) runs inside `catch_unwind`: the synchronous call that creates a
//! future and every poll of that future. A panic becomes the outcome the caller defines
//! for it; the panicked future is dropped and never polled again. No extra task is spawned
//! and nothing is allocated: the futures involved are all `Unpin` (boxed or ready).

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

/// The message of a panic payload (`&str` and `String` payloads; anything else is named
/// as such).
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "a panic with a non-string payload"
    }
}

/// Run a synchronous callback, turning a panic into its message.
pub(crate) fn contain<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| panic_message(&*p).to_string())
}

/// The error [`CatchUnwind`] gives when it is polled again after it completed.
pub(crate) const POLLED_AFTER_COMPLETION: &str = "a future was polled after it completed";

/// A future whose polls are guarded by `catch_unwind`: its output is the inner future's,
/// or the panic's message.
///
/// Polled again after it completed, it answers `Err` ([`POLLED_AFTER_COMPLETION`])
/// instead of polling the inner future again or never waking.
pub(crate) struct CatchUnwind<F>(Option<F>);

impl<F> CatchUnwind<F> {
    /// Guard an already created future.
    pub(crate) fn new(fut: F) -> Self {
        CatchUnwind(Some(fut))
    }
}

impl<F: Future + Unpin> Future for CatchUnwind<F> {
    type Output = Result<F::Output, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(fut) = self.0.as_mut() else {
            return Poll::Ready(Err(POLLED_AFTER_COMPLETION.to_string()));
        };
        match catch_unwind(AssertUnwindSafe(|| Pin::new(fut).poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(v)) => {
                self.0 = None;
                Poll::Ready(Ok(v))
            }
            Err(p) => {
                let message = panic_message(&*p).to_string();
                // Drop the panicked future now, inside its own guard: its destructor may
                // panic too.
                let fut = self.0.take();
                let _ = catch_unwind(AssertUnwindSafe(move || drop(fut)));
                Poll::Ready(Err(message))
            }
        }
    }
}

impl<F> Unpin for CatchUnwind<F> {}

/// Create a future with `make` and await it, containing panics in both steps.
pub(crate) async fn contained<F: Future + Unpin>(
    make: impl FnOnce() -> F,
) -> Result<F::Output, String> {
    match contain(make) {
        Ok(fut) => CatchUnwind::new(fut).await,
        Err(msg) => Err(msg),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn poll<F: Future + Unpin>(f: &mut F) -> Poll<F::Output> {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        Pin::new(f).poll(&mut cx)
    }

    #[test]
    fn a_completed_future_answers_an_error_when_polled_again() {
        let mut f = CatchUnwind::new(std::future::ready(7));
        assert_eq!(poll(&mut f), Poll::Ready(Ok(7)));
        assert_eq!(
            poll(&mut f),
            Poll::Ready(Err(POLLED_AFTER_COMPLETION.to_string()))
        );
    }

    #[test]
    fn a_panicking_poll_becomes_its_message_and_the_future_is_dropped() {
        let mut f = CatchUnwind::new(Box::pin(async { panic!("boom") }));
        let out: Poll<Result<(), String>> = poll(&mut f);
        assert_eq!(out, Poll::Ready(Err("boom".to_string())));
        assert!(f.0.is_none());
    }

    #[test]
    fn payloads_are_named() {
        assert_eq!(panic_message(&"static"), "static");
        assert_eq!(panic_message(&String::from("owned")), "owned");
        assert_eq!(panic_message(&42u8), "a panic with a non-string payload");
        assert_eq!(contain(|| 1), Ok(1));
    }
}
