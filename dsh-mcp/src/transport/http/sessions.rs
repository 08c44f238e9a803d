//! Sessions that stay alive while they are in use: rmcp's [`LocalSessionManager`]
//! without its own keep-alive (which reaps a session a fixed time after the last event
//! its worker saw, even under a running call), and an idle timer that counts from the
//! end of the session's last request or stream and never fires while one is open.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    EventStore, RestoreOutcome, ServerSseMessage, SessionId,
};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::util::lock;

/// What a session is doing: how many requests and streams are open, and when the last
/// one ended.
#[derive(Debug)]
struct Activity {
    open: usize,
    last: Instant,
}

/// The activity of each session. The map holds plain counters: a panic elsewhere leaves
/// it consistent, so a poisoned lock is taken as it is ([`lock`]).
type Activities = Arc<Mutex<HashMap<SessionId, Activity>>>;

/// A [`LocalSessionManager`] whose sessions end after `idle` without an open request or
/// stream (never, when `idle` is `None`).
#[derive(Debug)]
pub(super) struct IdleSessions {
    inner: Arc<LocalSessionManager>,
    activities: Activities,
    /// The HTTP stream of each request in flight, by session and request id (the text of
    /// its JSON-RPC id): what a call closes to be resumed later (SEP-1699).
    streams: Streams,
}

/// See [`IdleSessions::streams`].
type Streams = Arc<Mutex<HashMap<(SessionId, String), u64>>>;

impl IdleSessions {
    /// The manager, and (with an idle timeout) the task that ends idle sessions until
    /// `stop` is cancelled.
    pub(super) fn new(idle: Option<Duration>, stop: CancellationToken) -> IdleSessions {
        let mut inner = LocalSessionManager::default();
        // The idle timer below replaces the worker's keep-alive.
        inner.session_config.keep_alive = None;
        let sessions = IdleSessions {
            inner: Arc::new(inner),
            activities: Arc::default(),
            streams: Arc::default(),
        };
        if let Some(idle) = idle {
            tokio::spawn(reap(
                sessions.inner.clone(),
                sessions.activities.clone(),
                idle,
                stop,
            ));
        }
        sessions
    }

    /// Close the stream the request `request` (the text of its id) of session `session`
    /// is answered on, telling the client to come back after `retry`: it resumes the
    /// stream with `Last-Event-ID` and gets what was sent since, the answer included.
    /// `false` when the request has no stream open here.
    pub(super) async fn close_request_stream(
        &self,
        session: &SessionId,
        request: &str,
        retry: Duration,
    ) -> bool {
        let stream = lock(&self.streams)
            .get(&(session.clone(), request.to_string()))
            .copied();
        let Some(stream) = stream else {
            return false;
        };
        let handle = self.inner.sessions.read().await.get(session).cloned();
        match handle {
            Some(handle) => handle.close_sse_stream(stream, Some(retry)).await.is_ok(),
            None => false,
        }
    }

    /// Mark the session busy until the returned guard drops.
    fn busy(&self, id: &SessionId) -> Busy {
        if let Some(activity) = lock(&self.activities).get_mut(id) {
            activity.open += 1;
        }
        Busy {
            id: id.clone(),
            activities: self.activities.clone(),
        }
    }
}

/// End the sessions idle for `idle`, checking a few times per `idle`.
async fn reap(
    inner: Arc<LocalSessionManager>,
    activities: Activities,
    idle: Duration,
    stop: CancellationToken,
) {
    let period = (idle / 4).clamp(Duration::from_millis(10), Duration::from_secs(5));
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(period) => {}
        }
        let now = Instant::now();
        let expired: Vec<SessionId> = {
            let mut activities = lock(&activities);
            let expired: Vec<SessionId> = activities
                .iter()
                .filter(|(_, a)| a.open == 0 && now.duration_since(a.last) >= idle)
                .map(|(id, _)| id.clone())
                .collect();
            for id in &expired {
                activities.remove(id);
            }
            expired
        };
        for id in expired {
            tracing::info!(session = id.as_ref(), ?idle, "closing an idle MCP session");
            if let Err(e) = inner.close_session(&id).await {
                tracing::warn!(session = id.as_ref(), "closing an idle MCP session: {e}");
            }
        }
    }
}

/// A request or stream of a session in progress; its end restarts the idle timer.
#[derive(Debug)]
struct Busy {
    id: SessionId,
    activities: Activities,
}

impl Drop for Busy {
    fn drop(&mut self) {
        if let Some(activity) = lock(&self.activities).get_mut(&self.id) {
            activity.open = activity.open.saturating_sub(1);
            activity.last = Instant::now();
        }
    }
}

/// A session's response stream, keeping it busy while open.
struct Tracked {
    inner: Pin<Box<dyn Stream<Item = ServerSseMessage> + Send + Sync>>,
    _busy: Busy,
    /// The request's entry in [`IdleSessions::streams`], removed with the stream.
    _stream: Option<StreamEntry>,
}

/// Removes a request's stream from [`IdleSessions::streams`] when dropped.
struct StreamEntry {
    streams: Streams,
    key: (SessionId, String),
}

impl Drop for StreamEntry {
    fn drop(&mut self) {
        lock(&self.streams).remove(&self.key);
    }
}

/// The HTTP stream id in an event id of rmcp's local sessions (`<index>/<stream>`).
fn stream_of(event: &ServerSseMessage) -> Option<u64> {
    event.event_id.as_deref()?.split_once('/')?.1.parse().ok()
}

impl Stream for Tracked {
    type Item = ServerSseMessage;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.as_mut().poll_next(cx)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl SessionManager for IdleSessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, transport) = self.inner.create_session().await?;
        lock(&self.activities).insert(
            id.clone(),
            Activity {
                open: 0,
                last: Instant::now(),
            },
        );
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        let _busy = self.busy(id);
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        lock(&self.activities).remove(id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let busy = self.busy(id);
        let request = match &message {
            ClientJsonRpcMessage::Request(r) => Some(r.id.to_string()),
            _ => None,
        };
        let mut stream = Box::pin(self.inner.create_stream(id, message).await?);
        // The stream opens with its priming event, whose id names the stream.
        let first = futures_util::StreamExt::next(&mut stream).await;
        let entry = match (&request, first.as_ref().and_then(stream_of)) {
            (Some(request), Some(http)) => {
                let key = (id.clone(), request.clone());
                lock(&self.streams).insert(key.clone(), http);
                Some(StreamEntry {
                    streams: self.streams.clone(),
                    key,
                })
            }
            _ => None,
        };
        let first = futures_util::stream::iter(first);
        Ok(Tracked {
            inner: Box::pin(futures_util::StreamExt::chain(first, stream)),
            _busy: busy,
            _stream: entry,
        })
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        let _busy = self.busy(id);
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let busy = self.busy(id);
        let stream = self.inner.create_standalone_stream(id).await?;
        Ok(Tracked {
            inner: Box::pin(stream),
            _busy: busy,
            _stream: None,
        })
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let busy = self.busy(id);
        let stream = self.inner.resume(id, last_event_id).await?;
        Ok(Tracked {
            inner: Box::pin(stream),
            _busy: busy,
            _stream: None,
        })
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.inner.restore_session(id).await
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}
