//! `dsh-tools mcp` against the official MCP TypeScript SDK clients, over stdio and
//! Streamable HTTP: `@modelcontextprotocol/sdk` (1.x, protocol 2025-11-25) and the v2
//! client package `@modelcontextprotocol/client` (pinned to 2026-07-28).
//!
//! On first run each SDK is installed with npm into `<target>/mcp-node` (and
//! `<target>/mcp-node-v2`); later runs reuse it. When that is impossible (no
//! `node`/`npm`, no registry) the test fails and says what is missing.
//!
//! `tests/node/mcp_client.mjs` lists the tools and calls every reference tool so that it
//! completes (write creating and replacing a file, edit, grep with and without matches,
//! glob, foreground bash exiting 0, 7 and killed by a signal, a background job with
//! every job tool). The client's `callTool` checks each result's `structuredContent`
//! against the listed `outputSchema` with its own validator and throws on a mismatch.
//!
//! `tests/node/mcp_client_2026.mjs` does the same on 2026-07-28 with the v2 client, then
//! drives approval through `input_required` results (accept, decline, cancel, a client
//! that cannot ask) and a code-mode program whose sub-call waits for approval.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

const DSH_TOOLS: &str = env!("CARGO_BIN_EXE_dsh-tools");
const SDK: &str = "@modelcontextprotocol/sdk@^1.32";
const SDK_V2: &str = "@modelcontextprotocol/client@^2.4";

/// `<target>/mcp-node`, with the SDK installed.
pub(super) fn sdk_dir() -> &'static Path {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    static INSTALL: Mutex<()> = Mutex::new(());
    let _guard = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    match DIR.get_or_init(|| install("mcp-node", "@modelcontextprotocol/sdk", SDK)) {
        Ok(dir) => dir,
        Err(e) => panic!("cannot set up the MCP TypeScript SDK: {e}"),
    }
}

/// `<target>/mcp-node-v2`, with the v2 client package installed.
pub(super) fn sdk_v2_dir() -> &'static Path {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    static INSTALL: Mutex<()> = Mutex::new(());
    let _guard = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    match DIR.get_or_init(|| install("mcp-node-v2", "@modelcontextprotocol/client", SDK_V2)) {
        Ok(dir) => dir,
        Err(e) => panic!("cannot set up the MCP TypeScript v2 client: {e}"),
    }
}

/// Install `spec` (of the npm package `package`) into `<target>/<dir>`.
pub(super) fn install(dir: &str, package: &str, spec: &str) -> Result<PathBuf, String> {
    // The binary is `<target>/<profile>/dsh-tools`.
    let target = Path::new(DSH_TOOLS)
        .parent()
        .and_then(Path::parent)
        .ok_or("cannot locate the target directory")?;
    let dir = target.join(dir);
    let marker = dir.join("node_modules").join(package).join("package.json");
    if marker.exists() {
        return Ok(dir);
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
    // A package.json of its own, so npm installs here and not into a parent project.
    std::fs::write(
        dir.join("package.json"),
        r#"{"name":"dsh-mcp-node-check","private":true}"#,
    )
    .map_err(|e| format!("write package.json: {e}"))?;
    let out = Command::new("npm")
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--no-save",
            "--prefix",
        ])
        .arg(&dir)
        .arg(spec)
        .output()
        .map_err(|e| format!("`npm` is needed (with node 18 or later): {e}"))?;
    if !out.status.success() || !marker.exists() {
        return Err(format!(
            "`npm install {spec}` failed (the npm registry must be reachable): {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(dir)
}

/// Run `tests/node/<script>` with the SDK in `sdk` against `dsh-tools` in `root`, over
/// `transport`, and expect at least `min_checks` passed checks.
pub(super) fn run_script(
    sdk: &Path,
    script: &str,
    root: &Path,
    transport: &str,
    min_checks: usize,
) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/node")
        .join(script);
    let out = Command::new("node")
        .arg(script)
        .arg(sdk)
        .arg(DSH_TOOLS)
        .arg(root)
        .arg(transport)
        .output()
        .expect("run node (needed for the TypeScript client)");
    crate::process::assert_checks(transport, &out, min_checks);
}

/// A root holding the `notes.txt` the reference-tool sweep reads.
fn notes_root() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
    root
}

fn run_client(transport: &str) {
    let root = notes_root();
    run_script(sdk_dir(), "mcp_client.mjs", root.path(), transport, 40);
}

#[test]
fn typescript_client_validates_every_reference_tool_over_stdio() {
    run_client("stdio");
}

#[test]
fn typescript_client_validates_every_reference_tool_over_http() {
    run_client("http");
}

fn run_client_2026(transport: &str) {
    let root = notes_root();
    run_script(
        sdk_v2_dir(),
        "mcp_client_2026.mjs",
        root.path(),
        transport,
        80,
    );
}

#[test]
fn typescript_v2_client_on_2026_07_28_validates_tools_and_answers_approvals_over_stdio() {
    run_client_2026("stdio");
}

#[test]
fn typescript_v2_client_on_2026_07_28_validates_tools_and_answers_approvals_over_http() {
    run_client_2026("http");
}
