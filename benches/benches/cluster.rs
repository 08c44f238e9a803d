//! `cluster`: stateless MCP servers (protocol 2026-07-28) on the in-memory store and on
//! Redis, one instance and three, each behind the same round-robin proxy
//! (`dsh_testing::proxy::RoundRobin`, which opens a connection to the instance
//! for every request), in one process on a multi-threaded tokio runtime.
//!
//! - `cluster_call/<setup>`: `tools/call` throughput of a plain tool (answered in the
//!   request: no store is involved), 64 calls per iteration from 8 concurrent clients.
//! - `cluster_task/<setup>`: one task created (`tools/call` of a task-capable tool from
//!   a client declaring the tasks extension) and then read with `tasks/get`: two task
//!   operations, awaited in turn.
//!
//! - `cluster_wake/<store>`: how long a cancel takes to reach the task's runner: one
//!   store connection (the runner's) subscribed to a task's wake-ups, another (the
//!   instance that received `tasks/cancel`) records the request; timed from the request
//!   until the runner's subscription yields the wake-up. On Redis that is a Lua script
//!   publishing on the task's channel, heard on the runner's pub/sub connection.
//!
//! Setups: `memory_1` (one instance, the default store), `redis_1` and `redis_3`
//! (instances sharing a Redis under one key prefix and one keyring). Three instances on
//! the in-memory store would not share tasks, so that setup exists for calls only
//! (`memory_3`). The Redis is the test one (`DSH_TEST_REDIS`, default
//! `redis://127.0.0.1:6379`, else `redis-server` from PATH).
//!
//! Run: `cargo bench -p dsh-benches --bench cluster`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dsh_mcp::store::conformance::TestRedis;
use dsh_mcp::store::{
    Change, MemoryStore, Owner, RedisStore, Store, TaskModel, TaskRecord, Wake, now_ms,
};
use dsh_mcp::{HttpOptions, HttpServer, McpServer, StateKeys, StatelessTaskLimits};
use dsh_runtime::jobs::JobRuntime;
use dsh_runtime::{RegistrationHandle, Registry, ToolError, tool};
use dsh_testing::proxy::RoundRobin;
use futures_util::StreamExt as _;
use serde_json::{Value, json};

/// Echo `text` (answered in the request).
#[tool]
async fn plain(text: String) -> Result<String, ToolError> {
    Ok(text)
}

/// Echo `text`, as a task when the client declares the tasks extension.
#[tool(task = "optional")]
async fn echo(text: String) -> Result<String, ToolError> {
    Ok(text)
}

struct Instance {
    http: HttpServer,
    _jobs: JobRuntime,
    _regs: Vec<RegistrationHandle>,
}

async fn instance(store: Option<Arc<dyn Store>>, keys: StateKeys) -> Instance {
    let jobs = JobRuntime::new();
    let registry = Registry::builder().jobs(jobs.clone()).build();
    let regs = vec![
        registry.register(Plain).expect("register plain"),
        registry.register(Echo).expect("register echo"),
    ];
    // Every round keeps a task: keep them a minute, and as many as the bench makes.
    let limits = StatelessTaskLimits::default()
        .ttl(Duration::from_secs(60))
        .max_tasks(usize::MAX);
    let mut server = McpServer::new(registry)
        .with_state_keys(keys)
        .with_stateless_tasks(limits);
    if let Some(store) = store {
        server = server.with_store(store);
    }
    let http = dsh_mcp::serve_http(&server, HttpOptions::default().sessions(false))
        .await
        .expect("serve on loopback");
    Instance {
        http,
        _jobs: jobs,
        _regs: regs,
    }
}

struct Setup {
    proxy: RoundRobin,
    instances: Vec<Instance>,
}

async fn setup(redis: Option<&TestRedis>, n: usize) -> Setup {
    let keys = StateKeys::new([vec![9u8; dsh_mcp::MIN_KEY_BYTES]]).expect("keys");
    let prefix = TestRedis::prefix("bench");
    let mut instances = Vec::new();
    for _ in 0..n {
        let store: Option<Arc<dyn Store>> = match redis {
            Some(redis) => Some(Arc::new(
                RedisStore::connect(redis.url(), &prefix)
                    .await
                    .expect("connect to the test Redis"),
            )),
            None => None,
        };
        instances.push(instance(store, keys.clone()).await);
    }
    let urls: Vec<String> = instances.iter().map(|i| i.http.url()).collect();
    let proxy = RoundRobin::start(&urls).await;
    Setup { proxy, instances }
}

/// One JSON-RPC request on 2026-07-28; its `result` (panics on an error: bench code).
async fn post(
    client: &reqwest::Client,
    url: &str,
    method: &str,
    name: &str,
    params: Value,
    tasks: bool,
) -> Value {
    let mut capabilities = json!({});
    if tasks {
        capabilities = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    }
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
    });
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let text = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .header("mcp-name", name)
        .body(body.to_string())
        .send()
        .await
        .expect("send")
        .text()
        .await
        .expect("body");
    let data = if text.trim_start().starts_with('{') {
        text.as_str()
    } else {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .next_back()
            .unwrap_or_default()
    };
    let message: Value = serde_json::from_str(data.trim()).expect("a JSON-RPC message");
    match message.get("result") {
        Some(result) => result.clone(),
        None => panic!("{method}: {message}"),
    }
}

async fn call(client: &reqwest::Client, url: &str) {
    let result = post(
        client,
        url,
        "tools/call",
        "plain",
        json!({"name": "plain", "arguments": {"text": "hi"}}),
        false,
    )
    .await;
    assert_eq!(result["isError"], json!(false), "{result}");
}

async fn task_round(client: &reqwest::Client, url: &str) {
    let created = post(
        client,
        url,
        "tools/call",
        "echo",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
        true,
    )
    .await;
    let Some(id) = created["taskId"].as_str().map(str::to_string) else {
        panic!("expected a task: {created}");
    };
    let got = post(client, url, "tasks/get", &id, json!({"taskId": id}), true).await;
    assert!(got["status"].is_string(), "{got}");
}

const CLIENTS: usize = 8;
const CALLS: usize = 64;

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let redis = TestRedis::shared();
    let client = reqwest::Client::builder()
        .tcp_nodelay(true)
        .build()
        .expect("an HTTP client");
    let setups = [
        ("memory_1", None, 1),
        ("memory_3", None, 3),
        ("redis_1", Some(&redis), 1),
        ("redis_3", Some(&redis), 3),
    ];
    let mut medians = Vec::new();
    for (name, store, n) in setups {
        let setup = rt.block_on(setup(store, n));
        let url = setup.proxy.url().to_string();
        let mut group = c.benchmark_group("cluster_call");
        group.throughput(Throughput::Elements(CALLS as u64));
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        let mut workers = Vec::new();
                        for _ in 0..CLIENTS {
                            let (client, url) = (client.clone(), url.clone());
                            workers.push(tokio::spawn(async move {
                                for _ in 0..CALLS / CLIENTS {
                                    call(&client, &url).await;
                                }
                            }));
                        }
                        for worker in workers {
                            worker.await.expect("a worker");
                        }
                    }
                    start.elapsed()
                })
            });
        });
        group.finish();
        if store.is_some() || n == 1 {
            // The median of 200 rounds, printed for the BENCHMARKS table, then timed.
            let mut rounds: Vec<Duration> = (0..200)
                .map(|_| {
                    rt.block_on(async {
                        let start = Instant::now();
                        task_round(&client, &url).await;
                        start.elapsed()
                    })
                })
                .collect();
            rounds.sort();
            medians.push((name, rounds[rounds.len() / 2]));
            let mut group = c.benchmark_group("cluster_task");
            group.bench_function(name, |b| {
                b.iter(|| rt.block_on(task_round(&client, &url)));
            });
            group.finish();
        }
        rt.block_on(async {
            for instance in setup.instances {
                let _ = instance.http.shutdown().await;
            }
        });
    }
    for (name, median) in &medians {
        println!("cluster_task/{name}: median of 200 create+get rounds {median:?}");
    }
}

/// A task created on `runner`'s store, a cancel recorded through `other`, and the time
/// until `runner`'s subscription hears it.
async fn wake_round(runner: &dyn Store, other: &dyn Store, owner: &Owner, n: u64) -> Duration {
    let id = format!("wake-{}-{n}", now_ms());
    let record = TaskRecord::new(
        &id,
        owner.clone(),
        TaskModel::Extension,
        now_ms(),
        Some(60_000),
    );
    runner.create_task(record).await.expect("created");
    let mut wakes = runner.subscribe(&id).await.expect("subscribed");
    let start = Instant::now();
    other
        .update_task(
            owner,
            &id,
            Change::RequestCancel {
                reason: "bench".into(),
            },
        )
        .await
        .expect("cancel requested");
    loop {
        match wakes.next().await {
            Some(Wake::Cancel { .. }) => return start.elapsed(),
            Some(_) => {}
            None => panic!("the subscription ended before the cancel"),
        }
    }
}

fn wake(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let redis = TestRedis::shared();
    let prefix = TestRedis::prefix("bench-wake");
    let memory: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let connect = || async {
        Arc::new(
            RedisStore::connect(redis.url(), &prefix)
                .await
                .expect("connect to the test Redis"),
        ) as Arc<dyn Store>
    };
    let (a, b) = rt.block_on(async { (connect().await, connect().await) });
    let owner = Owner::new("bench");
    let mut group = c.benchmark_group("cluster_wake");
    for (name, runner, other) in [("memory", memory.clone(), memory), ("redis", a, b)] {
        let mut n = 0;
        let mut rounds: Vec<Duration> = (0..200)
            .map(|_| {
                n += 1;
                rt.block_on(wake_round(&*runner, &*other, &owner, n))
            })
            .collect();
        rounds.sort();
        println!(
            "cluster_wake/{name}: median {:?}, max {:?} of 200 cancels",
            rounds[rounds.len() / 2],
            rounds[rounds.len() - 1]
        );
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    n += 1;
                    total += rt.block_on(wake_round(&*runner, &*other, &owner, n));
                }
                total
            });
        });
    }
    group.finish();
}

criterion_group!(benches, bench, wake);
criterion_main!(benches);
