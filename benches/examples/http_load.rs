//! One MCP server over Streamable HTTP on loopback, for an HTTP load generator
//! (`benches/http_load/run.sh`): `ours` (`dsh_mcp::serve_http` with sessions off, what
//! `dsh-tools mcp --http --stateless` runs) or `rmcp` (rmcp's `StreamableHttpService`
//! with its default configuration, served by axum with `TCP_NODELAY`), exposing the same
//! tools (`read_window`, `search`: the stand-ins of `benches/common`). It prints
//! `URL <url>` once bound and serves until killed.
//!
//! Run: `cargo run --release -p dsh-benches --features peers --example http_load -- ours`.

#[path = "../benches/common/mod.rs"]
mod common;

use common::{RmcpServer, registry};

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let which = std::env::args().nth(1).unwrap_or_default();
    let stop = tokio_util::sync::CancellationToken::new();
    let url = match which.as_str() {
        "ours" => {
            let (registry, _regs) = registry();
            let http = dsh_mcp::serve_http(
                registry,
                dsh_mcp::HttpOptions::default()
                    .sessions(false)
                    .max_connections(4096),
            )
            .await?;
            let url = http.url();
            println!("URL {url}");
            // Served until the process is killed.
            std::future::pending::<()>().await;
            drop((http, _regs));
            url
        }
        "rmcp" => {
            use axum::serve::ListenerExt as _;
            use rmcp::transport::streamable_http_server::{
                StreamableHttpServerConfig, StreamableHttpService,
                session::local::LocalSessionManager,
            };
            let service = StreamableHttpService::new(
                || Ok(RmcpServer::new()),
                std::sync::Arc::new(LocalSessionManager::default()),
                StreamableHttpServerConfig::default().with_cancellation_token(stop.child_token()),
            );
            let router = axum::Router::new().nest_service("/mcp", service);
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
            let url = format!("http://{}/mcp", listener.local_addr()?);
            let listener = listener.tap_io(|tcp| {
                let _ = tcp.set_nodelay(true);
            });
            println!("URL {url}");
            axum::serve(listener, router).await?;
            url
        }
        other => return Err(format!("usage: http_load ours|rmcp (not {other:?})").into()),
    };
    let _ = url;
    Ok(())
}
