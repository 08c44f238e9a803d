//! This server instance's lease in the store: how the instances sharing a store tell a
//! live instance from a stopped one.
//!
//! An instance keeps a lease ([`LEASE`], renewed every [`RENEW_EVERY`], and before each
//! task it starts or approval state it hands out). A task record names the instance
//! running its call; an instance that reads a task whose runner's lease has run out
//! fails the task, saying the server running it stopped (see `crate::tasks`). So a task
//! whose instance was killed is `failed` within [`LEASE`] of the kill (plus the reader's
//! next poll), never `working` forever, and the other instances' tasks are unaffected.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;

use crate::store::{Store, StoreError};
use crate::util::random_hex;

/// How long an instance's lease lasts from its last renewal.
pub(crate) const LEASE: Duration = Duration::from_secs(5);

/// How often an instance renews its lease.
pub(crate) const RENEW_EVERY: Duration = Duration::from_secs(1);

/// This instance's id and lease.
pub(crate) struct Lease {
    id: String,
    store: Arc<dyn Store>,
    /// Cancelled when dropped: the renewals stop.
    stop: CancellationToken,
    kept: OnceCell<()>,
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl Lease {
    /// A new instance of a server whose state is in `store` (its lease is taken on the
    /// first [`Lease::renew`]).
    pub(crate) fn new(store: Arc<dyn Store>) -> Arc<Lease> {
        let id = random_hex(16).unwrap_or_else(|| format!("pid{}", std::process::id()));
        Arc::new(Lease {
            id: format!("instance-{id}"),
            store,
            stop: CancellationToken::new(),
            kept: OnceCell::new(),
        })
    }

    /// The instance's id (unique among the instances sharing the store).
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// The store.
    pub(crate) fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// The token cancelled when the instance goes away.
    pub(crate) fn stopped(&self) -> &CancellationToken {
        &self.stop
    }

    /// Renew the lease now, and (the first time) start renewing it every
    /// [`RENEW_EVERY`].
    ///
    /// # Errors
    ///
    /// When the store cannot keep it.
    pub(crate) async fn renew(&self) -> Result<(), StoreError> {
        self.store.renew_instance(&self.id, LEASE).await?;
        self.kept
            .get_or_init(|| async {
                tokio::spawn(keep(self.store.clone(), self.id.clone(), self.stop.clone()));
            })
            .await;
        Ok(())
    }

    /// Whether `instance` (another) still holds its lease; `None` when the store
    /// cannot tell.
    pub(crate) async fn alive(&self, instance: &str) -> Option<bool> {
        if instance == self.id {
            return Some(true);
        }
        self.store.instance_alive(instance).await.ok()
    }
}

/// Renew the lease every [`RENEW_EVERY`] until `stop`.
async fn keep(store: Arc<dyn Store>, id: String, stop: CancellationToken) {
    let mut every = tokio::time::interval(RENEW_EVERY);
    loop {
        tokio::select! {
            _ = every.tick() => {
                if let Err(e) = store.renew_instance(&id, LEASE).await {
                    tracing::debug!("dsh-mcp: lease of {id} not renewed: {e}");
                }
            }
            () = stop.cancelled() => return,
        }
    }
}
