//! Starting `dsh-tools mcp` for the MCP tests: over stdio (the client talks to the
//! child's pipes) or over Streamable HTTP on a loopback port (the URL it announces).

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncBufReadExt as _;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

pub(crate) const DSH_TOOLS: &str = env!("CARGO_BIN_EXE_dsh-tools");

/// `dsh-tools --root ROOT mcp ARGS…` over stdio: the child and its pipes, for
/// `ServiceExt::serve`.
pub(crate) fn stdio(root: &Path, args: &[&str]) -> (Child, (ChildStdout, ChildStdin)) {
    let mut child = Command::new(DSH_TOOLS)
        .arg("--root")
        .arg(root)
        .arg("mcp")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn dsh-tools mcp");
    let io = (
        child.stdout.take().expect("piped stdout"),
        child.stdin.take().expect("piped stdin"),
    );
    (child, io)
}

/// `dsh-tools --root ROOT mcp --http 127.0.0.1:0 ARGS…`: the child and the URL it
/// serves (the rest of its standard error is passed on).
pub(crate) async fn http(root: &Path, args: &[&str]) -> (Child, String) {
    let mut child = Command::new(DSH_TOOLS)
        .arg("--root")
        .arg(root)
        .args(["mcp", "--http", "127.0.0.1:0"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn dsh-tools mcp --http");
    let stderr = child.stderr.take().expect("piped stderr");
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    let url = tokio::time::timeout(Duration::from_secs(60), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(url) = line.strip_prefix("dsh-tools: serving MCP at ") {
                return url.trim().to_string();
            }
            eprintln!("{line}");
        }
        panic!("dsh-tools mcp --http exited without announcing its URL");
    })
    .await
    .expect("dsh-tools announces its URL within 60 s");
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            eprintln!("{line}");
        }
    });
    (child, url)
}

/// Require a client script's run to have succeeded, printing `ok: N checks` last with
/// at least `min_checks` checks; `what` names the run in the failure.
pub(crate) fn assert_checks(what: &str, out: &std::process::Output, min_checks: usize) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.trim_end().ends_with("checks"),
        "{what} failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    let checks: usize = stdout
        .trim_end()
        .rsplit("ok: ")
        .next()
        .and_then(|s| s.trim_end_matches(" checks").parse().ok())
        .expect("a check count");
    assert!(
        checks >= min_checks,
        "{what}: only {checks} checks ran:\n{stdout}"
    );
}
