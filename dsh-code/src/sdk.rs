//! The text a model in code mode is shown about the tools it can call from a program.
//!
//! [`sdk_text`] is the one place prompt assembly gets the SDK from. Until the typed
//! TypeScript generator of the runtime (`dsh_runtime::codegen::typescript`) is
//! available, it declares every tool with loose types (`Record<string, JsonValue>` in,
//! `JsonValue` out) and its description; switch the body of [`sdk_text`] to the typed
//! generator when it lands. The structure (instructions, then one `ts` block with
//! `JsonValue`, `ToolArgsMap`, `ToolOutputMap`, `ToolName`, `ToolCallError` and
//! `tools`) is already the contract's.

use dsh_runtime::DynTool;
use dsh_runtime::json::Value;
use dsh_runtime::registry::RUN_CODE;

/// The rule a model in `code` mode is given before the SDK.
pub const CODE_ONLY_RULE: &str = "`run_code` is the only tool you can call directly; a \
direct call to any other tool fails. Use the tools declared below from inside a program.";

/// How to write programs, shown above the declarations.
pub const INSTRUCTIONS: &str = "## Programs for run_code

`run_code` takes `code`, the body of an async TypeScript function (`await` and `return` \
work at the top level; only erasable syntax, so no `enum`, `namespace` or parameter \
properties; types are removed, not checked), and `description`, a few words saying what \
the program does.

- Call a tool with `await tools.name(args)` (or `tools[\"name\"](args)`). A call resolves \
to the tool's JSON value as declared below; arguments must be plain JSON.
- A failed call rejects with a `ToolCallError`: `toolName` says which tool, `message` \
says why. Catch it to handle the failure and go on.
- Calls to read-only tools may run concurrently under `Promise.all`; other calls run one \
at a time, in the order they were made. Use `await` to order dependent steps.
- The run's output is what you print with `console.log` and what you `return`; values \
in between stay inside the program, so print or return only what you need.

The tools:";

/// The SDK section for these tools (the caller leaves out `run_code`): instructions,
/// then a `ts` block declaring them. Tools are sorted by name, so an unchanged set
/// gives the same text.
pub fn sdk_text(tools: &[DynTool]) -> String {
    let mut sorted: Vec<&DynTool> = tools
        .iter()
        .filter(|t| t.definition().name != RUN_CODE)
        .collect();
    sorted.sort_by(|a, b| a.definition().name.cmp(&b.definition().name));
    let mut args = String::new();
    let mut outputs = String::new();
    for tool in sorted {
        let def = tool.definition();
        let key = ts_key(&def.name);
        if let Some(doc) = doc_line(&def.description) {
            args.push_str(&format!("  {doc}\n"));
        }
        args.push_str(&format!("  {key}: Record<string, JsonValue>;\n"));
        outputs.push_str(&format!("  {key}: JsonValue;\n"));
    }
    let block = |name: &str, members: &str| {
        if members.is_empty() {
            format!("interface {name} {{}}")
        } else {
            format!("interface {name} {{\n{members}}}")
        }
    };
    format!(
        "{INSTRUCTIONS}\n\n```ts\n{}\n\n{}\n\n{}\n\n{}\n\n{}\n\n{}\n```",
        "type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }",
        block("ToolArgsMap", &args),
        block("ToolOutputMap", &outputs),
        "type ToolName = keyof ToolOutputMap",
        "declare class ToolCallError extends Error {\n  readonly name: \"ToolCallError\";\n  readonly toolName: ToolName;\n}",
        "declare const tools: {\n  [K in ToolName]: (args: ToolArgsMap[K]) => Promise<ToolOutputMap[K]>;\n}",
    )
}

/// A member name: bare when it is an identifier, JSON-quoted otherwise.
fn ts_key(name: &str) -> String {
    let mut chars = name.chars();
    let ident = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if ident {
        name.to_string()
    } else {
        Value::from(name).to_string()
    }
}

/// A one-line doc comment: whitespace collapsed, `*/` escaped.
fn doc_line(description: &str) -> Option<String> {
    let collapsed = description.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.is_empty() {
        return None;
    }
    Some(format!("/** {} */", collapsed.replace("*/", "*\\/")))
}
