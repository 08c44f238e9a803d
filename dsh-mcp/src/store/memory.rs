//! The in-memory [`Store`]: the default, for one server process.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll};

use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;

use super::{
    Applied, ApprovalRecord, Change, Messages, Owner, Store, StoreError, StoreFuture, TaskRecord,
    Wake, Wakes, now_ms,
};
use crate::util::lock;

/// Tasks, approval states and wake-ups in this process's memory (see [`super`]).
#[derive(Default)]
pub struct MemoryStore {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    tasks: HashMap<String, TaskRecord>,
    approvals: HashMap<String, ApprovalRecord>,
    subscribers: HashMap<String, Vec<mpsc::UnboundedSender<Wake>>>,
    /// Each instance's lease end, in milliseconds since the Unix epoch.
    leases: HashMap<String, u64>,
    /// The listeners of each inbox.
    inboxes: HashMap<String, Vec<mpsc::UnboundedSender<Value>>>,
}

impl std::fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = lock(&self.inner);
        f.debug_struct("MemoryStore")
            .field("tasks", &inner.tasks.len())
            .field("approvals", &inner.approvals.len())
            .finish()
    }
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        MemoryStore::default()
    }
}

impl Inner {
    /// Forget what has expired (its subscriptions end).
    fn sweep(&mut self, now: u64) {
        let expired: Vec<String> = self
            .tasks
            .values()
            .filter(|r| r.expired(now))
            .map(|r| r.id.clone())
            .collect();
        for id in expired {
            self.tasks.remove(&id);
            self.subscribers.remove(&id);
        }
        self.approvals.retain(|_, a| a.expires_ms > now);
    }

    fn visible(&self, owner: &Owner, id: &str, now: u64) -> Option<&TaskRecord> {
        self.tasks
            .get(id)
            .filter(|r| &r.owner == owner && !r.expired(now))
    }

    fn publish(&mut self, id: &str, wakes: &[Wake], terminal: bool) {
        if let Some(subscribers) = self.subscribers.get_mut(id) {
            subscribers.retain(|tx| wakes.iter().all(|w| tx.send(w.clone()).is_ok()));
        }
        if terminal {
            // Nothing follows a terminal state: the subscriptions end.
            self.subscribers.remove(id);
        }
    }
}

/// A subscription's (or an inbox's) stream.
struct Receiver<T>(mpsc::UnboundedReceiver<T>);

impl<T> futures_core::Stream for Receiver<T> {
    type Item = T;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        self.0.poll_recv(cx)
    }
}

impl Store for MemoryStore {
    fn create_task(&self, record: TaskRecord) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let now = now_ms();
            let mut inner = lock(&self.inner);
            inner.sweep(now);
            if inner.tasks.contains_key(&record.id) {
                return Err(StoreError::Exists { id: record.id });
            }
            inner.tasks.insert(record.id.clone(), record);
            Ok(())
        })
    }

    fn task<'a>(&'a self, owner: &'a Owner, id: &'a str) -> StoreFuture<'a, Option<TaskRecord>> {
        Box::pin(async move { Ok(lock(&self.inner).visible(owner, id, now_ms()).cloned()) })
    }

    fn update_task<'a>(
        &'a self,
        owner: &'a Owner,
        id: &'a str,
        change: Change,
    ) -> StoreFuture<'a, Applied> {
        Box::pin(async move {
            let now = now_ms();
            let mut inner = lock(&self.inner);
            if inner.visible(owner, id, now).is_none() {
                return Err(StoreError::NotFound { id: id.to_string() });
            }
            let Some(record) = inner.tasks.get_mut(id) else {
                return Err(StoreError::NotFound { id: id.to_string() });
            };
            let applied = record.apply(change, now)?;
            let terminal = applied.record.state.is_terminal();
            inner.publish(id, &applied.wakes, terminal);
            Ok(applied)
        })
    }

    fn tasks<'a>(&'a self, owner: &'a Owner) -> StoreFuture<'a, Vec<TaskRecord>> {
        Box::pin(async move {
            let mut inner = lock(&self.inner);
            inner.sweep(now_ms());
            let mut listed: Vec<TaskRecord> = inner
                .tasks
                .values()
                .filter(|r| &r.owner == owner)
                .cloned()
                .collect();
            listed.sort_by(|a, b| (a.created_ms, &a.id).cmp(&(b.created_ms, &b.id)));
            Ok(listed)
        })
    }

    fn delete_task<'a>(&'a self, owner: &'a Owner, id: &'a str) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let mut inner = lock(&self.inner);
            if inner.tasks.get(id).is_none_or(|r| &r.owner != owner) {
                return Ok(false);
            }
            inner.tasks.remove(id);
            inner.subscribers.remove(id);
            Ok(true)
        })
    }

    fn put_approval(&self, record: ApprovalRecord) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let mut inner = lock(&self.inner);
            inner.sweep(now_ms());
            if inner.approvals.contains_key(&record.nonce) {
                return Err(StoreError::Exists { id: record.nonce });
            }
            inner.approvals.insert(record.nonce.clone(), record);
            Ok(())
        })
    }

    fn take_approval<'a>(&'a self, nonce: &'a str) -> StoreFuture<'a, Option<ApprovalRecord>> {
        Box::pin(async move {
            let taken = lock(&self.inner).approvals.remove(nonce);
            Ok(taken.filter(|a| a.expires_ms > now_ms()))
        })
    }

    fn subscribe<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Wakes> {
        Box::pin(async move {
            let (tx, rx) = mpsc::unbounded_channel();
            let mut inner = lock(&self.inner);
            let record = inner
                .tasks
                .get(id)
                .filter(|r| !r.state.is_terminal() && !r.expired(now_ms()));
            let expires = record.and_then(|r| r.ttl_ms.map(|ttl| r.created_ms.saturating_add(ttl)));
            if record.is_some() {
                inner
                    .subscribers
                    .entry(id.to_string())
                    .or_default()
                    .push(tx);
            }
            // Otherwise `tx` is dropped: the stream ends at once.
            let wakes: Wakes = Box::pin(Receiver(rx));
            Ok(super::ending_at(wakes, expires))
        })
    }

    fn renew_instance<'a>(&'a self, instance: &'a str, lease: Duration) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let until = now_ms().saturating_add(crate::util::millis(lease));
            let mut inner = lock(&self.inner);
            let now = now_ms();
            inner.leases.retain(|_, &mut end| end > now);
            inner.leases.insert(instance.to_string(), until);
            Ok(())
        })
    }

    fn instance_alive<'a>(&'a self, instance: &'a str) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let inner = lock(&self.inner);
            Ok(inner
                .leases
                .get(instance)
                .is_some_and(|&end| end > now_ms()))
        })
    }

    fn send<'a>(&'a self, name: &'a str, message: Value) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let mut inner = lock(&self.inner);
            let Some(listeners) = inner.inboxes.get_mut(name) else {
                return Ok(false);
            };
            listeners.retain(|tx| tx.send(message.clone()).is_ok());
            let heard = !listeners.is_empty();
            if !heard {
                inner.inboxes.remove(name);
            }
            Ok(heard)
        })
    }

    fn inbox<'a>(&'a self, name: &'a str) -> StoreFuture<'a, Messages> {
        Box::pin(async move {
            let (tx, rx) = mpsc::unbounded_channel();
            lock(&self.inner)
                .inboxes
                .entry(name.to_string())
                .or_default()
                .push(tx);
            let messages: Messages = Box::pin(Receiver(rx));
            Ok(messages)
        })
    }
}
