//! The OAuth client (`dsh_mcp::oauth_client`, feature `oauth-client`): the file token
//! store, and the errors of a broken authorization server, each naming what was wrong
//! and where: a malformed metadata document, a token endpoint error, a failed
//! refresh, a redirect to another origin.
//!
//! The servers are small axum routers on loopback playing the MCP server, its
//! protected-resource metadata and its authorization server, each broken in one way.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use dsh_mcp::oauth_client::{
    AuthorizationCallback, AuthorizeFuture, FileTokenStore, MemoryTokenStore, OAuthConfig,
    OAuthError, StoredTokens, TokenStore,
};
use dsh_mcp::{ClientBuilder, ConnectError};
use serde_json::json;

use crate::common::PATIENCE;

/// How the test authorization server is broken.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Broken {
    /// The authorization server's metadata is cut short (not JSON).
    Metadata,
    /// The token endpoint answers `invalid_client` to every request.
    TokenEndpoint,
    /// The token endpoint answers `invalid_grant` (to the refresh).
    Refresh,
}

/// A running test server: its base URL and how many token requests it got.
struct Server {
    base: String,
    token_requests: Arc<AtomicUsize>,
}

impl Server {
    fn mcp(&self) -> String {
        format!("{}/mcp", self.base)
    }
}

async fn listener() -> (tokio::net::TcpListener, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    (listener, base)
}

/// The MCP server (every request 401, pointing at its metadata), the metadata and the
/// authorization server, broken as `broken` says.
async fn serve(broken: Broken) -> Server {
    let (listener, base) = listener().await;
    let token_requests = Arc::new(AtomicUsize::new(0));
    let counter = token_requests.clone();
    let prm_url = format!("{base}/.well-known/oauth-protected-resource/mcp");
    let challenge = format!("Bearer resource_metadata=\"{prm_url}\"");
    let resource = json!({ "resource": format!("{base}/mcp"), "authorization_servers": [base] });
    let issuer = json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "registration_endpoint": format!("{base}/register"),
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["client_secret_post"],
        "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
        "response_types_supported": ["code"],
    });
    let prm = move || {
        let resource = resource.clone();
        async move { json_response(StatusCode::OK, &resource) }
    };
    let router = axum::Router::new()
        .route(
            "/mcp",
            post(move || {
                let challenge = challenge.clone();
                async move {
                    (
                        StatusCode::UNAUTHORIZED,
                        [(header::WWW_AUTHENTICATE, challenge)],
                    )
                }
            }),
        )
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(prm.clone()),
        )
        .route("/.well-known/oauth-protected-resource", get(prm))
        .route(
            "/.well-known/oauth-authorization-server",
            get(move || {
                let issuer = issuer.clone();
                async move {
                    match broken {
                        Broken::Metadata => (
                            [(header::CONTENT_TYPE, "application/json")],
                            "{\"issuer\": ",
                        )
                            .into_response(),
                        _ => json_response(StatusCode::OK, &issuer),
                    }
                }
            }),
        )
        .route(
            "/token",
            post(move || {
                counter.fetch_add(1, Ordering::SeqCst);
                async move {
                    let (error, description) = match broken {
                        Broken::Refresh => ("invalid_grant", "the refresh token expired"),
                        _ => ("invalid_client", "unknown client secret"),
                    };
                    json_response(
                        StatusCode::BAD_REQUEST,
                        &json!({ "error": error, "error_description": description }),
                    )
                }
            }),
        );
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    Server {
        base,
        token_requests,
    }
}

/// A JSON answer (axum's `Json` needs a feature this crate does not turn on).
fn json_response(status: StatusCode, value: &serde_json::Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

fn builder() -> ClientBuilder {
    ClientBuilder::new("oauth-client-test", "1.0.0").request_timeout(PATIENCE)
}

/// Connect, expecting an OAuth failure.
async fn oauth_failure(url: &str, config: OAuthConfig) -> OAuthError {
    let connected = tokio::time::timeout(PATIENCE, builder().oauth(config).connect_http(url))
        .await
        .expect("the connection attempt ended");
    match connected {
        Err(ConnectError::OAuth(e)) => e,
        Err(other) => panic!("expected an OAuth error, got {other}"),
        Ok(_) => panic!("the connection to {url} succeeded"),
    }
}

/// A callback that must not be reached.
struct NoUser;

impl AuthorizationCallback for NoUser {
    fn redirect_uri(&self) -> String {
        "http://127.0.0.1:1/callback".to_string()
    }

    fn authorize<'a>(&'a self, url: &'a str) -> AuthorizeFuture<'a> {
        Box::pin(async move { Err(format!("no user to authorize at {url}")) })
    }
}

fn tokens(access: &str, refresh: Option<&str>) -> StoredTokens {
    let mut response = json!({ "access_token": access, "token_type": "bearer" });
    if let Some(refresh) = refresh {
        response["refresh_token"] = json!(refresh);
    }
    serde_json::from_value(json!({
        "client_id": "stored-client",
        "token_response": response,
        "granted_scopes": ["mcp:read"],
        "token_received_at": 1,
    }))
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_store_round_trips_per_server_in_a_private_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.json");
    let store = FileTokenStore::new(&path);
    assert!(store.load("http://a/mcp").await.unwrap().is_none());

    store
        .save("http://a/mcp", tokens("token-a", Some("refresh-a")))
        .await
        .unwrap();
    store
        .save("http://b/mcp", tokens("token-b", None))
        .await
        .unwrap();

    // A second store on the same file (the next run) reads what the first wrote.
    let again = FileTokenStore::new(&path);
    let a = again.load("http://a/mcp").await.unwrap().unwrap();
    assert_eq!(a.access_token(), Some("token-a"));
    assert!(a.has_refresh_token());
    assert_eq!(a.client_id(), "stored-client");
    assert_eq!(a.scopes(), ["mcp:read".to_string()]);
    let b = again.load("http://b/mcp").await.unwrap().unwrap();
    assert_eq!(b.access_token(), Some("token-b"));
    assert!(!b.has_refresh_token());

    again.clear("http://a/mcp").await.unwrap();
    assert!(store.load("http://a/mcp").await.unwrap().is_none());
    assert!(store.load("http://b/mcp").await.unwrap().is_some());

    // Only the store file is left (no temporary file), readable by its owner only.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, ["tokens.json"]);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "mode {mode:o}");
    }
    // The debug form does not show the secrets.
    let shown = format!("{a:?}");
    assert!(
        !shown.contains("token-a") && !shown.contains("refresh-a"),
        "{shown}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_store_names_a_file_that_is_not_a_store() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.json");
    std::fs::write(&path, "[1, 2]").unwrap();
    let error = FileTokenStore::new(&path)
        .load("http://a/mcp")
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains(&path.display().to_string()), "{error}");
    assert!(error.contains("not a token store"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_metadata_names_the_document() {
    let server = serve(Broken::Metadata).await;
    let error = oauth_failure(&server.mcp(), OAuthConfig::authorization_code(NoUser)).await;
    let OAuthError::Metadata { url, reason } = &error else {
        panic!("expected a metadata error, got {error}");
    };
    assert!(
        url.starts_with(&server.base) && url.contains("/.well-known/oauth-authorization-server"),
        "{error}"
    );
    assert!(reason.contains("not JSON"), "{error}");
    assert_eq!(server.token_requests.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_endpoint_error_names_the_endpoint_and_its_error() {
    let server = serve(Broken::TokenEndpoint).await;
    let config = OAuthConfig::client_credentials("service", "wrong-secret");
    let error = oauth_failure(&server.mcp(), config).await;
    let OAuthError::TokenEndpoint { url, reason } = &error else {
        panic!("expected a token endpoint error, got {error}");
    };
    assert_eq!(url, &format!("{}/token", server.base), "{error}");
    assert!(reason.contains("invalid_client"), "{error}");
    assert!(reason.contains("unknown client secret"), "{error}");
    let shown = ConnectError::OAuth(error.clone()).to_string();
    assert!(shown.contains(&format!("{}/token", server.base)), "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_refresh_is_an_error_and_clears_the_tokens() {
    let server = serve(Broken::Refresh).await;
    let store = MemoryTokenStore::new();
    store
        .save(&server.mcp(), tokens("revoked", Some("expired-refresh")))
        .await
        .unwrap();
    let config = OAuthConfig::authorization_code(NoUser).token_store(store.clone());
    let error = oauth_failure(&server.mcp(), config).await;
    let OAuthError::Refresh { url, reason } = &error else {
        panic!("expected a refresh error, got {error}");
    };
    assert_eq!(url, &format!("{}/token", server.base), "{error}");
    assert!(reason.contains("invalid_grant"), "{error}");
    assert_eq!(server.token_requests.load(Ordering::SeqCst), 1);
    assert!(store.load(&server.mcp()).await.unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callback_refusal_names_the_authorization_endpoint() {
    let server = serve(Broken::TokenEndpoint).await;
    let error = oauth_failure(&server.mcp(), OAuthConfig::authorization_code(NoUser)).await;
    // Dynamic registration is answered 404 by the test server: the registration
    // endpoint is named.
    let OAuthError::Registration { url, .. } = &error else {
        panic!("expected a registration error, got {error}");
    };
    assert_eq!(url, &format!("{}/register", server.base), "{error}");

    // A pre-registered client skips registration and reaches the user.
    let config = OAuthConfig::authorization_code(NoUser).client_id("pre-registered");
    let error = oauth_failure(&server.mcp(), config).await;
    let OAuthError::Authorization { url, reason } = &error else {
        panic!("expected an authorization error, got {error}");
    };
    assert_eq!(url, &format!("{}/authorize", server.base), "{error}");
    assert!(reason.contains("no user to authorize"), "{error}");
}

/// A redirect that leaves the server's origin is refused, naming both URLs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirect_to_another_origin_names_both_urls() {
    let (elsewhere, other) = listener().await;
    drop(elsewhere);
    let (listener, base) = listener().await;
    let target = format!("{other}/mcp");
    let location = target.clone();
    let router = axum::Router::new().route(
        "/mcp",
        post(move |_: HeaderMap| {
            let location = location.clone();
            async move {
                Response::builder()
                    .status(StatusCode::TEMPORARY_REDIRECT)
                    .header(header::LOCATION, location)
                    .body(axum::body::Body::empty())
                    .unwrap()
            }
        }),
    );
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    let url = format!("{base}/mcp");
    let connected = tokio::time::timeout(PATIENCE, builder().connect_http(&url))
        .await
        .expect("the connection attempt ended");
    match connected {
        Err(ConnectError::Redirect { from, to }) => {
            assert_eq!(
                (from.as_str(), to.as_str()),
                (url.as_str(), target.as_str())
            );
            let shown = ConnectError::Redirect { from, to }.to_string();
            assert!(shown.contains("another origin"), "{shown}");
        }
        Err(other) => panic!("expected a refused redirect, got {other}"),
        Ok(_) => panic!("the connection followed the redirect"),
    }
}

/// What the DPoP test servers saw: the `DPoP` proof of every token request, and the
/// `Authorization` and `DPoP` headers of every MCP request that carried a token.
#[derive(Default)]
struct DpopSeen {
    token_proofs: Vec<String>,
    token_forms: Vec<String>,
    mcp: Vec<(String, String)>,
}

/// A proof's header and claims, its signature checked with the key its header embeds.
fn verified_proof(proof: &str) -> (serde_json::Value, serde_json::Value) {
    use base64::Engine as _;
    let part = |i: usize| -> serde_json::Value {
        let text = proof.split('.').nth(i).expect("a three-part JWT");
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(text)
            .expect("base64url");
        serde_json::from_slice(&bytes).expect("JSON")
    };
    let header = part(0);
    let jwk = &header["jwk"];
    assert_eq!(
        (jwk["kty"].as_str(), jwk["crv"].as_str()),
        (Some("EC"), Some("P-256"))
    );
    assert!(
        jwk.get("d").is_none(),
        "the proof's jwk holds the private key"
    );
    let key = jsonwebtoken::DecodingKey::from_ec_components(
        jwk["x"].as_str().expect("x"),
        jwk["y"].as_str().expect("y"),
    )
    .expect("a P-256 public key");
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
    validation.validate_exp = false;
    validation.required_spec_claims.clear();
    jsonwebtoken::decode::<serde_json::Value>(proof, &key, &validation)
        .unwrap_or_else(|e| panic!("the proof's signature does not verify: {e}"));
    (header, part(1))
}

/// The access token of the DPoP test's authorization server.
const DPOP_TOKEN: &str = "dpop-bound-access-token";

/// A proof's `nonce` claim (read without checking the proof).
fn nonce_of(proof: &str) -> Option<String> {
    use base64::Engine as _;
    let claims = proof.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(claims)
        .ok()?;
    let claims: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    claims["nonce"].as_str().map(str::to_string)
}

/// An authorization server that binds tokens with DPoP and wants its nonce
/// (`as-nonce`) in the token request's proof, and an MCP server that wants DPoP with
/// its own nonce (`rs-nonce`) and answers 400 to the first request it takes; both
/// record what they saw in `seen`. Returns the base URL.
async fn serve_dpop(seen: Arc<std::sync::Mutex<DpopSeen>>) -> String {
    let (listener, base) = listener().await;
    let prm_url = format!("{base}/.well-known/oauth-protected-resource/mcp");
    let resource = json!({ "resource": format!("{base}/mcp"), "authorization_servers": [base] });
    let metadata = json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "response_types_supported": ["code"],
        "dpop_signing_alg_values_supported": ["ES256"],
    });
    let (token_seen, mcp_seen) = (seen.clone(), seen.clone());
    let router = axum::Router::new()
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(move || {
                let resource = resource.clone();
                async move { json_response(StatusCode::OK, &resource) }
            }),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            get(move || {
                let metadata = metadata.clone();
                async move { json_response(StatusCode::OK, &metadata) }
            }),
        )
        .route(
            "/token",
            post(move |headers: HeaderMap, form: String| {
                let proof = headers
                    .get("dpop")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_string();
                let mut seen = token_seen.lock().unwrap();
                seen.token_proofs.push(proof.clone());
                seen.token_forms.push(form);
                let answer = if nonce_of(&proof).as_deref() == Some("as-nonce") {
                    json_response(
                        StatusCode::OK,
                        &json!({ "access_token": DPOP_TOKEN, "token_type": "DPoP", "expires_in": 3600 }),
                    )
                } else {
                    let mut answer = json_response(
                        StatusCode::BAD_REQUEST,
                        &json!({ "error": "use_dpop_nonce", "error_description": "nonce" }),
                    );
                    answer
                        .headers_mut()
                        .insert("dpop-nonce", "as-nonce".parse().unwrap());
                    answer
                };
                async move { answer }
            }),
        )
        .route(
            "/mcp",
            post(move |headers: HeaderMap| {
                let header = |name: &str| {
                    headers
                        .get(name)
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_string)
                };
                let (auth, proof) = (header("authorization"), header("dpop"));
                let challenge = match (auth, proof) {
                    (Some(auth), Some(proof)) => {
                        let nonce = nonce_of(&proof);
                        mcp_seen.lock().unwrap().mcp.push((auth, proof));
                        (nonce.as_deref() != Some("rs-nonce")).then(|| {
                            format!(
                                "DPoP error=\"use_dpop_nonce\", resource_metadata=\"{prm_url}\""
                            )
                        })
                    }
                    _ => Some(format!("DPoP resource_metadata=\"{prm_url}\"")),
                };
                async move {
                    match challenge {
                        Some(challenge) => Response::builder()
                            .status(StatusCode::UNAUTHORIZED)
                            .header(header::WWW_AUTHENTICATE, challenge)
                            .header("dpop-nonce", "rs-nonce")
                            .body(axum::body::Body::empty())
                            .unwrap(),
                        // The test ends at the first request the server takes.
                        None => StatusCode::BAD_REQUEST.into_response(),
                    }
                }
            }),
        );
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    base
}

/// Against [`serve_dpop`], the proofs the client sends are well-formed, signed by the
/// key they embed (one key throughout), fresh, bound to the access token (`ath`) at
/// the MCP server, and carry each server's nonce once it gave one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dpop_proofs_bind_the_token_and_echo_each_servers_nonce() {
    let seen = Arc::new(std::sync::Mutex::new(DpopSeen::default()));
    let base = serve_dpop(seen.clone()).await;
    let config = OAuthConfig::authorization_code(Issuing(base.clone())).client_id("dpop-client");
    let url = format!("{base}/mcp");
    let connected = tokio::time::timeout(PATIENCE, builder().oauth(config).connect_http(&url))
        .await
        .expect("the connection attempt ended");
    assert!(connected.is_err(), "the test server takes no MCP request");

    let seen = seen.lock().unwrap();
    // The token endpoint: a proof without a nonce, answered use_dpop_nonce, then one
    // with its nonce; no `ath` (no token is presented there).
    assert_eq!(seen.token_proofs.len(), 2, "token requests");
    let mut keys = Vec::new();
    let mut jtis = std::collections::HashSet::new();
    for (i, proof) in seen.token_proofs.iter().enumerate() {
        let (header, claims) = verified_proof(proof);
        assert_eq!(
            (header["typ"].as_str(), header["alg"].as_str()),
            (Some("dpop+jwt"), Some("ES256"))
        );
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], format!("{base}/token"));
        assert!(claims["iat"].is_u64(), "{claims}");
        assert!(claims.get("ath").is_none(), "{claims}");
        assert_eq!(
            claims.get("nonce").and_then(|n| n.as_str()),
            (i == 1).then_some("as-nonce")
        );
        assert!(
            jtis.insert(claims["jti"].as_str().expect("jti").to_string()),
            "jti reused"
        );
        keys.push(header["jwk"].clone());
    }
    let form = reqwest::Url::parse(&format!("http://form/?{}", seen.token_forms[1])).unwrap();
    let field = |name: &str| {
        form.query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    };
    assert_eq!(field("grant_type").as_deref(), Some("authorization_code"));
    assert_eq!(field("code").as_deref(), Some("the-code"));
    assert_eq!(field("client_id").as_deref(), Some("dpop-client"));
    assert_eq!(field("resource").as_deref(), Some(url.as_str()));
    assert!(
        field("code_verifier").is_some_and(|v| v.len() >= 43),
        "{form}"
    );
    // The MCP server: `Authorization: DPoP`, proofs bound to the token, the server's
    // nonce once it asked for one (its 401 answered with the nonce, then the retry).
    use base64::Engine as _;
    use sha2::Digest as _;
    let ath =
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(DPOP_TOKEN));
    assert!(
        seen.mcp.len() >= 2,
        "MCP requests with a token: {}",
        seen.mcp.len()
    );
    for (auth, proof) in &seen.mcp {
        assert_eq!(auth, &format!("DPoP {DPOP_TOKEN}"));
        let (header, claims) = verified_proof(proof);
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], url);
        assert_eq!(claims["ath"], ath.as_str());
        assert!(
            jtis.insert(claims["jti"].as_str().expect("jti").to_string()),
            "jti reused"
        );
        keys.push(header["jwk"].clone());
    }
    let first = nonce_of(&seen.mcp[0].1);
    let last = seen.mcp.last().and_then(|(_, proof)| nonce_of(proof));
    assert_eq!(
        (first.as_deref(), last.as_deref()),
        (None, Some("rs-nonce"))
    );
    assert!(
        keys.windows(2).all(|w| w[0] == w[1]),
        "one key for the session"
    );
}

/// A user who authorizes at once: the redirect carries a code, the request's state
/// and the issuer.
struct Issuing(String);

impl AuthorizationCallback for Issuing {
    fn redirect_uri(&self) -> String {
        "http://127.0.0.1:1/callback".to_string()
    }

    fn authorize<'a>(&'a self, url: &'a str) -> AuthorizeFuture<'a> {
        Box::pin(async move {
            let url = reqwest::Url::parse(url).map_err(|e| e.to_string())?;
            let state = url
                .query_pairs()
                .find(|(k, _)| k == "state")
                .map(|(_, v)| v.into_owned())
                .ok_or("no state")?;
            Ok(dsh_mcp::oauth_client::Redirect::Code {
                code: "the-code".to_string(),
                state,
                iss: Some(self.0.clone()),
            })
        })
    }
}

/// Whose scopes the step-up authorization server grants.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Grants {
    /// The scopes the token request asks for.
    Asked,
    /// Always `profile`, whatever is asked.
    ProfileOnly,
}

/// The step-up setting: a dsh-mcp server where `reveal` needs `tools:exec` (a 403
/// `insufficient_scope` naming it otherwise), and its authorization server, which signs
/// tokens with the test issuer's key for the client credentials grant.
struct StepUp {
    http: dsh_mcp::HttpServer,
    /// The `scope` of every token request, in order.
    asked: Arc<std::sync::Mutex<Vec<String>>>,
}

/// The tags `reveal` ran with.
static REVEALED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

fn revealed(tag: &str) -> bool {
    REVEALED.lock().unwrap().iter().any(|t| t == tag)
}

/// Needs `tools:exec`; records its tag.
#[dsh_runtime::tool]
async fn reveal(tag: String) -> Result<String, dsh_runtime::ToolError> {
    REVEALED.lock().unwrap().push(tag.clone());
    Ok(format!("revealed {tag}"))
}

/// A `tools/call` of `reveal` with this tag.
fn reveal_call(tag: &str) -> rmcp::model::CallToolRequestParams {
    let args = json!({ "tag": tag });
    rmcp::model::CallToolRequestParams::new("reveal")
        .with_arguments(args.as_object().unwrap().clone())
}

/// One member of an `application/x-www-form-urlencoded` body, decoded.
fn form_value(body: &str, key: &str) -> Option<String> {
    let raw = body
        .split('&')
        .find_map(|pair| pair.strip_prefix(key)?.strip_prefix('='))?;
    let bytes = raw.replace('+', " ").into_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

async fn serve_step_up(grants: Grants) -> StepUp {
    use crate::common::keys::{claims, fixture, fixture_text, issuer_key, sign};

    let (listener, base) = listener().await;
    let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
    let audience = Arc::new(std::sync::OnceLock::<String>::new());
    let metadata = json!({
        "issuer": base,
        "token_endpoint": format!("{base}/token"),
        "authorization_endpoint": format!("{base}/authorize"),
        "jwks_uri": format!("{base}/jwks"),
        "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
        "grant_types_supported": ["client_credentials"],
        "response_types_supported": ["code"],
    });
    let token = {
        let (asked, audience, issuer) = (asked.clone(), audience.clone(), base.clone());
        move |body: String| {
            let scope = form_value(&body, "scope").unwrap_or_default();
            asked.lock().unwrap().push(scope.clone());
            let granted = match grants {
                Grants::Asked => scope,
                Grants::ProfileOnly => "profile".to_string(),
            };
            let mut claims = claims(audience.get().unwrap(), "svc", &granted);
            claims["iss"] = json!(issuer);
            let access = sign(
                &claims,
                jsonwebtoken::Algorithm::RS256,
                Some("k1"),
                &issuer_key(),
            );
            let answer = json!({
                "access_token": access,
                "token_type": "Bearer",
                "expires_in": 600,
                "scope": granted,
            });
            async move { json_response(StatusCode::OK, &answer) }
        }
    };
    let router = axum::Router::new()
        .route(
            "/.well-known/oauth-authorization-server",
            get(move || {
                let metadata = metadata.clone();
                async move { json_response(StatusCode::OK, &metadata) }
            }),
        )
        .route(
            "/jwks",
            get(|| async {
                json_response(
                    StatusCode::OK,
                    &serde_json::from_str(&fixture_text("jwks.json")).unwrap(),
                )
            }),
        )
        .route("/token", post(token));
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });

    let registry = dsh_runtime::Registry::new();
    let _ = registry.register(Reveal).unwrap();
    let server = dsh_mcp::McpServer::new(registry)
        .with_tool_scopes(dsh_mcp::ToolScopes::new().tool("reveal", "tools:exec"));
    let oauth = dsh_mcp::oauth::OAuthOptions::new(base)
        .jwks(dsh_mcp::oauth::JwksSource::File(fixture("jwks.json")))
        .scopes(["profile"]);
    let http = dsh_mcp::serve_http(&server, dsh_mcp::HttpOptions::default().oauth(oauth))
        .await
        .unwrap();
    audience.set(http.url()).unwrap();
    StepUp { http, asked }
}

/// The client credentials client of the step-up tests, asking for `profile` first.
fn step_up_client() -> OAuthConfig {
    OAuthConfig::client_credentials("svc", "svc-secret").scopes(["profile"])
}

/// A call answered 403 `insufficient_scope` gets a new authorization for the wider scope
/// (the scope held and the one challenged) and is sent again, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insufficient_scope_steps_up_to_the_wider_scope_and_retries() {
    let served = serve_step_up(Grants::Asked).await;
    let client = builder()
        .oauth(step_up_client())
        .connect_http(&served.http.url())
        .await
        .unwrap();
    assert_eq!(*served.asked.lock().unwrap(), ["profile"]);
    let answer = client
        .peer()
        .call_tool(reveal_call("stepped-up"))
        .await
        .unwrap();
    assert_eq!(answer.is_error, Some(false), "{answer:?}");
    assert_eq!(
        answer.content[0].as_text().unwrap().text,
        "revealed stepped-up"
    );
    assert!(revealed("stepped-up"));
    let asked = served.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 2, "{asked:?}");
    let mut widened: Vec<&str> = asked[1].split_whitespace().collect();
    widened.sort_unstable();
    assert_eq!(widened, ["profile", "tools:exec"], "{asked:?}");
    client.cancel().await.unwrap();
    served.http.shutdown().await.unwrap();
}

/// A server that keeps answering `insufficient_scope` (its authorization server never
/// grants the scope) ends the call after the configured step-ups, with an error naming
/// the server, the scope and the count; the tool never runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insufficient_scope_after_the_step_up_limit_is_a_clear_error() {
    let served = serve_step_up(Grants::ProfileOnly).await;
    let url = served.http.url();
    let client = builder()
        .oauth(step_up_client().max_step_ups(2))
        .connect_http(&url)
        .await
        .unwrap();
    let refused = tokio::time::timeout(PATIENCE, client.peer().call_tool(reveal_call("limited")))
        .await
        .expect("the call ended")
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains(&format!(
            "the MCP server {url} still answers insufficient_scope (wants \"tools:exec\") after 2 step-up authorizations"
        )),
        "{refused}"
    );
    // The first token, then one per step-up.
    assert_eq!(served.asked.lock().unwrap().len(), 3);
    assert!(!revealed("limited"));
    client.cancel().await.unwrap();
    served.http.shutdown().await.unwrap();
}
