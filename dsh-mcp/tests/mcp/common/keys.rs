//! The OAuth test issuer: the keys of `tests/fixtures/oauth` (made for these tests only)
//! and the access tokens signed with them.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

/// The test issuer.
pub(crate) const ISSUER: &str = "https://issuer.test";

/// The path of `tests/fixtures/oauth/NAME`.
pub(crate) fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/oauth")
        .join(name)
}

/// The bytes of `tests/fixtures/oauth/NAME`.
pub(crate) fn pem(name: &str) -> Vec<u8> {
    std::fs::read(fixture(name)).unwrap()
}

/// The text of `tests/fixtures/oauth/NAME`.
pub(crate) fn fixture_text(name: &str) -> String {
    std::fs::read_to_string(fixture(name)).unwrap()
}

/// Seconds since the epoch.
pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// The issuer's RSA key (`k1` in its JWKS).
pub(crate) fn issuer_key() -> EncodingKey {
    EncodingKey::from_rsa_pem(&pem("issuer.pem")).unwrap()
}

/// Sign `claims` with `key` under `alg`, naming `kid`.
pub(crate) fn sign(claims: &Value, alg: Algorithm, kid: Option<&str>, key: &EncodingKey) -> String {
    let mut header = Header::new(alg);
    header.kid = kid.map(str::to_string);
    header.typ = Some("at+jwt".to_string());
    jsonwebtoken::encode(&header, claims, key).unwrap()
}

/// The claims of a good token for `audience`: `sub`, the scopes, ten minutes to live, and
/// an id that makes each token distinct (as a refreshed token is).
pub(crate) fn claims(audience: &str, sub: &str, scope: &str) -> Value {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let now = now();
    json!({
        "iss": ISSUER,
        "sub": sub,
        "aud": audience,
        "client_id": "test-client",
        "scope": scope,
        "iat": now,
        "exp": now + 600,
        "jti": format!("{sub}-{}", NEXT.fetch_add(1, Ordering::SeqCst)),
    })
}

/// A good token of `sub` with these scopes for the server at `url`.
pub(crate) fn token(url: &str, sub: &str, scope: &str) -> String {
    sign(
        &claims(url, sub, scope),
        Algorithm::RS256,
        Some("k1"),
        &issuer_key(),
    )
}
