//! [`AuthorizationCallback`]: the host's part of the interactive authorization-code
//! flow.

use std::future::Future;
use std::pin::Pin;

/// What [`AuthorizationCallback::authorize`] returns: a boxed future of the redirect,
/// or the reason the user could not authorize.
pub type AuthorizeFuture<'a> = Pin<Box<dyn Future<Output = Result<Redirect, String>> + Send + 'a>>;

/// Where the authorization server sent the user back to.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Redirect {
    /// The whole redirect URL (`<redirect_uri>?code=…&state=…&iss=…`), as a loopback
    /// listener receives it. An `error` parameter in it is reported as
    /// [`OAuthError::Authorization`](super::OAuthError::Authorization).
    Url(String),
    /// The redirect's parameters, read by the host.
    Code {
        /// `code`.
        code: String,
        /// `state`: checked against the one the authorization URL carries.
        state: String,
        /// `iss` (RFC 9207), when the redirect carries one: checked against the
        /// authorization server's issuer.
        iss: Option<String>,
    },
}

/// The host's part of the interactive authorization-code flow: show the user the
/// authorization URL, wait for the authorization server to redirect back, and hand
/// the redirect over.
///
/// The client calls it when a server answers 401 and no stored token works, and again
/// for a step-up when a server answers 403 `insufficient_scope`. Everything else
/// (discovery, registration, PKCE, the `resource` parameter, the `state` and `iss`
/// checks, the token request) is the client's.
///
/// A CLI typically binds a loopback listener (`http://127.0.0.1:<port>/callback`),
/// returns its address from [`redirect_uri`](Self::redirect_uri), prints the URL (or
/// opens a browser) in [`authorize`](Self::authorize) and answers with the first
/// request the listener receives, as [`Redirect::Url`]. A headless test follows the
/// URL with an HTTP GET without following the redirect, and returns its `Location`.
///
/// ```
/// use dsh_mcp::oauth_client::{AuthorizationCallback, AuthorizeFuture, Redirect};
///
/// /// Prints the URL and reads the redirect URL the user pastes back.
/// struct Terminal;
///
/// impl AuthorizationCallback for Terminal {
///     fn redirect_uri(&self) -> String {
///         "http://127.0.0.1:8976/callback".to_string()
///     }
///
///     fn authorize<'a>(&'a self, url: &'a str) -> AuthorizeFuture<'a> {
///         Box::pin(async move {
///             eprintln!("open {url} and paste the address you land on:");
///             let mut line = String::new();
///             std::io::stdin().read_line(&mut line).map_err(|e| e.to_string())?;
///             Ok(Redirect::Url(line.trim().to_string()))
///         })
///     }
/// }
/// ```
pub trait AuthorizationCallback: Send + Sync {
    /// The redirect URI: registered with the authorization server (dynamic
    /// registration) and sent in the authorization request. A pre-registered client
    /// must return one of its registered URIs.
    fn redirect_uri(&self) -> String;

    /// Have the user authorize at `url` (the authorization endpoint with the client id,
    /// scopes, PKCE challenge, `state` and `resource`), and return where they were sent
    /// back to. An `Err` aborts the connection with
    /// [`OAuthError::Authorization`](super::OAuthError::Authorization) carrying its
    /// text.
    fn authorize<'a>(&'a self, url: &'a str) -> AuthorizeFuture<'a>;
}
