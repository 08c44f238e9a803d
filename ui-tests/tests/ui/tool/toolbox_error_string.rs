//! A `#[toolbox]` method whose error type does not convert into `ToolError` (a `String`,
//! a `&str`): one error at the error type, saying how to convert.
use dsh_runtime::toolbox;

pub struct Parser;

#[toolbox]
impl Parser {
    /// Parse a number.
    #[tool]
    pub async fn parse(&self, text: String) -> Result<u32, String> {
        text.parse().map_err(|_| format!("not a number: {text}"))
    }

    /// Parse a flag.
    #[tool]
    pub async fn flag(&self, text: String) -> Result<bool, &'static str> {
        text.parse().map_err(|_| "not a flag")
    }
}

fn main() {}
