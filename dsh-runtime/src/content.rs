//! What a model is shown: [`ContentBlock`]s, the model-facing side of a result.
//!
//! A tool's canonical value is data; its content is what the model reads. The pipeline
//! renders the value into content (a tool's `render`, or [`default_render`]), post-execute
//! hooks may replace it, and a tool's `finalize_content` may rewrite it once at the end.
//!
//! Every block kind of MCP is here: text, images, audio, embedded resources (text or
//! base64 bytes) and resource links, each with optional [`Annotations`]. A tool returns
//! any of them the way it returns an image: from its `render` function, or attached to
//! the result with [`ToolContext::attach_content`](crate::ToolContext::attach_content).
//!
//! ```
//! use dsh_runtime::content::{ContentBlock, ResourceLink};
//! use dsh_runtime::{Registry, ToolCall, ToolContext, tool};
//!
//! /// Record a memo.
//! #[tool]
//! async fn memo(cx: ToolContext) -> String {
//!     cx.attach_content(ContentBlock::audio("UklGRiQAAABXQVZF", "audio/wav"));
//!     cx.attach_content(ContentBlock::resource_text("memo://1", "buy milk").with_mime_type("text/plain"));
//!     cx.attach_content(ResourceLink::new("memo://1/raw", "memo-1.wav").with_size(44).into());
//!     "memo 1 recorded".to_string()
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let registry = Registry::new();
//! let _memo = registry.register(Memo).unwrap();
//! let result = registry.execute(ToolCall::new("c1", "memo", "{}")).await;
//! let json = result.to_json();
//! let kinds: Vec<&str> = json["content"]
//!     .as_array()
//!     .unwrap()
//!     .iter()
//!     .map(|b| b["type"].as_str().unwrap())
//!     .collect();
//! assert_eq!(kinds, ["text", "audio", "resource", "resource_link"]);
//! # });
//! ```

use crate::json::Value;

pub use dsh_cards::{
    Annotations, ContentBlock, ContentError, ResourceContents, ResourceLink, Role,
};

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
