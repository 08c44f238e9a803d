//! `dsh-tools mcp` relays what an imported server asks during a call to its own MCP
//! client, end to end with real processes: the official TypeScript SDK (1.x) on both
//! sides. `tests/node/mcp_relay_server.mjs` (an SDK server on stdio, imported with
//! `--mcp`) logs, reports progress and asks a form in its `deploy` tool;
//! `tests/node/mcp_relay.mjs` (an SDK client, over stdio or Streamable HTTP) calls the
//! imported `deploy`, answers the form and checks that its answer reached the upstream
//! tool (the result names the branch and replica count it gave) and that the log and
//! the progress were relayed.
//!
//! The SDK is installed as `mcp_typescript` installs it (on first run, into
//! `<target>/mcp-node`).

use crate::mcp_typescript::{run_script, sdk_dir};

fn relay(transport: &str) {
    let root = tempfile::tempdir().unwrap();
    run_script(sdk_dir(), "mcp_relay.mjs", root.path(), transport, 11);
}

#[test]
fn typescript_client_answers_an_imported_servers_form_over_stdio() {
    relay("stdio");
}

#[test]
fn typescript_client_answers_an_imported_servers_form_over_http() {
    relay("http");
}
