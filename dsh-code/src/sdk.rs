//! The SDK a model in code mode is shown about the tools it can call from a program.
//!
//! [`sdk_text`] is the one place prompt assembly gets the SDK from. It is the runtime's
//! typed TypeScript generator ([`dsh_runtime::codegen::typescript`]) over the tools'
//! definitions: every tool's arguments and output typed from its schemas, `run_code`
//! left out, tools sorted by name, and the runtime's [`INSTRUCTIONS`] above the
//! declarations, so a host that renders the SDK itself shows the same text.

use dsh_runtime::DynTool;
use dsh_runtime::codegen::{Sdk, typescript};

/// How to write programs, shown above the declarations: the runtime's
/// [`typescript::INSTRUCTIONS`], so every host shows one text.
pub use dsh_runtime::codegen::typescript::INSTRUCTIONS;

/// The rule a model in `code` mode is given before the SDK.
pub const CODE_ONLY_RULE: &str = "`run_code` is the only tool you can call directly; a \
direct call to any other tool fails. Use the tools declared below from inside a program.";

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
/// let sdk = dsh_code::sdk_text(&[DynTool::new(Add)]);
/// let text = sdk.prompt_section();
/// assert!(text.starts_with(dsh_code::INSTRUCTIONS));
/// assert!(text.contains("  add: number;\n"));
/// assert!(sdk.warnings.is_empty());
/// ```
pub fn sdk_text(tools: &[DynTool]) -> Sdk {
    typescript::render(tools.iter().map(|t| t.definition()))
}
