//! The issuer's signing keys: read at start (from a URL, a file, or the `jwks_uri` of the
//! issuer's metadata), then again in the background once per refresh interval, and when
//! a token names a key id they lack, at most once per refresh interval. The two reads
//! keep apart: the background one runs on its own schedule, which no token moves, so a
//! key the issuer publishes (or withdraws) is seen within one interval plus one read,
//! however many tokens with unknown key ids arrive; a read for an unknown key id only
//! sees it sooner.
//!
//! Keys are read only over `https://`, or plain `http://` to a loopback host (the
//! issuer, its metadata's `jwks_uri`, a given JWKS URL, and every redirect).
//!
//! Only asymmetric signing keys are kept (RSA, EC on P-256 and P-384, Ed25519): a
//! symmetric (`oct`) key, an encryption key (`use: enc`) or a key of another kind is
//! left out, so no token signed with HMAC is ever verified.

use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey};
use serde_json::Value;

use super::JwksSource;
use crate::util::{lock, unpoisoned};

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

/// The shortest period of the background read, whatever the refresh interval (a zero
/// interval lifts the rate limit of the unknown-key-id read, and must not make the
/// background one spin).
const MIN_BACKGROUND_PERIOD: Duration = Duration::from_secs(1);

/// The issuer's keys, and how to read them again: in the background every refresh
/// interval (at least [`MIN_BACKGROUND_PERIOD`]), and for a token whose key id they lack
/// at most once per interval. The background task stops when this is dropped.
pub(super) struct Jwks {
    shared: Arc<Shared>,
    _refresher: Refresher,
}

/// What the request path and the background task share.
struct Shared {
    location: Location,
    client: reqwest::Client,
    /// The keys now, and when the read that produced them started (a read that started
    /// earlier never replaces them).
    keys: RwLock<Stamped>,
    /// When the last read for an unknown key id started (or the first read): its rate
    /// limit. The background read neither waits for it nor moves it.
    last_read: Mutex<Instant>,
    /// Held by the unknown-key-id read while it reads: one at a time, the others wait
    /// for it (the background read does not).
    reading: tokio::sync::Mutex<()>,
    interval: Duration,
}

/// A key set and when the read that produced it started.
struct Stamped {
    set: Arc<KeySet>,
    read_at: Instant,
}

/// The background read's task, aborted when dropped.
struct Refresher(tokio::task::JoinHandle<()>);

impl Drop for Refresher {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Jwks {
    /// Read the keys at start: from `source`, else from the `jwks_uri` of `issuer`'s
    /// metadata; then read them again in the background every `interval` (at least
    /// every second) until this is dropped.
    ///
    /// # Errors
    ///
    /// The issuer or a key URL is plain `http://` beyond loopback, or the metadata or
    /// keys cannot be read, or hold no usable key.
    pub(super) async fn start(
        issuer: &str,
        source: Option<&JwksSource>,
        interval: Duration,
        timeout: Duration,
    ) -> Result<Jwks, String> {
        if let Some(why) = insecure(issuer) {
            return Err(format!("the issuer {issuer} {why}"));
        }
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .redirect(reqwest::redirect::Policy::custom(|attempt| {
                if let Some(why) = insecure(attempt.url().as_str()) {
                    let to = attempt.url().to_string();
                    attempt.error(format!("redirected to {to}, which {why}"))
                } else if attempt.previous().len() >= 10 {
                    attempt.error("more than 10 redirects")
                } else {
                    attempt.follow()
                }
            }))
            .build()
            .map_err(|e| format!("no HTTP client: {e}"))?;
        let location = match source {
            Some(JwksSource::Url(url)) => Location::Url(url.clone()),
            Some(JwksSource::File(path)) => Location::File(path.clone()),
            None => Location::Url(discover(&client, issuer).await?),
        };
        if let Location::Url(url) = &location
            && let Some(why) = insecure(url)
        {
            return Err(format!("the JWKS URL {url} {why}"));
        }
        let read_at = Instant::now();
        let keys = read(&client, &location).await?;
        let shared = Arc::new(Shared {
            location,
            client,
            keys: RwLock::new(Stamped {
                set: Arc::new(keys),
                read_at,
            }),
            last_read: Mutex::new(read_at),
            reading: tokio::sync::Mutex::new(()),
            interval,
        });
        let refresher = Refresher(tokio::spawn(refresh_periodically(
            Arc::downgrade(&shared),
            interval.max(MIN_BACKGROUND_PERIOD),
        )));
        Ok(Jwks {
            shared,
            _refresher: refresher,
        })
    }

    /// The keys now.
    pub(super) fn keys(&self) -> Arc<KeySet> {
        self.shared.keys()
    }

    /// The keys once they hold `kid`: read again if they lack it and the last read for
    /// an unknown key id started at least the refresh interval ago (one such read at a
    /// time; others wait for it). `None` when they still lack it.
    pub(super) async fn with_kid(&self, kid: &str) -> Option<Arc<KeySet>> {
        let keys = self.keys();
        if keys.has(kid) {
            return Some(keys);
        }
        let _reading = self.shared.reading.lock().await;
        // Another request, or the background, may have read them meanwhile.
        let keys = self.keys();
        if keys.has(kid) {
            return Some(keys);
        }
        {
            let mut last = lock(&self.shared.last_read);
            if last.elapsed() < self.shared.interval {
                return None;
            }
            *last = Instant::now();
        }
        let keys = self.shared.read_again("for an unknown key id").await?;
        keys.has(kid).then_some(keys)
    }
}

impl Shared {
    fn keys(&self) -> Arc<KeySet> {
        unpoisoned(self.keys.read()).set.clone()
    }

    /// Read the keys now and keep them, unless a read that started later already gave
    /// its keys: the keys then held, `None` when the read failed (the keys held stay).
    async fn read_again(&self, why: &str) -> Option<Arc<KeySet>> {
        let started = Instant::now();
        let fresh = match read(&self.client, &self.location).await {
            Ok(fresh) => Arc::new(fresh),
            Err(e) => {
                tracing::warn!("dsh-mcp OAuth: cannot read the JWKS again ({why}): {e}");
                return None;
            }
        };
        let mut held = unpoisoned(self.keys.write());
        if held.read_at > started {
            return Some(held.set.clone());
        }
        let before = key_ids(&held.set);
        let after = key_ids(&fresh);
        if before == after {
            tracing::debug!(
                keys = fresh.0.len(),
                "dsh-mcp OAuth: read the JWKS again ({why})"
            );
        } else {
            tracing::info!(
                before = ?before,
                after = ?after,
                "dsh-mcp OAuth: read the JWKS again ({why}); its keys changed"
            );
        }
        *held = Stamped {
            set: fresh.clone(),
            read_at: started,
        };
        Some(fresh)
    }
}

/// The key ids of a set, sorted.
fn key_ids(keys: &KeySet) -> Vec<Option<&str>> {
    let mut ids: Vec<Option<&str>> = keys.0.iter().map(|k| k.kid.as_deref()).collect();
    ids.sort_unstable();
    ids
}

/// Read the keys again every `period`, on a schedule that no other read moves, until
/// the keys are dropped.
async fn refresh_periodically(shared: Weak<Shared>, period: Duration) {
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let Some(shared) = shared.upgrade() else {
            return;
        };
        shared.read_again("periodically").await;
    }
}

/// Why keys read from `url` could be replaced on the way: it is plain `http://` to a
/// host that is not loopback (`127.0.0.0/8`, `::1`, `localhost`). `None` for any other
/// URL (and for text that is not one).
fn insecure(url: &str) -> Option<&'static str> {
    let (scheme, _) = url.split_once("://")?;
    if !scheme.eq_ignore_ascii_case("http") {
        return None;
    }
    let loopback = reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
        .is_some_and(|host| {
            let host = host.trim_start_matches('[').trim_end_matches(']');
            host == "localhost"
                || host
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        });
    (!loopback).then_some(
        "is plain http:// to a host that is not loopback: anyone on the way could replace \
         the issuer's keys with their own and sign any token; use https:// (plain http:// \
         is accepted for 127.0.0.1, [::1] and localhost only)",
    )
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
    fn plain_http_is_for_loopback_hosts_only() {
        for fine in [
            "https://as.example/tenant",
            "http://127.0.0.1:8080/jwks.json",
            "http://127.0.0.5",
            "http://[::1]:9/keys",
            "http://localhost:9/x",
            "HTTP://LOCALHOST",
        ] {
            assert_eq!(insecure(fine), None, "{fine}");
        }
        for bad in [
            "http://as.example",
            "HTTP://as.example/tenant",
            "http://10.0.0.1/jwks.json",
            "http://0.0.0.0:8080",
            "http://127.0.0.1.nip.example/",
            "http://localhost.example/",
            "http://[::ffff:10.0.0.1]/",
            "http://user@as.example/",
        ] {
            let why = insecure(bad).unwrap_or_else(|| panic!("{bad} is accepted"));
            assert!(why.contains("use https://"), "{why}");
        }
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
