//! The Python code-mode SDK: the typed `tools` API a model
//! programs against in `run_code` when the runtime language is Python.
//!
//! The declarations are: `from typing import` exactly the symbols used (in the order
//! `Any`, `Literal`, `NotRequired`, `Protocol`, `TypedDict`); `class ToolCallError`; one
//! `TypedDict` per object with properties (or closed and empty, then `pass`), children
//! before parents, named CamelCase(tool) + `Args`/`Output` + CamelCase(field) (union
//! branches add `1`, `2`, …; clashes add `2`, `3`, …; bases are capped at 120
//! characters); `class Tools(Protocol)` with one `async def` per tool, its description as
//! the docstring; then `tools: Tools`. Property descriptions become `#` comments above
//! their fields; an open object says in a comment that other keys are accepted.
//!
//! Types: `int`, `float`, `str`, `bool`, `None`, `Literal[…]`, `list[T]` (`Any` past 180
//! nested lists, CPython's bracket limit), `A | B`, `dict[str, T]` for maps and
//! `dict[str, Any]` for open empty objects. An object whose field names cannot all be
//! class-syntax `TypedDict` fields (not an identifier, a hard keyword or `__debug__`, or a
//! non-dunder `__x`, which Python would mangle) degrades to `dict[str, Any]`. A tool whose
//! name is not a plain attribute (not an identifier, a keyword, or `_`-leading) is listed
//! as a `# tools["name"](…)` comment.
//!
//! Departures from the reference, both towards what `mypy --strict` accepts: identifiers
//! are ASCII (`[A-Za-z_][A-Za-z0-9_]*`; other names take the degraded paths, which stay
//! correct), and a non-integral number `enum`/`const` renders as `float` rather than an
//! invalid `Literal[1.5]` (with a warning).
//!
//! ```
//! # use dsh_runtime::{tool, Tool};
//! use dsh_code::sdk::python;
//! /// Add two numbers.
//! #[tool(read_only)]
//! async fn add(a: i64, b: i64) -> i64 { a + b }
//!
//! let sdk = python::render([Add.definition()]);
//! assert!(sdk.code.contains("    async def add(self, args: AddArgs) -> int:\n        \"\"\"Add two numbers.\"\"\""));
//! ```

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use dsh_runtime::json::Value;
use dsh_runtime::schema::{Additional, ArrayRules, Kind, MAX_SCHEMA_DEPTH, ObjectRules, Schema};
use dsh_runtime::{Registry, ToolDefinition};

use super::{Sdk, SdkWarning, json_quote, sdk_tools};

/// The usage notes above the declarations.
pub const INSTRUCTIONS: &str = "## Programs for run_code

`run_code` needs two arguments: `code`, the body of an async Python function (top-level `await` and `return` work), and `description`, a few words on what the program does. Only two names below exist when the program runs: `tools` and `ToolCallError`. The rest (the `TypedDict` classes in particular) only describe types: build arguments as plain dicts and lists, `await tools.name({\"field\": 1})`, never `NameArgs(field=1)`. In the program:

- `await tools.name(args)` calls a tool (`await tools[\"odd-name\"](args)` for names that are not plain attributes: not identifiers, keywords, or starting with `_`) and returns the tool's canonical JSON value, typed below. Arguments must be plain JSON.
- A failed call raises `ToolCallError`; its `toolName` says which tool failed and its message why. Catch it to carry on.
- Read-only calls that do not depend on each other may run together under `asyncio.gather`; calls that change things run one at a time, in the order made. `await` what depends on an earlier result.
- The output of the run is what you `print(...)` and what you `return` (plain JSON), nothing else: pick out what you need. An image a tool returns is attached after the run.

The tools:";

/// Python hard keywords, plus `__debug__` (which cannot be assigned).
const RESERVED: &[&str] = &[
    "False",
    "None",
    "True",
    "and",
    "as",
    "assert",
    "async",
    "await",
    "break",
    "class",
    "continue",
    "def",
    "del",
    "elif",
    "else",
    "except",
    "finally",
    "for",
    "from",
    "global",
    "if",
    "import",
    "in",
    "is",
    "lambda",
    "nonlocal",
    "not",
    "or",
    "pass",
    "raise",
    "return",
    "try",
    "while",
    "with",
    "yield",
    "__debug__",
];

const TYPING_ORDER: [&str; 5] = ["Any", "Literal", "NotRequired", "Protocol", "TypedDict"];
const MAX_LIST_NESTING: usize = 180;
const MAX_CLASS_NAME_BASE: usize = 120;

fn pad(indent: usize) -> String {
    "    ".repeat(indent)
}

fn is_identifier(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// A field name usable in a class-syntax `TypedDict`.
fn is_field(name: &str) -> bool {
    // A non-dunder `__x` would be name-mangled inside the class body.
    let mangled = name.starts_with("__") && !name.ends_with("__");
    is_identifier(name) && !RESERVED.contains(&name) && !mangled
}

/// CamelCase a name into a class-name segment: non-alphanumerics and `_` split words;
/// a head that cannot start an identifier gets a `Tool` prefix.
fn camel(raw: &str) -> String {
    let joined: String = raw
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|p| !p.is_empty())
        .map(|p| {
            let mut cs = p.chars();
            match cs.next() {
                Some(first) => first.to_ascii_uppercase().to_string() + cs.as_str(),
                None => String::new(),
            }
        })
        .collect();
    if joined.starts_with(|c: char| c.is_ascii_alphabetic()) {
        joined
    } else {
        format!("Tool{joined}")
    }
}

fn cap(base: &str) -> String {
    // Names are ASCII by construction, so a byte cut is a character cut.
    base.chars().take(MAX_CLASS_NAME_BASE).collect()
}

fn child_name(base: &str, segment: &str) -> String {
    cap(&format!("{base}{segment}"))
}

/// One line of description: whitespace collapsed, control characters escaped as `\xNN`.
fn describe(text: Option<&str>) -> Option<String> {
    let collapsed = super::one_line(text?);
    let mut out = String::with_capacity(collapsed.len());
    for c in collapsed.chars() {
        let n = c as u32;
        if n < 0x20 || (0x7f..=0x9f).contains(&n) {
            out.push_str(&format!("\\x{n:02x}"));
        } else {
            out.push(c);
        }
    }
    (!out.is_empty()).then_some(out)
}

fn docstring(text: Option<&str>, indent: usize) -> Option<String> {
    let d = describe(text)?;
    Some(format!(
        "{}\"\"\"{}\"\"\"",
        pad(indent),
        d.replace('\\', "\\\\").replace('"', "\\\"")
    ))
}

/// A scalar as a Python literal; `None` when `Literal` cannot hold it (a float).
fn literal(v: &Value) -> Option<String> {
    match v {
        Value::Bool(true) => Some("True".to_string()),
        Value::Bool(false) => Some("False".to_string()),
        Value::Null => Some("None".to_string()),
        Value::String(_) => Some(v.to_string()),
        Value::Number(n) if n.is_integer() => Some(v.to_string()),
        _ => None,
    }
}

struct State {
    classes: Vec<String>,
    used: HashSet<String>,
    counters: HashMap<String, usize>,
    typing: BTreeSet<&'static str>,
    warnings: Vec<SdkWarning>,
    tool: String,
}

impl State {
    fn warn(&mut self, path: &str, lost: impl Into<String>) {
        self.warnings.push(SdkWarning {
            tool: self.tool.clone(),
            path: path.to_string(),
            lost: lost.into(),
        });
    }

    fn use_typing(&mut self, symbol: &'static str) {
        self.typing.insert(symbol);
    }

    fn any(&mut self) -> String {
        self.use_typing("Any");
        "Any".to_string()
    }

    fn allocate(&mut self, base: &str) -> String {
        let capped = cap(base);
        let mut name = capped.clone();
        if self.used.contains(&name) {
            let mut n = self.counters.get(&capped).copied().unwrap_or(2);
            while self.used.contains(&format!("{capped}{n}")) {
                n += 1;
            }
            name = format!("{capped}{n}");
            self.counters.insert(capped, n + 1);
        }
        self.used.insert(name.clone());
        name
    }

    fn root(&mut self, schema: &Schema, class: &str, label: &str) -> String {
        if let Err(e) = schema.check(label) {
            self.warn(label, format!("rendered as Any: {e}"));
            return self.any();
        }
        self.ty(schema, class, 0, 0, &mut label.to_string())
    }

    fn scalar(&mut self, s: &Schema, broad: &str, path: &str) -> String {
        let values: Option<Vec<&Value>> = match (&s.const_value, &s.enum_values) {
            (Some(c), _) => Some(vec![c]),
            (None, Some(e)) => Some(e.iter().collect()),
            (None, None) => None,
        };
        let Some(values) = values else {
            return broad.to_string();
        };
        let literals: Option<Vec<String>> = values.iter().map(|v| literal(v)).collect();
        match literals {
            Some(l) => {
                self.use_typing("Literal");
                format!("Literal[{}]", l.join(", "))
            }
            None => {
                self.warn(
                    path,
                    "non-integral number enum/const cannot be a Literal: typed float",
                );
                broad.to_string()
            }
        }
    }

    fn ty(
        &mut self,
        s: &Schema,
        class: &str,
        lists: usize,
        depth: usize,
        path: &mut String,
    ) -> String {
        if depth >= MAX_SCHEMA_DEPTH {
            self.warn(
                path,
                format!("nested deeper than {MAX_SCHEMA_DEPTH} levels: rendered as Any"),
            );
            return self.any();
        }
        match &s.kind {
            Kind::String(_) => self.scalar(s, "str", path),
            Kind::Number(_) => self.scalar(s, "float", path),
            Kind::Integer(_) => self.scalar(s, "int", path),
            Kind::Boolean => self.scalar(s, "bool", path),
            Kind::Null => "None".to_string(),
            Kind::Json => self.any(),
            Kind::OneOf(branches) => self.one_of(branches, class, lists, depth, path),
            Kind::Array(r) => self.array(r, class, lists, depth, path),
            Kind::Object(r) => self.object(r, class, depth, path),
        }
    }

    /// A union of the branches' types.
    fn one_of(
        &mut self,
        branches: &[Arc<Schema>],
        class: &str,
        lists: usize,
        depth: usize,
        path: &mut String,
    ) -> String {
        let mut parts = Vec::new();
        for (i, b) in branches.iter().enumerate() {
            let len = path.len();
            path.push_str(&format!(".oneOf[{i}]"));
            let name = child_name(class, &(i + 1).to_string());
            parts.push(self.ty(b, &name, lists, depth + 1, path));
            path.truncate(len);
        }
        parts.join(" | ")
    }

    /// A `list` of the items' type (`Any` past the nesting limit).
    fn array(
        &mut self,
        r: &ArrayRules,
        class: &str,
        lists: usize,
        depth: usize,
        path: &mut String,
    ) -> String {
        match &r.items {
            None => {
                self.use_typing("Any");
                "list[Any]".to_string()
            }
            Some(_) if lists >= MAX_LIST_NESTING => {
                self.warn(
                    path,
                    format!("more than {MAX_LIST_NESTING} nested lists: rendered as Any"),
                );
                self.any()
            }
            Some(items) => {
                let len = path.len();
                path.push_str(".items");
                let t = self.ty(items, class, lists + 1, depth + 1, path);
                path.truncate(len);
                format!("list[{t}]")
            }
        }
    }

    /// A `dict` when the object is a map (or has a property no field can name), else a
    /// `TypedDict` class of its own.
    fn object(&mut self, r: &ObjectRules, class: &str, depth: usize, path: &mut String) -> String {
        if !r.properties.iter().all(|p| is_field(&p.name)) {
            self.warn(
                path,
                "a property name cannot be a TypedDict field: typed dict[str, Any]",
            );
            self.use_typing("Any");
            return "dict[str, Any]".to_string();
        }
        if r.properties.is_empty() {
            match &r.additional {
                Additional::Open | Additional::Ignored => {
                    self.use_typing("Any");
                    return "dict[str, Any]".to_string();
                }
                Additional::Schema(values) => {
                    let len = path.len();
                    path.push_str(".additionalProperties");
                    let name = child_name(class, "Value");
                    let t = self.ty(values, &name, 1, depth + 1, path);
                    path.truncate(len);
                    return format!("dict[str, {t}]");
                }
                Additional::Closed => {}
            }
        }
        self.typed_dict(r, class, depth, path)
    }

    /// A `TypedDict` class for the object's properties, added to the classes; its name.
    fn typed_dict(
        &mut self,
        r: &ObjectRules,
        class: &str,
        depth: usize,
        path: &mut String,
    ) -> String {
        let name = self.allocate(class);
        self.use_typing("TypedDict");
        let mut lines = vec![format!("class {name}(TypedDict):")];
        for p in &r.properties {
            let len = path.len();
            path.push_str(".properties");
            dsh_runtime::json::path::push_key(path, &p.name);
            let child = child_name(&name, &camel(&p.name));
            let t = self.ty(&p.schema, &child, 1, depth + 1, path);
            path.truncate(len);
            if let Some(d) = describe(p.schema.description.as_deref()) {
                lines.push(format!("{}# {d}", pad(1)));
            }
            if p.required {
                lines.push(format!("{}{}: {t}", pad(1), p.name));
            } else {
                self.use_typing("NotRequired");
                lines.push(format!("{}{}: NotRequired[{t}]", pad(1), p.name));
            }
        }
        match &r.additional {
            Additional::Closed => {}
            Additional::Open | Additional::Ignored => {
                lines.push(format!("{}# Other keys are accepted too.", pad(1)));
            }
            Additional::Schema(_) => {
                self.warn(
                    path,
                    "a map with declared properties: the other values are not typed",
                );
                lines.push(format!(
                    "{}# Other keys are accepted too (values as the schema's additionalProperties say).",
                    pad(1)
                ));
            }
        }
        if lines.len() == 1 {
            lines.push(format!("{}pass", pad(1)));
        }
        self.classes.push(lines.join("\n"));
        name
    }
}

/// Render the SDK for `definitions` (any order; `run_code` is left out).
pub fn render<'a, I>(definitions: I) -> Sdk
where
    I: IntoIterator<Item = &'a ToolDefinition>,
{
    let tools = sdk_tools(definitions);
    let mut state = State {
        classes: Vec::new(),
        used: HashSet::new(),
        counters: HashMap::new(),
        typing: BTreeSet::new(),
        warnings: Vec::new(),
        tool: String::new(),
    };
    state.use_typing("Protocol");
    let mut members = Vec::new();
    let mut statements = 0;
    for def in tools {
        state.tool = def.name.to_string();
        let base = camel(&def.name);
        let a = state.root(&def.parameters, &format!("{base}Args"), "parameters");
        let o = state.root(&def.output, &format!("{base}Output"), "output");
        let name = def.name.as_ref();
        if is_identifier(name) && !RESERVED.contains(&name) && !name.starts_with('_') {
            match docstring(Some(&def.description), 2) {
                Some(doc) => {
                    members.push(format!(
                        "{}async def {name}(self, args: {a}) -> {o}:",
                        pad(1)
                    ));
                    members.push(doc);
                }
                None => members.push(format!(
                    "{}async def {name}(self, args: {a}) -> {o}: ...",
                    pad(1)
                )),
            }
            statements += 1;
        } else {
            members.push(format!(
                "{}# tools[{}](args: {a}) -> {o}",
                pad(1),
                json_quote(name)
            ));
            if let Some(d) = describe(Some(&def.description)) {
                members.push(format!("{}#   {d}", pad(1)));
            }
        }
    }
    if statements == 0 {
        members.insert(0, format!("{}pass", pad(1)));
    }
    let imports: Vec<&str> = TYPING_ORDER
        .into_iter()
        .filter(|s| state.typing.contains(s))
        .collect();
    let classes = if state.classes.is_empty() {
        String::new()
    } else {
        format!("{}\n\n", state.classes.join("\n\n"))
    };
    let code = format!(
        "from typing import {}\n\nclass ToolCallError(Exception):\n    toolName: str\n\n{classes}class Tools(Protocol):\n{}\n\ntools: Tools",
        imports.join(", "),
        members.join("\n")
    );
    Sdk {
        language: "python",
        instructions: INSTRUCTIONS,
        code,
        warnings: state.warnings,
    }
}

/// Render the SDK for what the global view of a registry shows (for a scope, render
/// [`ToolView::definitions`](dsh_runtime::ToolView::definitions)).
pub fn render_registry(registry: &Registry) -> Sdk {
    render(&registry.view().definitions())
}
