//! `dsh-tools mcp --http` as a load balancer sees it: `SIGTERM` drains (readiness fails,
//! new requests get `503`, the call in flight gets its result, then the process exits),
//! `--drain-timeout` bounds the wait, and the guide's curl recipe for a 2026-07-28 task
//! runs as written.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

use crate::mcp_http::spawn_server;

/// Send `request` on a new connection and read all of the answer (the server closes, or
/// `Connection: close`).
fn exchange(addr: &str, request: &str) -> String {
    let mut stream = TcpStream::connect(addr).expect("connect to the server");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut seen = Vec::new();
    let _ = stream.read_to_end(&mut seen);
    String::from_utf8_lossy(&seen).into_owned()
}

fn get(addr: &str, path: &str) -> String {
    exchange(
        addr,
        &format!("GET {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\r\n"),
    )
}

/// A stateless `tools/call` of `bash` running `command` (revision 2025-06-18).
fn call_bash(addr: &str, command: &str) -> String {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "bash", "arguments": {"command": command, "description": "a drain test"}
    }})
    .to_string();
    exchange(
        addr,
        &format!(
            "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
             accept: application/json, text/event-stream\r\nmcp-protocol-version: 2025-06-18\r\n\
             connection: close\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        ),
    )
}

fn sigterm(child: &Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("run kill(1) to send SIGTERM");
    assert!(status.success(), "kill -TERM failed: {status:?}");
}

fn wait_exit(child: &mut Child, limit: Duration) -> ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("dsh-tools mcp --http still running {limit:?} after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Wait until a marker file the call writes exists: the call is running.
fn wait_for(path: &std::path::Path) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !path.exists() {
        assert!(Instant::now() < deadline, "the call never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn sigterm_drains_the_call_in_flight_refuses_new_requests_then_exits() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("started");
    let (mut child, addr) = spawn_server(&["--stateless"]);
    assert!(get(&addr, "/readyz").starts_with("HTTP/1.1 200"));

    let command = format!("touch {}; sleep 2; echo drained-ok", marker.display());
    let call = {
        let addr = addr.clone();
        std::thread::spawn(move || call_bash(&addr, &command))
    };
    wait_for(&marker);
    sigterm(&child);

    // Draining: not ready, alive, and a new call is refused with 503.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let ready = get(&addr, "/readyz");
        if ready.starts_with("HTTP/1.1 503") {
            assert!(ready.ends_with("draining\n"), "{ready}");
            break;
        }
        assert!(Instant::now() < deadline, "readiness never failed: {ready}");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(get(&addr, "/healthz").starts_with("HTTP/1.1 200"));
    let refused = call_bash(&addr, "echo too-late");
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    assert!(
        refused.to_ascii_lowercase().contains("retry-after: 1"),
        "{refused}"
    );
    assert!(!refused.contains("too-late"), "{refused}");

    // The call in flight gets its result; then the process exits as a signal stops it.
    let answer = call.join().unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("drained-ok"), "{answer}");
    let status = wait_exit(&mut child, Duration::from_secs(20));
    assert_eq!(status.code(), Some(143), "{status:?}");
}

#[test]
fn a_call_longer_than_the_drain_timeout_is_stopped_and_the_process_exits() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("started");
    let (mut child, addr) = spawn_server(&["--stateless", "--drain-timeout", "1"]);
    let command = format!("touch {}; sleep 120; echo never", marker.display());
    let call = {
        let addr = addr.clone();
        std::thread::spawn(move || call_bash(&addr, &command))
    };
    wait_for(&marker);
    let started = Instant::now();
    sigterm(&child);
    // One second of drain, then the server's own bounded shutdown.
    let status = wait_exit(&mut child, Duration::from_secs(15));
    assert_eq!(status.code(), Some(143), "{status:?}");
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "exited before the drain's bound: {:?}",
        started.elapsed()
    );
    let answer = call.join().unwrap();
    assert!(
        !answer.contains("never"),
        "the long call ran to its end: {answer}"
    );
}

#[test]
fn the_readme_curl_recipe_gets_a_task_and_its_result() {
    let readme = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../guide/chapters/mcp_instances.md"
    ))
    .expect("guide/chapters/mcp_instances.md");
    let marker = "<!-- test: curl 2026-07-28 -->";
    let block = readme
        .split_once(marker)
        .and_then(|(_, rest)| rest.split_once("```sh\n"))
        .and_then(|(_, rest)| rest.split_once("\n```"))
        .map(|(block, _)| block.to_string())
        .unwrap_or_else(|| panic!("the guide has no sh block after {marker}"));
    let (mut child, addr) = spawn_server(&["--stateless"]);
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new("bash")
        .arg("-c")
        .arg(&block)
        .env("URL", format!("http://{addr}/mcp"))
        .current_dir(dir.path())
        .output()
        .expect("run the guide's curl recipe with bash (curl must be on PATH)");
    let _ = child.kill();
    let _ = child.wait();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // The call's answer (teed to stderr): a task.
    assert!(stderr.contains(r#""resultType":"task""#), "{stderr}");
    let task = std::fs::read_to_string(dir.path().join("task.id")).unwrap();
    assert!(task.trim().starts_with("task-"), "{task:?}");
    // tasks/get: that task, completed, with the command's output.
    assert!(stdout.contains(task.trim()), "{stdout}");
    assert!(stdout.contains(r#""status":"completed""#), "{stdout}");
    assert!(stdout.contains("done on "), "{stdout}");
}
