//! The card vocabulary of dsh-rs: neutral render intents a UI maps to its own views, and
//! the content blocks a model is shown.
//!
//! Tools describe a pending call with a [`CallView`] and a completed result with a
//! [`ResultView`]; both serialize to JSON tagged by `card` (and by `shape` or `kind`
//! where a card has variants), with camelCase fields. Presenters are pure functions of
//! the arguments (and the result summary): they also run when a log is replayed.
//!
//! This crate is the vocabulary (serde, no runtime), so that a UI or a log reader can
//! read cards without the tool runtime, and one renderer that shows them to a person:
//! [`CardPage`] (a self-contained HTML page of calls) and [`view_html`] (the same
//! renderer as an MCP Apps view). Tool authors reach it as
//! `dsh_runtime::cards` (the cards) and `dsh_runtime::content` ([`ContentBlock`]).
//!
//! The cards' JSON shapes are pinned field for field by round-trip tests
//! (`tests/cards.rs`). Optional fields are
//! omitted when absent; when reading a card back, an absent optional field and `null`
//! mean the same, and unknown fields are ignored (cards come from logs written by other
//! versions). An unknown `card`, `shape` or `kind` tag is an error, and so is a
//! terminal result carrying both `exitCode` and `signal`.
//!
//! ```
//! use dsh_cards::{ReadLine, ReadView, ResultView, TerminalExit};
//!
//! let card: ResultView = ReadView::new("src/lib.rs", 1, vec![ReadLine::new(1, "//! docs")], 120)
//!     .with_lang("rust")
//!     .into();
//! let json = serde_json::to_string(&card).unwrap();
//! assert_eq!(
//!     json,
//!     r#"{"card":"read","path":"src/lib.rs","offset":1,"lines":[{"number":1,"text":"//! docs"}],"totalLines":120,"lang":"rust"}"#
//! );
//!
//! let done = ResultView::terminal("ok\n", Some(TerminalExit::Code(0)));
//! assert_eq!(
//!     serde_json::to_string(&done).unwrap(),
//!     r#"{"card":"terminal","output":"ok\n","exitCode":0}"#
//! );
//! ```

use serde::de::Error as _;
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use dsh_json::Value;

mod content;
mod page;

pub use content::{Annotations, ContentBlock, ContentError, ResourceContents, ResourceLink, Role};
pub use page::{
    CARDS_CSS, CARDS_JS, CARDS_META_KEY, CardPage, MAX_STRING_CHARS, PageCall, VIEW_MIME_TYPE,
    view_html,
};

/// What kind of action a call performs (an icon hint).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ToolCallKind {
    /// Reads data.
    Read,
    /// Edits a file.
    Edit,
    /// Deletes something.
    Delete,
    /// Moves or renames something.
    Move,
    /// Searches.
    Search,
    /// Runs a command.
    Execute,
    /// Fetches from the network.
    Fetch,
    /// Anything else.
    #[default]
    Other,
}

/// A file a call touches, so an editor can follow along.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileLocation {
    /// The path.
    pub path: String,
    /// 1-based line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
}

impl FileLocation {
    /// A location naming a whole file.
    pub fn new(path: impl Into<String>) -> Self {
        FileLocation {
            path: path.into(),
            line: None,
        }
    }

    /// The same location at a 1-based line.
    #[must_use]
    pub fn at_line(mut self, line: u64) -> Self {
        self.line = Some(line);
        self
    }
}

/// A whole-file diff.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileDiff {
    /// The path.
    pub path: String,
    /// The old text; `None` for a new file (serialized as `null`).
    pub old_text: Option<String>,
    /// The new text.
    pub new_text: String,
}

impl FileDiff {
    /// A diff creating a new file (`oldText: null`).
    pub fn create(path: impl Into<String>, new_text: impl Into<String>) -> Self {
        FileDiff {
            path: path.into(),
            old_text: None,
            new_text: new_text.into(),
        }
    }

    /// A diff replacing `old_text` with `new_text` in an existing file.
    pub fn update(
        path: impl Into<String>,
        old_text: impl Into<String>,
        new_text: impl Into<String>,
    ) -> Self {
        FileDiff {
            path: path.into(),
            old_text: Some(old_text.into()),
            new_text: new_text.into(),
        }
    }
}

/// The pending card of a call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "card", rename_all = "camelCase")]
#[non_exhaustive]
pub enum CallView {
    /// The default card.
    #[serde(rename_all = "camelCase")]
    Generic {
        /// Card title.
        title: String,
        /// Icon hint.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        kind: Option<ToolCallKind>,
        /// The raw arguments.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        raw_input: Option<Value>,
        /// Content to show.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<Vec<ContentBlock>>,
        /// Files touched.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        locations: Option<Vec<FileLocation>>,
    },
    /// The call is a shell command.
    #[serde(rename_all = "camelCase")]
    Terminal {
        /// The command.
        title: String,
        /// Shown above the terminal.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// Working directory.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<String>,
    },
    /// The call creates or modifies files.
    #[serde(rename_all = "camelCase")]
    Diff {
        /// Card title.
        title: String,
        /// The diffs.
        diffs: Vec<FileDiff>,
        /// Files touched.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        locations: Option<Vec<FileLocation>>,
    },
}

impl CallView {
    /// The generic fallback card: title = tool name, raw arguments as input.
    pub fn generic(tool_name: &str, raw_input: Option<Value>) -> Self {
        CallView::Generic {
            title: tool_name.to_string(),
            kind: None,
            raw_input,
            content: None,
            locations: None,
        }
    }

    /// A terminal card for a shell command (the command is the title).
    pub fn terminal(command: impl Into<String>) -> Self {
        CallView::Terminal {
            title: command.into(),
            description: None,
            cwd: None,
        }
    }

    /// A diff card for a call that creates or modifies files.
    pub fn diff(title: impl Into<String>, diffs: Vec<FileDiff>) -> Self {
        CallView::Diff {
            title: title.into(),
            diffs,
            locations: None,
        }
    }
}

/// What a result presenter sees: the persisted parts of a result (never the value).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResultSummary {
    /// Final model-facing content.
    pub content: Vec<ContentBlock>,
    /// Whether the result is a failure.
    pub is_error: bool,
    /// Persisted presentation metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// How a terminal command ended: an exit code or a terminating signal, never both.
///
/// On the wire this is the `exitCode` or the `signal` field of a terminal result card.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
// Exhaustive on purpose: a process ends with an exit code or a signal, nothing else.
pub enum TerminalExit {
    /// The process exited with this code.
    Code(i64),
    /// The process was terminated by this signal (e.g. `SIGKILL`).
    Signal(String),
}

impl TerminalExit {
    /// The exit code, when the process exited.
    pub fn exit_code(&self) -> Option<i64> {
        match self {
            TerminalExit::Code(code) => Some(*code),
            TerminalExit::Signal(_) => None,
        }
    }

    /// The signal, when the process was terminated by one.
    pub fn signal(&self) -> Option<&str> {
        match self {
            TerminalExit::Code(_) => None,
            TerminalExit::Signal(signal) => Some(signal),
        }
    }
}

/// The completed card of a result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "card", rename_all = "camelCase")]
#[non_exhaustive]
pub enum ResultView {
    /// The default card.
    #[serde(rename_all = "camelCase")]
    Generic {
        /// Card title.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// Content to show.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<Vec<ContentBlock>>,
    },
    /// Raw terminal output and how the command ended.
    ///
    /// Serialized as `{title?, output?, exitCode?, signal?}`; `exit` is what makes the
    /// last two mutually exclusive.
    #[serde(
        serialize_with = "terminal_wire::serialize",
        deserialize_with = "terminal_wire::deserialize"
    )]
    Terminal {
        /// Card title.
        title: Option<String>,
        /// Raw output.
        output: Option<String>,
        /// The exit code or the terminating signal, when known.
        exit: Option<TerminalExit>,
    },
    /// Applied diffs.
    #[serde(rename_all = "camelCase")]
    Diff {
        /// Card title.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// The diffs.
        diffs: Vec<FileDiff>,
    },
    /// A discovery result: matches grouped by file, or a flat path list.
    Search(SearchView),
    /// A window of a file's lines.
    Read(ReadView),
    /// A completed web search or fetch.
    Web(WebView),
}

impl ResultView {
    /// The generic fallback card.
    pub fn generic(summary: &ResultSummary) -> Self {
        ResultView::Generic {
            title: None,
            content: Some(summary.content.clone()),
        }
    }

    /// A terminal card with raw output and, when known, how the command ended.
    pub fn terminal(output: impl Into<String>, exit: Option<TerminalExit>) -> Self {
        ResultView::Terminal {
            title: None,
            output: Some(output.into()),
            exit,
        }
    }

    /// A diff card of applied changes.
    pub fn diff(diffs: Vec<FileDiff>) -> Self {
        ResultView::Diff { title: None, diffs }
    }
}

impl From<SearchView> for ResultView {
    fn from(view: SearchView) -> Self {
        ResultView::Search(view)
    }
}

impl From<ReadView> for ResultView {
    fn from(view: ReadView) -> Self {
        ResultView::Read(view)
    }
}

impl From<WebView> for ResultView {
    fn from(view: WebView) -> Self {
        ResultView::Web(view)
    }
}

/// The wire form of [`ResultView::Terminal`]: flat `exitCode` / `signal` fields, at most
/// one of them present. Serde's derive cannot express "exactly one of two sibling keys",
/// so the variant routes through these two functions.
mod terminal_wire {
    use super::*;

    pub(super) fn serialize<S: Serializer>(
        title: &Option<String>,
        output: &Option<String>,
        exit: &Option<TerminalExit>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let len = usize::from(title.is_some())
            + usize::from(output.is_some())
            + usize::from(exit.is_some());
        let mut card = serializer.serialize_struct("Terminal", len)?;
        if let Some(title) = title {
            card.serialize_field("title", title)?;
        }
        if let Some(output) = output {
            card.serialize_field("output", output)?;
        }
        match exit {
            Some(TerminalExit::Code(code)) => card.serialize_field("exitCode", code)?,
            Some(TerminalExit::Signal(signal)) => card.serialize_field("signal", signal)?,
            None => {}
        }
        card.end()
    }

    /// The variant's fields in declaration order: title, output, exit.
    type Fields = (Option<String>, Option<String>, Option<TerminalExit>);

    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Wire {
        #[serde(default)]
        title: Option<String>,
        #[serde(default)]
        output: Option<String>,
        #[serde(default)]
        exit_code: Option<i64>,
        #[serde(default)]
        signal: Option<String>,
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Fields, D::Error> {
        let wire = Wire::deserialize(deserializer)?;
        let exit = match (wire.exit_code, wire.signal) {
            (Some(_), Some(_)) => {
                return Err(D::Error::custom(
                    "terminal card: `exitCode` and `signal` are mutually exclusive",
                ));
            }
            (Some(code), None) => Some(TerminalExit::Code(code)),
            (None, Some(signal)) => Some(TerminalExit::Signal(signal)),
            (None, None) => None,
        };
        Ok((wire.title, wire.output, exit))
    }
}

/// The `search` result card, by `shape`. There is no call-time analogue: a discovery
/// call stays a generic card until its matches exist.
///
/// `truncated` and `total` say whether the inline list is complete, so a UI never
/// presents a capped result as the whole answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "shape", rename_all = "camelCase")]
#[non_exhaustive]
pub enum SearchView {
    /// Matching lines grouped by file (grep).
    #[serde(rename_all = "camelCase")]
    Matches {
        /// Card title.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// The files with their matches.
        files: Vec<SearchFile>,
        /// Whether the list was capped.
        truncated: bool,
        /// How many matches there were in all.
        total: u64,
    },
    /// A flat list of paths (glob).
    #[serde(rename_all = "camelCase")]
    Paths {
        /// Card title.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// The paths.
        paths: Vec<String>,
        /// Whether the list was capped.
        truncated: bool,
        /// How many paths there were in all.
        total: u64,
    },
}

impl SearchView {
    /// Matches grouped by file.
    pub fn matches(files: Vec<SearchFile>, truncated: bool, total: u64) -> Self {
        SearchView::Matches {
            title: None,
            files,
            truncated,
            total,
        }
    }

    /// A flat list of paths.
    pub fn paths(paths: Vec<String>, truncated: bool, total: u64) -> Self {
        SearchView::Paths {
            title: None,
            paths,
            truncated,
            total,
        }
    }

    /// The same card with a title.
    #[must_use]
    pub fn with_title(mut self, new_title: impl Into<String>) -> Self {
        match &mut self {
            SearchView::Matches { title, .. } | SearchView::Paths { title, .. } => {
                *title = Some(new_title.into());
            }
        }
        self
    }

    /// Whether the inline list was capped.
    pub fn truncated(&self) -> bool {
        match self {
            SearchView::Matches { truncated, .. } | SearchView::Paths { truncated, .. } => {
                *truncated
            }
        }
    }

    /// How many results there were in all.
    pub fn total(&self) -> u64 {
        match self {
            SearchView::Matches { total, .. } | SearchView::Paths { total, .. } => *total,
        }
    }
}

/// One file of a `matches` search card.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchFile {
    /// The path.
    pub path: String,
    /// Its matching lines.
    pub matches: Vec<SearchMatch>,
}

impl SearchFile {
    /// A file with its matches.
    pub fn new(path: impl Into<String>, matches: Vec<SearchMatch>) -> Self {
        SearchFile {
            path: path.into(),
            matches,
        }
    }
}

/// One matching line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchMatch {
    /// 1-based line number.
    pub line_number: u64,
    /// The line's text.
    pub line: String,
}

impl SearchMatch {
    /// A match at a 1-based line.
    pub fn new(line_number: u64, line: impl Into<String>) -> Self {
        SearchMatch {
            line_number,
            line: line.into(),
        }
    }
}

/// The `read` result card: a line-numbered window of a file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadView {
    /// Card title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The file read.
    pub path: String,
    /// The 1-based first line requested; kept even when `lines` is empty.
    pub offset: u64,
    /// The lines of the window.
    pub lines: Vec<ReadLine>,
    /// How many lines the file has.
    pub total_lines: u64,
    /// A language hint for highlighting (usually from the extension).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lang: Option<String>,
    /// Plain content for a UI without a read view.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<ContentBlock>>,
}

impl ReadView {
    /// A window starting at the 1-based `offset`, of a file with `total_lines` lines.
    pub fn new(
        path: impl Into<String>,
        offset: u64,
        lines: Vec<ReadLine>,
        total_lines: u64,
    ) -> Self {
        ReadView {
            title: None,
            path: path.into(),
            offset,
            lines,
            total_lines,
            lang: None,
            content: None,
        }
    }

    /// The same card with a title.
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The same card with a language hint.
    #[must_use]
    pub fn with_lang(mut self, lang: impl Into<String>) -> Self {
        self.lang = Some(lang.into());
        self
    }

    /// The same card with fallback content.
    #[must_use]
    pub fn with_content(mut self, content: Vec<ContentBlock>) -> Self {
        self.content = Some(content);
        self
    }
}

/// One numbered line of a [`ReadView`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadLine {
    /// 1-based line number.
    pub number: u64,
    /// The line's text, without its terminator.
    pub text: String,
}

impl ReadLine {
    /// A numbered line.
    pub fn new(number: u64, text: impl Into<String>) -> Self {
        ReadLine {
            number,
            text: text.into(),
        }
    }
}

/// The `web` result card, by `kind`. It carries no copy of the body: a UI without a web
/// view falls back to the result's content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
#[non_exhaustive]
pub enum WebView {
    /// Structured search results.
    #[serde(rename_all = "camelCase")]
    Search {
        /// Card title.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// The sources found.
        sources: Vec<WebSource>,
        /// A synthesized answer, when the backend gives one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        answer: Option<String>,
        /// Whether the sources were capped.
        truncated: bool,
    },
    /// A fetched page's summary.
    #[serde(rename_all = "camelCase")]
    Fetch {
        /// Card title.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// The URL fetched.
        url: String,
        /// The HTTP status code.
        status_code: u16,
        /// Whether the body was cut short.
        truncated: bool,
    },
}

impl WebView {
    /// A search card.
    pub fn search(sources: Vec<WebSource>, truncated: bool) -> Self {
        WebView::Search {
            title: None,
            sources,
            answer: None,
            truncated,
        }
    }

    /// A fetch card.
    pub fn fetch(url: impl Into<String>, status_code: u16, truncated: bool) -> Self {
        WebView::Fetch {
            title: None,
            url: url.into(),
            status_code,
            truncated,
        }
    }

    /// The same card with a title.
    #[must_use]
    pub fn with_title(mut self, new_title: impl Into<String>) -> Self {
        match &mut self {
            WebView::Search { title, .. } | WebView::Fetch { title, .. } => {
                *title = Some(new_title.into());
            }
        }
        self
    }

    /// The same search card with an answer; a fetch card is returned unchanged.
    #[must_use]
    pub fn with_answer(mut self, new_answer: impl Into<String>) -> Self {
        if let WebView::Search { answer, .. } = &mut self {
            *answer = Some(new_answer.into());
        }
        self
    }
}

/// One source of a web search card.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebSource {
    /// The source's URL.
    pub url: String,
    /// Its title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A snippet of its text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
    /// When it was published, as the backend reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published_at: Option<String>,
}

impl WebSource {
    /// A source with only a URL.
    pub fn new(url: impl Into<String>) -> Self {
        WebSource {
            url: url.into(),
            title: None,
            snippet: None,
            published_at: None,
        }
    }

    /// The same source with a title.
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The same source with a snippet.
    #[must_use]
    pub fn with_snippet(mut self, snippet: impl Into<String>) -> Self {
        self.snippet = Some(snippet.into());
        self
    }

    /// The same source with a publication date.
    #[must_use]
    pub fn with_published_at(mut self, published_at: impl Into<String>) -> Self {
        self.published_at = Some(published_at.into());
        self
    }
}
