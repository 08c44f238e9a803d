//! The token requests made here rather than by rmcp: the client credentials grant with a
//! `private_key_jwt` assertion (RFC 7523 section 2.2) and the JWT bearer grant (section
//! 2.1). The assertion is signed with `jsonwebtoken` (already this crate's for the resource server) rather than
//! rmcp's `auth-client-credentials-jwt`, which would add a second JWT stack (and
//! aws-lc) to the build.

use std::str::FromStr as _;
use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use rmcp::transport::auth::OAuthTokenResponse;

use super::OAuthError;
use super::error::bounded_body;

/// The assertion's lifetime, in seconds.
const ASSERTION_LIFETIME: u64 = 300;

/// What the token request needs.
pub(super) struct JwtGrant<'a> {
    pub(super) server: &'a str,
    pub(super) token_endpoint: &'a str,
    /// The assertion's audience: the authorization server's issuer.
    pub(super) audience: &'a str,
    pub(super) client_id: &'a str,
    pub(super) key_pem: &'a [u8],
    pub(super) algorithm: &'a str,
    pub(super) scopes: &'a [String],
    pub(super) resource: &'a str,
}

impl JwtGrant<'_> {
    /// The signed assertion.
    fn assertion(&self) -> Result<String, OAuthError> {
        let config = |reason: String| OAuthError::Config {
            url: self.server.to_string(),
            reason,
        };
        let algorithm = Algorithm::from_str(self.algorithm)
            .map_err(|_| config(format!("unknown JWT algorithm {:?}", self.algorithm)))?;
        let key = match algorithm {
            Algorithm::ES256 | Algorithm::ES384 => EncodingKey::from_ec_pem(self.key_pem),
            Algorithm::RS256
            | Algorithm::RS384
            | Algorithm::RS512
            | Algorithm::PS256
            | Algorithm::PS384
            | Algorithm::PS512 => EncodingKey::from_rsa_pem(self.key_pem),
            other => {
                return Err(config(format!(
                    "{other:?} is not an asymmetric JWT algorithm"
                )));
            }
        }
        .map_err(|e| config(format!("the private key is not a usable PEM key: {e}")))?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        let mut jti = [0u8; 16];
        getrandom::fill(&mut jti).map_err(|e| config(format!("no randomness for jti: {e}")))?;
        let claims = serde_json::json!({
            "iss": self.client_id,
            "sub": self.client_id,
            "aud": self.audience,
            "iat": now,
            "exp": now + ASSERTION_LIFETIME,
            "jti": jti.iter().map(|b| format!("{b:02x}")).collect::<String>(),
        });
        jsonwebtoken::encode(&Header::new(algorithm), &claims, &key)
            .map_err(|e| config(format!("cannot sign the client assertion: {e}")))
    }

    /// Ask the token endpoint for a token.
    pub(super) async fn request(&self) -> Result<OAuthTokenResponse, OAuthError> {
        let assertion = self.assertion()?;
        let mut form = vec![
            ("grant_type", "client_credentials".to_string()),
            (
                "client_assertion_type",
                "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".to_string(),
            ),
            ("client_assertion", assertion),
            ("resource", self.resource.to_string()),
        ];
        if !self.scopes.is_empty() {
            form.push(("scope", self.scopes.join(" ")));
        }
        token_request(self.token_endpoint, &form).await
    }
}

/// The JWT bearer grant (RFC 7523 section 2.1): a workload's `assertion` for a token,
/// as the public client `client_id`.
pub(super) async fn jwt_bearer(
    token_endpoint: &str,
    client_id: &str,
    assertion: &str,
    scopes: &[String],
    resource: &str,
) -> Result<OAuthTokenResponse, OAuthError> {
    let mut form = vec![
        (
            "grant_type",
            "urn:ietf:params:oauth:grant-type:jwt-bearer".to_string(),
        ),
        ("assertion", assertion.to_string()),
        ("client_id", client_id.to_string()),
        ("resource", resource.to_string()),
    ];
    if !scopes.is_empty() {
        form.push(("scope", scopes.join(" ")));
    }
    token_request(token_endpoint, &form).await
}

/// POST `form` to `token_endpoint` (redirects not followed) and read the token
/// response, or the endpoint's error.
async fn token_request(
    token_endpoint: &str,
    form: &[(&str, String)],
) -> Result<OAuthTokenResponse, OAuthError> {
    let body = form
        .iter()
        .map(|(k, v)| format!("{k}={}", utf8_percent_encode(v, NON_ALPHANUMERIC)))
        .collect::<Vec<_>>()
        .join("&");
    let refused = |reason: String| OAuthError::TokenEndpoint {
        url: token_endpoint.to_string(),
        reason,
    };
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(std::time::Duration::from_secs(30))
        .build()
        .map_err(|e| refused(format!("cannot build the HTTP client: {e}")))?;
    let response = client
        .post(token_endpoint)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "application/json")
        .body(body)
        .send()
        .await
        .map_err(|e| refused(e.to_string()))?;
    let status = response.status();
    let bytes = bounded_body(response).await.map_err(refused)?;
    if !status.is_success() {
        return Err(refused(token_error(status.as_u16(), &bytes)));
    }
    serde_json::from_slice(&bytes)
        .map_err(|e| refused(format!("the answer is not a token response: {e}")))
}

/// A token endpoint's error answer: its `error` and `error_description`, or the status.
pub(super) fn token_error(status: u16, body: &[u8]) -> String {
    let json: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    match (
        json.get("error").and_then(|e| e.as_str()),
        json.get("error_description").and_then(|e| e.as_str()),
    ) {
        (Some(error), Some(description)) => format!("HTTP {status}, {error}: {description}"),
        (Some(error), None) => format!("HTTP {status}, {error}"),
        _ => format!(
            "HTTP {status}, {}",
            String::from_utf8_lossy(&body[..body.len().min(200)])
        ),
    }
}
