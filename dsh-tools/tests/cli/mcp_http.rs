//! `dsh-tools mcp --http` as a process, over raw loopback HTTP: `SIGTERM` with a GET
//! (SSE) stream open exits with 143 within a bounded time, and the HTTP flags are
//! checked.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const DSH_TOOLS: &str = env!("CARGO_BIN_EXE_dsh-tools");

/// Start `dsh-tools mcp --http 127.0.0.1:0 EXTRA…`; the child and the `host:port` it
/// printed.
pub(crate) fn spawn_server(extra: &[&str]) -> (Child, String) {
    let mut child = Command::new(DSH_TOOLS)
        .args(["mcp", "--http", "127.0.0.1:0"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn dsh-tools");
    let stderr = child.stderr.take().expect("piped stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("dsh-tools: serving MCP at http://") {
                let _ = tx.send(url.trim_end_matches("/mcp").to_string());
            }
        }
    });
    let addr = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("dsh-tools prints the URL it serves within 60 s");
    (child, addr)
}

/// Send `request` on a new connection and read the response head (up to the blank
/// line); the connection stays open for the rest.
fn exchange(addr: &str, request: &str) -> (String, TcpStream) {
    let mut stream = TcpStream::connect(addr).expect("connect to the server");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let n = stream
            .read(&mut byte)
            .expect("the response head within 20 s");
        assert!(
            n > 0,
            "connection closed after {:?}",
            String::from_utf8_lossy(&head)
        );
        head.push(byte[0]);
    }
    (String::from_utf8_lossy(&head).into_owned(), stream)
}

fn post(addr: &str, session: Option<&str>, body: &str) -> (String, TcpStream) {
    let session = session.map_or(String::new(), |s| {
        format!("mcp-session-id: {s}\r\nmcp-protocol-version: 2025-06-18\r\n")
    });
    exchange(
        addr,
        &format!(
            "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
             accept: application/json, text/event-stream\r\n{session}content-length: {}\r\n\r\n{body}",
            body.len()
        ),
    )
}

fn header<'h>(head: &'h str, name: &str) -> Option<&'h str> {
    head.lines().find_map(|line| {
        let (n, v) = line.split_once(':')?;
        n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

#[test]
fn sigterm_with_a_get_stream_open_exits_143() {
    let (mut child, addr) = spawn_server(&[]);
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let (head, _init) = post(&addr, None, init);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let session = header(&head, "mcp-session-id")
        .unwrap_or_else(|| panic!("no session id in {head}"))
        .to_string();
    let (head, _note) = post(
        &addr,
        Some(&session),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert!(head.starts_with("HTTP/1.1 202"), "{head}");
    let (head, _stream) = exchange(
        &addr,
        &format!(
            "GET /mcp HTTP/1.1\r\nhost: {addr}\r\naccept: text/event-stream\r\n\
             mcp-session-id: {session}\r\nmcp-protocol-version: 2025-06-18\r\n\r\n"
        ),
    );
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(
        header(&head, "content-type"),
        Some("text/event-stream"),
        "{head}"
    );

    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("run kill(1) to send SIGTERM");
    assert!(status.success(), "kill -TERM failed: {status:?}");
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("dsh-tools mcp --http still running 20 s after SIGTERM with a GET stream open");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(143), "{status:?}");
}

#[test]
fn a_foreign_origin_is_refused_and_allowed_origin_admits_one() {
    let (mut child, addr) = spawn_server(&["--allowed-origin", "https://app.example"]);
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    for (origin, expected) in [
        ("http://evil.example", "HTTP/1.1 403"),
        ("https://app.example", "HTTP/1.1 200"),
        ("http://localhost:8080", "HTTP/1.1 200"),
    ] {
        let (head, _s) = exchange(
            &addr,
            &format!(
                "POST /mcp HTTP/1.1\r\nhost: {addr}\r\norigin: {origin}\r\n\
                 content-type: application/json\r\naccept: application/json, text/event-stream\r\n\
                 content-length: {}\r\n\r\n{init}",
                init.len()
            ),
        );
        assert!(head.starts_with(expected), "{origin}: {head}");
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn http_flags_are_checked() {
    for (args, needle) in [
        (
            &[
                "mcp",
                "--http",
                "127.0.0.1:0",
                "--allowed-origin",
                "evil.example",
            ][..],
            "evil.example",
        ),
        (
            &["mcp", "--allowed-origin", "http://a.example"][..],
            "--http",
        ),
        (&["mcp", "--session-idle-timeout", "5"][..], "--http"),
        (
            &[
                "mcp",
                "--http",
                "127.0.0.1:0",
                "--allow-any-host",
                "--allowed-host",
                "a",
            ][..],
            "--allow-any-host",
        ),
    ] {
        let out = Command::new(DSH_TOOLS)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}
