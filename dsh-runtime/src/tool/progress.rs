//! Progress updates of a running call: [`Progress`], [`ProgressReporter`],
//! [`with_progress`].

use std::fmt;
use std::future::Future;
use std::sync::Arc;

/// One progress update of a running call (see [`ToolContext::report_progress`](crate::ToolContext::report_progress)).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Progress {
    /// How much is done; increases from one update to the next.
    pub progress: f64,
    /// The total, when known.
    pub total: Option<f64>,
    /// A short human-readable note.
    pub message: Option<String>,
}

/// Where the progress updates of calls go (e.g. an MCP server forwarding them as
/// `notifications/progress`). Install one around [`crate::Registry::execute`] with
/// [`with_progress`].
#[derive(Clone)]
pub struct ProgressReporter(pub(super) Arc<dyn Fn(Progress) + Send + Sync>);

impl ProgressReporter {
    /// A reporter calling `f` for every update. `f` runs on the reporting task: keep it
    /// short (e.g. push into a channel).
    pub fn new(f: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        ProgressReporter(Arc::new(f))
    }
}

impl fmt::Debug for ProgressReporter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProgressReporter(..)")
    }
}

tokio::task_local! {
    pub(super) static PROGRESS: ProgressReporter;
}

/// Run `fut` (typically a [`crate::Registry::execute`]) with `reporter` receiving the
/// progress updates of the calls it executes. A context picks the reporter up when the
/// pipeline creates it, so clones moved to other tasks keep reporting to it.
///
/// A plain function, not an `async fn`: the future it returns is `fut` and the reporter,
/// not twice `fut`'s size (an `async fn` keeps its arguments beside the futures it awaits).
pub fn with_progress<F: Future>(
    reporter: ProgressReporter,
    fut: F,
) -> impl Future<Output = F::Output> {
    PROGRESS.scope(reporter, fut)
}

/// `fut` with the progress reporter current here (if any) installed, for running it on
/// another task.
pub(crate) fn progress_scoped<F: Future>(fut: F) -> impl Future<Output = F::Output> {
    let reporter = PROGRESS.try_with(Clone::clone).ok();
    async move {
        match reporter {
            Some(r) => PROGRESS.scope(r, fut).await,
            None => fut.await,
        }
    }
}

/// `fut` with a reporter that calls `on_update` at each progress update, then hands the
/// update on to the reporter current here (if any).
pub(crate) fn progress_observed<F: Future>(
    on_update: impl Fn() + Send + Sync + 'static,
    fut: F,
) -> impl Future<Output = F::Output> {
    let outer = PROGRESS.try_with(Clone::clone).ok();
    let reporter = ProgressReporter::new(move |p| {
        on_update();
        if let Some(outer) = &outer {
            (outer.0)(p);
        }
    });
    PROGRESS.scope(reporter, fut)
}
