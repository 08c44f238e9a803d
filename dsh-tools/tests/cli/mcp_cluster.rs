//! Several `dsh-tools mcp --http --stateless --store redis://…` processes sharing one
//! Redis (a real server: `DSH_TEST_REDIS`, else `redis-server` from PATH; see
//! `dsh_mcp::store::conformance::TestRedis`) and one keyring, each test under a key
//! prefix of its own, behind a round-robin proxy (`dsh_testing::proxy::RoundRobin`) that sends
//! each request to the next instance and logs which instance served it. The clients
//! speak protocol 2026-07-28 (stateless: every request stands alone).
//!
//! With rmcp's client (it models the tasks extension):
//! - a `bash` task created on one instance is polled to completion through the others;
//! - a task cancelled through another instance than the one running it ends
//!   `cancelled`, and every process it started is gone, the one that left its process
//!   group included;
//! - another principal (other credentials) cannot see the task on any instance;
//! - `kill -9` of the instance running a task: another instance reports it `failed`
//!   within the lease bound, saying the server running it stopped;
//! - Redis stopped and started again during a run (its data lost: it keeps nothing on
//!   disk): calls that need no store go on, task requests fail with a JSON-RPC error
//!   naming the store, and tasks work again once it is back;
//! - a store that does not answer at start is a clear error and a non-zero exit.
//!
//! With the official TypeScript v2 client (`tests/node/mcp_cluster_2026.mjs`) and Python
//! client (`tests/python/cluster_client.py`): approvals minted on one instance and
//! redeemed on another, a replayed state refused on a third, and a code-mode program
//! whose questions are answered through other instances than the one running it.

use std::time::Duration;

use dsh_mcp::store::conformance::TestRedis;
use dsh_testing::proxy::{RoundRobin, Served};
use rmcp::model::{CancelTaskParams, GetTaskParams, TaskStatus};
use rmcp::service::ClientServiceExt as _;
use tokio::process::Child;

use super::mcp_host::{call, gone, read_pid, text_of, wait_until};
use super::mcp_tasks::{TasksClient, bash_task, connect_http, discover, poll, result_text};

const KEY: &str = "6f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0";

/// Instances on one Redis prefix and keyring, behind a round-robin proxy.
pub(super) struct Cluster {
    pub children: Vec<Child>,
    pub proxy: RoundRobin,
    /// The directory of the keyring, beside the root (one inside it is refused).
    _keys: tempfile::TempDir,
}

impl Cluster {
    /// `n` instances of `dsh-tools --root ROOT mcp --http --stateless ARGS…` on `redis`.
    pub(crate) async fn start(
        redis: &TestRedis,
        root: &std::path::Path,
        n: usize,
        args: &[&str],
    ) -> Cluster {
        let prefix = TestRedis::prefix("cluster");
        let keys_dir = tempfile::tempdir().unwrap();
        let keys = keys_dir.path().join("state.keys");
        std::fs::write(&keys, format!("{KEY}\n")).unwrap();
        let keys = keys.display().to_string();
        let mut children = Vec::new();
        let mut urls = Vec::new();
        for _ in 0..n {
            let mut all = vec![
                "--stateless",
                "--store",
                redis.url(),
                "--store-prefix",
                &prefix,
                "--state-key-file",
                &keys,
            ];
            all.extend_from_slice(args);
            let (child, url) = crate::process::http(root, &all).await;
            children.push(child);
            urls.push(url);
        }
        let proxy = RoundRobin::start(&urls).await;
        Cluster {
            children,
            proxy,
            _keys: keys_dir,
        }
    }

    pub(crate) fn url(&self) -> &str {
        self.proxy.url()
    }

    /// The requests the proxy passed on whose body contains every one of `parts`.
    pub(crate) fn served(&self, parts: &[&str]) -> Vec<Served> {
        self.proxy
            .served()
            .into_iter()
            .filter(|s| parts.iter().all(|p| s.body.contains(p)))
            .collect()
    }

    pub(crate) async fn stop(mut self) {
        for child in &mut self.children {
            let _ = child.start_kill();
            let _ = child.wait().await;
        }
    }
}

/// The one instance that served the request whose body contains `parts`.
fn served_once(cluster: &Cluster, parts: &[&str]) -> usize {
    let served = cluster.served(parts);
    assert_eq!(served.len(), 1, "one request with {parts:?}: {served:?}");
    served[0].instance
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_are_polled_and_cancelled_through_any_instance() {
    let redis = TestRedis::shared();
    let root = tempfile::tempdir().unwrap();
    let cluster = Cluster::start(&redis, root.path(), 3, &[]).await;
    let client = connect_http(cluster.url(), discover()).await;

    let id = bash_task(&client, "sleep 0.5; echo done-in-the-cluster").await;
    let runner = served_once(&cluster, &["tools/call", "done-in-the-cluster"]);
    let task = poll(&client, &id).await;
    assert!(result_text(&task).contains("done-in-the-cluster"));
    let readers: std::collections::BTreeSet<usize> = cluster
        .served(&["tasks/get", &id])
        .iter()
        .map(|s| s.instance)
        .collect();
    assert!(
        readers.iter().any(|r| *r != runner),
        "polled on other instances than {runner}: {readers:?}"
    );
    let again = poll(&client, &id).await;
    assert_eq!(
        result_text(&again),
        result_text(&task),
        "every instance reads one record"
    );

    // Cancelled through another instance while one runs it: every process it started goes.
    let escaped = root.path().join("escaped.pid");
    let shell = root.path().join("shell.pid");
    let command = format!(
        "setsid sh -c 'echo $$ > {}; exec sleep 1000' & echo $$ > {}; sleep 1000",
        escaped.display(),
        shell.display()
    );
    let id = bash_task(&client, &command).await;
    let runner = served_once(&cluster, &["tools/call", "escaped.pid"]);
    let escaped = read_pid(&escaped).await;
    let shell = read_pid(&shell).await;
    assert!(!gone(escaped) && !gone(shell));
    let seen = client
        .peer()
        .get_task(GetTaskParams::new(&id))
        .await
        .unwrap();
    assert_eq!(seen.task.status(), TaskStatus::Working);
    client
        .peer()
        .cancel_task(CancelTaskParams::new(&id))
        .await
        .unwrap();
    let canceller = served_once(&cluster, &["tasks/cancel", &id]);
    assert_ne!(canceller, runner, "the cancel went to another instance");
    let task = poll(&client, &id).await;
    assert_eq!(task.status(), TaskStatus::Cancelled, "{task:?}");
    wait_until(
        "every process of the task cancelled elsewhere is gone",
        || gone(escaped) && gone(shell),
    )
    .await;

    client.cancel().await.unwrap();
    cluster.stop().await;
}

/// A client of `url` whose requests carry `Authorization: Bearer <token>`.
async fn connect_as(
    url: &str,
    token: &str,
) -> rmcp::service::RunningService<rmcp::RoleClient, TasksClient> {
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_string()).auth_header(token);
    TasksClient
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
    let cluster = Cluster::start(&redis, root.path(), 3, &[]).await;
    let alice = connect_as(cluster.url(), "alice-token").await;
    let id = bash_task(&alice, "echo alice").await;
    assert!(result_text(&poll(&alice, &id).await).contains("alice"));
    let bob = connect_as(cluster.url(), "bob-token").await;
    for _ in 0..3 {
        let refused = bob.peer().get_task(GetTaskParams::new(&id)).await;
        let text = format!("{refused:?}");
        assert!(refused.is_err() && text.contains("unknown task"), "{text}");
    }
    let refused = bob.peer().cancel_task(CancelTaskParams::new(&id)).await;
    assert!(
        format!("{refused:?}").contains("unknown task"),
        "{refused:?}"
    );
    // Bob's three reads went to every instance in turn.
    let gets = cluster.served(&["tasks/get", &id]);
    let bobs: std::collections::BTreeSet<usize> =
        gets.iter().rev().take(3).map(|s| s.instance).collect();
    assert_eq!(bobs.len(), 3, "{gets:?}");
    for client in [alice, bob] {
        client.cancel().await.unwrap();
    }
    cluster.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_whose_instance_was_killed_fails_within_the_lease() {
    let redis = TestRedis::shared();
    let root = tempfile::tempdir().unwrap();
    let mut cluster = Cluster::start(&redis, root.path(), 3, &[]).await;
    let client = connect_http(cluster.url(), discover()).await;
    let id = bash_task(&client, "sleep 1000").await;
    let runner = served_once(&cluster, &["tools/call", "sleep 1000"]);
    let seen = client
        .peer()
        .get_task(GetTaskParams::new(&id))
        .await
        .unwrap();
    assert_eq!(seen.task.status(), TaskStatus::Working);
    // kill -9: no chance to record anything. The proxy passes over it from now on.
    cluster.children[runner].start_kill().unwrap();
    let _ = cluster.children[runner].wait().await;
    let killed = tokio::time::Instant::now();
    let sent = cluster.proxy.served().len();
    let task = poll(&client, &id).await;
    let took = killed.elapsed();
    assert_eq!(task.status(), TaskStatus::Failed, "{task:?}");
    let text = format!("{task:?}");
    assert!(text.contains("stopped"), "{text}");
    assert!(took < Duration::from_secs(10), "failed after {took:?}");
    // The other instances serve on: the proxy passes over the dead one, and every
    // request since the kill was served by one of the two others, both of them.
    for round in 0..2 {
        let id = bash_task(&client, &format!("echo still-here-{round}")).await;
        assert!(result_text(&poll(&client, &id).await).contains("still-here"));
    }
    let survivors: std::collections::BTreeSet<usize> = cluster.proxy.served()[sent..]
        .iter()
        .map(|s| s.instance)
        .collect();
    assert_eq!(survivors.len(), 2, "{survivors:?}");
    assert!(!survivors.contains(&runner));
    client.cancel().await.unwrap();
    cluster.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_lost_and_back_during_a_run() {
    let mut redis = TestRedis::own();
    let root = tempfile::tempdir().unwrap();
    let cluster = Cluster::start(&redis, root.path(), 2, &[]).await;
    let tasks = connect_http(cluster.url(), discover()).await;
    // A client without the tasks extension: its calls run in the request, no store.
    let plain = ()
        .serve_with_lifecycle(
            rmcp::transport::StreamableHttpClientTransport::from_uri(cluster.url().to_string()),
            discover(),
        )
        .await
        .unwrap();
    let before = bash_task(&tasks, "echo before").await;
    assert!(result_text(&poll(&tasks, &before).await).contains("before"));

    redis.stop();
    for round in 0..2 {
        // Plain calls go on, on every instance.
        let result = plain
            .call_tool(call(
                "bash",
                serde_json::json!({"command": format!("echo plain-{round}"), "description": "d"}),
            ))
            .await
            .unwrap();
        assert!(
            text_of(&result).contains(&format!("plain-{round}")),
            "{result:?}"
        );
        // What needs the store fails, with an error saying so.
        let refused = tasks.peer().get_task(GetTaskParams::new(&before)).await;
        let text = format!("{refused:?}");
        assert!(
            refused.is_err() && text.contains("task store is unavailable"),
            "{text}"
        );
        let created = tasks
            .peer()
            .call_tool_once(call(
                "bash",
                serde_json::json!({"command": "echo during", "description": "d"}),
            ))
            .await;
        let text = format!("{created:?}");
        assert!(
            created.is_err() && text.contains("task store is unavailable"),
            "{text}"
        );
    }
    let served: std::collections::BTreeSet<usize> = cluster
        .served(&["plain-"])
        .iter()
        .map(|s| s.instance)
        .collect();
    assert_eq!(served.len(), 2, "plain calls on both instances");

    // Back (empty: it keeps nothing on disk): tasks work again, on both instances, once
    // the instances have reconnected by themselves.
    redis.start();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let mut ids = Vec::new();
    while ids.len() < 4 {
        let created = tasks
            .peer()
            .call_tool_once(call(
                "bash",
                serde_json::json!({"command": "echo after", "description": "d"}),
            ))
            .await;
        match created {
            Ok(rmcp::model::CallToolResponse::Task(created)) => ids.push(created.task.task_id),
            other => {
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "not back: {other:?}"
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    for id in &ids {
        assert!(result_text(&poll(&tasks, id).await).contains("after"));
    }
    // The record from before the loss is gone with the data: unknown, not a crash.
    let lost = tasks.peer().get_task(GetTaskParams::new(&before)).await;
    assert!(format!("{lost:?}").contains("unknown task"), "{lost:?}");
    tasks.cancel().await.unwrap();
    plain.cancel().await.unwrap();
    cluster.stop().await;
}

/// The instances of the requests whose body contains every one of `parts`, which must
/// number `n` and be served by `n` different instances.
fn on_distinct_instances(cluster: &Cluster, parts: &[&str], n: usize) -> Vec<usize> {
    let served = cluster.served(parts);
    let instances: Vec<usize> = served.iter().map(|s| s.instance).collect();
    let distinct: std::collections::BTreeSet<usize> = instances.iter().copied().collect();
    assert!(
        instances.len() == n && distinct.len() == n,
        "{n} requests with {parts:?} on {n} instances: {served:?}"
    );
    instances
}

/// The instances' flags for the approval scenarios.
const ASKING: &[&str] = &["--code-mode", "both", "--ask", "write"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_v2_client_is_answered_across_instances() {
    let redis = TestRedis::shared();
    let root = tempfile::tempdir().unwrap();
    let cluster = Cluster::start(&redis, root.path(), 3, ASKING).await;
    let url = cluster.url().to_string();
    let dir = root.path().to_path_buf();
    tokio::task::spawn_blocking(move || {
        let sdk = super::mcp_typescript::sdk_v2_dir();
        super::mcp_typescript::run_script(sdk, "mcp_cluster_2026.mjs", &dir, &url, 15);
    })
    .await
    .expect("the TypeScript v2 client's checks pass");
    // The approval's two rounds: asked on one instance, run on another.
    on_distinct_instances(&cluster, &["tools/call", "approved-across.txt"], 2);
    // The program's three rounds (started, then each answer) on three instances: the
    // answers were forwarded to the one running it, whose side effects happened once.
    on_distinct_instances(&cluster, &["run_code", "ran-across"], 3);
    // The listen stream was served by another instance than the task's runner.
    let runner = served_once(&cluster, &["tools/call", "finished-across"]);
    let listener = served_once(&cluster, &["subscriptions/listen", "taskIds"]);
    assert_ne!(
        runner, listener,
        "the task was followed from another instance"
    );
    cluster.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_state_is_redeemed_on_one_instance_and_refused_on_the_next() {
    let redis = TestRedis::shared();
    let root = tempfile::tempdir().unwrap();
    let cluster = Cluster::start(&redis, root.path(), 3, ASKING).await;
    let url = cluster.url().to_string();
    let dir = root.path().to_path_buf();
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/cluster_client.py");
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(super::mcp_python::python())
            .arg(script)
            .arg(url)
            .arg(dir)
            .output()
            .expect("run the Python client")
    })
    .await
    .unwrap();
    crate::process::assert_checks("python cluster client", &out, 9);
    // Minted, redeemed and replayed: three rounds on three instances.
    on_distinct_instances(&cluster, &["tools/call", "approved-by-hand.txt"], 3);
    cluster.stop().await;
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
