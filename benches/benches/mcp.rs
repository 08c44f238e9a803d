//! `mcp`: `tools/call` round trips per second through an MCP connection, our server
//! (`dsh_mcp::McpServer` over a registry, what `dsh-tools mcp` runs) against an rmcp
//! server exposing the same tools (`#[tool_router]` + the default `#[tool_handler]`),
//! in the same run.
//!
//! Both servers run on a Unix socket pair (kernel I/O like the pipes of stdio) on a
//! two-worker tokio runtime, with rmcp's client on the other end; the tools are the
//! `read_window` and `search` stand-ins of `common/` (the same bodies on both sides).
//! One iteration is one `tools/call` awaited to its response. Groups: `mcp/<case>`, ids
//! `ours` and `rmcp`; throughput is reported in calls per second.
//!
//! Before timing, the bench prints the heap held by one idle session (live bytes after
//! 64 handshakes, client and server, divided by 64) for each server, measured with a
//! counting global allocator; the client side is the same rmcp client for both.
//!
//! Latency, `mcp_latency/<case>` with ids `stdio`, `http` and `rmcp_http`: sequential
//! `tools/call`s against our server on the socket pair (stdio's kernel I/O) and over
//! Streamable HTTP on loopback, and against rmcp's own Streamable HTTP server
//! (`StreamableHttpService` with its default configuration, as ours, served by axum with
//! `TCP_NODELAY`) exposing the same tools. Both HTTP servers are called through
//! `dsh_mcp::connect_http` (rmcp's HTTP client transport over a pooling reqwest client,
//! so sequential calls share kept-alive connections). The bench first prints the median
//! of each over the same calls and the ratios (`http/stdio`, `http/rmcp_http`), then
//! times all three. The printed medians also hold `http_floor`: the same client against
//! a server that answers each `tools/call` at once with a fixed result and runs nothing
//! (`serve_floor_http`), the part of an HTTP call no server can remove.
//!
//! Run: `cargo bench -p dsh-benches --bench mcp`.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::{Duration, Instant};

use common::{A_VALID, B_VALID, RmcpServer, registry, rmcp_params};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rmcp::RoleClient;
use rmcp::ServiceExt;
use rmcp::model::JsonObject;
use rmcp::service::RunningService;
use tokio::net::UnixStream;

/// rmcp's Streamable HTTP router for `RmcpServer` at `/mcp`, with its default
/// configuration (the session mode ours uses by default).
fn rmcp_router(stop: &tokio_util::sync::CancellationToken) -> axum::Router {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    };
    let service = StreamableHttpService::new(
        || Ok(RmcpServer::new()),
        std::sync::Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default().with_cancellation_token(stop.child_token()),
    );
    axum::Router::new().nest_service("/mcp", service)
}

/// Serve `router` with axum on a loopback port, with `TCP_NODELAY`, until `stop`;
/// returns its MCP URL.
async fn serve_on_loopback(
    router: axum::Router,
    stop: tokio_util::sync::CancellationToken,
) -> String {
    use axum::serve::ListenerExt as _;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("local address");
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    tokio::spawn(async move {
        let _ = axum::serve(listener, router)
            .with_graceful_shutdown(stop.cancelled_owned())
            .await;
    });
    format!("http://{addr}/mcp")
}

/// rmcp's Streamable HTTP server for `RmcpServer` ([`rmcp_router`]) on a loopback port;
/// returns its MCP URL.
async fn serve_rmcp_http(stop: tokio_util::sync::CancellationToken) -> String {
    serve_on_loopback(rmcp_router(&stop), stop).await
}

/// The floor of an HTTP call with this client: rmcp's Streamable HTTP server (as
/// [`serve_rmcp_http`]) behind a layer that answers every `tools/call` at once with a
/// fixed result (`application/json`, the request's id), running no tool: what is left
/// is the client, the HTTP stack and one JSON parse.
async fn serve_floor_http(stop: tokio_util::sync::CancellationToken) -> String {
    async fn answer_calls(
        request: axum::extract::Request,
        next: axum::middleware::Next,
    ) -> axum::response::Response {
        use axum::response::IntoResponse as _;
        let (parts, body) = request.into_parts();
        let Ok(bytes) = axum::body::to_bytes(body, 1 << 20).await else {
            return axum::http::StatusCode::BAD_REQUEST.into_response();
        };
        if let Ok(message) = serde_json::from_slice::<serde_json::Value>(&bytes)
            && message["method"] == "tools/call"
        {
            let reply = serde_json::json!({
                "jsonrpc": "2.0",
                "id": message["id"],
                "result": {"content": [{"type": "text", "text": "floor"}], "isError": false},
            });
            return (
                [(axum::http::header::CONTENT_TYPE, "application/json")],
                reply.to_string(),
            )
                .into_response();
        }
        next.run(axum::extract::Request::from_parts(
            parts,
            axum::body::Body::from(bytes),
        ))
        .await
    }
    let router = rmcp_router(&stop).layer(axum::middleware::from_fn(answer_calls));
    serve_on_loopback(router, stop).await
}

struct Counting;

/// Bytes allocated and not yet freed.
static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every method forwards to `System` with the caller's arguments unchanged; the
// counter is a side effect only.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded as received.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded as received.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded as received.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        // SAFETY: forwarded as received.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[derive(Clone, Copy)]
enum Contender {
    Ours,
    Rmcp,
}

/// Everything one connection keeps alive.
struct Connection {
    client: RunningService<RoleClient, ()>,
    _server: tokio::task::JoinHandle<()>,
}

async fn connect(contender: Contender, ours: &dsh_mcp::McpServer) -> Connection {
    let (server_end, client_end) = UnixStream::pair().expect("socket pair");
    let server = match contender {
        Contender::Ours => {
            let ours = ours.clone();
            tokio::spawn(async move {
                let _ = ours.serve(server_end).await;
            })
        }
        Contender::Rmcp => tokio::spawn(async move {
            if let Ok(running) = RmcpServer::new().serve(server_end).await {
                let _ = running.waiting().await;
            }
        }),
    };
    let client = ().serve(client_end).await.expect("client handshake");
    Connection {
        client,
        _server: server,
    }
}

fn args(text: &str) -> JsonObject {
    match serde_json::from_str(text) {
        Ok(serde_json::Value::Object(o)) => o,
        _ => panic!("inputs are objects"),
    }
}

fn idle_session_bytes(rt: &tokio::runtime::Runtime, ours: &dsh_mcp::McpServer) {
    const SESSIONS: isize = 64;
    for (label, contender) in [("ours", Contender::Ours), ("rmcp", Contender::Rmcp)] {
        // Warm up lazily built statics.
        let warm = rt.block_on(connect(contender, ours));
        rt.block_on(async { warm.client.list_all_tools().await.expect("list") });
        drop(warm);
        std::thread::sleep(std::time::Duration::from_millis(100));
        let before = LIVE.load(Ordering::Relaxed);
        let sessions: Vec<Connection> = (0..SESSIONS)
            .map(|_| rt.block_on(connect(contender, ours)))
            .collect();
        std::thread::sleep(std::time::Duration::from_millis(100));
        let after = LIVE.load(Ordering::Relaxed);
        println!(
            "mcp/idle_session_bytes/{label}: {} bytes per idle session (client and server)",
            (after - before) / SESSIONS
        );
        drop(sessions);
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let (registry, _registrations) = registry();
    let ours = dsh_mcp::McpServer::new(registry);
    idle_session_bytes(&rt, &ours);

    for (case, tool, text) in [
        ("A_valid", "read_window", A_VALID),
        ("B_valid", "search", B_VALID),
    ] {
        let mut group = c.benchmark_group(format!("mcp/{case}"));
        group.throughput(Throughput::Elements(1));
        for (id, contender) in [("ours", Contender::Ours), ("rmcp", Contender::Rmcp)] {
            let conn = rt.block_on(connect(contender, &ours));
            let params = rmcp_params(tool, args(text));
            // Both answer with the same successful result before being timed.
            let check = rt
                .block_on(conn.client.call_tool(params.clone()))
                .expect("call");
            assert_ne!(check.is_error, Some(true), "{id}: {check:?}");
            group.bench_function(id, |b| {
                b.iter(|| {
                    rt.block_on(conn.client.call_tool(params.clone()))
                        .expect("call")
                });
            });
        }
        group.finish();
    }
}

/// Calls per contender for the printed medians.
const LATENCY_ROUNDS: usize = 400;

/// The median of `LATENCY_ROUNDS` sequential calls of `params` on `client`.
fn median_call<H: rmcp::ClientHandler>(
    rt: &tokio::runtime::Runtime,
    client: &RunningService<RoleClient, H>,
    params: &rmcp::model::CallToolRequestParams,
) -> Duration {
    let mut times: Vec<Duration> = (0..LATENCY_ROUNDS)
        .map(|_| {
            let started = Instant::now();
            let result = rt.block_on(client.call_tool(params.clone())).expect("call");
            assert_ne!(result.is_error, Some(true), "{result:?}");
            started.elapsed()
        })
        .collect();
    times.sort_unstable();
    times[LATENCY_ROUNDS / 2]
}

fn latency(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let (registry, _registrations) = registry();
    let ours = dsh_mcp::McpServer::new(registry);
    let http = rt
        .block_on(dsh_mcp::serve_http(&ours, dsh_mcp::HttpOptions::default()))
        .expect("serve on loopback");
    let over_http = rt
        .block_on(dsh_mcp::connect_http(&http.url(), None))
        .expect("HTTP client handshake");
    let over_stdio = rt.block_on(connect(Contender::Ours, &ours));
    let stop_rmcp = tokio_util::sync::CancellationToken::new();
    let rmcp_url = rt.block_on(serve_rmcp_http(stop_rmcp.clone()));
    let over_rmcp_http = rt
        .block_on(dsh_mcp::connect_http(&rmcp_url, None))
        .expect("HTTP client handshake with rmcp's server");
    let floor_url = rt.block_on(serve_floor_http(stop_rmcp.clone()));
    let over_floor = rt
        .block_on(dsh_mcp::connect_http(&floor_url, None))
        .expect("HTTP client handshake with the floor server");
    for (case, tool, text) in [
        ("A_valid", "read_window", A_VALID),
        ("B_valid", "search", B_VALID),
    ] {
        let params = rmcp_params(tool, args(text));
        // Warm both connections, then measure them in turn on the same calls.
        let _ = median_call(&rt, &over_stdio.client, &params);
        let _ = median_call(&rt, &over_http, &params);
        let _ = median_call(&rt, &over_rmcp_http, &params);
        let _ = median_call(&rt, &over_floor, &params);
        let stdio = median_call(&rt, &over_stdio.client, &params);
        let http_median = median_call(&rt, &over_http, &params);
        let rmcp_median = median_call(&rt, &over_rmcp_http, &params);
        let floor = median_call(&rt, &over_floor, &params);
        println!(
            "mcp_latency/{case}: median of {LATENCY_ROUNDS} sequential calls: http {http_median:?}, \
             stdio {stdio:?}, rmcp_http {rmcp_median:?}, http_floor {floor:?}, http/stdio {:.2}x, http/rmcp_http {:.2}x",
            http_median.as_secs_f64() / stdio.as_secs_f64(),
            http_median.as_secs_f64() / rmcp_median.as_secs_f64()
        );
        let mut group = c.benchmark_group(format!("mcp_latency/{case}"));
        group.bench_function("stdio", |b| {
            b.iter(|| {
                rt.block_on(over_stdio.client.call_tool(params.clone()))
                    .expect("call")
            });
        });
        group.bench_function("http", |b| {
            b.iter(|| {
                rt.block_on(over_http.call_tool(params.clone()))
                    .expect("call")
            });
        });
        group.bench_function("rmcp_http", |b| {
            b.iter(|| {
                rt.block_on(over_rmcp_http.call_tool(params.clone()))
                    .expect("call")
            });
        });
        group.finish();
    }
    let _ = rt.block_on(over_http.cancel());
    let _ = rt.block_on(over_rmcp_http.cancel());
    stop_rmcp.cancel();
    rt.block_on(http.shutdown())
        .expect("shut the HTTP server down");
}

criterion_group!(benches, bench, latency);
criterion_main!(benches);
