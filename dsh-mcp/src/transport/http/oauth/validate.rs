//! Checking one access token (with `jsonwebtoken`): its header's algorithm and key, its
//! signature, then its claims, into the request's [`Identity`].

use jsonwebtoken::errors::ErrorKind;
use std::sync::Arc;

use jsonwebtoken::{Algorithm, AlgorithmFamily, Header, Validation};
use serde_json::Value;

use super::jwks::{Jwks, Key, KeySet};
use crate::identity::Identity;

/// What a token is checked against.
pub(super) struct Validator {
    pub(super) issuer: String,
    pub(super) audience: String,
    pub(super) jwks: Jwks,
    pub(super) leeway: u64,
}

/// Why a token was refused: the `error_description` of the `401`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Invalid(pub(super) String);

fn invalid(text: impl Into<String>) -> Invalid {
    Invalid(text.into())
}

/// The token's header, when it names an asymmetric signing algorithm this server
/// accepts and (if it names one) the type of an access token.
fn checked_header(token: &str) -> Result<Header, Invalid> {
    // `decode_header` knows only the algorithms it can verify: `none` (and anything
    // unknown) is refused here.
    let header = jsonwebtoken::decode_header(token).map_err(|e| match e.kind() {
        ErrorKind::Json(_) | ErrorKind::InvalidAlgorithmName => invalid(
            "the token's header names no signing algorithm this server accepts \
             (`none` never is)",
        ),
        _ => invalid(format!("the token is not a signed JWT ({e})")),
    })?;
    if header.alg.family() == AlgorithmFamily::Hmac {
        return Err(invalid(format!(
            "the token is signed with {:?}, a symmetric algorithm; this server accepts \
             only the issuer's asymmetric keys",
            header.alg
        )));
    }
    if let Some(typ) = header.typ.as_deref() {
        let typ = typ.to_ascii_lowercase();
        let typ = typ.strip_prefix("application/").unwrap_or(&typ);
        if typ != "at+jwt" && typ != "jwt" {
            return Err(invalid(format!(
                "the token's type {typ:?} is not an access token (at+jwt)"
            )));
        }
    }
    Ok(header)
}

impl Validator {
    /// The identity of a valid token: its header, then the issuer's keys it may be
    /// signed with, then its signature and claims with each of them.
    ///
    /// # Errors
    ///
    /// Why the token is not valid for this server.
    pub(super) async fn validate(&self, token: &str) -> Result<Identity, Invalid> {
        let header = checked_header(token)?;
        let keys = self.keys_for(&header).await?;
        let candidates: Vec<&Key> = keys
            .0
            .iter()
            .filter(|k| header.kid.is_none() || k.kid == header.kid)
            .filter(|k| k.algorithms.contains(&header.alg))
            .collect();
        if candidates.is_empty() {
            return Err(invalid(format!(
                "no key of the issuer's JWKS is for {:?}{}",
                header.alg,
                header
                    .kid
                    .as_deref()
                    .map(|k| format!(" with key id {k:?}"))
                    .unwrap_or_default()
            )));
        }
        let validation = self.validation(header.alg);
        let mut last = None;
        for key in candidates {
            match jsonwebtoken::decode::<Value>(token, &key.key, &validation) {
                Ok(data) => return identity(&self.issuer, &data.claims),
                Err(e) => last = Some(e),
            }
        }
        Err(self.unverified(last))
    }

    /// The issuer's keys a token with `header` may be signed with: those of its key id
    /// (read again when the JWKS lacks it), or every key.
    async fn keys_for(&self, header: &Header) -> Result<Arc<KeySet>, Invalid> {
        match header.kid.as_deref() {
            Some(kid) => self.jwks.with_kid(kid).await.ok_or_else(|| {
                invalid(format!(
                    "the token is signed with a key ({kid:?}) the issuer's JWKS does not have"
                ))
            }),
            None => Ok(self.jwks.keys()),
        }
    }

    /// Why a token no key verified is refused, from the last key's error.
    fn unverified(&self, last: Option<jsonwebtoken::errors::Error>) -> Invalid {
        match last.as_ref().map(jsonwebtoken::errors::Error::kind) {
            Some(ErrorKind::InvalidSignature) => {
                invalid("the token's signature does not verify with the issuer's key")
            }
            Some(ErrorKind::ExpiredSignature) => invalid("the token has expired"),
            Some(ErrorKind::ImmatureSignature) => invalid("the token is not valid yet (nbf)"),
            Some(ErrorKind::InvalidIssuer) => invalid(format!(
                "the token was issued by another issuer (iss is not {})",
                self.issuer
            )),
            Some(ErrorKind::InvalidAudience) => invalid(format!(
                "the token is for another resource (aud does not name {})",
                self.audience
            )),
            Some(ErrorKind::MissingRequiredClaim(claim)) => {
                invalid(format!("the token has no `{claim}` claim"))
            }
            Some(_) | None => invalid(format!(
                "the token cannot be verified ({})",
                last.map(|e| e.to_string()).unwrap_or_default()
            )),
        }
    }

    fn validation(&self, alg: Algorithm) -> Validation {
        let mut validation = Validation::new(alg);
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.validate_exp = true;
        validation.validate_nbf = true;
        validation.validate_aud = true;
        validation.leeway = self.leeway;
        validation
    }
}

/// The identity of a verified token's claims.
fn identity(issuer: &str, claims: &Value) -> Result<Identity, Invalid> {
    let subject = claims
        .get("sub")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| invalid("the token's `sub` is not a non-empty string"))?;
    let client_id = ["client_id", "azp"]
        .iter()
        .find_map(|k| claims.get(*k).and_then(Value::as_str))
        .map(str::to_string);
    let mut scopes: Vec<String> = Vec::new();
    if let Some(scope) = claims.get("scope").and_then(Value::as_str) {
        scopes.extend(scope.split_ascii_whitespace().map(str::to_string));
    }
    match claims.get("scp") {
        Some(Value::String(s)) => scopes.extend(s.split_ascii_whitespace().map(str::to_string)),
        Some(Value::Array(items)) => {
            scopes.extend(items.iter().filter_map(Value::as_str).map(str::to_string));
        }
        _ => {}
    }
    let expires_at = claims
        .get("exp")
        .and_then(Value::as_u64)
        .unwrap_or_default();
    Ok(Identity::new(
        issuer, subject, client_id, scopes, expires_at,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scopes_come_from_scope_and_scp() {
        let id = identity(
            "i",
            &json!({"sub": "s", "scope": "a b", "scp": ["c"], "client_id": "app", "exp": 9}),
        )
        .unwrap();
        assert_eq!(
            id.scopes().iter().map(String::as_str).collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
        assert_eq!(
            (id.subject(), id.client_id(), id.expires_at()),
            ("s", Some("app"), 9)
        );
        assert!(identity("i", &json!({"sub": ""})).is_err());
        assert!(identity("i", &json!({"sub": 7})).is_err());
    }

    /// What the README and the module docs say of the claims of the common issuers.
    #[test]
    fn the_client_falls_back_to_azp_and_scp_may_be_a_string() {
        let scopes = |id: &Identity| id.scopes().iter().cloned().collect::<Vec<_>>();
        // Microsoft Entra ID (v2): `azp` and a space-separated `scp`; `roles` is no scope.
        let entra = identity(
            "i",
            &json!({"sub": "s", "azp": "entra-app", "scp": "Files.Read  tools:read",
                    "roles": ["tools:exec"]}),
        )
        .unwrap();
        assert_eq!(entra.client_id(), Some("entra-app"));
        assert_eq!(scopes(&entra), ["Files.Read", "tools:read"]);
        // Keycloak and Auth0: `azp` and `scope`.
        let keycloak =
            identity("i", &json!({"sub": "s", "azp": "kc", "scope": "openid x"})).unwrap();
        assert_eq!(keycloak.client_id(), Some("kc"));
        assert_eq!(scopes(&keycloak), ["openid", "x"]);
        // `client_id` wins over `azp`; one that is not a string is passed over.
        let both = identity("i", &json!({"sub": "s", "client_id": "c", "azp": "a"})).unwrap();
        assert_eq!(both.client_id(), Some("c"));
        let odd = identity("i", &json!({"sub": "s", "client_id": 7, "azp": "a"})).unwrap();
        assert_eq!(odd.client_id(), Some("a"));
        // Neither: no client. Shapes other than a string or an array of strings: no scope.
        let bare = identity(
            "i",
            &json!({"sub": "s", "scope": ["a"], "scp": {"b": true}, "cid": "okta"}),
        )
        .unwrap();
        assert_eq!(bare.client_id(), None);
        assert!(bare.scopes().is_empty());
        let mixed = identity("i", &json!({"sub": "s", "scp": ["a", 1, "b"]})).unwrap();
        assert_eq!(scopes(&mixed), ["a", "b"]);
    }
}
