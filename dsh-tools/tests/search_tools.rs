//! `grep` and `glob` against a real directory tree, through a registry: grouping, order,
//! honest truncation, ignore rules, filters, cards and error codes.

mod support;

use std::path::Path;

use dsh_runtime::present::{
    CallView, FileLocation, ResultView, SearchFile, SearchMatch, SearchView, ToolCallKind,
};
use support::{Tools, failure, q, v, value, write};

/// A small project:
///
/// ```text
/// .gitignore        target/ and *.log
/// .hidden/secret.rs hidden: skipped
/// README.md         mentions TODO once
/// build.log         ignored
/// data.bin          binary, contains TODO
/// src/lib.rs        TODO twice
/// src/main.rs       todo (lower case) once
/// src/util/mod.rs   TODO once
/// target/out.rs     ignored
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

fn grep_args(root: &Path, extra: &str) -> String {
    format!(r#"{{"pattern":"TODO","path":{}{extra}}}"#, q(root))
}

fn p(root: &Path, rel: &str) -> String {
    root.join(rel).to_str().unwrap().to_string()
}

#[tokio::test]
async fn grep_groups_matches_by_file_in_path_order() {
    let dir = project();
    let root = dir.path();
    let tools = Tools::new();
    let args = grep_args(root, "");
    let r = tools.call("grep", &args).await;
    assert_eq!(
        value(&r),
        &v(&format!(
            r#"{{"files":[
                {{"path":{},"matches":[{{"lineNumber":3,"line":"TODO: write docs"}}]}},
                {{"path":{},"matches":[{{"lineNumber":1,"line":"// TODO first"}},{{"lineNumber":3,"line":"// TODO second"}}]}},
                {{"path":{},"matches":[{{"lineNumber":1,"line":"pub mod x; // TODO"}}]}}
            ],"truncated":false,"total":4}}"#,
            q(&root.join("README.md")),
            q(&root.join("src/lib.rs")),
            q(&root.join("src/util/mod.rs")),
        ))
    );
    assert_eq!(
        r.text(),
        format!(
            "{}:3: TODO: write docs\n{}:1: // TODO first\n{}:3: // TODO second\n{}:1: pub mod x; // TODO\n(4 matches in 3 files)",
            p(root, "README.md"),
            p(root, "src/lib.rs"),
            p(root, "src/lib.rs"),
            p(root, "src/util/mod.rs"),
        )
    );
    let expected: ResultView = SearchView::matches(
        vec![
            SearchFile::new(
                p(root, "README.md"),
                vec![SearchMatch::new(3, "TODO: write docs")],
            ),
            SearchFile::new(
                p(root, "src/lib.rs"),
                vec![
                    SearchMatch::new(1, "// TODO first"),
                    SearchMatch::new(3, "// TODO second"),
                ],
            ),
            SearchFile::new(
                p(root, "src/util/mod.rs"),
                vec![SearchMatch::new(1, "pub mod x; // TODO")],
            ),
        ],
        false,
        4,
    )
    .into();
    assert_eq!(tools.result_card("grep", &args, &r), expected);
    assert_eq!(
        tools.call_card("grep", &args),
        CallView::Generic {
            title: format!("grep \"TODO\" in {}", root.display()),
            kind: Some(ToolCallKind::Search),
            raw_input: None,
            content: None,
            locations: Some(vec![FileLocation::new(root.to_str().unwrap())]),
        }
    );
}

#[tokio::test]
async fn grep_truncation_is_honest() {
    let dir = project();
    let root = dir.path();
    let tools = Tools::new();
    let args = grep_args(root, r#","max_results":2"#);
    let r = tools.call("grep", &args).await;
    let out = value(&r);
    assert_eq!(out["truncated"], v("true"));
    assert_eq!(out["total"].as_u64(), Some(4));
    assert_eq!(out["files"].as_array().map(|f| f.len()), Some(2));
    assert_eq!(
        out["files"][1]["matches"].as_array().map(|m| m.len()),
        Some(1)
    );
    assert!(
        r.text()
            .ends_with("(showing 2 of 4 matches; narrow the search or raise max_results)"),
        "{}",
        r.text()
    );
    match tools.result_card("grep", &args, &r) {
        ResultView::Search(view) => {
            assert!(view.truncated());
            assert_eq!(view.total(), 4);
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn grep_filters_case_and_single_files() {
    let dir = project();
    let root = dir.path();
    let tools = Tools::new();
    let files = |r: &dsh_runtime::ToolResult| -> Vec<String> {
        value(r)["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["path"].as_str().unwrap().to_string())
            .collect()
    };

    // By name, at any depth.
    let r = tools
        .call("grep", &grep_args(root, r#","glob":"*.rs""#))
        .await;
    assert_eq!(
        files(&r),
        [p(root, "src/lib.rs"), p(root, "src/util/mod.rs")]
    );
    // With a slash: the path relative to the search root.
    let r = tools
        .call("grep", &grep_args(root, r#","glob":"src/*.rs""#))
        .await;
    assert_eq!(files(&r), [p(root, "src/lib.rs")]);
    // Case-insensitive finds the lower-case one too.
    let r = tools
        .call(
            "grep",
            &grep_args(root, r#","glob":"main.rs","case_insensitive":true"#),
        )
        .await;
    assert_eq!(
        value(&r)["files"][0]["matches"],
        v(r#"[{"lineNumber":2,"line":"    // todo: later"}]"#)
    );
    // A file as `path` is searched alone, even when ignored by git.
    let r = tools
        .call(
            "grep",
            &format!(
                r#"{{"pattern":"TODO","path":{}}}"#,
                q(&root.join("build.log"))
            ),
        )
        .await;
    assert_eq!(files(&r), [p(root, "build.log")]);
    // No matches.
    let r = tools
        .call(
            "grep",
            &format!(r#"{{"pattern":"FIXME","path":{}}}"#, q(root)),
        )
        .await;
    assert_eq!(value(&r), &v(r#"{"files":[],"truncated":false,"total":0}"#));
    assert_eq!(r.text(), "No matches found.");
}

#[tokio::test]
async fn grep_errors() {
    let dir = project();
    let root = dir.path();
    let tools = Tools::new();
    let r = tools
        .call("grep", &format!(r#"{{"pattern":"(","path":{}}}"#, q(root)))
        .await;
    let (code, message) = failure(&r);
    assert_eq!(code, Some("SEARCH_INVALID_PATTERN"));
    assert!(message.starts_with("invalid pattern: "), "{message}");

    let r = tools.call("grep", &grep_args(root, r#","glob":"[""#)).await;
    let (code, message) = failure(&r);
    assert_eq!(code, Some("SEARCH_INVALID_GLOB"));
    assert!(message.starts_with("invalid glob: "), "{message}");

    let missing = root.join("nope");
    let r = tools
        .call(
            "grep",
            &format!(r#"{{"pattern":"x","path":{}}}"#, q(&missing)),
        )
        .await;
    assert_eq!(
        failure(&r),
        (
            Some("FS_NOT_FOUND"),
            format!("no such file or directory: {}", missing.display()).as_str()
        )
    );

    let r = tools
        .call("grep", r#"{"pattern":"x","max_results":0}"#)
        .await;
    assert_eq!(
        failure(&r),
        (
            Some("INVALID_ARGS"),
            r#"invalid arguments: "max_results" must be at least 1"#
        )
    );
    let r = tools.call("grep", r#"{"pattern":""}"#).await;
    assert_eq!(failure(&r).0, Some("INVALID_ARGS"));
}

#[tokio::test]
async fn glob_lists_files_in_path_order() {
    let dir = project();
    let root = dir.path();
    let tools = Tools::new();
    let paths = |r: &dsh_runtime::ToolResult| -> Vec<String> {
        value(r)["paths"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap().to_string())
            .collect()
    };

    let args = format!(r#"{{"pattern":"**/*.rs","path":{}}}"#, q(root));
    let r = tools.call("glob", &args).await;
    let expected = [
        p(root, "src/lib.rs"),
        p(root, "src/main.rs"),
        p(root, "src/util/mod.rs"),
    ];
    assert_eq!(paths(&r), expected);
    assert_eq!(value(&r)["total"].as_u64(), Some(3));
    assert_eq!(value(&r)["truncated"], v("false"));
    assert_eq!(r.text(), expected.join("\n"));
    assert_eq!(
        tools.result_card("glob", &args, &r),
        SearchView::paths(expected.to_vec(), false, 3).into()
    );
    match tools.call_card("glob", &args) {
        CallView::Generic { title, kind, .. } => {
            assert_eq!(title, format!("glob \"**/*.rs\" in {}", root.display()));
            assert_eq!(kind, Some(ToolCallKind::Search));
        }
        other => panic!("{other:?}"),
    }

    // `*` does not cross directories; alternatives work.
    let r = tools
        .call(
            "glob",
            &format!(r#"{{"pattern":"*.rs","path":{}}}"#, q(root)),
        )
        .await;
    assert_eq!(paths(&r), Vec::<String>::new());
    assert_eq!(r.text(), "No files matched.");
    let r = tools
        .call(
            "glob",
            &format!(
                r#"{{"pattern":"{{README.md,src/main.rs}}","path":{}}}"#,
                q(root)
            ),
        )
        .await;
    assert_eq!(paths(&r), [p(root, "README.md"), p(root, "src/main.rs")]);
    // Relative to a subdirectory.
    let r = tools
        .call(
            "glob",
            &format!(r#"{{"pattern":"*.rs","path":{}}}"#, q(&root.join("src"))),
        )
        .await;
    assert_eq!(paths(&r), [p(root, "src/lib.rs"), p(root, "src/main.rs")]);
}

#[tokio::test]
async fn glob_caps_at_a_thousand_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    for n in 0..1005 {
        write(&dir.path().join(format!("f{n:04}.txt")), "");
    }
    let tools = Tools::new();
    let args = format!(r#"{{"pattern":"*.txt","path":{}}}"#, q(dir.path()));
    let r = tools.call("glob", &args).await;
    let out = value(&r);
    assert_eq!(out["total"].as_u64(), Some(1005));
    assert_eq!(out["truncated"], v("true"));
    let paths = out["paths"].as_array().unwrap();
    assert_eq!(paths.len(), 1000);
    assert_eq!(
        paths[999].as_str(),
        Some(p(dir.path(), "f0999.txt").as_str())
    );
    assert!(
        r.text()
            .ends_with("\n(showing 1000 of 1005 files; use a narrower pattern or path)")
    );
    match tools.result_card("glob", &args, &r) {
        ResultView::Search(view) => assert!(view.truncated() && view.total() == 1005),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn glob_errors() {
    let dir = project();
    let root = dir.path();
    let tools = Tools::new();
    let file = root.join("README.md");
    let r = tools
        .call("glob", &format!(r#"{{"pattern":"*","path":{}}}"#, q(&file)))
        .await;
    assert_eq!(
        failure(&r),
        (
            Some("FS_NOT_A_DIRECTORY"),
            format!("{} is not a directory", file.display()).as_str()
        )
    );
    let missing = root.join("nope");
    let r = tools
        .call(
            "glob",
            &format!(r#"{{"pattern":"*","path":{}}}"#, q(&missing)),
        )
        .await;
    assert_eq!(failure(&r).0, Some("FS_NOT_FOUND"));
    let r = tools
        .call("glob", &format!(r#"{{"pattern":"a[","path":{}}}"#, q(root)))
        .await;
    assert_eq!(failure(&r).0, Some("SEARCH_INVALID_GLOB"));
}
