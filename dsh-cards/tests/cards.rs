//! The card vocabulary's wire shape: exact JSON for every card, round trips, and the
//! shapes a reader must refuse.

use dsh_cards::ContentBlock;
use dsh_cards::{
    CallView, FileDiff, FileLocation, ReadLine, ReadView, ResultView, SearchFile, SearchMatch,
    SearchView, TerminalExit, ToolCallKind, WebSource, WebView,
};
use dsh_json::Value;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fmt::Debug;

/// Serializes `card`, compares it with `golden`, and reads `golden` back into `card`.
fn golden<T>(card: &T, golden: &str)
where
    T: Serialize + DeserializeOwned + PartialEq + Debug,
{
    let json = serde_json::to_string(card).expect("cards serialize");
    assert_eq!(json, golden);
    let back: T = serde_json::from_str(golden).expect("golden JSON reads back");
    assert_eq!(&back, card);
}

fn rejected<T: DeserializeOwned + Debug>(json: &str) -> String {
    match serde_json::from_str::<T>(json) {
        Ok(card) => panic!("{json} was accepted as {card:?}"),
        Err(err) => err.to_string(),
    }
}

fn raw(json: &str) -> Value {
    serde_json::from_str(json).expect("valid JSON")
}

// ---- call views -------------------------------------------------------------------

#[test]
fn call_generic_minimal() {
    golden(
        &CallView::generic("grep", None),
        r#"{"card":"generic","title":"grep"}"#,
    );
}

#[test]
fn call_generic_full() {
    let card = CallView::Generic {
        title: "read src/lib.rs".into(),
        kind: Some(ToolCallKind::Read),
        raw_input: Some(raw(r#"{"file_path":"src/lib.rs","limit":5}"#)),
        content: Some(vec![ContentBlock::text("window 1-5")]),
        locations: Some(vec![
            FileLocation::new("src/lib.rs").at_line(1),
            FileLocation::new("README.md"),
        ]),
    };
    golden(
        &card,
        r#"{"card":"generic","title":"read src/lib.rs","kind":"read","rawInput":{"file_path":"src/lib.rs","limit":5},"content":[{"type":"text","text":"window 1-5"}],"locations":[{"path":"src/lib.rs","line":1},{"path":"README.md"}]}"#,
    );
}

#[test]
fn call_kinds_are_lowercase() {
    let kinds = [
        (ToolCallKind::Read, "read"),
        (ToolCallKind::Edit, "edit"),
        (ToolCallKind::Delete, "delete"),
        (ToolCallKind::Move, "move"),
        (ToolCallKind::Search, "search"),
        (ToolCallKind::Execute, "execute"),
        (ToolCallKind::Fetch, "fetch"),
        (ToolCallKind::Other, "other"),
    ];
    for (kind, name) in kinds {
        golden(&kind, &format!("\"{name}\""));
    }
    assert_eq!(ToolCallKind::default(), ToolCallKind::Other);
}

#[test]
fn call_terminal() {
    golden(
        &CallView::terminal("ls -la"),
        r#"{"card":"terminal","title":"ls -la"}"#,
    );
    let card = CallView::Terminal {
        title: "cargo test".into(),
        description: Some("Run the tests".into()),
        cwd: Some("/repo".into()),
    };
    golden(
        &card,
        r#"{"card":"terminal","title":"cargo test","description":"Run the tests","cwd":"/repo"}"#,
    );
}

#[test]
fn call_diff_new_file_has_null_old_text() {
    let card = CallView::diff("a.txt", vec![FileDiff::create("a.txt", "hello\n")]);
    golden(
        &card,
        r#"{"card":"diff","title":"a.txt","diffs":[{"path":"a.txt","oldText":null,"newText":"hello\n"}]}"#,
    );
    let card = CallView::Diff {
        title: "edit b.txt".into(),
        diffs: vec![FileDiff::update("b.txt", "x", "y")],
        locations: Some(vec![FileLocation::new("b.txt").at_line(3)]),
    };
    golden(
        &card,
        r#"{"card":"diff","title":"edit b.txt","diffs":[{"path":"b.txt","oldText":"x","newText":"y"}],"locations":[{"path":"b.txt","line":3}]}"#,
    );
}

// ---- result views -----------------------------------------------------------------

#[test]
fn result_generic() {
    golden(
        &ResultView::Generic {
            title: None,
            content: None,
        },
        r#"{"card":"generic"}"#,
    );
    let card = ResultView::Generic {
        title: Some("done".into()),
        content: Some(vec![ContentBlock::text("ok")]),
    };
    golden(
        &card,
        r#"{"card":"generic","title":"done","content":[{"type":"text","text":"ok"}]}"#,
    );
}

#[test]
fn result_terminal_exit_code_signal_or_neither() {
    golden(
        &ResultView::terminal("hi\n", Some(TerminalExit::Code(0))),
        r#"{"card":"terminal","output":"hi\n","exitCode":0}"#,
    );
    golden(
        &ResultView::Terminal {
            title: Some("sleep 9".into()),
            output: Some(String::new()),
            exit: Some(TerminalExit::Signal("SIGKILL".into())),
        },
        r#"{"card":"terminal","title":"sleep 9","output":"","signal":"SIGKILL"}"#,
    );
    golden(
        &ResultView::Terminal {
            title: None,
            output: None,
            exit: None,
        },
        r#"{"card":"terminal"}"#,
    );
    golden(
        &ResultView::terminal("", Some(TerminalExit::Code(-3))),
        r#"{"card":"terminal","output":"","exitCode":-3}"#,
    );
}

#[test]
fn result_terminal_null_means_absent() {
    let card: ResultView =
        serde_json::from_str(r#"{"card":"terminal","exitCode":null,"signal":"SIGTERM"}"#)
            .expect("null exitCode is absent");
    assert_eq!(
        card,
        ResultView::Terminal {
            title: None,
            output: None,
            exit: Some(TerminalExit::Signal("SIGTERM".into())),
        }
    );
}

#[test]
fn terminal_exit_accessors() {
    assert_eq!(TerminalExit::Code(2).exit_code(), Some(2));
    assert_eq!(TerminalExit::Code(2).signal(), None);
    assert_eq!(
        TerminalExit::Signal("SIGINT".into()).signal(),
        Some("SIGINT")
    );
    assert_eq!(TerminalExit::Signal("SIGINT".into()).exit_code(), None);
}

#[test]
fn result_diff() {
    golden(
        &ResultView::diff(vec![FileDiff::update("c.rs", "fn a() {}", "fn b() {}")]),
        r#"{"card":"diff","diffs":[{"path":"c.rs","oldText":"fn a() {}","newText":"fn b() {}"}]}"#,
    );
    golden(
        &ResultView::Diff {
            title: Some("c.rs".into()),
            diffs: vec![],
        },
        r#"{"card":"diff","title":"c.rs","diffs":[]}"#,
    );
}

#[test]
fn result_search_matches() {
    let card: ResultView = SearchView::matches(
        vec![
            SearchFile::new(
                "src/a.rs",
                vec![
                    SearchMatch::new(3, "let x = 1;"),
                    SearchMatch::new(9, "x += 1;"),
                ],
            ),
            SearchFile::new("src/b.rs", vec![SearchMatch::new(1, "use x;")]),
        ],
        true,
        42,
    )
    .with_title("x")
    .into();
    golden(
        &card,
        r#"{"card":"search","shape":"matches","title":"x","files":[{"path":"src/a.rs","matches":[{"lineNumber":3,"line":"let x = 1;"},{"lineNumber":9,"line":"x += 1;"}]},{"path":"src/b.rs","matches":[{"lineNumber":1,"line":"use x;"}]}],"truncated":true,"total":42}"#,
    );
}

#[test]
fn result_search_paths() {
    let view = SearchView::paths(vec!["a.rs".into(), "b/c.rs".into()], false, 2);
    assert!(!view.truncated());
    assert_eq!(view.total(), 2);
    golden(
        &ResultView::from(view),
        r#"{"card":"search","shape":"paths","paths":["a.rs","b/c.rs"],"truncated":false,"total":2}"#,
    );
    golden(
        &ResultView::from(SearchView::paths(vec![], false, 0).with_title("**/*.md")),
        r#"{"card":"search","shape":"paths","title":"**/*.md","paths":[],"truncated":false,"total":0}"#,
    );
}

#[test]
fn result_read_keeps_offset_when_window_is_empty() {
    golden(
        &ResultView::from(ReadView::new("short.txt", 50, vec![], 3)),
        r#"{"card":"read","path":"short.txt","offset":50,"lines":[],"totalLines":3}"#,
    );
}

#[test]
fn result_read_full() {
    let card = ReadView::new(
        "src/main.rs",
        2,
        vec![ReadLine::new(2, "fn main() {"), ReadLine::new(3, "}")],
        3,
    )
    .with_title("src/main.rs (2 - 3)")
    .with_lang("rust")
    .with_content(vec![ContentBlock::text("fn main() {\n}")]);
    golden(
        &ResultView::Read(card),
        r#"{"card":"read","title":"src/main.rs (2 - 3)","path":"src/main.rs","offset":2,"lines":[{"number":2,"text":"fn main() {"},{"number":3,"text":"}"}],"totalLines":3,"lang":"rust","content":[{"type":"text","text":"fn main() {\n}"}]}"#,
    );
}

#[test]
fn result_web_search() {
    let card = WebView::search(
        vec![
            WebSource::new("https://a.example/")
                .with_title("A")
                .with_snippet("about a")
                .with_published_at("2024-05-01"),
            WebSource::new("https://b.example/"),
        ],
        false,
    )
    .with_answer("a, mostly")
    .with_title("what is a");
    golden(
        &ResultView::from(card),
        r#"{"card":"web","kind":"search","title":"what is a","sources":[{"url":"https://a.example/","title":"A","snippet":"about a","publishedAt":"2024-05-01"},{"url":"https://b.example/"}],"answer":"a, mostly","truncated":false}"#,
    );
}

#[test]
fn result_web_fetch() {
    golden(
        &ResultView::from(WebView::fetch("https://a.example/x", 404, true)),
        r#"{"card":"web","kind":"fetch","url":"https://a.example/x","statusCode":404,"truncated":true}"#,
    );
    // An answer only belongs to a search card.
    assert_eq!(
        WebView::fetch("https://a.example/", 200, false).with_answer("ignored"),
        WebView::fetch("https://a.example/", 200, false)
    );
}

#[test]
fn result_summary_round_trip() {
    let summary = dsh_cards::ResultSummary {
        content: vec![ContentBlock::text("x")],
        is_error: true,
        meta: Some(raw(r#"{"lang":"rust"}"#)),
    };
    golden(
        &summary,
        r#"{"content":[{"type":"text","text":"x"}],"isError":true,"meta":{"lang":"rust"}}"#,
    );
    assert_eq!(
        ResultView::generic(&summary),
        ResultView::Generic {
            title: None,
            content: Some(vec![ContentBlock::text("x")])
        }
    );
}

#[test]
fn unknown_fields_are_ignored_on_read() {
    let card: ResultView = serde_json::from_str(
        r#"{"card":"read","path":"a","offset":1,"lines":[],"totalLines":0,"encoding":"utf8"}"#,
    )
    .expect("unknown field is ignored");
    assert_eq!(card, ResultView::from(ReadView::new("a", 1, vec![], 0)));
}

// ---- rejections ---------------------------------------------------------------------

#[test]
fn terminal_with_exit_code_and_signal_is_rejected() {
    let err = rejected::<ResultView>(r#"{"card":"terminal","exitCode":0,"signal":"SIGKILL"}"#);
    assert!(
        err.contains("`exitCode` and `signal` are mutually exclusive"),
        "{err}"
    );
}

#[test]
fn unknown_card_tags_are_rejected() {
    let err = rejected::<ResultView>(r#"{"card":"chart","title":"x"}"#);
    assert!(err.contains("unknown variant `chart`"), "{err}");
    let err = rejected::<CallView>(r#"{"card":"search","title":"x"}"#);
    assert!(err.contains("unknown variant `search`"), "{err}");
    let err = rejected::<ResultView>(r#"{"title":"x"}"#);
    assert!(err.contains("missing field `card`"), "{err}");
}

#[test]
fn unknown_shape_and_kind_are_rejected() {
    let err =
        rejected::<ResultView>(r#"{"card":"search","shape":"tree","truncated":false,"total":0}"#);
    assert!(err.contains("unknown variant `tree`"), "{err}");
    let err = rejected::<ResultView>(r#"{"card":"search","paths":[],"truncated":false,"total":0}"#);
    assert!(err.contains("missing field `shape`"), "{err}");
    let err = rejected::<ResultView>(r#"{"card":"web","kind":"crawl","url":"u"}"#);
    assert!(err.contains("unknown variant `crawl`"), "{err}");
}

#[test]
fn missing_required_fields_are_rejected() {
    let err = rejected::<ResultView>(r#"{"card":"read","offset":1,"lines":[],"totalLines":0}"#);
    assert!(err.contains("missing field `path`"), "{err}");
    let err = rejected::<ResultView>(r#"{"card":"search","shape":"paths","paths":[],"total":0}"#);
    assert!(err.contains("missing field `truncated`"), "{err}");
    let err =
        rejected::<ResultView>(r#"{"card":"web","kind":"fetch","url":"u","truncated":false}"#);
    assert!(err.contains("missing field `statusCode`"), "{err}");
    let err = rejected::<ResultView>(r#"{"card":"diff","title":"x"}"#);
    assert!(err.contains("missing field `diffs`"), "{err}");
    let err = rejected::<CallView>(r#"{"card":"terminal"}"#);
    assert!(err.contains("missing field `title`"), "{err}");
}

#[test]
fn wrongly_typed_fields_are_rejected() {
    rejected::<ResultView>(r#"{"card":"terminal","exitCode":"0"}"#);
    rejected::<ResultView>(r#"{"card":"terminal","signal":9}"#);
    rejected::<ResultView>(
        r#"{"card":"web","kind":"fetch","url":"u","statusCode":70000,"truncated":false}"#,
    );
    rejected::<ResultView>(r#"{"card":"read","path":"a","offset":-1,"lines":[],"totalLines":0}"#);
    rejected::<CallView>(r#"{"card":"generic","title":"t","kind":"launch"}"#);
}
