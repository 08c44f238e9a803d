//! The code-mode SDKs: the typed `tools` API a model programs against in `run_code`.
//!
//! - [`typescript`] and [`python`] render the declarations for a set of tool definitions.
//!   Both are deterministic and never fail: a construct a language cannot state degrades
//!   (`unknown`, `Any`, a wider type) and the degradation is reported as an
//!   [`SdkWarning`].
//! - [`sdk_text`] is the one place prompt assembly gets the SDK from: the typed
//!   TypeScript generator over the tools' definitions (every tool's arguments and output
//!   typed from its schemas, `run_code` left out, tools sorted by name) with
//!   [`typescript::INSTRUCTIONS`] above the declarations, so a host that renders the SDK itself
//!   shows the same text.

pub mod python;
pub mod typescript;

use std::fmt;

use dsh_runtime::RUN_CODE;
use dsh_runtime::{DynTool, ToolDefinition};

/// The rule a model in `code` mode is given before the SDK.
pub const CODE_ONLY_RULE: &str = "`run_code` is the only tool you can call directly; a \
direct call to any other tool fails. Use the tools declared below from inside a program.";

/// A rendered code-mode SDK.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sdk {
    /// The fence language: `ts` or `python`.
    pub language: &'static str,
    /// How to write a `run_code` program against the SDK (Markdown prose).
    pub instructions: &'static str,
    /// The declarations: valid TypeScript or Python source.
    pub code: String,
    /// Every construct that was rendered less precisely than the schema states.
    pub warnings: Vec<SdkWarning>,
}

impl Sdk {
    /// The prompt section: the instructions, then the declarations in a fenced block.
    pub fn prompt_section(&self) -> String {
        format!(
            "{}\n\n```{}\n{}\n```",
            self.instructions, self.language, self.code
        )
    }
}

/// A schema construct an SDK states less precisely than the schema (the validator still
/// enforces it): which tool, where, and what the model reads instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SdkWarning {
    /// The tool's name (`""` for [`typescript::type_of`]).
    pub tool: String,
    /// Where in the tool's schemas (`parameters.properties.limit`, `output.oneOf[1]`, `name`).
    pub path: String,
    /// What was lost or changed.
    pub lost: String,
}

/// `<tool>: <path>: <lost>`.
impl fmt::Display for SdkWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.tool, self.path, self.lost)
    }
}

/// The TypeScript SDK for these tools (`run_code` among them is left out).
///
/// [`Sdk::prompt_section`] is the text a model is shown (instructions, then one `ts`
/// block); [`Sdk::warnings`] lists every schema construct TypeScript states less
/// precisely than the schema (the validator still enforces it). The text depends only
/// on the set of definitions, not on their order.
///
/// ```
/// # use dsh_runtime::{tool, DynTool};
/// /// Add two numbers.
/// #[tool(read_only)]
/// async fn add(a: i64, b: i64) -> i64 { a + b }
///
/// let sdk = dsh_code::sdk::sdk_text(&[DynTool::new(Add)]);
/// let text = sdk.prompt_section();
/// assert!(text.starts_with(dsh_code::sdk::typescript::INSTRUCTIONS));
/// assert!(text.contains("  add: number;\n"));
/// assert!(sdk.warnings.is_empty());
/// ```
pub fn sdk_text(tools: &[DynTool]) -> Sdk {
    typescript::render(tools.iter().map(|t| t.definition()))
}

/// The tools an SDK declares: every definition but `run_code`, sorted by name in UTF-16
/// code unit order (JavaScript's string comparison, so both SDKs list tools as a
/// TypeScript host sorting them would).
fn sdk_tools<'a, I>(definitions: I) -> Vec<&'a ToolDefinition>
where
    I: IntoIterator<Item = &'a ToolDefinition>,
{
    let mut list: Vec<&ToolDefinition> = definitions
        .into_iter()
        .filter(|d| d.name != RUN_CODE)
        .collect();
    list.sort_by(|a, b| a.name.encode_utf16().cmp(b.name.encode_utf16()));
    list
}

/// Collapse whitespace runs to one space and trim: one-line docs, stable across
/// reformatting of the source comments.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// JSON-quote a string, escaping exactly as the JSON printer does.
fn json_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    // Writing to a `String` cannot fail.
    let _ = dsh_runtime::json::write_json_string(&mut out, s);
    out
}
