//! What a load balancer asks of a server, and the drain before it stops: the liveness
//! (`GET /healthz`) and readiness (`GET /readyz`) answers, the requests in progress, and
//! the refusal of new requests once the server drains (see `HttpServer::drain`).

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::store::Store;
use crate::wire::{Header, Refusal};

/// The path of the liveness answer.
pub(crate) const HEALTH_PATH: &str = "/healthz";
/// The path of the readiness answer.
pub(crate) const READY_PATH: &str = "/readyz";

/// How long the readiness answer waits for the store's.
const STORE_PATIENCE: Duration = Duration::from_secs(2);

/// Whether the server drains, and its requests in progress.
#[derive(Debug, Default)]
pub(crate) struct Lifecycle {
    draining: AtomicBool,
    in_flight: AtomicUsize,
    idle: tokio::sync::Notify,
}

impl Lifecycle {
    /// Whether the server drains: new requests are refused.
    pub(crate) fn draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    /// Refuse new requests from now on.
    pub(crate) fn start_draining(&self) {
        self.draining.store(true, Ordering::SeqCst);
    }

    /// A request in progress until the guard is dropped.
    pub(crate) fn begin(self: &Arc<Self>) -> InProgress {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        InProgress(self.clone())
    }

    /// The requests in progress now.
    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::SeqCst)
    }

    /// Wait until no request is in progress.
    pub(crate) async fn idle(&self) {
        loop {
            let notified = self.idle.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.in_flight() == 0 {
                return;
            }
            notified.await;
        }
    }
}

/// A request in progress (see [`Lifecycle::begin`]).
#[derive(Debug)]
pub(crate) struct InProgress(Arc<Lifecycle>);

impl Drop for InProgress {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

/// `response`, its request in progress until its body has been sent or dropped (a call's
/// answer streams after the handler returned).
pub(crate) fn hold(response: Response, guard: InProgress) -> Response {
    let (parts, body) = response.into_parts();
    Response::from_parts(
        parts,
        Body::new(Held {
            body,
            _guard: guard,
        }),
    )
}

/// A body that keeps its request in progress.
struct Held {
    body: Body,
    _guard: InProgress,
}

impl HttpBody for Held {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

/// The answer to a request while the server drains: `503`, to be retried elsewhere.
pub(crate) fn draining() -> Response {
    Refusal::text(
        503,
        "Service Unavailable: the server is draining; retry on another instance\n",
    )
    .with_header(Header::RetryAfter, "1")
    .with_header(Header::Connection, "close")
    .with_header(Header::ContentType, "text/plain")
    .into_response()
}

/// What a probe asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Probe {
    /// `GET /healthz`: whether the process serves.
    Health,
    /// `GET /readyz`: whether it takes requests.
    Ready,
}

/// The probe `request` is, if it is one.
pub(crate) fn probe(request: &Request) -> Option<Probe> {
    if !matches!(*request.method(), Method::GET | Method::HEAD) {
        return None;
    }
    match request.uri().path() {
        HEALTH_PATH => Some(Probe::Health),
        READY_PATH => Some(Probe::Ready),
        _ => None,
    }
}

/// The answer to `probe`.
pub(crate) async fn answer(
    probe: Probe,
    lifecycle: &Lifecycle,
    store: &Arc<dyn Store>,
) -> Response {
    if probe == Probe::Health {
        return plain(StatusCode::OK, "ok\n".to_string());
    }
    if lifecycle.draining() {
        return plain(StatusCode::SERVICE_UNAVAILABLE, "draining\n".into());
    }
    match tokio::time::timeout(STORE_PATIENCE, store.ping()).await {
        Ok(Ok(())) => plain(StatusCode::OK, "ready\n".to_string()),
        Ok(Err(e)) => plain(StatusCode::SERVICE_UNAVAILABLE, format!("{e}\n")),
        Err(_) => plain(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("the task store did not answer within {STORE_PATIENCE:?}\n"),
        ),
    }
}

fn plain(status: StatusCode, text: String) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "text/plain"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        text,
    )
        .into_response()
}
