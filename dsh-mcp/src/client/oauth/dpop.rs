//! DPoP (RFC 9449), which rmcp's `auth` does not have: the session's ES256 key, the
//! proofs it signs, the nonces the servers hand out, and the authorization code
//! exchange with a proof (rmcp's token requests cannot carry one).
//!
//! The client uses DPoP when both sides take it: the MCP server's challenge offers the
//! `DPoP` scheme (RFC 9449 section 7.1) and the authorization server's metadata lists
//! `ES256` in `dpop_signing_alg_values_supported`. A server that challenges with `Bearer`
//! alone gets bearer tokens, even from an authorization server that could bind them
//! (a DPoP-bound token is refused by a resource server that does not know the scheme). The key lives as long as the session (one
//! connection): a DPoP-bound token is never taken up by another session.
//!
//! Not covered: the grants without a user (they keep bearer tokens), and refreshing a
//! DPoP-bound token with a proof (rmcp's refresh request carries none, so a server
//! that wants one refuses it: `OAuthError::Refresh`).
//!
//! The MCP server's nonce is learnt from a `ping` sent with a proof, since rmcp's 401
//! error keeps only `WWW-Authenticate` and drops the `DPoP-Nonce` header.

use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::ecdsa::signature::Signer as _;
use p256::ecdsa::{Signature, SigningKey};
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use rmcp::transport::auth::OAuthTokenResponse;
use sha2::{Digest as _, Sha256};

use super::OAuthError;
use super::error::bounded_body;
use super::jwt::token_error;

/// The `DPoP-Nonce` response header.
pub(crate) const NONCE_HEADER: &str = "dpop-nonce";

/// Whether an authorization server's metadata (its `additional_fields`) asks for DPoP
/// with a key this client has (ES256).
pub(crate) fn offered(fields: &std::collections::HashMap<String, serde_json::Value>) -> bool {
    fields
        .get("dpop_signing_alg_values_supported")
        .and_then(serde_json::Value::as_array)
        .is_some_and(|algs| algs.iter().any(|a| a.as_str() == Some("ES256")))
}

/// Whether a resource server's challenge (`WWW-Authenticate`) offers the `DPoP` scheme:
/// one of its challenges (separated by commas outside quoted strings) starts with the
/// scheme name, matched without regard to case.
pub(crate) fn challenged(challenge: &str) -> bool {
    let mut quoted = false;
    let mut escaped = false;
    let mut start = 0;
    let mut parts = Vec::new();
    for (i, c) in challenge.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ',' if !quoted => {
                parts.push(&challenge[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&challenge[start..]);
    parts.iter().any(|part| {
        part.split_whitespace()
            .next()
            .is_some_and(|first| !first.contains('=') && first.eq_ignore_ascii_case("dpop"))
    })
}

/// Whether a challenge (`WWW-Authenticate`) or a token error asks for a DPoP nonce.
pub(crate) fn wants_nonce(challenge: &str) -> bool {
    challenge.contains("use_dpop_nonce")
}

/// A session's DPoP key and the nonces its servers gave it.
pub(crate) struct Dpop {
    key: SigningKey,
    /// The public key as a JWK (`kty`, `crv`, `x`, `y`).
    jwk: serde_json::Value,
    /// The authorization server's last nonce.
    as_nonce: Mutex<Option<String>>,
    /// The MCP server's last nonce.
    rs_nonce: Mutex<Option<String>>,
}

impl Dpop {
    /// A fresh P-256 key.
    pub(crate) fn generate(server: &str) -> Result<Dpop, OAuthError> {
        let config = |reason: String| OAuthError::Config {
            url: server.to_string(),
            reason,
        };
        // A random scalar; out of range (probability ~2^-32) draws again.
        let key = loop {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes)
                .map_err(|e| config(format!("no randomness for the DPoP key: {e}")))?;
            if let Ok(key) = SigningKey::from_slice(&bytes) {
                break key;
            }
        };
        let point = key.verifying_key().to_sec1_point(false);
        let (Some(x), Some(y)) = (point.x(), point.y()) else {
            return Err(config("the DPoP public key has no coordinates".to_string()));
        };
        let jwk = serde_json::json!({
            "kty": "EC",
            "crv": "P-256",
            "x": URL_SAFE_NO_PAD.encode(x),
            "y": URL_SAFE_NO_PAD.encode(y),
        });
        Ok(Dpop {
            key,
            jwk,
            as_nonce: Mutex::default(),
            rs_nonce: Mutex::default(),
        })
    }

    /// A proof for `method` on `url` (its query and fragment left out), bound to
    /// `access_token` when one is presented, with `nonce` when the server gave one.
    pub(crate) fn proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
        nonce: Option<&str>,
    ) -> String {
        let header = serde_json::json!({ "typ": "dpop+jwt", "alg": "ES256", "jwk": self.jwk });
        let iat = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        let mut claims = serde_json::json!({
            "jti": jti(),
            "htm": method,
            "htu": target_uri(url),
            "iat": iat,
        });
        if let Some(token) = access_token {
            claims["ath"] = URL_SAFE_NO_PAD
                .encode(Sha256::digest(token.as_bytes()))
                .into();
        }
        if let Some(nonce) = nonce {
            claims["nonce"] = nonce.into();
        }
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature: Signature = self.key.sign(input.as_bytes());
        format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature.to_bytes()))
    }

    /// The MCP server's last nonce.
    pub(crate) fn rs_nonce(&self) -> Option<String> {
        lock(&self.rs_nonce).clone()
    }

    /// Keep the MCP server's new nonce.
    pub(crate) fn set_rs_nonce(&self, nonce: String) {
        *lock(&self.rs_nonce) = Some(nonce);
    }

    /// POST `form` to `token_endpoint` with a proof, once more with the endpoint's
    /// nonce if it answers `use_dpop_nonce` (RFC 9449 section 8).
    pub(crate) async fn token_request(
        &self,
        token_endpoint: &str,
        form: &[(&str, String)],
        basic: Option<(&str, &str)>,
    ) -> Result<OAuthTokenResponse, OAuthError> {
        let refused = |reason: String| OAuthError::TokenEndpoint {
            url: token_endpoint.to_string(),
            reason,
        };
        let body = form
            .iter()
            .map(|(k, v)| format!("{k}={}", utf8_percent_encode(v, NON_ALPHANUMERIC)))
            .collect::<Vec<_>>()
            .join("&");
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(std::time::Duration::from_secs(30))
            .build()
            .map_err(|e| refused(format!("cannot build the HTTP client: {e}")))?;
        let mut retried = false;
        loop {
            let nonce = lock(&self.as_nonce).clone();
            let mut request = client
                .post(token_endpoint)
                .header("content-type", "application/x-www-form-urlencoded")
                .header("accept", "application/json")
                .header(
                    "dpop",
                    self.proof("POST", token_endpoint, None, nonce.as_deref()),
                )
                .body(body.clone());
            if let Some((id, secret)) = basic {
                request = request.basic_auth(id, Some(secret));
            }
            let response = request.send().await.map_err(|e| refused(e.to_string()))?;
            let status = response.status();
            let fresh = header_str(response.headers(), NONCE_HEADER);
            if let Some(fresh) = &fresh {
                *lock(&self.as_nonce) = Some(fresh.clone());
            }
            let bytes = bounded_body(response).await.map_err(refused)?;
            if status.is_success() {
                return serde_json::from_slice(&bytes)
                    .map_err(|e| refused(format!("the answer is not a token response: {e}")));
            }
            let error = token_error(status.as_u16(), &bytes);
            if !retried && fresh.is_some() && wants_nonce(&error) {
                retried = true;
                continue;
            }
            return Err(refused(error));
        }
    }
}

/// `url` without its query and fragment (`htu`, RFC 9449 section 4.2).
fn target_uri(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) => {
            parsed.set_query(None);
            parsed.set_fragment(None);
            parsed.to_string()
        }
        Err(_) => url.split(['?', '#']).next().unwrap_or(url).to_string(),
    }
}

/// A random proof id.
fn jti() -> String {
    let mut bytes = [0u8; 16];
    // Without randomness the clock's nanoseconds keep proofs apart.
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        bytes = nanos.to_le_bytes();
    }
    URL_SAFE_NO_PAD.encode(bytes)
}

/// A header's value as text.
pub(crate) fn header_str(headers: &reqwest::header::HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::challenged;

    #[test]
    fn the_dpop_scheme_is_read_from_any_challenge_of_the_header() {
        assert!(challenged(r#"DPoP resource_metadata="https://a/x""#));
        assert!(challenged(r#"dpop error="use_dpop_nonce""#));
        assert!(challenged(r#"Bearer realm="a", DPoP algs="ES256""#));
        assert!(challenged("DPoP"));
        assert!(!challenged(r#"Bearer resource_metadata="https://a/x""#));
        assert!(!challenged(r#"Bearer error="invalid_token", scope="a b""#));
        // The scheme name inside a quoted value or as a parameter is no scheme.
        assert!(!challenged(r#"Bearer realm="x, DPoP y""#));
        assert!(!challenged(r#"Bearer realm="a\", DPoP b""#));
        assert!(!challenged(r#"Bearer dpop=1"#));
        assert!(!challenged(""));
    }
}
