//! The connection loop: `TCP_NODELAY` on every connection, a header-read timeout, a cap
//! on concurrent connections, and a graceful shutdown with a bounded wait.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// How long a stopping server waits for its connections to finish their responses
/// (every session's streams end when the server stops) before it drops them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// What a connection over the cap is told before it is closed.
const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\n\
content-type: text/plain\r\ncontent-length: 39\r\n\r\ntoo many connections, try again later.\n";

/// The limits of the connection loop.
#[derive(Clone, Copy, Debug)]
pub(super) struct Limits {
    pub(super) header_read_timeout: Duration,
    pub(super) max_connections: usize,
}

/// Serve `router` on `listener` until `stop` is cancelled.
pub(super) async fn serve(
    listener: TcpListener,
    router: axum::Router,
    limits: Limits,
    stop: CancellationToken,
) -> io::Result<()> {
    let permits = Arc::new(Semaphore::new(limits.max_connections));
    let closing = CancellationToken::new();
    let mut connections = JoinSet::new();
    loop {
        let stream = tokio::select! {
            () = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => stream,
                Err(e) => {
                    // Out of descriptors, or a connection reset before it was accepted:
                    // wait a moment rather than spin, and keep serving.
                    tracing::warn!("MCP over HTTP: cannot accept a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        while connections.try_join_next().is_some() {}
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            refuse(&stream);
            continue;
        };
        if let Err(e) = stream.set_nodelay(true) {
            tracing::warn!("MCP over HTTP: cannot set TCP_NODELAY: {e}");
        }
        let service = TowerToHyperService::new(router.clone());
        let closing = closing.clone();
        connections.spawn(async move {
            let _permit = permit;
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_read_timeout)
                .keep_alive(true);
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            tokio::pin!(connection);
            tokio::select! {
                result = connection.as_mut() => {
                    if let Err(e) = result {
                        tracing::debug!("MCP over HTTP: connection ended: {e}");
                    }
                    return;
                }
                () = closing.cancelled() => connection.as_mut().graceful_shutdown(),
            }
            if let Err(e) = connection.await {
                tracing::debug!("MCP over HTTP: connection ended: {e}");
            }
        });
    }
    drop(listener);
    closing.cancel();
    let drained = tokio::time::timeout(SHUTDOWN_GRACE, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            "MCP over HTTP: {} connection(s) still open after {SHUTDOWN_GRACE:?}, dropped",
            connections.len()
        );
        connections.shutdown().await;
    }
    Ok(())
}

/// Tell a connection over the cap that the server is busy, without waiting on it, and
/// close it (dropping the stream frees its descriptor at once).
fn refuse(stream: &TcpStream) {
    let _ = stream.try_write(BUSY);
}
