//! The card vocabulary: neutral render intents a UI maps to its own views.
//!
//! Tools describe a pending call with a [`CallView`] and a completed result with a
//! [`ResultView`]; both serialize to JSON tagged by `card` (and by `shape` or `kind`
//! where a card has variants), with camelCase fields. Presenters are pure functions of
//! the arguments (and the result summary): they also run when a log is replayed.

use serde::{Deserialize, Serialize};

use crate::json::Value;
use crate::tool::ContentBlock;

/// What kind of action a call performs (an icon hint).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
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
    /// Raw terminal output. `exit_code` and `signal` are mutually exclusive.
    #[serde(rename_all = "camelCase")]
    Terminal {
        /// Card title.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// Raw output.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output: Option<String>,
        /// Exit code.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i64>,
        /// Terminating signal.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signal: Option<String>,
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
}

impl ResultView {
    /// The generic fallback card.
    pub fn generic(summary: &ResultSummary) -> Self {
        ResultView::Generic {
            title: None,
            content: Some(summary.content.clone()),
        }
    }
}
