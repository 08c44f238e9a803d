//! [`OAuthError`]: what went wrong while authorizing, and where.

use rmcp::transport::auth::AuthError;

/// Why an OAuth authorization (or a refresh) failed, with the URL it failed at.
///
/// A connection whose handshake fails this way returns it as
/// [`ConnectError::OAuth`](crate::ConnectError::OAuth); a request that fails this way
/// later in the session carries it as the source of its transport error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthError {
    /// A protected-resource or authorization-server metadata document is missing,
    /// malformed or does not describe this server.
    #[error("OAuth metadata discovery for {url} failed: {reason}")]
    Metadata {
        /// The document's URL (or the MCP server's, when no document was found).
        url: String,
        /// What was wrong with it.
        reason: String,
    },
    /// Dynamic client registration failed.
    #[error("OAuth client registration at {url} failed: {reason}")]
    Registration {
        /// The authorization server's registration endpoint (or its issuer).
        url: String,
        /// The endpoint's answer.
        reason: String,
    },
    /// The token endpoint answered an error (`error` and `error_description` are in
    /// `reason`), or an answer that is not a token.
    #[error("the token endpoint {url} refused the token request: {reason}")]
    TokenEndpoint {
        /// The token endpoint.
        url: String,
        /// The endpoint's `error` and `error_description`, or why its answer is unusable.
        reason: String,
    },
    /// Refreshing the access token failed. The stored tokens are cleared: the next
    /// connection authorizes again.
    #[error("refreshing the access token at {url} failed: {reason}")]
    Refresh {
        /// The token endpoint.
        url: String,
        /// The endpoint's answer.
        reason: String,
    },
    /// The authorization step failed: the host's
    /// [`AuthorizationCallback`](super::AuthorizationCallback) returned an error, or the
    /// redirect it returned does not answer this authorization (wrong `state`, an
    /// `error` parameter, an `iss` that is not the authorization server's, RFC 9207).
    #[error("the authorization at {url} failed: {reason}")]
    Authorization {
        /// The authorization endpoint.
        url: String,
        /// What was wrong.
        reason: String,
    },
    /// The server kept answering `insufficient_scope` after the configured number of
    /// step-up authorizations ([`OAuthConfig::max_step_ups`](super::OAuthConfig::max_step_ups)).
    #[error(
        "the MCP server {url} still answers insufficient_scope (wants {scope:?}) after {attempts} step-up authorizations"
    )]
    StepUpLimit {
        /// The MCP server.
        url: String,
        /// The scope its last challenge asked for.
        scope: String,
        /// The step-up authorizations made.
        attempts: u32,
    },
    /// The server answered 401 again right after a new authorization.
    #[error("the MCP server {url} rejects the access token it was just issued: {challenge}")]
    Rejected {
        /// The MCP server.
        url: String,
        /// Its `WWW-Authenticate` challenge.
        challenge: String,
    },
    /// The configuration cannot work with this server (e.g. no way to register a
    /// client, an unreadable private key).
    #[error("OAuth configuration for {url}: {reason}")]
    Config {
        /// The MCP server.
        url: String,
        /// What is missing or wrong.
        reason: String,
    },
    /// The token store failed to load or save.
    #[error("the OAuth token store failed: {0}")]
    Store(String),
}

impl OAuthError {
    /// Classify an rmcp error of the step that ran against `url`.
    pub(crate) fn from_auth(step: Step, url: &str, error: AuthError) -> OAuthError {
        let url = url.to_string();
        match error {
            AuthError::ProtectedResourceMetadataInvalid { url, reason } => OAuthError::Metadata {
                url: url.to_string(),
                reason: reason.to_string(),
            },
            AuthError::DiscoveryRequestFailed { url, source } => OAuthError::Metadata {
                url: url.to_string(),
                reason: source.to_string(),
            },
            e @ AuthError::AuthorizationServersUnavailable { .. } => OAuthError::Metadata {
                url,
                reason: e.to_string(),
            },
            AuthError::MetadataError(reason) => OAuthError::Metadata { url, reason },
            e @ (AuthError::NoAuthorizationSupport | AuthError::PkceUnsupported) => {
                OAuthError::Metadata {
                    url,
                    reason: e.to_string(),
                }
            }
            AuthError::CredentialStoreError(reason) => OAuthError::Store(reason),
            AuthError::RegistrationFailed(reason) => OAuthError::Registration { url, reason },
            AuthError::TokenRefreshFailed(reason) | AuthError::TokenRefreshRejected(reason) => {
                OAuthError::Refresh { url, reason }
            }
            AuthError::TokenExchangeFailed(reason) | AuthError::ClientCredentialsError(reason) => {
                OAuthError::TokenEndpoint { url, reason }
            }
            e @ (AuthError::AuthorizationServerMismatch { .. }
            | AuthError::AuthorizationServerMissingIssuer { .. }) => OAuthError::Authorization {
                url,
                reason: e.to_string(),
            },
            other => match step {
                Step::Discovery => OAuthError::Metadata {
                    url,
                    reason: other.to_string(),
                },
                Step::Registration => OAuthError::Registration {
                    url,
                    reason: other.to_string(),
                },
                Step::Authorization => OAuthError::Authorization {
                    url,
                    reason: other.to_string(),
                },
                Step::Token => OAuthError::TokenEndpoint {
                    url,
                    reason: other.to_string(),
                },
                Step::Refresh => OAuthError::Refresh {
                    url,
                    reason: other.to_string(),
                },
            },
        }
    }
}

/// The step of the flow an rmcp error came from (for the errors that do not say).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Step {
    Discovery,
    Registration,
    Authorization,
    Token,
    Refresh,
}

/// Why none of `servers` published usable metadata, when rmcp's discovery only says
/// that none did: the first well-known document that answers but is malformed (not a
/// JSON object, without an endpoint it must name, or naming another issuer), with its
/// URL. `None` when every candidate is simply absent or unreachable.
pub(crate) async fn diagnose_metadata(servers: &[String]) -> Option<(String, String)> {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(std::time::Duration::from_secs(30))
        .build()
        .ok()?;
    for server in servers {
        for url in well_known_urls(server) {
            let Ok(response) = http.get(&url).send().await else {
                continue;
            };
            if !response.status().is_success() {
                continue;
            }
            let Ok(body) = bounded_body(response).await else {
                continue;
            };
            if let Some(reason) = metadata_problem(server, &body) {
                return Some((url, reason));
            }
        }
    }
    None
}

/// The authorization server metadata URLs of `issuer` (RFC 8414 and OpenID Connect
/// Discovery, with path insertion for an issuer with a path).
fn well_known_urls(issuer: &str) -> Vec<String> {
    let Ok(url) = reqwest::Url::parse(issuer) else {
        return Vec::new();
    };
    let origin = url.origin().ascii_serialization();
    let path = url.path().trim_end_matches('/');
    if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    }
}

/// What is wrong with the metadata document `body` of `issuer`, if anything.
fn metadata_problem(issuer: &str, body: &[u8]) -> Option<String> {
    let document: serde_json::Value = match serde_json::from_slice(body) {
        Ok(document) => document,
        Err(e) => return Some(format!("the document is not JSON: {e}")),
    };
    let Some(fields) = document.as_object() else {
        return Some("the document is not a JSON object".to_string());
    };
    for required in ["authorization_endpoint", "token_endpoint"] {
        if !fields
            .get(required)
            .is_some_and(serde_json::Value::is_string)
        {
            return Some(format!("the document has no `{required}` string"));
        }
    }
    match fields.get("issuer").and_then(serde_json::Value::as_str) {
        Some(named) if named != issuer => Some(format!(
            "the document's issuer {named:?} is not the issuer it was fetched for, {issuer:?}"
        )),
        _ => None,
    }
}

/// The most of an authorization server's answer this client reads itself (a metadata
/// document, a token response, an error): rmcp's own OAuth requests have the same bound.
pub(crate) const MAX_ANSWER_BYTES: usize = 1024 * 1024;

/// `response`'s body, read chunk by chunk up to [`MAX_ANSWER_BYTES`]: a larger one is an
/// error before it is all in memory.
pub(crate) async fn bounded_body(mut response: reqwest::Response) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| e.to_string())? {
        if chunk.len() > MAX_ANSWER_BYTES - body.len() {
            return Err(format!(
                "the answer is larger than {MAX_ANSWER_BYTES} bytes: not read"
            ));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::{MAX_ANSWER_BYTES, bounded_body};
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    /// A server answering each connection with a body of `len` bytes.
    async fn serve(len: usize) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut conn, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut head = [0u8; 1024];
                    let _ = conn.read(&mut head).await;
                    let header = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len}\r\nconnection: close\r\n\r\n"
                    );
                    let _ = conn.write_all(header.as_bytes()).await;
                    let _ = conn.write_all(&vec![b' '; len]).await;
                });
            }
        });
        format!("http://{addr}/token")
    }

    #[tokio::test]
    async fn an_answer_over_the_bound_is_refused_and_one_at_it_is_read() {
        let client = reqwest::Client::new();
        let url = serve(MAX_ANSWER_BYTES + 1).await;
        let error = bounded_body(client.get(&url).send().await.unwrap())
            .await
            .unwrap_err();
        assert!(error.contains("larger than 1048576 bytes"), "{error}");
        let url = serve(MAX_ANSWER_BYTES).await;
        let body = bounded_body(client.get(&url).send().await.unwrap())
            .await
            .unwrap();
        assert_eq!(body.len(), MAX_ANSWER_BYTES);
    }
}
