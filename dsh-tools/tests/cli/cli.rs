//! The `dsh-tools` binary end to end: list, call (success, invalid arguments, guard
//! denials, tool failures, arguments from stdin, content only, suggestions), session,
//! signals, docs, call logs and replay, exit codes and streams.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Output, Stdio};
use std::time::{Duration, Instant};

use dsh_runtime::json::{self, Value};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
}

/// Run `dsh-tools --root <root> <args>` from `cwd`.
fn run_in(cwd: &Path, root: Option<&Path>, args: &[&str]) -> Output {
    let mut cmd = bin();
    cmd.current_dir(cwd);
    if let Some(root) = root {
        cmd.arg("--root").arg(root);
    }
    cmd.args(args).output().expect("dsh-tools runs")
}

fn run(root: &Path, args: &[&str]) -> Output {
    run_in(root, Some(root), args)
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("UTF-8 stdout")
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("UTF-8 stderr")
}

fn parse(text: &str) -> Value {
    json::parse(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// A root with `notes.txt` (three lines) and `src/lib.rs`.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "alpha\nbeta\ngamma\n").unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(
        dir.path().join("src/lib.rs"),
        "// TODO: docs\npub fn f() {}\n",
    )
    .unwrap();
    dir
}

#[test]
fn the_readme_command_runs_on_the_repository() {
    // Exactly the README's first command, minus `cargo run`: from the repository root,
    // with the default root.
    let o = run_in(
        &repo_root(),
        None,
        &["call", "read", r#"{"file_path":"README.md","limit":5}"#],
    );
    assert!(o.status.success(), "stderr: {}", stderr(&o));
    let out = stdout(&o);
    let readme = repo_root().canonicalize().unwrap().join("README.md");
    assert!(
        out.starts_with(&format!(
            "<path>{}</path>\n<type>file</type>\n<content>\n1: # dsh-rs\n",
            readme.display()
        )),
        "{out}"
    );
    assert!(out.contains("\n\n(Showing lines 1-5 of "), "{out}");
    let card = out
        .split_once("--- result card ---\n")
        .map(|(_, card)| parse(card.trim()))
        .expect("a result card");
    assert_eq!(card["card"].as_str(), Some("read"));
    assert_eq!(card["path"].as_str(), readme.to_str());
    assert_eq!(card["lang"].as_str(), Some("md"));
    assert_eq!(card["lines"].as_array().map(|l| l.len()), Some(5));
    assert_eq!(stderr(&o), "");
}

#[test]
fn list_shows_what_a_model_sees() {
    let dir = project();
    let o = run(dir.path(), &["list", "--json"]);
    assert!(o.status.success());
    let schemas = parse(&stdout(&o));
    let names: Vec<&str> = schemas
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    for name in ["read", "write", "edit", "grep", "glob"] {
        assert!(names.contains(&name), "{name} not in {names:?}");
    }
    let read = &schemas[0];
    assert_eq!(
        read["description"].as_str().map(|d| d.lines().next()),
        Some(Some("Read a UTF-8 text file as numbered lines."))
    );
    assert_eq!(read["parameters"]["required"], parse(r#"["file_path"]"#));
    assert_eq!(
        read["parameters"]["properties"]["limit"]["maximum"].as_u64(),
        Some(2000)
    );

    let o = run(dir.path(), &["list"]);
    assert!(o.status.success());
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    // Name and summary, then the parameters with their types (`*`: required), aligned
    // under the summary; a legend ends the list.
    let (name, summary) = lines[0].split_at(lines[0].find("Read").expect("summary"));
    assert_eq!(name.trim_end(), "read");
    assert_eq!(summary, "Read a UTF-8 text file as numbered lines.");
    let pad = " ".repeat(name.len());
    assert_eq!(
        lines[1],
        format!("{pad}(file_path*: string, offset: integer, limit: integer)")
    );
    let bash = lines
        .iter()
        .position(|line| line.starts_with("bash "))
        .expect("bash is listed");
    assert_eq!(
        lines[bash + 1],
        format!(
            "{pad}(command*: string, description*: string, timeoutMs: number, workdir: string, run_in_background: boolean)"
        )
    );
    assert_eq!(lines.len(), 2 * names.len() + 1);
    assert_eq!(lines.last(), Some(&"(* required)"));
}

#[test]
fn call_prints_content_then_the_result_card() {
    let dir = project();
    let o = run(
        dir.path(),
        &["call", "read", r#"{"file_path":"notes.txt","offset":2}"#],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let notes = dir.path().canonicalize().unwrap().join("notes.txt");
    assert_eq!(
        stdout(&o),
        [
            &format!("<path>{}</path>\n", notes.display()),
            "<type>file</type>\n<content>\n2: beta\n3: gamma\n\n(End of file - total 3 lines)\n</content>\n",
            "\n--- result card ---\n",
            "{\n",
            "  \"card\": \"read\",\n",
            &format!("  \"path\": \"{}\",\n", notes.display()),
            "  \"offset\": 2,\n",
            "  \"lines\": [\n",
            "    {\n      \"number\": 2,\n      \"text\": \"beta\"\n    },\n",
            "    {\n      \"number\": 3,\n      \"text\": \"gamma\"\n    }\n",
            "  ],\n",
            "  \"totalLines\": 3,\n",
            "  \"content\": [\n    {\n      \"type\": \"text\",\n",
            "      \"text\": \"2: beta\\n3: gamma\\n\\n(End of file - total 3 lines)\"\n    }\n  ]\n",
            "}\n"
        ]
        .concat()
    );
    assert_eq!(stderr(&o), "");

    // Search tools default to the root.
    let o = run(dir.path(), &["call", "grep", r#"{"pattern":"TODO"}"#]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("Found 1 match\n\nsrc/lib.rs\nLine 1: // TODO: docs\n"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn call_json_prints_the_whole_result() {
    let dir = project();
    let o = run(
        dir.path(),
        &[
            "call",
            "write",
            r#"{"file_path":"new.txt","content":"x\n"}"#,
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = parse(&stdout(&o));
    assert_eq!(doc["call"]["name"].as_str(), Some("write"));
    assert_eq!(
        doc["call"]["arguments"],
        parse(r#"{"file_path":"new.txt","content":"x\n"}"#)
    );
    let new = dir.path().canonicalize().unwrap().join("new.txt");
    assert_eq!(doc["result"]["value"]["path"].as_str(), new.to_str());
    assert_eq!(doc["result"]["value"]["operation"].as_str(), Some("create"));
    assert_eq!(doc["result"]["isError"], parse("false"));
    assert_eq!(doc["result"]["meta"], parse(r#"{"diffs":[]}"#));
    assert_eq!(doc["callCard"]["card"].as_str(), Some("diff"));
    assert_eq!(
        doc["resultCard"],
        parse(r#"{"card":"diff","diffs":[{"path":"new.txt","oldText":null,"newText":"x\n"}]}"#)
    );
    // The file was written under the root.
    assert_eq!(
        std::fs::read_to_string(dir.path().join("new.txt")).unwrap(),
        "x\n"
    );
}

#[test]
fn invalid_arguments_exit_2_with_the_violations() {
    let dir = project();
    let o = run(
        dir.path(),
        &["call", "read", r#"{"file_path":"","offset":0}"#],
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stdout(&o), "");
    assert_eq!(
        stderr(&o),
        "error[INVALID_ARGS]: invalid arguments: \"file_path\" must be at least 1 characters long; \"offset\" must be at least 1\n"
    );

    let o = run(dir.path(), &["call", "frobnicate", "{}"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "error[UNKNOWN_TOOL]: unknown tool \"frobnicate\"; available tools: \"read\", \"write\", \"edit\", \"grep\", \"glob\", \"bash\", \"job_output\", \"job_list\", \"job_kill\"\n"
    );

    let o = run(dir.path(), &["call", "read", "{not json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("error: ARGS is not valid JSON: "),
        "{}",
        stderr(&o)
    );

    // Usage errors are clap's, also 2.
    let o = run(dir.path(), &["call"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn tool_failures_exit_1() {
    let dir = project();
    let o = run(
        dir.path(),
        &["call", "read", r#"{"file_path":"absent.txt"}"#],
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o), "");
    let absent = dir.path().canonicalize().unwrap().join("absent.txt");
    assert_eq!(
        stderr(&o),
        format!(
            "error[FS_NOT_FOUND]: cannot read \"{}\": not found\n",
            absent.display()
        )
    );
}

#[test]
fn the_root_guard_denies_paths_outside() {
    let outer = tempfile::tempdir().unwrap();
    let root = outer.path().canonicalize().unwrap().join("root");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(outer.path().join("secret.txt"), "s\n").unwrap();

    let o = run(&root, &["call", "read", r#"{"file_path":"../secret.txt"}"#]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "error[GUARD_DENIED]: path \"../secret.txt\" leads outside the root {}\n",
            root.display()
        )
    );

    // `--root` from elsewhere: relative paths are relative to the root.
    let o = run_in(
        outer.path(),
        Some(&root),
        &[
            "call",
            "write",
            r#"{"file_path":"in-root.txt","content":"x"}"#,
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(root.join("in-root.txt").exists());
    assert!(!outer.path().join("in-root.txt").exists());

    let o = run(
        &root,
        &[
            "call",
            "glob",
            &format!(r#"{{"pattern":"*","path":{:?}}}"#, outer.path()),
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("leads outside the root"),
        "{}",
        stderr(&o)
    );

    let o = run_in(outer.path(), Some(&outer.path().join("missing")), &["list"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("error: cannot use root "),
        "{}",
        stderr(&o)
    );
}

#[test]
fn docs_match_the_checked_in_catalog() {
    let dir = project();
    let o = run(dir.path(), &["docs"]);
    assert!(o.status.success());
    let checked_in =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("TOOLS.md")).unwrap();
    assert_eq!(stdout(&o), checked_in);

    // `--out` is relative to where the command runs, not to the root.
    let here = tempfile::tempdir().unwrap();
    let o = run_in(
        here.path(),
        Some(dir.path()),
        &["docs", "--out", "CATALOG.md"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    assert_eq!(
        std::fs::read_to_string(here.path().join("CATALOG.md")).unwrap(),
        checked_in
    );
}

fn fixture_log() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/replay.jsonl")
}

#[test]
fn replay_the_fixture_log() {
    let dir = project();
    let log = fixture_log();
    let o = run(dir.path(), &["replay", log.to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    let rows: Vec<Value> = stdout(&o).lines().map(parse).collect();
    let by_id = |id: &str| -> &Value {
        rows.iter()
            .find(|r| r["id"].as_str() == Some(id))
            .unwrap_or_else(|| panic!("no row for {id}"))
    };
    assert_eq!(rows.len(), 8);

    // Current arguments: the tool's own cards, rebuilt from the logged meta.
    let read = by_id("call_1");
    assert_eq!(read["line"].as_u64(), Some(1));
    assert_eq!(
        read["callCard"],
        parse(
            r#"{"card":"generic","title":"Read src/lib.rs (1 - 2)","kind":"read","locations":[{"path":"src/lib.rs","line":1}]}"#
        )
    );
    assert_eq!(read["resultCard"]["card"].as_str(), Some("read"));
    assert_eq!(read["resultCard"]["totalLines"].as_u64(), Some(9));

    // Stale arguments (old parameter names): generic cards, no crash.
    let stale = by_id("call_2");
    assert_eq!(
        stale["callCard"],
        parse(r#"{"card":"generic","title":"read","rawInput":{"path":"README.md","lines":5}}"#)
    );
    assert_eq!(
        stale["resultCard"],
        parse(r##"{"card":"generic","content":[{"type":"text","text":"# dsh-rs"}]}"##)
    );

    // Arguments logged as a JSON string; a blank line before it is skipped.
    let write = by_id("call_3");
    assert_eq!(write["line"].as_u64(), Some(4));
    assert_eq!(write["callCard"]["card"].as_str(), Some("diff"));
    assert_eq!(
        write["resultCard"],
        parse(
            r#"{"card":"diff","diffs":[{"path":"notes.txt","oldText":null,"newText":"one\ntwo\n"}]}"#
        )
    );

    // A call without a result has no result card.
    let edit = by_id("call_4");
    assert_eq!(edit["callCard"]["card"].as_str(), Some("diff"));
    assert!(edit.get("resultCard").is_none());

    assert_eq!(
        by_id("call_5")["resultCard"]["shape"].as_str(),
        Some("matches")
    );
    // Unknown tool, failed call, and meta of an older shape: generic cards.
    assert_eq!(
        by_id("call_6")["callCard"],
        parse(
            r#"{"card":"generic","title":"web_fetch","rawInput":{"url":"https://example.invalid"}}"#
        )
    );
    assert_eq!(
        by_id("call_7")["resultCard"]["card"].as_str(),
        Some("generic")
    );
    assert_eq!(
        by_id("call_8")["resultCard"],
        parse(r#"{"card":"generic","content":[{"type":"text","text":"README.md"}]}"#)
    );

    // The human form says the same.
    let o = run(dir.path(), &["replay", log.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let text = stdout(&o);
    assert!(
        text.starts_with(
            "[line 1] read (call_1)\n  call:   {\"card\":\"generic\",\"title\":\"Read src/lib.rs (1 - 2)\""
        ),
        "{text}"
    );
    assert!(text.contains("[line 5] edit (call_4)\n"), "{text}");
    assert!(text.contains("  result: (not logged)\n"), "{text}");
}

#[test]
fn replay_reports_malformed_lines_and_goes_on() {
    let dir = project();
    let log = dir.path().join("bad.jsonl");
    std::fs::write(
        &log,
        concat!(
            "{\"call\":{\"id\":\"a\",\"name\":\"read\",\"arguments\":{\"file_path\":\"x\"}}}\n",
            "this is not json\n",
            "{\"result\":{\"content\":[],\"isError\":false}}\n",
            "{\"call\":{\"id\":\"b\",\"name\":\"glob\",\"arguments\":{\"pattern\":\"*\"}}}\n",
        ),
    )
    .unwrap();
    let o = run(dir.path(), &["replay", "bad.jsonl"]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(out.contains("[line 1] read (a)"), "{out}");
    assert!(out.contains("[line 4] glob (b)"), "{out}");
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(lines[0].contains("bad.jsonl:2: "), "{err}");
    assert!(
        lines[1].contains("bad.jsonl:3: not a log record: "),
        "{err}"
    );
    assert!(lines[1].contains("call"), "{err}");

    let o = run(dir.path(), &["replay", "missing.jsonl"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).starts_with("error: cannot read "),
        "{}",
        stderr(&o)
    );
}

#[test]
fn calls_logged_with_log_replay_to_the_same_cards() {
    let dir = project();
    let log = dir.path().join("session.jsonl");
    let log_arg = log.to_str().unwrap();
    let calls = [
        ("read", r#"{"file_path":"notes.txt","limit":1}"#),
        (
            "edit",
            r#"{"file_path":"notes.txt","old_string":"beta","new_string":"BETA"}"#,
        ),
        ("glob", r#"{"pattern":"**/*.rs"}"#),
        ("read", r#"{"file_path":"absent.txt"}"#),
    ];
    let mut live_cards = Vec::new();
    for (name, args) in calls {
        let o = run(
            dir.path(),
            &["call", name, args, "--json", "--log", log_arg],
        );
        live_cards.push(parse(&stdout(&o))["resultCard"].clone());
    }
    let logged = std::fs::read_to_string(&log).unwrap();
    assert_eq!(logged.lines().count(), 4);
    // The log keeps meta but never the value.
    assert!(!logged.contains("\"value\""), "{logged}");
    assert!(logged.contains("\"meta\":{\"diffs\""), "{logged}");

    let o = run(dir.path(), &["replay", log_arg, "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let replayed: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| parse(l)["resultCard"].clone())
        .collect();
    assert_eq!(replayed, live_cards);
    assert_eq!(replayed[0]["card"].as_str(), Some("read"));
    assert_eq!(replayed[1]["card"].as_str(), Some("diff"));
    assert_eq!(replayed[2]["shape"].as_str(), Some("paths"));
    assert_eq!(replayed[3]["card"].as_str(), Some("generic"));
}

// ---- call -, --content-only, did you mean -----------------------------------------------

/// `dsh-tools --root <root> <args>` with `input` on stdin.
fn run_with_input(root: &Path, args: &[&str], input: &str) -> Output {
    let mut child = bin()
        .current_dir(root)
        .arg("--root")
        .arg(root)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("dsh-tools runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn call_dash_reads_the_arguments_from_stdin() {
    let dir = project();
    let o = run_with_input(
        dir.path(),
        &["call", "bash", "-", "--json"],
        r#"{"command": "echo from-stdin", "description": "Echo"}"#,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = parse(&stdout(&o));
    assert_eq!(
        doc["result"]["value"]["stdout"]["text"].as_str(),
        Some("from-stdin\n")
    );
    assert_eq!(
        doc["call"]["arguments"]["description"].as_str(),
        Some("Echo")
    );

    let o = run_with_input(dir.path(), &["call", "bash", "-"], "{not json");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).starts_with("error: ARGS is not valid JSON: "));
}

#[test]
fn content_only_prints_what_the_model_sees() {
    let dir = project();
    let o = run(
        dir.path(),
        &[
            "call",
            "bash",
            r#"{"command":"echo out; echo err >&2; exit 3","description":"Both"}"#,
            "--content-only",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "out\n[stderr]\nerr\n[exit code: 3]\n");
    assert_eq!(stderr(&o), "");

    // Failures too: the model sees the error text.
    let o = run(
        dir.path(),
        &[
            "call",
            "bash",
            r#"{"command":" ","description":"Blank"}"#,
            "--content-only",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stdout(&o),
        "Error: invalid command: expected a non-empty string\n"
    );

    let o = run(
        dir.path(),
        &["call", "job_list", "--content-only", "--json"],
    );
    assert_eq!(o.status.code(), Some(2), "the two outputs conflict");
}

#[test]
fn an_unknown_tool_gets_a_suggestion() {
    let dir = project();
    let o = run(dir.path(), &["call", "job_lst", "{}"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "error[UNKNOWN_TOOL]: unknown tool \"job_lst\"; did you mean \"job_list\"?; available tools: \"read\", \"write\", \"edit\", \"grep\", \"glob\", \"bash\", \"job_output\", \"job_list\", \"job_kill\"\n"
    );
    let o = run(dir.path(), &["call", "bsah", "{}"]);
    assert!(
        stderr(&o).contains("did you mean \"bash\"?"),
        "{}",
        stderr(&o)
    );
}

// ---- session ------------------------------------------------------------------------------

/// A running `dsh-tools session`.
struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Session {
    fn start(root: &Path) -> Session {
        let mut child = bin()
            .current_dir(root)
            .arg("--root")
            .arg(root)
            .arg("session")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("dsh-tools session runs");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Session {
            child,
            stdin,
            stdout,
        }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("input open");
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends raw bytes, then a newline.
    fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("input open");
        stdin.write_all(bytes).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn recv(&mut self) -> Value {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        assert!(line.ends_with('\n'), "the session ended: {line:?}");
        parse(&line)
    }

    fn call(&mut self, line: &str) -> Value {
        self.send(line);
        self.recv()
    }

    /// Closes the input and waits for the exit status.
    fn finish(mut self) -> (Option<i32>, String) {
        drop(self.stdin.take());
        let mut rest = String::new();
        self.stdout.read_to_string(&mut rest).unwrap();
        assert_eq!(rest, "", "output after the last call");
        let mut stderr = String::new();
        if let Some(mut pipe) = self.child.stderr.take() {
            pipe.read_to_string(&mut stderr).unwrap();
        }
        let status = self.child.wait().unwrap();
        (status.code(), stderr)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_session_runs_a_background_job_and_reads_it_in_a_later_line() {
    let dir = project();
    let mut session = Session::start(dir.path());
    let started = session.call(
        r#"{"id":"c1","name":"bash","arguments":{"command":"echo early; sleep 0.2; echo late >&2; exit 5","description":"Background","run_in_background":true}}"#,
    );
    assert_eq!(started["id"].as_str(), Some("c1"));
    assert_eq!(started["name"].as_str(), Some("bash"));
    assert_eq!(
        started["result"]["value"].to_string(),
        r#"{"kind":"background","jobId":"bash-1"}"#
    );
    assert_eq!(started["callCard"]["card"].as_str(), Some("generic"));
    assert_eq!(started["resultCard"]["card"].as_str(), Some("generic"));

    // The job outlived the call that started it; a later line reads it.
    let out = session.call(
        r#"{"id":"c2","name":"job_output","arguments":{"job_id":"bash-1","wait":true,"timeout_ms":20000}}"#,
    );
    assert_eq!(
        out["result"]["content"][0]["text"].as_str(),
        Some("early\n[stderr]\nlate\n[status: completed, exit code: 5]")
    );
    // No id: one is made from the line number; arguments may be JSON text.
    let list = session.call(r#"{"name":"job_list","arguments":"{}"}"#);
    assert_eq!(list["id"].as_str(), Some("call_3"));
    assert_eq!(
        list["result"]["content"][0]["text"].as_str(),
        Some("bash-1 [bash] completed \u{2014} echo early; sleep 0.2; echo late >&2; exit 5")
    );
    let (code, stderr) = session.finish();
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn a_one_shot_background_call_says_its_job_stops_at_exit() {
    let dir = project();
    let o = run(
        dir.path(),
        &[
            "call",
            "bash",
            r#"{"command":"echo $$ > job.pid; exec sleep 300","description":"Sleep","run_in_background":true}"#,
            "--content-only",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "started background job bash-1\n");
    assert!(
        stderr(&o).starts_with("note: 1 background job(s) stop when dsh-tools exits"),
        "{}",
        stderr(&o)
    );
    // The job was stopped (or never got to run) before the host exited.
    if let Ok(pid) = std::fs::read_to_string(dir.path().join("job.pid")) {
        assert!(process_gone(pid.trim()), "{pid} outlived the call");
    }
}

#[test]
fn a_session_sends_text_arguments_verbatim_and_reports_bad_lines() {
    let dir = project();
    let mut session = Session::start(dir.path());
    // Text arguments reach the pipeline as they are: a duplicate key is refused there.
    let dup = session.call(
        r#"{"id":"d","name":"bash","arguments":"{\"command\":\"echo a\",\"command\":\"echo b\",\"description\":\"x\"}"}"#,
    );
    assert_eq!(dup["result"]["isError"].as_bool(), Some(true));
    assert!(
        dup["result"]["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("duplicate key \"command\"")),
        "{dup}"
    );
    let bad = session.call("[1, 2]");
    assert_eq!(bad["line"].as_u64(), Some(2));
    assert!(
        bad["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("expected an object"))
    );
    let unknown = session.call(r#"{"name":"job_outptu","arguments":{}}"#);
    assert_eq!(
        unknown["result"]["error"]["info"]["code"].as_str(),
        Some("UNKNOWN_TOOL")
    );
    assert_eq!(unknown["didYouMean"].as_str(), Some("job_output"));
    // Blank lines are skipped.
    session.send("");
    let (code, _) = session.finish();
    assert_eq!(code, Some(2), "a malformed line makes the request wrong");
}

#[test]
fn a_session_answers_a_line_that_is_not_utf8_and_goes_on() {
    let dir = project();
    let mut session = Session::start(dir.path());
    let started = session.call(
        r#"{"name":"bash","arguments":{"command":"exec sleep 300","description":"Sleep","run_in_background":true}}"#,
    );
    assert_eq!(
        started["result"]["isError"].as_bool(),
        Some(false),
        "{started}"
    );
    session.send_bytes(b"{\"name\":\"job_list\",\"arguments\":\"\xff\xfe\"}");
    let bad = session.recv();
    assert_eq!(bad["line"].as_u64(), Some(2), "{bad}");
    assert_eq!(
        bad["error"].as_str(),
        Some("not UTF-8: invalid byte at offset 32"),
        "{bad}"
    );
    // The session is still there, and so is its job.
    let list = session.call(r#"{"name":"job_list","arguments":{}}"#);
    assert_eq!(list["result"]["isError"].as_bool(), Some(false), "{list}");
    assert!(list.to_string().contains("running"), "{list}");
    let (code, _) = session.finish();
    assert_eq!(code, Some(2), "a malformed line makes the request wrong");
}

#[test]
fn a_session_stops_its_jobs_when_its_input_ends() {
    let dir = project();
    let mut session = Session::start(dir.path());
    let started = session.call(
        r#"{"name":"bash","arguments":{"command":"echo $$ > shell.pid; exec sleep 300","description":"Sleep","run_in_background":true}}"#,
    );
    assert_eq!(started["result"]["isError"].as_bool(), Some(false));
    let pids = wait_for_pids(&dir.path().join("shell.pid"), 1);
    let (code, _) = session.finish();
    assert_eq!(code, Some(0));
    // Shutdown waited for the job: it is gone by the time the session exited.
    assert!(process_gone(&pids[0]), "{} outlived the session", pids[0]);
}

// ---- signals ------------------------------------------------------------------------------

/// How long anything expected to happen soon may take before a test fails.
const LIVENESS: Duration = Duration::from_secs(20);

/// Waits until `path` holds `n` lines (pids), and returns them.
fn wait_for_pids(path: &Path, n: usize) -> Vec<String> {
    let until = Instant::now() + LIVENESS;
    loop {
        if let Ok(text) = std::fs::read_to_string(path) {
            let lines: Vec<String> = text.lines().map(str::to_string).collect();
            if lines.len() >= n && text.ends_with('\n') {
                return lines;
            }
        }
        assert!(
            Instant::now() < until,
            "{} never got {n} pids",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether a process is gone: no such pid, or a zombie (it runs no more; who reaps
/// orphans depends on the machine's init).
fn process_gone(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next())
            .is_some_and(|state| matches!(state, 'Z' | 'X' | 'x')),
    }
}

fn kill_all(pids: &[String]) {
    for pid in pids {
        let _ = Command::new("kill")
            .args(["-9", pid])
            .stderr(Stdio::null())
            .status();
    }
}

fn send_signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// A background job whose tree has a shell, a plain child and a child in a process group
/// of its own (`set -m`); its pids go to `bg.pids`.
const TREE_JOB: &str = r#"{"id":"bg","name":"bash","arguments":{"command":"echo $$ > bg.tmp; sleep 300 & echo $! >> bg.tmp; set -m; sleep 300 & echo $! >> bg.tmp; mv bg.tmp bg.pids; wait","description":"A tree","run_in_background":true}}"#;

#[cfg(target_os = "linux")]
#[test]
fn a_signal_cancels_the_running_call_and_stops_the_jobs() {
    for (signal, number) in [("INT", 2), ("TERM", 15), ("HUP", 1)] {
        let dir = project();
        let mut session = Session::start(dir.path());
        let started = session.call(TREE_JOB);
        assert_eq!(started["result"]["isError"].as_bool(), Some(false));
        let mut pids = wait_for_pids(&dir.path().join("bg.pids"), 3);
        // A foreground call still running when the signal comes.
        session.send(
            r#"{"id":"fg","name":"bash","arguments":{"command":"sleep 300 & echo $! > fg.tmp; mv fg.tmp fg.pid; wait","description":"Hang"}}"#,
        );
        pids.extend(wait_for_pids(&dir.path().join("fg.pid"), 1));
        send_signal(session.child.id(), signal);

        // The running call reports that it was cancelled...
        let aborted = session.recv();
        assert_eq!(aborted["id"].as_str(), Some("fg"), "SIG{signal}");
        assert_eq!(
            aborted["result"]["error"]["info"]["code"].as_str(),
            Some("ABORTED"),
            "SIG{signal}: {aborted}"
        );
        // ...and the host exits with 128 + the signal, its jobs stopped.
        let deadline = Instant::now() + LIVENESS;
        let status = loop {
            if let Some(status) = session.child.try_wait().unwrap() {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "SIG{signal}: the host did not exit"
            );
            std::thread::sleep(Duration::from_millis(10));
        };
        let left: Vec<&String> = pids.iter().filter(|pid| !process_gone(pid)).collect();
        let left_text = format!("{left:?}");
        kill_all(&pids);
        assert_eq!(status.code(), Some(128 + number), "SIG{signal}");
        assert!(
            left.is_empty(),
            "SIG{signal}: {left_text} outlived the host"
        );
    }
}

#[cfg(target_os = "linux")]
#[test]
fn killing_the_host_outright_still_takes_its_commands_down() {
    let dir = project();
    let mut session = Session::start(dir.path());
    let started = session.call(TREE_JOB);
    assert_eq!(started["result"]["isError"].as_bool(), Some(false));
    let pids = wait_for_pids(&dir.path().join("bg.pids"), 3);
    for pid in &pids {
        assert!(!process_gone(pid), "{pid} runs first");
    }
    // SIGKILL: no handler runs. The shell's parent-death signal and the watchdog do it.
    send_signal(session.child.id(), "KILL");
    let _ = session.child.wait();
    let deadline = Instant::now() + LIVENESS;
    while pids.iter().any(|pid| !process_gone(pid)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left: Vec<&String> = pids.iter().filter(|pid| !process_gone(pid)).collect();
    let left_text = format!("{left:?}");
    kill_all(&pids);
    assert!(left.is_empty(), "{left_text} outlived the killed host");
}
