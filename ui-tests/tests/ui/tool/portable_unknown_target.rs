//! `portable` names known targets only; the message lists them.
use dsh_runtime::tool;

/// A typo.
#[tool(portable = "openai_strict")]
async fn a(x: i64) -> i64 {
    x
}

/// Another target, and a list with a duplicate and a non-string.
#[tool(portable("gemini", "mcp"))]
async fn b(x: i64) -> i64 {
    x
}

/// Twice.
#[tool(portable("gemini", "gemini"))]
async fn c(x: i64) -> i64 {
    x
}

/// A flag is not a list.
#[tool(portable)]
async fn d(x: i64) -> i64 {
    x
}

fn main() {}
