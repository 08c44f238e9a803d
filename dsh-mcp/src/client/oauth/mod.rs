//! The OAuth 2.1 client of [`ClientBuilder::oauth`](crate::ClientBuilder::oauth)
//! (feature `oauth-client`): how a client imports tools from an MCP server that
//! requires authorization, on rmcp's `auth` support.
//!
//! The client sends its requests without a token (or with a stored one) and reacts to
//! the server's answers, as the MCP authorization specification has it:
//!
//! - **401**: protected-resource metadata discovery (the challenge's
//!   `resource_metadata`, then the well-known URLs), authorization-server metadata
//!   discovery (OAuth, then OpenID Connect, with the path-insertion fallbacks), client
//!   registration (a pre-registered client, else a Client ID Metadata Document when the
//!   server supports them, else dynamic registration), then the grant: the
//!   authorization code with PKCE S256 through the host's [`AuthorizationCallback`],
//!   client credentials, a workload's JWT bearer assertion, or enterprise-managed
//!   authorization. The `resource` parameter names the MCP server; scopes are the
//!   configured ones, else the challenge's `scope`, else the resource's
//!   `scopes_supported`, else none. The `iss` of the redirect is checked (RFC 9207).
//!   The request is then sent again with the token. A rejected token with a refresh
//!   token is refreshed first; a second 401 starts over from discovery (the server may
//!   have moved to another authorization server).
//! - **403 `insufficient_scope`**: step-up: a new authorization for the union of the
//!   scopes held and the challenged ones, at most [`OAuthConfig::max_step_ups`] times
//!   in a row.
//!
//! - **DPoP** (RFC 9449), when the authorization server lists `ES256` in
//!   `dpop_signing_alg_values_supported` (authorization code grant): the connection's
//!   own ES256 key signs a proof for the code exchange and for every MCP request,
//!   which carries the token as `Authorization: DPoP`; a `use_dpop_nonce` answer of
//!   either server is retried once with its `DPoP-Nonce`. A DPoP-bound token is not
//!   taken up from the store by a later connection (it has another key).
//!
//! Tokens live in a [`TokenStore`] ([`MemoryTokenStore`] by default,
//! [`FileTokenStore`] for a CLI). Failures are [`OAuthError`]s naming the URL and the
//! cause; a connection whose handshake fails that way returns
//! [`ConnectError::OAuth`](crate::ConnectError::OAuth).
//!
//! ```no_run
//! # async fn run(callback: impl dsh_mcp::oauth_client::AuthorizationCallback + 'static)
//! # -> Result<(), Box<dyn std::error::Error>> {
//! use dsh_mcp::ClientBuilder;
//! use dsh_mcp::oauth_client::{FileTokenStore, OAuthConfig};
//!
//! let oauth = OAuthConfig::authorization_code(callback)
//!     .client_name("my-agent")
//!     .token_store(FileTokenStore::new("tokens.json"));
//! let client = ClientBuilder::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"))
//!     .oauth(oauth)
//!     .connect_http("https://mcp.example.com/mcp")
//!     .await?;
//! # let _ = client; Ok(()) }
//! ```

mod callback;
mod dpop;
mod enterprise;
mod error;
mod flow;
mod jwt;
mod store;
mod transport;

use std::fmt;
use std::sync::Arc;

pub use callback::{AuthorizationCallback, AuthorizeFuture, Redirect};
pub use error::OAuthError;
pub(crate) use flow::Session;
pub use store::{
    FileTokenStore, MemoryTokenStore, StoreFuture, StoredTokens, TokenStore, TokenStoreError,
};
pub(crate) use transport::OAuthHttp;

/// The step-up authorizations a client makes in a row by default: with the first
/// authorization, three authorization requests at most.
pub const DEFAULT_MAX_STEP_UPS: u32 = 2;

/// How a client authorizes with the servers it connects to over HTTP: the grant, the
/// client's identity at the authorization server, the scopes, the token store. Given
/// to [`ClientBuilder::oauth`](crate::ClientBuilder::oauth).
#[derive(Clone)]
pub struct OAuthConfig {
    pub(crate) grant: Grant,
    pub(crate) client_id: Option<String>,
    pub(crate) client_secret: Option<String>,
    pub(crate) metadata_url: Option<String>,
    pub(crate) client_name: String,
    pub(crate) scopes: Option<Vec<String>>,
    pub(crate) store: Arc<dyn TokenStore>,
    pub(crate) max_step_ups: u32,
}

/// The OAuth grant a client uses.
#[derive(Clone)]
pub(crate) enum Grant {
    /// The interactive authorization code grant, with the host's callback.
    AuthorizationCode(Arc<dyn AuthorizationCallback>),
    /// Client credentials with a secret (`client_secret_basic` or `client_secret_post`,
    /// as the authorization server's metadata lists them).
    ClientSecret,
    /// Client credentials with a `private_key_jwt` assertion signed with this PEM key.
    PrivateKeyJwt { key_pem: Vec<u8>, algorithm: String },
    /// The JWT bearer grant with a workload's JWT (RFC 7523 section 2.1).
    JwtBearer { assertion: String },
    /// Enterprise-managed authorization: the user's ID token exchanged at the
    /// enterprise identity provider for an identity assertion grant, itself exchanged
    /// at the authorization server.
    Enterprise(EnterpriseIdp),
}

/// The enterprise identity provider of [`OAuthConfig::enterprise_managed`], and the
/// user's ID token it issued to this client.
#[derive(Clone)]
#[non_exhaustive]
pub struct EnterpriseIdp {
    /// The identity provider's issuer.
    pub issuer: String,
    /// Its token endpoint (where the ID token is exchanged, RFC 8693).
    pub token_endpoint: String,
    /// This client's id at the identity provider (a public client there).
    pub client_id: String,
    /// The user's OpenID Connect ID token, issued to `client_id`.
    pub id_token: String,
}

impl EnterpriseIdp {
    /// The identity provider `issuer` with its `token_endpoint`, this client's id there
    /// and the user's `id_token`.
    pub fn new(
        issuer: impl Into<String>,
        token_endpoint: impl Into<String>,
        client_id: impl Into<String>,
        id_token: impl Into<String>,
    ) -> EnterpriseIdp {
        EnterpriseIdp {
            issuer: issuer.into(),
            token_endpoint: token_endpoint.into(),
            client_id: client_id.into(),
            id_token: id_token.into(),
        }
    }
}

impl fmt::Debug for EnterpriseIdp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnterpriseIdp")
            .field("issuer", &self.issuer)
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let grant = match &self.grant {
            Grant::AuthorizationCode(_) => "authorization_code",
            Grant::ClientSecret => "client_credentials (secret)",
            Grant::PrivateKeyJwt { .. } => "client_credentials (private_key_jwt)",
            Grant::JwtBearer { .. } => "jwt-bearer",
            Grant::Enterprise(_) => "enterprise-managed (token exchange, jwt-bearer)",
        };
        f.debug_struct("OAuthConfig")
            .field("grant", &grant)
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[redacted]"),
            )
            .field("client_metadata_url", &self.metadata_url)
            .field("client_name", &self.client_name)
            .field("scopes", &self.scopes)
            .field("max_step_ups", &self.max_step_ups)
            .finish_non_exhaustive()
    }
}

impl OAuthConfig {
    fn new(grant: Grant) -> OAuthConfig {
        OAuthConfig {
            grant,
            client_id: None,
            client_secret: None,
            metadata_url: None,
            client_name: env!("CARGO_PKG_NAME").to_string(),
            scopes: None,
            store: Arc::new(MemoryTokenStore::new()),
            max_step_ups: DEFAULT_MAX_STEP_UPS,
        }
    }

    /// The authorization code grant (a user authorizes in a browser), the host's
    /// `callback` taking the user there and back. The client registers dynamically
    /// unless [`client_id`](Self::client_id) or
    /// [`client_metadata_url`](Self::client_metadata_url) says otherwise.
    pub fn authorization_code(callback: impl AuthorizationCallback + 'static) -> OAuthConfig {
        OAuthConfig::new(Grant::AuthorizationCode(Arc::new(callback)))
    }

    /// The client credentials grant (no user: a service authorizes as itself) with a
    /// pre-registered client and its secret, sent as `client_secret_basic` or
    /// `client_secret_post`, whichever the authorization server's metadata lists
    /// (`client_secret_post` when it lists both or none).
    pub fn client_credentials(
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> OAuthConfig {
        let mut config = OAuthConfig::new(Grant::ClientSecret);
        config.client_id = Some(client_id.into());
        config.client_secret = Some(client_secret.into());
        config
    }

    /// The client credentials grant authenticated with `private_key_jwt` (RFC 7523): an
    /// assertion signed with `key_pem` (a PKCS#8 PEM private key) under `algorithm`
    /// (`RS256`, `RS384`, `RS512`, `PS256`, `PS384`, `PS512`, `ES256` or `ES384`).
    pub fn private_key_jwt(
        client_id: impl Into<String>,
        key_pem: impl Into<Vec<u8>>,
        algorithm: impl Into<String>,
    ) -> OAuthConfig {
        let mut config = OAuthConfig::new(Grant::PrivateKeyJwt {
            key_pem: key_pem.into(),
            algorithm: algorithm.into(),
        });
        config.client_id = Some(client_id.into());
        config
    }

    /// The JWT bearer grant (RFC 7523 section 2.1) for a workload: its `assertion`, a
    /// JWT from the workload's identity provider whose audience is the authorization
    /// server, traded for an access token, as the public client `client_id`. A
    /// rejected assertion is an error, not retried.
    pub fn jwt_bearer(client_id: impl Into<String>, assertion: impl Into<String>) -> OAuthConfig {
        let mut config = OAuthConfig::new(Grant::JwtBearer {
            assertion: assertion.into(),
        });
        config.client_id = Some(client_id.into());
        config
    }

    /// Enterprise-managed authorization (cross-app access): the user's ID token from
    /// the enterprise identity provider `idp` is exchanged there (RFC 8693) for an
    /// identity assertion grant bound to the MCP server, which the authorization server
    /// trades for an access token (the JWT bearer grant), the client authenticating
    /// there as the pre-registered `client_id` with `client_secret`
    /// (`client_secret_basic`, or `client_secret_post` when the server lists only it).
    /// No user interaction; on rmcp's `auth-enterprise-managed`.
    pub fn enterprise_managed(
        idp: EnterpriseIdp,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> OAuthConfig {
        let mut config = OAuthConfig::new(Grant::Enterprise(idp));
        config.client_id = Some(client_id.into());
        config.client_secret = Some(client_secret.into());
        config
    }

    /// A pre-registered client id (authorization code grant): no registration.
    pub fn client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// The pre-registered client's secret (a confidential client), sent as
    /// `client_secret_basic` or `client_secret_post` as the authorization server's
    /// metadata lists them. Without it the client is public (`none`).
    pub fn client_secret(mut self, client_secret: impl Into<String>) -> Self {
        self.client_secret = Some(client_secret.into());
        self
    }

    /// The `https://` URL of the client's Client ID Metadata Document, used as its
    /// client id where the authorization server supports such documents
    /// (`client_id_metadata_document_supported`); elsewhere the client registers
    /// dynamically.
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.metadata_url = Some(url.into());
        self
    }

    /// The `client_name` of a dynamic registration (default: this crate's name).
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// The scopes of the first authorization, instead of the server's (the
    /// challenge's `scope`, else the resource's `scopes_supported`).
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// Where tokens are kept (default: a [`MemoryTokenStore`] of this configuration,
    /// shared by the connections made with it).
    pub fn token_store(mut self, store: impl TokenStore + 'static) -> Self {
        self.store = Arc::new(store);
        self
    }

    /// The step-up authorizations made in a row on `403 insufficient_scope` before
    /// giving up with [`OAuthError::StepUpLimit`] (default [`DEFAULT_MAX_STEP_UPS`]);
    /// a request that succeeds resets the count.
    pub fn max_step_ups(mut self, max: u32) -> Self {
        self.max_step_ups = max;
        self
    }
}
