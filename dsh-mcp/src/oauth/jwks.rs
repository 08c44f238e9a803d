//! The issuer's signing keys: read at start (from a URL, a file, or the `jwks_uri` of the
//! issuer's metadata), and read again when a token names a key id they lack, at most
//! once per refresh interval.
//!
//! Only asymmetric signing keys are kept (RSA, EC on P-256 and P-384, Ed25519): a
//! symmetric (`oct`) key, an encryption key (`use: enc`) or a key of another kind is
//! left out, so no token signed with HMAC is ever verified.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey};
use serde_json::Value;

use super::JwksSource;

/// One signing key of the issuer.
pub(super) struct Key {
    pub(super) kid: Option<String>,
    /// The algorithms a token signed with this key may name.
    pub(super) algorithms: Vec<Algorithm>,
    pub(super) key: DecodingKey,
}

/// The keys of one read of the JWKS.
#[derive(Default)]
pub(super) struct KeySet(pub(super) Vec<Key>);

impl KeySet {
    /// The keys of a JWKS document, asymmetric signing keys only.
    ///
    /// # Errors
    ///
    /// It is not a JWK set (`{"keys": [...]}`), or has no usable key.
    pub(super) fn parse(text: &[u8]) -> Result<KeySet, String> {
        let value: Value =
            serde_json::from_slice(text).map_err(|e| format!("not a JWK set (JSON): {e}"))?;
        let Some(keys) = value.get("keys").and_then(Value::as_array) else {
            return Err("not a JWK set: no \"keys\" array".to_string());
        };
        let mut out = Vec::new();
        let mut skipped = Vec::new();
        for (i, key) in keys.iter().enumerate() {
            match usable(key) {
                Ok(key) => out.push(key),
                Err(why) => skipped.push(format!("key {i}: {why}")),
            }
        }
        for why in &skipped {
            tracing::debug!("dsh-mcp OAuth: JWKS {why}; left out");
        }
        if out.is_empty() {
            return Err(format!(
                "the JWK set has no asymmetric signing key (RSA, EC P-256/P-384, Ed25519){}",
                if skipped.is_empty() {
                    String::new()
                } else {
                    format!(": {}", skipped.join("; "))
                }
            ));
        }
        Ok(KeySet(out))
    }

    /// Whether a key has this id.
    pub(super) fn has(&self, kid: &str) -> bool {
        self.0.iter().any(|k| k.kid.as_deref() == Some(kid))
    }
}

/// A key of the set as one to verify with, or why it is left out.
fn usable(value: &Value) -> Result<Key, String> {
    let jwk: Jwk = serde_json::from_value(value.clone()).map_err(|e| format!("not a JWK: {e}"))?;
    if matches!(jwk.common.public_key_use, Some(ref u) if *u != PublicKeyUse::Signature) {
        return Err("not a signing key (`use` is not `sig`)".to_string());
    }
    let by_type: Vec<Algorithm> = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => vec![
            Algorithm::RS256,
            Algorithm::RS384,
            Algorithm::RS512,
            Algorithm::PS256,
            Algorithm::PS384,
            Algorithm::PS512,
        ],
        AlgorithmParameters::EllipticCurve(p) => match p.curve {
            EllipticCurve::P256 => vec![Algorithm::ES256],
            EllipticCurve::P384 => vec![Algorithm::ES384],
            _ => return Err("an elliptic curve other than P-256 and P-384".to_string()),
        },
        AlgorithmParameters::OctetKeyPair(p) => match p.curve {
            EllipticCurve::Ed25519 => vec![Algorithm::EdDSA],
            _ => return Err("an octet key pair other than Ed25519".to_string()),
        },
        AlgorithmParameters::OctetKey(_) => {
            return Err("a symmetric (oct) key, never used to verify tokens".to_string());
        }
        _ => return Err("a key type not supported".to_string()),
    };
    // A key that names its algorithm is used with that one only.
    let algorithms = match jwk.common.key_algorithm {
        None => by_type,
        Some(named) => {
            let named = algorithm(named)
                .filter(|a| by_type.contains(a))
                .ok_or_else(|| {
                    format!("its `alg` ({named:?}) is not a signing algorithm for its key type")
                })?;
            vec![named]
        }
    };
    let key = DecodingKey::from_jwk(&jwk).map_err(|e| format!("unreadable: {e}"))?;
    if key.family() == AlgorithmFamily::Hmac {
        return Err("a symmetric key".to_string());
    }
    Ok(Key {
        kid: jwk.common.key_id.clone(),
        algorithms,
        key,
    })
}

/// The signing algorithm a JWK's `alg` names.
fn algorithm(alg: KeyAlgorithm) -> Option<Algorithm> {
    Some(match alg {
        KeyAlgorithm::ES256 => Algorithm::ES256,
        KeyAlgorithm::ES384 => Algorithm::ES384,
        KeyAlgorithm::RS256 => Algorithm::RS256,
        KeyAlgorithm::RS384 => Algorithm::RS384,
        KeyAlgorithm::RS512 => Algorithm::RS512,
        KeyAlgorithm::PS256 => Algorithm::PS256,
        KeyAlgorithm::PS384 => Algorithm::PS384,
        KeyAlgorithm::PS512 => Algorithm::PS512,
        KeyAlgorithm::EdDSA => Algorithm::EdDSA,
        _ => return None,
    })
}

/// Where the keys are read from, resolved at start.
#[derive(Clone, Debug)]
enum Location {
    Url(String),
    File(std::path::PathBuf),
}

/// The issuer's keys, and how to read them again.
pub(super) struct Jwks {
    location: Location,
    client: reqwest::Client,
    keys: RwLock<Arc<KeySet>>,
    /// When the keys were last read (the refresh's rate limit), held while reading.
    refreshed: tokio::sync::Mutex<Instant>,
    interval: Duration,
}

impl Jwks {
    /// Read the keys at start: from `source`, else from the `jwks_uri` of `issuer`'s
    /// metadata.
    ///
    /// # Errors
    ///
    /// The metadata or keys cannot be read, or hold no usable key.
    pub(super) async fn start(
        issuer: &str,
        source: Option<&JwksSource>,
        interval: Duration,
        timeout: Duration,
    ) -> Result<Jwks, String> {
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .build()
            .map_err(|e| format!("no HTTP client: {e}"))?;
        let location = match source {
            Some(JwksSource::Url(url)) => Location::Url(url.clone()),
            Some(JwksSource::File(path)) => Location::File(path.clone()),
            None => Location::Url(discover(&client, issuer).await?),
        };
        let keys = read(&client, &location).await?;
        Ok(Jwks {
            location,
            client,
            keys: RwLock::new(Arc::new(keys)),
            refreshed: tokio::sync::Mutex::new(Instant::now()),
            interval,
        })
    }

    /// The keys now.
    pub(super) fn keys(&self) -> Arc<KeySet> {
        self.keys
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The keys once they hold `kid`: read again if they lack it and the last read is
    /// at least the refresh interval old (one read at a time; others wait for it).
    /// `None` when they still lack it.
    pub(super) async fn with_kid(&self, kid: &str) -> Option<Arc<KeySet>> {
        let keys = self.keys();
        if keys.has(kid) {
            return Some(keys);
        }
        let mut refreshed = self.refreshed.lock().await;
        // Another request may have read them meanwhile.
        let keys = self.keys();
        if keys.has(kid) {
            return Some(keys);
        }
        if refreshed.elapsed() < self.interval {
            return None;
        }
        *refreshed = Instant::now();
        match read(&self.client, &self.location).await {
            Ok(fresh) => {
                let fresh = Arc::new(fresh);
                *self
                    .keys
                    .write()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = fresh.clone();
                tracing::info!(
                    keys = fresh.0.len(),
                    "dsh-mcp OAuth: read the JWKS again for an unknown key id"
                );
                fresh.has(kid).then_some(fresh)
            }
            Err(e) => {
                tracing::warn!("dsh-mcp OAuth: cannot read the JWKS again: {e}");
                None
            }
        }
    }
}

/// Read the keys from `location`.
async fn read(client: &reqwest::Client, location: &Location) -> Result<KeySet, String> {
    match location {
        Location::File(path) => {
            let text = tokio::fs::read(path)
                .await
                .map_err(|e| format!("cannot read the JWKS file {}: {e}", path.display()))?;
            KeySet::parse(&text).map_err(|e| format!("JWKS file {}: {e}", path.display()))
        }
        Location::Url(url) => {
            let text = get(client, url).await?;
            KeySet::parse(&text).map_err(|e| format!("JWKS {url}: {e}"))
        }
    }
}

/// The body of a `GET url` answered `200`.
async fn get(client: &reqwest::Client, url: &str) -> Result<Vec<u8>, String> {
    if cfg!(not(feature = "https")) && url.starts_with("https://") {
        return Err(format!(
            "cannot fetch {url}: reading over https:// needs dsh-mcp's `https` feature"
        ));
    }
    let response = client
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| format!("cannot fetch {url}: {}", error_chain(&e)))?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("{url} answered {status}"));
    }
    let body = response
        .bytes()
        .await
        .map_err(|e| format!("cannot read {url}: {}", error_chain(&e)))?;
    Ok(body.to_vec())
}

/// An error and its sources, on one line.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// The `jwks_uri` of `issuer`'s metadata: RFC 8414's well-known document (its path
/// inserted after the host), else OpenID Connect discovery's (appended to the issuer).
///
/// # Errors
///
/// Neither document can be read, names another issuer, or has no `jwks_uri`.
async fn discover(client: &reqwest::Client, issuer: &str) -> Result<String, String> {
    let mut tried = Vec::new();
    for url in metadata_urls(issuer)? {
        match get(client, &url).await {
            Ok(body) => {
                let doc: Value = serde_json::from_slice(&body)
                    .map_err(|e| format!("the issuer's metadata {url} is not JSON: {e}"))?;
                if doc.get("issuer").and_then(Value::as_str) != Some(issuer) {
                    return Err(format!(
                        "the metadata {url} names another issuer ({}), not {issuer}",
                        doc.get("issuer")
                            .map_or("none".to_string(), Value::to_string)
                    ));
                }
                return doc
                    .get("jwks_uri")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .ok_or_else(|| format!("the issuer's metadata {url} has no jwks_uri"));
            }
            Err(e) => tried.push(e),
        }
    }
    Err(format!(
        "cannot read the metadata of the issuer {issuer}: {}",
        tried.join("; ")
    ))
}

/// Where `issuer`'s metadata may be: RFC 8414, then OpenID Connect discovery.
fn metadata_urls(issuer: &str) -> Result<Vec<String>, String> {
    let uri: axum::http::Uri = issuer
        .parse()
        .map_err(|e| format!("the issuer {issuer:?} is not a URL: {e}"))?;
    let (Some(scheme), Some(authority)) = (uri.scheme_str(), uri.authority()) else {
        return Err(format!("the issuer {issuer:?} is not an absolute URL"));
    };
    let path = uri.path().trim_end_matches('/');
    Ok(vec![
        format!("{scheme}://{authority}/.well-known/oauth-authorization-server{path}"),
        format!(
            "{}/.well-known/openid-configuration",
            issuer.trim_end_matches('/')
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_urls_follow_rfc_8414_then_oidc() {
        assert_eq!(
            metadata_urls("https://as.example/tenant1").unwrap(),
            [
                "https://as.example/.well-known/oauth-authorization-server/tenant1",
                "https://as.example/tenant1/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            metadata_urls("https://as.example").unwrap()[0],
            "https://as.example/.well-known/oauth-authorization-server"
        );
        assert!(metadata_urls("as.example").is_err());
    }

    #[test]
    fn only_asymmetric_signing_keys_are_kept() {
        let set = br#"{"keys":[
            {"kty":"oct","k":"c2VjcmV0","kid":"h"},
            {"kty":"EC","crv":"P-256","kid":"e","use":"sig",
             "x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
             "y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"},
            {"kty":"EC","crv":"P-256","kid":"enc","use":"enc",
             "x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
             "y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}
        ]}"#;
        let keys = KeySet::parse(set).unwrap();
        assert_eq!(keys.0.len(), 1);
        assert!(keys.has("e") && !keys.has("h") && !keys.has("enc"));
        assert_eq!(keys.0[0].algorithms, [Algorithm::ES256]);
        let only_secret = br#"{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}"#;
        let e = KeySet::parse(only_secret).err().unwrap();
        assert!(e.contains("no asymmetric signing key"), "{e}");
        assert!(KeySet::parse(b"[]").is_err());
    }
}
