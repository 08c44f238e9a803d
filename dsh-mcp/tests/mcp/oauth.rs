//! The HTTP server as an OAuth 2.1 resource server (feature `oauth`), with tokens signed
//! here (the keys of `tests/fixtures/oauth`, made for these tests only): the
//! protected-resource metadata, the `401` challenge without a token and for each kind of
//! forged or misdirected token, scopes per tool (`tools/list` narrowed, `403` on a call
//! beyond them, and nothing runs), principals (tasks, approval states and sessions bound
//! to the token's subject and client, kept across a refreshed token), limits per
//! principal, key rotation and withdrawal (with the keys on a loopback HTTP server,
//! read again in the background within a bound that tokens with unknown key ids do not
//! stretch) and startup errors (plain `http://` keys beyond loopback among them).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use dsh_mcp::oauth::{JwksSource, OAuthOptions};
use dsh_mcp::{HttpOptions, HttpServer, McpServer, PrincipalLimits, ToolScopes, serve_http};
use dsh_runtime::hooks::{PreDecision, pre_execute_fn};
use dsh_runtime::{Registry, ToolError, tool};
use jsonwebtoken::{Algorithm, EncodingKey};
use rmcp::model::{CallToolResponse, CancelTaskParams, GetTaskParams};
use serde_json::{Value, json};

use crate::common::http::{HttpClient, Reply};
use crate::common::keys::{
    ISSUER, claims, fixture, fixture_text, issuer_key, now, pem, sign, token,
};
use crate::common::rpc::{initialize, tools_call as call_body};
use crate::common::tools::{Greet, Hang, SlowEcho, Toolset, hang_stopped, until_hang};
use crate::common::user::{Answer, User};
use crate::common::wire::{Connected, Revision, call, connect_url, error_of};

/// What `bash` ran: the tags of its calls.
static RAN: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn ran(tag: &str) -> bool {
    RAN.lock().unwrap().iter().any(|t| t == tag)
}

/// Stands for a shell: records its tag.
#[tool]
async fn bash(tag: String) -> Result<String, ToolError> {
    RAN.lock().unwrap().push(tag.clone());
    Ok(format!("ran {tag}"))
}

struct Protected {
    http: HttpServer,
    tools: Toolset,
    _jwks: tempfile::TempDir,
    jwks_file: PathBuf,
}

impl Protected {
    fn url(&self) -> String {
        self.http.url()
    }

    async fn shutdown(self) {
        self.http.shutdown().await.unwrap();
        self.tools.shutdown().await;
    }
}

/// A server of greet, bash, touch (which asks), slow_echo and hang (tasks), where bash
/// needs `tools:exec` and read-only tools `tools:read`, its keys in a JWKS file (a copy
/// of `jwks.json`) read again every `refresh`.
async fn serve_protected(limits: PrincipalLimits, refresh: Duration) -> Protected {
    serve_keys(limits, refresh, None).await
}

/// [`serve_protected`] with its keys from `jwks` (`None`: the JWKS file).
async fn serve_keys(
    limits: PrincipalLimits,
    refresh: Duration,
    jwks: Option<JwksSource>,
) -> Protected {
    let mut tools = Toolset::with_jobs()
        .with(Greet)
        .with(Bash)
        .with_touch()
        .with(SlowEcho)
        .with(Hang);
    let policy = tools.registry.add_pre_execute(pre_execute_fn(|call| {
        (call.name() == "touch").then(|| PreDecision::ask("touch changes the world"))
    }));
    tools.hold(policy);
    let server = tools
        .server()
        .with_tool_scopes(
            ToolScopes::new()
                .tool("bash", "tools:exec")
                .read_only("tools:read"),
        )
        .with_principal_limits(limits);
    let dir = tempfile::tempdir().unwrap();
    let jwks_file = dir.path().join("jwks.json");
    std::fs::copy(fixture("jwks.json"), &jwks_file).unwrap();
    let oauth = OAuthOptions::new(ISSUER)
        .jwks(jwks.unwrap_or_else(|| JwksSource::File(jwks_file.clone())))
        .jwks_refresh_interval(refresh)
        .scopes(["profile"]);
    let http = serve_http(&server, HttpOptions::default().oauth(oauth))
        .await
        .unwrap();
    Protected {
        http,
        tools,
        _jwks: dir,
        jwks_file,
    }
}

/// POST `body` to `url` with this bearer token, and in this session on 2025-11-25.
async fn post(url: &str, token: Option<&str>, session: Option<&str>, body: &Value) -> Reply {
    let mut client = HttpClient::new(url);
    if let Some(token) = token {
        client = client.bearer(token);
    }
    if let Some(session) = session {
        client = client.in_session(session, Revision::V2025_11_25);
    }
    client.post(&body.to_string()).await
}

/// The metadata URL challenges name.
fn metadata_url(url: &str) -> String {
    let (origin, path) = url.split_at(url.find("/mcp").unwrap());
    format!("{origin}/.well-known/oauth-protected-resource{path}")
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_is_public_and_every_bad_token_gets_a_401_challenge() {
    let served = serve_protected(PrincipalLimits::new(), Duration::from_secs(30)).await;
    let url = served.url();
    let metadata = metadata_url(&url);

    // The metadata: at the path-suffixed well-known URL and at the bare one, no token.
    for at in [
        metadata.clone(),
        metadata.trim_end_matches("/mcp").to_string(),
    ] {
        let doc: Value = reqwest::get(&at).await.unwrap().json().await.unwrap();
        assert_eq!(
            doc,
            json!({
                "resource": url,
                "authorization_servers": [ISSUER],
                "bearer_methods_supported": ["header"],
                "scopes_supported": ["tools:exec", "tools:read", "profile"],
            }),
            "{at}"
        );
    }

    // No token: 401 with the metadata and no error code.
    let no_token = post(
        &url,
        None,
        None,
        &initialize(1, Revision::V2025_11_25, json!({})),
    )
    .await;
    assert_eq!(no_token.status, 401);
    assert_eq!(
        no_token.challenge(),
        format!("Bearer resource_metadata=\"{metadata}\"")
    );

    let good = claims(&url, "alice", "tools:read");
    let with = |f: &dyn Fn(&mut Value)| {
        let mut c = good.clone();
        f(&mut c);
        c
    };
    let key = issuer_key();
    let other_key = EncodingKey::from_rsa_pem(&pem("other.pem")).unwrap();
    // HS256 keyed with the JWKS's public key (the classic key-confusion forgery).
    let public_as_secret = EncodingKey::from_secret(&pem("issuer.pub.pem")).unwrap();
    let none = format!(
        "{}.{}.",
        b64(br#"{"alg":"none","typ":"JWT"}"#),
        b64(good.to_string().as_bytes())
    );
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "another audience",
            sign(
                &with(&|c| c["aud"] = json!("https://elsewhere.test/mcp")),
                Algorithm::RS256,
                Some("k1"),
                &key,
            ),
            "the token is for another resource",
        ),
        (
            "no audience",
            sign(
                &with(&|c| {
                    c.as_object_mut().unwrap().remove("aud");
                }),
                Algorithm::RS256,
                Some("k1"),
                &key,
            ),
            "the token has no `aud` claim",
        ),
        (
            "expired",
            sign(
                &with(&|c| c["exp"] = json!(now() - 3600)),
                Algorithm::RS256,
                Some("k1"),
                &key,
            ),
            "the token has expired",
        ),
        (
            "not yet valid",
            sign(
                &with(&|c| c["nbf"] = json!(now() + 3600)),
                Algorithm::RS256,
                Some("k1"),
                &key,
            ),
            "the token is not valid yet",
        ),
        (
            "another issuer",
            sign(
                &with(&|c| c["iss"] = json!("https://evil.test")),
                Algorithm::RS256,
                Some("k1"),
                &key,
            ),
            "the token was issued by another issuer",
        ),
        (
            "another key, the issuer's key id",
            sign(&good, Algorithm::RS256, Some("k1"), &other_key),
            "the token's signature does not verify",
        ),
        (
            "a key id the JWKS lacks",
            sign(&good, Algorithm::RS256, Some("k9"), &other_key),
            // (Quotes are left out of the challenge's quoted description.)
            "a key (k9) the issuer's JWKS does not have",
        ),
        (
            "alg none",
            none,
            "names no signing algorithm this server accepts",
        ),
        (
            "HS256 with the public key",
            sign(&good, Algorithm::HS256, Some("k1"), &public_as_secret),
            "a symmetric algorithm",
        ),
        ("not a JWT", "opaque-token".to_string(), "not a signed JWT"),
    ];
    for (what, token, why) in &cases {
        let answer = post(
            &url,
            Some(token),
            None,
            &initialize(1, Revision::V2025_11_25, json!({})),
        )
        .await;
        assert_eq!(answer.status, 401, "{what}: {}", answer.body);
        assert!(
            answer.challenge().starts_with(&format!(
                "Bearer resource_metadata=\"{metadata}\", error=\"invalid_token\", \
                 error_description=\""
            )) && answer.challenge().contains(why),
            "{what}: {}",
            answer.challenge()
        );
        let body: Value = serde_json::from_str(&answer.body).unwrap();
        assert_eq!(body["error"], "invalid_token", "{what}");
    }

    // The genuine token opens a session.
    let answer = post(
        &url,
        Some(&token(&url, "alice", "")),
        None,
        &initialize(1, Revision::V2025_11_25, json!({})),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert!(answer.session().is_some());
    served.shutdown().await;
}

/// A client of protocol 2026-07-28 (stateless over HTTP) with this token, declaring
/// tasks and elicitation, approving every question.
async fn client(url: &str, token: &str) -> Connected {
    let user = User::new()
        .elicitation(true)
        .tasks(true)
        .answering(Answer::Approve);
    connect_url(url, Some(token), user, Revision::V2026_07_28).await
}

/// A client of protocol 2026-07-28 that declares nothing (its calls are answered
/// directly).
async fn plain_client(url: &str, token: &str) -> Connected {
    connect_url(url, Some(token), User::new(), Revision::V2026_07_28).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_without_the_scope_does_not_see_the_tool_and_its_call_is_a_403() {
    let served = serve_protected(PrincipalLimits::new(), Duration::from_secs(30)).await;
    let url = served.url();
    let reader = token(&url, "reader", "tools:read");
    let runner = token(&url, "runner", "tools:read tools:exec");

    // tools/list: each token sees what its scopes allow (tools without a scope always).
    let names = |tools: Vec<rmcp::model::Tool>| {
        let mut n: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
        n.sort();
        n
    };
    let c = client(&url, &reader).await;
    assert_eq!(
        names(c.list_all_tools().await.unwrap()),
        ["greet", "hang", "slow_echo", "touch"]
    );
    c.close().await;
    let c = client(&url, &token(&url, "nobody", "")).await;
    assert_eq!(
        names(c.list_all_tools().await.unwrap()),
        ["hang", "slow_echo", "touch"]
    );
    c.close().await;
    let c = client(&url, &runner).await;
    assert_eq!(
        names(c.list_all_tools().await.unwrap()),
        ["bash", "greet", "hang", "slow_echo", "touch"]
    );
    let r = c
        .call_tool(call("bash", json!({"tag": "scoped-runner"})))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(false), "{r:?}");
    assert!(ran("scoped-runner"));
    c.close().await;

    // In a session: the call beyond the scope is a 403 naming the scope, and does not run.
    let session = HttpClient::new(&url)
        .bearer(&reader)
        .start_session(Revision::V2025_11_25)
        .await;
    let answer = post(
        &url,
        Some(&reader),
        Some(&session),
        &call_body(2, "bash", json!({"tag": "scoped-reader"})),
    )
    .await;
    assert_eq!(answer.status, 403, "{}", answer.body);
    assert_eq!(
        answer.challenge(),
        format!(
            "Bearer resource_metadata=\"{}\", error=\"insufficient_scope\", \
             error_description=\"tool `bash` needs the scope tools:exec\", scope=\"tools:exec\"",
            metadata_url(&url)
        )
    );
    // Statelessly too (rmcp's client reads the 403's challenge).
    let c = client(&url, &reader).await;
    let refused = c
        .call_tool(call("bash", json!({"tag": "scoped-reader"})))
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("Insufficient scope"),
        "{refused}"
    );
    c.close().await;
    assert!(!ran("scoped-reader"), "a call beyond its scope ran");

    // The same session goes on for what the scope allows.
    let answer = post(
        &url,
        Some(&reader),
        Some(&session),
        &call_body(3, "greet", json!({"name": "Ada"})),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert!(answer.body.contains("Hello, Ada!"), "{}", answer.body);
    // An unknown tool needs no scope here (no destructive or default scope is set): it is
    // answered as usual, the protocol's unknown-tool error.
    let started = std::time::Instant::now();
    let answer = post(
        &url,
        Some(&reader),
        Some(&session),
        &call_body(4, "no_such_tool", json!({})),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert!(answer.body.contains("-32602"), "{}", answer.body);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    served.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_approval_states_and_sessions_belong_to_the_subject() {
    let served = serve_protected(PrincipalLimits::new(), Duration::from_secs(30)).await;
    let url = served.url();
    let tag = "oauth-principal";

    // Alice's stateless task: Bob cannot see or cancel it.
    let alice = client(&url, &token(&url, "alice", "")).await;
    let created = alice
        .peer()
        .call_tool_once(call("hang", json!({"tag": tag})))
        .await
        .unwrap();
    let CallToolResponse::Task(created) = created else {
        panic!("expected a task, got {created:?}")
    };
    let id = created.task.task_id;
    alice.close().await;
    until_hang("the task started", |log| {
        log.started.iter().any(|t| t == tag)
    })
    .await;
    let bob = client(&url, &token(&url, "bob", "")).await;
    let seen = bob.peer().get_task(GetTaskParams::new(&id)).await;
    assert_eq!(error_of(&seen.unwrap_err()).0, -32602);
    let cancelled = bob.peer().cancel_task(CancelTaskParams::new(&id)).await;
    assert_eq!(error_of(&cancelled.unwrap_err()).0, -32602);
    // The same subject through another client is another principal.
    let other_client = {
        let mut c = claims(&url, "alice", "");
        c["client_id"] = json!("another-client");
        sign(&c, Algorithm::RS256, Some("k1"), &issuer_key())
    };
    let elsewhere = client(&url, &other_client).await;
    let seen = elsewhere.peer().get_task(GetTaskParams::new(&id)).await;
    assert_eq!(error_of(&seen.unwrap_err()).0, -32602);
    elsewhere.close().await;
    assert!(!hang_stopped(tag));

    // Alice with a refreshed token (another token, the same subject and client) keeps it.
    let refreshed = client(&url, &token(&url, "alice", "")).await;
    let got = refreshed
        .peer()
        .get_task(GetTaskParams::new(&id))
        .await
        .unwrap();
    assert_eq!(got.task.task.task_id, id);
    refreshed
        .peer()
        .cancel_task(CancelTaskParams::new(&id))
        .await
        .unwrap();
    until_hang("the task stopped", |log| {
        log.stopped.iter().any(|t| t == tag)
    })
    .await;

    // Alice's approval state: Bob cannot redeem it; Alice (refreshed again) can.
    let first = refreshed
        .peer()
        .call_tool_once(call("touch", json!({"note": "n"})))
        .await
        .unwrap();
    let CallToolResponse::InputRequired(input) = first else {
        panic!("expected an InputRequiredResult, got {first:?}")
    };
    let state = input.request_state.expect("a request state");
    let mut answers = rmcp::model::InputResponses::new();
    answers.insert(
        "approval".to_string(),
        json!({"action": "accept", "content": {"approve": true}}),
    );
    let retry = |state: &str| {
        call("touch", json!({"note": "n"}))
            .with_request_state(state)
            .with_input_responses(answers.clone())
    };
    let stolen = bob.peer().call_tool_once(retry(&state)).await.unwrap_err();
    assert!(
        error_of(&stolen)
            .1
            .contains("failed integrity verification"),
        "{stolen}"
    );
    bob.close().await;
    refreshed.close().await;
    let again = client(&url, &token(&url, "alice", "")).await;
    let done = again.peer().call_tool_once(retry(&state)).await.unwrap();
    let CallToolResponse::Complete(done) = done else {
        panic!("expected the result, got {done:?}")
    };
    assert_eq!(
        done.structured_content,
        Some(json!({"result": "touched: n"}))
    );
    again.close().await;

    // A session is its opener's: Bob's request on it is answered as for no session;
    // Alice's refreshed token goes on using it.
    let session = HttpClient::new(&url)
        .bearer(&token(&url, "alice", ""))
        .start_session(Revision::V2025_11_25)
        .await;
    let list = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"});
    let hijack = post(&url, Some(&token(&url, "bob", "")), Some(&session), &list).await;
    assert_eq!(hijack.status, 404, "{}", hijack.body);
    let own = post(&url, Some(&token(&url, "alice", "")), Some(&session), &list).await;
    assert_eq!(own.status, 200, "{}", own.body);
    assert!(
        own.body.contains("\"hang\"") && !own.body.contains("\"greet\""),
        "{}",
        own.body
    );
    served.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_subject_at_its_limits_does_not_starve_another() {
    let limits = PrincipalLimits::new().max_calls(2).max_tasks(1);
    let served = serve_protected(limits, Duration::from_secs(30)).await;
    let url = served.url();
    let url = Arc::new(url);

    // Alice fills her two call places with slow calls (answered directly: no tasks).
    let mut slow = Vec::new();
    for i in 0..2 {
        let url = url.clone();
        slow.push(tokio::spawn(async move {
            let c = plain_client(&url, &token(&url, "alice", "")).await;
            let r = c
                .call_tool(call(
                    "slow_echo",
                    json!({"text": format!("a{i}"), "ms": 4000}),
                ))
                .await;
            let _ = c.client.cancel().await;
            r
        }));
    }
    let alice = plain_client(&url, &token(&url, "alice", "")).await;
    let bob = plain_client(&url, &token(&url, "bob", "")).await;
    // Her third is refused at once, naming the limit, until one of hers ends.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let refused = loop {
        let r = alice
            .peer()
            .call_tool_once(call("slow_echo", json!({"text": "third", "ms": 1})))
            .await;
        match r {
            Err(e) => break e,
            Ok(_) => {
                // Her slow calls may not have started yet.
                assert!(tokio::time::Instant::now() < deadline, "never at the limit");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    let (code, message) = error_of(&refused);
    assert_eq!(code, -32029, "{message}");
    assert!(
        message.contains(
            "too many calls: subject \"alice\" (client \"test-client\") has 2 calls in progress"
        ),
        "{message}"
    );
    // Bob is served meanwhile: his call is answered while Alice's still run.
    let started = tokio::time::Instant::now();
    let r = tokio::time::timeout(
        Duration::from_secs(3),
        bob.call_tool(call("slow_echo", json!({"text": "b", "ms": 10}))),
    )
    .await
    .expect("Bob is not kept waiting behind Alice")
    .unwrap();
    assert_eq!(r.structured_content, Some(json!({"result": "echo: b"})));
    assert!(
        slow.iter().all(|h| !h.is_finished()),
        "Alice's calls still run"
    );
    assert!(started.elapsed() < Duration::from_secs(3));
    for h in slow {
        let r = h.await.unwrap().unwrap();
        assert_eq!(r.is_error, Some(false), "{r:?}");
    }
    // Her places are free again.
    alice
        .call_tool(call("slow_echo", json!({"text": "again", "ms": 1})))
        .await
        .unwrap();

    alice.close().await;
    bob.close().await;

    // Tasks: one working task each.
    let alice = client(&url, &token(&url, "alice", "")).await;
    let bob = client(&url, &token(&url, "bob", "")).await;
    let tag = "oauth-limit-alice";
    let first = alice
        .peer()
        .call_tool_once(call("hang", json!({"tag": tag})))
        .await
        .unwrap();
    let CallToolResponse::Task(first) = first else {
        panic!("expected a task, got {first:?}")
    };
    let second = alice
        .peer()
        .call_tool_once(call("hang", json!({"tag": "oauth-limit-alice-2"})))
        .await
        .unwrap_err();
    let (code, message) = error_of(&second);
    assert_eq!(code, -32029, "{message}");
    assert!(message.contains("too many tasks"), "{message}");
    let theirs = bob
        .peer()
        .call_tool_once(call("hang", json!({"tag": "oauth-limit-bob"})))
        .await
        .unwrap();
    let CallToolResponse::Task(theirs) = theirs else {
        panic!("Bob gets his task: {theirs:?}")
    };
    // Once her task settles, she may start another.
    alice
        .peer()
        .cancel_task(CancelTaskParams::new(&first.task.task_id))
        .await
        .unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let next = loop {
        match alice
            .peer()
            .call_tool_once(call("hang", json!({"tag": "oauth-limit-alice-3"})))
            .await
        {
            Ok(CallToolResponse::Task(t)) => break t,
            other => {
                assert!(tokio::time::Instant::now() < deadline, "{other:?}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    for (c, id) in [(&alice, next.task.task_id), (&bob, theirs.task.task_id)] {
        c.peer()
            .cancel_task(CancelTaskParams::new(&id))
            .await
            .unwrap();
    }
    alice.close().await;
    bob.close().await;
    served.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotated_key_is_accepted_once_the_jwks_is_read_again() {
    let rotated = EncodingKey::from_ec_pem(&pem("rotated.pem")).unwrap();
    // Read again at once when a key id is unknown.
    let served = serve_protected(PrincipalLimits::new(), Duration::ZERO).await;
    let url = served.url();
    let new_token = || {
        sign(
            &claims(&url, "alice", ""),
            Algorithm::ES256,
            Some("k2"),
            &rotated,
        )
    };
    let answer = post(
        &url,
        Some(&new_token()),
        None,
        &initialize(1, Revision::V2025_11_25, json!({})),
    )
    .await;
    assert_eq!(answer.status, 401, "{}", answer.body);
    assert!(
        answer.challenge().contains("does not have"),
        "{}",
        answer.challenge()
    );
    // The issuer publishes its new key.
    std::fs::copy(fixture("jwks-rotated.json"), &served.jwks_file).unwrap();
    let answer = post(
        &url,
        Some(&new_token()),
        None,
        &initialize(1, Revision::V2025_11_25, json!({})),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    // The old key still works while it is published.
    let answer = post(
        &url,
        Some(&token(&url, "alice", "")),
        None,
        &initialize(1, Revision::V2025_11_25, json!({})),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    served.shutdown().await;

    // Reads are rate-limited: within the interval the new key id stays unknown.
    let limited = serve_protected(PrincipalLimits::new(), Duration::from_secs(3600)).await;
    let url = limited.url();
    std::fs::copy(fixture("jwks-rotated.json"), &limited.jwks_file).unwrap();
    let t = sign(
        &claims(&url, "alice", ""),
        Algorithm::ES256,
        Some("k2"),
        &rotated,
    );
    let answer = post(
        &url,
        Some(&t),
        None,
        &initialize(1, Revision::V2025_11_25, json!({})),
    )
    .await;
    assert_eq!(answer.status, 401, "{}", answer.body);
    limited.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_issuer_or_jwks_that_cannot_be_read_is_a_startup_error() {
    let server = McpServer::new(Registry::new());
    let missing = OAuthOptions::new(ISSUER).jwks(JwksSource::File("/nonexistent/jwks.json".into()));
    let e = serve_http(&server, HttpOptions::default().oauth(missing))
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("OAuth: cannot read the JWKS file /nonexistent/jwks.json"),
        "{e}"
    );
    // A closed port: the issuer's metadata cannot be fetched.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let issuer = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let e = serve_http(
        &server,
        HttpOptions::default().oauth(OAuthOptions::new(&issuer)),
    )
    .await
    .unwrap_err();
    assert!(
        e.to_string().starts_with(&format!(
            "OAuth: cannot read the metadata of the issuer {issuer}"
        )),
        "{e}"
    );
    // A JWKS with only a symmetric key.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("jwks.json");
    std::fs::write(&file, r#"{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}"#).unwrap();
    let e = serve_http(
        &server,
        HttpOptions::default().oauth(OAuthOptions::new(ISSUER).jwks(JwksSource::File(file))),
    )
    .await
    .unwrap_err();
    assert!(e.to_string().contains("no asymmetric signing key"), "{e}");
    // A static bearer token and OAuth exclude each other.
    let both = HttpOptions::default()
        .bearer_token("t")
        .oauth(OAuthOptions::new(ISSUER));
    let e = serve_http(&server, both).await.unwrap_err();
    assert!(e.to_string().contains("cannot both be set"), "{e}");
}

/// An authorization server's keys on loopback HTTP: `/jwks.json` (each read counted;
/// the document can be swapped, as an issuer rotates its keys), its metadata
/// (`/.well-known/oauth-authorization-server`, naming a `jwks_uri` the test sets) and
/// `/moved`, a redirect to a plain `http://` URL beyond loopback.
struct KeyServer {
    /// `http://127.0.0.1:PORT`, also its issuer identifier.
    origin: String,
    document: Arc<Mutex<String>>,
    jwks_uri: Arc<Mutex<String>>,
    reads: Arc<std::sync::atomic::AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

/// A key URL no test can reach (TEST-NET-1): reading it would hang until the timeout.
const UNREACHABLE_JWKS: &str = "http://192.0.2.1/jwks.json";

impl KeyServer {
    async fn start(document: String) -> KeyServer {
        use axum::routing::get;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        let document = Arc::new(Mutex::new(document));
        let jwks_uri = Arc::new(Mutex::new(format!("{origin}/jwks.json")));
        let reads = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let router = axum::Router::new()
            .route(
                "/jwks.json",
                get({
                    let (document, reads) = (document.clone(), reads.clone());
                    move || async move {
                        reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        let body = document.lock().unwrap().clone();
                        ([("content-type", "application/json")], body)
                    }
                }),
            )
            .route(
                "/.well-known/oauth-authorization-server",
                get({
                    let (origin, jwks_uri) = (origin.clone(), jwks_uri.clone());
                    move || async move {
                        let doc = json!({"issuer": origin, "jwks_uri": *jwks_uri.lock().unwrap()});
                        ([("content-type", "application/json")], doc.to_string())
                    }
                }),
            )
            .route(
                "/moved",
                get(|| async { axum::response::Redirect::temporary(UNREACHABLE_JWKS) }),
            );
        let task = tokio::spawn(async move {
            axum::serve(listener, router).await.unwrap();
        });
        KeyServer {
            origin,
            document,
            jwks_uri,
            reads,
            task,
        }
    }

    fn jwks(&self) -> JwksSource {
        JwksSource::Url(format!("{}/jwks.json", self.origin))
    }

    /// Serve this JWKS from now on.
    fn publish(&self, document: String) {
        *self.document.lock().unwrap() = document;
    }

    /// How many times `/jwks.json` was read.
    fn reads(&self) -> usize {
        self.reads.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Drop for KeyServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// `jwks-rotated.json` without `k1`: the issuer withdrew it.
fn only_k2() -> String {
    let mut doc: Value = serde_json::from_str(&fixture_text("jwks-rotated.json")).unwrap();
    doc["keys"]
        .as_array_mut()
        .unwrap()
        .retain(|k| k["kid"] == "k2");
    assert_eq!(doc["keys"].as_array().unwrap().len(), 1);
    doc.to_string()
}

/// The refresh interval of the rotation tests, and what a read, the requests and a
/// loaded machine may add to the bound it gives.
const REFRESH: Duration = Duration::from_secs(2);
const SLACK: Duration = Duration::from_millis(1500);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotated_key_is_accepted_within_one_interval_while_unknown_key_ids_keep_arriving() {
    let keys = KeyServer::start(fixture_text("jwks.json")).await;
    let served = serve_keys(PrincipalLimits::new(), REFRESH, Some(keys.jwks())).await;
    let url = Arc::new(served.url());
    let forged_key = Arc::new(EncodingKey::from_rsa_pem(&pem("other.pem")).unwrap());
    let forged = {
        let (url, key) = (url.clone(), forged_key.clone());
        move || {
            sign(
                &claims(&url, "mallory", ""),
                Algorithm::RS256,
                Some("k9"),
                &key,
            )
        }
    };

    // A token with a key id the JWKS lacks, once the read at start is an interval old:
    // the JWKS is read for it, and it is refused.
    tokio::time::sleep(REFRESH + Duration::from_millis(300)).await;
    let before = keys.reads();
    let answer = post(
        &url,
        Some(&forged()),
        None,
        &initialize(1, Revision::V2025_11_25, json!({})),
    )
    .await;
    assert_eq!(answer.status, 401, "{}", answer.body);
    assert!(
        answer.challenge().contains("(k9)"),
        "{}",
        answer.challenge()
    );
    assert!(keys.reads() > before, "an unknown key id reads the JWKS");

    // The issuer rotates its new key in, the read for an unknown key id just spent;
    // tokens with unknown key ids keep arriving all along.
    keys.publish(fixture_text("jwks-rotated.json"));
    let rotated_at = std::time::Instant::now();
    let reads_at_rotation = keys.reads();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flood = tokio::spawn({
        let (url, stop, forged) = (url.clone(), stop.clone(), forged.clone());
        async move {
            let mut refused = 0;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                let answer = post(
                    &url,
                    Some(&forged()),
                    None,
                    &initialize(1, Revision::V2025_11_25, json!({})),
                )
                .await;
                assert_eq!(answer.status, 401, "{}", answer.body);
                refused += 1;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            refused
        }
    });
    let rotated = EncodingKey::from_ec_pem(&pem("rotated.pem")).unwrap();
    let new_token = sign(
        &claims(&url, "alice", ""),
        Algorithm::ES256,
        Some("k2"),
        &rotated,
    );
    let mut tries = 0;
    let seen_after = loop {
        tries += 1;
        let answer = post(
            &url,
            Some(&new_token),
            None,
            &initialize(1, Revision::V2025_11_25, json!({})),
        )
        .await;
        if answer.status == 200 {
            break rotated_at.elapsed();
        }
        assert_eq!(answer.status, 401, "{}", answer.body);
        assert!(
            rotated_at.elapsed() < REFRESH + SLACK,
            "the rotated key is still refused {:?} after it was published ({tries} tries): {}",
            rotated_at.elapsed(),
            answer.challenge()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let refused = flood.await.unwrap();
    assert!(
        refused >= 10,
        "only {refused} tokens with unknown key ids arrived"
    );
    // Unknown key ids cost at most one read per interval besides the background's.
    let reads = keys.reads() - reads_at_rotation;
    let intervals = (rotated_at.elapsed().as_secs_f64() / REFRESH.as_secs_f64()).ceil() as usize;
    assert!(
        reads <= 2 * intervals + 1,
        "{reads} reads in {intervals} intervals for {refused} unknown key ids"
    );
    eprintln!("the rotated key was accepted {seen_after:?} after it was published");
    served.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_withdrawn_key_is_refused_within_one_interval_and_the_reads_stop_with_the_server() {
    let keys = KeyServer::start(fixture_text("jwks-rotated.json")).await;
    let served = serve_keys(PrincipalLimits::new(), REFRESH, Some(keys.jwks())).await;
    let url = served.url();
    let answer = post(
        &url,
        Some(&token(&url, "alice", "")),
        None,
        &initialize(1, Revision::V2025_11_25, json!({})),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);

    // The issuer withdraws k1 (say it leaked). No token names a key id the JWKS lacks,
    // so only the background read can notice; tokens signed with k1 keep coming.
    keys.publish(only_k2());
    let withdrawn_at = std::time::Instant::now();
    loop {
        let answer = post(
            &url,
            Some(&token(&url, "alice", "")),
            None,
            &initialize(1, Revision::V2025_11_25, json!({})),
        )
        .await;
        if answer.status == 401 {
            assert!(
                answer
                    .challenge()
                    .contains("a key (k1) the issuer's JWKS does not have"),
                "{}",
                answer.challenge()
            );
            break;
        }
        assert_eq!(answer.status, 200, "{}", answer.body);
        assert!(
            withdrawn_at.elapsed() < REFRESH + SLACK,
            "the withdrawn key is still accepted {:?} after",
            withdrawn_at.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let rotated = EncodingKey::from_ec_pem(&pem("rotated.pem")).unwrap();
    let kept = sign(
        &claims(&url, "alice", ""),
        Algorithm::ES256,
        Some("k2"),
        &rotated,
    );
    let answer = post(
        &url,
        Some(&kept),
        None,
        &initialize(1, Revision::V2025_11_25, json!({})),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);

    // Without any request the JWKS is read once per interval…
    let before = keys.reads();
    tokio::time::sleep(REFRESH * 2 + Duration::from_millis(500)).await;
    let idle = keys.reads() - before;
    assert!((2..=3).contains(&idle), "{idle} reads in 4.5 s");
    // …until the server stops.
    served.shutdown().await;
    let stopped = keys.reads();
    tokio::time::sleep(REFRESH * 2 + Duration::from_millis(500)).await;
    assert_eq!(
        keys.reads(),
        stopped,
        "the JWKS is read after the server stopped"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_over_plain_http_beyond_loopback_are_a_startup_error() {
    let server = McpServer::new(Registry::new());
    let start = |oauth: OAuthOptions| {
        let server = server.clone();
        async move {
            let started = std::time::Instant::now();
            let e = serve_http(&server, HttpOptions::default().oauth(oauth))
                .await
                .expect_err("a startup error")
                .to_string();
            // Refused before anything is fetched from the address.
            assert!(started.elapsed() < Duration::from_secs(5), "{e}");
            e
        }
    };
    let keys = KeyServer::start(fixture_text("jwks.json")).await;
    let file = fixture("jwks.json");

    // An http:// issuer beyond loopback, even with its keys from a file.
    let e = start(OAuthOptions::new("http://issuer.example").jwks(JwksSource::File(file))).await;
    assert!(
        e.starts_with(
            "OAuth: the issuer http://issuer.example is plain http:// to a host that is not \
             loopback"
        ) && e.contains("use https://"),
        "{e}"
    );
    // A JWKS URL beyond loopback, given…
    let e =
        start(OAuthOptions::new(ISSUER).jwks(JwksSource::Url(UNREACHABLE_JWKS.to_string()))).await;
    assert!(
        e.starts_with(&format!(
            "OAuth: the JWKS URL {UNREACHABLE_JWKS} is plain http://"
        )),
        "{e}"
    );
    // …or named by the (loopback) issuer's metadata…
    *keys.jwks_uri.lock().unwrap() = UNREACHABLE_JWKS.to_string();
    let e = start(OAuthOptions::new(&keys.origin)).await;
    assert!(
        e.starts_with(&format!(
            "OAuth: the JWKS URL {UNREACHABLE_JWKS} is plain http://"
        )),
        "{e}"
    );
    // …or reached through a redirect.
    let moved = JwksSource::Url(format!("{}/moved", keys.origin));
    let e = start(OAuthOptions::new(ISSUER).jwks(moved)).await;
    assert!(
        e.contains(&format!(
            "redirected to {UNREACHABLE_JWKS}, which is plain http://"
        )),
        "{e}"
    );
    assert_eq!(keys.reads(), 0);

    // Plain http:// on loopback is fine: the issuer's metadata, then its keys.
    *keys.jwks_uri.lock().unwrap() = format!("{}/jwks.json", keys.origin);
    let http = serve_http(
        &server,
        HttpOptions::default().oauth(OAuthOptions::new(&keys.origin)),
    )
    .await
    .unwrap();
    assert_eq!(keys.reads(), 1);
    http.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_and_prompts_are_seen_and_read_only_with_their_scopes() {
    use dsh_runtime::content::{ContentBlock, ResourceContents};
    use dsh_runtime::prompts::{Prompt, PromptMessage, Prompts};
    use dsh_runtime::resources::{Resource, Resources};

    let resources = Resources::new();
    for (uri, name) in [("notes://secret", "secret"), ("notes://public", "public")] {
        resources
            .register(Resource::fixed(uri, name, |uri, _| async move {
                Ok(vec![ResourceContents::text(uri, "text")])
            }))
            .unwrap()
            .keep();
    }
    let prompts = Prompts::new();
    prompts
        .register(Prompt::new("plan", |_| async move {
            Ok(vec![PromptMessage::user(ContentBlock::text("plan it"))])
        }))
        .unwrap()
        .keep();
    let tools = Toolset::new().with(Greet);
    let server = tools
        .server()
        .with_resources(resources)
        .with_prompts(prompts)
        .with_tool_scopes(
            ToolScopes::new()
                .resource("notes://secret", "notes:secret")
                .prompts_scope("prompts:use"),
        );
    let dir = tempfile::tempdir().unwrap();
    let jwks_file = dir.path().join("jwks.json");
    std::fs::copy(fixture("jwks.json"), &jwks_file).unwrap();
    let oauth = OAuthOptions::new(ISSUER).jwks(JwksSource::File(jwks_file));
    let http = serve_http(&server, HttpOptions::default().oauth(oauth))
        .await
        .unwrap();
    let url = http.url();

    let uris = |list: Vec<rmcp::model::Resource>| {
        let mut uris: Vec<String> = list.iter().map(|r| r.uri.to_string()).collect();
        uris.sort();
        uris
    };
    // Without the scopes: the secret resource and the prompt are neither listed nor read.
    let c = plain_client(&url, &token(&url, "nobody", "")).await;
    assert_eq!(
        uris(c.list_all_resources().await.unwrap()),
        ["notes://public"]
    );
    assert!(c.list_all_prompts().await.unwrap().is_empty());
    let refused = c
        .read_resource(rmcp::model::ReadResourceRequestParams::new(
            "notes://secret",
        ))
        .await
        .unwrap_err();
    assert_eq!(error_of(&refused).0, -32028, "{refused}");
    assert!(refused.to_string().contains("notes:secret"), "{refused}");
    let refused = c
        .get_prompt(rmcp::model::GetPromptRequestParams::new("plan"))
        .await
        .unwrap_err();
    assert_eq!(error_of(&refused).0, -32028, "{refused}");
    c.close().await;
    // With them: everything.
    let c = plain_client(&url, &token(&url, "reader", "notes:secret prompts:use")).await;
    assert_eq!(
        uris(c.list_all_resources().await.unwrap()),
        ["notes://public", "notes://secret"]
    );
    assert_eq!(c.list_all_prompts().await.unwrap().len(), 1);
    let read = c
        .read_resource(rmcp::model::ReadResourceRequestParams::new(
            "notes://secret",
        ))
        .await
        .unwrap();
    assert_eq!(read.contents.len(), 1);
    c.close().await;
    http.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_stream_hears_only_the_updates_its_token_may_read() {
    use crate::common::rpc::Rpc;
    use dsh_runtime::content::ResourceContents;
    use dsh_runtime::resources::{Resource, Resources};

    let resources = Resources::new();
    for (uri, name) in [("notes://secret", "secret"), ("notes://public", "public")] {
        resources
            .register(Resource::fixed(uri, name, |uri, _| async move {
                Ok(vec![ResourceContents::text(uri, "text")])
            }))
            .unwrap()
            .keep();
    }
    let server = Toolset::new()
        .server()
        .with_resources(resources.clone())
        .with_tool_scopes(ToolScopes::new().resource("notes://secret", "notes:secret"));
    let dir = tempfile::tempdir().unwrap();
    let jwks_file = dir.path().join("jwks.json");
    std::fs::copy(fixture("jwks.json"), &jwks_file).unwrap();
    let oauth = OAuthOptions::new(ISSUER).jwks(JwksSource::File(jwks_file));
    let http = serve_http(&server, HttpOptions::default().oauth(oauth))
        .await
        .unwrap();
    let url = http.url();
    let client = HttpClient::new(&url)
        .revision(Revision::V2026_07_28)
        .bearer(&token(&url, "nobody", ""));
    let mut rpc = Rpc::http(client);
    rpc.send(&json!({
        "jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
        "params": {
            "notifications": {"resourceSubscriptions": ["notes://secret", "notes://public"]},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": Revision::V2026_07_28.as_str(),
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }))
    .await;
    rpc.next("the acknowledgment", |v| {
        v["method"] == "notifications/subscriptions/acknowledged"
    })
    .await;
    resources.notify_updated("notes://secret");
    resources.notify_updated("notes://public");
    let heard = rpc
        .next("an update", |v| {
            v["method"] == "notifications/resources/updated"
        })
        .await;
    // The first update heard is the public one: the secret one never comes.
    assert_eq!(heard["params"]["uri"], "notes://public", "{heard}");
    rpc.close().await;
    http.shutdown().await.unwrap();
}
