//! Text generated from tool definitions: what people and models read about a tool set.
//!
//! - [`markdown`]: a Markdown catalog of a registry's tools (descriptions, parameter and
//!   output schemas, annotations), stable enough to check in.
//! - [`typescript`] and [`python`]: the code-mode SDKs, the typed `tools` API a model
//!   programs against in `run_code` (contract section 10). Both are deterministic and
//!   never fail: a construct a language cannot state degrades (`unknown`, `Any`, a wider
//!   type) and the degradation is reported like an export warning.

pub mod markdown;
pub mod python;
pub mod typescript;

use crate::ToolDefinition;
use crate::export::ExportWarning;
use crate::registry::RUN_CODE;

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
    pub warnings: Vec<ExportWarning>,
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

/// The tools an SDK declares: every definition but `run_code`, sorted by name in UTF-16
/// code unit order (the order the reference implementation's string comparison gives).
pub(crate) fn sdk_tools<'a, I>(definitions: I) -> Vec<&'a ToolDefinition>
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
pub(crate) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
