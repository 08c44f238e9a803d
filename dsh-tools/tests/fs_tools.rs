//! `read`, `write` and `edit` against real files, through a registry (the full pipeline):
//! values, rendered content, cards (live and from the persisted summary), error codes.

mod support;

use dsh_runtime::present::{
    CallView, FileDiff, FileLocation, ReadLine, ReadView, ResultView, ToolCallKind,
};
use support::{Tools, failure, q, v, value, write};

// ---- read ------------------------------------------------------------------------------

#[tokio::test]
async fn read_whole_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("main.rs");
    write(&file, "fn main() {\n    println!(\"hi\");\n}\n");
    let tools = Tools::new();
    let args = format!(r#"{{"file_path":{}}}"#, q(&file));
    let r = tools.call("read", &args).await;

    let path = file.to_str().unwrap();
    assert_eq!(
        value(&r),
        &v(&format!(
            r#"{{"path":{},"offset":1,"lines":[{{"number":1,"text":"fn main() {{"}},{{"number":2,"text":"    println!(\"hi\");"}},{{"number":3,"text":"}}"}}],"totalLines":3}}"#,
            q(&file)
        ))
    );
    assert_eq!(
        r.text(),
        "     1\tfn main() {\n     2\t    println!(\"hi\");\n     3\t}"
    );
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
    .with_lang("rust")
    .into();
    assert_eq!(tools.result_card("read", &args, &r), expected);
    assert_eq!(
        tools.call_card("read", &args),
        CallView::Generic {
            title: format!("Read {path}"),
            kind: Some(ToolCallKind::Read),
            raw_input: None,
            content: None,
            locations: Some(vec![FileLocation::new(path)]),
        }
    );
}

#[tokio::test]
async fn read_window_and_paging_hint() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.txt");
    write(&file, "one\ntwo\nthree\nfour\nfive\n");
    let tools = Tools::new();
    let args = format!(r#"{{"file_path":{},"offset":3,"limit":2}}"#, q(&file));
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
        "     3\tthree\n     4\tfour\n(lines 3-4 of 5; continue with offset=5)"
    );
    // The call card points at the first line read; txt has no language hint.
    match tools.call_card("read", &args) {
        CallView::Generic { locations, .. } => assert_eq!(
            locations,
            Some(vec![FileLocation::new(file.to_str().unwrap()).at_line(3)])
        ),
        other => panic!("{other:?}"),
    }
    match tools.result_card("read", &args, &r) {
        ResultView::Read(view) => {
            assert_eq!(view.lang, None);
            assert_eq!(view.offset, 3);
            assert_eq!(view.lines.len(), 2);
        }
        other => panic!("{other:?}"),
    }

    // The last page says where it started, with no hint to continue.
    let args = format!(r#"{{"file_path":{},"offset":4}}"#, q(&file));
    let r = tools.call("read", &args).await;
    assert_eq!(r.text(), "     4\tfour\n     5\tfive\n(lines 4-5 of 5)");
}

#[tokio::test]
async fn read_past_the_end_keeps_the_offset() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("short.md");
    write(&file, "a\nb");
    let tools = Tools::new();
    let args = format!(r#"{{"file_path":{},"offset":10}}"#, q(&file));
    let r = tools.call("read", &args).await;
    assert_eq!(value(&r)["lines"], v("[]"));
    assert_eq!(value(&r)["totalLines"].as_u64(), Some(2));
    assert_eq!(
        r.text(),
        "(offset 10 is past the end of the file, which has 2 lines)"
    );
    match tools.result_card("read", &args, &r) {
        ResultView::Read(view) => {
            assert_eq!((view.offset, view.total_lines), (10, 2));
            assert!(view.lines.is_empty());
            assert_eq!(view.lang.as_deref(), Some("markdown"));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn read_line_endings_empty_files_and_bad_utf8() {
    let dir = tempfile::tempdir().unwrap();
    let tools = Tools::new();

    let crlf = dir.path().join("crlf.txt");
    write(&crlf, "a\r\nb\r\nlast");
    let r = tools
        .call("read", &format!(r#"{{"file_path":{}}}"#, q(&crlf)))
        .await;
    assert_eq!(
        value(&r)["lines"],
        v(r#"[{"number":1,"text":"a"},{"number":2,"text":"b"},{"number":3,"text":"last"}]"#)
    );

    let empty = dir.path().join("empty.txt");
    write(&empty, "");
    let r = tools
        .call("read", &format!(r#"{{"file_path":{}}}"#, q(&empty)))
        .await;
    assert_eq!(value(&r)["totalLines"].as_u64(), Some(0));
    assert_eq!(r.text(), "(empty file)");

    let latin1 = dir.path().join("latin1.txt");
    write(&latin1, b"caf\xe9\n");
    let r = tools
        .call("read", &format!(r#"{{"file_path":{}}}"#, q(&latin1)))
        .await;
    assert_eq!(value(&r)["lines"][0]["text"].as_str(), Some("caf\u{fffd}"));
}

#[tokio::test]
async fn read_renders_long_lines_cut_but_keeps_them_in_the_value() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("min.js");
    let long = "x".repeat(2500);
    write(&file, &long);
    let tools = Tools::new();
    let r = tools
        .call("read", &format!(r#"{{"file_path":{}}}"#, q(&file)))
        .await;
    assert_eq!(value(&r)["lines"][0]["text"].as_str(), Some(long.as_str()));
    assert_eq!(r.text(), format!("     1\t{}…", "x".repeat(2000)));
}

#[tokio::test]
async fn read_rejects_bad_arguments_by_schema() {
    let tools = Tools::new();
    let cases = [
        (
            r#"{"file_path":"a","offset":0}"#,
            r#"invalid arguments: "offset" must be at least 1"#,
        ),
        (
            r#"{"file_path":"a","limit":2001}"#,
            r#"invalid arguments: "limit" must be at most 2000"#,
        ),
        (
            r#"{"file_path":"a","limit":0}"#,
            r#"invalid arguments: "limit" must be at least 1"#,
        ),
        (
            r#"{"file_path":""}"#,
            r#"invalid arguments: "file_path" must be at least 1 characters long"#,
        ),
        (
            r#"{"path":"a"}"#,
            // The parameter root is open: `path` is ignored (and named in a context).
            r#"invalid arguments: missing required property "file_path""#,
        ),
        (
            r#"{"file_path":"a","offset":1.5}"#,
            r#"invalid arguments: "offset" must be an integer"#,
        ),
    ];
    for (args, message) in cases {
        let r = tools.call("read", args).await;
        assert_eq!(failure(&r), (Some("INVALID_ARGS"), message), "{args}");
    }
}

#[tokio::test]
async fn read_errors_are_coded() {
    let dir = tempfile::tempdir().unwrap();
    let tools = Tools::new();

    let missing = dir.path().join("missing.txt");
    let r = tools
        .call("read", &format!(r#"{{"file_path":{}}}"#, q(&missing)))
        .await;
    assert_eq!(
        failure(&r),
        (
            Some("FS_NOT_FOUND"),
            format!("no such file or directory: {}", missing.display()).as_str()
        )
    );
    // A failed read has no read card: the generic card shows the error content.
    let args = format!(r#"{{"file_path":{}}}"#, q(&missing));
    assert_eq!(
        tools.result_card("read", &args, &r),
        ResultView::generic(&r.summary())
    );

    let r = tools
        .call("read", &format!(r#"{{"file_path":{}}}"#, q(dir.path())))
        .await;
    assert_eq!(
        failure(&r),
        (
            Some("FS_IS_DIRECTORY"),
            format!(
                "{} is a directory, not a file (use glob to list files)",
                dir.path().display()
            )
            .as_str()
        )
    );

    let bin = dir.path().join("blob.bin");
    write(&bin, b"PK\x03\x04\x00\x00rest");
    let r = tools
        .call("read", &format!(r#"{{"file_path":{}}}"#, q(&bin)))
        .await;
    assert_eq!(
        failure(&r),
        (
            Some("FS_BINARY"),
            format!(
                "{} looks like a binary file (it contains NUL bytes)",
                bin.display()
            )
            .as_str()
        )
    );
}

#[test]
fn concurrency_classification() {
    let tools = Tools::new();
    let safe = |name: &str, args: &str| {
        tools
            .registry
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
    // Invalid arguments are never classified as safe.
    assert!(!safe("read", r#"{"file":"a"}"#));

    let def = |name: &str| {
        tools
            .registry
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
    let args = format!(r#"{{"file_path":{},"content":"hello\nworld\n"}}"#, q(&file));
    let r = tools.call("write", &args).await;
    let path = file.to_str().unwrap();

    assert_eq!(std::fs::read_to_string(&file).unwrap(), "hello\nworld\n");
    assert_eq!(
        value(&r),
        &v(&format!(
            r#"{{"path":{},"operation":"create","before":null,"after":"hello\nworld\n"}}"#,
            q(&file)
        ))
    );
    assert_eq!(r.text(), format!("Created {path} (2 lines)."));
    assert_eq!(
        tools.call_card("write", &args),
        CallView::Diff {
            title: format!("Write {path}"),
            diffs: vec![FileDiff::create(path, "hello\nworld\n")],
            locations: Some(vec![FileLocation::new(path)]),
        }
    );
    assert_eq!(
        tools.result_card("write", &args, &r),
        ResultView::diff(vec![FileDiff::create(path, "hello\nworld\n")])
    );
}

#[tokio::test]
async fn write_update_reports_applied_hunks() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("list.txt");
    let before: String = (1..=12).map(|n| format!("{n}\n")).collect();
    write(&file, &before);
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
    assert_eq!(value(&r)["operation"].as_str(), Some("update"));
    assert_eq!(value(&r)["before"].as_str(), Some(before.as_str()));
    assert_eq!(r.text(), format!("Updated {path} (+1 -1 lines)."));
    // Meta carries the hunk with three lines of context, and no copy of the value.
    assert_eq!(
        r.summary().meta,
        Some(v(&format!(
            r#"{{"diffs":[{{"path":{},"oldText":"3\n4\n5\n6\n7\n8\n9\n","newText":"3\n4\n5\nsix\n7\n8\n9\n"}}]}}"#,
            q(&file)
        )))
    );
    assert_eq!(
        tools.result_card("write", &args, &r),
        ResultView::diff(vec![FileDiff::update(
            path,
            "3\n4\n5\n6\n7\n8\n9\n",
            "3\n4\n5\nsix\n7\n8\n9\n"
        )])
    );
}

#[tokio::test]
async fn write_refuses_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let tools = Tools::new();
    let r = tools
        .call(
            "write",
            &format!(r#"{{"file_path":{},"content":"x"}}"#, q(dir.path())),
        )
        .await;
    assert_eq!(failure(&r).0, Some("FS_IS_DIRECTORY"));
    let r = tools.call("write", r#"{"file_path":"x"}"#).await;
    assert_eq!(
        failure(&r),
        (
            Some("INVALID_ARGS"),
            r#"invalid arguments: missing required property "content""#
        )
    );
}

// ---- edit ------------------------------------------------------------------------------

#[tokio::test]
async fn edit_replaces_a_unique_occurrence() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("lib.rs");
    write(&file, "fn a() {}\nfn b() {}\nfn c() {}\n");
    let tools = Tools::new();
    let args = format!(
        r#"{{"file_path":{},"old_string":"fn b() {{}}","new_string":"fn b() {{ todo!() }}"}}"#,
        q(&file)
    );
    let r = tools.call("edit", &args).await;
    let path = file.to_str().unwrap();
    let after = "fn a() {}\nfn b() { todo!() }\nfn c() {}\n";
    assert_eq!(std::fs::read_to_string(&file).unwrap(), after);
    assert_eq!(
        value(&r),
        &v(&format!(
            r#"{{"path":{},"before":"fn a() {{}}\nfn b() {{}}\nfn c() {{}}\n","after":{},"replacements":1}}"#,
            q(&file),
            serde_json::to_string(after).unwrap()
        ))
    );
    assert_eq!(
        r.text(),
        format!("Edited {path}: replaced 1 occurrence (+1 -1 lines).")
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
            "fn a() {}\nfn b() {}\nfn c() {}\n",
            after
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
        .call(
            "edit",
            &format!(
                r#"{{"file_path":{},"old_string":"y = 1","new_string":"y = 2"}}"#,
                q(&file)
            ),
        )
        .await;
    assert_eq!(
        failure(&r),
        (
            Some("EDIT_NO_MATCH"),
            format!("old_string was not found in {path}").as_str()
        )
    );

    let r = tools
        .call(
            "edit",
            &format!(
                r#"{{"file_path":{},"old_string":"x = 1","new_string":"x = 2"}}"#,
                q(&file)
            ),
        )
        .await;
    assert_eq!(
        failure(&r),
        (
            Some("EDIT_AMBIGUOUS"),
            format!("old_string occurs 3 times in {path}; include more surrounding text to make it unique, or set replace_all").as_str()
        )
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);

    let r = tools
        .call(
            "edit",
            &format!(
                r#"{{"file_path":{},"old_string":"x = 1","new_string":"x = 2","replace_all":true}}"#,
                q(&file)
            ),
        )
        .await;
    assert_eq!(value(&r)["replacements"].as_u64(), Some(3));
    assert_eq!(
        r.text(),
        format!("Edited {path}: replaced 3 occurrences (+3 -3 lines).")
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "x = 2\nx = 2\nx = 2\n"
    );
}

#[tokio::test]
async fn edit_argument_rules() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("x.txt");
    write(&file, "same\n");
    let tools = Tools::new();

    let r = tools
        .call(
            "edit",
            &format!(
                r#"{{"file_path":{},"old_string":"same","new_string":"same"}}"#,
                q(&file)
            ),
        )
        .await;
    assert_eq!(
        failure(&r),
        (
            Some("INVALID_ARGS"),
            "invalid arguments: old_string and new_string must differ"
        )
    );

    let r = tools
        .call(
            "edit",
            &format!(
                r#"{{"file_path":{},"old_string":"","new_string":"x"}}"#,
                q(&file)
            ),
        )
        .await;
    assert_eq!(
        failure(&r),
        (
            Some("INVALID_ARGS"),
            r#"invalid arguments: "old_string" must be at least 1 characters long"#
        )
    );

    let missing = dir.path().join("missing.txt");
    let r = tools
        .call(
            "edit",
            &format!(
                r#"{{"file_path":{},"old_string":"a","new_string":"b"}}"#,
                q(&missing)
            ),
        )
        .await;
    assert_eq!(failure(&r).0, Some("FS_NOT_FOUND"));
    assert!(!missing.exists());
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
