//! Individual parameters with `///` docs, the context by value, `Result<T, ToolError>`.
use dsh_runtime::{Tool, ToolContext, ToolError, tool};

/// Read a file from disk.
#[tool]
pub async fn read_file(
    /// Absolute path of the file.
    path: String,
    /// 1-based first line.
    offset: Option<u64>,
    limit: Option<u64>,
    cx: ToolContext,
) -> Result<String, ToolError> {
    let _ = (offset, limit, cx);
    Ok(path)
}

pub fn main() {
    let _ = ReadFile.definition();
    let _ = ReadFileArgs {
        path: String::new(),
        offset: None,
        limit: Some(1),
    };
}
