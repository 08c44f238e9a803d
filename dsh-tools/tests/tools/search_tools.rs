//! `grep` and `glob` against a real directory tree, through a registry confined to it:
//! values, the model-facing text, order, ripgrep's hidden/ignore rules, filters, caps, cards
//! and error codes.

use crate::support;

use std::path::Path;
use std::time::{Duration, SystemTime};

use dsh_runtime::cards::{CallView, ResultView, SearchFile, SearchMatch, SearchView, ToolCallKind};
use dsh_runtime::json::Value;
use support::{Tools, failure, v, value, write};

/// A small project:
///
/// ```text
/// .gitignore        target/ and *.log (applies only inside a git repository)
/// .hidden/secret.rs hidden
/// README.md         mentions TODO once
/// build.log         ignored by git
/// data.bin          binary, contains TODO
/// src/lib.rs        TODO twice
/// src/main.rs       todo (lower case) once
/// src/util/mod.rs   TODO once
/// target/out.rs     ignored by git
/// ```
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    write(&p.join(".gitignore"), "target/\n*.log\n");
    write(&p.join(".hidden/secret.rs"), "// TODO hidden\n");
    write(&p.join("README.md"), "# Project\n\nTODO: write docs\n");
    write(&p.join("build.log"), "TODO in a log\n");
    write(&p.join("data.bin"), b"\x00\x01TODO\n");
    write(
        &p.join("src/lib.rs"),
        "// TODO first\npub fn f() {}\n// TODO second\n",
    );
    write(
        &p.join("src/main.rs"),
        "fn main() {\n    // todo: later\n}\n",
    );
    write(&p.join("src/util/mod.rs"), "pub mod x; // TODO\n");
    write(&p.join("target/out.rs"), "// TODO generated\n");
    dir
}

fn paths_of(r: &dsh_runtime::ToolResult, key: &str) -> Vec<String> {
    value(r)[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| match m {
            Value::String(s) => s.to_string(),
            other => other["path"].as_str().unwrap().to_string(),
        })
        .collect()
}

#[tokio::test]
async fn grep_finds_lines_in_path_order_with_ripgreps_rules() {
    let dir = project();
    let tools = Tools::confined(dir.path());
    let args = r#"{"pattern":"TODO"}"#;
    let r = tools.call("grep", args).await;
    // Not a git repository: .gitignore does not apply (as with ripgrep); hidden and binary
    // files are skipped.
    assert_eq!(
        value(&r),
        &v(r#"{"matches":[
            {"path":"README.md","lineNumber":3,"line":"TODO: write docs"},
            {"path":"build.log","lineNumber":1,"line":"TODO in a log"},
            {"path":"src/lib.rs","lineNumber":1,"line":"// TODO first"},
            {"path":"src/lib.rs","lineNumber":3,"line":"// TODO second"},
            {"path":"src/util/mod.rs","lineNumber":1,"line":"pub mod x; // TODO"},
            {"path":"target/out.rs","lineNumber":1,"line":"// TODO generated"}
        ]}"#)
    );
    assert_eq!(
        r.text(),
        "Found 6 matches\n\nREADME.md\nLine 3: TODO: write docs\n\nbuild.log\nLine 1: TODO in a log\n\nsrc/lib.rs\nLine 1: // TODO first\nLine 3: // TODO second\n\nsrc/util/mod.rs\nLine 1: pub mod x; // TODO\n\ntarget/out.rs\nLine 1: // TODO generated"
    );
    match tools.result_card("grep", args, &r) {
        ResultView::Search(view) => assert_eq!(
            view,
            SearchView::matches(
                vec![
                    SearchFile::new("README.md", vec![SearchMatch::new(3, "TODO: write docs")]),
                    SearchFile::new("build.log", vec![SearchMatch::new(1, "TODO in a log")]),
                    SearchFile::new(
                        "src/lib.rs",
                        vec![
                            SearchMatch::new(1, "// TODO first"),
                            SearchMatch::new(3, "// TODO second")
                        ]
                    ),
                    SearchFile::new(
                        "src/util/mod.rs",
                        vec![SearchMatch::new(1, "pub mod x; // TODO")]
                    ),
                    SearchFile::new(
                        "target/out.rs",
                        vec![SearchMatch::new(1, "// TODO generated")]
                    ),
                ],
                false,
                6
            )
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        tools.call_card(
            "grep",
            r#"{"pattern":"TODO","path":"src","include":"*.rs"}"#
        ),
        CallView::Generic {
            title: "Grep TODO in src (*.rs)".to_string(),
            kind: Some(ToolCallKind::Search),
            raw_input: Some(v(r#""TODO""#)),
            content: None,
            locations: None,
        }
    );

    // Inside a git repository, .gitignore applies; .ignore always does.
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    write(&dir.path().join("src/.ignore"), "util/\n");
    let r = tools.call("grep", args).await;
    assert_eq!(
        paths_of(&r, "matches"),
        ["README.md", "src/lib.rs", "src/lib.rs"]
    );
}

#[tokio::test]
async fn grep_filters_and_single_files() {
    let dir = project();
    let tools = Tools::confined(dir.path());

    // Without a slash: file names at any depth; with one: anchored at the root.
    let r = tools
        .call("grep", r#"{"pattern":"TODO","include":"*.rs"}"#)
        .await;
    assert_eq!(
        paths_of(&r, "matches"),
        [
            "src/lib.rs",
            "src/lib.rs",
            "src/util/mod.rs",
            "target/out.rs"
        ]
    );
    let r = tools
        .call("grep", r#"{"pattern":"TODO","include":"src/*.rs"}"#)
        .await;
    assert_eq!(paths_of(&r, "matches"), ["src/lib.rs", "src/lib.rs"]);
    let r = tools
        .call("grep", r#"{"pattern":"TODO","include":"*.{md,log}"}"#)
        .await;
    assert_eq!(paths_of(&r, "matches"), ["README.md", "build.log"]);
    // A directory as `path`: results start with it.
    let r = tools
        .call("grep", r#"{"pattern":"(?i)todo","path":"src"}"#)
        .await;
    assert_eq!(
        paths_of(&r, "matches"),
        ["src/lib.rs", "src/lib.rs", "src/main.rs", "src/util/mod.rs"]
    );
    // A file as `path` is searched even when hidden, whatever `include` says.
    let r = tools
        .call(
            "grep",
            r#"{"pattern":"TODO","path":".hidden/secret.rs","include":"*.md"}"#,
        )
        .await;
    assert_eq!(paths_of(&r, "matches"), [".hidden/secret.rs"]);
    // No matches.
    let r = tools.call("grep", r#"{"pattern":"FIXME"}"#).await;
    assert_eq!(value(&r), &v(r#"{"matches":[]}"#));
    assert_eq!(r.text(), "No matches found");
    match tools.result_card("grep", r#"{"pattern":"FIXME"}"#, &r) {
        ResultView::Search(view) => assert_eq!(view, SearchView::matches(vec![], false, 0)),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn grep_lines_crlf_bytes_and_caps() {
    let dir = tempfile::tempdir().unwrap();
    let tools = Tools::confined(dir.path());
    write(&dir.path().join("crlf.txt"), "x = 1\r\ny = 2\r\n");
    write(&dir.path().join("latin1.txt"), b"caf\xe9 x\n");
    let r = tools.call("grep", r#"{"pattern":"x"}"#).await;
    assert_eq!(
        value(&r),
        &v(r#"{"matches":[
            {"path":"crlf.txt","lineNumber":1,"line":"x = 1"},
            {"path":"latin1.txt","lineNumber":1,"line":"(line is not valid UTF-8)"}
        ]}"#)
    );
    // `$` sees the CR, as with ripgrep.
    let r = tools.call("grep", r#"{"pattern":"1$"}"#).await;
    assert_eq!(value(&r), &v(r#"{"matches":[]}"#));

    // A long line is kept in the value and cut for the model.
    let long = format!("x{}", "é".repeat(1500));
    write(&dir.path().join("long.txt"), format!("{long}\n"));
    let r = tools
        .call("grep", r#"{"pattern":"x","path":"long.txt"}"#)
        .await;
    assert_eq!(
        value(&r)["matches"][0]["line"].as_str(),
        Some(long.as_str())
    );
    let shown = format!("x{} (line truncated)", "é".repeat(999));
    assert_eq!(
        r.text(),
        format!("Found 1 match\n\nlong.txt\nLine 1: {shown}")
    );

    // 300 matches: the first 250 are shown, all are in the value.
    let many: String = (1..=300).map(|n| format!("hit {n}\n")).collect();
    write(&dir.path().join("many.txt"), &many);
    let args = r#"{"pattern":"hit","path":"many.txt"}"#;
    let r = tools.call("grep", args).await;
    assert_eq!(value(&r)["matches"].as_array().unwrap().len(), 300);
    let text = r.text();
    assert!(text.starts_with("Found 250 of 300 matches\n\nmany.txt\nLine 1: hit 1\n"));
    assert!(text.ends_with(
        "Line 250: hit 250\n\n(The complete result could not be saved; narrow pattern, path, or include to see more.)"
    ));
    match tools.result_card("grep", args, &r) {
        ResultView::Search(view) => {
            assert!(view.truncated());
            assert_eq!(view.total(), 300);
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn grep_errors() {
    let dir = project();
    let tools = Tools::confined(dir.path());
    let r = tools.call("grep", r#"{"pattern":"("}"#).await;
    let (code, message) = failure(&r);
    assert_eq!(code, Some("SEARCH_INVALID_PATTERN"));
    assert!(
        message.starts_with("grep pattern rejected: regex parse error:"),
        "{message}"
    );
    let r = tools.call("grep", r#"{"pattern":"x","include":"["}"#).await;
    assert_eq!(
        failure(&r),
        (
            Some("SEARCH_INVALID_PATTERN"),
            "grep include rejected: error parsing glob '[': unclosed character class; missing ']'"
        )
    );
    for (include, message) in [
        (" ", "include must be a non-empty glob when given"),
        (
            "!*.rs",
            "include must be a positive glob filter; negated patterns (\"!…\") are not supported",
        ),
        (
            "*.rs,*.md",
            "include must be one glob, not a comma-separated list (use {a,b} alternation instead)",
        ),
    ] {
        let args = format!(r#"{{"pattern":"x","include":{include:?}}}"#);
        let r = tools.call("grep", &args).await;
        assert_eq!(failure(&r), (None, message), "{include}");
    }
    let r = tools.call("grep", r#"{"pattern":"x","path":"nope"}"#).await;
    assert_eq!(
        failure(&r),
        (
            Some("SEARCH_FAILED"),
            "grep search failed: nope: No such file or directory (os error 2)"
        )
    );
    let r = tools.call("grep", r#"{"pattern":"x","path":"  "}"#).await;
    assert_eq!(
        failure(&r),
        (None, "path must be a non-empty string when given")
    );
    let r = tools.call("grep", r#"{"pattern":""}"#).await;
    assert_eq!(failure(&r).0, Some("INVALID_ARGS"));
    // A huge pattern: a short, precise error.
    for tool in ["grep", "glob"] {
        let args = format!(r#"{{"pattern":"{}"}}"#, "a".repeat(100_000));
        let r = tools.call(tool, &args).await;
        assert_eq!(
            failure(&r),
            (
                Some("SEARCH_INVALID_PATTERN"),
                format!("{tool} pattern is too long: 100000 characters, at most 4096").as_str()
            )
        );
    }
}

/// Sets the modification times of the listed files, oldest first.
fn age(root: &Path, oldest_first: &[&str]) {
    let start = SystemTime::UNIX_EPOCH + Duration::from_secs(1_600_000_000);
    for (i, rel) in oldest_first.iter().enumerate() {
        let file = std::fs::File::options()
            .write(true)
            .open(root.join(rel))
            .unwrap();
        file.set_modified(start + Duration::from_secs(i as u64 * 60))
            .unwrap();
    }
}

#[tokio::test]
async fn glob_lists_every_file_oldest_first() {
    let dir = project();
    let root = dir.path();
    write(&root.join(".git/hooks/pre.rs"), "// never listed\n");
    age(
        root,
        &[
            "src/util/mod.rs",
            "target/out.rs",
            "src/lib.rs",
            ".hidden/secret.rs",
            "src/main.rs",
        ],
    );
    let tools = Tools::confined(root);
    let args = r#"{"pattern":"**/*.rs"}"#;
    let r = tools.call("glob", args).await;
    // Hidden and ignored files are listed, .git is not; oldest first.
    let expected = [
        "src/util/mod.rs",
        "target/out.rs",
        "src/lib.rs",
        ".hidden/secret.rs",
        "src/main.rs",
    ];
    assert_eq!(
        value(&r),
        &v(&format!(
            r#"{{"root":".","paths":{}}}"#,
            serde_json::to_string(&expected).unwrap()
        ))
    );
    assert_eq!(r.text(), expected.join("\n"));
    assert_eq!(
        tools.result_card("glob", args, &r),
        SearchView::paths(expected.iter().map(|s| s.to_string()).collect(), false, 5).into()
    );
    assert_eq!(
        tools.call_card("glob", r#"{"pattern":"*.rs","path":"src"}"#),
        CallView::Generic {
            title: "Glob *.rs in src".to_string(),
            kind: Some(ToolCallKind::Search),
            raw_input: Some(v(r#""*.rs""#)),
            content: None,
            locations: None,
        }
    );

    // No slash: file names at any depth. A slash anchors at the root.
    let r = tools.call("glob", r#"{"pattern":"*.rs"}"#).await;
    assert_eq!(paths_of(&r, "paths").len(), 5);
    let r = tools.call("glob", r#"{"pattern":"src/*.rs"}"#).await;
    assert_eq!(paths_of(&r, "paths"), ["src/lib.rs", "src/main.rs"]);
    // Under a directory: paths start with it, patterns stay anchored at the root.
    let r = tools
        .call("glob", r#"{"pattern":"*.rs","path":"src"}"#)
        .await;
    assert_eq!(value(&r)["root"].as_str(), Some("src"));
    assert_eq!(
        paths_of(&r, "paths"),
        ["src/util/mod.rs", "src/lib.rs", "src/main.rs"]
    );
    let r = tools
        .call("glob", r#"{"pattern":"util/*","path":"src"}"#)
        .await;
    assert_eq!(r.text(), "No files found");
    // A file as `path` is listed as it is.
    let r = tools
        .call("glob", r#"{"pattern":"*.md","path":"build.log"}"#)
        .await;
    assert_eq!(paths_of(&r, "paths"), ["build.log"]);
    // Alternatives (README.md was not aged: it is the newest).
    let r = tools
        .call("glob", r#"{"pattern":"{README.md,main.rs}"}"#)
        .await;
    assert_eq!(paths_of(&r, "paths"), ["src/main.rs", "README.md"]);
}

#[tokio::test]
async fn glob_shows_a_hundred_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    for n in 0..105 {
        write(&dir.path().join(format!("f{n:03}.txt")), "");
    }
    let names: Vec<String> = (0..105).map(|n| format!("f{n:03}.txt")).collect();
    let order: Vec<&str> = names.iter().map(String::as_str).collect();
    age(dir.path(), &order);
    let tools = Tools::confined(dir.path());
    let args = r#"{"pattern":"*.txt"}"#;
    let r = tools.call("glob", args).await;
    assert_eq!(value(&r)["paths"].as_array().unwrap().len(), 105);
    assert_eq!(
        r.text(),
        format!(
            "{}\n\n(Showing 100 of 105 paths. The complete result could not be saved; narrow pattern or path to see more.)",
            names[..100].join("\n")
        )
    );
    match tools.result_card("glob", args, &r) {
        ResultView::Search(view) => {
            assert!(view.truncated());
            assert_eq!(view.total(), 105);
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn glob_errors() {
    let dir = project();
    let tools = Tools::confined(dir.path());
    let r = tools.call("glob", r#"{"pattern":"*","path":"nope"}"#).await;
    assert_eq!(
        failure(&r),
        (
            Some("SEARCH_FAILED"),
            "glob search failed: nope: No such file or directory (os error 2)"
        )
    );
    let r = tools.call("glob", r#"{"pattern":"a["}"#).await;
    assert_eq!(
        failure(&r),
        (
            Some("SEARCH_INVALID_PATTERN"),
            "glob pattern rejected: error parsing glob 'a[': unclosed character class; missing ']'"
        )
    );
    let r = tools.call("glob", r#"{"pattern":"  "}"#).await;
    assert_eq!(failure(&r), (None, "pattern must be a non-empty string"));
    let r = tools.call("glob", r#"{"pattern":""}"#).await;
    assert_eq!(failure(&r).0, Some("INVALID_ARGS"));
    // Outside the root.
    let r = tools.call("glob", r#"{"pattern":"*","path":".."}"#).await;
    assert_eq!(failure(&r).0, Some("FS_OUTSIDE_ROOT"));
}

// ---- the files grep reads on its own --------------------------------------------------

/// Make a FIFO at `path`.
#[allow(unsafe_code)]
fn mkfifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt as _;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o644) };
    assert_eq!(
        rc,
        0,
        "mkfifo {}: {}",
        path.display(),
        std::io::Error::last_os_error()
    );
}

/// Wake a reader blocked opening the FIFO at `path` (it then reads end of file).
fn unblock_fifo(path: &Path) {
    use std::os::unix::fs::OpenOptionsExt as _;
    let _ = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path);
}

/// `<tmp>/root` with `sub/a.txt` (and `.git`, so `.gitignore` files apply).
fn nested_root() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("root");
    write(&root.join("sub/a.txt"), "needle\n");
    std::fs::create_dir(root.join(".git")).unwrap();
    (dir, root)
}

#[tokio::test]
async fn grep_does_not_block_on_fifo_ignore_files() {
    for name in [".ignore", ".rgignore", ".gitignore"] {
        for place in ["root", "sub", "parent"] {
            let (_dir, root) = nested_root();
            let fifo = match place {
                "root" => root.join(name),
                "sub" => root.join("sub").join(name),
                _ => root.parent().unwrap().join(name),
            };
            mkfifo(&fifo);
            let tools = Tools::confined(&root);
            let call = tools.call("grep", r#"{"pattern":"needle"}"#);
            let answered = tokio::time::timeout(Duration::from_secs(10), call).await;
            // Wake a blocked walk either way, so a failure ends instead of hanging.
            unblock_fifo(&fifo);
            let r = answered.unwrap_or_else(|_| panic!("grep blocked on a FIFO {name} in {place}"));
            assert_eq!(paths_of(&r, "matches"), ["sub/a.txt"], "{name} in {place}");
        }
    }
}

#[tokio::test]
async fn grep_skips_ignore_files_that_are_devices_or_lead_out() {
    let (_dir, root) = nested_root();
    write(&root.join("sub/b.txt"), "needle\n");
    std::os::unix::fs::symlink("/dev/zero", root.join(".ignore")).unwrap();
    std::os::unix::fs::symlink("/dev/urandom", root.join("sub/.rgignore")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", root.join("sub/.gitignore")).unwrap();
    let tools = Tools::confined(&root);
    let r = tools.call("grep", r#"{"pattern":"needle"}"#).await;
    assert_eq!(paths_of(&r, "matches"), ["sub/a.txt", "sub/b.txt"]);
    // Unconfined too.
    let tools = Tools::new();
    let args = format!(r#"{{"pattern":"needle","path":{}}}"#, support::q(&root));
    let r = tools.call("grep", &args).await;
    assert_eq!(
        value(&r)["matches"].as_array().map(|a| a.len()),
        Some(2),
        "{r:?}"
    );
}

#[tokio::test]
async fn grep_reads_no_ignore_file_outside_the_root() {
    // The membership oracle: an ignore file linked to a file outside the root would hide
    // exactly the inside files named by its lines.
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let root = base.join("root");
    write(
        &base.join("outside/words.txt"),
        "secret1.txt\nsecret3.txt\n",
    );
    for n in 1..=3 {
        write(&root.join(format!("sub/secret{n}.txt")), "needle\n");
    }
    std::os::unix::fs::symlink("../../outside/words.txt", root.join("sub/.ignore")).unwrap();
    // And ignore files in the root's parent, outside it, are not read.
    write(&base.join(".ignore"), "secret2.txt\n");
    write(&base.join(".rgignore"), "secret2.txt\n");
    let tools = Tools::confined(&root);
    let r = tools.call("grep", r#"{"pattern":"needle"}"#).await;
    assert_eq!(
        paths_of(&r, "matches"),
        ["sub/secret1.txt", "sub/secret2.txt", "sub/secret3.txt"]
    );
    // A link to an ignore file inside the root is read as before.
    write(&root.join("rules.txt"), "secret2.txt\n");
    std::fs::remove_file(root.join("sub/.ignore")).unwrap();
    std::os::unix::fs::symlink("../rules.txt", root.join("sub/.ignore")).unwrap();
    let r = tools.call("grep", r#"{"pattern":"needle"}"#).await;
    assert_eq!(
        paths_of(&r, "matches"),
        ["sub/secret1.txt", "sub/secret3.txt"]
    );
    // The root's own ignore files apply to a search of a directory below it.
    write(&root.join(".ignore"), "secret3.txt\n");
    let r = tools
        .call("grep", r#"{"pattern":"needle","path":"sub"}"#)
        .await;
    assert_eq!(paths_of(&r, "matches"), ["sub/secret1.txt"]);
}

/// The process's peak resident set, in KiB.
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/self/status")
}

#[tokio::test]
async fn grep_reads_lines_with_a_cap() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // A sparse file whose first line is 16 GiB long, then a short line.
    let huge = root.join("huge.txt");
    {
        use std::io::{Seek as _, SeekFrom, Write as _};
        let mut f = std::fs::File::create(&huge).unwrap();
        f.write_all(b"needle at the start").unwrap();
        f.set_len(16 << 30).unwrap();
        f.seek(SeekFrom::End(0)).unwrap();
        f.write_all(b"\nneedle two\n").unwrap();
    }
    let tools = Tools::confined(root);
    let before = peak_rss_kib();
    let r = tools
        .call("grep", r#"{"pattern":"needle","path":"huge.txt"}"#)
        .await;
    let grown = peak_rss_kib().saturating_sub(before);
    assert!(grown < 512 * 1024, "grep's peak memory grew by {grown} KiB");
    let matches = value(&r)["matches"].as_array().unwrap();
    assert_eq!(matches.len(), 2, "{r:?}");
    let first = matches[0]["line"].as_str().unwrap();
    assert!(first.starts_with("needle at the start\0"));
    assert!(first.ends_with(" (line truncated)"));
    assert_eq!(
        first.len(),
        dsh_tools::search::GREP_VALUE_LINE_BYTES + " (line truncated)".len()
    );
    assert_eq!(matches[1]["lineNumber"].as_u64(), Some(2));
    assert_eq!(matches[1]["line"].as_str(), Some("needle two"));
    assert!(r.text().contains(" (line truncated)"));
    std::fs::remove_file(&huge).unwrap();

    // A long line in a walked file: the match is reported cut, the next line is found.
    let long = format!("needle {}", "é".repeat(100_000));
    write(&root.join("long.txt"), format!("{long}\nneedle again\n"));
    let r = tools.call("grep", r#"{"pattern":"needle"}"#).await;
    let matches = value(&r)["matches"].as_array().unwrap();
    assert_eq!(matches.len(), 2, "{r:?}");
    let cut = matches[0]["line"].as_str().unwrap();
    let kept = dsh_tools::search::GREP_VALUE_LINE_BYTES;
    // Cut at a character boundary at or below the cap.
    assert!(long.starts_with(cut.strip_suffix(" (line truncated)").unwrap()));
    assert!(cut.len() <= kept + " (line truncated)".len());
    assert!(cut.len() >= kept - 1 + " (line truncated)".len());
    assert_eq!(matches[1]["line"].as_str(), Some("needle again"));
    assert_eq!(matches[1]["lineNumber"].as_u64(), Some(2));
}
