//! [`OAuthHttp`]: rmcp's Streamable HTTP client (reqwest) with the session's token on
//! every request, authorizing on 401 and stepping up on 403 `insufficient_scope`
//! before sending the request again. A DPoP-bound token goes as `Authorization: DPoP`
//! with a fresh proof, and the server's `use_dpop_nonce` is answered with its nonce.

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
use super::dpop::{self, Dpop};
use super::flow::{Session, Tried};

type Headers = HashMap<HeaderName, HeaderValue>;

/// What a request is, for its DPoP proof (and the nonce probe).
struct Target<'a> {
    method: &'static str,
    uri: &'a str,
    session_id: Option<&'a str>,
    headers: &'a Headers,
}

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

    /// Run `call` with the session's token (rmcp's bearer token, or DPoP headers
    /// added to the request's), authorizing (or stepping up) and running it again
    /// while the server asks for it, within the session's bounds: one refresh and one
    /// authorization per request on 401, the step-up limit on 403, one nonce retry.
    async fn authorized<T, F, Fut>(&self, target: Target<'_>, call: F) -> Result<T, HttpError>
    where
        F: Fn(Option<String>, Headers) -> Fut,
        Fut: Future<Output = Result<T, HttpError>>,
    {
        let mut token = self.session.token().await.map_err(failed)?;
        let mut tried = Tried::Nothing;
        let mut nonce_asked = false;
        loop {
            let (bearer, headers) = match (self.session.dpop(), token.as_deref()) {
                (Some(key), Some(token)) => (None, dpop_headers(&key, &target, token)),
                _ => (token.clone(), target.headers.clone()),
            };
            match call(bearer, headers).await {
                Err(StreamableHttpError::AuthRequired(challenge))
                    if !nonce_asked && dpop::wants_nonce(&challenge.www_authenticate_header) =>
                {
                    let (Some(key), Some(token)) = (self.session.dpop(), token.as_deref()) else {
                        return Err(StreamableHttpError::AuthRequired(challenge));
                    };
                    nonce_asked = true;
                    self.fetch_nonce(&key, &target, token).await?;
                }
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

    /// The MCP server answered `use_dpop_nonce`, but rmcp's error drops its
    /// `DPoP-Nonce` header: ask again with a `ping` (harmless if the server takes it)
    /// and keep the nonce of that answer.
    async fn fetch_nonce(
        &self,
        key: &Dpop,
        target: &Target<'_>,
        token: &str,
    ) -> Result<(), HttpError> {
        let mut request = self
            .inner
            .post(target.uri)
            .header(
                reqwest::header::ACCEPT,
                "application/json, text/event-stream",
            )
            .header(reqwest::header::CONTENT_TYPE, "application/json");
        for (name, value) in target.headers {
            // The standard headers of the request probed would not match the ping.
            let name_str = name.as_str();
            if !name_str.starts_with("mcp-") || name_str == "mcp-protocol-version" {
                request = request.header(name, value);
            }
        }
        if target.headers.keys().any(|n| n.as_str() == "mcp-method") {
            request = request.header("mcp-method", "ping");
        }
        if let Some(session_id) = target.session_id {
            request = request.header("mcp-session-id", session_id);
        }
        let probe = Target {
            method: "POST",
            ..*target
        };
        for (name, value) in dpop_headers(key, &probe, token) {
            request = request.header(name, value);
        }
        let body = r#"{"jsonrpc":"2.0","id":"dpop-nonce","method":"ping"}"#;
        let response = request.body(body).send().await?;
        match dpop::header_str(response.headers(), dpop::NONCE_HEADER) {
            Some(nonce) => {
                key.set_rs_nonce(nonce);
                Ok(())
            }
            None => Err(failed(OAuthError::Rejected {
                url: target.uri.to_string(),
                challenge: format!(
                    "use_dpop_nonce without a DPoP-Nonce header (HTTP {})",
                    response.status()
                ),
            })),
        }
    }
}

/// `headers` with `Authorization: DPoP <token>` and a fresh proof for `target`.
fn dpop_headers(key: &Dpop, target: &Target<'_>, token: &str) -> Headers {
    let mut headers = target.headers.clone();
    let proof = key.proof(
        target.method,
        target.uri,
        Some(token),
        key.rs_nonce().as_deref(),
    );
    if let (Ok(auth), Ok(proof)) = (
        HeaderValue::from_str(&format!("DPoP {token}")),
        HeaderValue::from_str(&proof),
    ) {
        headers.insert(reqwest::header::AUTHORIZATION, auth);
        headers.insert(HeaderName::from_static("dpop"), proof);
    }
    headers
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
        let target = Target {
            method: "POST",
            uri: &uri,
            session_id: session_id.as_deref(),
            headers: &custom_headers,
        };
        self.authorized(target, |token, headers| {
            self.inner.post_message(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                headers,
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
        let target = Target {
            method: "POST",
            uri: &uri,
            session_id: session_id.as_deref(),
            headers: &custom_headers,
        };
        self.authorized(target, |token, headers| {
            self.inner.post_message_with_max_sse_event_size(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                headers,
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
        let target = Target {
            method: "POST",
            uri: &uri,
            session_id: session_id.as_deref(),
            headers: &custom_headers,
        };
        self.authorized(target, |token, headers| {
            self.inner.post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                headers,
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
        let target = Target {
            method: "DELETE",
            uri: &uri,
            session_id: Some(&session_id),
            headers: &custom_headers,
        };
        self.authorized(target, |token, headers| {
            self.inner
                .delete_session(uri.clone(), session_id.clone(), token, headers)
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
        let target = Target {
            method: "GET",
            uri: &uri,
            session_id: session_id.as_deref(),
            headers: &custom_headers,
        };
        self.authorized(target, |token, headers| {
            self.inner.get_stream(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                headers,
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
        let target = Target {
            method: "GET",
            uri: &uri,
            session_id: session_id.as_deref(),
            headers: &custom_headers,
        };
        self.authorized(target, |token, headers| {
            self.inner.get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                headers,
                max_sse_event_size,
            )
        })
        .await
    }
}
