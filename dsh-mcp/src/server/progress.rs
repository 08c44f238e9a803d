//! Progress forwarding: a call's progress reports as `notifications/progress`.
//!
//! Clients put a progress token on every call (rmcp's client does, whatever the tool),
//! while most bodies never report progress. So nothing runs until the first report: it
//! starts the task that sends the notifications, in order. A call that reports nothing
//! costs a lock and no task.

use std::sync::{Arc, Mutex};

use dsh_runtime::{Progress, ProgressReporter};
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};
use tokio::sync::mpsc;

use crate::util::lock;

/// Forwards a call's progress reports as `notifications/progress`, in order, dropping
/// reports that do not increase, and stops before the result is sent. Clones share the
/// forwarding.
#[derive(Clone)]
pub(crate) struct ProgressForwarder(Arc<Mutex<Forwarding>>);

enum Forwarding {
    /// Nothing reported yet: no task runs. The runtime is the call's, so that a report
    /// from a thread outside it (a blocking body's) can start the task.
    Idle {
        peer: Peer<RoleServer>,
        token: ProgressToken,
        runtime: tokio::runtime::Handle,
    },
    /// The task sending the notifications, and its queue.
    Running {
        tx: mpsc::UnboundedSender<Progress>,
        task: tokio::task::JoinHandle<()>,
    },
    /// The call ended: later reports are dropped.
    Finished,
}

impl ProgressForwarder {
    /// Forward the reports of a call whose request carried `token`. Called on the
    /// call's runtime.
    pub(crate) fn start(peer: Peer<RoleServer>, token: ProgressToken) -> Self {
        ProgressForwarder(Arc::new(Mutex::new(Forwarding::Idle {
            peer,
            token,
            runtime: tokio::runtime::Handle::current(),
        })))
    }

    /// Queue `progress` for the client (from any thread).
    pub(crate) fn report(&self, progress: Progress) {
        let mut state = lock(&self.0);
        match &mut *state {
            Forwarding::Running { tx, .. } => {
                let _ = tx.send(progress);
            }
            Forwarding::Finished => {}
            Forwarding::Idle { .. } => {
                let Forwarding::Idle {
                    peer,
                    token,
                    runtime,
                } = std::mem::replace(&mut *state, Forwarding::Finished)
                else {
                    return;
                };
                let (tx, rx) = mpsc::unbounded_channel();
                let _ = tx.send(progress);
                let task = runtime.spawn(forward(peer, token, rx));
                *state = Forwarding::Running { tx, task };
            }
        }
    }

    /// A reporter for the call's body.
    pub(crate) fn reporter(&self) -> ProgressReporter {
        let forwarder = self.clone();
        ProgressReporter::new(move |p| forwarder.report(p))
    }

    /// Send what was reported so far; later reports (from tasks the body left running)
    /// are dropped.
    pub(crate) async fn finish(&self) {
        let state = std::mem::replace(&mut *lock(&self.0), Forwarding::Finished);
        if let Forwarding::Running { tx, task } = state {
            // The queue closes once drained: the task sends what it holds, then ends.
            drop(tx);
            let _ = task.await;
        }
    }
}

/// Send each report that increases the last one sent, until the queue closes or the
/// client is gone.
async fn forward(
    peer: Peer<RoleServer>,
    token: ProgressToken,
    mut rx: mpsc::UnboundedReceiver<Progress>,
) {
    let mut last: Option<f64> = None;
    while let Some(p) = rx.recv().await {
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
}
