//! Containing panics from user callbacks.
//!
//! Every user callback (body, hook, guard, wrapper, renderer, presenter, finalizer,
//! observer) runs inside `catch_unwind`: the synchronous call that creates a future and
//! every poll of that future. A panic becomes the outcome the contract defines for that
//! stage; the panicked future is dropped and never polled again. No extra task is spawned
//! and nothing is allocated: the futures involved are all `Unpin` (boxed or ready).

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

/// The message of a panic payload (`&str` and `String` payloads; anything else is named
/// as such).
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-string payload".to_string()
    }
}

/// Run a synchronous callback, turning a panic into its message.
pub(crate) fn contain<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| panic_message(&*p))
}

/// A future whose polls are guarded by `catch_unwind`.
pub(crate) struct CatchUnwind<F>(Option<F>);

impl<F: Future + Unpin> Future for CatchUnwind<F> {
    type Output = Result<F::Output, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(fut) = self.0.as_mut() else {
            // Only reachable by polling after completion, which the pipeline never does.
            return Poll::Pending;
        };
        match catch_unwind(AssertUnwindSafe(|| Pin::new(fut).poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(v)) => {
                self.0 = None;
                Poll::Ready(Ok(v))
            }
            Err(p) => {
                // Drop the panicked future now, inside its own guard: its destructor may
                // panic too.
                let fut = self.0.take();
                let _ = catch_unwind(AssertUnwindSafe(move || drop(fut)));
                Poll::Ready(Err(panic_message(&*p)))
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
        Ok(fut) => CatchUnwind(Some(fut)).await,
        Err(msg) => Err(msg),
    }
}

/// Guard an already created future.
pub(crate) fn guard<F: Future + Unpin>(fut: F) -> CatchUnwind<F> {
    CatchUnwind(Some(fut))
}
