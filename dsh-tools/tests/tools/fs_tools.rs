//! `read`, `write` and `edit` against real files, through a registry (the full pipeline):
//! values, the model-facing text, cards (live and from the persisted summary), error codes,
//! atomicity and the "nothing lost" property of `edit`.

use crate::support;

use std::path::Path;

use dsh_runtime::cards::{
    CallView, FileDiff, FileLocation, ReadLine, ReadView, ResultView, ToolCallKind,
};
use dsh_runtime::content::ContentBlock;
use proptest::prelude::*;
use support::{Tools, failure, q, v, value, write};

fn envelope(path: &Path, body: &str) -> String {
    format!(
        "<path>{}</path>\n<type>file</type>\n<content>\n{body}\n</content>",
        path.display()
    )
}

fn read_args(path: &Path, extra: &str) -> String {
    format!(r#"{{"file_path":{}{extra}}}"#, q(path))
}

// ---- read ------------------------------------------------------------------------------

#[tokio::test]
async fn read_whole_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("main.rs");
    write(&file, "fn main() {\n    println!(\"hi\");\n}\n");
    let tools = Tools::new();
    let args = read_args(&file, "");
    let r = tools.call("read", &args).await;

    let path = file.to_str().unwrap();
    assert_eq!(
        value(&r),
        &v(&format!(
            r#"{{"path":{},"offset":1,"lines":[{{"number":1,"text":"fn main() {{"}},{{"number":2,"text":"    println!(\"hi\");"}},{{"number":3,"text":"}}"}}],"totalLines":3}}"#,
            q(&file)
        ))
    );
    let body = "1: fn main() {\n2:     println!(\"hi\");\n3: }\n\n(End of file - total 3 lines)";
    assert_eq!(r.text(), envelope(&file, body));
    let expected: ResultView = ReadView::new(
        path,
        1,
        vec![
            ReadLine::new(1, "fn main() {"),
            ReadLine::new(2, "    println!(\"hi\");"),
            ReadLine::new(3, "}"),
        ],
        3,
    )
    .with_lang("rs")
    .with_content(vec![ContentBlock::text(body)])
    .into();
    assert_eq!(tools.result_card("read", &args, &r), expected);
    assert_eq!(
        tools.call_card("read", &args),
        CallView::Generic {
            title: format!("Read {path}"),
            kind: Some(ToolCallKind::Read),
            raw_input: None,
            content: None,
            locations: Some(vec![FileLocation::new(path).at_line(1)]),
        }
    );
}

#[tokio::test]
async fn read_window_and_continuation() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.txt");
    write(&file, "one\ntwo\nthree\nfour\nfive\n");
    let tools = Tools::new();
    let args = read_args(&file, r#","offset":3,"limit":2"#);
    let r = tools.call("read", &args).await;
    let out = value(&r);
    assert_eq!(out["offset"].as_u64(), Some(3));
    assert_eq!(out["totalLines"].as_u64(), Some(5));
    assert_eq!(
        out["lines"],
        v(r#"[{"number":3,"text":"three"},{"number":4,"text":"four"}]"#)
    );
    assert_eq!(
        r.text(),
        envelope(
            &file,
            "3: three\n4: four\n\n(Showing lines 3-4 of 5. Use offset=5 to continue.)"
        )
    );
    match tools.call_card("read", &args) {
        CallView::Generic {
            title, locations, ..
        } => {
            assert_eq!(title, format!("Read {} (3 - 4)", file.display()));
            assert_eq!(
                locations,
                Some(vec![FileLocation::new(file.to_str().unwrap()).at_line(3)])
            );
        }
        other => panic!("{other:?}"),
    }
    match tools.result_card("read", &args, &r) {
        ResultView::Read(view) => {
            assert_eq!(view.lang, None);
            assert_eq!((view.offset, view.lines.len()), (3, 2));
        }
        other => panic!("{other:?}"),
    }

    // The last page ends with the end-of-file footer.
    let r = tools
        .call("read", &read_args(&file, r#","offset":4"#))
        .await;
    assert_eq!(
        r.text(),
        envelope(&file, "4: four\n5: five\n\n(End of file - total 5 lines)")
    );
}

#[tokio::test]
async fn read_past_the_end_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("short.md");
    write(&file, "a\nb");
    let tools = Tools::new();
    let r = tools
        .call("read", &read_args(&file, r#","offset":10"#))
        .await;
    assert_eq!(
        failure(&r),
        (
            Some("FS_NOT_FOUND"),
            format!(
                "offset 10 is out of range for \"{}\" (2 lines)",
                file.display()
            )
            .as_str()
        )
    );
    // The line after the last one is past the end too; an empty file's line 1 is not.
    let r = tools
        .call("read", &read_args(&file, r#","offset":3"#))
        .await;
    assert_eq!(failure(&r).0, Some("FS_NOT_FOUND"));
    let empty = dir.path().join("empty.txt");
    write(&empty, "");
    let r = tools.call("read", &read_args(&empty, "")).await;
    assert_eq!(value(&r)["totalLines"].as_u64(), Some(0));
    assert_eq!(r.text(), envelope(&empty, "(End of file - total 0 lines)"));
}

#[tokio::test]
async fn read_text_rules() {
    let dir = tempfile::tempdir().unwrap();
    let tools = Tools::new();

    // CRLF and a last line without a terminator; a byte-order mark is not shown.
    let crlf = dir.path().join("crlf.txt");
    write(&crlf, "\u{feff}a\r\nb\r\nlast");
    let r = tools.call("read", &read_args(&crlf, "")).await;
    assert_eq!(
        value(&r)["lines"],
        v(r#"[{"number":1,"text":"a"},{"number":2,"text":"b"},{"number":3,"text":"last"}]"#)
    );

    // Not UTF-8, or binary: refused.
    let latin1 = dir.path().join("latin1.txt");
    write(&latin1, b"caf\xe9\n");
    let r = tools.call("read", &read_args(&latin1, "")).await;
    assert_eq!(
        failure(&r),
        (
            Some("FS_NOT_TEXT"),
            format!("cannot read \"{}\": invalid UTF-8 text", latin1.display()).as_str()
        )
    );
    // Invalid UTF-8 far past the first chunk is still found.
    let late = dir.path().join("late.txt");
    let mut bytes = "ok\n".repeat(100_000).into_bytes();
    bytes.extend_from_slice(b"\xff\n");
    write(&late, &bytes);
    let r = tools.call("read", &read_args(&late, r#","limit":1"#)).await;
    assert_eq!(failure(&r).0, Some("FS_NOT_TEXT"));
    let bin = dir.path().join("blob.bin");
    write(&bin, b"PK\x03\x04\x00\x00rest");
    let r = tools.call("read", &read_args(&bin, "")).await;
    assert_eq!(
        failure(&r),
        (
            Some("FS_NOT_TEXT"),
            format!("cannot read \"{}\": binary file", bin.display()).as_str()
        )
    );
}

#[tokio::test]
async fn read_cuts_long_lines_and_caps_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let tools = Tools::new();
    let file = dir.path().join("min.js");
    write(&file, "x".repeat(3000));
    let r = tools.call("read", &read_args(&file, "")).await;
    let cut = format!("{}... (line truncated to 2000 chars)", "x".repeat(2000));
    assert_eq!(value(&r)["lines"][0]["text"].as_str(), Some(cut.as_str()));
    assert_eq!(
        r.text(),
        envelope(&file, &format!("1: {cut}\n\n(End of file - total 1 lines)"))
    );

    // 1000 lines of 99 characters: 50 KiB of text ends the window at line 512.
    let wide = dir.path().join("wide.txt");
    write(&wide, format!("{}\n", "y".repeat(99)).repeat(1000));
    let r = tools.call("read", &read_args(&wide, "")).await;
    let lines = value(&r)["lines"].as_array().unwrap().len();
    assert_eq!(lines, 512);
    assert_eq!(value(&r)["totalLines"].as_u64(), Some(1000));
    assert!(
        r.text().ends_with(
            "\n\n(Output capped. Showing lines 1-512. Use offset=513 to continue.)\n</content>"
        ),
        "{}",
        &r.text()[r.text().len() - 200..]
    );
}

#[tokio::test]
async fn read_refuses_what_is_not_a_regular_file_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let tools = Tools::new();
    let r = tools.call("read", &read_args(dir.path(), "")).await;
    assert_eq!(
        failure(&r),
        (
            Some("FS_NOT_REGULAR_FILE"),
            format!(
                "cannot read \"{}\": not a regular file",
                dir.path().display()
            )
            .as_str()
        )
    );
    // A FIFO with no writer would block an open for reading forever.
    let fifo = dir.path().join("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    for tool in ["read", "edit"] {
        let args = match tool {
            "read" => read_args(&fifo, ""),
            _ => format!(
                r#"{{"file_path":{},"old_string":"a","new_string":"b"}}"#,
                q(&fifo)
            ),
        };
        let r = tokio::time::timeout(std::time::Duration::from_secs(20), tools.call(tool, &args))
            .await
            .expect("a FIFO must not block");
        assert_eq!(failure(&r).0, Some("FS_NOT_REGULAR_FILE"), "{tool}");
    }
    let missing = dir.path().join("missing.txt");
    let r = tools.call("read", &read_args(&missing, "")).await;
    assert_eq!(
        failure(&r),
        (
            Some("FS_NOT_FOUND"),
            format!("cannot read \"{}\": not found", missing.display()).as_str()
        )
    );
    assert_eq!(
        tools.result_card("read", &read_args(&missing, ""), &r),
        ResultView::generic(&r.summary())
    );
}

#[tokio::test]
async fn read_argument_rules() {
    let tools = Tools::new();
    let cases = [
        (
            r#"{"file_path":"a","offset":0}"#,
            Some("INVALID_ARGS"),
            r#"invalid arguments: "offset" must be at least 1"#,
        ),
        (
            r#"{"file_path":"a","limit":2001}"#,
            Some("INVALID_ARGS"),
            r#"invalid arguments: "limit" must be at most 2000"#,
        ),
        (
            r#"{"file_path":"a","offset":1.5}"#,
            Some("INVALID_ARGS"),
            r#"invalid arguments: "offset" must be an integer"#,
        ),
        (
            r#"{"file_path":""}"#,
            Some("INVALID_ARGS"),
            r#"invalid arguments: "file_path" must be at least 1 characters long"#,
        ),
        (
            r#"{"file_path":"  \t"}"#,
            None,
            "file_path must be a non-empty string",
        ),
    ];
    for (args, code, message) in cases {
        let r = tools.call("read", args).await;
        assert_eq!(failure(&r), (code, message), "{args}");
    }
    for (tool, args) in [
        ("write", r#"{"file_path":"   ","content":"x"}"#),
        (
            "edit",
            r#"{"file_path":" ","old_string":"a","new_string":"b"}"#,
        ),
    ] {
        let r = tools.call(tool, args).await;
        assert_eq!(
            failure(&r),
            (None, "file_path must be a non-empty string"),
            "{tool}"
        );
    }
}

#[test]
fn concurrency_classification() {
    let tools = Tools::new();
    let safe = |name: &str, args: &str| {
        tools
            .registry
            .view()
            .get(name)
            .expect("registered")
            .erased()
            .is_concurrency_safe(&v(args))
    };
    assert!(safe("read", r#"{"file_path":"a"}"#));
    assert!(safe("grep", r#"{"pattern":"a"}"#));
    assert!(safe("glob", r#"{"pattern":"*"}"#));
    assert!(!safe("write", r#"{"file_path":"a","content":""}"#));
    assert!(!safe(
        "edit",
        r#"{"file_path":"a","old_string":"x","new_string":"y"}"#
    ));
    let def = |name: &str| {
        tools
            .registry
            .view()
            .get(name)
            .expect("registered")
            .definition()
            .annotations
    };
    assert!(def("read").read_only && !def("read").destructive);
    assert!(def("write").destructive && !def("write").read_only);
    assert!(def("edit").destructive);
}

// ---- write -----------------------------------------------------------------------------

#[tokio::test]
async fn write_creates_files_and_parent_directories() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("new/deep/hello.txt");
    let tools = Tools::new();
    let args = format!(
        r#"{{"file_path":{},"content":"hello\r\nworld\r\n"}}"#,
        q(&file)
    );
    let r = tools.call("write", &args).await;
    let path = file.to_str().unwrap();

    // The file gets the content byte for byte; the value shows it LF-normalized.
    assert_eq!(std::fs::read(&file).unwrap(), b"hello\r\nworld\r\n");
    assert_eq!(
        value(&r),
        &v(&format!(
            r#"{{"path":{},"operation":"create","after":"hello\nworld\n"}}"#,
            q(&file)
        ))
    );
    assert_eq!(r.text(), envelope(&file, "Created file"));
    assert_eq!(r.summary().meta, Some(v(r#"{"diffs":[]}"#)));
    assert_eq!(
        tools.call_card("write", &args),
        CallView::Diff {
            title: format!("Write {path}"),
            diffs: vec![FileDiff::create(path, "hello\r\nworld\r\n")],
            locations: Some(vec![FileLocation::new(path)]),
        }
    );
    assert_eq!(
        tools.result_card("write", &args, &r),
        ResultView::diff(vec![FileDiff::create(path, "hello\r\nworld\r\n")])
    );
}

#[tokio::test]
async fn write_update_reports_applied_hunks_and_keeps_the_mode() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("list.sh");
    let before: String = (1..=12).map(|n| format!("{n}\n")).collect();
    write(&file, &before);
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o750)).unwrap();
    let after = before.replace("6\n", "six\n");
    let tools = Tools::new();
    let args = format!(
        r#"{{"file_path":{},"content":{}}}"#,
        q(&file),
        serde_json::to_string(&after).unwrap()
    );
    let r = tools.call("write", &args).await;
    let path = file.to_str().unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), after);
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o750);
    assert_eq!(value(&r)["operation"].as_str(), Some("update"));
    assert_eq!(value(&r)["before"].as_str(), Some(before.as_str()));
    assert_eq!(r.text(), envelope(&file, "Updated file"));
    let hunk = FileDiff::update(path, "3\n4\n5\n6\n7\n8\n9", "3\n4\n5\nsix\n7\n8\n9");
    assert_eq!(
        r.summary().meta,
        Some(v(&format!(
            r#"{{"diffs":[{{"path":{},"oldText":"3\n4\n5\n6\n7\n8\n9","newText":"3\n4\n5\nsix\n7\n8\n9"}}]}}"#,
            q(&file)
        )))
    );
    assert_eq!(
        tools.result_card("write", &args, &r),
        ResultView::diff(vec![hunk])
    );

    // Replacing a binary file: no text before, still an update.
    let bin = dir.path().join("b.dat");
    write(&bin, b"\x00\x01");
    let r = tools
        .call(
            "write",
            &format!(r#"{{"file_path":{},"content":"text"}}"#, q(&bin)),
        )
        .await;
    assert_eq!(value(&r)["operation"].as_str(), Some("update"));
    assert!(value(&r)["before"].is_null());
}

#[tokio::test]
async fn write_refuses_a_directory_and_writes_through_links() {
    let dir = tempfile::tempdir().unwrap();
    let tools = Tools::new();
    let r = tools
        .call(
            "write",
            &format!(r#"{{"file_path":{},"content":"x"}}"#, q(dir.path())),
        )
        .await;
    assert_eq!(
        failure(&r),
        (
            Some("FS_NOT_REGULAR_FILE"),
            format!(
                "cannot write \"{}\": not a regular file",
                dir.path().display()
            )
            .as_str()
        )
    );
    let r = tools.call("write", r#"{"file_path":"x"}"#).await;
    assert_eq!(failure(&r).0, Some("INVALID_ARGS"));

    // Through a symbolic link: the target changes, the link stays a link.
    let target = dir.path().join("real.txt");
    write(&target, "old\n");
    let link = dir.path().join("link.txt");
    std::os::unix::fs::symlink("real.txt", &link).unwrap();
    let r = tools
        .call(
            "write",
            &format!(r#"{{"file_path":{},"content":"new\n"}}"#, q(&link)),
        )
        .await;
    assert_eq!(value(&r)["path"].as_str(), link.to_str());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "new\n");
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
}

#[tokio::test]
async fn a_failed_write_leaves_the_file_whole() {
    let dir = tempfile::tempdir().unwrap();
    let tools = Tools::new();
    // The parent "directory" is a file: nothing can be created there.
    let blocker = dir.path().join("blocker");
    write(&blocker, "keep\n");
    let r = tools
        .call(
            "write",
            &format!(
                r#"{{"file_path":{},"content":"x"}}"#,
                q(&blocker.join("child.txt"))
            ),
        )
        .await;
    assert!(r.is_error(), "{r:?}");
    assert_eq!(std::fs::read_to_string(&blocker).unwrap(), "keep\n");
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["blocker"]);
    // (A failure half-way through writing the content is simulated in the unit tests of
    // `scope`, with a writer that fails after part of the content.)
}

// ---- edit ------------------------------------------------------------------------------

fn edit_args(path: &Path, old: &str, new: &str, extra: &str) -> String {
    format!(
        r#"{{"file_path":{},"old_string":{},"new_string":{}{extra}}}"#,
        q(path),
        serde_json::to_string(old).unwrap(),
        serde_json::to_string(new).unwrap()
    )
}

#[tokio::test]
async fn edit_replaces_a_unique_occurrence() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("lib.rs");
    write(&file, "fn a() {}\nfn b() {}\nfn c() {}\n");
    let tools = Tools::new();
    let args = edit_args(&file, "fn b() {}", "fn b() { todo!() }", "");
    let r = tools.call("edit", &args).await;
    let path = file.to_str().unwrap();
    let after = "fn a() {}\nfn b() { todo!() }\nfn c() {}\n";
    assert_eq!(std::fs::read_to_string(&file).unwrap(), after);
    assert_eq!(
        value(&r),
        &v(&format!(
            r#"{{"path":{},"before":"fn a() {{}}\nfn b() {{}}\nfn c() {{}}\n","after":{}}}"#,
            q(&file),
            serde_json::to_string(after).unwrap()
        ))
    );
    assert_eq!(
        r.text(),
        format!("The file {path} has been updated successfully.")
    );
    assert_eq!(
        tools.call_card("edit", &args),
        CallView::Diff {
            title: format!("Edit {path}"),
            diffs: vec![FileDiff::update(path, "fn b() {}", "fn b() { todo!() }")],
            locations: Some(vec![FileLocation::new(path)]),
        }
    );
    assert_eq!(
        tools.result_card("edit", &args, &r),
        ResultView::diff(vec![FileDiff::update(
            path,
            "fn a() {}\nfn b() {}\nfn c() {}",
            "fn a() {}\nfn b() { todo!() }\nfn c() {}"
        )])
    );
}

#[tokio::test]
async fn edit_refuses_missing_and_ambiguous_text() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("x.txt");
    let original = "x = 1\nx = 1\nx = 1\n";
    write(&file, original);
    let tools = Tools::new();
    let path = file.to_str().unwrap();

    let r = tools
        .call("edit", &edit_args(&file, "y = 1", "y = 2", ""))
        .await;
    assert_eq!(
        failure(&r),
        (
            Some("FS_EDIT_NOT_FOUND"),
            format!("old_string was not found in \"{path}\"").as_str()
        )
    );
    let r = tools
        .call("edit", &edit_args(&file, "x = 1", "x = 2", ""))
        .await;
    assert_eq!(
        failure(&r),
        (
            Some("FS_AMBIGUOUS_EDIT"),
            format!("old_string matched 3 times in \"{path}\"; provide a more specific old_string or set replace_all to true").as_str()
        )
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);

    let r = tools
        .call(
            "edit",
            &edit_args(&file, "x = 1", "x = 2", r#","replace_all":true"#),
        )
        .await;
    assert_eq!(
        r.text(),
        format!("The file {path} has been updated. All occurrences were successfully replaced.")
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "x = 2\nx = 2\nx = 2\n"
    );
}

#[tokio::test]
async fn edit_matches_lf_text_in_crlf_files_and_keeps_crlf() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("win.txt");
    write(&file, "one\r\ntwo\r\nthree\r\n");
    let tools = Tools::new();
    let r = tools
        .call("edit", &edit_args(&file, "one\ntwo", "uno\ndos\ntres", ""))
        .await;
    assert_eq!(value(&r)["before"].as_str(), Some("one\ntwo\nthree\n"));
    assert_eq!(value(&r)["after"].as_str(), Some("uno\ndos\ntres\nthree\n"));
    assert_eq!(
        std::fs::read(&file).unwrap(),
        b"uno\r\ndos\r\ntres\r\nthree\r\n"
    );
}

#[tokio::test]
async fn edit_refuses_files_that_are_not_text_and_leaves_them_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let tools = Tools::new();
    let latin1 = dir.path().join("latin1.txt");
    write(&latin1, b"caf\xe9 au lait\n");
    let r = tools
        .call("edit", &edit_args(&latin1, "au", "with", ""))
        .await;
    assert_eq!(
        failure(&r),
        (
            Some("FS_NOT_TEXT"),
            format!("cannot edit \"{}\": invalid UTF-8 text", latin1.display()).as_str()
        )
    );
    assert_eq!(std::fs::read(&latin1).unwrap(), b"caf\xe9 au lait\n");

    // A NUL byte anywhere, even far past the start.
    let late = dir.path().join("late.txt");
    let mut bytes = "text\n".repeat(10_000).into_bytes();
    bytes.push(0);
    write(&late, &bytes);
    let r = tools
        .call(
            "edit",
            &edit_args(&late, "text", "TEXT", r#","replace_all":true"#),
        )
        .await;
    assert_eq!(failure(&r).0, Some("FS_NOT_TEXT"));
    assert_eq!(std::fs::read(&late).unwrap(), bytes);

    let missing = dir.path().join("missing.txt");
    let r = tools.call("edit", &edit_args(&missing, "a", "b", "")).await;
    assert_eq!(
        failure(&r),
        (
            Some("FS_NOT_FOUND"),
            format!("cannot edit \"{}\": not found", missing.display()).as_str()
        )
    );
    assert!(!missing.exists());
}

#[tokio::test]
async fn edit_results_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let tools = Tools::new();
    // One MiB of `a`, each replaced by 100 characters: a 100 MiB result is refused.
    let file = dir.path().join("big.txt");
    let original = "a".repeat(1 << 20);
    write(&file, &original);
    let r = tools
        .call(
            "edit",
            &edit_args(&file, "a", &"b".repeat(100), r#","replace_all":true"#),
        )
        .await;
    let (code, message) = failure(&r);
    assert_eq!(code, Some("FS_TOO_LARGE"));
    assert!(message.len() < 300, "{message}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);

    // A smaller one goes through, and its meta stays bounded.
    let lines: String = (0..20_000).map(|n| format!("line {n}\n")).collect();
    write(&file, &lines);
    let r = tools
        .call(
            "edit",
            &edit_args(&file, "line", "LINE", r#","replace_all":true"#),
        )
        .await;
    assert!(r.is_success(), "{r:?}");
    let meta = serde_json::to_string(&r.summary().meta).unwrap();
    assert!(meta.len() < 80 * 1024, "meta is {} bytes", meta.len());
}

#[tokio::test]
async fn edit_argument_rules() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("x.txt");
    write(&file, "same\n");
    let tools = Tools::new();
    let r = tools
        .call("edit", &edit_args(&file, "same", "same", ""))
        .await;
    assert_eq!(
        failure(&r),
        (
            Some("INVALID_ARGS"),
            "invalid arguments: old_string and new_string must differ"
        )
    );
    let r = tools.call("edit", &edit_args(&file, "", "x", "")).await;
    assert_eq!(
        failure(&r),
        (
            Some("INVALID_ARGS"),
            r#"invalid arguments: "old_string" must be at least 1 characters long"#
        )
    );
}

#[test]
fn stale_arguments_give_generic_cards() {
    let tools = Tools::new();
    // An older edit tool called these `path`, `old` and `new`.
    let stale = r#"{"path":"a.txt","old":"x","new":"y"}"#;
    assert_eq!(
        tools.call_card("edit", stale),
        CallView::generic("edit", Some(v(stale)))
    );
    let stale = r#"{"path":"a.txt","text":"x"}"#;
    assert_eq!(
        tools.call_card("write", stale),
        CallView::generic("write", Some(v(stale)))
    );
}

// ---- nothing lost ----------------------------------------------------------------------

/// CRLF pairs as LF.
fn norm(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n') {
            i += 1;
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

fn count(haystack: &[u8], needle: &[u8]) -> usize {
    let (mut n, mut i) = (0, 0);
    while i + needle.len() <= haystack.len() {
        if &haystack[i..i + needle.len()] == needle {
            n += 1;
            i += needle.len();
        } else {
            i += 1;
        }
    }
    n
}

/// Whether `after` is `before` with some non-overlapping spans, each of which reads as `old`
/// once CRLF pairs are taken as LF, replaced by `replacement`, and every other byte kept
/// (exactly one span unless `all`).
fn is_splice(before: &[u8], after: &[u8], old: &[u8], replacement: &[u8], all: bool) -> bool {
    fn go(
        b: &[u8],
        a: &[u8],
        old: &[u8],
        r: &[u8],
        all: bool,
        reps: usize,
        memo: &mut std::collections::HashMap<(usize, usize, usize), bool>,
    ) -> bool {
        if b.is_empty() && a.is_empty() {
            return reps == 1 || (all && reps >= 1);
        }
        let key = (b.len(), a.len(), reps.min(2));
        if let Some(&known) = memo.get(&key) {
            return known;
        }
        let mut ok = !b.is_empty()
            && !a.is_empty()
            && b[0] == a[0]
            && go(&b[1..], &a[1..], old, r, all, reps, memo);
        if !ok && (all || reps == 0) && a.starts_with(r) {
            for k in 1..=b.len() {
                if norm(&b[..k]) == old
                    && go(&b[k..], &a[r.len()..], old, r, all, (reps + 1).min(2), memo)
                {
                    ok = true;
                    break;
                }
            }
        }
        memo.insert(key, ok);
        ok
    }
    go(
        before,
        after,
        old,
        replacement,
        all,
        0,
        &mut Default::default(),
    )
}

fn text_from(alphabet: &'static [&'static str], max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(alphabet), 0..max).prop_map(|parts| parts.concat())
}

const FILE_ALPHABET: &[&str] = &["a", "b", "\r", "\n", "\r\n", "é", "\u{feff}", " "];
const EDIT_ALPHABET: &[&str] = &["a", "b", "\r", "\n", "\r\n", "é"];

fn file_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..40),
        text_from(FILE_ALPHABET, 24).prop_map(String::into_bytes),
        (
            text_from(FILE_ALPHABET, 12),
            any::<u8>(),
            text_from(FILE_ALPHABET, 12)
        )
            .prop_map(|(a, byte, b)| [a.as_bytes(), &[byte], b.as_bytes()].concat()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// For any file bytes and any edit, either the edit applies exactly to the matched span(s)
    /// with every other byte unchanged, or the file is untouched (and nothing else is left in
    /// its directory).
    #[test]
    fn an_edit_changes_the_matched_span_or_nothing(
        bytes in file_bytes(),
        old in text_from(EDIT_ALPHABET, 4).prop_filter("non-empty", |s| !s.is_empty()),
        new in text_from(EDIT_ALPHABET, 4),
        all in any::<bool>(),
    ) {
        prop_assume!(old != new);
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.txt");
        std::fs::write(&file, &bytes).unwrap();
        let tools = Tools::new();
        let extra = if all { r#","replace_all":true"# } else { "" };
        let r = runtime.block_on(tools.call("edit", &edit_args(&file, &old, &new, extra)));
        let after = std::fs::read(&file).unwrap();
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        prop_assert_eq!(names, vec![std::ffi::OsString::from("f.txt")]);

        // What must happen: text without NUL, with the normalized old text present (once,
        // unless replace_all) after any byte-order mark, is edited; anything else is not.
        let text = std::str::from_utf8(&bytes).ok().filter(|_| !bytes.contains(&0));
        let body = text.map(|t| t.strip_prefix('\u{feff}').unwrap_or(t));
        let old_norm = norm(old.as_bytes());
        let hits = body.map_or(0, |b| count(&norm(b.as_bytes()), &old_norm));
        let should_apply = hits == 1 || (all && hits > 1);
        if !should_apply {
            prop_assert!(r.is_error(), "{:?}", r);
            prop_assert_eq!(&after, &bytes, "a refused edit changed the file");
            return Ok(());
        }
        prop_assert!(r.is_success(), "{:?}", r);
        let lf = norm(new.as_bytes());
        let crlf: Vec<u8> = String::from_utf8(lf.clone()).unwrap().replace('\n', "\r\n").into_bytes();
        prop_assert!(
            is_splice(&bytes, &after, &old_norm, &lf, all) || is_splice(&bytes, &after, &old_norm, &crlf, all),
            "{:?} -> {:?} is not a splice of {:?} by {:?}",
            String::from_utf8_lossy(&bytes), String::from_utf8_lossy(&after), old, new
        );
    }
}

#[tokio::test]
async fn edit_keeps_the_owner_and_mode_of_the_file() {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("owned.txt");
    write(&file, "one\n");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o604)).unwrap();
    // Give the file away when the process may (as root); otherwise it stays ours. Either way
    // the edit must not change it.
    let _ = std::os::unix::fs::chown(&file, Some(4321), Some(4321));
    let before = std::fs::metadata(&file).unwrap();
    let tools = Tools::new();
    let r = tools
        .call("edit", &edit_args(&file, "one", "two", ""))
        .await;
    assert!(r.is_success(), "{r:?}");
    let after = std::fs::metadata(&file).unwrap();
    assert_ne!(
        before.ino(),
        after.ino(),
        "replaced by rename, not written in place"
    );
    assert_eq!((after.uid(), after.gid()), (before.uid(), before.gid()));
    assert_eq!(after.mode() & 0o7777, 0o604);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "two\n");
}

// ---- edit against concurrent writers, and what a replaced file keeps ----------------------

#[tokio::test]
async fn edit_loses_no_concurrent_append() {
    use std::io::Write as _;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("log.txt");
    write(&file, "counter: 0\n");
    let tools = Tools::confined(dir.path());
    let done = Arc::new(AtomicBool::new(false));
    let appender = {
        let (file, done) = (file.clone(), done.clone());
        std::thread::spawn(move || {
            let started = std::time::Instant::now();
            let mut n = 0u32;
            // Bounded in count and time; each append opens the file anew, like `>>`.
            while !done.load(Ordering::Relaxed)
                && n < 20_000
                && started.elapsed() < std::time::Duration::from_secs(60)
            {
                let mut f = std::fs::OpenOptions::new()
                    .append(true)
                    .open(&file)
                    .unwrap();
                // One write per line, as `echo ... >>` makes.
                f.write_all(format!("append {n}\n").as_bytes()).unwrap();
                n += 1;
            }
            n
        })
    };
    let (mut counter, mut refused) = (0u32, 0u32);
    for _ in 0..150 {
        let args = format!(
            r#"{{"file_path":"log.txt","old_string":"counter: {counter}\n","new_string":"counter: {}\n"}}"#,
            counter + 1
        );
        let r = tools.call("edit", &args).await;
        match r.message() {
            None => counter += 1,
            Some(message) => {
                assert_eq!(r.code_str(), Some("FS_STALE_VERSION"), "{message}");
                refused += 1;
            }
        }
    }
    done.store(true, Ordering::Relaxed);
    let appended = appender.join().unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: std::collections::HashSet<&str> = text.lines().collect();
    let lost: Vec<u32> = (0..appended)
        .filter(|n| !lines.contains(format!("append {n}").as_str()))
        .collect();
    // A change up to the rename is detected (the edit is redone or refused), and appends
    // that reach the replaced file after it are carried over (see `dsh_tools::scope`).
    // Without the check, more than half of the lines were lost.
    assert!(
        lost.is_empty(),
        "{} of {appended} appended lines lost ({counter} edits applied, {refused} refused): {:?}",
        lost.len(),
        &lost[..lost.len().min(10)]
    );
    assert!(
        text.starts_with(&format!("counter: {counter}\n")),
        "{}",
        &text[..40]
    );
    assert!(counter > 0, "no edit was applied ({refused} refused)");
}

/// Set the extended attribute `name` of `path`; the OS error when it cannot.
#[allow(unsafe_code)]
fn set_xattr(path: &Path, name: &str, value: &[u8]) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt as _;
    let p = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    let n = std::ffi::CString::new(name).unwrap();
    // SAFETY: valid NUL-terminated strings and a buffer with its length.
    let rc = unsafe {
        libc::setxattr(
            p.as_ptr(),
            n.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The extended attribute `name` of `path`, if it has it.
#[allow(unsafe_code)]
fn get_xattr(path: &Path, name: &str) -> Option<Vec<u8>> {
    use std::os::unix::ffi::OsStrExt as _;
    let p = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    let n = std::ffi::CString::new(name).unwrap();
    let mut buf = vec![0u8; 4096];
    // SAFETY: valid NUL-terminated strings and a buffer with its length.
    let rc = unsafe { libc::getxattr(p.as_ptr(), n.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    let len = usize::try_from(rc).ok()?;
    buf.truncate(len);
    Some(buf)
}

#[tokio::test]
async fn edit_and_write_keep_mode_and_extended_attributes() {
    use std::os::unix::fs::PermissionsExt as _;
    // A file system with user extended attributes: the temporary directory, or else the
    // target directory.
    let mut tried = Vec::new();
    let mut found = None;
    for base in [
        std::env::temp_dir(),
        Path::new(env!("CARGO_TARGET_TMPDIR")).to_path_buf(),
    ] {
        std::fs::create_dir_all(&base).unwrap();
        let dir = tempfile::tempdir_in(&base).unwrap();
        let probe = dir.path().join("probe");
        write(&probe, "x");
        match set_xattr(&probe, "user.test", b"probe") {
            Ok(()) => {
                found = Some(dir);
                break;
            }
            Err(e) => tried.push(format!("{}: {e}", base.display())),
        }
    }
    let dir = found.unwrap_or_else(|| {
        panic!(
            "no directory with user extended attributes: {}",
            tried.join("; ")
        )
    });
    let file = dir.path().join("keep.txt");
    write(&file, "alpha beta\n");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    set_xattr(&file, "user.test", b"kept value").unwrap();
    let tools = Tools::confined(dir.path());
    let r = tools
        .call(
            "edit",
            r#"{"file_path":"keep.txt","old_string":"beta","new_string":"gamma"}"#,
        )
        .await;
    assert!(r.is_success(), "{r:?}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "alpha gamma\n");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
    assert_eq!(
        get_xattr(&file, "user.test").as_deref(),
        Some(&b"kept value"[..])
    );
    let r = tools
        .call("write", r#"{"file_path":"keep.txt","content":"new\n"}"#)
        .await;
    assert!(r.is_success(), "{r:?}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "new\n");
    assert_eq!(
        get_xattr(&file, "user.test").as_deref(),
        Some(&b"kept value"[..])
    );
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
}
