//! What a load balancer sees of an HTTP server: liveness (`/healthz`) and readiness
//! (`/readyz`) with its Redis store up, down and back, and the drain before a stop: a
//! call in flight finishes, new requests are refused with `503`, and a call longer than
//! the drain's bound is stopped with the server.

use std::sync::Arc;
use std::time::{Duration, Instant};

use dsh_mcp::store::conformance::TestRedis;
use dsh_mcp::store::{RedisStore, Store};
use dsh_mcp::{HttpOptions, HttpServer, serve_http};
use serde_json::json;

use crate::common::http::HttpClient;
use crate::common::rpc::tools_call;
use crate::common::tools::{Nap, Toolset};
use crate::common::wire::Revision;

/// A stateless server of `nap`, on `store` if one is given.
async fn serve_nap(store: Option<Arc<dyn Store>>) -> (HttpServer, Toolset) {
    let tools = Toolset::new().with(Nap);
    let mut server = tools.server();
    if let Some(store) = store {
        server = server.with_store(store);
    }
    let http = serve_http(&server, HttpOptions::default().sessions(false))
        .await
        .expect("serve on loopback");
    (http, tools)
}

/// `GET path` on the server: the status and the body.
async fn get_path(http: &HttpServer, path: &str) -> (u16, String) {
    let url = format!("http://{}{path}", http.local_addr());
    let response = tokio::time::timeout(Duration::from_secs(10), reqwest::get(&url))
        .await
        .expect("an answer within 10 s")
        .expect("the request is sent");
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_default())
}

/// Ask `path` until it answers `status`, for at most `limit`.
async fn until(http: &HttpServer, path: &str, status: u16, limit: Duration) -> String {
    let deadline = Instant::now() + limit;
    loop {
        let (seen, body) = get_path(http, path).await;
        if seen == status {
            return body;
        }
        assert!(
            Instant::now() < deadline,
            "{path} still answers {seen} ({body:?}) after {limit:?}, not {status}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A `tools/call` of `nap` on revision 2025-06-18, statelessly: the status and the body.
async fn call_nap(url: String, ms: u64) -> Result<(u16, String), reqwest::Error> {
    let reply = HttpClient::new(url)
        .revision(Revision::V2025_06_18)
        .try_post(&tools_call(7, "nap", json!({"ms": ms})).to_string())
        .await?;
    Ok((reply.status, reply.body))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_follows_the_redis_store_down_and_back_while_liveness_stays() {
    let mut redis = TestRedis::own();
    let store = RedisStore::connect(redis.url(), &TestRedis::prefix("ready"))
        .await
        .expect("the test Redis answers");
    let (http, _tools) = serve_nap(Some(Arc::new(store))).await;

    assert_eq!(get_path(&http, "/healthz").await, (200, "ok\n".to_string()));
    assert_eq!(
        get_path(&http, "/readyz").await,
        (200, "ready\n".to_string())
    );

    redis.stop();
    let why = until(&http, "/readyz", 503, Duration::from_secs(15)).await;
    assert!(why.contains("store"), "{why:?}");
    assert_eq!(
        get_path(&http, "/healthz").await.0,
        200,
        "alive while the store is down"
    );

    redis.start();
    until(&http, "/readyz", 200, Duration::from_secs(30)).await;
    // The probes need no credentials, and other methods on their paths are MCP's.
    let head = reqwest::Client::new()
        .head(format!("http://{}/readyz", http.local_addr()))
        .send()
        .await
        .unwrap();
    assert_eq!(head.status().as_u16(), 200);
    http.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draining_server_finishes_its_call_refuses_new_ones_then_stops() {
    let (http, _tools) = serve_nap(None).await;
    let url = http.url();
    let addr = http.local_addr();
    assert_eq!(get_path(&http, "/readyz").await.0, 200);

    // A call of 1.5 s in flight.
    let in_flight = tokio::spawn(call_nap(url.clone(), 1500));
    let deadline = Instant::now() + Duration::from_secs(10);
    while http.requests_in_progress() == 0 {
        assert!(Instant::now() < deadline, "the call never started");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    let started = Instant::now();
    let drain = tokio::spawn(http.drain(Duration::from_secs(20)));
    // While it drains: not ready, still alive, new requests refused.
    let probe = |path: &'static str| async move {
        let response = reqwest::get(format!("http://{addr}{path}")).await.unwrap();
        (
            response.status().as_u16(),
            response.text().await.unwrap_or_default(),
        )
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (status, body) = probe("/readyz").await;
        if status == 503 {
            assert_eq!(body, "draining\n");
            break;
        }
        assert!(Instant::now() < deadline, "readiness never failed");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(probe("/healthz").await.0, 200);
    let refused = HttpClient::new(&url).post("{}").await;
    assert_eq!(refused.status, 503);
    assert_eq!(refused.header("retry-after").as_deref(), Some("1"));

    // The call in flight gets its result; then the server stops, well before the bound.
    let (status, body) = in_flight
        .await
        .unwrap()
        .expect("the call in flight is answered");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("slept 1500"), "{body}");
    drain
        .await
        .unwrap()
        .expect("the drain ends with the server stopped");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "the server still accepts connections after its drain"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_longer_than_the_drain_bound_is_stopped_with_the_server() {
    let (http, _tools) = serve_nap(None).await;
    let url = http.url();
    let in_flight = tokio::spawn(call_nap(url, 120_000));
    let deadline = Instant::now() + Duration::from_secs(10);
    while http.requests_in_progress() == 0 {
        assert!(Instant::now() < deadline, "the call never started");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let started = Instant::now();
    http.drain(Duration::from_millis(300))
        .await
        .expect("the server stops");
    // The bound, plus the connections' own grace at shutdown (5 s at most).
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    let answered = tokio::time::timeout(Duration::from_secs(10), in_flight)
        .await
        .expect("the client is let go with the server")
        .unwrap();
    if let Ok((status, body)) = answered {
        assert!(
            !body.contains("slept 120000"),
            "the long call ran to its end: {status} {body}"
        );
    }
}
