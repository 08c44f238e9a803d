//! The error type of a `Result` must convert into `ToolError`: one error at the error
//! type (or at `Result` for an alias that hides it).
use dsh_runtime::tool;

struct NotAnError;

/// Fails oddly.
#[tool]
async fn odd() -> Result<u32, NotAnError> {
    Err(NotAnError)
}

/// Parse a number.
#[tool]
async fn parse(text: String) -> Result<u32, String> {
    text.parse().map_err(|_| format!("not a number: {text}"))
}

// `anyhow::Result<T>`, spelled out (the crate is not a dependency here): an alias whose
// error type is not written in the signature.
mod anyhow {
    pub struct Error(pub String);
    pub type Result<T, E = Error> = std::result::Result<T, E>;
}

/// Parse a number, anyhow.
#[tool]
async fn parse_any(text: String) -> anyhow::Result<u32> {
    text.parse().map_err(|_| anyhow::Error(text))
}

fn main() {}
