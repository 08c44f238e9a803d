//! The HTML of `CardPage` and `view_html`: what the page embeds, escaped and bounded.

use dsh_cards::{
    CallView, CardPage, FileDiff, MAX_STRING_CHARS, PageCall, ResultView, SearchFile, SearchMatch,
    SearchView, TerminalExit, view_html,
};
use dsh_json::Value;

const ISLAND_OPEN: &str = "<script type=\"application/json\" id=\"dsh-cards-data\">";

/// The entries a page carries, read back from its data island.
fn island(html: &str) -> serde_json::Value {
    let start = html.find(ISLAND_OPEN).expect("a data island") + ISLAND_OPEN.len();
    let end = start + html[start..].find("</script>").expect("the island's end");
    serde_json::from_str(&html[start..end]).expect("the island is JSON")
}

fn json(text: &str) -> Value {
    dsh_json::parse(text).expect("test JSON")
}

const XSS: &str = "</script><script>window.__pwned=1</script><img src=x onerror=\"window.__pwned=2\">&amp;\u{2028}";

#[test]
fn hostile_text_cannot_leave_the_data_island() {
    let mut page = CardPage::new(format!("log {XSS}"));
    page.push_call(
        PageCall::new(XSS)
            .with_id(XSS)
            .with_arguments(json(&serde_json::json!({ "command": XSS }).to_string()))
            .with_call_card(&CallView::terminal(XSS))
            .with_result_card(&ResultView::terminal(XSS, Some(TerminalExit::Code(1)))),
    );
    page.push_malformed(2, XSS);
    let html = page.render();

    // The page's own elements only: the island and the renderer.
    assert_eq!(html.matches("<script").count(), 2, "{html}");
    assert_eq!(html.matches("</script>").count(), 2);
    assert!(!html.contains("<img"));
    let start = html.find(ISLAND_OPEN).expect("a data island");
    assert!(!html[start..].contains('\u{2028}'));
    // The title is escaped as HTML text.
    assert!(html.contains("<title>log &lt;/script&gt;&lt;script&gt;window.__pwned=1"));

    // The island reads back to the very same strings.
    let entries = island(&html);
    let call = &entries[0];
    assert_eq!(call["name"], XSS);
    assert_eq!(call["id"], XSS);
    assert_eq!(call["arguments"]["command"], XSS);
    assert_eq!(call["callCard"]["title"], XSS);
    assert_eq!(call["resultCard"]["output"], XSS);
    assert_eq!(entries[1]["error"], XSS);
}

#[test]
fn malformed_lines_are_listed_with_their_number_in_order() {
    let mut page = CardPage::new("log");
    page.push_call(PageCall::new("read").with_line(1));
    page.push_malformed(2, "expected value at line 1 column 1");
    page.push_call(PageCall::new("grep").with_line(3));
    page.push_malformed(7, "not a log record: missing field `call`");
    assert_eq!(page.len(), 4);

    let entries = island(&page.render());
    let kinds: Vec<(&str, u64)> = entries
        .as_array()
        .expect("an array")
        .iter()
        .map(|e| {
            (
                e["kind"].as_str().unwrap_or(""),
                e["line"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [("call", 1), ("malformed", 2), ("call", 3), ("malformed", 7)]
    );
    assert_eq!(
        entries[3]["error"],
        "not a log record: missing field `call`"
    );
}

#[test]
fn unknown_card_kinds_become_the_generic_card() {
    let args = json(r#"{"path":"a.txt","mode":"hologram"}"#);
    let mut page = CardPage::new("log");
    page.push_call(
        PageCall::new("project")
            .with_arguments(args)
            .with_raw_call_card(json(r#"{"card":"hologram","title":"3d"}"#))
            .with_raw_result_card(json(r#"{"card":"hologram","beams":[1,2]}"#)),
    );
    // A known kind with a field of the wrong type is not readable either.
    page.push_call(
        PageCall::new("edit").with_raw_result_card(json(r#"{"card":"diff","diffs":"nope"}"#)),
    );
    let entries = island(&page.render());

    let call_card = &entries[0]["callCard"];
    assert_eq!(call_card["card"], "generic");
    assert_eq!(call_card["title"], "project");
    assert_eq!(
        call_card["rawInput"],
        serde_json::json!({"path": "a.txt", "mode": "hologram"})
    );
    let result_card = &entries[0]["resultCard"];
    assert_eq!(result_card["card"], "generic");
    assert_eq!(
        result_card["content"][0]["text"],
        r#"{"card":"hologram","beams":[1,2]}"#
    );
    assert_eq!(entries[1]["resultCard"]["card"], "generic");
    // No call card given: the generic card of the call.
    assert_eq!(entries[1]["callCard"]["card"], "generic");
    assert_eq!(entries[1]["callCard"]["title"], "edit");
}

#[test]
fn known_cards_are_embedded_as_this_version_writes_them() {
    let search = SearchView::matches(
        vec![SearchFile::new(
            "src/a.rs",
            vec![SearchMatch::new(3, "fn a()")],
        )],
        true,
        40,
    );
    let mut page = CardPage::new("log");
    page.push_call(
        PageCall::new("edit")
            .with_raw_call_card(json(
                r#"{"card":"diff","title":"edit a","diffs":[{"path":"a","oldText":"x","newText":"y"}],"extra":1}"#,
            ))
            .with_result_card(&ResultView::diff(vec![FileDiff::update("a", "x\n", "y\n")])),
    );
    page.push_call(
        PageCall::new("grep")
            .with_result_card(&search.into())
            .with_error(true),
    );
    let entries = island(&page.render());
    assert_eq!(
        entries[0]["callCard"],
        serde_json::json!({"card":"diff","title":"edit a","diffs":[{"path":"a","oldText":"x","newText":"y"}]})
    );
    assert_eq!(entries[0]["resultCard"]["diffs"][0]["newText"], "y\n");
    assert_eq!(entries[1]["resultCard"]["truncated"], true);
    assert_eq!(entries[1]["resultCard"]["total"], 40);
    assert_eq!(entries[1]["isError"], true);
    assert!(entries[0].get("isError").is_none());
}

#[test]
fn a_ten_megabyte_line_is_bounded() {
    let huge = "A".repeat(10 * 1024 * 1024);
    let mut page = CardPage::new("log");
    page.push_call(
        PageCall::new("bash")
            .with_arguments(json(&serde_json::json!({ "command": huge }).to_string()))
            .with_result_card(&ResultView::terminal(huge.clone(), None)),
    );
    page.push_malformed(2, &huge);
    let html = page.render();
    assert!(html.len() < 400 * 1024, "page of {} bytes", html.len());

    let entries = island(&html);
    let output = entries[0]["resultCard"]["output"].as_str().expect("output");
    let cut = 10 * 1024 * 1024 - MAX_STRING_CHARS;
    assert!(output.starts_with(&"A".repeat(MAX_STRING_CHARS)));
    assert!(output.ends_with(&format!("\u{2026} [{cut} more characters not shown]")));
    assert!(
        entries[0]["arguments"]["command"]
            .as_str()
            .expect("command")
            .len()
            < 70_000
    );
    assert!(entries[1]["error"].as_str().expect("error").len() < 70_000);
}

#[test]
fn a_multibyte_string_is_cut_on_a_character_boundary() {
    let text = "é".repeat(MAX_STRING_CHARS + 5);
    let mut page = CardPage::new("log");
    page.push_call(PageCall::new("bash").with_result_card(&ResultView::terminal(text, None)));
    let entries = island(&page.render());
    let output = entries[0]["resultCard"]["output"].as_str().expect("output");
    assert!(output.starts_with(&"é".repeat(MAX_STRING_CHARS)));
    assert!(output.ends_with("[5 more characters not shown]"));
}

#[test]
fn pages_and_views_fetch_nothing() {
    for html in [CardPage::new("x").render(), view_html()] {
        assert!(
            html.contains("http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';")
        );
        assert!(!html.contains("src=\"http"));
        assert!(!html.contains("<link"));
        assert!(html.contains("window.DshCards"));
    }
    // The view has no entries of its own: its host sends the call.
    assert!(!view_html().contains(ISLAND_OPEN));
}

#[test]
fn the_bundle_can_be_inlined() {
    // Inline, the bundle must not end its own element early.
    assert!(
        !dsh_cards::CARDS_JS
            .to_ascii_lowercase()
            .contains("</script")
    );
    assert!(
        !dsh_cards::CARDS_CSS
            .to_ascii_lowercase()
            .contains("</style")
    );
}
