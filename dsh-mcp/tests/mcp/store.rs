//! The store conformance suite on both implementations: the in-memory store (the
//! server's default) and the Redis store, against a real Redis server (see
//! [`TestRedis`]: `DSH_TEST_REDIS`, else `redis-server` from PATH; never skipped).
//! Plus the Redis store's faults: a server that does not answer, records it cannot
//! read.

use std::sync::Arc;

use dsh_mcp::store::conformance::TestRedis;
use dsh_mcp::store::{
    Change, MemoryStore, Owner, RedisStore, Store, StoreError, TaskModel, TaskRecord, now_ms,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_memory_store_conforms() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    dsh_mcp::store::conformance::run(store).await;
}

async fn redis_store(redis: &TestRedis, what: &str) -> (RedisStore, String) {
    let prefix = TestRedis::prefix(what);
    let store = RedisStore::connect(redis.url(), &prefix)
        .await
        .expect("connected");
    (store, prefix)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_redis_store_conforms() {
    let redis = TestRedis::shared();
    let (store, _) = redis_store(&redis, "conformance").await;
    dsh_mcp::store::conformance::run(Arc::new(store)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_redis_stores_on_one_prefix_share_records_and_wake_ups() {
    let redis = TestRedis::shared();
    let (a, prefix) = redis_store(&redis, "shared").await;
    let b = RedisStore::connect(redis.url(), &prefix).await.expect("b");
    let owner = Owner::new("o");
    let record = TaskRecord::new(
        "t-shared",
        owner.clone(),
        TaskModel::Extension,
        now_ms(),
        None,
    );
    a.create_task(record.clone()).await.expect("created on a");
    assert_eq!(
        b.task(&owner, "t-shared").await.expect("read"),
        Some(record)
    );
    let mut wakes = a.subscribe("t-shared").await.expect("subscribed on a");
    b.update_task(
        &owner,
        "t-shared",
        Change::RequestCancel {
            reason: "from b".into(),
        },
    )
    .await
    .expect("cancelled on b");
    let wake = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        futures_util::StreamExt::next(&mut wakes),
    )
    .await
    .expect("a hears b's change");
    assert_eq!(
        wake,
        Some(dsh_mcp::store::Wake::Cancel {
            reason: "from b".into()
        })
    );
    // Another prefix is another deployment: it sees nothing.
    let other = RedisStore::connect(redis.url(), &TestRedis::prefix("other"))
        .await
        .expect("other");
    assert_eq!(other.task(&owner, "t-shared").await.expect("read"), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_that_does_not_answer_is_a_clear_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap();
    let url = format!("redis://127.0.0.1:{port}/0");
    let e = RedisStore::connect(&url, "p").await.unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, StoreError::Unavailable(_)), "{e:?}");
    assert!(text.contains(&format!("127.0.0.1:{port}")), "{text}");
    let e = RedisStore::connect("mysql://nope", "p").await.unwrap_err();
    assert!(e.to_string().contains("redis URL"), "{e}");
    let e = RedisStore::connect("redis://127.0.0.1:6379", "")
        .await
        .unwrap_err();
    assert!(e.to_string().contains("prefix"), "{e}");
}

/// Write `text` under `key` with a plain Redis connection (as another program would).
async fn put_raw(redis: &TestRedis, key: &str, text: &str) {
    let client = redis::Client::open(redis.url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let () = redis::cmd("SET")
        .arg(key)
        .arg(text)
        .query_async(&mut conn)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_it_cannot_read_are_errors_naming_their_key() {
    let redis = TestRedis::shared();
    let (store, prefix) = redis_store(&redis, "malformed").await;
    let owner = Owner::new("o");
    let damaged = format!("{prefix}:task:damaged");
    put_raw(&redis, &damaged, "{not json").await;
    let e = store.task(&owner, "damaged").await.unwrap_err();
    assert!(
        matches!(&e, StoreError::Malformed { key, .. } if *key == damaged),
        "{e:?}"
    );
    assert!(e.to_string().contains(&damaged), "{e}");

    let future = format!("{prefix}:task:future");
    let mut record = serde_json::to_value(TaskRecord::new(
        "future",
        owner.clone(),
        TaskModel::Extension,
        now_ms(),
        None,
    ))
    .unwrap();
    record["version"] = 99.into();
    record["state"] = "paused_for_lunch".into();
    put_raw(&redis, &future, &record.to_string()).await;
    let e = store
        .update_task(
            &owner,
            "future",
            Change::Progress {
                message: "x".into(),
            },
        )
        .await
        .unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains(&future) && text.contains("version 99"),
        "{text}"
    );

    let nonce = format!("{prefix}:approval:bad");
    put_raw(&redis, &nonce, "[]").await;
    let e = store.take_approval("bad").await.unwrap_err();
    assert!(e.to_string().contains(&nonce), "{e}");

    // The store goes on serving the records it can read.
    let fine = TaskRecord::new("fine", owner.clone(), TaskModel::Extension, now_ms(), None);
    store.create_task(fine.clone()).await.expect("created");
    assert_eq!(store.task(&owner, "fine").await.expect("read"), Some(fine));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_redis_is_reconnected_and_records_are_kept_again() {
    let mut redis = TestRedis::own();
    let (store, _) = redis_store(&redis, "restart").await;
    let owner = Owner::new("o");
    let first = TaskRecord::new(
        "before",
        owner.clone(),
        TaskModel::Extension,
        now_ms(),
        None,
    );
    store.create_task(first).await.expect("created");
    let mut inbox = store.inbox("instance-a").await.expect("listening");
    redis.stop();
    let down = store.task(&owner, "before").await;
    assert!(matches!(down, Err(StoreError::Unavailable(_))), "{down:?}");
    redis.start();
    // The connection comes back by itself (a few attempts at most).
    let mut back = None;
    for _ in 0..50 {
        let record = TaskRecord::new("after", owner.clone(), TaskModel::Extension, now_ms(), None);
        if store.create_task(record).await.is_ok() {
            back = Some(());
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(back.is_some(), "the store reconnected");
    assert!(store.task(&owner, "after").await.expect("read").is_some());
    // This server keeps nothing on disk: the record from before is gone.
    assert_eq!(store.task(&owner, "before").await.expect("read"), None);
    // A listener from before the restart hears again (resubscribed).
    let mut heard = false;
    for _ in 0..150 {
        if store
            .send("instance-a", serde_json::json!({"after": "restart"}))
            .await
            .unwrap_or(false)
        {
            heard = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(heard, "the inbox was subscribed again");
    let message = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        futures_util::StreamExt::next(&mut inbox),
    )
    .await
    .expect("a message");
    assert_eq!(message, Some(serde_json::json!({"after": "restart"})));
    // Wake-ups flow again after the reconnection.
    let mut wakes = store.subscribe("after").await.expect("subscribed");
    store
        .update_task(
            &owner,
            "after",
            Change::Progress {
                message: "m".into(),
            },
        )
        .await
        .expect("changed");
    let wake = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        futures_util::StreamExt::next(&mut wakes),
    )
    .await
    .expect("a wake-up");
    assert!(wake.is_some());
}
