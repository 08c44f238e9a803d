//! `dsh-tools mcp --http --oauth-issuer` with a real authorization server: `oidc-provider`
//! (a certified OpenID Connect and OAuth 2.0 server, issuing JWT access tokens with
//! resource indicators) and the official MCP TypeScript SDK client's OAuth support
//! (`tests/node/mcp_oauth.mjs`: client credentials, scopes, a token for another resource,
//! key rotation); and the CLI's OAuth startup errors.
//!
//! On first run `oidc-provider` is installed with npm into `<target>/oidc-node` (and the
//! SDK into `<target>/mcp-node`, see `mcp_typescript.rs`); later runs reuse them.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use crate::process::DSH_TOOLS;

const OIDC_PROVIDER: &str = "oidc-provider@^9.13";

/// `<target>/oidc-node`, with `oidc-provider` installed.
pub(super) fn oidc_dir() -> &'static Path {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    static INSTALL: Mutex<()> = Mutex::new(());
    let _guard = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    match DIR
        .get_or_init(|| crate::mcp_typescript::install("oidc-node", "oidc-provider", OIDC_PROVIDER))
    {
        Ok(dir) => dir,
        Err(e) => panic!("cannot set up oidc-provider: {e}"),
    }
}

#[test]
fn typescript_client_gets_a_token_from_oidc_provider_and_calls_tools_within_its_scopes() {
    let sdk = crate::mcp_typescript::sdk_dir();
    let oidc = oidc_dir();
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/node/mcp_oauth.mjs");
    let out = Command::new("node")
        .arg(script)
        .arg(sdk)
        .arg(oidc)
        .arg(DSH_TOOLS)
        .arg(root.path())
        .output()
        .expect("run node (needed for the TypeScript client and oidc-provider)");
    crate::process::assert_checks("oauth", &out, 29);
}

/// `dsh-tools mcp ARGS` run to its end: its exit status and standard error.
fn run_mcp(args: &[&str]) -> (bool, String) {
    let root = tempfile::tempdir().unwrap();
    let out = Command::new(DSH_TOOLS)
        .arg("--root")
        .arg(root.path())
        .arg("mcp")
        .args(args)
        .output()
        .expect("run dsh-tools mcp");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn an_unreachable_issuer_or_a_bad_oauth_flag_stops_the_server_at_start() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let issuer = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let (ok, stderr) = run_mcp(&["--http", "127.0.0.1:0", "--oauth-issuer", &issuer]);
    assert!(!ok, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "OAuth: cannot read the metadata of the issuer {issuer}"
        )),
        "{stderr}"
    );
    let (ok, stderr) = run_mcp(&[
        "--http",
        "127.0.0.1:0",
        "--oauth-issuer",
        &issuer,
        "--oauth-jwks",
        "/nonexistent/jwks.json",
    ]);
    assert!(
        !ok && stderr.contains("cannot read the JWKS file /nonexistent/jwks.json"),
        "{stderr}"
    );
    let (ok, stderr) = run_mcp(&["--http", "0.0.0.0:0", "--oauth-issuer", &issuer]);
    assert!(
        !ok && stderr.contains("give --oauth-audience URL"),
        "{stderr}"
    );
    let (ok, stderr) = run_mcp(&[
        "--http",
        "127.0.0.1:0",
        "--oauth-issuer",
        &issuer,
        "--tool-scope",
        "bash",
    ]);
    assert!(
        !ok && stderr.contains("--tool-scope \"bash\": expected RULE=SCOPE"),
        "{stderr}"
    );
    // A static token and OAuth exclude each other.
    let (ok, stderr) = run_mcp(&[
        "--http",
        "127.0.0.1:0",
        "--oauth-issuer",
        &issuer,
        "--bearer-token-env",
        "X",
    ]);
    assert!(!ok && stderr.contains("cannot be used with"), "{stderr}");
}
