//! The [`Store`] on Redis (feature `redis`): several server instances share their
//! tasks, approval states and wake-ups through one Redis server.
//!
//! ```no_run
//! # async fn demo() -> Result<(), dsh_mcp::store::StoreError> {
//! let store = dsh_mcp::store::RedisStore::connect("redis://127.0.0.1:6379/0", "my-app").await?;
//! # let _ = store; Ok(()) }
//! ```
//!
//! Every key starts with the prefix given to [`RedisStore::connect`], so instances of
//! different deployments (or tests) can share a Redis server:
//!
//! | key | holds |
//! | --- | --- |
//! | `PREFIX:task:ID` | a [`TaskRecord`] as JSON; expires with the task's time to live |
//! | `PREFIX:owner:OWNER` | a sorted set of the owner's task ids, scored by their expiry |
//! | `PREFIX:approval:NONCE` | an [`ApprovalRecord`] as JSON; expires with it |
//! | `PREFIX:instance:ID` | a server instance's lease |
//! | `PREFIX:wake:ID` (channel) | the wake-ups of task `ID` |
//! | `PREFIX:inbox:NAME` (channel) | the messages of an inbox |
//!
//! Changes are atomic: a Lua script writes a record only if it still holds what the
//! change was computed from (compare and set, retried on a conflict) and publishes the
//! change's wake-ups in the same step. An approval state is taken with `GETDEL`: of two
//! instances racing for it, one gets it.
//!
//! Wake-ups and inbox messages travel by Redis pub/sub on a connection of their own
//! (RESP3), resubscribed automatically after a reconnection. Messages published while
//! the connection is down are lost; the server does not rely on them alone (the
//! instance running a task also reads its record every few seconds).
//!
//! Redis keeps what it holds only as durably as it is configured to (`appendonly`):
//! records lost with a restarted Redis are unknown afterwards, and their calls are
//! stopped.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{IntoConnectionInfo, ProtocolVersion, PushInfo, PushKind, Script};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::mpsc;

use super::{
    Applied, ApprovalRecord, Change, Messages, Owner, Store, StoreError, StoreFuture, TaskRecord,
    Wake, Wakes, now_ms,
};
use crate::util::lock;

/// How often the pub/sub connection is checked.
const KEEPALIVE: Duration = Duration::from_millis(500);

/// How many times a change is recomputed when another instance changed the record first.
const CAS_ATTEMPTS: usize = 64;

/// Tasks, approval states and wake-ups on a Redis server (see the module docs).
pub struct RedisStore {
    prefix: String,
    commands: ConnectionManager,
    pubsub: ConnectionManager,
    listeners: Arc<Listeners>,
    dispatch: tokio::task::JoinHandle<()>,
    /// Pings the pub/sub connection: a dropped one is reconnected (and resubscribed)
    /// even while no command uses it.
    keepalive: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl Drop for RedisStore {
    fn drop(&mut self) {
        self.dispatch.abort();
        self.keepalive.abort();
    }
}

/// One local listener of a channel: its id and where its payloads go.
type Listener = (u64, mpsc::UnboundedSender<String>);

/// The local listeners of each subscribed channel.
#[derive(Default)]
struct Listeners {
    /// Held while subscribing or unsubscribing: a channel is unsubscribed only when it
    /// still has no listener once the lock is held.
    ops: tokio::sync::Mutex<()>,
    channels: Mutex<HashMap<String, Vec<Listener>>>,
    next: AtomicU64,
}

impl Listeners {
    fn deliver(&self, channel: &str, payload: &str) {
        let mut channels = lock(&self.channels);
        if let Some(listeners) = channels.get_mut(channel) {
            listeners.retain(|(_, tx)| tx.send(payload.to_string()).is_ok());
        }
    }
}

/// Removes its listener when dropped, and unsubscribes the channel it was the last of.
struct Listening {
    listeners: Arc<Listeners>,
    pubsub: ConnectionManager,
    channel: String,
    id: u64,
}

impl Drop for Listening {
    fn drop(&mut self) {
        let empty = {
            let mut channels = lock(&self.listeners.channels);
            let listeners = channels.entry(self.channel.clone()).or_default();
            listeners.retain(|(id, _)| *id != self.id);
            listeners.is_empty()
        };
        if !empty {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let listeners = self.listeners.clone();
        let mut pubsub = self.pubsub.clone();
        let channel = std::mem::take(&mut self.channel);
        runtime.spawn(async move {
            let _ops = listeners.ops.lock().await;
            let still_empty = {
                let mut channels = lock(&listeners.channels);
                let empty = channels.get(&channel).is_none_or(Vec::is_empty);
                if empty {
                    channels.remove(&channel);
                }
                empty
            };
            if still_empty {
                let _ = pubsub.unsubscribe(&channel).await;
            }
        });
    }
}

/// The payloads of one channel, as a stream.
struct Payloads {
    rx: mpsc::UnboundedReceiver<String>,
    _listening: Listening,
}

impl futures_core::Stream for Payloads {
    type Item = String;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<String>> {
        self.rx.poll_recv(cx)
    }
}

/// What is published on a task's wake channel.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
enum Published {
    /// The wake-ups of one change, in order.
    Wakes(Vec<Wake>),
    /// The record was deleted.
    Gone,
}

fn unavailable(e: &redis::RedisError) -> StoreError {
    StoreError::Unavailable(format!("redis: {e}"))
}

fn to_json<T: Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Unavailable(format!("encoding: {e}")))
}

fn parse<T: DeserializeOwned>(key: &str, text: &str) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Malformed {
        key: key.to_string(),
        reason: e.to_string(),
    })
}

/// A task record read from `key`, checked.
fn parse_task(key: &str, text: &str) -> Result<TaskRecord, StoreError> {
    let version: Value = parse(key, text)?;
    if let Some(v) = version.get("version").and_then(Value::as_u64) {
        super::record::check_version_of(v, key)?;
    }
    let record: TaskRecord = parse(key, text)?;
    record.check_version(key)?;
    Ok(record)
}

const CREATE: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if ARGV[2] ~= '' then
  redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[2])
else
  redis.call('SET', KEYS[1], ARGV[1])
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[4])
local score = ARGV[2]
if score == '' then score = '+inf' end
redis.call('ZADD', KEYS[2], score, ARGV[3])
local top = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
if top[2] == 'inf' then redis.call('PERSIST', KEYS[2]) else redis.call('PEXPIREAT', KEYS[2], top[2]) end
return 1
";

const UPDATE: &str = r"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
redis.call('PUBLISH', KEYS[2], ARGV[3])
return 1
";

const DELETE: &str = r"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[2])
redis.call('PUBLISH', KEYS[3], ARGV[3])
return 1
";

impl RedisStore {
    /// Connect to the Redis server at `url` (`redis://HOST:PORT/DB`, with
    /// `redis://:PASSWORD@…` or `rediss://` as the `redis` crate reads them), keeping
    /// every key under `prefix`.
    ///
    /// # Errors
    ///
    /// [`StoreError::Unavailable`] when the URL cannot be read or the server does not
    /// answer (`PING`) within a few seconds.
    pub async fn connect(url: &str, prefix: &str) -> Result<RedisStore, StoreError> {
        if prefix.is_empty() {
            return Err(StoreError::Unavailable(
                "the key prefix is empty: give each deployment a prefix of its own".to_string(),
            ));
        }
        let info = url
            .into_connection_info()
            .map_err(|e| StoreError::Unavailable(format!("redis URL {url:?}: {e}")))?;
        let settings = info
            .redis_settings()
            .clone()
            .set_protocol(ProtocolVersion::RESP3);
        let info = info.set_redis_settings(settings);
        let client = redis::Client::open(info)
            .map_err(|e| StoreError::Unavailable(format!("redis URL {url:?}: {e}")))?;
        let config = || {
            ConnectionManagerConfig::new()
                .set_connection_timeout(Some(Duration::from_secs(2)))
                .set_response_timeout(Some(Duration::from_secs(5)))
                .set_number_of_retries(2)
                .set_max_delay(Duration::from_millis(500))
        };
        let unreachable =
            |e: redis::RedisError| StoreError::Unavailable(format!("redis at {url}: {e}"));
        let mut commands = client
            .get_connection_manager_with_config(config())
            .await
            .map_err(unreachable)?;
        let _: String = redis::cmd("PING")
            .query_async(&mut commands)
            .await
            .map_err(unreachable)?;
        let (push_tx, push_rx) = mpsc::unbounded_channel::<PushInfo>();
        let pubsub = client
            .get_connection_manager_with_config(
                config()
                    .set_push_sender(push_tx)
                    .set_automatic_resubscription(),
            )
            .await
            .map_err(unreachable)?;
        let listeners = Arc::new(Listeners::default());
        let dispatch = tokio::spawn(dispatch(push_rx, Arc::downgrade(&listeners)));
        let keepalive = tokio::spawn(keep_alive(pubsub.clone()));
        Ok(RedisStore {
            keepalive,
            prefix: prefix.to_string(),
            commands,
            pubsub,
            listeners,
            dispatch,
        })
    }

    fn key(&self, kind: &str, name: &str) -> String {
        format!("{}:{kind}:{name}", self.prefix)
    }

    fn conn(&self) -> ConnectionManager {
        self.commands.clone()
    }

    async fn get(&self, key: &str) -> Result<Option<String>, StoreError> {
        redis::cmd("GET")
            .arg(key)
            .query_async(&mut self.conn())
            .await
            .map_err(|e| unavailable(&e))
    }

    /// The record of task `id` as kept (its text too), whoever owns it.
    async fn read_task(&self, id: &str) -> Result<Option<(String, TaskRecord)>, StoreError> {
        let key = self.key("task", id);
        match self.get(&key).await? {
            Some(text) => {
                let record = parse_task(&key, &text)?;
                Ok(Some((text, record)))
            }
            None => Ok(None),
        }
    }

    /// Listen on `channel` (subscribed once this returns).
    async fn listen(&self, channel: String) -> Result<Payloads, StoreError> {
        let (tx, rx) = mpsc::unbounded_channel();
        let id = self.listeners.next.fetch_add(1, Ordering::Relaxed);
        let _ops = self.listeners.ops.lock().await;
        lock(&self.listeners.channels)
            .entry(channel.clone())
            .or_default()
            .push((id, tx));
        let listening = Listening {
            listeners: self.listeners.clone(),
            pubsub: self.pubsub.clone(),
            channel: channel.clone(),
            id,
        };
        let mut pubsub = self.pubsub.clone();
        // A failure drops `listening`, which takes the listener out again.
        pubsub
            .subscribe(&channel)
            .await
            .map_err(|e| unavailable(&e))?;
        Ok(Payloads {
            rx,
            _listening: listening,
        })
    }
}

/// `PING` the pub/sub connection every [`KEEPALIVE`]: a failed command makes the
/// connection manager reconnect, and resubscribe.
async fn keep_alive(mut pubsub: ConnectionManager) {
    let mut every = tokio::time::interval(KEEPALIVE);
    loop {
        every.tick().await;
        let _: Result<String, _> = redis::cmd("PING").query_async(&mut pubsub).await;
    }
}

/// Route each pushed message to the listeners of its channel.
async fn dispatch(
    mut pushes: mpsc::UnboundedReceiver<PushInfo>,
    listeners: std::sync::Weak<Listeners>,
) {
    while let Some(push) = pushes.recv().await {
        if push.kind != PushKind::Message {
            continue;
        }
        let Some(listeners) = listeners.upgrade() else {
            return;
        };
        let mut data = push.data.into_iter();
        let (Some(channel), Some(payload)) = (data.next(), data.next()) else {
            continue;
        };
        let (Ok(channel), Ok(payload)) = (
            redis::from_redis_value::<String>(channel),
            redis::from_redis_value::<String>(payload),
        ) else {
            continue;
        };
        listeners.deliver(&channel, &payload);
    }
}

/// The wake-ups of one task, from its channel's payloads: ends after a terminal
/// `Changed`, when the record is deleted, or at `expires_ms`.
fn wakes_of(payloads: Payloads, expires_ms: Option<u64>, key: String) -> Wakes {
    struct State {
        payloads: Payloads,
        pending: std::collections::VecDeque<Wake>,
        expiry: Option<Pin<Box<tokio::time::Sleep>>>,
        done: bool,
        key: String,
    }
    let expiry = expires_ms.map(|at| {
        let wait = Duration::from_millis(at.saturating_sub(now_ms()));
        Box::pin(tokio::time::sleep(wait))
    });
    let state = State {
        payloads,
        pending: std::collections::VecDeque::new(),
        expiry,
        done: false,
        key,
    };
    Box::pin(futures_util::stream::unfold(state, |mut s| async move {
        loop {
            if let Some(wake) = s.pending.pop_front() {
                if matches!(wake, Wake::Changed(state) if state.is_terminal()) {
                    s.done = true;
                    s.pending.clear();
                }
                return Some((wake, s));
            }
            if s.done {
                return None;
            }
            let payload = match &mut s.expiry {
                Some(expiry) => {
                    tokio::select! {
                        payload = futures_util::StreamExt::next(&mut s.payloads) => payload,
                        () = expiry.as_mut() => None,
                    }
                }
                None => futures_util::StreamExt::next(&mut s.payloads).await,
            };
            match payload.map(|text| parse::<Published>(&s.key, &text)) {
                Some(Ok(Published::Wakes(wakes))) => s.pending.extend(wakes),
                Some(Err(e)) => {
                    tracing::warn!("dsh-mcp: {e}");
                }
                Some(Ok(Published::Gone)) | None => return None,
            }
        }
    }))
}

/// A store operation in its span (the OpenTelemetry database conventions): kind CLIENT,
/// `db.system.name = redis`, `db.operation.name` the store's operation (each is one
/// command or one script), and on failure `error.type` and an error status. With no
/// subscriber, the operation alone.
fn traced<'a, T: 'a>(
    operation: &'static str,
    work: impl Future<Output = Result<T, StoreError>> + Send + 'a,
) -> StoreFuture<'a, T> {
    let span = tracing::info_span!(
        "redis",
        otel.name = operation,
        otel.kind = "client",
        otel.status_code = tracing::field::Empty,
        db.system.name = "redis",
        db.operation.name = operation,
        error.type = tracing::field::Empty,
    );
    if span.is_disabled() {
        return Box::pin(work);
    }
    Box::pin(async move {
        let out = tracing::Instrument::instrument(work, span.clone()).await;
        if let Err(e) = &out {
            span.record("error.type", error_type(e));
            span.record("otel.status_code", "error");
        }
        out
    })
}

/// The `error.type` of a store error.
fn error_type(e: &StoreError) -> &'static str {
    match e {
        StoreError::Exists { .. } => "exists",
        StoreError::NotFound { .. } => "not_found",
        StoreError::Terminal { .. } => "terminal",
        StoreError::Unavailable(_) => "unavailable",
        StoreError::Malformed { .. } => "malformed",
    }
}

impl Store for RedisStore {
    fn create_task(&self, record: TaskRecord) -> StoreFuture<'_, ()> {
        traced("create_task", async move {
            let now = now_ms();
            if record.expired(now) {
                // Expired as it is created: kept no time at all.
                return Ok(());
            }
            let key = self.key("task", &record.id);
            let expiry = record
                .ttl_ms
                .map(|ttl| record.created_ms.saturating_add(ttl).to_string())
                .unwrap_or_default();
            let created: i64 = Script::new(CREATE)
                .key(&key)
                .key(self.key("owner", record.owner.as_str()))
                .arg(to_json(&record)?)
                .arg(expiry)
                .arg(&record.id)
                .arg(now)
                .invoke_async(&mut self.conn())
                .await
                .map_err(|e| unavailable(&e))?;
            if created == 1 {
                Ok(())
            } else {
                Err(StoreError::Exists { id: record.id })
            }
        })
    }

    fn task<'a>(&'a self, owner: &'a Owner, id: &'a str) -> StoreFuture<'a, Option<TaskRecord>> {
        traced("task", async move {
            Ok(self
                .read_task(id)
                .await?
                .map(|(_, record)| record)
                .filter(|r| &r.owner == owner && !r.expired(now_ms())))
        })
    }

    fn update_task<'a>(
        &'a self,
        owner: &'a Owner,
        id: &'a str,
        change: Change,
    ) -> StoreFuture<'a, Applied> {
        traced("update_task", async move {
            let key = self.key("task", id);
            let channel = self.key("wake", id);
            for _ in 0..CAS_ATTEMPTS {
                let now = now_ms();
                let Some((old, mut record)) = self.read_task(id).await? else {
                    return Err(StoreError::NotFound { id: id.to_string() });
                };
                if &record.owner != owner || record.expired(now) {
                    return Err(StoreError::NotFound { id: id.to_string() });
                }
                let applied = record.apply(change.clone(), now)?;
                let message = to_json(&Published::Wakes(applied.wakes.clone()))?;
                let written: i64 = Script::new(UPDATE)
                    .key(&key)
                    .key(&channel)
                    .arg(old)
                    .arg(to_json(&applied.record)?)
                    .arg(message)
                    .invoke_async(&mut self.conn())
                    .await
                    .map_err(|e| unavailable(&e))?;
                if written == 1 {
                    return Ok(applied);
                }
            }
            Err(StoreError::Unavailable(format!(
                "task {id:?} kept changing: no change applied after {CAS_ATTEMPTS} attempts"
            )))
        })
    }

    fn tasks<'a>(&'a self, owner: &'a Owner) -> StoreFuture<'a, Vec<TaskRecord>> {
        traced("tasks", async move {
            let index = self.key("owner", owner.as_str());
            let ids: Vec<String> = redis::cmd("ZRANGE")
                .arg(&index)
                .arg(0)
                .arg(-1)
                .query_async(&mut self.conn())
                .await
                .map_err(|e| unavailable(&e))?;
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            let keys: Vec<String> = ids.iter().map(|id| self.key("task", id)).collect();
            let texts: Vec<Option<String>> = redis::cmd("MGET")
                .arg(&keys)
                .query_async(&mut self.conn())
                .await
                .map_err(|e| unavailable(&e))?;
            let now = now_ms();
            let mut listed = Vec::new();
            let mut gone = Vec::new();
            for ((id, key), text) in ids.iter().zip(&keys).zip(texts) {
                match text {
                    Some(text) => {
                        let record = parse_task(key, &text)?;
                        if &record.owner == owner && !record.expired(now) {
                            listed.push(record);
                        }
                    }
                    None => gone.push(id.clone()),
                }
            }
            if !gone.is_empty() {
                let _: Result<i64, _> = redis::cmd("ZREM")
                    .arg(&index)
                    .arg(&gone)
                    .query_async(&mut self.conn())
                    .await;
            }
            listed.sort_by(|a, b| (a.created_ms, &a.id).cmp(&(b.created_ms, &b.id)));
            Ok(listed)
        })
    }

    fn delete_task<'a>(&'a self, owner: &'a Owner, id: &'a str) -> StoreFuture<'a, bool> {
        traced("delete_task", async move {
            let key = self.key("task", id);
            for _ in 0..CAS_ATTEMPTS {
                let Some((old, record)) = self.read_task(id).await? else {
                    return Ok(false);
                };
                if &record.owner != owner {
                    return Ok(false);
                }
                let deleted: i64 = Script::new(DELETE)
                    .key(&key)
                    .key(self.key("owner", owner.as_str()))
                    .key(self.key("wake", id))
                    .arg(old)
                    .arg(id)
                    .arg(to_json(&Published::Gone)?)
                    .invoke_async(&mut self.conn())
                    .await
                    .map_err(|e| unavailable(&e))?;
                if deleted == 1 {
                    return Ok(true);
                }
            }
            Err(StoreError::Unavailable(format!(
                "task {id:?} kept changing: not deleted after {CAS_ATTEMPTS} attempts"
            )))
        })
    }

    fn put_approval(&self, record: ApprovalRecord) -> StoreFuture<'_, ()> {
        traced("put_approval", async move {
            if record.expires_ms <= now_ms() {
                // Expired as it is put: never taken.
                return Ok(());
            }
            let stored: Option<String> = redis::cmd("SET")
                .arg(self.key("approval", &record.nonce))
                .arg(to_json(&record)?)
                .arg("NX")
                .arg("PXAT")
                .arg(record.expires_ms)
                .query_async(&mut self.conn())
                .await
                .map_err(|e| unavailable(&e))?;
            match stored {
                Some(_) => Ok(()),
                None => Err(StoreError::Exists { id: record.nonce }),
            }
        })
    }

    fn take_approval<'a>(&'a self, nonce: &'a str) -> StoreFuture<'a, Option<ApprovalRecord>> {
        traced("take_approval", async move {
            let key = self.key("approval", nonce);
            let taken: Option<String> = redis::cmd("GETDEL")
                .arg(&key)
                .query_async(&mut self.conn())
                .await
                .map_err(|e| unavailable(&e))?;
            let Some(text) = taken else { return Ok(None) };
            let record: ApprovalRecord = parse(&key, &text)?;
            record.check_version(&key)?;
            Ok(Some(record).filter(|a| a.expires_ms > now_ms()))
        })
    }

    fn subscribe<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Wakes> {
        traced("subscribe", async move {
            let payloads = self.listen(self.key("wake", id)).await?;
            let now = now_ms();
            let live = self
                .read_task(id)
                .await?
                .map(|(_, r)| r)
                .filter(|r| !r.state.is_terminal() && !r.expired(now));
            let Some(record) = live else {
                let ended: Wakes = Box::pin(futures_util::stream::empty());
                return Ok(ended);
            };
            let expires = record
                .ttl_ms
                .map(|ttl| record.created_ms.saturating_add(ttl));
            Ok(wakes_of(payloads, expires, self.key("wake", id)))
        })
    }

    fn renew_instance<'a>(&'a self, instance: &'a str, lease: Duration) -> StoreFuture<'a, ()> {
        traced("renew_instance", async move {
            let () = redis::cmd("SET")
                .arg(self.key("instance", instance))
                .arg(now_ms())
                .arg("PX")
                .arg(crate::util::millis(lease).max(1))
                .query_async(&mut self.conn())
                .await
                .map_err(|e| unavailable(&e))?;
            Ok(())
        })
    }

    fn ping(&self) -> StoreFuture<'_, ()> {
        traced("ping", async move {
            let _: String = redis::cmd("PING")
                .query_async(&mut self.conn())
                .await
                .map_err(|e| unavailable(&e))?;
            Ok(())
        })
    }

    fn instance_alive<'a>(&'a self, instance: &'a str) -> StoreFuture<'a, bool> {
        traced("instance_alive", async move {
            let alive: bool = redis::cmd("EXISTS")
                .arg(self.key("instance", instance))
                .query_async(&mut self.conn())
                .await
                .map_err(|e| unavailable(&e))?;
            Ok(alive)
        })
    }

    fn send<'a>(&'a self, name: &'a str, message: Value) -> StoreFuture<'a, bool> {
        traced("send", async move {
            let heard: i64 = redis::cmd("PUBLISH")
                .arg(self.key("inbox", name))
                .arg(to_json(&message)?)
                .query_async(&mut self.conn())
                .await
                .map_err(|e| unavailable(&e))?;
            Ok(heard > 0)
        })
    }

    fn inbox<'a>(&'a self, name: &'a str) -> StoreFuture<'a, Messages> {
        traced("inbox", async move {
            let key = self.key("inbox", name);
            let payloads = self.listen(key.clone()).await?;
            let messages = futures_util::StreamExt::filter_map(payloads, move |text| {
                let parsed = parse::<Value>(&key, &text);
                async move {
                    match parsed {
                        Ok(value) => Some(value),
                        Err(e) => {
                            tracing::warn!("dsh-mcp: {e}");
                            None
                        }
                    }
                }
            });
            let messages: Messages = Box::pin(messages);
            Ok(messages)
        })
    }
}
