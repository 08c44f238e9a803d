//! The Streamable HTTP server against hostile or unusual clients, over loopback with a
//! real HTTP client (reqwest) or raw TCP: `Origin` validation, the bearer scheme, bodies
//! that are not JSON-RPC, header and body read timeouts, the connection cap, and
//! sessions outliving their idle timeout while a call or a stream is open.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use dsh_mcp::{HttpOptions, HttpServer, serve_http};
use dsh_runtime::{ToolError, tool};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt as _;
use tokio::net::TcpStream;

use crate::common::http::{HttpClient, Reply, head, read_until_closed, stall};
use crate::common::rpc::{initialize, tools_call};
use crate::common::tools::{Nap, Toolset};
use crate::common::wire::Revision;

/// Write `x` to the file at `path`.
#[tool]
async fn write_file(path: String) -> Result<String, ToolError> {
    std::fs::write(&path, "x").map_err(|e| ToolError::new(format!("{path}: {e}")))?;
    Ok(path)
}

/// A registry of `write_file` and `nap`.
fn tools() -> Toolset {
    Toolset::new().with(WriteFile).with(Nap)
}

async fn serve_with(options: HttpOptions) -> (HttpServer, Toolset) {
    let tools = tools();
    let http = serve_http(&tools.server(), options)
        .await
        .expect("serve on loopback");
    (http, tools)
}

/// A path in the temporary directory no other test uses.
fn fresh_path(name: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    std::env::temp_dir().join(format!("dsh-mcp-{name}-{}-{nanos}", std::process::id()))
}

const PROTOCOL: Revision = Revision::V2025_06_18;

fn structured_result(reply: &Reply) -> Value {
    let messages = reply.messages();
    let response = messages
        .iter()
        .find(|m| m.get("id").is_some())
        .unwrap_or_else(|| panic!("no response in {:?}", reply.body));
    response["result"]["structuredContent"]["result"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_origin_is_refused_with_403_and_runs_nothing() {
    let (http, _tools) = serve_with(HttpOptions::default()).await;
    let url = http.url();
    let client = HttpClient::new(&url);

    // A browser page elsewhere cannot even start a session.
    let reply = client
        .post_with(
            &initialize(1, PROTOCOL, json!({})).to_string(),
            &[("origin", "http://evil.example")],
        )
        .await;
    assert_eq!(reply.status, 403, "{}", reply.body);
    assert_eq!(reply.session(), None);

    // Nor call a tool in an existing session.
    let mut client = client;
    client.start_session(PROTOCOL).await;
    let target = fresh_path("origin");
    let call = tools_call(2, "write_file", json!({"path": target.to_string_lossy()}));
    for origin in [
        "http://evil.example",
        "https://localhost.evil.example",
        "http://127.0.0.1.evil.example:80",
        "null",
        "not an origin",
    ] {
        let reply = client
            .post_with(&call.to_string(), &[("origin", origin)])
            .await;
        assert_eq!(reply.status, 403, "{origin}: {}", reply.body);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !target.exists(),
        "a refused call wrote {}",
        target.display()
    );

    // No Origin (a non-browser client) and loopback origins are served.
    for origin in [
        None,
        Some("http://localhost"),
        Some("http://localhost:5173"),
        Some("https://127.0.0.1:8443"),
        Some("http://[::1]:3000"),
    ] {
        let _ = std::fs::remove_file(&target);
        let extra: Vec<(&str, &str)> = origin.iter().map(|o| ("origin", *o)).collect();
        let reply = client.post_with(&call.to_string(), &extra).await;
        assert_eq!(reply.status, 200, "{origin:?}: {}", reply.body);
        assert!(target.exists(), "{origin:?}: the call did not run");
    }
    let _ = std::fs::remove_file(&target);
    http.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_is_not_json_is_a_400_parse_error() {
    let (http, _tools) = serve_with(HttpOptions::default().sessions(false)).await;
    let url = http.url();
    let client = HttpClient::new(&url);
    let reply = client.post("{not json").await;
    assert_eq!(reply.status, 400, "{}", reply.body);
    let body: Value = serde_json::from_str(&reply.body).expect("a JSON-RPC error body");
    assert_eq!(body["jsonrpc"], "2.0", "{body}");
    assert_eq!(body["id"], Value::Null, "{body}");
    assert_eq!(body["error"]["code"], -32700, "{body}");

    // JSON that is no JSON-RPC message: an invalid request.
    let reply = client.post(r#"{"hello": "world"}"#).await;
    assert_eq!(reply.status, 400, "{}", reply.body);
    let body: Value = serde_json::from_str(&reply.body).expect("a JSON-RPC error body");
    assert_eq!(body["error"]["code"], -32600, "{body}");

    // A wrong content type stays 415.
    let reply = client
        .post_with(
            &initialize(1, PROTOCOL, json!({})).to_string(),
            &[("content-type", "text/plain")],
        )
        .await;
    assert_eq!(reply.status, 415);
    http.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bearer_scheme_is_case_insensitive() {
    let (http, _tools) = serve_with(
        HttpOptions::default()
            .sessions(false)
            .bearer_token("s3cret"),
    )
    .await;
    let client = HttpClient::new(http.url());
    for good in [
        "Bearer s3cret",
        "bearer s3cret",
        "BEARER s3cret",
        "bEaReR  s3cret",
    ] {
        let reply = client
            .post_with(
                &initialize(1, PROTOCOL, json!({})).to_string(),
                &[("authorization", good)],
            )
            .await;
        assert_eq!(reply.status, 200, "{good}: {}", reply.body);
    }
    for bad in [
        "Bearer S3CRET",
        "Bearer s3cre",
        "Bearer s3cretX",
        "Basic s3cret",
        "Bearers3cret",
        "s3cret",
        "",
    ] {
        let reply = client
            .post_with(
                &initialize(1, PROTOCOL, json!({})).to_string(),
                &[("authorization", bad)],
            )
            .await;
        assert_eq!(reply.status, 401, "{bad:?}: {}", reply.body);
    }
    http.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_endpoint_path_is_served_and_credentials_come_first() {
    let (http, _tools) = serve_with(
        HttpOptions::default()
            .sessions(false)
            .path("/api/mcp/")
            .bearer_token("s3cret"),
    )
    .await;
    let base = format!("http://{}", http.local_addr());
    let at = |path: &str| HttpClient::new(format!("{base}{path}"));
    let token = [("authorization", "Bearer s3cret")];
    // The path, with or without its trailing slash, and below it: served.
    for path in ["/api/mcp", "/api/mcp/", "/api/mcp/sub"] {
        let reply = at(path)
            .post_with(&initialize(1, PROTOCOL, json!({})).to_string(), &token)
            .await;
        assert_eq!(reply.status, 200, "{path}: {}", reply.body);
        assert_eq!(reply.messages()[0]["id"], 1, "{path}: {}", reply.body);
    }
    // Any other path is a 404, and nothing reads its body (which is not JSON here).
    for path in ["/", "/api", "/api/mcpx", "/api/mc", "/other/api/mcp"] {
        let reply = at(path).post_with("{not json", &token).await;
        assert_eq!(reply.status, 404, "{path}: {}", reply.body);
    }
    // The token is checked before the path: without it, every path is a 401.
    for path in ["/api/mcp", "/other"] {
        let reply = at(path)
            .post(&initialize(1, PROTOCOL, json!({})).to_string())
            .await;
        assert_eq!(reply.status, 401, "{path}: {}", reply.body);
    }
    http.shutdown().await.unwrap();

    // At the root, every path is the endpoint's.
    let (http, _tools) = serve_with(HttpOptions::default().sessions(false).path("/")).await;
    let base = format!("http://{}", http.local_addr());
    let at = |path: &str| HttpClient::new(format!("{base}{path}"));
    for path in ["/", "/mcp", "/any/where"] {
        let reply = at(path)
            .post(&initialize(1, PROTOCOL, json!({})).to_string())
            .await;
        assert_eq!(reply.status, 200, "{path}: {}", reply.body);
    }
    http.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_path_without_a_leading_slash_is_refused_at_start() {
    let tools = tools();
    let Err(refused) = serve_http(&tools.server(), HttpOptions::default().path("mcp")).await else {
        panic!("a path without `/` is refused");
    };
    assert_eq!(refused.kind(), std::io::ErrorKind::InvalidInput);
    assert!(
        refused.to_string().contains("HttpOptions::path: \"mcp\""),
        "{refused}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sequential_calls_on_a_kept_alive_connection_wait_for_no_delayed_ack() {
    let (http, _tools) = serve_with(HttpOptions::default()).await;
    let url = http.url();
    // One connection, kept alive between the calls.
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(1)
        .build()
        .unwrap();
    let mut client = HttpClient::with(client, url);
    client.start_session(PROTOCOL).await;
    let mut times = Vec::new();
    for id in 0..40 {
        let call = tools_call(10 + id, "nap", json!({"ms": 0}));
        let started = Instant::now();
        let reply = client.post(&call.to_string()).await;
        times.push(started.elapsed());
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(structured_result(&reply), json!("slept 0"));
    }
    times.sort();
    let median = times[times.len() / 2];
    // Without TCP_NODELAY each response waits for the client's delayed ACK (40 ms on
    // Linux); a loopback round trip takes a few milliseconds even in a debug build.
    assert!(
        median < Duration::from_millis(25),
        "median call {median:?} on a kept-alive connection: {times:?}"
    );
    http.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_origins_and_hosts_are_configurable() {
    let (http, _tools) = serve_with(
        HttpOptions::default()
            .sessions(false)
            .allowed_origins(["https://app.example", "http://tool.example:8080"]),
    )
    .await;
    let client = HttpClient::new(http.url());
    for (origin, status) in [
        ("https://app.example", 200),
        ("https://APP.example:443", 200),
        ("http://tool.example:8080", 200),
        ("https://app.example:444", 403),
        ("http://app.example", 403),
        ("http://tool.example", 403),
    ] {
        let reply = client
            .post_with(
                &initialize(1, PROTOCOL, json!({})).to_string(),
                &[("origin", origin)],
            )
            .await;
        assert_eq!(reply.status, status, "{origin}: {}", reply.body);
    }
    // The Host check stays on: a name that is not loopback is refused.
    let reply = client
        .post_with(
            &initialize(1, PROTOCOL, json!({})).to_string(),
            &[("host", "evil.example")],
        )
        .await;
    assert_eq!(reply.status, 403, "{}", reply.body);
    http.shutdown().await.unwrap();

    let (http, _tools) = serve_with(
        HttpOptions::default()
            .sessions(false)
            .allowed_hosts(["mcp.example"]),
    )
    .await;
    let client = HttpClient::new(http.url());
    for (host, status) in [
        ("mcp.example", 200),
        ("localhost", 200),
        ("evil.example", 403),
    ] {
        let reply = client
            .post_with(
                &initialize(1, PROTOCOL, json!({})).to_string(),
                &[("host", host)],
            )
            .await;
        assert_eq!(reply.status, status, "{host}: {}", reply.body);
    }
    http.shutdown().await.unwrap();

    let (http, _tools) =
        serve_with(HttpOptions::default().sessions(false).allow_any_host(true)).await;
    let reply = HttpClient::new(http.url())
        .post_with(
            &initialize(1, PROTOCOL, json!({})).to_string(),
            &[("host", "evil.example")],
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    http.shutdown().await.unwrap();

    let error = serve_http(
        &tools().server(),
        HttpOptions::default().allowed_origins(["app.example"]),
    )
    .await
    .expect_err("an origin without a scheme is refused");
    assert!(
        error
            .to_string()
            .contains("HttpOptions::allowed_origins: \"app.example\""),
        "{error}"
    );
    let error = serve_http(&tools().server(), HttpOptions::default().max_connections(0))
        .await
        .expect_err("a server that serves no connection is refused");
    assert!(
        error.to_string().contains("HttpOptions::max_connections"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_longer_than_the_idle_timeout_keeps_its_session_and_result() {
    let idle = Duration::from_secs(1);
    let (http, _tools) = serve_with(HttpOptions::default().session_idle_timeout(idle)).await;
    let mut client = HttpClient::new(http.url());
    client.start_session(PROTOCOL).await;
    let call = |id: u64, ms: u64| tools_call(id, "nap", json!({"ms": ms})).to_string();

    // A call sleeping past the idle timeout gets its result.
    let reply = client.post(&call(2, 2500)).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        structured_result(&reply),
        json!("slept 2500"),
        "{}",
        reply.body
    );
    // And the session still works right after.
    let reply = client.post(&call(3, 0)).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(structured_result(&reply), json!("slept 0"));

    // An open GET stream keeps it alive too.
    let stream = client.get_stream().await;
    assert_eq!(stream.status().as_u16(), 200);
    tokio::time::sleep(idle * 3).await;
    let reply = client.post(&call(4, 0)).await;
    assert_eq!(reply.status, 200, "with a GET stream open: {}", reply.body);
    drop(stream);

    // Idle for longer than the timeout, with nothing open: the session ends.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        tokio::time::sleep(idle * 3).await;
        let reply = client.post(&call(5, 0)).await;
        if reply.status == 404 {
            break;
        }
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert!(
            Instant::now() < deadline,
            "the idle session was never closed"
        );
    }
    http.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_stalled_in_their_headers_are_closed_and_others_served() {
    let timeout = Duration::from_secs(3);
    let (http, _tools) = serve_with(HttpOptions::default().header_read_timeout(timeout)).await;
    let opened = Instant::now();
    let mut stalled = Vec::new();
    for _ in 0..60 {
        let (stream, written) = stall(http.local_addr()).await;
        written.unwrap();
        stalled.push(stream);
    }
    // A legitimate client is served while they are open.
    let mut client = HttpClient::new(http.url());
    client.start_session(PROTOCOL).await;
    let reply = client
        .post(&tools_call(2, "nap", json!({"ms": 0})).to_string())
        .await;
    assert_eq!(structured_result(&reply), json!("slept 0"));
    assert!(
        opened.elapsed() < timeout,
        "the legitimate client took {:?}, longer than the header timeout",
        opened.elapsed()
    );
    // Each stalled connection is closed once the header timeout passed, not before.
    for (i, stream) in stalled.iter_mut().enumerate() {
        let (_, closed) = read_until_closed(stream, Duration::from_secs(15)).await;
        assert!(
            closed,
            "stalled connection {i} still open after {:?}",
            opened.elapsed()
        );
    }
    assert!(
        opened.elapsed() >= timeout - Duration::from_millis(100),
        "closed after {:?}, before the header timeout",
        opened.elapsed()
    );
    http.shutdown().await.unwrap();
}

/// Open a connection and send a whole `tools/call` of `nap` in `session` that naps `ms`:
/// a connection in a request until the nap ends.
async fn busy(addr: std::net::SocketAddr, session: &str, id: u64, ms: u64) -> TcpStream {
    let body = tools_call(id, "nap", json!({"ms": ms})).to_string();
    let head = head(
        "application/json",
        &[
            &format!("mcp-session-id: {session}"),
            &format!("mcp-protocol-version: {}", PROTOCOL.as_str()),
            &format!("content-length: {}", body.len()),
        ],
    );
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    stream
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_over_the_cap_are_refused_at_once_when_every_one_is_in_a_request() {
    let (http, _tools) = serve_with(HttpOptions::default().max_connections(4)).await;
    let session = HttpClient::new(http.url()).start_session(PROTOCOL).await;
    let mut held = Vec::new();
    for id in 0..4 {
        held.push(busy(http.local_addr(), &session, 10 + id, 60_000).await);
    }
    // Let the server accept them and start their calls.
    tokio::time::sleep(Duration::from_millis(300)).await;
    for _ in 0..8 {
        let started = Instant::now();
        let (mut extra, written) = stall(http.local_addr()).await;
        written.unwrap();
        let (seen, closed) = read_until_closed(&mut extra, Duration::from_secs(5)).await;
        assert!(closed, "a connection over the cap was kept open");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "refused only after {:?}",
            started.elapsed()
        );
        assert!(
            seen.is_empty() || seen.starts_with("HTTP/1.1 503"),
            "{seen}"
        );
    }
    // The held ones are still served...
    for stream in &mut held {
        let (_, closed) = read_until_closed(stream, Duration::from_millis(100)).await;
        assert!(!closed, "a connection in a request was closed");
    }
    // ...and when one ends, a new client gets its place.
    drop(held.pop());
    let client = HttpClient::new(http.url());
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let reply = client
            .try_post(&initialize(1, PROTOCOL, json!({})).to_string())
            .await;
        if let Ok(reply) = reply
            && reply.status == 200
        {
            break;
        }
        assert!(Instant::now() < deadline, "no place freed for a new client");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    http.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hundreds_of_stalled_connections_make_way_for_a_legitimate_client() {
    let cap = 64;
    let (http, _tools) = serve_with(HttpOptions::default().max_connections(cap)).await;
    // Five times the cap, from one peer, each stalled in its request head.
    let mut stalled = Vec::new();
    for _ in 0..cap * 5 {
        // (The server may already have closed it to make room for a later one.)
        let (stream, _written) = stall(http.local_addr()).await;
        stalled.push(stream);
    }
    // A legitimate client is answered at once: the oldest staller makes room.
    let client = HttpClient::new(http.url());
    let started = Instant::now();
    let initialize = initialize(1, PROTOCOL, json!({})).to_string();
    let reply = tokio::time::timeout(Duration::from_secs(1), client.post(&initialize))
        .await
        .unwrap_or_else(|_| panic!("initialize not answered within 1 s"));
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(reply.session().is_some(), "{}", reply.body);
    // The first stallers were closed to make room; the server never held more than
    // its cap.
    let (_, closed) = read_until_closed(&mut stalled[0], Duration::from_secs(2)).await;
    assert!(
        closed,
        "the oldest staller is still open after {:?}",
        started.elapsed()
    );
    http.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_does_not_arrive_in_time_is_a_408() {
    let timeout = Duration::from_secs(1);
    let (http, _tools) = serve_with(HttpOptions::default().body_read_timeout(timeout)).await;
    let mut stream = TcpStream::connect(http.local_addr()).await.unwrap();
    let head = head("application/json", &["content-length: 200"]);
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(b"{\"jsonrpc\"").await.unwrap();
    let started = Instant::now();
    let (seen, closed) = read_until_closed(&mut stream, Duration::from_secs(10)).await;
    assert!(seen.starts_with("HTTP/1.1 408"), "{seen:?}");
    assert!(closed, "the connection stays open after the 408");
    assert!(
        started.elapsed() >= timeout - Duration::from_millis(100),
        "{:?}",
        started.elapsed()
    );
    http.shutdown().await.unwrap();
}
