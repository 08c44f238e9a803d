//! `replay --html` and `call --html`: the page of a log's cards, and of one call.

use std::path::Path;
use std::process::{Command, Output};

use dsh_runtime::json::{self, Value};

const ISLAND_OPEN: &str = "<script type=\"application/json\" id=\"dsh-cards-data\">";

fn run(root: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
        .current_dir(root)
        .arg("--root")
        .arg(root)
        .args(args)
        .output()
        .expect("dsh-tools runs")
}

/// The entries of a page, read back from its data island.
fn entries(page: &Path) -> Vec<Value> {
    let html = std::fs::read_to_string(page).expect("the page was written");
    assert!(html.starts_with("<!doctype html>"), "{html}");
    let start = html.find(ISLAND_OPEN).expect("a data island") + ISLAND_OPEN.len();
    let end = start + html[start..].find("</script>").expect("the island's end");
    match json::parse(&html[start..end]).expect("the island is JSON") {
        Value::Array(items) => items.into_vec(),
        other => panic!("not an array: {other}"),
    }
}

fn lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| json::parse(l).expect("a JSON line"))
        .collect()
}

#[test]
fn replay_html_shows_the_cards_replay_prints_and_the_malformed_lines_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/replay.jsonl");
    let mut log = std::fs::read_to_string(fixture).unwrap();
    let records = log.lines().count();
    log.push_str("{\"call\": <script>alert(1)</script>\n");
    std::fs::write(dir.path().join("log.jsonl"), &log).unwrap();

    let o = run(dir.path(), &["replay", "log.jsonl", "--json"]);
    let printed = lines(&String::from_utf8(o.stdout).unwrap());

    let o = run(dir.path(), &["replay", "log.jsonl", "--html", "out.html"]);
    // The malformed line still makes the replay fail, as without --html.
    assert_eq!(o.status.code(), Some(1));
    assert!(
        o.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let page = entries(&dir.path().join("out.html"));

    let calls: Vec<&Value> = page
        .iter()
        .filter(|e| e["kind"].as_str() == Some("call"))
        .collect();
    assert_eq!(calls.len(), printed.len());
    for (shown, row) in calls.iter().zip(&printed) {
        assert_eq!(shown["line"], row["line"]);
        assert_eq!(shown["id"], row["id"]);
        assert_eq!(shown["callCard"], row["callCard"]);
        assert_eq!(shown.get("resultCard"), row.get("resultCard"));
    }
    let last = page.last().expect("entries");
    assert_eq!(last["kind"].as_str(), Some("malformed"));
    assert_eq!(last["line"].as_u64(), Some(records as u64 + 1));
    assert!(last["error"].as_str().is_some_and(|e| !e.is_empty()));
    // Raw arguments travel with every call (the fallback shows them).
    assert_eq!(
        calls[0]["arguments"]["file_path"].as_str(),
        Some("src/lib.rs")
    );
}

#[test]
fn call_html_writes_the_page_of_one_call() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
    let args = r#"{"file_path":"notes.txt","old_string":"beta","new_string":"<b>beta</b>"}"#;
    let o = run(dir.path(), &["call", "edit", args, "--html", "call.html"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let page = entries(&dir.path().join("call.html"));
    assert_eq!(page.len(), 1);
    let call = &page[0];
    assert_eq!(call["name"].as_str(), Some("edit"));
    assert_eq!(call["callCard"]["card"].as_str(), Some("diff"));
    assert_eq!(call["resultCard"]["card"].as_str(), Some("diff"));
    let new_text = call["resultCard"]["diffs"][0]["newText"].as_str();
    assert!(
        new_text.is_some_and(|t| t.contains("<b>beta</b>")),
        "{new_text:?}"
    );
    assert!(call.get("isError").is_none());
    let html = std::fs::read_to_string(dir.path().join("call.html")).unwrap();
    assert!(!html.contains("<b>beta"));

    // A failed call is marked as one.
    let o = run(
        dir.path(),
        &[
            "call",
            "read",
            r#"{"file_path":"missing.txt"}"#,
            "--html",
            "bad.html",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        entries(&dir.path().join("bad.html"))[0]["isError"].as_bool(),
        Some(true)
    );
}

/// The page of a recorded log in headless Chromium (Debian's, driven by playwright-core:
/// `dsh-cards/tests/browser/install.sh` installs both; without them this fails, never
/// skips): what a person must see of each card, found by kind. Screenshots in
/// `target/browser-replay/screenshots`.
#[test]
fn replay_html_in_a_real_browser() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace.join("target"), std::path::PathBuf::from);
    let prefix = target.join("browser-node");
    let chromium = std::env::var_os("DSH_CHROMIUM")
        .map_or_else(|| "/usr/bin/chromium".into(), std::path::PathBuf::from);
    // What the test needs, installed when missing (idempotent; it checks both are there).
    let status = std::process::Command::new("bash")
        .arg(workspace.join("dsh-cards/tests/browser/install.sh"))
        .env("CARGO_TARGET_DIR", &target)
        .env("DSH_CHROMIUM", &chromium)
        .status()
        .expect("bash runs dsh-cards/tests/browser/install.sh");
    assert!(
        status.success(),
        "dsh-cards/tests/browser/install.sh failed"
    );

    // A recorded session: an edit, a command, a capped search, an unknown tool, a
    // malformed line.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("sum.rs"),
        "fn sum() {\nlet total = a - b;\ntotal\n}\n",
    )
    .unwrap();
    let needles: String = (1..=300).map(|n| format!("needle {n}\n")).collect();
    std::fs::write(root.join("many.txt"), needles).unwrap();
    let calls = [
        (
            "edit",
            r#"{"file_path":"sum.rs","old_string":"a - b","new_string":"a + b"}"#,
        ),
        (
            "bash",
            r#"{"command":"printf '<b>out</b>\\n'; exit 3","description":"print"}"#,
        ),
        ("grep", r#"{"pattern":"needle"}"#),
    ];
    for (name, args) in calls {
        run(root, &["call", name, args, "--log", "log.jsonl"]);
    }
    let mut log = std::fs::read_to_string(root.join("log.jsonl")).unwrap();
    assert_eq!(log.lines().count(), 3, "{log}");
    log.push_str(
        "{\"call\":{\"id\":\"t\",\"name\":\"teleport\",\"arguments\":{\"beam\":\"42\"}}}\n",
    );
    log.push_str("{not json\n");
    std::fs::write(root.join("log.jsonl"), log).unwrap();

    let pages = target.join("browser-replay");
    std::fs::create_dir_all(&pages).unwrap();
    let page = pages.join("replay.html");
    let o = run(
        root,
        &["replay", "log.jsonl", "--html", page.to_str().unwrap()],
    );
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );

    let script = workspace.join("dsh-cards/tests/browser/cards.mjs");
    let out = Command::new("node")
        .arg(script)
        .arg(&pages)
        .arg(&prefix)
        .arg("replay")
        .env("DSH_CHROMIUM", &chromium)
        .output()
        .expect("node runs (Node 20 or later on PATH)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "browser checks failed:\n{}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("ok: all checks passed"), "{stdout}");
}

/// The MCP Apps view of `dsh-tools mcp` in a host page built on the official host bridge
/// (`@modelcontextprotocol/ext-apps`' `AppBridge`, bundled for the page), in headless
/// Chromium: `dsh-cards/tests/browser/bridge.mjs` starts the server, lists its tools,
/// reads the view and makes real calls (an edit, a command, a capped search, a tool
/// without presenters) as a client declaring the UI extension, then hands each call's
/// input and result to the view through the bridge and checks what a person sees: the
/// pending call card before the result, then the diff's changed lines, the command's
/// output and exit code, the matches grouped by file and marked truncated, the raw
/// arguments. Screenshots in `target/browser-bridge/screenshots`.
#[test]
fn the_mcp_view_through_the_official_host_bridge() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace.join("target"), std::path::PathBuf::from);
    let prefix = target.join("browser-node");
    let chromium = std::env::var_os("DSH_CHROMIUM")
        .map_or_else(|| "/usr/bin/chromium".into(), std::path::PathBuf::from);
    let status = Command::new("bash")
        .arg(workspace.join("dsh-cards/tests/browser/install.sh"))
        .env("CARGO_TARGET_DIR", &target)
        .env("DSH_CHROMIUM", &chromium)
        .status()
        .expect("bash runs dsh-cards/tests/browser/install.sh");
    assert!(
        status.success(),
        "dsh-cards/tests/browser/install.sh failed"
    );

    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("sum.rs"),
        "fn sum() {\nlet total = a - b;\ntotal\n}\n",
    )
    .unwrap();
    std::fs::write(root.join("a.txt"), "needle one\nhay\nneedle two\n").unwrap();
    let needles: String = (1..=300).map(|n| format!("needle {n}\n")).collect();
    std::fs::write(root.join("many.txt"), needles).unwrap();

    let pages = target.join("browser-bridge");
    std::fs::create_dir_all(&pages).unwrap();
    let out = Command::new("node")
        .arg(workspace.join("dsh-cards/tests/browser/bridge.mjs"))
        .arg(&pages)
        .arg(&prefix)
        .arg(env!("CARGO_BIN_EXE_dsh-tools"))
        .arg(root)
        .env("DSH_CHROMIUM", &chromium)
        .output()
        .expect("node runs (Node 20 or later on PATH)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "browser checks failed:\n{}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("ok: all checks passed"), "{stdout}");
}
