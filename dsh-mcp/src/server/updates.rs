//! Resource updates across the instances sharing a store: what
//! `Resources::notify_updated` announces on one instance reaches the subscribers of every
//! instance (a `resources/subscribe` of a 2025-11-25 session, a 2026-07-28 listen
//! stream's `resourceSubscriptions`), through the store's inbox [`CHANNEL`].
//!
//! Started when the server starts serving (and at the latest on the first subscription):
//! the instance relays its own announcements to the
//! store, and the store's (from the other instances) to its subscribers. Without a
//! reachable store the announcements stay on the instance that made them.

use std::sync::Arc;

use dsh_runtime::resources::Resources;
use futures_util::StreamExt as _;
use serde_json::json;
use tokio::sync::{OnceCell, broadcast};
use tokio_util::sync::CancellationToken;

use crate::store::Store;

/// The inbox every instance listens on for the others' announcements.
pub(crate) const CHANNEL: &str = "dsh-mcp:resources-updated";

/// The updates the subscribers of this instance hear (see the module docs).
pub(crate) struct Updates {
    here: broadcast::Sender<String>,
    started: OnceCell<()>,
}

impl Default for Updates {
    fn default() -> Self {
        Updates {
            here: broadcast::channel(256).0,
            started: OnceCell::new(),
        }
    }
}

impl Updates {
    /// Every update from now on, of `resources` here and of the instances sharing
    /// `store` (this instance is `instance`), until `stop`.
    pub(crate) async fn subscribe(
        &self,
        resources: &Resources,
        store: &Arc<dyn Store>,
        instance: &str,
        stop: &CancellationToken,
    ) -> broadcast::Receiver<String> {
        let receiver = self.here.subscribe();
        self.ensure_started(resources, store, instance, stop).await;
        receiver
    }

    /// Relay this instance's announcements to the store, and the store's to the
    /// subscribers here, from now on (once: later calls do nothing).
    pub(crate) async fn ensure_started(
        &self,
        resources: &Resources,
        store: &Arc<dyn Store>,
        instance: &str,
        stop: &CancellationToken,
    ) {
        self.started
            .get_or_init(|| async {
                self.start(resources, store.clone(), instance.to_string(), stop.clone())
                    .await;
            })
            .await;
    }

    async fn start(
        &self,
        resources: &Resources,
        store: Arc<dyn Store>,
        instance: String,
        stop: CancellationToken,
    ) {
        let inbox = match store.inbox(CHANNEL).await {
            Ok(inbox) => Some(inbox),
            Err(e) => {
                tracing::warn!("dsh-mcp: resource updates stay on this instance: {e}");
                None
            }
        };
        let mut local = resources.updates();
        let (here, origin, until) = (self.here.clone(), instance.clone(), stop.clone());
        let relay_store = inbox.as_ref().map(|_| store.clone());
        tokio::spawn(async move {
            loop {
                let uri = tokio::select! {
                    () = until.cancelled() => break,
                    uri = local.recv() => uri,
                };
                match uri {
                    Ok(uri) => {
                        let _ = here.send(uri.clone());
                        if let Some(store) = &relay_store {
                            let message = json!({ "uri": uri, "from": origin });
                            let _ = store.send(CHANNEL, message).await;
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => break,
                }
            }
        });
        let Some(mut inbox) = inbox else {
            return;
        };
        let here = self.here.clone();
        tokio::spawn(async move {
            loop {
                let message = tokio::select! {
                    () = stop.cancelled() => break,
                    message = inbox.next() => message,
                };
                let Some(message) = message else {
                    break;
                };
                let from_here = message["from"].as_str() == Some(instance.as_str());
                if let (Some(uri), false) = (message["uri"].as_str(), from_here) {
                    let _ = here.send(uri.to_string());
                }
            }
        });
    }
}
