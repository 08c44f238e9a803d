//! `#[tool]` and `#[toolbox]` end to end, without a registry.

use dsh_runtime::json::{Value, parse};
use dsh_runtime::{Tool, ToolContext, ToolError, tool};

/// Read a file from disk.
///
/// Returns the text.
#[tool(read_only, concurrency_safe)]
async fn read_file(
    /// Absolute path of the file.
    path: String,
    /// 1-based first line.
    offset: Option<u64>,
    limit: Option<u64>,
    cx: ToolContext,
) -> Result<String, ToolError> {
    Ok(format!("{path}:{offset:?}:{limit:?}:{}", cx.name()))
}

#[test]
fn smoke() {
    let def = ReadFile.definition();
    println!("{}", def.parameters.to_json_string());
    println!("{}", def.output.to_json_string());
    println!("{:?}", def.description);
    let v: Value = parse(r#"{"path":"/x"}"#).unwrap();
    assert!(ReadFile.is_concurrency_safe(&v));
}
