//! Task status notifications on a listen stream: revision 2026-07-28 has no
//! server-initiated notification outside a `subscriptions/listen` request, and the tasks
//! extension adds `taskIds` to the request's filter for `notifications/tasks`.
//!
//! The transports read the request's `taskIds` and carry them to the handler (see
//! [`crate::wire::listen`]). The handler then follows each task ([`follow`]): a
//! `notifications/tasks` with the task as `tasks/get` shows it, first at once, then on
//! each change of its status, its questions or its status message, the last one when it
//! is terminal.
//!
//! Every requested id is acknowledged, and only a task of the stream's own context
//! (its session, or, stateless, its credentials) is ever reported: an id naming none is
//! indistinguishable from a task that never changes, so a stream learns nothing about
//! other clients' tasks.

use std::sync::Arc;

use futures_util::StreamExt as _;

use rmcp::model::{
    GetMeta as _, RequestId, ServerNotification, TaskStatusNotification,
    TaskStatusNotificationParams,
};
use rmcp::{Peer, RoleServer};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::store::Owner;
use crate::tasks::SessionTasks;

/// A task a listen stream follows: the tasks it is one of, its id and owner.
pub(crate) struct Followed {
    pub(crate) tasks: Arc<SessionTasks>,
    pub(crate) owner: Owner,
    pub(crate) id: String,
}

/// Send `notifications/tasks` for `task` on the listen stream `subscription` of `peer`:
/// its state now, then each change, until it is terminal, is gone, or `until` is
/// cancelled (the stream closed).
pub(crate) async fn follow(
    task: Followed,
    peer: Peer<RoleServer>,
    subscription: RequestId,
    until: CancellationToken,
) {
    let mut last: Option<Value> = None;
    loop {
        let Ok(mut wakes) = task.tasks.store().subscribe(&task.id).await else {
            return;
        };
        let Ok(record) = task.tasks.get(&task.owner, &task.id).await else {
            return;
        };
        let detailed = crate::tasks::wire::detailed(&record);
        // What a change is: the status with its payload, and the status message (the
        // `lastUpdatedAt` stamp alone is not one).
        let mut seen = serde_json::to_value(&detailed).unwrap_or(Value::Null);
        if let Value::Object(o) = &mut seen {
            o.remove("lastUpdatedAt");
        }
        if last.as_ref() != Some(&seen) {
            last = Some(seen);
            let mut notification = ServerNotification::TaskStatusNotification(
                TaskStatusNotification::new(TaskStatusNotificationParams::new(detailed)),
            );
            notification
                .get_meta_mut()
                .set_subscription_id(subscription.clone());
            if peer.send_notification(notification).await.is_err() {
                return;
            }
        }
        if record.state.is_terminal() {
            return;
        }
        tokio::select! {
            () = until.cancelled() => return,
            // The next change (or the end of the subscription: looked at once more).
            _ = wakes.next() => {}
        }
    }
}
