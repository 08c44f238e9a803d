//! The connection loop: `TCP_NODELAY` on every connection, a header-read timeout, a cap
//! on concurrent connections, and a graceful shutdown with a bounded wait.
//!
//! At the cap (or when the process is out of descriptors) the connections that are not
//! in a request go first: a connection still sending its first request head, or idle
//! between requests, is *waiting*; the one waiting longest is closed to make room for
//! the newcomer. Connections with a request in progress (a call, an open event stream)
//! are never closed for it; when every connection is in a request, the newcomer is
//! answered `503`. So clients that open connections and stall in their headers cannot
//! lock out others, however many they open: each newcomer displaces the oldest staller.

use std::collections::HashMap;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::util::lock;
use crate::wire::{Header, Refusal};

/// How long a stopping server waits for its connections to finish their responses
/// (every session's streams end when the server stops) before it drops them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// What a connection over the cap is told before it is closed.
fn busy() -> Vec<u8> {
    super::messages::http1_bytes(
        Refusal::text(503, "too many connections, try again later.\n")
            .with_header(Header::Connection, "close")
            .with_header(Header::ContentType, "text/plain"),
    )
}

/// The limits of the connection loop.
#[derive(Clone, Copy, Debug)]
pub(super) struct Limits {
    pub(super) header_read_timeout: Duration,
    pub(super) max_connections: usize,
}

/// How long a newcomer waits for the place of the connection closed for it.
const EVICTION_WAIT: Duration = Duration::from_millis(500);

/// The open connections, for choosing which to close at the cap.
#[derive(Default)]
struct Connections {
    next: AtomicU64,
    open: Mutex<HashMap<u64, Arc<Conn>>>,
}

/// One open connection: how many requests it has in progress, since when it waits
/// (none in progress), and how to close it.
struct Conn {
    in_flight: AtomicUsize,
    waiting_since: Mutex<Instant>,
    close: CancellationToken,
}

impl Connections {
    fn open(self: &Arc<Self>) -> (u64, Arc<Conn>) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let conn = Arc::new(Conn {
            in_flight: AtomicUsize::new(0),
            waiting_since: Mutex::new(Instant::now()),
            close: CancellationToken::new(),
        });
        lock(&self.open).insert(id, conn.clone());
        (id, conn)
    }

    fn closed(&self, id: u64) {
        lock(&self.open).remove(&id);
    }

    /// Close the connection waiting longest; `false` when every one is in a request.
    fn evict_oldest_waiting(&self) -> bool {
        let open = lock(&self.open);
        let oldest = open
            .values()
            .filter(|c| c.in_flight.load(Ordering::SeqCst) == 0 && !c.close.is_cancelled())
            .min_by_key(|c| *lock(&c.waiting_since));
        match oldest {
            Some(conn) => {
                conn.close.cancel();
                true
            }
            None => false,
        }
    }
}

/// Counts a request in progress on its connection until its response body is done.
struct InRequest(Arc<Conn>);

impl InRequest {
    fn begin(conn: &Arc<Conn>) -> Self {
        conn.in_flight.fetch_add(1, Ordering::SeqCst);
        InRequest(conn.clone())
    }
}

impl Drop for InRequest {
    fn drop(&mut self) {
        // Waiting from now on, when it was the last.
        *lock(&self.0.waiting_since) = Instant::now();
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A response body that keeps its request counted until it is dropped (written, or the
/// connection gone).
struct Counted {
    body: axum::body::Body,
    _request: InRequest,
}

impl hyper::body::Body for Counted {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

/// The connection's service: the router, each request counted on `conn`.
#[derive(Clone)]
struct Counting {
    inner: TowerToHyperService<axum::Router>,
    conn: Arc<Conn>,
    /// The connection's peer, given to each request where it may be traced.
    peer: std::net::SocketAddr,
}

type Incoming = axum::http::Request<hyper::body::Incoming>;

impl hyper::service::Service<Incoming> for Counting {
    type Response = axum::http::Response<Counted>;
    type Error = std::convert::Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn call(&self, mut request: Incoming) -> Self::Future {
        let counted = InRequest::begin(&self.conn);
        // For the server span's `client.address`: only while a subscriber may want it.
        if tracing::level_enabled!(tracing::Level::INFO) {
            request
                .extensions_mut()
                .insert(crate::server::trace::PeerAddr(self.peer));
        }
        let response = self.inner.call(request);
        Box::pin(async move {
            let response = response.await?;
            Ok(response.map(|body| Counted {
                body,
                _request: counted,
            }))
        })
    }
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
    let open = Arc::new(Connections::default());
    loop {
        let (stream, peer) = tokio::select! {
            () = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of descriptors, or a connection reset before it was accepted:
                    // free a descriptor held by a waiting connection, wait a moment
                    // rather than spin, and keep serving.
                    tracing::warn!("MCP over HTTP: cannot accept a connection: {e}");
                    open.evict_oldest_waiting();
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        while connections.try_join_next().is_some() {}
        let Some(permit) = admit(&permits, &open, &stream).await else {
            continue;
        };
        if let Err(e) = stream.set_nodelay(true) {
            tracing::warn!("MCP over HTTP: cannot set TCP_NODELAY: {e}");
        }
        let (id, conn) = open.open();
        let service = Counting {
            inner: TowerToHyperService::new(router.clone()),
            conn: conn.clone(),
            peer,
        };
        let held = (permit, Forget(open.clone(), id));
        connections.spawn(serve_connection(
            stream,
            service,
            limits,
            conn,
            closing.clone(),
            held,
        ));
    }
    drop(listener);
    closing.cancel();
    drain(connections).await;
    Ok(())
}

/// A permit for a new connection, or `None` when it was refused (503). At the cap the
/// connection waiting longest for its request head makes room, if there is one.
async fn admit(
    permits: &Arc<Semaphore>,
    open: &Connections,
    stream: &TcpStream,
) -> Option<OwnedSemaphorePermit> {
    match permits.clone().try_acquire_owned() {
        Ok(permit) => Some(permit),
        Err(_) if open.evict_oldest_waiting() => {
            match tokio::time::timeout(EVICTION_WAIT, permits.clone().acquire_owned()).await {
                Ok(Ok(permit)) => Some(permit),
                _ => {
                    refuse(stream);
                    None
                }
            }
        }
        Err(_) => {
            refuse(stream);
            None
        }
    }
}

/// One connection, served until it ends, is closed to make room, or the server stops
/// (then gracefully). `held` is dropped when it ends: the permit and the registration.
async fn serve_connection(
    stream: TcpStream,
    service: Counting,
    limits: Limits,
    conn: Arc<Conn>,
    closing: CancellationToken,
    held: (OwnedSemaphorePermit, Forget),
) {
    let _held = held;
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
        // Closed to make room: dropped at once (it was in no request).
        () = conn.close.cancelled() => return,
        () = closing.cancelled() => connection.as_mut().graceful_shutdown(),
    }
    if let Err(e) = connection.await {
        tracing::debug!("MCP over HTTP: connection ended: {e}");
    }
}

/// Wait up to [`SHUTDOWN_GRACE`] for the open connections to end, then drop the rest.
async fn drain(mut connections: JoinSet<()>) {
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
}

/// Forgets its connection when the connection's task ends.
struct Forget(Arc<Connections>, u64);

impl Drop for Forget {
    fn drop(&mut self) {
        self.0.closed(self.1);
    }
}

/// Tell a connection over the cap that the server is busy, without waiting on it, and
/// close it (dropping the stream frees its descriptor at once).
fn refuse(stream: &TcpStream) {
    let _ = stream.try_write(&busy());
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_connection_over_the_cap_is_told_the_server_is_busy() {
        assert_eq!(
            super::busy(),
            b"HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-type: \
              text/plain\r\ncontent-length: 39\r\n\r\ntoo many connections, try again later.\n"
        );
    }
}
