//! Request bodies are read once, within a size limit and a timeout, whatever the
//! `Content-Type` and whatever the credentials (none, a static bearer token, OAuth with
//! tools that need scopes): a `Content-Length` over the limit is answered `413` before
//! any of the body is sent, a chunked body is cut off with `413` as soon as it passes the
//! limit, and a server streamed 400 MB at does not grow by much more than the limit.

use std::time::Duration;

use dsh_mcp::oauth::{JwksSource, OAuthOptions};
use dsh_mcp::{HttpOptions, HttpServer, McpServer, ToolScopes, serve_http};
use dsh_runtime::{Registry, ToolError, tool};
use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use crate::common::cases;
use crate::common::http::{chunked, exchange, head as post_head, read_until_closed};
use crate::common::keys::{ISSUER, fixture, token};
use crate::common::tools::Toolset;

/// Answer `text` unchanged.
#[tool]
async fn echo(text: String) -> Result<String, ToolError> {
    Ok(text)
}

/// How the server checks credentials.
#[derive(Clone, Copy, Debug)]
enum Credentials {
    None,
    Bearer,
    /// OAuth, with a tool that needs a scope (so `tools/call`s wait for the verdict).
    OAuthScoped,
}

const STATIC_TOKEN: &str = "s3cret-token";

/// A token of the test issuer for the server at `url`, with the scope `echo` needs.
fn oauth_token(url: &str) -> String {
    token(url, "alice", "tools:exec")
}

struct Limited {
    http: HttpServer,
    /// The `Authorization` header value to send, if any.
    authorization: Option<String>,
    _tools: Toolset,
}

/// A server of `echo` with `credentials`, reading at most `max_body` bytes of a body.
async fn serve_limited(credentials: Credentials, max_body: Option<usize>) -> Limited {
    let tools = Toolset::new().with(Echo);
    let server = tools
        .server()
        .with_tool_scopes(ToolScopes::new().tool("echo", "tools:exec"));
    let mut options = HttpOptions::default().sessions(false);
    if let Some(max) = max_body {
        options = options.max_body_bytes(max);
    }
    options = match credentials {
        Credentials::None => options,
        Credentials::Bearer => options.bearer_token(STATIC_TOKEN),
        Credentials::OAuthScoped => {
            options.oauth(OAuthOptions::new(ISSUER).jwks(JwksSource::File(fixture("jwks.json"))))
        }
    };
    let http = serve_http(&server, options)
        .await
        .expect("serve on loopback");
    let authorization = match credentials {
        Credentials::None => None,
        Credentials::Bearer => Some(format!("Bearer {STATIC_TOKEN}")),
        Credentials::OAuthScoped => Some(format!("Bearer {}", oauth_token(&http.url()))),
    };
    Limited {
        http,
        authorization,
        _tools: tools,
    }
}

/// The head of a `POST /mcp` on 2025-06-18 with this `Content-Type`, the credentials,
/// and `framing` (the `content-length` or `transfer-encoding` lines).
fn limited_head(served: &Limited, content_type: &str, framing: &[&str]) -> String {
    let auth = served
        .authorization
        .as_ref()
        .map(|a| format!("authorization: {a}"));
    let mut lines = vec!["mcp-protocol-version: 2025-06-18"];
    lines.extend(auth.as_deref());
    lines.extend_from_slice(framing);
    post_head(content_type, &lines)
}

/// Send a head declaring `length` bytes and none of them: the answer comes from the
/// head alone.
async fn declared(served: &Limited, content_type: &str, length: u64) -> (String, bool) {
    let mut stream = TcpStream::connect(served.http.local_addr()).await.unwrap();
    let head = limited_head(
        served,
        content_type,
        &[&format!("content-length: {length}")],
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    read_until_closed(&mut stream, Duration::from_secs(10)).await
}

/// A `tools/call` of `echo` whose text makes the message `size` bytes or so.
fn call_of_size(size: usize) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"text": "x".repeat(size)}
    }})
    .to_string()
    .into_bytes()
}

/// Post `body` as JSON with the credentials; the status and the body.
async fn send_call(served: &Limited, body: Vec<u8>) -> (u16, String) {
    let length = format!("content-length: {}", body.len());
    let head = limited_head(served, "application/json", &[&length, "connection: close"]);
    exchange(served.http.local_addr(), &head, &body).await
}

cases! {
    a_declared_length_over_the_limit_is_a_413_before_any_body_is_sent_without_credentials =>
        a_declared_length_over_the_limit_is_a_413_before_any_body_is_sent(Credentials::None);
    a_declared_length_over_the_limit_is_a_413_before_any_body_is_sent_with_a_bearer_token =>
        a_declared_length_over_the_limit_is_a_413_before_any_body_is_sent(Credentials::Bearer);
    a_declared_length_over_the_limit_is_a_413_before_any_body_is_sent_with_oauth_and_scopes =>
        a_declared_length_over_the_limit_is_a_413_before_any_body_is_sent(Credentials::OAuthScoped);
}

async fn a_declared_length_over_the_limit_is_a_413_before_any_body_is_sent(
    credentials: Credentials,
) {
    let served = serve_limited(credentials, Some(64 * 1024)).await;
    for content_type in ["application/json", "text/plain"] {
        // None of the 400 MB is ever sent: the answer comes from the head.
        let (seen, closed) = declared(&served, content_type, 400 * 1024 * 1024).await;
        assert!(
            seen.starts_with("HTTP/1.1 413"),
            "{credentials:?} {content_type}: {seen:?}"
        );
        assert!(seen.contains("exceeds 65536 bytes"), "{seen:?}");
        assert!(
            closed,
            "{credentials:?} {content_type}: the connection stays open"
        );
    }
    served.http.shutdown().await.unwrap();
}

cases! {
    a_chunked_body_is_cut_off_with_413_once_it_passes_the_limit_without_credentials =>
        a_chunked_body_is_cut_off_with_413_once_it_passes_the_limit(Credentials::None);
    a_chunked_body_is_cut_off_with_413_once_it_passes_the_limit_with_a_bearer_token =>
        a_chunked_body_is_cut_off_with_413_once_it_passes_the_limit(Credentials::Bearer);
    a_chunked_body_is_cut_off_with_413_once_it_passes_the_limit_with_oauth_and_scopes =>
        a_chunked_body_is_cut_off_with_413_once_it_passes_the_limit(Credentials::OAuthScoped);
}

async fn a_chunked_body_is_cut_off_with_413_once_it_passes_the_limit(credentials: Credentials) {
    const LIMIT: usize = 256 * 1024;
    let served = serve_limited(credentials, Some(LIMIT)).await;
    for content_type in ["application/json", "text/plain"] {
        let head = limited_head(&served, content_type, &["transfer-encoding: chunked"]);
        // Up to 64 MB offered; the server stops reading after the limit.
        let (seen, sent) = chunked(served.http.local_addr(), head, b' ', 64 << 20).await;
        assert!(
            seen.starts_with("HTTP/1.1 413"),
            "{credentials:?} {content_type}: {seen:?}"
        );
        assert!(
            sent < 32 << 20,
            "{credentials:?} {content_type}: {sent} bytes were taken before the 413"
        );
    }
    served.http.shutdown().await.unwrap();
}

cases! {
    bodies_within_the_limit_are_served_and_a_wrong_type_is_still_a_415_without_credentials =>
        bodies_within_the_limit_are_served_and_a_wrong_type_is_still_a_415(Credentials::None);
    bodies_within_the_limit_are_served_and_a_wrong_type_is_still_a_415_with_a_bearer_token =>
        bodies_within_the_limit_are_served_and_a_wrong_type_is_still_a_415(Credentials::Bearer);
    bodies_within_the_limit_are_served_and_a_wrong_type_is_still_a_415_with_oauth_and_scopes =>
        bodies_within_the_limit_are_served_and_a_wrong_type_is_still_a_415(Credentials::OAuthScoped);
}

async fn bodies_within_the_limit_are_served_and_a_wrong_type_is_still_a_415(
    credentials: Credentials,
) {
    const LIMIT: usize = 64 * 1024;
    let served = serve_limited(credentials, Some(LIMIT)).await;
    // A call just under the limit runs, its text intact.
    let (status, seen) = send_call(&served, call_of_size(LIMIT - 200)).await;
    assert_eq!(status, 200, "{credentials:?}: {seen}");
    assert!(seen.contains(&"x".repeat(1000)), "{credentials:?}: {seen}");
    // The same call just over it: 413, and the tool did not run.
    let (status, seen) = send_call(&served, call_of_size(LIMIT + 10)).await;
    assert_eq!(status, 413, "{credentials:?}: {seen}");
    // A small body of another type: rmcp's 415, the body read within the limit.
    let mut stream = TcpStream::connect(served.http.local_addr()).await.unwrap();
    let body = "hello";
    let head = limited_head(
        &served,
        "text/plain",
        &[&format!("content-length: {}", body.len())],
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    let (seen, _) = read_until_closed(&mut stream, Duration::from_secs(2)).await;
    assert!(
        seen.starts_with("HTTP/1.1 415"),
        "{credentials:?}: {seen:?}"
    );
    served.http.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zero_body_limit_is_refused_at_start() {
    let registry = Registry::new();
    let error = serve_http(
        &McpServer::new(registry),
        HttpOptions::default().max_body_bytes(0),
    )
    .await
    .expect_err("a zero limit is refused");
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
    assert!(error.to_string().contains("max_body_bytes"), "{error}");
}

/// The resident memory of process `pid`, in bytes (`VmRSS` of `/proc/PID/status`).
fn resident(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .expect("VmRSS in /proc/PID/status");
    let kb: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .expect("VmRSS in kB");
    kb * 1024
}

/// The environment variable that makes [`serve_for_the_memory_test`] serve.
const SERVE_ENV: &str = "DSH_MCP_BODY_LIMIT_SERVER";

/// Not a test of its own: the server process of
/// [`a_server_streamed_400_mb_grows_by_at_most_twice_the_limit`], which starts this
/// test binary again to run it alone (so the memory measured is the server's only).
/// It serves OAuth with scopes and the default body limit, prints its URL, and runs
/// until its standard input closes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the server process of another test; run by it"]
async fn serve_for_the_memory_test() {
    if std::env::var_os(SERVE_ENV).is_none() {
        return;
    }
    let served = serve_limited(Credentials::OAuthScoped, None).await;
    println!("URL {}", served.http.url());
    let mut stdin = tokio::io::stdin();
    let mut sink = Vec::new();
    let _ = stdin.read_to_end(&mut sink).await;
    served.http.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_streamed_400_mb_grows_by_at_most_twice_the_limit() {
    use std::io::BufRead as _;
    const LIMIT: u64 = 4 * 1024 * 1024;
    assert_eq!(
        HttpOptions::default().max_body_bytes as u64,
        LIMIT,
        "the default limit"
    );
    // The server's test by its full name in this binary (`body_limit::…`): the module
    // path without the crate's name.
    let (_, module) = module_path!()
        .split_once("::")
        .expect("a module of the binary");
    let server_test = format!("{module}::serve_for_the_memory_test");
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", &server_test, "--nocapture"])
        .env(SERVE_ENV, "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("start the server process");
    let pid = child.id();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let url = loop {
        let line = lines
            .next()
            .expect("the server prints its URL")
            .expect("a line");
        if let Some(url) = line.strip_prefix("URL ") {
            break url.to_string();
        }
    };
    let addr: std::net::SocketAddr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();
    let authorization = format!("Bearer {}", oauth_token(&url));
    let auth = format!("authorization: {authorization}");
    let served_head =
        |content_type: &str| post_head(content_type, &[&auth, "transfer-encoding: chunked"]);
    // One small body of each kind first, so that the baseline counts a warm server.
    for content_type in ["text/plain", "application/json"] {
        let head = served_head(content_type);
        let (seen, sent) = chunked(addr, head, b' ', 128 * 1024).await;
        assert!(seen.starts_with("HTTP/1.1 4"), "{seen:?} {sent}");
    }
    let before = resident(pid);
    let sampling = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let peak = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(before));
    let sampler = {
        let (sampling, peak) = (sampling.clone(), peak.clone());
        std::thread::spawn(move || {
            while sampling.load(std::sync::atomic::Ordering::SeqCst) {
                peak.fetch_max(resident(pid), std::sync::atomic::Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(2));
            }
        })
    };
    for content_type in ["text/plain", "application/json"] {
        let (seen, sent) = chunked(addr, served_head(content_type), b'a', 400 << 20).await;
        assert!(seen.starts_with("HTTP/1.1 413"), "{content_type}: {seen:?}");
        assert!(
            sent < 100 << 20,
            "{content_type}: the server took {sent} bytes before its 413"
        );
    }
    sampling.store(false, std::sync::atomic::Ordering::SeqCst);
    sampler.join().unwrap();
    let grown = peak
        .load(std::sync::atomic::Ordering::SeqCst)
        .saturating_sub(before);
    drop(child.stdin.take());
    let _ = child.wait();
    assert!(
        grown <= 2 * LIMIT,
        "the server grew by {grown} bytes (limit {LIMIT}) while 400 MB were streamed at it"
    );
    eprintln!("resident memory grew by {grown} bytes (limit {LIMIT})");
}
