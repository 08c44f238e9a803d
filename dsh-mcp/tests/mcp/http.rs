//! The Streamable HTTP server with rmcp's HTTP client: loopback binding, the bearer
//! token, stateless serving (the server's stateless context), sessions (agent scope, setup and close), and importing
//! over HTTP.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dsh_mcp::{HttpOptions, SessionGuard, connect_http, import, serve_http};
use dsh_runtime::{AgentScopeId, Registry, ToolCall};
use serde_json::json;

use crate::common::cases;
use crate::common::tools::{Greet, Toolset, Whoami};
use crate::common::wire::call;

/// A registry of `greet` and `whoami`.
fn tools() -> Toolset {
    Toolset::new().with(Greet).with(Whoami)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_server_with_a_bearer_token() {
    let tools = tools();
    let http = serve_http(
        &tools.server(),
        HttpOptions::default()
            .sessions(false)
            .bearer_token("s3cret"),
    )
    .await
    .unwrap();
    assert!(http.local_addr().ip().is_loopback());
    let url = http.url();

    // Without the token, or with a wrong one, the handshake is refused.
    assert!(connect_http(&url, None).await.is_err());
    assert!(connect_http(&url, Some("wrong")).await.is_err());

    let client = connect_http(&url, Some("s3cret")).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(
        tools.iter().map(|t| t.name.as_ref()).collect::<Vec<_>>(),
        ["greet", "whoami"]
    );
    let r = client
        .call_tool(call("greet", json!({"name": "Ada"})))
        .await
        .unwrap();
    assert_eq!(r.structured_content, Some(json!({"result": "Hello, Ada!"})));
    // Stateless: no session of its own; every request runs in the server's stateless
    // context, one agent scope for all of them.
    let r = client.call_tool(call("whoami", json!({}))).await.unwrap();
    let Some(agent) = r.structured_content.as_ref().map(|v| v["result"].clone()) else {
        panic!("no structured content: {r:?}")
    };
    assert_ne!(agent, json!(0), "a scope of its own, not the global view");
    let other = connect_http(&url, Some("s3cret")).await.unwrap();
    let r = other.call_tool(call("whoami", json!({}))).await.unwrap();
    assert_eq!(r.structured_content, Some(json!({ "result": agent })));
    other.cancel().await.unwrap();
    let r = client
        .call_tool(call("greet", json!({"name": 1})))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));

    // Import over HTTP.
    let imported = import(client.peer()).await.unwrap();
    let local = Registry::new();
    let _r = local.register_dyn(imported.tools[0].clone()).unwrap();
    let r = local
        .execute(ToolCall::new("1", "greet", r#"{"name":"Bo"}"#))
        .await;
    // The served string was wrapped as {"result": …}; the import takes the wrapping off.
    assert_eq!(
        serde_json::to_value(r.value().unwrap()).unwrap(),
        json!("Hello, Bo!")
    );

    client.cancel().await.unwrap();
    http.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stateless_context_is_set_up_once_and_closed_with_the_server() {
    let tools = tools();
    let opened: Arc<Mutex<Vec<AgentScopeId>>> = Arc::default();
    let closed: Arc<Mutex<Vec<AgentScopeId>>> = Arc::default();
    let (o, c) = (opened.clone(), closed.clone());
    let server = tools.server().on_session(move |scope| {
        let id = scope.id();
        o.lock().unwrap().push(id);
        let c = c.clone();
        SessionGuard::new().on_close(async move { c.lock().unwrap().push(id) })
    });
    let http = serve_http(&server, HttpOptions::default().sessions(false))
        .await
        .unwrap();
    assert!(opened.lock().unwrap().is_empty(), "set up on first use");
    for _ in 0..2 {
        let client = connect_http(&http.url(), None).await.unwrap();
        let r = client.call_tool(call("whoami", json!({}))).await.unwrap();
        let ids = opened.lock().unwrap().clone();
        assert_eq!(ids.len(), 1, "one context for every stateless request");
        assert_eq!(r.structured_content, Some(json!({"result": ids[0].get()})));
        client.cancel().await.unwrap();
    }
    // Clients going away do not close it; the server's shutdown does.
    assert!(closed.lock().unwrap().is_empty());
    http.shutdown().await.unwrap();
    assert_eq!(*closed.lock().unwrap(), *opened.lock().unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_get_an_agent_scope_and_are_closed() {
    let tools = tools();
    let opened: Arc<Mutex<Vec<AgentScopeId>>> = Arc::default();
    let closed: Arc<Mutex<Vec<AgentScopeId>>> = Arc::default();
    let (o, c) = (opened.clone(), closed.clone());
    let server = tools.server().on_session(move |scope| {
        let id = scope.id();
        o.lock().unwrap().push(id);
        let c = c.clone();
        SessionGuard::new().on_close(async move { c.lock().unwrap().push(id) })
    });
    let http = serve_http(&server, HttpOptions::default()).await.unwrap();
    let client = connect_http(&http.url(), None).await.unwrap();
    let r = client.call_tool(call("whoami", json!({}))).await.unwrap();
    let ids = opened.lock().unwrap().clone();
    assert_eq!(ids.len(), 1, "one session for one client");
    assert_eq!(r.structured_content, Some(json!({"result": ids[0].get()})));
    let r = client.call_tool(call("whoami", json!({}))).await.unwrap();
    assert_eq!(r.structured_content, Some(json!({"result": ids[0].get()})));

    // Closing the client ends the session.
    client.cancel().await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while closed.lock().unwrap().is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "session not closed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(*closed.lock().unwrap(), ids);
    http.shutdown().await.unwrap();
}

/// A loopback TCP relay to `target` that counts the connections it accepts.
async fn counting_relay(target: std::net::SocketAddr) -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&accepted);
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let Ok(mut outbound) = tokio::net::TcpStream::connect(target).await else {
                    return;
                };
                let _ = inbound.set_nodelay(true);
                let _ = outbound.set_nodelay(true);
                let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
            });
        }
    });
    (format!("http://{addr}/mcp"), accepted)
}

cases! {
    sequential_calls_through_connect_http_share_kept_alive_connections_with_sessions =>
        sequential_calls_through_connect_http_share_kept_alive_connections(true);
    sequential_calls_through_connect_http_share_kept_alive_connections_without_sessions =>
        sequential_calls_through_connect_http_share_kept_alive_connections(false);
}

async fn sequential_calls_through_connect_http_share_kept_alive_connections(sessions: bool) {
    let tools = tools();
    let http = serve_http(&tools.server(), HttpOptions::default().sessions(sessions))
        .await
        .unwrap();
    let (url, accepted) = counting_relay(http.local_addr()).await;
    let client = connect_http(&url, None).await.unwrap();
    let after_handshake = accepted.load(Ordering::SeqCst);
    for i in 0..40 {
        let r = client
            .call_tool(call("greet", json!({"name": format!("n{i}")})))
            .await
            .unwrap();
        assert_eq!(
            r.structured_content,
            Some(json!({"result": format!("Hello, n{i}!")}))
        );
    }
    // The POSTs reuse pooled connections. A call that starts while the previous
    // response stream is still being read to its end (on another task) finds no idle
    // connection and opens one more: how often is the scheduler's doing, so the bound
    // is only "far fewer than one per call" (rmcp's own client, with no pool, opened
    // 41 here; ours opens none on an idle machine, 3 were seen beside a CPU hog).
    let opened = accepted.load(Ordering::SeqCst) - after_handshake;
    assert!(
        opened <= 10,
        "40 sequential calls (sessions: {sessions}) opened {opened} new connections"
    );
    client.cancel().await.unwrap();
    http.shutdown().await.unwrap();
}

/// A loopback server in front of `target`'s MCP endpoint: `/mcp` is relayed to it (each
/// request counted), and the other paths answer redirects: `/same` (307 to `/mcp`),
/// `/moved` (308 to `/mcp`), `/see-other` (303 to `/mcp`, a redirect that turns a POST
/// into a GET), `/elsewhere` (307 to `elsewhere`, another origin), `/loop` (307 to
/// itself). Returns its base URL and the count of relayed requests.
async fn redirector(target: String, elsewhere: String) -> (String, Arc<AtomicUsize>) {
    use axum::body::Body;
    use axum::http::{HeaderValue, StatusCode, header};
    use axum::response::Response;
    use axum::routing::any;

    let relayed = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&relayed);
    let client = reqwest::Client::new();
    let relay = any(move |request: axum::extract::Request| {
        let (client, target, count) = (client.clone(), target.clone(), count.clone());
        async move {
            count.fetch_add(1, Ordering::SeqCst);
            let (parts, body) = request.into_parts();
            let body = axum::body::to_bytes(body, 1 << 20).await.unwrap();
            let mut forwarded = client.request(parts.method, &target).body(body);
            for (name, value) in &parts.headers {
                if name != header::HOST && name != header::CONTENT_LENGTH {
                    forwarded = forwarded.header(name, value);
                }
            }
            let answer = forwarded.send().await.unwrap();
            let mut response = Response::builder().status(answer.status());
            for (name, value) in answer.headers() {
                if name != header::CONTENT_LENGTH && name != header::TRANSFER_ENCODING {
                    response = response.header(name, value);
                }
            }
            response
                .body(Body::from_stream(answer.bytes_stream()))
                .unwrap()
        }
    });
    let redirect = |status: StatusCode, to: String| {
        any(move || {
            let to = to.clone();
            async move {
                Response::builder()
                    .status(status)
                    .header(header::LOCATION, HeaderValue::from_str(&to).unwrap())
                    .body(Body::empty())
                    .unwrap()
            }
        })
    };
    let router = axum::Router::new()
        .route("/mcp", relay)
        .route(
            "/same",
            redirect(StatusCode::TEMPORARY_REDIRECT, "/mcp".into()),
        )
        .route(
            "/moved",
            redirect(StatusCode::PERMANENT_REDIRECT, "/mcp".into()),
        )
        .route("/see-other", redirect(StatusCode::SEE_OTHER, "/mcp".into()))
        .route(
            "/elsewhere",
            redirect(StatusCode::TEMPORARY_REDIRECT, elsewhere),
        )
        .route(
            "/loop",
            redirect(StatusCode::TEMPORARY_REDIRECT, "/loop".into()),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    (format!("http://{addr}"), relayed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_http_follows_only_same_origin_redirects_that_keep_the_request() {
    let tools = tools();
    let http = serve_http(&tools.server(), HttpOptions::default())
        .await
        .unwrap();
    // Another origin (our server itself, by another port), behind a connection counter.
    let (elsewhere, accepted_elsewhere) = counting_relay(http.local_addr()).await;
    let (base, relayed) = redirector(http.url(), elsewhere).await;

    // 307 and 308 to the same origin are followed, for every request of the session.
    for path in ["/same", "/moved"] {
        let before = relayed.load(Ordering::SeqCst);
        let client = connect_http(&format!("{base}{path}"), None)
            .await
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        let r = client
            .call_tool(call("greet", json!({"name": "Ada"})))
            .await
            .unwrap();
        assert_eq!(r.structured_content, Some(json!({"result": "Hello, Ada!"})));
        assert!(
            relayed.load(Ordering::SeqCst) > before,
            "{path}: nothing relayed"
        );
        client.cancel().await.unwrap();
    }

    // A 303 would turn the POST into a GET without its body: not followed, so the
    // handshake fails without reaching the endpoint.
    let before = relayed.load(Ordering::SeqCst);
    let refused = connect_http(&format!("{base}/see-other"), None).await;
    assert!(refused.is_err(), "a 303 was followed");
    assert_eq!(relayed.load(Ordering::SeqCst), before, "a 303 reached /mcp");

    // Another origin is never contacted (it would see the session id and the token).
    let refused = connect_http(&format!("{base}/elsewhere"), Some("s3cret")).await;
    assert!(
        refused.is_err(),
        "a redirect to another origin was followed"
    );
    assert_eq!(accepted_elsewhere.load(Ordering::SeqCst), 0);

    // A redirect loop ends with an error, not a hang.
    let looped = tokio::time::timeout(
        Duration::from_secs(10),
        connect_http(&format!("{base}/loop"), None),
    )
    .await
    .expect("a redirect loop hung the handshake");
    assert!(looped.is_err(), "a redirect loop connected");

    http.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_is_deleted_once_with_204_and_an_unknown_one_is_404() {
    use crate::common::http::HttpClient;
    use crate::common::wire::Revision;

    let tools = Toolset::new().with(Greet);
    let http = serve_http(&tools.server(), HttpOptions::default())
        .await
        .unwrap();
    let mut client = HttpClient::new(http.url());
    let session = client.start_session(Revision::V2025_11_25).await;
    let delete = |id: String| {
        let url = http.url();
        async move {
            reqwest::Client::new()
                .delete(url)
                .header("mcp-session-id", id)
                .header("mcp-protocol-version", Revision::V2025_11_25.as_str())
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }
    };
    assert_eq!(delete(session.clone()).await, 204);
    // Ended: deleting it again, or a session never opened, is a 404.
    assert_eq!(delete(session).await, 404);
    assert_eq!(delete("no-such-session".to_string()).await, 404);
    http.shutdown().await.unwrap();
}

/// Close the call's stream, then answer a little later.
#[dsh_runtime::tool]
async fn slow_after_close(cx: dsh_runtime::ToolContext) -> String {
    let closed = cx.close_stream(Duration::from_millis(50)).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    format!("closed: {closed}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_closes_its_stream_and_the_client_resumes_it_for_the_answer() {
    use crate::common::http::HttpClient;
    use crate::common::wire::Revision;

    let tools = Toolset::new().with(SlowAfterClose);
    let http = serve_http(&tools.server(), HttpOptions::default())
        .await
        .unwrap();
    let mut client = HttpClient::new(http.url());
    let session = client.start_session(Revision::V2025_11_25).await;
    let call = json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "slow_after_close", "arguments": {}},
    });
    // The POST's stream ends before the answer: only priming events, the last with the
    // retry the call asked for.
    let first = client.post(&call.to_string()).await;
    assert!(first.messages().is_empty(), "{}", first.body);
    assert!(
        first.body.contains("retry: 50") || first.body.contains("retry:50"),
        "{}",
        first.body
    );
    let last_id = first
        .body
        .lines()
        .filter_map(|l| l.strip_prefix("id:"))
        .map(str::trim)
        .next_back()
        .expect("an event id")
        .to_string();
    // Resumed with Last-Event-ID: the answer comes on the new stream.
    let resumed = reqwest::Client::new()
        .get(http.url())
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", Revision::V2025_11_25.as_str())
        .header("last-event-id", last_id)
        .send()
        .await
        .unwrap();
    assert_eq!(resumed.status(), 200);
    let mut body = resumed;
    let mut text = String::new();
    let answer = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(chunk) = body.chunk().await.unwrap() {
            text.push_str(&String::from_utf8_lossy(&chunk));
            if text.contains("closed: true") {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(answer, Ok(true), "{text}");
    assert!(text.contains("\"id\":7"), "{text}");
    http.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_call_outside_an_http_session_cannot_close_a_stream() {
    let registry = Registry::new();
    let _tool = registry.register(SlowAfterClose).unwrap();
    let result = registry
        .execute(ToolCall::new("c1", "slow_after_close", "{}"))
        .await;
    assert_eq!(result.text(), "closed: false");
}
