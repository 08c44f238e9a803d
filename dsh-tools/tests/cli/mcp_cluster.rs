//! Several `dsh-tools mcp --http --stateless --store redis://…` processes sharing one
//! Redis (a real server: `DSH_TEST_REDIS`, else `redis-server` from PATH; see
//! `dsh_mcp::store::conformance::TestRedis`) and one keyring, each test under a key
//! prefix of its own. Each request goes to another instance, as a round-robin load
//! balancer sends them, through rmcp's client on protocol 2026-07-28 (stateless: every
//! request stands alone):
//!
//! - a `bash` task started on one instance is polled to completion on the others;
//! - a task cancelled through another instance than the one running it ends
//!   `cancelled`, and every process it started is gone, the one that left its process
//!   group included;
//! - another principal (other credentials) cannot see the task on any instance;
//! - `kill -9` of the instance running a task: another instance reports it `failed`
//!   within the lease bound, saying the server running it stopped;
//! - a store that does not answer at start is a clear error and a non-zero exit.

use std::time::Duration;

use dsh_mcp::store::conformance::TestRedis;
use rmcp::model::{CancelTaskParams, GetTaskParams, TaskStatus};
use tokio::process::Child;

use super::mcp_host::{gone, read_pid, wait_until};
use super::mcp_tasks::{bash_task, connect_http, discover, poll, result_text};

const KEY: &str = "6f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0";

/// `n` instances on one Redis prefix and keyring: the children, their URLs.
async fn cluster(redis: &TestRedis, root: &std::path::Path, n: usize) -> (Vec<Child>, Vec<String>) {
    let prefix = TestRedis::prefix("cluster");
    let keys = root.join("state.keys");
    std::fs::write(&keys, format!("{KEY}\n")).unwrap();
    let keys = keys.display().to_string();
    let mut children = Vec::new();
    let mut urls = Vec::new();
    for _ in 0..n {
        let (child, url) = crate::process::http(
            root,
            &[
                "--stateless",
                "--store",
                redis.url(),
                "--store-prefix",
                &prefix,
                "--state-key-file",
                &keys,
            ],
        )
        .await;
        children.push(child);
        urls.push(url);
    }
    (children, urls)
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_are_polled_and_cancelled_through_any_instance() {
    let redis = TestRedis::shared();
    let root = tempfile::tempdir().unwrap();
    let (mut children, urls) = cluster(&redis, root.path(), 3).await;
    let a = connect_http(&urls[0], discover()).await;
    let b = connect_http(&urls[1], discover()).await;
    let c = connect_http(&urls[2], discover()).await;

    let id = bash_task(&a, "sleep 0.5; echo done-in-the-cluster").await;
    let task = poll(&b, &id).await;
    assert!(result_text(&task).contains("done-in-the-cluster"));
    let again = poll(&c, &id).await;
    assert_eq!(
        result_text(&again),
        result_text(&task),
        "every instance reads one record"
    );

    // Cancelled through B while A runs it: every process it started goes.
    let escaped = root.path().join("escaped.pid");
    let shell = root.path().join("shell.pid");
    let command = format!(
        "setsid sh -c 'echo $$ > {}; exec sleep 1000' & echo $$ > {}; sleep 1000",
        escaped.display(),
        shell.display()
    );
    let id = bash_task(&a, &command).await;
    let escaped = read_pid(&escaped).await;
    let shell = read_pid(&shell).await;
    assert!(!gone(escaped) && !gone(shell));
    let seen = c.peer().get_task(GetTaskParams::new(&id)).await.unwrap();
    assert_eq!(seen.task.status(), TaskStatus::Working);
    b.peer()
        .cancel_task(CancelTaskParams::new(&id))
        .await
        .unwrap();
    let task = poll(&c, &id).await;
    assert_eq!(task.status(), TaskStatus::Cancelled, "{task:?}");
    wait_until(
        "every process of the task cancelled elsewhere is gone",
        || gone(escaped) && gone(shell),
    )
    .await;

    for client in [a, b, c] {
        client.cancel().await.unwrap();
    }
    for child in &mut children {
        let _ = child.start_kill();
        let _ = child.wait().await;
    }
}

/// A client of `url` whose requests carry `Authorization: Bearer <token>`.
async fn connect_as(
    url: &str,
    token: &str,
) -> rmcp::service::RunningService<rmcp::RoleClient, super::mcp_tasks::TasksClient> {
    use rmcp::service::ClientServiceExt as _;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_string()).auth_header(token);
    super::mcp_tasks::TasksClient
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_config(config),
            discover(),
        )
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_principal_sees_no_task_on_any_instance() {
    let redis = TestRedis::shared();
    let root = tempfile::tempdir().unwrap();
    let (mut children, urls) = cluster(&redis, root.path(), 2).await;
    let alice = connect_as(&urls[0], "alice-token").await;
    let id = bash_task(&alice, "echo alice").await;
    let alice_elsewhere = connect_as(&urls[1], "alice-token").await;
    assert!(result_text(&poll(&alice_elsewhere, &id).await).contains("alice"));
    for url in &urls {
        let bob = connect_as(url, "bob-token").await;
        let refused = bob.peer().get_task(GetTaskParams::new(&id)).await;
        let text = format!("{refused:?}");
        assert!(refused.is_err() && text.contains("unknown task"), "{text}");
        bob.cancel().await.unwrap();
    }
    for client in [alice, alice_elsewhere] {
        client.cancel().await.unwrap();
    }
    for child in &mut children {
        let _ = child.start_kill();
        let _ = child.wait().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_whose_instance_was_killed_fails_within_the_lease() {
    let redis = TestRedis::shared();
    let root = tempfile::tempdir().unwrap();
    let (mut children, urls) = cluster(&redis, root.path(), 2).await;
    let a = connect_http(&urls[0], discover()).await;
    let b = connect_http(&urls[1], discover()).await;
    let id = bash_task(&a, "sleep 1000").await;
    let seen = b.peer().get_task(GetTaskParams::new(&id)).await.unwrap();
    assert_eq!(seen.task.status(), TaskStatus::Working);
    // kill -9: no chance to record anything.
    children[0].start_kill().unwrap();
    let _ = children[0].wait().await;
    let killed = tokio::time::Instant::now();
    let task = poll(&b, &id).await;
    let took = killed.elapsed();
    assert_eq!(task.status(), TaskStatus::Failed, "{task:?}");
    let text = format!("{task:?}");
    assert!(text.contains("stopped"), "{text}");
    assert!(took < Duration::from_secs(10), "failed after {took:?}");
    // The other instance serves on.
    let id = bash_task(&b, "echo still-here").await;
    assert!(result_text(&poll(&b, &id).await).contains("still-here"));
    b.cancel().await.unwrap();
    let _ = a.cancel().await;
    let _ = children[1].start_kill();
    let _ = children[1].wait().await;
}

#[test]
fn a_store_that_does_not_answer_is_a_startup_error() {
    let root = tempfile::tempdir().unwrap();
    let keys = root.path().join("k");
    std::fs::write(&keys, KEY).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap();
    let store = format!("redis://127.0.0.1:{port}/0");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
        .args([
            "mcp",
            "--http",
            "127.0.0.1:0",
            "--stateless",
            "--store",
            &store,
        ])
        .arg("--state-key-file")
        .arg(&keys)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("--store {store}")), "{err}");
    // Without a shared keyring, a shared store is refused before it is reached.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
        .args([
            "mcp",
            "--http",
            "127.0.0.1:0",
            "--store",
            "redis://127.0.0.1:6379",
        ])
        .env_remove("DSH_MCP_STATE_KEYS")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("state keys"), "{err}");
}
