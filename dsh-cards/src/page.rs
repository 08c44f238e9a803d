//! The card renderer: one HTML/CSS/JS bundle, shipped in the crate, that shows cards to a
//! person.
//!
//! [`CardPage`] writes one self-contained page of calls and their cards (a log viewer,
//! `dsh-tools replay --html`); [`view_html`] is the same renderer as an MCP Apps view,
//! which receives its call from the host instead. Neither fetches anything: the script
//! and the styles are inline, and the page's Content-Security-Policy allows no network
//! request.
//!
//! The renderer builds the page with `textContent` only, so no text of a card is ever
//! read as HTML; links get an `href` only for `http(s)` URLs and file paths. Entries are
//! embedded as JSON in a `<script type="application/json">` island whose `<`, `>` and `&`
//! are written as `\u` escapes, so no string can close the island. Every string is cut
//! to [`MAX_STRING_CHARS`] characters (with a note of how much was cut) before it enters
//! the page. A card of a kind this version does not know becomes the generic card (the
//! call's raw arguments, or the card's raw JSON as text) instead of a blank frame.
//!
//! ```
//! use dsh_cards::{CallView, CardPage, PageCall, ResultView, TerminalExit};
//!
//! let mut page = CardPage::new("one call");
//! page.push_call(
//!     PageCall::new("bash")
//!         .with_call_card(&CallView::terminal("echo <hi>"))
//!         .with_result_card(&ResultView::terminal("<hi>\n", Some(TerminalExit::Code(0)))),
//! );
//! page.push_malformed(2, "expected value at line 1 column 1");
//! let html = page.render();
//! assert!(html.starts_with("<!doctype html>"));
//! assert!(!html.contains("echo <hi>"));
//! assert!(html.contains(r"echo \u003chi\u003e"));
//! ```

use std::fmt::Write as _;

use dsh_json::{Array, Object, Value};

use crate::{CallView, ResultView};

/// The renderer's script (inline in every page and view).
pub const CARDS_JS: &str = include_str!("../assets/cards.js");

/// The renderer's styles (inline in every page and view).
pub const CARDS_CSS: &str = include_str!("../assets/cards.css");

/// The longest string, in characters, a page carries; longer ones are cut with a note
/// of how many characters were left out.
pub const MAX_STRING_CHARS: usize = 65_536;

/// The `_meta` key under which an MCP result carries its cards for the view:
/// `{"callCard": ..., "resultCard": ...}`.
pub const CARDS_META_KEY: &str = "dev.dsh-rs/cards";

/// The MIME type of an MCP Apps view.
pub const VIEW_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// Deeper JSON is replaced by a note (the lossless parser stops at 128 by default).
const MAX_DEPTH: usize = 256;

/// The page's own policy: inline script and styles, no network, no frames, no forms.
const PAGE_CSP: &str = "default-src 'none'; script-src 'unsafe-inline'; \
style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; \
frame-ancestors 'self'";

/// One call of a [`CardPage`]: its name, arguments and cards.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PageCall {
    line: Option<u64>,
    id: Option<String>,
    name: String,
    arguments: Option<Value>,
    call_card: Option<Value>,
    result_card: Option<Value>,
    is_error: bool,
}

impl PageCall {
    /// A call of the tool `name`, with no cards yet (the page shows a generic card).
    pub fn new(name: impl Into<String>) -> Self {
        PageCall {
            name: name.into(),
            ..PageCall::default()
        }
    }

    /// The same call, noted as coming from this 1-based line of a log.
    #[must_use]
    pub fn with_line(mut self, line: u64) -> Self {
        self.line = Some(line);
        self
    }

    /// The same call with its call id.
    #[must_use]
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// The same call with its raw arguments (shown by the generic fallback).
    #[must_use]
    pub fn with_arguments(mut self, arguments: Value) -> Self {
        self.arguments = Some(arguments);
        self
    }

    /// The same call with its pending card.
    #[must_use]
    pub fn with_call_card(mut self, card: &CallView) -> Self {
        self.call_card = dsh_json::to_value(card).ok();
        self
    }

    /// The same call with its result card.
    #[must_use]
    pub fn with_result_card(mut self, card: &ResultView) -> Self {
        self.result_card = dsh_json::to_value(card).ok();
        self
    }

    /// The same call with a pending card as JSON, e.g. read from a log written by another
    /// version. A card that is not a [`CallView`] is shown as the generic card of the
    /// call's raw arguments.
    #[must_use]
    pub fn with_raw_call_card(mut self, card: Value) -> Self {
        self.call_card = Some(card);
        self
    }

    /// The same call with a result card as JSON. A card that is not a [`ResultView`] is
    /// shown as a generic card holding the card's raw JSON as text.
    #[must_use]
    pub fn with_raw_result_card(mut self, card: Value) -> Self {
        self.result_card = Some(card);
        self
    }

    /// The same call, its result marked as a failure (or not).
    #[must_use]
    pub fn with_error(mut self, is_error: bool) -> Self {
        self.is_error = is_error;
        self
    }

    /// The entry as the renderer reads it, cards checked and strings bounded.
    fn to_entry(&self) -> Value {
        let mut entry = Object::new();
        entry.insert("kind", "call");
        if let Some(line) = self.line {
            entry.insert("line", line);
        }
        if let Some(id) = &self.id {
            entry.insert("id", bound_str(id));
        }
        entry.insert("name", bound_str(&self.name));
        if let Some(arguments) = &self.arguments {
            entry.insert("arguments", bound(arguments.clone(), 0));
        }
        let call_card = self.call_card.as_ref().map_or_else(
            || generic_call(&self.name, self.arguments.as_ref()),
            |card| checked_call_card(card, &self.name, self.arguments.as_ref()),
        );
        entry.insert("callCard", bound(call_card, 0));
        if let Some(card) = &self.result_card {
            entry.insert("resultCard", bound(checked_result_card(card), 0));
        }
        if self.is_error {
            entry.insert("isError", true);
        }
        Value::Object(entry)
    }
}

/// A self-contained HTML page of calls and their cards, in order, with the log lines that
/// could not be read listed where they were.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CardPage {
    title: String,
    entries: Vec<Value>,
}

impl CardPage {
    /// An empty page with this title.
    pub fn new(title: impl Into<String>) -> Self {
        CardPage {
            title: title.into(),
            entries: Vec::new(),
        }
    }

    /// Add a call.
    pub fn push_call(&mut self, call: PageCall) {
        self.entries.push(call.to_entry());
    }

    /// Add a log line that is not a record: its 1-based number and why.
    pub fn push_malformed(&mut self, line: u64, error: &str) {
        let mut entry = Object::new();
        entry.insert("kind", "malformed");
        entry.insert("line", line);
        entry.insert("error", bound_str(error));
        self.entries.push(Value::Object(entry));
    }

    /// How many entries (calls and malformed lines) the page has.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the page has no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The page: one HTML document with the renderer and the entries inline.
    pub fn render(&self) -> String {
        let data = Value::Array(self.entries.iter().cloned().collect::<Array>());
        let title = escape_html(&truncate_chars(&self.title, 200));
        document(&title, PAGE_CSP, &format!("<h1>{title}</h1>"), Some(&data))
    }
}

/// The MCP Apps view (`text/html;profile=mcp-app`): the same renderer, which asks its
/// host for the call (`ui/initialize`), then shows the arguments it is sent and the cards
/// of the result (`_meta["dev.dsh-rs/cards"]`, [`CARDS_META_KEY`]). Read-only: it never
/// calls a tool.
pub fn view_html() -> String {
    let csp = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
img-src data:; connect-src 'none'; frame-src 'none'; object-src 'none'; base-uri 'none'; \
form-action 'none'";
    document("dsh-rs card", csp, "", None)
}

fn document(title: &str, csp: &str, header: &str, data: Option<&Value>) -> String {
    let mut html = String::with_capacity(CARDS_JS.len() + CARDS_CSS.len() + 1024);
    html.push_str("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n");
    let _ = writeln!(
        html,
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">"
    );
    html.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(html, "<title>{title}</title>");
    let _ = writeln!(html, "<style>\n{CARDS_CSS}</style>\n</head><body>");
    html.push_str(header);
    html.push_str("\n<main id=\"dsh-cards\" aria-live=\"polite\"></main>\n");
    html.push_str("<noscript>This page shows its cards with JavaScript.</noscript>\n");
    if let Some(data) = data {
        html.push_str("<script type=\"application/json\" id=\"dsh-cards-data\">");
        html.push_str(&json_for_script(data));
        html.push_str("</script>\n");
    }
    let _ = writeln!(html, "<script>\n{CARDS_JS}</script>\n</body></html>");
    html
}

/// JSON text that is safe inside a `<script>` element: `<`, `>`, `&` and the two line
/// separators JavaScript once treated as newlines, as `\u` escapes. They only occur
/// inside strings, where the escape means the same character.
fn json_for_script(value: &Value) -> String {
    let text = value.to_string();
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// At most `max` characters of `text`, with a note of what was cut.
fn truncate_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((cut, _)) => {
            let rest = text[cut..].chars().count();
            format!(
                "{}\u{2026} [{rest} more characters not shown]",
                &text[..cut]
            )
        }
    }
}

fn bound_str(text: &str) -> Value {
    Value::from(truncate_chars(text, MAX_STRING_CHARS))
}

/// `value` with every string cut to [`MAX_STRING_CHARS`] and nesting past [`MAX_DEPTH`]
/// replaced by a note.
fn bound(value: Value, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return Value::from("[nested too deep to show]");
    }
    match value {
        Value::String(s) if s.len() > MAX_STRING_CHARS => bound_str(&s),
        Value::Array(items) => Value::Array(
            items
                .into_vec()
                .into_iter()
                .map(|v| bound(v, depth + 1))
                .collect(),
        ),
        Value::Object(fields) => {
            let mut out = Object::with_capacity(fields.len());
            for (key, v) in fields.into_vec() {
                out.insert(truncate_chars(&key, MAX_STRING_CHARS), bound(v, depth + 1));
            }
            Value::Object(out)
        }
        other => other,
    }
}

/// The generic call card: the tool's name and its raw arguments.
fn generic_call(name: &str, arguments: Option<&Value>) -> Value {
    dsh_json::to_value(&CallView::generic(name, arguments.cloned())).unwrap_or(Value::Null)
}

/// A pending card this version can read, written back as this version writes it (unknown
/// fields dropped); any other value gives the generic card.
fn checked_call_card(card: &Value, name: &str, arguments: Option<&Value>) -> Value {
    dsh_json::from_value::<CallView>(card)
        .ok()
        .and_then(|view| dsh_json::to_value(&view).ok())
        .unwrap_or_else(|| generic_call(name, arguments))
}

/// A result card this version can read, written back; any other value gives a generic
/// card showing the value's raw JSON as text.
fn checked_result_card(card: &Value) -> Value {
    if let Some(known) = dsh_json::from_value::<ResultView>(card)
        .ok()
        .and_then(|view| dsh_json::to_value(&view).ok())
    {
        return known;
    }
    let raw = truncate_chars(&bound(card.clone(), 0).to_string(), MAX_STRING_CHARS);
    let mut text = Object::new();
    text.insert("type", "text");
    text.insert("text", raw);
    let mut generic = Object::new();
    generic.insert("card", "generic");
    generic.insert("title", "unrecognized card");
    generic.insert(
        "content",
        Value::Array([Value::Object(text)].into_iter().collect()),
    );
    Value::Object(generic)
}
