//! Input examples are JSON objects of arguments: invalid JSON or another kind of value is
//! an error at the doc block's line or at the literal.
use dsh_runtime::tool;

/// Read a file.
///
/// # Examples
///
/// ```json
/// {"path": "src/lib.rs",
///  "limit": }
/// ```
#[tool]
async fn read(path: String, limit: Option<u32>) -> String {
    let _ = limit;
    path
}

/// Not an object.
#[tool(example = r#"["a.txt"]"#)]
async fn open(path: String) -> String {
    path
}

/// Other code in a JSON examples section.
///
/// # Examples
///
/// ```json
/// {"path": "a"}
/// ```
///
/// ```rust
/// let x = 1;
/// ```
#[tool]
async fn stat(path: String) -> String {
    path
}

/// Not a literal.
#[tool(example = concat!("{", "}"))]
async fn touch(path: String) -> String {
    path
}

fn main() {}
