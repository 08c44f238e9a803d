//! `dsh-tools --mcp-http URL` importing from an OAuth-protected MCP server, with real
//! processes: `oidc-provider` as the authorization server, `dsh-tools mcp --http
//! --oauth-issuer` as the protected upstream (importing the SDK server of
//! `tests/node/mcp_relay_server.mjs`), and the importing `dsh-tools` authorizing with
//! the interactive authorization code grant (the script plays the browser: the printed
//! URL, the authorization server's approving interaction, the redirect to the loopback
//! listener) or client credentials. `tests/node/mcp_import_oauth.mjs` checks that the
//! imported tool answers, that the token file is written with mode 0600 and reused by
//! the next run without a new authorization, and the errors: no OAuth flag against a
//! 401, a refused authorization, nobody opening the URL.
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
    crate::process::assert_checks("import-oauth", &out, 21);
}
