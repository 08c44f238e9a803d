//! The OAuth steps of the HTTP server: the metadata routes, the token check in front of
//! everything else (after the `Origin` check), and the wait for the handler's verdict on
//! a `tools/call` (after the server read and parsed the body, once), which turns a call
//! beyond the token's scope into a `403`.

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::Request;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::OAuthOptions;
use super::jwks::Jwks;
use super::validate::Validator;
use super::{challenge, metadata};
use crate::identity::Identity;
use crate::server::{Denial, VerdictSlot};
use crate::util::lock;
use crate::wire::Refusal;

/// How long the layer waits for the handler's verdict on a call before it lets rmcp's
/// answer stand.
const VERDICT_WAIT: Duration = Duration::from_secs(30);

/// Session bindings kept before the ones unused the longest are dropped.
const MAX_SESSION_BINDINGS: usize = 65_536;

/// The server as a protected resource: how tokens are checked, the metadata, and which
/// principal each session belongs to.
pub(crate) struct Resource {
    validator: Validator,
    /// The absolute URL of the metadata (what challenges name).
    metadata_url: String,
    /// The paths the metadata is served at.
    metadata_paths: Vec<String>,
    /// The metadata document.
    document: Vec<u8>,
    /// Whether any tool needs a scope (else calls are not waited on).
    scoped: bool,
    /// The principal of each session and when it was last used.
    sessions: Mutex<HashMap<String, (String, Instant)>>,
}

impl Resource {
    /// Read the issuer's keys and make the metadata: `default_audience` is the server's
    /// own URL, `endpoint` its path, `tool_scopes` the scopes the tools need.
    ///
    /// # Errors
    ///
    /// The audience is not a URL, or the issuer's metadata or keys cannot be read.
    pub(crate) async fn start(
        options: &OAuthOptions,
        default_audience: String,
        endpoint: &str,
        tool_scopes: &crate::ToolScopes,
    ) -> io::Result<Arc<Resource>> {
        let invalid =
            |e: String| io::Error::new(io::ErrorKind::InvalidInput, format!("OAuth: {e}"));
        let audience = options.audience.clone().unwrap_or(default_audience);
        let (path, metadata_url) = metadata::location(&audience).map_err(invalid)?;
        if options.issuer.is_empty() {
            return Err(invalid("the issuer is empty".to_string()));
        }
        let jwks = Jwks::start(
            &options.issuer,
            options.jwks.as_ref(),
            options.jwks_refresh_interval,
            options.fetch_timeout,
        )
        .await
        .map_err(|e| io::Error::other(format!("OAuth: {e}")))?;
        let mut scopes: Vec<String> = tool_scopes.scopes().into_iter().collect();
        for scope in &options.scopes {
            if !scopes.contains(scope) {
                scopes.push(scope.clone());
            }
        }
        let document = serde_json::to_vec(&metadata::document(&audience, &options.issuer, &scopes))
            .map_err(|e| io::Error::other(format!("OAuth: the metadata: {e}")))?;
        let mut metadata_paths = vec![
            path,
            metadata::well_known(endpoint),
            metadata::well_known(""),
        ];
        metadata_paths.dedup();
        metadata_paths.sort();
        metadata_paths.dedup();
        Ok(Arc::new(Resource {
            validator: Validator {
                issuer: options.issuer.clone(),
                audience,
                jwks,
                leeway: options.leeway.as_secs(),
            },
            metadata_url,
            metadata_paths,
            document,
            scoped: !tool_scopes.is_empty(),
            sessions: Mutex::default(),
        }))
    }

    /// The metadata routes, for every client without a token.
    pub(crate) fn routes(self: &Arc<Self>) -> axum::Router {
        let mut router = axum::Router::new();
        for path in &self.metadata_paths {
            let resource = self.clone();
            router = router.route(
                path,
                axum::routing::get(move || async move {
                    (
                        [
                            (header::CONTENT_TYPE, "application/json"),
                            (header::CACHE_CONTROL, "max-age=300"),
                        ],
                        resource.document.clone(),
                    )
                }),
            );
        }
        router
    }

    /// Check the request's token, then hand it to `next` (the steps behind this one).
    pub(crate) async fn check_token(
        self: &Arc<Self>,
        request: Request,
        next: impl AsyncFnOnce(Request) -> Response,
    ) -> Response {
        check_token(self, request, next).await
    }

    /// Hand `request`, a `tools/call` (as the server's message reader found it), to
    /// `next` and, when a tool needs a scope, wait for the handler's verdict on it.
    pub(crate) async fn await_verdict(
        self: &Arc<Self>,
        request: Request,
        next: impl AsyncFnOnce(Request) -> Response,
    ) -> Response {
        if !self.scoped {
            return next(request).await;
        }
        await_verdict(self, request, next).await
    }

    /// Whether `principal` may use the session `id`: the principal that opened it (the
    /// first seen on it), and no other.
    fn session_allowed(&self, id: &str, principal: &str) -> bool {
        let mut sessions = lock(&self.sessions);
        let now = Instant::now();
        if let Some((owner, used)) = sessions.get_mut(id) {
            if owner != principal {
                return false;
            }
            *used = now;
            return true;
        }
        bind(&mut sessions, id, principal, now);
        true
    }

    fn forget_session(&self, id: &str) {
        lock(&self.sessions).remove(id);
    }
}

/// Bind the session `id` to `principal`, dropping the bindings unused longest beyond
/// the cap.
fn bind(
    sessions: &mut HashMap<String, (String, Instant)>,
    id: &str,
    principal: &str,
    now: Instant,
) {
    if sessions.len() >= MAX_SESSION_BINDINGS {
        let mut by_use: Vec<(Instant, String)> =
            sessions.iter().map(|(k, (_, t))| (*t, k.clone())).collect();
        by_use.sort();
        for (_, k) in by_use.into_iter().take(MAX_SESSION_BINDINGS / 4) {
            sessions.remove(&k);
        }
    }
    sessions.insert(id.to_string(), (principal.to_string(), now));
}

/// The bearer token of the request: `Ok(None)` without one (no `Authorization`, or
/// another scheme).
fn bearer(headers: &HeaderMap) -> Result<Option<&str>, &'static str> {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err("more than one Authorization header");
    }
    let value = value
        .to_str()
        .map_err(|_| "the Authorization header is not text")?;
    let Some((scheme, token)) = value.split_once(' ') else {
        return Ok(None);
    };
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Ok(None);
    }
    let token = token.trim();
    if token.is_empty() {
        return Err("the bearer token is empty");
    }
    Ok(Some(token))
}

async fn check_token(
    resource: &Resource,
    mut request: Request,
    next: impl AsyncFnOnce(Request) -> Response,
) -> Response {
    let metadata = resource.metadata_url.as_str();
    let identity = match bearer(request.headers()) {
        Ok(None) => return challenge::missing(metadata),
        Err(why) => return challenge::invalid_request(metadata, why),
        Ok(Some(token)) => match resource.validator.validate(token).await {
            Ok(identity) => identity,
            Err(invalid) => {
                tracing::debug!("dsh-mcp OAuth: token refused: {}", invalid.0);
                return challenge::invalid_token(metadata, &invalid.0);
            }
        },
    };
    // The token goes no further: nothing behind this layer sees it.
    request.headers_mut().remove(header::AUTHORIZATION);
    let principal = identity.principal();
    let session = request
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    if let Some(id) = &session
        && !resource.session_allowed(id, &principal)
    {
        tracing::warn!(
            subject = identity.subject(),
            "dsh-mcp OAuth: a request on another principal's session"
        );
        return Refusal::text(404, "Not Found: Session not found").into_response();
    }
    let deleting = request.method() == Method::DELETE;
    request.extensions_mut().insert::<Identity>(identity);
    let response = next(request).await;
    match &session {
        Some(id) if response.status() == StatusCode::NOT_FOUND => resource.forget_session(id),
        Some(id) if deleting && response.status().is_success() => resource.forget_session(id),
        Some(_) => {}
        None => {
            // A session opened by this request (`initialize`) is its principal's.
            if let Some(id) = response
                .headers()
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
            {
                let mut sessions = lock(&resource.sessions);
                bind(&mut sessions, id, &principal, Instant::now());
            }
        }
    }
    response
}

async fn await_verdict(
    resource: &Resource,
    mut request: Request,
    next: impl AsyncFnOnce(Request) -> Response,
) -> Response {
    let (slot, verdict) = VerdictSlot::new();
    request.extensions_mut().insert(slot);
    let run = next(request);
    tokio::pin!(run);
    let wait = tokio::time::sleep(VERDICT_WAIT);
    tokio::pin!(wait);
    let mut verdict = verdict;
    let mut answered: Option<Response> = None;
    let denial = loop {
        tokio::select! {
            v = &mut verdict => break v.ok().flatten(),
            r = &mut run, if answered.is_none() => answered = Some(r),
            () = &mut wait => break None,
        }
    };
    match denial {
        Some(Denial::InsufficientScope { tool, scope }) => {
            challenge::insufficient_scope(&resource.metadata_url, &tool, &scope)
        }
        None => match answered {
            Some(response) => response,
            None => run.await,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_bearer_tokens_are_read() {
        let mut h = HeaderMap::new();
        assert_eq!(bearer(&h), Ok(None));
        h.insert(header::AUTHORIZATION, "Basic dXNlcjpwdw==".parse().unwrap());
        assert_eq!(bearer(&h), Ok(None));
        h.insert(header::AUTHORIZATION, "bearer abc.def.ghi".parse().unwrap());
        assert_eq!(bearer(&h), Ok(Some("abc.def.ghi")));
        h.append(header::AUTHORIZATION, "Bearer x".parse().unwrap());
        assert!(bearer(&h).is_err());
    }

    #[test]
    fn bindings_beyond_the_cap_drop_the_oldest() {
        let mut sessions = HashMap::new();
        let start = Instant::now();
        for i in 0..MAX_SESSION_BINDINGS {
            bind(
                &mut sessions,
                &i.to_string(),
                "p",
                start + Duration::from_millis(i as u64),
            );
        }
        bind(&mut sessions, "new", "p", start + Duration::from_secs(3600));
        assert!(sessions.contains_key("new"));
        assert!(!sessions.contains_key("0"));
        assert!(sessions.contains_key(&(MAX_SESSION_BINDINGS - 1).to_string()));
    }
}
