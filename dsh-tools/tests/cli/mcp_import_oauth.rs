//! `dsh-tools --mcp-http URL` importing from an OAuth-protected MCP server, with real
//! processes: `oidc-provider` as the authorization server, `dsh-tools mcp --http
//! --oauth-issuer` as the protected upstream (importing the SDK server of
//! `tests/node/mcp_relay_server.mjs`), and the importing `dsh-tools` authorizing with
//! the interactive authorization code grant, as a pre-registered or a dynamically
//! registered client (the script plays the browser: the printed URL, the authorization
//! server's approving interaction, the redirect to the loopback listener), or client
//! credentials. `tests/node/mcp_import_oauth.mjs` checks that the
//! imported tool answers, that the token file is written with mode 0600 and reused by
//! the next run without a new authorization, that a rejected access token is refreshed
//! without one, and the errors: no OAuth flag against a 401, a refresh that fails, a
//! refused authorization, nobody opening the URL.
//!
//! `oidc-provider` and the SDK are installed as `mcp_oauth` and `mcp_typescript` install
//! them (on first run, into `<target>/oidc-node` and `<target>/mcp-node`).

use std::path::Path;
use std::process::Command;

use crate::process::DSH_TOOLS;

#[test]
fn imports_from_an_oauth_protected_server_with_oidc_provider() {
    let sdk = crate::mcp_typescript::sdk_dir();
    let oidc = crate::mcp_oauth::oidc_dir();
    let work = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/node/mcp_import_oauth.mjs");
    let out = Command::new("node")
        .arg(script)
        .arg(sdk)
        .arg(oidc)
        .arg(DSH_TOOLS)
        .arg(work.path())
        .output()
        .expect("run node (needed for oidc-provider and the SDK server)");
    crate::process::assert_checks("import-oauth", &out, 38);
}

/// `dsh-tools ARGS list`, run to its end: its exit status and standard error.
fn run(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let root = tempfile::tempdir().unwrap();
    let out = Command::new(DSH_TOOLS)
        .arg("--root")
        .arg(root.path())
        .args(args)
        .arg("list")
        .env_remove("DSH_TEST_UNSET_SECRET")
        .envs(env.iter().copied())
        .output()
        .expect("run dsh-tools");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The OAuth flags that cannot work are refused before any connection, naming what is
/// missing (a remote server, for any of them); a server that cannot be reached is named
/// with its flag.
#[test]
fn oauth_flags_that_cannot_work_are_errors_naming_what_is_missing() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", closed.local_addr().unwrap());
    drop(closed);

    let (code, stderr) = run(
        &[
            "--mcp-http",
            &url,
            "--mcp-oauth-grant",
            "client-credentials",
        ],
        &[],
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "--mcp-oauth-grant client-credentials needs --mcp-oauth-client-id ID and \
             --mcp-oauth-client-secret-env VAR"
        ),
        "{stderr}"
    );

    let (code, stderr) = run(
        &[
            "--mcp-http",
            &url,
            "--mcp-oauth-client-id",
            "svc",
            "--mcp-oauth-client-secret-env",
            "DSH_TEST_UNSET_SECRET",
        ],
        &[],
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "--mcp-oauth-client-secret-env DSH_TEST_UNSET_SECRET: the environment variable \
             DSH_TEST_UNSET_SECRET is not set"
        ),
        "{stderr}"
    );

    // Nobody listens: the error names the flag and the URL, and says nothing of OAuth.
    let (code, stderr) = run(&["--mcp-http", &url], &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.starts_with(&format!("error: --mcp-http {url:?}: ")),
        "{stderr}"
    );
    assert!(!stderr.contains("--mcp-oauth"), "{stderr}");

    // An OAuth flag without a remote server is a usage error naming it, not ignored,
    // with `--mcp` servers too (they are never authorized).
    let (code, stderr) = run(&["--mcp-oauth-scopes", "a b"], &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        "error: --mcp-oauth-scopes needs --mcp-http URL (or --mcp-http-deferred URL): \
         OAuth authorizes the import of a remote MCP server, and none is named"
    );
    let (code, stderr) = run(
        &[
            "--mcp",
            "no-such-server",
            "--mcp-oauth",
            "--mcp-oauth-token-file",
            "t.json",
        ],
        &[],
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.starts_with(
            "error: --mcp-oauth, --mcp-oauth-token-file need --mcp-http URL (or \
             --mcp-http-deferred URL)"
        ),
        "{stderr}"
    );
    // With `--mcp-http-deferred`, the flags are taken (the connection then fails).
    let (code, stderr) = run(
        &["--mcp-http-deferred", &url, "--mcp-oauth-scopes", "a"],
        &[],
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.starts_with(&format!("error: --mcp-http-deferred {url:?}: ")),
        "{stderr}"
    );
}

/// Every import flag has its help text.
#[test]
fn the_import_flags_are_in_the_help() {
    let out = Command::new(DSH_TOOLS)
        .arg("--help")
        .output()
        .expect("run dsh-tools --help");
    let help = String::from_utf8_lossy(&out.stdout);
    for (flag, words) in [
        ("--mcp-http <URL>", "remote MCP server on Streamable HTTP"),
        ("--mcp-http-deferred <URL>", "deferred"),
        ("--mcp-oauth\n", "authorization URL"),
        ("--mcp-oauth-client-id <ID>", "client id"),
        (
            "--mcp-oauth-client-secret-env <VAR>",
            "never given on the command line",
        ),
        ("--mcp-oauth-grant <GRANT>", "client-credentials"),
        ("--mcp-oauth-scopes <SCOPES>", "scopes"),
        ("--mcp-oauth-token-file <PATH>", "0600"),
        ("--mcp-oauth-timeout <SECS>", "redirect"),
    ] {
        let at = help
            .find(&format!("  {flag}"))
            .unwrap_or_else(|| panic!("{flag} is not in the help:\n{help}"));
        let text = &help[at..];
        let next = text[2..].find("\n  -").map_or(text.len(), |n| n + 2);
        assert!(
            text[..next].contains(words),
            "{flag}'s help lacks {words:?}: {}",
            &text[..next]
        );
    }
}
