//! The caller of a call on a session with server-to-client requests: its client.

use std::sync::Arc;

use dsh_runtime::caller::{
    AskingCall, CallerAnswer, CallerError, CallerFuture, CallerHandler, CallerRequest, LogLevel,
    LogMessage,
};
use rmcp::model::{
    CancelledNotificationParam, ClientCapabilities, ClientResult, ListRootsRequest, Request,
    ServerRequest,
};
use rmcp::service::PeerRequestOptions;
use rmcp::{Peer, RoleServer};

use super::logs::LogSink;
use super::{StreamCloser, can_answer, elicit_answer, elicit_params, read_answer, sample_params};

/// Sends a call's requests to its client and its logs as notifications.
pub(crate) struct SessionCaller {
    peer: Peer<RoleServer>,
    capabilities: Option<ClientCapabilities>,
    /// Whether requests can be sent at all (revisions with server-to-client requests).
    requests: bool,
    logs: Arc<LogSink>,
    /// Closes this call's HTTP stream (with its request's id), where it can be resumed.
    stream: Option<(StreamCloser, String)>,
}

impl SessionCaller {
    /// The caller of a call from `peer`, which declared `capabilities`; `requests`:
    /// whether the revision has server-to-client requests.
    pub(crate) fn new(
        peer: Peer<RoleServer>,
        capabilities: Option<ClientCapabilities>,
        requests: bool,
        logs: Arc<LogSink>,
    ) -> Arc<Self> {
        Arc::new(SessionCaller {
            peer,
            capabilities,
            requests,
            logs,
            stream: None,
        })
    }

    /// With the closer of the call's HTTP stream and its request's id.
    pub(crate) fn with_stream(
        peer: Peer<RoleServer>,
        capabilities: Option<ClientCapabilities>,
        requests: bool,
        logs: Arc<LogSink>,
        stream: Option<(StreamCloser, String)>,
    ) -> Arc<Self> {
        Arc::new(SessionCaller {
            peer,
            capabilities,
            requests,
            logs,
            stream,
        })
    }

    async fn ask(&self, request: CallerRequest) -> Result<CallerAnswer, CallerError> {
        let kind = request.kind();
        if !self.requests || !can_answer(self.capabilities.as_ref(), kind) {
            return Err(CallerError::Unsupported {
                capability: kind.capability(),
            });
        }
        let sent = match &request {
            CallerRequest::Form(_) | CallerRequest::Url(_) => {
                ServerRequest::ElicitRequest(Request::new(elicit_params(&request)?))
            }
            CallerRequest::Sample(_) => {
                ServerRequest::CreateMessageRequest(Request::new(sample_params(&request)?))
            }
            _ => ServerRequest::ListRootsRequest(ListRootsRequest::default()),
        };
        let handle = self
            .peer
            .send_cancellable_request(sent, PeerRequestOptions::no_options())
            .await
            .map_err(|e| CallerError::Failed(e.to_string()))?;
        // Dropped before the answer (the call was cancelled): withdraw the request.
        let mut withdraw = Withdraw(Some((self.peer.clone(), handle.id.clone())));
        let answer = handle.await_response().await;
        withdraw.0 = None;
        match answer.map_err(|e| CallerError::Failed(e.to_string()))? {
            ClientResult::ElicitResult(result) => Ok(elicit_answer(kind, result)),
            other => {
                let value = serde_json::to_value(&other)
                    .map_err(|e| CallerError::InvalidAnswer(e.to_string()))?;
                read_answer(kind, &value)
            }
        }
    }
}

/// Sends `notifications/cancelled` for a request whose wait was dropped.
struct Withdraw(Option<(Peer<RoleServer>, rmcp::model::RequestId)>);

impl Drop for Withdraw {
    fn drop(&mut self) {
        if let Some((peer, id)) = self.0.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(async move {
                let _ = peer
                    .notify_cancelled(CancelledNotificationParam::new(
                        Some(id),
                        Some("the call was cancelled".to_string()),
                    ))
                    .await;
            });
        }
    }
}

impl CallerHandler for SessionCaller {
    fn request<'a>(
        &'a self,
        _call: AskingCall<'a>,
        request: CallerRequest,
    ) -> CallerFuture<'a, Result<CallerAnswer, CallerError>> {
        Box::pin(self.ask(request))
    }

    fn log(&self, _call: AskingCall<'_>, message: LogMessage) {
        self.logs.log(message);
    }

    fn logs_at(&self, level: LogLevel) -> bool {
        self.logs.accepts(level)
    }

    fn close_stream<'a>(
        &'a self,
        _call: AskingCall<'a>,
        retry: std::time::Duration,
    ) -> CallerFuture<'a, bool> {
        match &self.stream {
            Some((closer, request)) => (closer.0)(request.clone(), retry),
            None => Box::pin(std::future::ready(false)),
        }
    }
}
