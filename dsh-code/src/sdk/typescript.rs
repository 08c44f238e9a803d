//! The TypeScript code-mode SDK: the typed `tools` API a model
//! programs against in `run_code`.
//!
//! The declarations are, in order: `JsonValue`; `interface ToolArgsMap` and
//! `interface ToolOutputMap`, one member per tool (sorted by name, `run_code` excluded,
//! names that are not identifiers JSON-quoted, the tool's description as a one-line
//! `/** */` on its argument member); `type ToolName`; `declare class ToolCallError`;
//! `declare const tools`. Property descriptions become one-line `/** */` comments on
//! their members, so a model reading the SDK sees what the native schema says.
//!
//! Types: `integer` → `number`; `enum` → `"a" | "b"`; `const` → the literal; arrays
//! `T[]` (`(A | B)[]` for unions), `JsonValue[]` without items; any JSON → `JsonValue`;
//! `oneOf` → `A | B`; an object → `{ k: T; o?: T; }`, intersected with
//! `Record<string, JsonValue>` unless closed; an empty object `Record<string, JsonValue>`
//! (open) or `Record<string, never>` (closed); a map `Record<string, T>`. A schema that
//! fails [`Schema::check`] or nests deeper than [`MAX_SCHEMA_DEPTH`] renders as
//! `unknown`, with a warning.
//!
//! ```
//! # use dsh_runtime::{tool, Tool};
//! use dsh_code::sdk::typescript;
//! /// Add two numbers.
//! #[tool(read_only)]
//! async fn add(a: i64, b: i64) -> i64 { a + b }
//!
//! let sdk = typescript::render([Add.definition()]);
//! assert!(sdk.code.contains("  /** Add two numbers. */\n  add: {\n"));
//! assert!(sdk.code.contains("  add: number;\n"));
//! ```

use std::sync::Arc;

use dsh_runtime::schema::{Additional, ArrayRules, Kind, MAX_SCHEMA_DEPTH, ObjectRules, Schema};
use dsh_runtime::{Registry, ToolDefinition};

use super::{Sdk, SdkWarning, json_quote, one_line, sdk_tools};

/// The usage notes above the declarations.
pub const INSTRUCTIONS: &str = "## Programs for run_code

`run_code` needs two arguments: `code`, the body of an async TypeScript function (it runs with its types stripped, so use only erasable syntax: no `enum`, no namespaces), and `description`, a few words on what the program does. In the program:

- `await tools.name(args)` calls a tool (`tools[\"odd-name\"](args)` for names that are not identifiers) and resolves to the tool's canonical JSON value, typed below. Arguments must be plain JSON.
- A failed call rejects with a `ToolCallError`; its `toolName` says which tool failed and its `message` why. Catch it to carry on.
- Read-only calls that do not depend on each other may run together under `Promise.all`; calls that change things run one at a time, in the order made. `await` what depends on an earlier result.
- The output of the run is what you `return` and what you `console.log(...)`, nothing else: pick out what you need. An image a tool returns is attached after the run.

The tools:";

const JSON_VALUE: &str = "type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }";

/// Whether `name` can be written bare as a TypeScript property key.
fn is_identifier(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_' || b == b'$')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
}

fn key(name: &str) -> String {
    if is_identifier(name) {
        name.to_string()
    } else {
        json_quote(name)
    }
}

fn pad(indent: usize) -> String {
    "  ".repeat(indent)
}

fn doc_line(description: Option<&str>, indent: usize) -> Option<String> {
    let text = one_line(description?);
    if text.is_empty() {
        return None;
    }
    Some(format!(
        "{}/** {} */",
        pad(indent),
        text.replace("*/", "*\\/")
    ))
}

struct Renderer<'a> {
    tool: &'a str,
    warnings: Vec<SdkWarning>,
}

impl Renderer<'_> {
    fn warn(&mut self, path: &str, lost: impl Into<String>) {
        self.warnings.push(SdkWarning {
            tool: self.tool.to_string(),
            path: path.to_string(),
            lost: lost.into(),
        });
    }

    /// The type of a tool's schema; `unknown` when it breaks the vocabulary's rules.
    fn root(&mut self, schema: &Schema, label: &str) -> String {
        if let Err(e) = schema.check(label) {
            self.warn(label, format!("rendered as unknown: {e}"));
            return "unknown".to_string();
        }
        self.ty(schema, 1, 0, &mut label.to_string())
    }

    /// [`Renderer::root`] for a type written at the top level (members indented once).
    fn ty_at(&mut self, schema: &Schema, label: &str) -> String {
        if let Err(e) = schema.check(label) {
            self.warn(label, format!("rendered as unknown: {e}"));
            return "unknown".to_string();
        }
        self.ty(schema, 0, 0, &mut label.to_string())
    }

    fn ty(&mut self, s: &Schema, indent: usize, depth: usize, path: &mut String) -> String {
        if depth >= MAX_SCHEMA_DEPTH {
            self.warn(
                path,
                format!("nested deeper than {MAX_SCHEMA_DEPTH} levels: rendered as unknown"),
            );
            return "unknown".to_string();
        }
        if let Some(literal) = literal(s) {
            return literal;
        }
        match &s.kind {
            Kind::String(_) => "string".to_string(),
            Kind::Number(_) | Kind::Integer(_) => "number".to_string(),
            Kind::Boolean => "boolean".to_string(),
            Kind::Null => "null".to_string(),
            Kind::Json => "JsonValue".to_string(),
            Kind::Array(r) => self.array(r, indent, depth, path),
            Kind::OneOf(branches) => self.one_of(branches, indent, depth, path),
            Kind::Object(r) => self.object(r, indent, depth, path),
        }
    }

    /// An array of the items' type (`JsonValue[]` without one).
    fn array(&mut self, r: &ArrayRules, indent: usize, depth: usize, path: &mut String) -> String {
        let Some(items) = &r.items else {
            return "JsonValue[]".to_string();
        };
        let len = path.len();
        path.push_str(".items");
        let t = self.ty(items, indent, depth + 1, path);
        path.truncate(len);
        if t.contains('|') || t.contains('&') {
            format!("({t})[]")
        } else {
            format!("{t}[]")
        }
    }

    /// A union of the branches' types.
    fn one_of(
        &mut self,
        branches: &[Arc<Schema>],
        indent: usize,
        depth: usize,
        path: &mut String,
    ) -> String {
        let mut parts = Vec::new();
        for (i, b) in branches.iter().enumerate() {
            let len = path.len();
            path.push_str(&format!(".oneOf[{i}]"));
            parts.push(self.ty(b, indent, depth + 1, path));
            path.truncate(len);
        }
        parts.join(" | ")
    }

    /// A `Record` for a map, else an object type of the properties (with a `Record`
    /// beside it when other keys are accepted).
    fn object(
        &mut self,
        r: &ObjectRules,
        indent: usize,
        depth: usize,
        path: &mut String,
    ) -> String {
        if r.properties.is_empty() {
            return match &r.additional {
                Additional::Closed => "Record<string, never>".to_string(),
                Additional::Open | Additional::Ignored => "Record<string, JsonValue>".to_string(),
                Additional::Schema(values) => {
                    let len = path.len();
                    path.push_str(".additionalProperties");
                    let t = self.ty(values, indent, depth + 1, path);
                    path.truncate(len);
                    format!("Record<string, {t}>")
                }
            };
        }
        let out = self.members(r, indent, depth, path);
        match &r.additional {
            Additional::Closed => out,
            Additional::Open | Additional::Ignored => {
                format!("{out} & Record<string, JsonValue>")
            }
            Additional::Schema(_) => {
                self.warn(
                    path,
                    "a map with declared properties: the other values are typed JsonValue",
                );
                format!("{out} & Record<string, JsonValue>")
            }
        }
    }

    /// `{ ... }` with one member per property, each after its doc comment.
    fn members(
        &mut self,
        r: &ObjectRules,
        indent: usize,
        depth: usize,
        path: &mut String,
    ) -> String {
        let mut out = String::from("{");
        for p in &r.properties {
            if let Some(doc) = doc_line(p.schema.description.as_deref(), indent + 1) {
                out.push('\n');
                out.push_str(&doc);
            }
            let len = path.len();
            path.push_str(".properties");
            dsh_runtime::json::path::push_key(path, &p.name);
            let t = self.ty(&p.schema, indent + 1, depth + 1, path);
            path.truncate(len);
            out.push('\n');
            out.push_str(&format!(
                "{}{}{}: {t};",
                pad(indent + 1),
                key(&p.name),
                if p.required { "" } else { "?" }
            ));
        }
        out.push('\n');
        out.push_str(&pad(indent));
        out.push('}');
        out
    }
}

/// A scalar schema's `const` or `enum` as a literal type (`None` for any other schema).
fn literal(s: &Schema) -> Option<String> {
    let scalar = matches!(
        s.kind,
        Kind::String(_) | Kind::Number(_) | Kind::Integer(_) | Kind::Boolean | Kind::Null
    );
    if !scalar {
        return None;
    }
    if let Some(c) = &s.const_value {
        return Some(c.to_string());
    }
    let values = s.enum_values.as_ref()?;
    Some(
        values
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join(" | "),
    )
}

/// The name of the deferred-tool search on `tools` (see [`render`]).
pub const SEARCH: &str = "search";

/// The name of the call-by-name function on `tools`, declared beside [`SEARCH`].
pub const CALL: &str = "call";

/// Render the SDK for `definitions` (any order; `run_code` is left out).
///
/// Deferred tools ([`ToolDefinition::defer_loading`]) are not declared: `tools` gets a
/// [`SEARCH`] function instead (`tools.search(query, { mode, limit })`, BM25 or regex over
/// the deferred tools the program's scope sees), which resolves to the matches' names,
/// descriptions and TypeScript signatures, and [`CALL`] (`tools.call(name, args)`) to call
/// a found tool by its name (`tools[name](args)` works too, untyped). A tool named
/// `search` or `call` takes precedence: the deferred tools are then declared in full,
/// with a warning.
pub fn render<'a, I>(definitions: I) -> Sdk
where
    I: IntoIterator<Item = &'a ToolDefinition>,
{
    let tools = sdk_tools(definitions);
    let mut warnings = Vec::new();
    let deferred = tools.iter().filter(|d| d.defer_loading).count();
    let taken = tools
        .iter()
        .find(|d| d.name == SEARCH || d.name == CALL)
        .map(|d| d.name.to_string());
    let search = deferred > 0 && taken.is_none();
    if let Some(name) = taken.filter(|_| deferred > 0) {
        warnings.push(SdkWarning {
            tool: name.clone(),
            path: "name".to_string(),
            lost: format!(
                "a tool named `{name}` takes the place of `tools.{name}`: the {deferred} deferred tool(s) are declared in full"
            ),
        });
    }
    let mut args = Vec::new();
    let mut outputs = Vec::new();
    for def in tools.iter().filter(|d| !(search && d.defer_loading)) {
        let mut r = Renderer {
            tool: &def.name,
            warnings: Vec::new(),
        };
        let a = r.root(&def.parameters, "parameters");
        let o = r.root(&def.output, "output");
        if let Some(doc) = doc_line(Some(&def.description), 1) {
            args.push(doc);
        }
        args.push(format!("  {}: {a};", key(&def.name)));
        outputs.push(format!("  {}: {o};", key(&def.name)));
        warnings.append(&mut r.warnings);
    }
    let block = |name: &str, members: &[String]| {
        if members.is_empty() {
            format!("interface {name} {{}}")
        } else {
            format!("interface {name} {{\n{}\n}}", members.join("\n"))
        }
    };
    let calls = "  [K in ToolName]: (args: ToolArgsMap[K]) => Promise<ToolOutputMap[K]>;";
    let mut code = vec![
        JSON_VALUE.to_string(),
        block("ToolArgsMap", &args),
        block("ToolOutputMap", &outputs),
        "type ToolName = keyof ToolOutputMap".to_string(),
        "declare class ToolCallError extends Error {\n  readonly name: \"ToolCallError\";\n  readonly toolName: ToolName;\n}".to_string(),
    ];
    if search {
        code.push(TOOL_MATCH.to_string());
        code.push(format!(
            "declare const tools: {{\n{calls}\n}} & {{\n  /** {} more tools are not declared above (they are deferred): find them by what they do with BM25 over their names, descriptions and parameters (or a regular expression, `mode: \"regex\"`), best first, at most `limit` (default 5, at most 50); then call one with `tools.{CALL}(match.name, args)`. */\n  {SEARCH}(query: string, options?: {{ mode?: \"bm25\" | \"regex\"; limit?: number }}): Promise<ToolMatch[]>;\n  /** Call a tool by name, a deferred one `{SEARCH}` found included (its `signature` says what it takes and returns). */\n  {CALL}(name: string, args: JsonValue): Promise<JsonValue>;\n}}",
            deferred
        ));
    } else {
        code.push(format!("declare const tools: {{\n{calls}\n}}"));
    }
    Sdk {
        language: "ts",
        instructions: INSTRUCTIONS,
        code: code.join("\n\n"),
        warnings,
    }
}

/// The declaration of what `tools.search` resolves to.
const TOOL_MATCH: &str = "/** A deferred tool `tools.search` found. */\ntype ToolMatch = {\n  name: string;\n  description: string;\n  /** How to call it: `name(args: …): Promise<…>`. */\n  signature: string;\n}";

/// How to call one tool, as `tools.search` shows a match:
/// `name(args: <arguments>): Promise<<output>>`, typed as [`render`] types it (the name
/// JSON-quoted when it is not an identifier).
///
/// ```
/// # use dsh_runtime::{tool, Tool};
/// /// Add two numbers.
/// #[tool(read_only)]
/// async fn add(a: i64, b: i64) -> i64 { a + b }
///
/// let sig = dsh_code::sdk::typescript::signature(Add.definition());
/// assert_eq!(sig, "add(args: {\n  a: number;\n  b: number;\n} & Record<string, JsonValue>): Promise<number>");
/// ```
pub fn signature(def: &ToolDefinition) -> String {
    let mut r = Renderer {
        tool: &def.name,
        warnings: Vec::new(),
    };
    let a = r.ty_at(&def.parameters, "parameters");
    let o = r.ty_at(&def.output, "output");
    format!("{}(args: {a}): Promise<{o}>", key(&def.name))
}

/// Render the SDK for what the global view of a registry shows (for a scope, render
/// [`ToolView::definitions`](dsh_runtime::ToolView::definitions)).
pub fn render_registry(registry: &Registry) -> Sdk {
    render(&registry.view().definitions())
}

/// The TypeScript type of one schema node (members indented for nesting level 1), and
/// the warnings its rendering produced (attributed to tool `""`).
pub fn type_of(schema: &Schema) -> (String, Vec<SdkWarning>) {
    let mut r = Renderer {
        tool: "",
        warnings: Vec::new(),
    };
    let t = r.root(schema, "schema");
    (t, r.warnings)
}
