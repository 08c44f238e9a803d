//! [`Session`]: one MCP server's authorization state, and the flows that change it
//! (restore from the store, authorize, refresh, step up).

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use oauth2::TokenResponse as _;
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationRequest,
    AuthorizationSession, ClientCredentialsConfig, CredentialStore as _, InMemoryStateStore,
    OAuthTokenResponse, StateStore as _, StoredAuthorizationState, StoredCredentials,
    WWWAuthenticateParams,
};

use super::dpop::{self, Dpop};

use super::enterprise::Exchange;
use super::error::{Step, diagnose_metadata};
use super::jwt::{JwtGrant, jwt_bearer};
use super::store::StoreAdapter;
use super::{AuthorizationCallback, Grant, OAuthConfig, OAuthError, Redirect};

/// What a request already tried after a 401, so that it never loops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tried {
    /// Nothing: the token sent (if any) is the one the session had.
    Nothing,
    /// A refresh: the token sent was just refreshed.
    Refresh,
    /// A whole authorization: the token sent was just issued.
    Authorize,
}

/// The endpoints of the authorization server in use, for errors.
#[derive(Debug, Default, Clone)]
struct Endpoints {
    issuer: Option<String>,
    authorization: String,
    token: String,
    registration: Option<String>,
    /// The token endpoint takes `client_secret_post` and not `client_secret_basic`.
    post_only: bool,
    /// DPoP (RFC 9449) is used: the authorization server binds tokens to a key this
    /// client can make, and the MCP server's challenge offers the scheme.
    dpop: bool,
}

impl Endpoints {
    /// The endpoints of `metadata`; `challenge` is the MCP server's `WWW-Authenticate`
    /// that started the authorization (none for tokens restored from the store).
    fn of(metadata: &AuthorizationMetadata, challenge: Option<&str>) -> Endpoints {
        Endpoints {
            issuer: metadata.issuer.clone(),
            authorization: metadata.authorization_endpoint.clone(),
            token: metadata.token_endpoint.clone(),
            registration: metadata.registration_endpoint.clone(),
            post_only: metadata
                .additional_fields
                .get("token_endpoint_auth_methods_supported")
                .and_then(serde_json::Value::as_array)
                .is_some_and(|methods| {
                    let has = |m: &str| methods.iter().any(|x| x.as_str() == Some(m));
                    has("client_secret_post") && !has("client_secret_basic")
                }),
            dpop: challenge.is_some_and(dpop::challenged)
                && dpop::offered(&metadata.additional_fields),
        }
    }
}

#[derive(Default)]
struct State {
    manager: Option<AuthorizationManager>,
    /// The store was read for this server.
    loaded: bool,
    endpoints: Endpoints,
}

/// One MCP server's authorization: the configuration, the authorization manager of
/// the current authorization server, the step-up count, the last failure (for the
/// handshake's error).
pub(crate) struct Session {
    config: OAuthConfig,
    server: String,
    state: tokio::sync::Mutex<State>,
    step_ups: AtomicU32,
    last_error: std::sync::Mutex<Option<OAuthError>>,
    /// The store, for this server, as every manager of the session reads it.
    adapter: StoreAdapter,
    /// The authorization requests in flight (their PKCE verifiers), shared with every
    /// manager of the session: a DPoP code exchange is made here, not by rmcp.
    pending: InMemoryStateStore,
    /// The DPoP key the current token is bound to, if it is.
    dpop: std::sync::Mutex<Option<Arc<Dpop>>>,
}

impl Session {
    pub(crate) fn new(config: OAuthConfig, server: &str) -> Arc<Session> {
        Arc::new(Session {
            server: server.to_string(),
            state: tokio::sync::Mutex::default(),
            step_ups: AtomicU32::new(0),
            last_error: std::sync::Mutex::default(),
            adapter: StoreAdapter::new(config.store.clone(), server),
            pending: InMemoryStateStore::new(),
            dpop: std::sync::Mutex::default(),
            config,
        })
    }

    /// The last OAuth failure, taken.
    pub(crate) fn take_error(&self) -> Option<OAuthError> {
        self.last_error
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    }

    fn record<T>(&self, result: Result<T, OAuthError>) -> Result<T, OAuthError> {
        if let Err(e) = &result {
            tracing::warn!(server = %self.server, error = %e, "OAuth failed");
            *self
                .last_error
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(e.clone());
        }
        result
    }

    /// A request with a token succeeded: the step-ups in a row start again.
    pub(crate) fn succeeded(&self) {
        self.step_ups.store(0, Ordering::Relaxed);
    }

    fn adapter(&self) -> StoreAdapter {
        self.adapter.clone()
    }

    /// The DPoP key the current token is bound to, if it is.
    pub(crate) fn dpop(&self) -> Option<Arc<Dpop>> {
        self.dpop
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The token to send now: the session's, a stored one, or none yet.
    pub(crate) async fn token(&self) -> Result<Option<String>, OAuthError> {
        let mut state = self.state.lock().await;
        let result = self.current(&mut state).await;
        self.record(result)
    }

    async fn current(&self, state: &mut State) -> Result<Option<String>, OAuthError> {
        if !state.loaded {
            state.loaded = true;
            self.restore(state).await?;
        }
        let Some(manager) = &state.manager else {
            return Ok(None);
        };
        match manager.get_access_token().await {
            Ok(token) => Ok(Some(token)),
            Err(AuthError::AuthorizationRequired) => Ok(None),
            Err(e) => {
                let _ = self.adapter().clear().await;
                Err(OAuthError::from_auth(
                    Step::Refresh,
                    &state.endpoints.token,
                    e,
                ))
            }
        }
    }

    /// Take up the stored tokens of this server, if there are any (discovering the
    /// authorization server's metadata without a challenge). Stored tokens that cannot
    /// be taken up are left for a new authorization to replace.
    async fn restore(&self, state: &mut State) -> Result<(), OAuthError> {
        let stored = self
            .adapter
            .load()
            .await
            .map_err(|e| OAuthError::from_auth(Step::Discovery, &self.server, e))?;
        // A DPoP-bound token is useless without the key of the session it was issued to.
        if stored.is_none_or(|t| {
            t.token_response
                .is_none_or(|t| t.token_type().as_ref().eq_ignore_ascii_case("dpop"))
        }) {
            return Ok(());
        }
        let mut manager = self.manager().await?;
        let resolution = match manager.resolve_metadata().await {
            Ok(resolution) => resolution,
            Err(e) => {
                tracing::warn!(server = %self.server, error = %e, "stored OAuth tokens not used");
                return Ok(());
            }
        };
        state.endpoints = Endpoints::of(&resolution.metadata, None);
        manager.set_metadata(resolution.metadata);
        match manager.initialize_from_store().await {
            Ok(true) => {}
            Ok(false) => return Ok(()),
            Err(e) => {
                tracing::warn!(server = %self.server, error = %e, "stored OAuth tokens not used");
                return Ok(());
            }
        }
        self.configure_secret(&mut manager)?;
        state.manager = Some(manager);
        Ok(())
    }

    /// A confidential pre-registered client authenticates its refreshes.
    fn configure_secret(&self, manager: &mut AuthorizationManager) -> Result<(), OAuthError> {
        if let (Grant::AuthorizationCode(callback), Some(id), Some(secret)) = (
            &self.config.grant,
            &self.config.client_id,
            &self.config.client_secret,
        ) {
            let config =
                rmcp::transport::auth::OAuthClientConfig::new(id.clone(), callback.redirect_uri())
                    .with_client_secret(secret.clone());
            manager
                .configure_client(config)
                .map_err(|e| OAuthError::from_auth(Step::Registration, &self.server, e))?;
        }
        Ok(())
    }

    async fn manager(&self) -> Result<AuthorizationManager, OAuthError> {
        let mut manager = AuthorizationManager::new(self.server.as_str())
            .await
            .map_err(|e| OAuthError::from_auth(Step::Discovery, &self.server, e))?;
        manager.set_credential_store(self.adapter());
        manager.set_state_store(self.pending.clone());
        Ok(manager)
    }

    /// The server answered 401 to a request that sent `sent`: the token to retry with.
    pub(crate) async fn unauthorized(
        &self,
        challenge: &str,
        sent: Option<&str>,
        tried: Tried,
    ) -> Result<(String, Tried), OAuthError> {
        let mut state = self.state.lock().await;
        let result = self
            .unauthorized_in(&mut state, challenge, sent, tried)
            .await;
        self.record(result)
    }

    async fn unauthorized_in(
        &self,
        state: &mut State,
        challenge: &str,
        sent: Option<&str>,
        tried: Tried,
    ) -> Result<(String, Tried), OAuthError> {
        // Another request authorized meanwhile.
        if let Some(current) = self.current(state).await?
            && Some(current.as_str()) != sent
        {
            return Ok((current, tried));
        }
        match tried {
            Tried::Authorize => Err(OAuthError::Rejected {
                url: self.server.clone(),
                challenge: challenge.to_string(),
            }),
            Tried::Nothing if sent.is_some() && has_refresh_token(state, &self.adapter()).await => {
                let manager = state.manager.as_ref().ok_or_else(|| self.lost())?;
                match manager.refresh_token().await {
                    Ok(token) => Ok((token.access_token().secret().clone(), Tried::Refresh)),
                    Err(e) => {
                        let _ = self.adapter().clear().await;
                        state.manager = None;
                        Err(OAuthError::from_auth(
                            Step::Refresh,
                            &state.endpoints.token,
                            e,
                        ))
                    }
                }
            }
            _ => {
                let token = self.authorize(state, challenge).await?;
                Ok((token, Tried::Authorize))
            }
        }
    }

    fn lost(&self) -> OAuthError {
        OAuthError::Config {
            url: self.server.clone(),
            reason: "the authorization state was lost".to_string(),
        }
    }

    /// The server answered 403 `insufficient_scope` to a request that sent `sent`:
    /// the token to retry with, after a step-up authorization.
    pub(crate) async fn insufficient_scope(
        &self,
        challenge: &str,
        sent: Option<&str>,
    ) -> Result<String, OAuthError> {
        let mut state = self.state.lock().await;
        let result = self
            .insufficient_scope_in(&mut state, challenge, sent)
            .await;
        self.record(result)
    }

    async fn insufficient_scope_in(
        &self,
        state: &mut State,
        challenge: &str,
        sent: Option<&str>,
    ) -> Result<String, OAuthError> {
        if let Some(current) = self.current(state).await?
            && Some(current.as_str()) != sent
        {
            return Ok(current);
        }
        let scope = self.challenge_scope(challenge);
        let attempts = self.step_ups.fetch_add(1, Ordering::Relaxed) + 1;
        if attempts > self.config.max_step_ups {
            return Err(OAuthError::StepUpLimit {
                url: self.server.clone(),
                scope: scope.unwrap_or_default(),
                attempts: self.config.max_step_ups,
            });
        }
        let Some(manager) = state.manager.take() else {
            return self.authorize(state, challenge).await;
        };
        let scopes = manager.select_scopes(scope.as_deref(), &[]);
        let manager = match &self.config.grant {
            Grant::AuthorizationCode(callback) => {
                let url = manager
                    .get_authorization_url(&refs(&scopes))
                    .await
                    .map_err(|e| {
                        OAuthError::from_auth(
                            Step::Authorization,
                            &state.endpoints.authorization,
                            e,
                        )
                    })?;
                self.redirect(manager, &state.endpoints, callback.as_ref(), &url)
                    .await?
            }
            _ => {
                self.client_credentials(manager, &state.endpoints, scopes)
                    .await?
            }
        };
        let token = self.issued(&manager, &state.endpoints).await;
        state.manager = Some(manager);
        token
    }

    /// The `scope` a challenge asks for.
    fn challenge_scope(&self, challenge: &str) -> Option<String> {
        let base = reqwest::Url::parse(&self.server).ok()?;
        WWWAuthenticateParams::parse(challenge, &base).scope
    }

    /// A whole authorization from the server's challenge: discovery, registration, the
    /// grant. Returns the new access token.
    async fn authorize(&self, state: &mut State, challenge: &str) -> Result<String, OAuthError> {
        state.manager = None;
        *self
            .dpop
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
        let mut manager = self.manager().await?;
        let resolution = match manager
            .resolve_metadata_from_challenge(Some(challenge))
            .await
        {
            Ok(resolution) => resolution,
            Err(AuthError::AuthorizationServersUnavailable {
                resource_metadata_url,
                authorization_servers,
            }) => {
                let (url, reason) = diagnose_metadata(&authorization_servers)
                    .await
                    .unwrap_or_else(|| {
                        (
                            resource_metadata_url.to_string(),
                            format!(
                                "none of its authorization servers ({}) publishes metadata",
                                authorization_servers.join(", ")
                            ),
                        )
                    });
                return Err(OAuthError::Metadata { url, reason });
            }
            Err(e) => return Err(OAuthError::from_auth(Step::Discovery, &self.server, e)),
        };
        state.endpoints = Endpoints::of(&resolution.metadata, Some(challenge));
        manager.set_metadata(resolution.metadata);
        let manager = match &self.config.grant {
            Grant::AuthorizationCode(callback) => {
                self.authorization_code(manager, &state.endpoints, callback.as_ref())
                    .await?
            }
            _ => {
                let scopes = match &self.config.scopes {
                    Some(scopes) => scopes.clone(),
                    None => manager.select_initial_scopes(&[]).await,
                };
                self.client_credentials(manager, &state.endpoints, scopes)
                    .await?
            }
        };
        let token = self.issued(&manager, &state.endpoints).await;
        state.manager = Some(manager);
        token
    }

    async fn issued(
        &self,
        manager: &AuthorizationManager,
        endpoints: &Endpoints,
    ) -> Result<String, OAuthError> {
        manager
            .get_access_token()
            .await
            .map_err(|e| OAuthError::from_auth(Step::Token, &endpoints.token, e))
    }

    /// Registration (or the pre-registered or metadata-document client), the
    /// authorization URL, the host's callback, the code exchange.
    async fn authorization_code(
        &self,
        manager: AuthorizationManager,
        endpoints: &Endpoints,
        callback: &dyn AuthorizationCallback,
    ) -> Result<AuthorizationManager, OAuthError> {
        let mut request = AuthorizationRequest::new(callback.redirect_uri())
            .with_client_name(self.config.client_name.clone())
            .with_initial_scope_selection();
        if let Some(scopes) = &self.config.scopes {
            request = request.with_scopes(scopes.iter().cloned());
        }
        if let Some(id) = &self.config.client_id {
            request = request.with_preregistered_client(id.clone());
            if let Some(secret) = &self.config.client_secret {
                request = request.with_client_secret(secret.clone());
            }
        } else if let Some(url) = &self.config.metadata_url {
            request = request.with_client_metadata_url(url.clone());
        }
        let session = AuthorizationSession::new(manager, request)
            .await
            .map_err(|(_, e)| {
                let at = endpoints
                    .registration
                    .clone()
                    .or_else(|| endpoints.issuer.clone())
                    .unwrap_or_else(|| endpoints.authorization.clone());
                OAuthError::from_auth(Step::Registration, &at, e)
            })?;
        let url = session.auth_url.clone();
        self.redirect(session.auth_manager, endpoints, callback, &url)
            .await
    }

    /// The host's callback on `url`, then the code exchange.
    async fn redirect(
        &self,
        manager: AuthorizationManager,
        endpoints: &Endpoints,
        callback: &dyn AuthorizationCallback,
        url: &str,
    ) -> Result<AuthorizationManager, OAuthError> {
        let at = |reason: String| OAuthError::Authorization {
            url: endpoints.authorization.clone(),
            reason,
        };
        let (code, state, iss) = match callback.authorize(url).await.map_err(at)? {
            Redirect::Code { code, state, iss } => (code, state, iss),
            Redirect::Url(redirect) => parse_redirect(&redirect).map_err(at)?,
        };
        if endpoints.dpop {
            let exchange = CodeExchange {
                endpoints,
                redirect_uri: callback.redirect_uri(),
                authorization_url: url,
                code: &code,
                state: &state,
                iss: iss.as_deref(),
            };
            self.dpop_exchange(&manager, exchange).await?;
            return Ok(manager);
        }
        manager
            .exchange_code_for_token_with_issuer(&code, &state, iss.as_deref())
            .await
            .map_err(|e| match e {
                AuthError::InternalError(reason) => at(reason),
                e => OAuthError::from_auth(Step::Token, &endpoints.token, e),
            })?;
        Ok(manager)
    }

    /// The grants without a user (client credentials, JWT bearer, enterprise-managed),
    /// for `scopes`: the token, stored.
    async fn client_credentials(
        &self,
        mut manager: AuthorizationManager,
        endpoints: &Endpoints,
        scopes: Vec<String>,
    ) -> Result<AuthorizationManager, OAuthError> {
        let client_id = self.config.client_id.clone().unwrap_or_default();
        let token = self
            .service_token(&mut manager, endpoints, &client_id, &scopes)
            .await?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        let granted = token
            .scopes()
            .map(|s| s.iter().map(|s| s.to_string()).collect())
            .unwrap_or(scopes);
        let stored = StoredCredentials::new(client_id.clone(), Some(token), granted, Some(now))
            .with_issuer(endpoints.issuer.clone());
        self.adapter()
            .save(stored)
            .await
            .map_err(|e| OAuthError::Store(e.to_string()))?;
        manager
            .configure_client_id(&client_id)
            .map_err(|e| OAuthError::from_auth(Step::Token, &endpoints.token, e))?;
        Ok(manager)
    }

    /// The token request of a grant without a user.
    async fn service_token(
        &self,
        manager: &mut AuthorizationManager,
        endpoints: &Endpoints,
        client_id: &str,
        scopes: &[String],
    ) -> Result<OAuthTokenResponse, OAuthError> {
        Ok(match &self.config.grant {
            Grant::PrivateKeyJwt { key_pem, algorithm } => {
                let audience = endpoints.issuer.as_deref().unwrap_or(&endpoints.token);
                JwtGrant {
                    server: &self.server,
                    token_endpoint: &endpoints.token,
                    audience,
                    client_id,
                    key_pem,
                    algorithm,
                    scopes,
                    resource: &self.server,
                }
                .request()
                .await?
            }
            Grant::JwtBearer { assertion } => {
                jwt_bearer(&endpoints.token, client_id, assertion, scopes, &self.server).await?
            }
            Grant::Enterprise(idp) => {
                Exchange {
                    idp,
                    issuer: endpoints.issuer.as_deref().unwrap_or_default(),
                    token_endpoint: &endpoints.token,
                    client_id,
                    client_secret: self.config.client_secret.as_deref().unwrap_or_default(),
                    basic: !endpoints.post_only,
                    resource: &self.server,
                    scopes,
                }
                .run()
                .await?
            }
            _ => {
                let config = ClientCredentialsConfig::ClientSecret {
                    client_id: client_id.to_string(),
                    client_secret: self.config.client_secret.clone().unwrap_or_default(),
                    scopes: scopes.to_vec(),
                    resource: Some(self.server.clone()),
                };
                let token_error = |e| OAuthError::from_auth(Step::Token, &endpoints.token, e);
                manager
                    .configure_client_credentials(&config)
                    .map_err(token_error)?;
                manager
                    .exchange_client_credentials(&config)
                    .await
                    .map_err(token_error)?
            }
        })
    }
}

/// An authorization code to exchange, with what the exchange checks and sends.
struct CodeExchange<'a> {
    endpoints: &'a Endpoints,
    redirect_uri: String,
    /// The authorization request's URL (its `resource` is the token request's).
    authorization_url: &'a str,
    code: &'a str,
    state: &'a str,
    iss: Option<&'a str>,
}

impl Session {
    /// The code exchange with a DPoP proof (RFC 9449 section 5), made here because
    /// rmcp's token request cannot carry one: the redirect's `state` and `iss`
    /// checked, then the token request, the token stored and bound to the session's key.
    async fn dpop_exchange(
        &self,
        manager: &AuthorizationManager,
        exchange: CodeExchange<'_>,
    ) -> Result<(), OAuthError> {
        let endpoints = exchange.endpoints;
        let at = |reason: String| OAuthError::Authorization {
            url: endpoints.authorization.clone(),
            reason,
        };
        let pending = self
            .pending
            .load(exchange.state)
            .await
            .ok()
            .flatten()
            .ok_or_else(|| {
                at(format!(
                    "the redirect's state {:?} answers no authorization request of this client",
                    exchange.state
                ))
            })?;
        check_issuer(&pending, exchange.iss).map_err(at)?;
        let _ = self.pending.delete(exchange.state).await;
        let (client_id, _) = manager
            .get_credentials()
            .await
            .map_err(|e| OAuthError::from_auth(Step::Token, &endpoints.token, e))?;
        let resource = query_param(exchange.authorization_url, "resource")
            .unwrap_or_else(|| self.server.clone());
        let mut form = vec![
            ("grant_type", "authorization_code".to_string()),
            ("code", exchange.code.to_string()),
            ("code_verifier", pending.pkce_verifier.clone()),
            ("redirect_uri", exchange.redirect_uri),
            ("client_id", client_id.clone()),
            ("resource", resource),
        ];
        let secret = self.config.client_secret.as_deref();
        if let (Some(secret), true) = (secret, endpoints.post_only) {
            form.push(("client_secret", secret.to_string()));
        }
        let basic = secret
            .filter(|_| !endpoints.post_only)
            .map(|s| (client_id.as_str(), s));
        let key = match self.dpop() {
            Some(key) => key,
            None => Arc::new(Dpop::generate(&self.server)?),
        };
        let token = key.token_request(&endpoints.token, &form, basic).await?;
        let granted = token
            .scopes()
            .map(|s| s.iter().map(|s| s.to_string()).collect())
            .unwrap_or(pending.requested_scopes);
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        let stored = StoredCredentials::new(client_id, Some(token), granted, Some(now))
            .with_issuer(endpoints.issuer.clone());
        self.adapter()
            .save(stored)
            .await
            .map_err(|e| OAuthError::Store(e.to_string()))?;
        *self
            .dpop
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(key);
        Ok(())
    }
}

/// The redirect's `iss` against the authorization server's (RFC 9207), as rmcp checks it.
fn check_issuer(pending: &StoredAuthorizationState, iss: Option<&str>) -> Result<(), String> {
    match (pending.expected_issuer.as_deref(), iss) {
        (Some(expected), Some(iss)) if expected != iss => Err(format!(
            "the redirect's iss {iss:?} is not the authorization server's issuer {expected:?}"
        )),
        (Some(expected), None) if pending.require_issuer => Err(format!(
            "the redirect has no iss (the authorization server {expected:?} sends one)"
        )),
        (None, None) if pending.require_issuer => {
            Err("the redirect has no iss, and the authorization server has no issuer".to_string())
        }
        (None, Some(iss)) => Err(format!(
            "the redirect's iss {iss:?} cannot be checked: the authorization server has no issuer"
        )),
        _ => Ok(()),
    }
}

/// A query parameter of `url`.
fn query_param(url: &str, name: &str) -> Option<String> {
    let url = reqwest::Url::parse(url).ok()?;
    url.query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// Whether the session holds a refresh token.
async fn has_refresh_token(state: &State, store: &StoreAdapter) -> bool {
    if state.manager.is_none() {
        return false;
    }
    matches!(
        store.load().await,
        Ok(Some(StoredCredentials { token_response: Some(token), .. }))
            if token.refresh_token().is_some()
    )
}

fn refs(scopes: &[String]) -> Vec<&str> {
    scopes.iter().map(String::as_str).collect()
}

/// `code`, `state` and `iss` of a redirect URL, or its `error`.
fn parse_redirect(redirect: &str) -> Result<(String, String, Option<String>), String> {
    let url = reqwest::Url::parse(redirect)
        .map_err(|e| format!("the redirect {redirect:?} is not a URL: {e}"))?;
    let param = |name: &str| {
        url.query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    };
    if let Some(error) = param("error") {
        let description = param("error_description")
            .map(|d| format!(": {d}"))
            .unwrap_or_default();
        return Err(format!(
            "the authorization server answered {error}{description}"
        ));
    }
    let code = param("code").ok_or_else(|| format!("the redirect {redirect:?} has no code"))?;
    let state = param("state").ok_or_else(|| format!("the redirect {redirect:?} has no state"))?;
    Ok((code, state, param("iss")))
}
