//! Tasks of requests served statelessly (protocol 2026-07-28 over Streamable HTTP, and
//! every request of an HTTP server without sessions).
//!
//! Such requests share the HTTP server's stateless context (see
//! [`crate::McpServer::on_session`]), so their tasks are jobs of that context's owner, as
//! a session's are of the session's. What a session gives its tasks for free, a
//! stateless request does not have: nothing ties two requests to one client. So a task
//! started statelessly gets
//!
//! - an unguessable id: 128 bits from the operating system's random source, not the
//!   job's id (which counts up, and which the context's job tools show);
//! - a binding to the credentials of the request that created it: `tasks/get`,
//!   `tasks/update` and `tasks/cancel` must carry the same `Authorization` header (or
//!   none, when it had none), else the task is unknown to them. The server keeps a
//!   keyed hash of the header, never the header;
//! - a time to live ([`StatelessTaskLimits::ttl`], announced as the task's `ttlMs`): when
//!   it has passed since the task was created, a task still running is stopped (its
//!   job killed, as `tasks/cancel` does) and the task is forgotten;
//! - a cap ([`StatelessTaskLimits::max_tasks`]) on the tasks kept at once, settled ones
//!   included until they expire: beyond it, a tool that may run as a task is answered
//!   directly, and one that runs only as a task is refused.

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::store::Owner;
use crate::tasks::SessionTasks;
use crate::util::lock;

/// How long a stateless task is kept, and how many are kept at once (see
/// [`crate::McpServer::with_stateless_tasks`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct StatelessTaskLimits {
    /// The time to live of each task, from its creation (default one hour).
    pub ttl: Duration,
    /// The most tasks kept at once (default 256).
    pub max_tasks: usize,
}

impl Default for StatelessTaskLimits {
    fn default() -> Self {
        StatelessTaskLimits {
            ttl: Duration::from_secs(3600),
            max_tasks: 256,
        }
    }
}

impl StatelessTaskLimits {
    /// Keep each task this long from its creation.
    #[must_use]
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// Keep at most this many tasks at once.
    #[must_use]
    pub fn max_tasks(mut self, max: usize) -> Self {
        self.max_tasks = max;
        self
    }
}

/// The stateless context's task places: how many tasks it keeps, and their expiry.
pub(crate) struct PublicIds {
    limits: StatelessTaskLimits,
    /// Cancelled when the context closes: the expiry timers stop.
    stop: CancellationToken,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// The tasks kept (until they expire).
    kept: usize,
    /// Places taken by tasks being started.
    reserved: usize,
}

/// A place for one more task, taken before its job starts; given back when dropped
/// unless the task was issued.
pub(crate) struct Reservation {
    ids: Arc<PublicIds>,
    taken: bool,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if self.taken {
            let mut inner = lock(&self.ids.inner);
            inner.reserved = inner.reserved.saturating_sub(1);
        }
    }
}

impl PublicIds {
    pub(crate) fn new(limits: StatelessTaskLimits, stop: CancellationToken) -> Arc<PublicIds> {
        Arc::new(PublicIds {
            limits,
            stop,
            inner: Mutex::default(),
        })
    }

    pub(crate) fn ttl(&self) -> Duration {
        self.limits.ttl
    }

    /// Take a place for a new task, or `None` when the cap is reached.
    pub(crate) fn reserve(self: &Arc<Self>) -> Option<Reservation> {
        let mut inner = lock(&self.inner);
        if inner.kept + inner.reserved >= self.limits.max_tasks {
            return None;
        }
        inner.reserved += 1;
        Some(Reservation {
            ids: self.clone(),
            taken: true,
        })
    }

    /// The task `id` of `owner` was started on `reservation`: keep it for its time to
    /// live, then forget it (its call is stopped if it still runs).
    pub(crate) fn issue(
        self: &Arc<Self>,
        mut reservation: Reservation,
        id: String,
        owner: Owner,
        tasks: &Arc<SessionTasks>,
    ) {
        {
            let mut inner = lock(&self.inner);
            inner.reserved = inner.reserved.saturating_sub(1);
            reservation.taken = false;
            inner.kept += 1;
        }
        let ids = Arc::downgrade(self);
        let tasks = Arc::downgrade(tasks);
        let stop = self.stop.clone();
        let ttl = self.limits.ttl;
        tokio::spawn(async move {
            tokio::select! {
                () = tokio::time::sleep(ttl) => expire(&ids, &tasks, &owner, &id).await,
                () = stop.cancelled() => {}
            }
        });
    }
}

/// Forget the task `id` and stop its call if it still runs.
async fn expire(ids: &Weak<PublicIds>, tasks: &Weak<SessionTasks>, owner: &Owner, id: &str) {
    let Some(ids) = ids.upgrade() else { return };
    {
        let mut inner = lock(&ids.inner);
        inner.kept = inner.kept.saturating_sub(1);
    }
    if let Some(tasks) = tasks.upgrade() {
        tasks.forget(owner, id).await;
    }
}

/// `task-` and 32 hexadecimal digits from the operating system's random source.
pub(crate) fn random_id() -> Option<String> {
    Some(format!("task-{}", crate::util::random_hex(16)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_long_random_and_distinct() {
        let a = random_id().unwrap();
        let b = random_id().unwrap();
        assert_eq!(a.len(), 37);
        assert!(a.starts_with("task-"));
        assert!(a[5..].bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn reservations_count_against_the_cap_until_dropped() {
        let ids = PublicIds::new(
            StatelessTaskLimits::default().max_tasks(2),
            CancellationToken::new(),
        );
        let a = ids.reserve().unwrap();
        let b = ids.reserve().unwrap();
        assert!(ids.reserve().is_none());
        drop(a);
        let c = ids.reserve();
        assert!(c.is_some());
        drop((b, c));
    }
}
