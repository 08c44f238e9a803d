//! The files of `dsh-tools mcp`'s options (`--state-key-file`, `--oauth-jwks FILE`) as
//! real processes run from a working directory other than `--root`: a relative path is
//! relative to the working directory and errors name its absolute path; a file inside
//! the root (also through `..` or a symbolic link, or a root given through one) stops
//! the server at start with a message saying why; and `--oauth-leeway` sets the clock
//! skew a token's `exp` is given (tokens signed here with `openssl` and the key of
//! dsh-mcp's OAuth test fixtures).

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const DSH_TOOLS: &str = env!("CARGO_BIN_EXE_dsh-tools");

/// A keyring of two well-formed keys.
fn good_keys() -> String {
    format!("{}\n{}\n", "ab".repeat(32), "cd".repeat(40))
}

/// `dsh-tools --root ROOT mcp ARGS…` run from `cwd` over stdio (its input empty, so a
/// server that starts ends at once): its output.
fn mcp_in(cwd: &Path, root: &str, args: &[&str]) -> Output {
    Command::new(DSH_TOOLS)
        .current_dir(cwd)
        .args(["--root", root, "mcp"])
        .args(args)
        .env_remove("DSH_MCP_STATE_KEYS")
        .env_remove("DSH_MCP_STORE")
        .stdin(Stdio::null())
        .output()
        .expect("run dsh-tools mcp")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `dsh-tools --root ROOT mcp --http 127.0.0.1:0 ARGS…` run from `cwd`: the child and
/// the `host:port` it serves at, or its standard error when it exits without serving.
fn serve_in(cwd: &Path, root: &str, args: &[&str]) -> Result<(Server, String), String> {
    let mut child = Command::new(DSH_TOOLS)
        .current_dir(cwd)
        .args(["--root", root, "mcp", "--http", "127.0.0.1:0"])
        .args(args)
        .env_remove("DSH_MCP_STATE_KEYS")
        .env_remove("DSH_MCP_STORE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn dsh-tools mcp --http");
    let stderr = child.stderr.take().expect("piped stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut seen = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("dsh-tools: serving MCP at http://") {
                let _ = tx.send(Ok(url.trim_end_matches("/mcp").to_string()));
            }
            seen.push_str(&line);
            seen.push('\n');
        }
        let _ = tx.send(Err(seen));
    });
    let server = Server(child);
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(Ok(addr)) => Ok((server, addr)),
        Ok(Err(stderr)) => Err(stderr),
        Err(e) => panic!("dsh-tools mcp --http neither served nor exited within 60 s: {e}"),
    }
}

/// A server process, killed when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A working directory with a root `work/` (holding `sub/`) beside it.
fn layout() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("work/sub")).unwrap();
    // As the server resolves it: the working directory it is run in, canonical.
    let cwd = dir.path().canonicalize().unwrap();
    (dir, cwd)
}

#[test]
fn a_relative_state_key_file_is_relative_to_the_working_directory() {
    let (_dir, cwd) = layout();
    std::fs::write(cwd.join("state.keys"), good_keys()).unwrap();
    std::fs::write(cwd.join("short.keys"), "# too short\n00112233\n").unwrap();

    // The keyring beside the root, not in it, is the one read: the server starts.
    let served = serve_in(
        &cwd,
        "work",
        &["--stateless", "--state-key-file", "state.keys"],
    );
    let (server, _) = served.unwrap_or_else(|stderr| panic!("it did not start:\n{stderr}"));
    drop(server);
    // Errors name the file's absolute path.
    let out = mcp_in(&cwd, "work", &["--state-key-file", "./short.keys"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "error: --state-key-file {}: state key 1: 4 bytes, at least 32 needed",
            cwd.join("short.keys").display()
        )),
        "{}",
        stderr(&out)
    );
    let out = mcp_in(
        &cwd.join("work/sub"),
        "..",
        &["--state-key-file", "gone.keys"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "error: --state-key-file {}: ",
            cwd.join("work/sub/gone.keys").display()
        )),
        "{}",
        stderr(&out)
    );
}

#[cfg(unix)]
#[test]
fn a_keyring_inside_the_root_is_refused_however_it_is_named() {
    let (_dir, cwd) = layout();
    let root = cwd.join("work");
    std::fs::write(root.join("state.keys"), good_keys()).unwrap();
    std::fs::create_dir(cwd.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(root.join("state.keys"), cwd.join("link.keys")).unwrap();
    std::os::unix::fs::symlink(&root, cwd.join("root-link")).unwrap();

    let refusal = |given: &Path, resolves: bool| {
        format!(
            "error: --state-key-file {}: the keyring that seals approval states lies inside \
             the root {} that the file tools serve{}, so any client allowed to `read` could \
             read its keys and forge approval states; keep the keyring outside the root, \
             readable only by the server's user, or pass the keys in DSH_MCP_STATE_KEYS",
            given.display(),
            root.display(),
            if resolves {
                format!(" (it resolves to {})", root.join("state.keys").display())
            } else {
                String::new()
            }
        )
    };
    // (working directory, --root, --state-key-file, the path the message names, whether
    // it names where that resolves to)
    let cases: [(PathBuf, &str, &str, PathBuf, bool); 4] = [
        (
            cwd.clone(),
            "work",
            "work/state.keys",
            root.join("state.keys"),
            false,
        ),
        (
            cwd.join("elsewhere"),
            "../work",
            "../work/sub/../state.keys",
            cwd.join("elsewhere/../work/sub/../state.keys"),
            true,
        ),
        (
            cwd.clone(),
            "work",
            "link.keys",
            cwd.join("link.keys"),
            true,
        ),
        (
            cwd.clone(),
            "root-link",
            "root-link/state.keys",
            cwd.join("root-link/state.keys"),
            true,
        ),
    ];
    for (dir, root_arg, key_file, named, resolves) in cases {
        let out = mcp_in(&dir, root_arg, &["--state-key-file", key_file]);
        assert_eq!(out.status.code(), Some(1), "{key_file}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(&refusal(&named, resolves)),
            "{key_file}:\n{}",
            stderr(&out)
        );
    }
    // Not even over HTTP does it start.
    let refused = serve_in(
        &cwd,
        "work",
        &["--stateless", "--state-key-file", "link.keys"],
    );
    let Err(said) = refused else {
        panic!("a server started with its keyring inside the root")
    };
    assert!(
        said.contains(&refusal(&cwd.join("link.keys"), true)),
        "{said}"
    );
    // The same keyring moved beside the root serves.
    std::fs::rename(root.join("state.keys"), cwd.join("state.keys")).unwrap();
    let out = mcp_in(&cwd, "work", &["--state-key-file", "state.keys"]);
    assert!(
        !stderr(&out).contains("--state-key-file"),
        "{}",
        stderr(&out)
    );
}

fn b64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

/// The OAuth fixtures of dsh-mcp: the issuer's RSA key (`k1`) and its JWKS.
fn oauth_fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../dsh-mcp/tests/fixtures/oauth")
        .join(name)
}

/// An RS256 access token of `issuer` for `audience`, signed with the fixtures' `k1`
/// (by `openssl`), its `exp` this many seconds ago.
fn expired_token(issuer: &str, audience: &str, expired_secs_ago: u64) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let header = b64url(br#"{"alg":"RS256","typ":"at+jwt","kid":"k1"}"#);
    let claims = format!(
        r#"{{"iss":"{issuer}","aud":"{audience}","sub":"alice","client_id":"cli","iat":{},"exp":{}}}"#,
        now - 600,
        now - expired_secs_ago
    );
    let input = format!("{header}.{}", b64url(claims.as_bytes()));
    let mut openssl = Command::new("openssl")
        .args(["dgst", "-sha256", "-sign"])
        .arg(oauth_fixture("issuer.pem"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run openssl (needed to sign the test's tokens)");
    openssl
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(input.as_bytes())
        .unwrap();
    let out = openssl.wait_with_output().unwrap();
    assert!(out.status.success(), "openssl: {}", stderr(&out));
    format!("{input}.{}", b64url(&out.stdout))
}

/// `initialize` posted to `addr` with this bearer token: the response head.
fn initialize(addr: &str, token: &str) -> String {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let mut stream = TcpStream::connect(addr).expect("connect to the server");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\nauthorization: Bearer {token}\r\n\
         content-length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let n = stream
            .read(&mut byte)
            .expect("the response head within 20 s");
        assert!(n > 0, "closed after {:?}", String::from_utf8_lossy(&head));
        head.push(byte[0]);
    }
    String::from_utf8_lossy(&head).into_owned()
}

#[test]
fn a_relative_jwks_file_is_relative_to_the_working_directory_and_leeway_is_a_flag() {
    const ISSUER: &str = "https://issuer.test";
    let (_dir, cwd) = layout();
    std::fs::copy(oauth_fixture("jwks.json"), cwd.join("jwks.json")).unwrap();
    let oauth = |leeway: &'static str| {
        [
            "--oauth-issuer",
            ISSUER,
            "--oauth-jwks",
            "jwks.json",
            "--oauth-leeway",
            leeway,
        ]
    };
    // Without leeway, a token expired 10 s ago is refused (the default 30 s takes it)…
    let (server, addr) = serve_in(&cwd, "work", &oauth("0"))
        .unwrap_or_else(|stderr| panic!("it did not start:\n{stderr}"));
    let audience = format!("http://{addr}/mcp");
    let head = initialize(&addr, &expired_token(ISSUER, &audience, 10));
    assert!(head.starts_with("HTTP/1.1 401"), "{head}");
    assert!(head.contains("the token has expired"), "{head}");
    drop(server);
    // …and with 60 s one expired 45 s ago is taken (the default refuses it).
    let (server, addr) = serve_in(&cwd, "work", &oauth("60"))
        .unwrap_or_else(|stderr| panic!("it did not start:\n{stderr}"));
    let audience = format!("http://{addr}/mcp");
    let head = initialize(&addr, &expired_token(ISSUER, &audience, 45));
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    drop(server);

    // A JWKS file inside the root is refused; one missing is named by its absolute path.
    std::fs::copy(oauth_fixture("jwks.json"), cwd.join("work/sub/jwks.json")).unwrap();
    let inside = cwd.join("work/sub/jwks.json");
    let args = |jwks: &'static str| ["--oauth-issuer", ISSUER, "--oauth-jwks", jwks];
    let Err(stderr) = serve_in(&cwd, "work", &args("work/sub/jwks.json")) else {
        panic!("a server started with its JWKS file inside the root")
    };
    assert!(
        stderr.contains(&format!(
            "error: --oauth-jwks {}: the JWKS file (the issuer's keys) lies inside the root \
             {} that the file tools serve, so any client allowed to `write` or `edit` could \
             add a key of its own and sign tokens this server accepts",
            inside.display(),
            cwd.join("work").display()
        )),
        "{stderr}"
    );
    let Err(stderr) = serve_in(&cwd.join("work/sub"), "..", &args("gone.json")) else {
        panic!("a server started without its JWKS file")
    };
    assert!(
        stderr.contains(&format!(
            "cannot read the JWKS file {}",
            cwd.join("work/sub/gone.json").display()
        )),
        "{stderr}"
    );
}
