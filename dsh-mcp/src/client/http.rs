//! [`ClientBuilder::connect_http`]: Streamable HTTP on a pooling reqwest client.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use super::trace::TracedTransport;
use super::{ClientBuilder, ConnectError, McpClient};

/// Redirects the client follows for one request.
const MAX_REDIRECTS: usize = 10;

impl ClientBuilder {
    /// Connect to a Streamable HTTP server at `url` (feature `http`; `https://` URLs
    /// need the `https` feature), with this builder's headers and bearer token.
    ///
    /// # Errors
    ///
    /// See [`ConnectError`].
    pub async fn connect_http(&self, url: &str) -> Result<McpClient, ConnectError> {
        let config = self.http_config(url)?;
        let refused = RefusedRedirect::default();
        let http = pooled_http_client(&refused)?;
        #[cfg(feature = "oauth-client")]
        if let Some(oauth) = &self.oauth {
            let connected = self.connect_oauth(url, oauth.clone(), http, config).await;
            return connected.map_err(|e| refused.explain(e));
        }
        let transport = StreamableHttpClientTransport::with_client(http, config);
        self.connect_traced(TracedTransport::new(transport).server_url(url))
            .await
            .map_err(|e| refused.explain(e))
    }

    /// [`connect_http`](Self::connect_http) with OAuth: the failure of a handshake
    /// that stopped at authorizing is that [`OAuthError`](super::oauth::OAuthError).
    #[cfg(feature = "oauth-client")]
    async fn connect_oauth(
        &self,
        url: &str,
        oauth: super::oauth::OAuthConfig,
        http: reqwest::Client,
        mut config: StreamableHttpClientTransportConfig,
    ) -> Result<McpClient, ConnectError> {
        config.auth_header = None;
        let session = super::oauth::Session::new(oauth, url);
        let client = super::oauth::OAuthHttp::new(http, session.clone());
        let transport = StreamableHttpClientTransport::with_client(client, config);
        match self
            .connect_traced(TracedTransport::new(transport).server_url(url))
            .await
        {
            Ok(client) => Ok(client),
            Err(e @ ConnectError::Handshake(_)) => {
                Err(session.take_error().map(ConnectError::OAuth).unwrap_or(e))
            }
            Err(e) => Err(e),
        }
    }

    /// The transport's settings: the URL, the headers, the bearer token.
    pub(crate) fn http_config(
        &self,
        url: &str,
    ) -> Result<StreamableHttpClientTransportConfig, ConnectError> {
        let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
        if let Some(token) = &self.bearer_token {
            config = config.auth_header(token.clone());
        }
        let mut headers = HashMap::new();
        for (name, value) in &self.headers {
            let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| ConnectError::Header(format!("{name:?}: {e}")))?;
            let value = reqwest::header::HeaderValue::from_str(value)
                .map_err(|e| ConnectError::Header(format!("{name}: {e}")))?;
            headers.insert(name, value);
        }
        if !headers.is_empty() {
            config = config.custom_headers(headers);
        }
        Ok(config)
    }
}

/// The redirect to another origin a connection's client refused, if any: the
/// handshake's error then says so ([`ConnectError::Redirect`]) rather than what the
/// transport made of the refusal.
#[derive(Clone, Default)]
struct RefusedRedirect(Arc<Mutex<Option<(String, String)>>>);

impl RefusedRedirect {
    fn record(&self, from: String, to: String) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some((from, to));
    }

    fn explain(&self, error: ConnectError) -> ConnectError {
        match (
            &error,
            self.0.lock().unwrap_or_else(PoisonError::into_inner).take(),
        ) {
            (ConnectError::Handshake(_), Some((from, to))) => ConnectError::Redirect { from, to },
            _ => error,
        }
    }
}

/// The HTTP client of [`ClientBuilder::connect_http`]: rmcp's default client, but
/// keeping idle connections (rmcp's has no pool, so every request opened a new TCP
/// connection: about 50 µs of a 300–400 µs call on loopback, BENCHMARKS.md).
///
/// A connection goes back to the pool once its response is read to the end: rmcp's
/// transport reads a request's event stream past its response before dropping it, and
/// the server ends that stream right after the response. `TCP_NODELAY` (reqwest's
/// default) keeps a reused connection from waiting on the peer's delayed ACK. Redirects
/// are followed as rmcp's client follows them: only 307 and 308 (which keep the method
/// and the JSON-RPC body), only to the same origin (the session id and the bearer token
/// must not reach another host: a redirect to another origin is refused, and `refused`
/// keeps both URLs), at most [`MAX_REDIRECTS`].
fn pooled_http_client(refused: &RefusedRedirect) -> Result<reqwest::Client, ConnectError> {
    let refused = refused.clone();
    let redirects = reqwest::redirect::Policy::custom(move |attempt| {
        let keeps_body = matches!(
            attempt.status(),
            reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
        );
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if keeps_body && !same_origin {
            let from = attempt
                .previous()
                .last()
                .map(|u| u.to_string())
                .unwrap_or_default();
            let to = attempt.url().to_string();
            let error = format!("{from} redirects to {to}, another origin: not followed");
            refused.record(from, to);
            attempt.error(error)
        } else if !keeps_body {
            attempt.stop()
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    });
    reqwest::Client::builder()
        .tcp_nodelay(true)
        .redirect(redirects)
        .build()
        .map_err(|e| ConnectError::HttpClient(Box::new(e)))
}
