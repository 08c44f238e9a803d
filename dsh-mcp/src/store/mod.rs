//! Where the server's shared state lives: tasks, single-use approval states, and the
//! wake-ups a running task needs, behind one trait, [`Store`].
//!
//! The server holds only an `Arc<dyn Store>` ([`crate::McpServer::with_store`]); the
//! default is [`MemoryStore`], in the process. A store shared by several server
//! instances (Redis, say) implements the same trait, and `conformance::run` (feature
//! `store-conformance`) checks that it behaves as this crate expects.
//!
//! What only the process can hold (a task's running future, its job, a suspended
//! call waiting for its approval) stays in the instance, keyed by the task id or the
//! approval state's nonce; the store has what any instance may read:
//!
//! - **Task records** ([`TaskRecord`]): created before the `tools/call` that starts the
//!   task is answered, read by `tasks/get` and `tasks/list`, changed only through
//!   [`Store::update_task`], which applies a [`Change`] atomically with the one state
//!   machine ([`TaskRecord::apply`]: terminal states never change). Each record belongs
//!   to an [`Owner`] (a session, or the credentials of a stateless request): another
//!   owner's task is unknown. A record with a time to live is gone once it passed.
//! - **Approval states** ([`ApprovalRecord`]): put when a call is suspended on its
//!   approval, taken at most once by the retry that redeems it
//!   ([`Store::take_approval`] is atomic: of two retries racing, one wins).
//! - **Wake-ups** ([`Wake`]): [`Store::update_task`] publishes what a change means for
//!   whoever follows the task: `Changed` after every change, `Answered` for each
//!   question answered (to the call waiting on it), `Cancel` for a cancellation request
//!   (to the instance running the call). [`Store::subscribe`] follows one task; a
//!   publish/subscribe channel (Redis pub/sub) implements it as well as a channel in
//!   memory does.
//! - **Instances** ([`Store::renew_instance`], [`Store::instance_alive`]): each server
//!   instance keeps a lease; a task whose runner's lease has expired is failed by
//!   whichever instance reads it next (its process is gone: it can never finish).
//! - **Inboxes** ([`Store::send`], [`Store::inbox`]): a message to whichever instance
//!   listens on a name, delivered once to each listener, never kept. Instances forward
//!   the answer to a suspended call they do not hold to the instance that holds it.
//!
//! A record the store cannot read (another format version, damaged bytes) is
//! [`StoreError::Malformed`], naming its key: the request that met it fails, nothing
//! else does.

pub(crate) mod lease;
mod memory;
mod record;
#[cfg(feature = "redis")]
mod redis;

#[cfg(any(test, feature = "store-conformance"))]
pub mod conformance;

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

pub use crate::util::now_ms;
pub use memory::MemoryStore;
pub use record::{
    Applied, ApprovalRecord, Change, Outcome, Owner, QUESTION_KEY_PREFIX, Question, RECORD_VERSION,
    TaskModel, TaskRecord, TaskState, Wake,
};
#[cfg(feature = "redis")]
pub use redis::RedisStore;

/// The future a [`Store`] method returns.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// The wake-ups of one task, in the order they were published
/// ([`Store::subscribe`]). It ends when the task is deleted or has expired, or after
/// the `Changed` to a terminal state.
pub type Wakes = Pin<Box<dyn futures_core::Stream<Item = Wake> + Send>>;

/// The messages sent to one inbox ([`Store::inbox`]) from the moment it was opened.
pub type Messages = Pin<Box<dyn futures_core::Stream<Item = serde_json::Value> + Send>>;

/// Why a store refused or failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A record with this id (or nonce) exists already.
    #[error("a record {id:?} exists already")]
    Exists {
        /// The id.
        id: String,
    },
    /// No record with this id is visible to the owner (never created, another owner's,
    /// deleted or expired).
    #[error("unknown task {id:?}")]
    NotFound {
        /// The id.
        id: String,
    },
    /// The task is terminal: it never changes again.
    #[error("task {id:?} is already in terminal status {state:?}")]
    Terminal {
        /// The task id.
        id: String,
        /// Its terminal state.
        state: TaskState,
    },
    /// The store could not be reached, or failed the operation.
    #[error("the task store is unavailable: {0}")]
    Unavailable(String),
    /// A record the store holds cannot be read (another format version, damaged data).
    #[error("the store record {key:?} cannot be read: {reason}")]
    Malformed {
        /// Where it is kept (for Redis, the key).
        key: String,
        /// What is wrong with it.
        reason: String,
    },
}

/// The server's shared state (see the module docs). Object-safe: the server holds an
/// `Arc<dyn Store>`.
///
/// Every method is atomic with respect to the others for the records it touches.
pub trait Store: Send + Sync + 'static {
    /// Keep a new task record.
    ///
    /// # Errors
    ///
    /// [`StoreError::Exists`] when a record with its id exists (and has not expired).
    fn create_task(&self, record: TaskRecord) -> StoreFuture<'_, ()>;

    /// The task `id`, when `owner` may see it (`None`: unknown, another owner's,
    /// deleted or expired).
    fn task<'a>(&'a self, owner: &'a Owner, id: &'a str) -> StoreFuture<'a, Option<TaskRecord>>;

    /// Apply `change` to the task `id` of `owner` atomically ([`TaskRecord::apply`]),
    /// keep the result, and publish its [`Applied::wakes`] to the task's subscribers.
    ///
    /// # Errors
    ///
    /// [`StoreError::NotFound`] when `owner` sees no such task; [`StoreError::Terminal`]
    /// when it is terminal (the record is unchanged).
    fn update_task<'a>(
        &'a self,
        owner: &'a Owner,
        id: &'a str,
        change: Change,
    ) -> StoreFuture<'a, Applied>;

    /// The tasks of `owner`, oldest first (by creation time, then id).
    fn tasks<'a>(&'a self, owner: &'a Owner) -> StoreFuture<'a, Vec<TaskRecord>>;

    /// Forget the task `id` of `owner` (its subscriptions end); `true` when it existed.
    fn delete_task<'a>(&'a self, owner: &'a Owner, id: &'a str) -> StoreFuture<'a, bool>;

    /// Keep a single-use approval state.
    ///
    /// # Errors
    ///
    /// [`StoreError::Exists`] when one with its nonce is kept.
    fn put_approval(&self, record: ApprovalRecord) -> StoreFuture<'_, ()>;

    /// Take the approval state `nonce`: `Some` exactly once, and never after it
    /// expired.
    fn take_approval<'a>(&'a self, nonce: &'a str) -> StoreFuture<'a, Option<ApprovalRecord>>;

    /// Follow the task `id`: every wake-up published from now on. Subscribe before
    /// reading the record, so nothing between the two is missed.
    fn subscribe<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Wakes>;

    /// Keep the server instance `instance` alive for `lease` from now (renewed before it
    /// runs out by the instance itself).
    fn renew_instance<'a>(&'a self, instance: &'a str, lease: Duration) -> StoreFuture<'a, ()>;

    /// Whether `instance` holds a lease that has not run out.
    fn instance_alive<'a>(&'a self, instance: &'a str) -> StoreFuture<'a, bool>;

    /// Send `message` to the listeners of the inbox `name`: `true` when at least one
    /// listened (nothing is kept for later listeners).
    fn send<'a>(&'a self, name: &'a str, message: serde_json::Value) -> StoreFuture<'a, bool>;

    /// Listen on the inbox `name`: every message sent to it from now on.
    fn inbox<'a>(&'a self, name: &'a str) -> StoreFuture<'a, Messages>;

    /// Whether the store answers now: what a server's readiness check asks (see
    /// `HttpServer`'s `/readyz`). The default, for a store in the process, always
    /// answers.
    ///
    /// # Errors
    ///
    /// [`StoreError::Unavailable`] when the store cannot be reached.
    fn ping(&self) -> StoreFuture<'_, ()> {
        Box::pin(async { Ok(()) })
    }
}

/// `wakes`, ended at `expires_ms` (milliseconds since the Unix epoch) if it has not
/// ended before: a subscription ends when its task expires.
pub(crate) fn ending_at(wakes: Wakes, expires_ms: Option<u64>) -> Wakes {
    let Some(at) = expires_ms else { return wakes };
    let wait = Duration::from_millis(at.saturating_sub(now_ms()));
    let expiry = Box::pin(tokio::time::sleep(wait));
    Box::pin(futures_util::stream::unfold(
        (wakes, expiry),
        |(mut wakes, mut expiry)| async move {
            tokio::select! {
                wake = futures_util::StreamExt::next(&mut wakes) => wake.map(|w| (w, (wakes, expiry))),
                () = expiry.as_mut() => None,
            }
        },
    ))
}
