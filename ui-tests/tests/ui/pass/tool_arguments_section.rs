//! Descriptions from a rustdoc `# Arguments` section; the context by reference; a raw
//! identifier; an `io::Result` alias.
use dsh_runtime::{Tool, ToolContext, tool};

/// Search the index.
///
/// # Arguments
///
/// * `query` - What to look for.
/// * `r#type` - The kind of document.
/// * `cx` - The call context.
#[tool]
async fn search(
    query: String,
    r#type: Option<String>,
    cx: &ToolContext,
) -> std::io::Result<Vec<String>> {
    let _ = cx;
    Ok(vec![query, r#type.unwrap_or_default()])
}

pub fn main() {
    let _ = Search.definition();
}
