//! The behaviour every [`Store`] must have, as a suite any implementation can run:
//!
//! ```no_run
//! # async fn demo() {
//! let store = std::sync::Arc::new(dsh_mcp::store::MemoryStore::new());
//! dsh_mcp::store::conformance::run(store).await;
//! # }
//! ```
//!
//! Each check uses ids of its own (random), so the suite can run against a store other
//! tests share. A failed check panics with what it expected (this is test code).
//!
//! For tests of several instances sharing a store, the module also has [`TestRedis`] (a
//! real Redis for the tests: `DSH_TEST_REDIS`, else one started from `redis-server`). The
//! round-robin proxy that puts several instances behind one URL is `dsh-testing`'s
//! (`dsh_testing::proxy::RoundRobin`, feature `mcp-proxy`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt as _;
use serde_json::{Value, json};

use super::{
    ApprovalRecord, Change, Owner, Store, StoreError, TaskModel, TaskRecord, TaskState, Wake,
    Wakes, now_ms,
};

/// How long a wake-up may take to arrive before a check fails.
const PATIENCE: Duration = Duration::from_secs(10);

/// Run every check on `store`, in turn.
pub async fn run(store: Arc<dyn Store>) {
    a_reachable_store_answers_pings(&*store).await;
    records_round_trip(&*store).await;
    records_belong_to_their_owner(&*store).await;
    questions_follow_the_state_machine(&*store).await;
    an_answer_is_delivered_once(store.clone()).await;
    terminal_states_never_change(&*store).await;
    cancellation_wakes_the_runner(&*store).await;
    records_expire(&*store).await;
    deleted_records_are_gone(&*store).await;
    approval_states_are_taken_once(store.clone()).await;
    records_expire_in_time(&*store).await;
    instances_hold_leases(&*store).await;
    inboxes_deliver_to_their_listeners(&*store).await;
}

fn unique(what: &str) -> String {
    format!(
        "conformance-{what}-{}",
        crate::util::random_hex(8).unwrap_or_else(|| now_ms().to_string())
    )
}

fn record(owner: &Owner, what: &str) -> TaskRecord {
    TaskRecord::new(
        unique(what),
        owner.clone(),
        TaskModel::Extension,
        now_ms(),
        None,
    )
}

async fn next(wakes: &mut Wakes, what: &str) -> Option<Wake> {
    match tokio::time::timeout(PATIENCE, wakes.next()).await {
        Ok(wake) => wake,
        Err(_) => panic!("{what}: no wake-up within {PATIENCE:?}"),
    }
}

async fn ask(store: &dyn Store, owner: &Owner, id: &str) -> String {
    let applied = store
        .update_task(
            owner,
            id,
            Change::Ask {
                request: json!({"method": "elicitation/create"}),
                in_band: true,
            },
        )
        .await
        .expect("a question is put");
    applied.key.expect("a question gets a key")
}

/// A store that is up answers [`Store::ping`], again and again.
pub async fn a_reachable_store_answers_pings(store: &dyn Store) {
    for _ in 0..3 {
        store
            .ping()
            .await
            .expect("a reachable store answers a ping");
    }
}

/// A record comes back as it was created, and serializes with its version.
pub async fn records_round_trip(store: &dyn Store) {
    let owner = Owner::new(unique("owner"));
    let created = record(&owner, "round-trip");
    store.create_task(created.clone()).await.expect("created");
    let read = store.task(&owner, &created.id).await.expect("read");
    assert_eq!(read.as_ref(), Some(&created), "a record reads as created");
    let again = store.create_task(created.clone()).await;
    assert!(
        matches!(again, Err(StoreError::Exists { .. })),
        "an id is created once: {again:?}"
    );
    let text = serde_json::to_value(&created).expect("a record serializes");
    assert_eq!(text["version"], json!(super::RECORD_VERSION), "{text}");
    let back: TaskRecord = serde_json::from_value(text).expect("and deserializes");
    assert_eq!(back, created);
}

/// Another owner sees nothing of a task; listing is per owner, oldest first.
pub async fn records_belong_to_their_owner(store: &dyn Store) {
    let alice = Owner::new(unique("alice"));
    let bob = Owner::new(unique("bob"));
    let mut first = record(&alice, "first");
    first.created_ms = first.created_ms.saturating_sub(1000);
    let second = record(&alice, "second");
    store.create_task(second.clone()).await.expect("created");
    store.create_task(first.clone()).await.expect("created");
    let theirs = record(&bob, "theirs");
    store.create_task(theirs.clone()).await.expect("created");
    assert_eq!(store.task(&bob, &first.id).await.expect("read"), None);
    let refused = store
        .update_task(
            &bob,
            &first.id,
            Change::Progress {
                message: "x".into(),
            },
        )
        .await;
    assert!(
        matches!(refused, Err(StoreError::NotFound { .. })),
        "another owner's task cannot be changed: {refused:?}"
    );
    assert!(!store.delete_task(&bob, &first.id).await.expect("delete"));
    let listed: Vec<String> = store
        .tasks(&alice)
        .await
        .expect("listed")
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(listed, vec![first.id.clone(), second.id.clone()]);
    let untouched = store.task(&alice, &first.id).await.expect("read");
    assert_eq!(untouched, Some(first), "bob changed nothing");
}

/// Questions make a task `input_required` until answered or withdrawn; answers under
/// other keys are ignored; every change wakes subscribers with the new state.
pub async fn questions_follow_the_state_machine(store: &dyn Store) {
    let owner = Owner::new(unique("owner"));
    let task = record(&owner, "questions");
    store.create_task(task.clone()).await.expect("created");
    let mut wakes = store.subscribe(&task.id).await.expect("subscribed");
    let first = ask(store, &owner, &task.id).await;
    let second = ask(store, &owner, &task.id).await;
    assert_ne!(first, second, "keys are unique over the task's life");
    for _ in 0..2 {
        assert_eq!(
            next(&mut wakes, "asked").await,
            Some(Wake::Changed(TaskState::InputRequired))
        );
    }
    let read = store.task(&owner, &task.id).await.expect("read");
    assert_eq!(read.map(|r| r.state), Some(TaskState::InputRequired));
    let ignored = store
        .update_task(
            &owner,
            &task.id,
            Change::Answer {
                responses: BTreeMap::from([("never-asked".to_string(), json!({}))]),
            },
        )
        .await
        .expect("an answer under an unknown key is no error");
    assert!(ignored.wakes.is_empty(), "{:?}", ignored.wakes);
    let answered = store
        .update_task(
            &owner,
            &task.id,
            Change::Answer {
                responses: BTreeMap::from([(first.clone(), json!({"action": "accept"}))]),
            },
        )
        .await
        .expect("answered");
    assert_eq!(
        answered.record.state,
        TaskState::InputRequired,
        "one is left"
    );
    assert_eq!(
        next(&mut wakes, "answered").await,
        Some(Wake::Answered {
            key: first,
            answer: json!({"action": "accept"})
        })
    );
    let withdrawn = store
        .update_task(&owner, &task.id, Change::Withdraw { key: second })
        .await
        .expect("withdrawn");
    assert_eq!(withdrawn.record.state, TaskState::Working);
    let progress = store
        .update_task(
            &owner,
            &task.id,
            Change::Progress {
                message: "half way".into(),
            },
        )
        .await
        .expect("progress");
    assert_eq!(progress.record.status_message.as_deref(), Some("half way"));
    assert!(progress.record.updated_ms >= task.updated_ms);
}

/// Of answers to one question racing, exactly one is taken and delivered.
pub async fn an_answer_is_delivered_once(store: Arc<dyn Store>) {
    let owner = Owner::new(unique("owner"));
    let task = record(&owner, "answer-once");
    store.create_task(task.clone()).await.expect("created");
    let key = ask(&*store, &owner, &task.id).await;
    let racers = (0..16).map(|i| {
        let (store, owner, id, key) = (store.clone(), owner.clone(), task.id.clone(), key.clone());
        tokio::spawn(async move {
            let applied = store
                .update_task(
                    &owner,
                    &id,
                    Change::Answer {
                        responses: BTreeMap::from([(key, json!(i))]),
                    },
                )
                .await
                .expect("an answer is no error");
            applied
                .wakes
                .iter()
                .filter(|w| matches!(w, Wake::Answered { .. }))
                .count()
        })
    });
    let mut delivered = 0;
    for racer in racers.collect::<Vec<_>>() {
        delivered += racer.await.expect("no panic");
    }
    assert_eq!(delivered, 1, "one answer is taken");
}

/// Once terminal, a task never changes, and its subscriptions end.
pub async fn terminal_states_never_change(store: &dyn Store) {
    let owner = Owner::new(unique("owner"));
    for (what, end) in [
        (
            "completed",
            Change::Complete {
                result: json!({"content": []}),
            },
        ),
        (
            "failed",
            Change::Fail {
                error: json!({"code": -32603, "message": "boom"}),
                message: "boom".into(),
            },
        ),
        (
            "cancelled",
            Change::Cancelled {
                reason: "stopped".into(),
            },
        ),
    ] {
        let task = record(&owner, what);
        store.create_task(task.clone()).await.expect("created");
        let mut wakes = store.subscribe(&task.id).await.expect("subscribed");
        let ended = store
            .update_task(&owner, &task.id, end)
            .await
            .expect("ended");
        assert!(ended.record.state.is_terminal(), "{what}");
        assert_eq!(
            next(&mut wakes, what).await,
            Some(Wake::Changed(ended.record.state))
        );
        assert_eq!(
            next(&mut wakes, what).await,
            None,
            "{what}: the stream ends"
        );
        for change in [
            Change::Progress {
                message: "late".into(),
            },
            Change::Complete {
                result: Value::Null,
            },
            Change::Cancelled {
                reason: "late".into(),
            },
            Change::RequestCancel {
                reason: "late".into(),
            },
            Change::Ask {
                request: Value::Null,
                in_band: true,
            },
        ] {
            let refused = store.update_task(&owner, &task.id, change).await;
            assert!(
                matches!(refused, Err(StoreError::Terminal { .. })),
                "{what}: {refused:?}"
            );
        }
        let read = store.task(&owner, &task.id).await.expect("read");
        assert_eq!(read, Some(ended.record), "{what}: unchanged");
        let late = store.subscribe(&task.id).await.expect("subscribed");
        assert_eq!(late.collect::<Vec<_>>().await, Vec::new(), "{what}");
    }
}

/// A cancellation request reaches the subscriber as `Cancel`, once.
pub async fn cancellation_wakes_the_runner(store: &dyn Store) {
    let owner = Owner::new(unique("owner"));
    let task = record(&owner, "cancel");
    store.create_task(task.clone()).await.expect("created");
    let _question = ask(store, &owner, &task.id).await;
    let mut wakes = store.subscribe(&task.id).await.expect("subscribed");
    for _ in 0..2 {
        store
            .update_task(
                &owner,
                &task.id,
                Change::RequestCancel {
                    reason: "asked".into(),
                },
            )
            .await
            .expect("requested");
    }
    assert_eq!(
        next(&mut wakes, "cancel").await,
        Some(Wake::Cancel {
            reason: "asked".into()
        })
    );
    assert_eq!(
        next(&mut wakes, "cancel").await,
        Some(Wake::Changed(TaskState::Working))
    );
    let read = store.task(&owner, &task.id).await.expect("read");
    let read = read.expect("still there");
    assert!(read.questions.is_empty(), "its questions are withdrawn");
    assert_eq!(read.status_message.as_deref(), Some("cancelling"));
    store
        .update_task(
            &owner,
            &task.id,
            Change::Cancelled {
                reason: "asked".into(),
            },
        )
        .await
        .expect("cancelled");
    assert_eq!(
        next(&mut wakes, "cancelled").await,
        Some(Wake::Changed(TaskState::Cancelled)),
        "the second request published nothing"
    );
}

/// A record whose time to live has passed is gone.
pub async fn records_expire(store: &dyn Store) {
    let owner = Owner::new(unique("owner"));
    let mut old = record(&owner, "expired");
    old.created_ms = now_ms().saturating_sub(60_000);
    old.ttl_ms = Some(1_000);
    store.create_task(old.clone()).await.expect("created");
    let mut fresh = record(&owner, "fresh");
    fresh.ttl_ms = Some(3_600_000);
    store.create_task(fresh.clone()).await.expect("created");
    assert_eq!(store.task(&owner, &old.id).await.expect("read"), None);
    let listed: Vec<String> = store
        .tasks(&owner)
        .await
        .expect("listed")
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(listed, vec![fresh.id.clone()]);
    let refused = store
        .update_task(
            &owner,
            &old.id,
            Change::Progress {
                message: "x".into(),
            },
        )
        .await;
    assert!(
        matches!(refused, Err(StoreError::NotFound { .. })),
        "{refused:?}"
    );
    // Its id may be used again.
    old.created_ms = now_ms();
    store.create_task(old).await.expect("an expired id is free");
}

/// A deleted record is gone and its subscriptions end.
pub async fn deleted_records_are_gone(store: &dyn Store) {
    let owner = Owner::new(unique("owner"));
    let task = record(&owner, "deleted");
    store.create_task(task.clone()).await.expect("created");
    let mut wakes = store.subscribe(&task.id).await.expect("subscribed");
    assert!(store.delete_task(&owner, &task.id).await.expect("deleted"));
    assert!(!store.delete_task(&owner, &task.id).await.expect("deleted"));
    assert_eq!(store.task(&owner, &task.id).await.expect("read"), None);
    assert_eq!(next(&mut wakes, "deleted").await, None, "the stream ends");
}

/// An approval state is taken once, even by racing takers, and never after it expired.
pub async fn approval_states_are_taken_once(store: Arc<dyn Store>) {
    let owner = Owner::new(unique("owner"));
    let nonce = unique("nonce");
    let approval = ApprovalRecord::new(nonce.clone(), owner.clone(), now_ms() + 60_000);
    store.put_approval(approval.clone()).await.expect("put");
    let again = store.put_approval(approval.clone()).await;
    assert!(matches!(again, Err(StoreError::Exists { .. })), "{again:?}");
    let racers: Vec<_> = (0..16)
        .map(|_| {
            let (store, nonce) = (store.clone(), nonce.clone());
            tokio::spawn(async move { store.take_approval(&nonce).await.expect("take") })
        })
        .collect();
    let mut taken = Vec::new();
    for racer in racers {
        taken.extend(racer.await.expect("no panic"));
    }
    assert_eq!(taken, vec![approval], "taken exactly once");
    let expired = ApprovalRecord::new(unique("nonce"), owner, now_ms().saturating_sub(1));
    store.put_approval(expired.clone()).await.expect("put");
    assert_eq!(
        store.take_approval(&expired.nonce).await.expect("take"),
        None,
        "an expired state is never taken"
    );
    assert_eq!(
        store.take_approval(&unique("never")).await.expect("take"),
        None
    );
}

/// A record with a short time to live is there, then gone once it passed, and its
/// subscription ends then.
pub async fn records_expire_in_time(store: &dyn Store) {
    let owner = Owner::new(unique("owner"));
    let mut task = record(&owner, "short");
    task.ttl_ms = Some(400);
    store.create_task(task.clone()).await.expect("created");
    let mut wakes = store.subscribe(&task.id).await.expect("subscribed");
    assert!(
        store.task(&owner, &task.id).await.expect("read").is_some(),
        "kept until its time to live passed"
    );
    assert_eq!(next(&mut wakes, "expired").await, None, "the stream ends");
    assert!(now_ms() >= task.created_ms + 400, "not before it expired");
    assert_eq!(store.task(&owner, &task.id).await.expect("read"), None);
}

/// An instance is alive while its lease runs, and not before or after.
pub async fn instances_hold_leases(store: &dyn Store) {
    let instance = unique("instance");
    assert!(!store.instance_alive(&instance).await.expect("read"));
    store
        .renew_instance(&instance, Duration::from_millis(300))
        .await
        .expect("renewed");
    assert!(store.instance_alive(&instance).await.expect("read"));
    assert!(
        !store.instance_alive(&unique("other")).await.expect("read"),
        "one lease is one instance's"
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !store.instance_alive(&instance).await.expect("read"),
        "its lease ran out"
    );
    store
        .renew_instance(&instance, Duration::from_secs(10))
        .await
        .expect("renewed");
    assert!(store.instance_alive(&instance).await.expect("read"));
}

/// A message reaches each listener of its inbox once; with no listener it is not kept.
pub async fn inboxes_deliver_to_their_listeners(store: &dyn Store) {
    let name = unique("inbox");
    assert!(
        !store.send(&name, json!({"n": 0})).await.expect("sent"),
        "nobody listens yet"
    );
    let mut first = store.inbox(&name).await.expect("listening");
    let mut second = store.inbox(&name).await.expect("listening");
    let mut other = store.inbox(&unique("inbox")).await.expect("listening");
    assert!(store.send(&name, json!({"n": 1})).await.expect("sent"));
    assert!(store.send(&name, json!({"n": 2})).await.expect("sent"));
    for listener in [&mut first, &mut second] {
        for n in [1, 2] {
            let got = tokio::time::timeout(PATIENCE, listener.next()).await;
            assert_eq!(
                got.ok().flatten(),
                Some(json!({ "n": n })),
                "in order, once"
            );
        }
    }
    let stray = tokio::time::timeout(Duration::from_millis(200), other.next()).await;
    assert!(stray.is_err(), "another inbox hears nothing: {stray:?}");
    drop((first, second));
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while store.send(&name, json!({"n": 3})).await.expect("sent") {
        assert!(
            tokio::time::Instant::now() < deadline,
            "an inbox nobody listens on any more still hears"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A Redis server for tests of the distributed path.
///
/// [`TestRedis::shared`] is the server named by `DSH_TEST_REDIS` (default
/// `redis://127.0.0.1:6379`), or, when none answers there, one started from
/// `redis-server` on the `PATH` on a free port. [`TestRedis::own`] always starts one
/// (a test that stops and restarts its server). Without either, both panic saying how to
/// get one: such tests never skip. A server this starts is stopped when dropped.
#[derive(Debug)]
pub struct TestRedis {
    url: String,
    port: u16,
    child: Option<std::process::Child>,
}

impl TestRedis {
    /// The shared test Redis (see the type's docs).
    ///
    /// # Panics
    ///
    /// When no Redis answers and none can be started.
    pub fn shared() -> TestRedis {
        let url = std::env::var("DSH_TEST_REDIS")
            .unwrap_or_else(|_| "redis://127.0.0.1:6379".to_string());
        let address = url
            .trim_start_matches("redis://")
            .split(['/', '?'])
            .next()
            .unwrap_or_default()
            .rsplit('@')
            .next()
            .unwrap_or_default()
            .to_string();
        if answers(&address) {
            let port = address
                .rsplit(':')
                .next()
                .and_then(|p| p.parse().ok())
                .unwrap_or(6379);
            return TestRedis {
                url,
                port,
                child: None,
            };
        }
        TestRedis::own()
    }

    /// A Redis server of this test's own, started from `redis-server` on the `PATH`.
    ///
    /// # Panics
    ///
    /// When `redis-server` cannot be started.
    pub fn own() -> TestRedis {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port");
        let mut redis = TestRedis {
            url: format!("redis://127.0.0.1:{port}/0"),
            port,
            child: None,
        };
        redis.start();
        redis
    }

    /// The server's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// A key prefix no other test uses.
    pub fn prefix(what: &str) -> String {
        unique(&format!("test-{what}"))
    }

    /// Stop the server this started (a shared one is left alone).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Start the server again on the same port, after [`TestRedis::stop`].
    ///
    /// # Panics
    ///
    /// When `redis-server` cannot be started or does not answer within 10 s.
    pub fn start(&mut self) {
        if self.child.is_some() {
            return;
        }
        let spawned = std::process::Command::new("redis-server")
            .args([
                "--port",
                &self.port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        let child = match spawned {
            Ok(child) => child,
            Err(e) => panic!(
                "these tests need a Redis server: none answers at DSH_TEST_REDIS \
                 (default redis://127.0.0.1:6379), and `redis-server` could not be \
                 started from PATH ({e}). Install Redis (Debian: apt-get install \
                 redis-server) or set DSH_TEST_REDIS=redis://HOST:PORT"
            ),
        };
        self.child = Some(child);
        let address = format!("127.0.0.1:{}", self.port);
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !answers(&address) {
            assert!(
                std::time::Instant::now() < deadline,
                "redis-server on port {} did not answer within 10 s",
                self.port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for TestRedis {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Whether a Redis server answers `PING` at `address` (`HOST:PORT`).
fn answers(address: &str) -> bool {
    use std::io::{Read as _, Write as _};
    let Ok(addrs) = std::net::ToSocketAddrs::to_socket_addrs(address) else {
        return false;
    };
    for addr in addrs {
        let Ok(mut stream) = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(1))
        else {
            continue;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
        let mut reply = [0u8; 16];
        if stream.write_all(b"PING\r\n").is_ok()
            && let Ok(n) = stream.read(&mut reply)
        {
            // `+PONG`, or `-NOAUTH` from a server that wants a password.
            return n > 0 && (reply[0] == b'+' || reply[0] == b'-');
        }
    }
    false
}
