//! `dsh-tools mcp` and `dsh-tools --mcp` against the official MCP Python SDK.
//!
//! On first run this creates a virtual environment in `<target>/mcp-venv` and installs
//! the SDK (`mcp` 2.x) from PyPI into it; later runs reuse it. When that is impossible
//! (no `python3`, no `venv` module, no network) the test fails and says what is missing.
//!
//! - `tests/python/mcp_client.py` drives `dsh-tools mcp` over stdio (the SDK starts it
//!   through `mcp.client.stdio`) and over Streamable HTTP, each with the `initialize`
//!   lifecycle (2025-11-25) and the `server/discover` one (2026-07-28): list and compare
//!   names and input schemas, read a real file, invalid arguments, a background job read
//!   in a later call, a cancelled `sleep` whose process is gone, a job killed with its
//!   session.
//! - `tests/python/approval_client.py` drives `dsh-tools mcp --ask bash` (and
//!   `--code-mode code --ask bash`) over both transports and both lifecycles: approval
//!   accepted, declined and cancelled through the SDK's `elicitation_callback`, a client
//!   without it, a code-mode program's tool call waiting for the answer, and on
//!   2026-07-28 a tampered and a replayed `requestState`.
//! - `tests/python/echo_server.py`, a server written with the SDK, is imported with
//!   `--mcp`: its tools are called through the host, and the one whose schema is outside
//!   the vocabulary is reported with `UNSUPPORTED_SCHEMA`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const DSH_TOOLS: &str = env!("CARGO_BIN_EXE_dsh-tools");
const SDK_REQUIREMENT: &str = "mcp>=2,<3";

/// `<target>/mcp-venv/bin/python`, with the SDK installed.
pub(super) fn python() -> &'static Path {
    static PYTHON: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match PYTHON.get_or_init(setup_venv) {
        Ok(python) => python,
        Err(e) => panic!("cannot set up the MCP Python SDK: {e}"),
    }
}

fn setup_venv() -> Result<PathBuf, String> {
    // The binary is `<target>/<profile>/dsh-tools`.
    let target = Path::new(DSH_TOOLS)
        .parent()
        .and_then(Path::parent)
        .ok_or("cannot locate the target directory")?;
    let venv = target.join("mcp-venv");
    let python = venv.join("bin").join("python");
    let has_sdk = |python: &Path| {
        Command::new(python)
            .args(["-c", "import mcp.client.stdio, mcp.client.streamable_http"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if python.exists() && has_sdk(&python) {
        return Ok(python);
    }
    let out = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .output()
        .map_err(|e| format!("`python3` is needed (Python 3.10 or later): {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`python3 -m venv {}` failed (on Debian, install python3-venv): {}",
            venv.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let out = Command::new(&python)
        .args(["-m", "pip", "install", "--quiet", SDK_REQUIREMENT])
        .output()
        .map_err(|e| format!("cannot run pip: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`pip install {SDK_REQUIREMENT}` failed (PyPI must be reachable): {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    if !has_sdk(&python) {
        return Err(format!(
            "{SDK_REQUIREMENT} installed but `mcp.client.stdio` does not import"
        ));
    }
    Ok(python)
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("python")
        .join(name)
}

fn root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
    dir
}

fn run_client(transport: &str, lifecycle: &str) {
    run_script("mcp_client.py", transport, lifecycle, 45);
}

/// Run `name` (a script taking `DSH_TOOLS ROOT TRANSPORT LIFECYCLE`, printing
/// `ok: N checks` last) and require at least `min_checks` checks.
fn run_script(name: &str, transport: &str, lifecycle: &str, min_checks: usize) {
    let root = root();
    let out = Command::new(python())
        .arg(script(name))
        .arg(DSH_TOOLS)
        .arg(root.path())
        .args([transport, lifecycle])
        .output()
        .expect("run the Python client");
    crate::process::assert_checks(&format!("{name} {transport}/{lifecycle}"), &out, min_checks);
}

#[test]
fn python_client_over_stdio_with_initialize() {
    run_client("stdio", "legacy");
}

#[test]
fn python_client_over_stdio_with_discover() {
    run_client("stdio", "modern");
}

#[test]
fn python_client_over_http_with_initialize() {
    run_client("http", "legacy");
}

#[test]
fn python_client_over_http_with_discover() {
    run_client("http", "modern");
}

// Approval (`tests/python/approval_client.py`): the SDK answers the server's forms
// through its `elicitation_callback`, on 2025-11-25 as `elicitation/create` requests and
// on 2026-07-28 as the input request of an `InputRequiredResult`, which its `Client`
// retries with the answer and the `requestState` (the SDK supports both); the modern
// runs also drive the rounds by hand for a tampered and a replayed state.

#[test]
fn python_client_approval_over_stdio_with_initialize() {
    run_script("approval_client.py", "stdio", "legacy", 25);
}

#[test]
fn python_client_approval_over_stdio_with_discover() {
    run_script("approval_client.py", "stdio", "modern", 35);
}

#[test]
fn python_client_approval_over_http_with_initialize() {
    run_script("approval_client.py", "http", "legacy", 25);
}

#[test]
fn python_client_approval_over_http_with_discover() {
    // 2026-07-28 over HTTP: the code-mode checks run in the server's stateless context.
    run_script("approval_client.py", "http", "modern", 35);
}

#[test]
fn tools_of_a_python_server_are_added_with_dash_dash_mcp() {
    let root = root();
    let server = format!(
        "{} {}",
        python().display(),
        script("echo_server.py").display()
    );
    let dsh = |args: &[&str]| {
        let out = Command::new(DSH_TOOLS)
            .arg("--root")
            .arg(root.path())
            .args(["--mcp", &server])
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };

    let (code, stdout, stderr) = dsh(&["list", "--json"]);
    assert_eq!(code, Some(0), "{stderr}");
    let listed: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let names: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.ends_with(&["echo", "add"]), "{names:?}");
    assert!(
        names.contains(&"read") && !names.contains(&"shout"),
        "{names:?}"
    );
    assert!(
        stderr.contains(
            "tool \"shout\" not imported (UNSUPPORTED_SCHEMA): inputSchema: unsupported JSON schema: schema.properties.times: unsupported keyword \"anyOf\""
        ),
        "{stderr}"
    );

    // Calls go through the host's pipeline to the server and back.
    let (code, stdout, stderr) = dsh(&["call", "add", r#"{"a":2,"b":40}"#, "--json"]);
    assert_eq!(code, Some(0), "{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["result"]["value"], serde_json::json!({"result": 42}));

    // Arguments are validated against the imported schema before anything is sent.
    let (code, _, stderr) = dsh(&["call", "add", r#"{"a":"two"}"#]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("error[INVALID_ARGS]"), "{stderr}");
    assert!(
        stderr.contains("\"a\"") && stderr.contains("\"b\""),
        "{stderr}"
    );
}

/// `--mcp-deferred`: the server's tools are deferred and grouped in a namespace named
/// after the server, so the OpenAI Responses export shows one namespace entry (and the
/// provider's tool search), Anthropic's marks each tool deferred beside its tool search
/// tool, and calls still reach the server.
#[test]
fn a_server_added_with_mcp_deferred_is_one_deferred_namespace() {
    let root = root();
    let server = format!(
        "{} {}",
        python().display(),
        script("echo_server.py").display()
    );
    let dsh = |args: &[&str]| {
        let out = Command::new(DSH_TOOLS)
            .arg("--root")
            .arg(root.path())
            .args(["--mcp-deferred", &server])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let tools = dsh(&["export", "--provider", "openai"]);
    let list = tools.as_array().unwrap();
    let namespaces: Vec<&serde_json::Value> =
        list.iter().filter(|t| t["type"] == "namespace").collect();
    assert_eq!(namespaces.len(), 1, "{tools:#}");
    let ns = namespaces[0];
    assert_eq!(ns["name"], "echo-server");
    assert_eq!(ns["description"], "Tools of the MCP server echo-server.");
    let inner: Vec<(&str, &serde_json::Value)> = ns["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap(), &t["defer_loading"]))
        .collect();
    assert_eq!(
        inner,
        [
            ("echo", &serde_json::json!(true)),
            ("add", &serde_json::json!(true))
        ]
    );
    // The host's own tools stay loaded, at the top level; the provider's search is last.
    assert!(
        list.iter()
            .any(|t| t["name"] == "read" && t.get("defer_loading").is_none())
    );
    assert_eq!(
        list.last().unwrap(),
        &serde_json::json!({"type": "tool_search"})
    );

    let tools = dsh(&["export", "--provider", "anthropic"]);
    let list = tools.as_array().unwrap();
    let echo = list.iter().find(|t| t["name"] == "echo").unwrap();
    assert_eq!(echo["defer_loading"], true);
    assert_eq!(list.last().unwrap()["name"], "tool_search_tool_bm25");

    let doc = dsh(&["call", "add", r#"{"a":2,"b":40}"#, "--json"]);
    assert_eq!(doc["result"]["value"], serde_json::json!({"result": 42}));
}
