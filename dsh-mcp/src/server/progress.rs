//! Progress forwarding: a call's progress reports as `notifications/progress`.

use dsh_runtime::{Progress, ProgressReporter};
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};
use tokio::sync::mpsc;

/// Forwards a call's progress reports as `notifications/progress`, in order, dropping
/// reports that do not increase, and stops before the result is sent.
pub(crate) struct ProgressForwarder {
    pub(crate) tx: mpsc::UnboundedSender<Option<Progress>>,
    pub(crate) task: tokio::task::JoinHandle<()>,
}

impl ProgressForwarder {
    pub(crate) fn start(peer: Peer<RoleServer>, token: ProgressToken) -> Self {
        let (tx, mut rx) = mpsc::unbounded_channel::<Option<Progress>>();
        let task = tokio::spawn(async move {
            let mut last: Option<f64> = None;
            // `None` marks the end of the call: nothing after it is sent.
            while let Some(Some(p)) = rx.recv().await {
                if last.is_some_and(|l| p.progress <= l) || !p.progress.is_finite() {
                    continue;
                }
                last = Some(p.progress);
                let mut param = ProgressNotificationParam::new(token.clone(), p.progress);
                param.total = p.total;
                param.message = p.message;
                if peer.notify_progress(param).await.is_err() {
                    break;
                }
            }
        });
        ProgressForwarder { tx, task }
    }

    pub(crate) fn sender(&self) -> mpsc::UnboundedSender<Option<Progress>> {
        self.tx.clone()
    }

    pub(crate) fn reporter(&self) -> ProgressReporter {
        let tx = self.tx.clone();
        ProgressReporter::new(move |p| {
            let _ = tx.send(Some(p));
        })
    }

    /// Send what was reported so far; later reports (from tasks the body left running)
    /// are dropped.
    pub(crate) async fn finish(self) {
        let _ = self.tx.send(None);
        let _ = self.task.await;
    }
}
