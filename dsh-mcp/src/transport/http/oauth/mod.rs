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
//! startup error. It is read again in the background every
//! [`OAuthOptions::jwks_refresh_interval`] while the server runs, and when a token is
//! signed with a key id it lacks (at most once per interval), so a key the issuer rotates
//! in is accepted, and a key it withdraws refused, without a restart: within one interval
//! plus one read (at most [`OAuthOptions::fetch_timeout`]) of the change, however many
//! tokens with unknown key ids arrive meanwhile (they never move the background read). A
//! read that fails keeps the keys of the last one that succeeded.
//!
//! The issuer's metadata and keys are read over `https://` (the `https` feature), or
//! over plain `http://` from a loopback host only (`127.0.0.0/8`, `::1`, `localhost`):
//! an `http://` issuer or JWKS URL naming another host is a startup error, and so is a
//! redirect to one, since whoever sits on the way could hand the server a key of their
//! own and sign any token with it.
//!
//! What the server reads of a valid token's claims ([`Identity`]):
//!
//! - the client: `client_id` (RFC 9068) when it is a string, else `azp` (the authorized
//!   party, as Microsoft Entra ID v2, Keycloak and Auth0 carry it); none when neither
//!   is;
//! - the scopes: the union of `scope`, a space-separated string (RFC 9068; Auth0,
//!   Keycloak), and `scp`, a space-separated string (Entra ID) or an array of strings;
//!   other shapes, and other claims such as Entra ID's `roles`, grant no scope.
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
    /// Fetched from this URL: `https://` (with the `https` feature), or `http://` to a
    /// loopback host only.
    Url(String),
    /// Read from this file (and read again as a URL would be fetched again).
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
    /// in `iss`), named in the protected-resource metadata. An `http://` issuer is
    /// accepted for a loopback host only (see the [module docs](self)).
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
    /// The clock skew allowed on `exp` and `nbf` (default 30 s; whole seconds count, a
    /// fraction is dropped).
    pub leeway: Duration,
    /// How often the JWKS is read again (default 30 s), which bounds how long a key the
    /// issuer publishes or withdraws goes unseen: at most one interval plus one read
    /// ([`OAuthOptions::fetch_timeout`]), whatever tokens arrive.
    ///
    /// The JWKS is read again in the background every interval (at least a second
    /// apart), on a schedule of its own, until the server stops. Besides, a token
    /// whose key id it lacks makes it read at once, unless such a read started less
    /// than an interval ago: tokens with unknown key ids in between are refused, and a
    /// flood of them costs at most one extra read per interval. `Duration::ZERO` lifts
    /// that limit (every token with an unknown key id reads the JWKS).
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

    /// Read the JWKS again this often, and for unknown key ids at most this often (see
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
