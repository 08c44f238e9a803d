//! What a model is shown: [`ContentBlock`]s, the model-facing side of a result.
//!
//! A tool's canonical value is data; its content is what the model reads. The pipeline
//! renders the value into content (a tool's `render`, or [`default_render`]), post-execute
//! hooks may replace it, and a tool's `finalize_content` may rewrite it once at the end.

use crate::json::Value;

pub use dsh_cards::ContentBlock;

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
