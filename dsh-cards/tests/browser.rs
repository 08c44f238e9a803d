//! The card renderer in a real browser: headless Chromium (Debian's `chromium`) driven by
//! `playwright-core` (`tests/browser/cards.mjs`). This test writes the pages (every card
//! kind, an XSS corpus through every field, the MCP Apps view in a test host), runs the
//! script and fails with its list of failed checks. Screenshots, light and dark, are left
//! in `target/browser-cards/screenshots`.
//!
//! It needs `/usr/bin/chromium` (or `DSH_CHROMIUM`) and playwright-core under
//! `target/browser-node`: `dsh-cards/tests/browser/install.sh` installs both (CI runs it).
//! Without them the test fails and says so; it never skips.

use std::path::{Path, PathBuf};
use std::process::Command;

use dsh_cards::{
    CARDS_META_KEY, CallView, CardPage, FileDiff, FileLocation, PageCall, ReadLine, ReadView,
    ResultView, SearchFile, SearchMatch, SearchView, TerminalExit, WebSource, WebView, view_html,
};
use dsh_json::Value;
use serde_json::json;

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"),
        PathBuf::from,
    )
}

fn value(v: serde_json::Value) -> Value {
    dsh_json::parse(&v.to_string()).expect("test JSON")
}

/// One entry per card kind, then a malformed line.
fn kinds_page() -> CardPage {
    let filler: String = (4..20).map(|n| format!("// line {n}\n")).collect();
    let old = format!("fn sum() {{\nlet total = a - b;\ntotal\n{filler}// unchanged far away\n");
    let new = old.replace("a - b", "a + b");
    let diffs = vec![FileDiff::update("src/sum.rs", old, new)];
    let mut page = CardPage::new("every card kind");
    page.push_call(
        PageCall::new("edit")
            .with_line(1)
            .with_call_card(&CallView::diff("Edit src/sum.rs", diffs.clone()))
            .with_result_card(&ResultView::diff(diffs)),
    );
    let output =
        "running 3 tests\ntest sum ... FAILED\n\ntest result: FAILED. 2 passed; 1 failed\n";
    page.push_call(
        PageCall::new("bash")
            .with_line(2)
            .with_call_card(&CallView::terminal("cargo test"))
            .with_result_card(&ResultView::terminal(output, Some(TerminalExit::Code(101))))
            .with_error(true),
    );
    let files = vec![
        SearchFile::new(
            "src/a.rs",
            vec![
                SearchMatch::new(3, "fn a()"),
                SearchMatch::new(9, "fn a_two()"),
            ],
        ),
        SearchFile::new("src/b.rs", vec![SearchMatch::new(1, "fn b_helper()")]),
    ];
    page.push_call(
        PageCall::new("grep")
            .with_line(3)
            .with_result_card(&SearchView::matches(files, true, 57).into()),
    );
    page.push_call(
        PageCall::new("teleport")
            .with_line(4)
            .with_arguments(value(json!({"beam": "42"})))
            .with_raw_call_card(value(json!({"card": "hologram", "title": "3d"})))
            .with_raw_result_card(value(json!({"card": "hologram", "beams": [1, 2]}))),
    );
    let lines = vec![
        ReadLine::new(10, "let x = 1;"),
        ReadLine::new(11, "let y = 2;"),
    ];
    page.push_call(
        PageCall::new("read")
            .with_line(5)
            .with_result_card(&ReadView::new("src/lib.rs", 10, lines, 120).into()),
    );
    let sources = vec![
        WebSource::new("https://example.com/docs")
            .with_title("Docs")
            .with_snippet("How it works."),
    ];
    page.push_call(
        PageCall::new("web_search").with_line(6).with_result_card(
            &WebView::search(sources, false)
                .with_answer("It works.")
                .into(),
        ),
    );
    page.push_malformed(9, "expected value at line 1 column 1");
    page
}

/// Every field of every card kind carries the payloads.
fn xss_page() -> CardPage {
    let p = concat!(
        "<img src=x onerror=\"window.__xss=1\">",
        "<script>window.__xss=1</script>",
        "\"><svg onload=window.__xss=1>",
        "</script><script>window.__xss=1</script>",
        "{{constructor.constructor('window.__xss=1')()}}",
        "\u{1b}[31m\u{0}\u{202e}\u{2028}"
    );
    let js = "javascript:window.__xss=1";
    let mut page = CardPage::new(p);
    let diffs = vec![
        FileDiff::update(js, p, format!("{p}\n{p}")),
        FileDiff::create(p, p),
    ];
    let locations = vec![FileLocation::new(js).at_line(3), FileLocation::new(p)];
    let generic: CallView = dsh_json::from_value(&value(json!({
        "card": "generic", "title": p, "kind": "read", "rawInput": {p: p},
        "content": [{"type": "text", "text": p}, {"type": "resource_link", "uri": js, "name": p}],
        "locations": [{"path": js}, {"path": p, "line": 1}],
    })))
    .expect("a generic card");
    page.push_call(
        PageCall::new(p)
            .with_id(p)
            .with_arguments(value(json!({p: [p]})))
            .with_call_card(&generic)
            .with_result_card(&ResultView::terminal(
                p,
                Some(TerminalExit::Signal(p.into())),
            )),
    );
    let mut diff = CallView::diff(p, diffs.clone());
    if let CallView::Diff { locations: l, .. } = &mut diff {
        *l = Some(locations);
    }
    let mut terminal = CallView::terminal(p);
    if let CallView::Terminal {
        description, cwd, ..
    } = &mut terminal
    {
        *description = Some(p.into());
        *cwd = Some(p.into());
    }
    page.push_call(
        PageCall::new(p)
            .with_call_card(&diff)
            .with_result_card(&ResultView::diff(diffs)),
    );
    let search = SearchView::matches(
        vec![SearchFile::new(p, vec![SearchMatch::new(1, p)])],
        true,
        9,
    )
    .with_title(p);
    page.push_call(
        PageCall::new(p)
            .with_call_card(&terminal)
            .with_result_card(&search.into()),
    );
    let paths = SearchView::paths(vec![p.into(), js.into()], false, 2).with_title(p);
    let read = ReadView::new(js, 1, vec![ReadLine::new(1, p)], 1)
        .with_title(p)
        .with_lang(p);
    page.push_call(PageCall::new(p).with_result_card(&paths.into()));
    page.push_call(PageCall::new(p).with_result_card(&read.into()));
    let source = WebSource::new(js)
        .with_title(p)
        .with_snippet(p)
        .with_published_at(p);
    let web = WebView::search(vec![source, WebSource::new(p)], true)
        .with_title(p)
        .with_answer(p);
    page.push_call(PageCall::new(p).with_result_card(&web.into()));
    let fetch = WebView::fetch(js, 500, true).with_title(p);
    page.push_call(PageCall::new(p).with_result_card(&fetch.into()));
    page.push_malformed(1, p);
    page
}

/// The test host's page, with a real call's cards where the view expects them.
fn host_page() -> String {
    let call = CallView::terminal("make test");
    let result = ResultView::terminal("1 failed\n", Some(TerminalExit::Code(2)));
    let meta = json!({ CARDS_META_KEY: {
        "callCard": serde_json::to_value(&call).expect("card"),
        "resultCard": serde_json::to_value(&result).expect("card"),
    }});
    let known = json!({
        "arguments": {"command": "make test"},
        "result": {"content": [{"type": "text", "text": "1 failed"}], "isError": true, "_meta": meta},
    });
    let unknown = json!({
        "arguments": {"target": "moon"},
        "result": {"content": [{"type": "text", "text": "<img src=x onerror=\"window.__xss=1\">"}],
            "_meta": {CARDS_META_KEY: {"callCard": {"card": "hologram"}, "resultCard": {"card": "hologram", "x": "<b>"}}}},
    });
    include_str!("browser/host.html")
        .replace("/*CALL*/null", &known.to_string().replace('<', "\\u003c"))
        .replace(
            "/*UNKNOWN*/null",
            &unknown.to_string().replace('<', "\\u003c"),
        )
}

#[test]
fn cards_in_a_real_browser() {
    let chromium =
        std::env::var_os("DSH_CHROMIUM").map_or_else(|| "/usr/bin/chromium".into(), PathBuf::from);
    let prefix = target_dir().join("browser-node");
    // What the test needs, installed when missing (the script is idempotent and checks
    // both are there), as the MCP client tests install theirs.
    let status = Command::new("bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/install.sh"))
        .env("CARGO_TARGET_DIR", target_dir())
        .env("DSH_CHROMIUM", &chromium)
        .status()
        .expect("bash runs dsh-cards/tests/browser/install.sh");
    assert!(
        status.success(),
        "dsh-cards/tests/browser/install.sh failed"
    );

    let dir = target_dir().join("browser-cards");
    std::fs::create_dir_all(&dir).expect("the pages' directory");
    std::fs::write(dir.join("kinds.html"), kinds_page().render()).expect("kinds.html");
    std::fs::write(dir.join("xss.html"), xss_page().render()).expect("xss.html");
    std::fs::write(dir.join("view.html"), view_html()).expect("view.html");
    std::fs::write(dir.join("host.html"), host_page()).expect("host.html");

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/cards.mjs");
    let out = Command::new("node")
        .arg(script)
        .arg(&dir)
        .arg(&prefix)
        .env("DSH_CHROMIUM", &chromium)
        .output()
        .expect("node runs (Node 20 or later on PATH)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "browser checks failed:\n{stderr}\n{stdout}"
    );
    assert!(stdout.contains("ok: all checks passed"), "{stdout}");
}
