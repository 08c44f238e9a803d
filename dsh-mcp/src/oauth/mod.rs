//! The HTTP server as an OAuth 2.1 resource server (feature `oauth`), as the MCP
//! authorization profile has it: set [`HttpOptions::oauth`](crate::HttpOptions) to an
//! [`OAuthOptions`] and [`serve_http`](crate::serve_http)
//!
//! - serves the protected-resource metadata of RFC 9728 at
//!   `/.well-known/oauth-protected-resource` followed by the endpoint's path (and at the
//!   bare well-known path): the resource (the server's canonical URL), the authorization
//!   server, the scopes ([`McpServer::with_tool_scopes`](crate::McpServer::with_tool_scopes));
//! - answers a request without a valid access token `401` with `WWW-Authenticate: Bearer
//!   resource_metadata="…"` (and `error="invalid_token"` with a description when a
//!   token was sent), and a call beyond the token's scope `403` with
//!   `error="insufficient_scope", scope="…"`;
//! - validates each token before anything runs: a JWT signed with a key of the issuer's
//!   JWKS (by its `kid`) in an asymmetric algorithm the key is for (RSA, ECDSA, EdDSA;
//!   never `none`, never an HMAC algorithm), its issuer (`iss`), expiry (`exp`,
//!   required), not-before (`nbf`), a subject (`sub`) and its audience (`aud`, which
//!   must name this server's canonical URL, RFC 8707): a token minted for another
//!   resource is refused;
//! - takes the token out of the request once checked: nothing behind the layer (rmcp,
//!   the handler, tools) sees it, and nothing is sent on with it;
//! - binds each session to the principal that opened it (another principal's request on
//!   it is answered `404`, as for a session that does not exist), and the tasks and
//!   approval states of stateless requests to the principal ([`Identity`]).
//!
//! The JWKS is read when the server starts (from [`OAuthOptions::jwks`], or the
//! `jwks_uri` of the issuer's metadata); an issuer or JWKS that cannot be read then is a
//! startup error. A token signed with a key id the JWKS lacks makes the server read it
//! again, at most once per [`OAuthOptions::jwks_refresh_interval`], so a key the issuer
//! rotated in is accepted without a restart.
//!
//! [`Identity`]: crate::Identity

mod challenge;
mod jwks;
pub(crate) mod layer;
mod metadata;
mod validate;

use std::path::PathBuf;
use std::time::Duration;

pub(crate) use layer::Resource;

/// Where the issuer's signing keys (its JWK set) come from.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum JwksSource {
    /// Fetched from this URL (`http://` or, with the `https` feature, `https://`).
    Url(String),
    /// Read from this file (read again when a token names a key it lacks).
    File(PathBuf),
}

impl JwksSource {
    /// A URL for text with a scheme (`http://`, `https://`), else a file path.
    pub fn parse(text: &str) -> JwksSource {
        if text.starts_with("http://") || text.starts_with("https://") {
            JwksSource::Url(text.to_string())
        } else {
            JwksSource::File(PathBuf::from(text))
        }
    }
}

/// How [`serve_http`](crate::serve_http) checks access tokens (see the [module
/// docs](self)).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct OAuthOptions {
    /// The authorization server's issuer identifier (its URL, exactly as tokens carry it
    /// in `iss`), named in the protected-resource metadata.
    pub issuer: String,
    /// This server's canonical URL, which tokens must carry in `aud` (default: the
    /// server's own URL, [`HttpServer::url`](crate::HttpServer::url); give it when
    /// clients reach the server by another name, e.g. behind a proxy or TLS).
    pub audience: Option<String>,
    /// The issuer's keys (default: the `jwks_uri` of the issuer's metadata, read from
    /// `<issuer>/.well-known/oauth-authorization-server`, else
    /// `<issuer>/.well-known/openid-configuration`).
    pub jwks: Option<JwksSource>,
    /// Scopes listed in the metadata's `scopes_supported` besides those the tools need
    /// ([`McpServer::with_tool_scopes`](crate::McpServer::with_tool_scopes)).
    pub scopes: Vec<String>,
    /// The clock skew allowed on `exp` and `nbf` (default 30 s).
    pub leeway: Duration,
    /// The shortest time between two reads of the JWKS for a token whose key id it
    /// lacks (default 30 s); tokens with unknown key ids in between are refused.
    pub jwks_refresh_interval: Duration,
    /// How long reading the issuer's metadata or JWKS may take (default 10 s).
    pub fetch_timeout: Duration,
}

impl OAuthOptions {
    /// Tokens of `issuer`, its keys found through its metadata.
    pub fn new(issuer: impl Into<String>) -> OAuthOptions {
        OAuthOptions {
            issuer: issuer.into(),
            audience: None,
            jwks: None,
            scopes: Vec::new(),
            leeway: Duration::from_secs(30),
            jwks_refresh_interval: Duration::from_secs(30),
            fetch_timeout: Duration::from_secs(10),
        }
    }

    /// Require `aud` to name this URL (see [`OAuthOptions::audience`]).
    #[must_use]
    pub fn audience(mut self, url: impl Into<String>) -> Self {
        self.audience = Some(url.into());
        self
    }

    /// Take the issuer's keys from here (see [`OAuthOptions::jwks`]).
    #[must_use]
    pub fn jwks(mut self, source: JwksSource) -> Self {
        self.jwks = Some(source);
        self
    }

    /// List these scopes in the metadata too (see [`OAuthOptions::scopes`]).
    #[must_use]
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Allow this clock skew (see [`OAuthOptions::leeway`]).
    #[must_use]
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// Read the JWKS again at most this often (see
    /// [`OAuthOptions::jwks_refresh_interval`]).
    #[must_use]
    pub fn jwks_refresh_interval(mut self, interval: Duration) -> Self {
        self.jwks_refresh_interval = interval;
        self
    }

    /// Give up reading the issuer's metadata or JWKS after this long.
    #[must_use]
    pub fn fetch_timeout(mut self, timeout: Duration) -> Self {
        self.fetch_timeout = timeout;
        self
    }
}
