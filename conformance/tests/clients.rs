//! The everything server against the official MCP clients, on both revisions, over stdio
//! and Streamable HTTP: the fixtures that talk back (forms, sampling, roots, logs), and
//! resources, prompts and completion (lists, reads, gets, errors, subscriptions, list
//! changes).
//!
//! | client | revision | transports |
//! |---|---|---|
//! | TypeScript SDK 1.x (`@modelcontextprotocol/sdk@^1.32`) | 2025-11-25 | stdio, HTTP |
//! | TypeScript v2 client (`@modelcontextprotocol/client@^2.4`) | 2026-07-28 | stdio, HTTP |
//! | Python SDK (`mcp` 2.x, which speaks both) | 2025-11-25 and 2026-07-28 | stdio, HTTP |
//!
//! One test per (client, revision, transport), so one failing does not hide the others.
//! Each runs a script (`tests/node/sdk1.mjs`, `tests/node/client_v2.mjs`,
//! `tests/python/client.py`) whose client declares sampling, form elicitation and roots,
//! answers them (the form with `{username: "ada", email: "ada@example.com"}`, or
//! `{name: "ada"}` for a form asking a `name`; the model with "Paris"; roots with
//! `file:///work`), keeps the log notifications it gets, calls `test_elicitation`,
//! `test_sampling`, `test_tool_with_logging`, `test_input_required_result_list_roots` and
//! `test_input_required_result_multiple_inputs` (the three questions in one round on
//! 2026-07-28), and checks each result's exact text, what each handler was asked and
//! how often, and which logs arrived at which level. Then it lists the resources and
//! templates, reads `test://static-text`, `test://static-binary`,
//! `test://template/42/data` and an unknown URI (-32602, the URI in `data`), lists the
//! prompts and gets each (a missing argument and an unknown name: -32602), completes a
//! prompt argument and a template placeholder, subscribes to `test://watched-resource`
//! and unsubscribes (2025-11-25; the clients offer no `resources/subscribe` on
//! 2026-07-28), and calls `test_trigger_prompt_change` twice, waiting each time for the
//! prompt-list-changed notification (a plain notification on 2025-11-25, on a
//! `subscriptions/listen` stream on 2026-07-28) and listing the prompts again. See each
//! script's header for the exact checks. The script prints `ok: N checks` last; the
//! test requires exactly the number it expects, so a check skipped by mistake fails it.
//!
//! Over stdio the client starts `everything-server --stdio` itself; over HTTP the test
//! starts `everything-server` with `PORT=0` and hands the client the URL it announces
//! (the server is killed when the test ends, whatever happens).
//!
//! The clients are installed on first run into the target directory:
//! `<target>/conformance-clients-node` (1.x), `<target>/conformance-clients-node-v2` (v2)
//! with npm, and a virtual environment `<target>/conformance-clients-py` with pip; later
//! runs reuse them. Nothing is skipped: without `node`/`npm`/`python3` (with `venv`) or
//! a reachable registry, the tests fail and say what is missing.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// The server binary under test.
const SERVER: &str = env!("CARGO_BIN_EXE_everything-server");

/// The TypeScript SDK 1.x, as dsh-tools pins it.
const SDK_1X: &str = "@modelcontextprotocol/sdk@^1.32";

/// The TypeScript v2 client package, as dsh-tools pins it.
const CLIENT_V2: &str = "@modelcontextprotocol/client@^2.4";

/// The Python SDK, as dsh-tools pins it.
const PYTHON_SDK: &str = "mcp>=2,<3";

/// The longest a client script may run before it is killed and the test fails (a hang).
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(180);

/// The target directory: the binary is `<target>/<profile>/everything-server`.
fn target_dir() -> Result<PathBuf, String> {
    Path::new(SERVER)
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .ok_or_else(|| format!("cannot locate the target directory from {SERVER}"))
}

/// `<target>/conformance-clients-node`, with the TypeScript SDK 1.x installed.
fn sdk_1x_dir() -> &'static Path {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match DIR.get_or_init(|| {
        install_npm(
            "conformance-clients-node",
            "@modelcontextprotocol/sdk",
            SDK_1X,
        )
    }) {
        Ok(dir) => dir,
        Err(e) => panic!("cannot set up the MCP TypeScript SDK 1.x: {e}"),
    }
}

/// `<target>/conformance-clients-node-v2`, with the TypeScript v2 client installed.
fn client_v2_dir() -> &'static Path {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match DIR.get_or_init(|| {
        install_npm(
            "conformance-clients-node-v2",
            "@modelcontextprotocol/client",
            CLIENT_V2,
        )
    }) {
        Ok(dir) => dir,
        Err(e) => panic!("cannot set up the MCP TypeScript v2 client: {e}"),
    }
}

/// Install `spec` (of the npm package `package`) into `<target>/<dir>`, unless it is
/// there already.
fn install_npm(dir: &str, package: &str, spec: &str) -> Result<PathBuf, String> {
    let dir = target_dir()?.join(dir);
    let marker = dir.join("node_modules").join(package).join("package.json");
    if marker.exists() {
        return Ok(dir);
    }
    let node = Command::new("node").arg("--version").output();
    if !node.is_ok_and(|o| o.status.success()) {
        return Err("`node` (18 or later) is needed to run the TypeScript clients".to_string());
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
    // A package.json of its own, so npm installs here and not into a parent project.
    std::fs::write(
        dir.join("package.json"),
        r#"{"name":"dsh-conformance-clients","private":true}"#,
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
        .map_err(|e| format!("`npm` is needed to install {spec}: {e}"))?;
    if !out.status.success() || !marker.exists() {
        return Err(format!(
            "`npm install {spec}` failed (the npm registry must be reachable): {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(dir)
}

/// `<target>/conformance-clients-py/bin/python`, with the Python SDK installed.
fn python() -> &'static Path {
    static PYTHON: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match PYTHON.get_or_init(setup_venv) {
        Ok(python) => python,
        Err(e) => panic!("cannot set up the MCP Python SDK: {e}"),
    }
}

/// Create the virtual environment and install the SDK, unless it is there already.
fn setup_venv() -> Result<PathBuf, String> {
    let venv = target_dir()?.join("conformance-clients-py");
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
        .map_err(|e| format!("`python3` (3.10 or later) is needed: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`python3 -m venv {}` failed (on Debian, install python3-venv): {}",
            venv.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let out = Command::new(&python)
        .args(["-m", "pip", "install", "--quiet", PYTHON_SDK])
        .output()
        .map_err(|e| format!("cannot run pip: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`pip install {PYTHON_SDK}` failed (PyPI must be reachable): {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    if !has_sdk(&python) {
        return Err(format!(
            "{PYTHON_SDK} installed but `mcp.client.streamable_http` does not import"
        ));
    }
    Ok(python)
}

/// `everything-server` over HTTP on a free loopback port, killed when dropped.
struct HttpServer {
    child: Child,
    url: String,
}

impl HttpServer {
    /// Start the server and wait (at most 60 s) for the URL it announces on stderr; the
    /// rest of its stderr is passed on to the test's.
    fn start() -> HttpServer {
        let mut child = Command::new(SERVER)
            .env("PORT", "0")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn everything-server");
        let stderr = child.stderr.take().expect("piped stderr");
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            let mut announced = Some(tx);
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                match line.strip_prefix("serving MCP at ") {
                    Some(url) if announced.is_some() => {
                        if let Some(tx) = announced.take() {
                            let _ = tx.send(url.trim().to_string());
                        }
                    }
                    _ => eprintln!("everything-server: {line}"),
                }
            }
        });
        let mut server = HttpServer {
            child,
            url: String::new(),
        };
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(url) => server.url = url,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let status = server.child.wait();
                panic!("everything-server exited ({status:?}) without announcing its URL")
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                panic!("everything-server did not announce its URL within 60 s")
            }
        }
        server
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Run `command` (its stdin closed) for at most [`SCRIPT_TIMEOUT`], killing it then.
fn run(mut command: Command) -> (Output, bool) {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    let drain = |mut pipe: Box<dyn Read + Send>| {
        thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("piped stdout")));
    let stderr = drain(Box::new(child.stderr.take().expect("piped stderr")));
    let start = Instant::now();
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the client") {
            break status;
        }
        if start.elapsed() > SCRIPT_TIMEOUT {
            timed_out = true;
            let _ = child.kill();
            break child.wait().expect("wait for the killed client");
        }
        thread::sleep(Duration::from_millis(50));
    };
    let output = Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    };
    (output, timed_out)
}

/// Require the script's run (named `what`) to have passed, printing `ok: N checks` last
/// with exactly `expected` checks.
fn assert_checks(what: &str, (out, timed_out): (Output, bool), expected: usize) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !timed_out,
        "{what} hung: killed after {SCRIPT_TIMEOUT:?}:\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    let last = stdout.trim_end().lines().last().unwrap_or_default();
    let checks = last
        .strip_prefix("ok: ")
        .and_then(|rest| rest.strip_suffix(" checks"))
        .and_then(|n| n.parse::<usize>().ok());
    assert!(
        out.status.success() && checks.is_some(),
        "{what} failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    let checks = checks.unwrap_or_default();
    assert_eq!(
        checks, expected,
        "{what}: {checks} checks ran, {expected} expected:\n{stdout}"
    );
}

/// The path of a script under `tests/`.
fn script(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(relative)
}

/// Run `tests/node/<name>` with the client in `sdk` over `transport` (`stdio`: the
/// script starts the server; `http`: a server started here) and require `checks` checks.
fn run_node(sdk: &Path, name: &str, transport: &str, checks: usize) {
    let server = (transport == "http").then(HttpServer::start);
    let target = server.as_ref().map_or(SERVER, |s| s.url.as_str());
    let mut command = Command::new("node");
    command
        .arg(script(&format!("node/{name}")))
        .arg(sdk)
        .arg(transport)
        .arg(target);
    assert_checks(&format!("{name} over {transport}"), run(command), checks);
}

/// Run `tests/python/client.py` on `revision` over `transport` and require `checks`
/// checks.
fn run_python(transport: &str, revision: &str, checks: usize) {
    let python = python();
    let server = (transport == "http").then(HttpServer::start);
    let target = server.as_ref().map_or(SERVER, |s| s.url.as_str());
    let mut command = Command::new(python);
    command
        .arg(script("python/client.py"))
        .args([transport, revision, target]);
    assert_checks(
        &format!("client.py on {revision} over {transport}"),
        run(command),
        checks,
    );
}

#[test]
fn typescript_sdk_1x_on_2025_11_25_over_stdio() {
    run_node(sdk_1x_dir(), "sdk1.mjs", "stdio", 82);
}

#[test]
fn typescript_sdk_1x_on_2025_11_25_over_http() {
    run_node(sdk_1x_dir(), "sdk1.mjs", "http", 82);
}

#[test]
fn typescript_v2_client_on_2026_07_28_over_stdio() {
    run_node(client_v2_dir(), "client_v2.mjs", "stdio", 87);
}

#[test]
fn typescript_v2_client_on_2026_07_28_over_http() {
    run_node(client_v2_dir(), "client_v2.mjs", "http", 87);
}

#[test]
fn python_sdk_on_2025_11_25_over_stdio() {
    run_python("stdio", "2025-11-25", 82);
}

#[test]
fn python_sdk_on_2025_11_25_over_http() {
    run_python("http", "2025-11-25", 82);
}

#[test]
fn python_sdk_on_2026_07_28_over_stdio() {
    run_python("stdio", "2026-07-28", 86);
}

#[test]
fn python_sdk_on_2026_07_28_over_http() {
    run_python("http", "2026-07-28", 86);
}
