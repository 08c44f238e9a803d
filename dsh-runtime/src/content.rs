//! What a model is shown: [`ContentBlock`]s, the model-facing side of a result.
//!
//! A tool's canonical value is data; its content is what the model reads. The pipeline
//! renders the value into content (a tool's `render`, or [`default_render`]), post-execute
//! hooks may replace it, and a tool's `finalize_content` may rewrite it once at the end.

use serde::Serialize;

use crate::json::Value;

/// A model-facing content block.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// Base64 data.
        data: String,
        /// The media type, e.g. `image/png`.
        media_type: String,
    },
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text { text: text.into() }
    }

    /// The text, for a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text { text } => Some(text),
            _ => None,
        }
    }
}

/// The default rendering of a canonical value: a string as its raw text, anything else as
/// compact JSON.
pub fn default_render(value: &Value) -> Vec<ContentBlock> {
    vec![default_block(value)]
}

/// The one block of [`default_render`].
pub(crate) fn default_block(value: &Value) -> ContentBlock {
    match value {
        Value::String(s) => ContentBlock::text(String::from(&**s)),
        other => ContentBlock::text(other.to_string()),
    }
}

/// The content of a result as the pipeline holds it: the usual single block is kept
/// without an allocation of its own.
pub(crate) type Blocks = smallvec::SmallVec<[ContentBlock; 1]>;
