//! [`OAuthHttp`]: rmcp's Streamable HTTP client (reqwest) with the session's token on
//! every request, authorizing on 401 and stepping up on 403 `insufficient_scope`
//! before sending the request again.

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;

use super::OAuthError;
use super::flow::{Session, Tried};

type HttpError = StreamableHttpError<reqwest::Error>;

/// The HTTP client of a connection with OAuth: the pooled reqwest client and the
/// server's [`Session`].
#[derive(Clone)]
pub(crate) struct OAuthHttp {
    inner: reqwest::Client,
    session: Arc<Session>,
}

/// An OAuth failure as the transport's error: an I/O error whose source is the
/// [`OAuthError`] (found again by downcasting).
fn failed(e: OAuthError) -> HttpError {
    StreamableHttpError::Io(std::io::Error::other(e))
}

impl OAuthHttp {
    pub(crate) fn new(inner: reqwest::Client, session: Arc<Session>) -> OAuthHttp {
        OAuthHttp { inner, session }
    }

    /// Run `call` with the session's token, authorizing (or stepping up) and running
    /// it again while the server asks for it, within the session's bounds: one
    /// refresh and one authorization per request on 401, the step-up limit on 403.
    async fn authorized<T, F, Fut>(&self, call: F) -> Result<T, HttpError>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = Result<T, HttpError>>,
    {
        let mut token = self.session.token().await.map_err(failed)?;
        let mut tried = Tried::Nothing;
        loop {
            match call(token.clone()).await {
                Err(StreamableHttpError::AuthRequired(challenge)) => {
                    let (fresh, now) = self
                        .session
                        .unauthorized(&challenge.www_authenticate_header, token.as_deref(), tried)
                        .await
                        .map_err(failed)?;
                    token = Some(fresh);
                    tried = now;
                }
                Err(StreamableHttpError::InsufficientScope(challenge)) => {
                    let fresh = self
                        .session
                        .insufficient_scope(&challenge.www_authenticate_header, token.as_deref())
                        .await
                        .map_err(failed)?;
                    token = Some(fresh);
                    tried = Tried::Nothing;
                }
                Ok(answer) => {
                    if token.is_some() {
                        self.session.succeeded();
                    }
                    return Ok(answer);
                }
                Err(other) => return Err(other),
            }
        }
    }
}

// The transport's own `auth_header` is unused: a builder with OAuth sends no static
// bearer token.
impl StreamableHttpClient for OAuthHttp {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.authorized(|token| {
            self.inner.post_message(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.authorized(|token| {
            self.inner.post_message_with_max_sse_event_size(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.authorized(|token| {
            self.inner.post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
                limits,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        self.authorized(|token| {
            self.inner.delete_session(
                uri.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        self.authorized(|token| {
            self.inner.get_stream(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        self.authorized(|token| {
            self.inner.get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }
}
