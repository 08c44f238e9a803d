//! Checkers: assert a provider's rules on an exported fragment, independently of how the
//! fragment was produced.
//!
//! [`check`] reads only the JSON text a provider would receive and lists every rule it
//! breaks (names, shapes, allowed keywords, closed objects, nesting, budgets). The
//! exporter's own tests run it over every tool in the repository and over random
//! schemas; run it yourself over fragments you build or edit by hand.
//!
//! Rules and sources, per target (providers.md):
//! - OpenAI (all): entry shape; name `^[a-zA-Z0-9_-]{1,64}$`; `parameters` rooted at
//!   `"type":"object"`. Strict also: only the Structured Outputs keywords; every schema
//!   typed (or an `anyOf`); every object `additionalProperties: false` with every
//!   property required; at most 5000 properties, 10 levels of object nesting, 1000
//!   enum/const values, 120,000 characters of names and values, 15,000 characters for a
//!   string enum of more than 250 values.
//! - Anthropic: name as OpenAI; `input_schema` rooted at an object; `defer_loading`, when
//!   present, `true` (as for OpenAI Responses; Chat Completions has no such key), and a
//!   deferred tool only beside the provider's tool search tool (Anthropic's BM25 or regex
//!   tool search tool, exactly `{"type","name"}`; OpenAI Responses' `tool_search`).
//!   OpenAI Responses namespaces: `type`, a valid `name`, a `description` and a non-empty
//!   `tools` list of function entries, each checked as a tool. Strict also: only
//!   supported keywords, `minItems` 0 or 1, closed objects; per request at most 20 strict
//!   tools, 24 optional properties and 16 union-typed properties.
//! - Gemini: names (a letter or `_` first, `[A-Za-z0-9_.:-]`, at most 64); exactly one of
//!   `parameters`/`parametersJsonSchema`; no `$schema`. The OpenAPI form: only the
//!   `Schema` fields, one upper-case type, `enum` only of strings on `STRING`, property
//!   names `[A-Za-z_][A-Za-z0-9_]*` (at most 64), `required` naming declared properties,
//!   no `OBJECT` without properties.
//! - MCP: `inputSchema` rooted at an object; for 2025-11-25 an object-rooted
//!   `outputSchema`; annotations only the five hint keys with the right types; for
//!   2026-07-28 the result's `resultType` (`"complete"`), `ttlMs` (an integer >= 0) and
//!   `cacheScope` (`"public"` or `"private"`), which that revision requires. `$schema`
//!   is allowed (MCP declares a schema's dialect with it).
//! - Every target: the schemas are JSON Schema 2020-12 (plain JSON Schema, as MCP, the
//!   targets without strict and Gemini's JSON Schema field take it, allows every keyword,
//!   a keyword it does not define being an annotation, and boolean schemas), walked
//!   through every applicator (`$defs`, `allOf`, `not`, `if`/`then`/`else`,
//!   `prefixItems`, `patternProperties`, …); every same-document `$ref` resolves, and
//!   only MCP takes a reference to another document. Strict subsets take `$ref` only
//!   to the root or to a `$defs` entry. Anthropic strict and Gemini refuse recursive
//!   references, and Gemini's JSON Schema field takes only `$`-keywords beside a
//!   `$ref`.

use dsh_runtime::json::{Object, Value};

use super::{Target, gemini_name, mcp_name, openai_name, project::gemini_property_name};

/// OpenAI Structured Outputs: supported keywords.
const OPENAI_STRICT_KEYWORDS: &[&str] = &[
    "type",
    "description",
    "title",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
    "$defs",
    "$ref",
];

/// Anthropic strict: supported keywords.
const ANTHROPIC_STRICT_KEYWORDS: &[&str] = &[
    "type",
    "description",
    "title",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "pattern",
    "format",
    "minItems",
    "default",
    "$defs",
    "$ref",
];

/// Gemini OpenAPI subset `Schema` fields.
const GEMINI_FIELDS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "items",
    "properties",
    "required",
    "propertyOrdering",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "minProperties",
    "maxProperties",
    "minimum",
    "maximum",
    "pattern",
    "anyOf",
    "default",
    "example",
];

const JSON_TYPES: &[&str] = &[
    "string", "number", "integer", "boolean", "null", "array", "object",
];
const GEMINI_TYPES: &[&str] = &[
    "STRING", "NUMBER", "INTEGER", "BOOLEAN", "NULL", "ARRAY", "OBJECT",
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Dialect {
    Json,
    OpenAiStrict,
    AnthropicStrict,
    GeminiOpenApi,
}

#[derive(Default)]
struct Count {
    properties: usize,
    optional: usize,
    unions: usize,
    enum_values: usize,
    chars: usize,
    object_depth: usize,
}

struct Walker<'a> {
    dialect: Dialect,
    target: Target,
    tool: &'a str,
    out: &'a mut Vec<String>,
    count: Count,
    /// The document being walked (what its `$ref`s resolve in).
    root: Option<&'a Value>,
}

/// Keywords (beyond the ones read on their own) whose value is one schema.
const ONE_SCHEMA: &[&str] = &[
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
];
/// Keywords (beyond `anyOf`/`oneOf`) whose value is an array of schemas.
const SCHEMA_LIST: &[&str] = &["allOf", "prefixItems"];
/// Keywords (beyond `properties`) whose value is an object of schemas.
const SCHEMA_MAP: &[&str] = &[
    "$defs",
    "definitions",
    "patternProperties",
    "dependentSchemas",
];

/// Percent-decode a URI fragment.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            out.push(u8::from_str_radix(s.get(i + 1..i + 3)?, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The schema a same-document reference names in `root`: `#`, a JSON Pointer
/// (`#/$defs/x`) or an anchor (`#name`).
fn resolve<'v>(root: &'v Value, reference: &str) -> Option<&'v Value> {
    // The root's `$id` followed by a fragment names this document too.
    let (base, fragment) = reference.split_once('#').unwrap_or((reference, ""));
    if !base.is_empty() {
        let id = root.get("$id").and_then(Value::as_str)?;
        if id.trim_end_matches('#') != base {
            return None;
        }
    }
    let fragment = percent_decode(fragment)?;
    if fragment.is_empty() {
        return Some(root);
    }
    if fragment.starts_with('/') {
        let mut cur = root;
        for raw in fragment.split('/').skip(1) {
            let segment = raw.replace("~1", "/").replace("~0", "~");
            cur = match cur {
                Value::Object(o) => o.get(&segment)?,
                Value::Array(a) => a.get(segment.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        return Some(cur);
    }
    // An anchor: the schema object declaring it.
    let mut stack = vec![root];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(o) => {
                if ["$anchor", "$dynamicAnchor"]
                    .iter()
                    .any(|k| o.get(k).and_then(Value::as_str) == Some(fragment.as_str()))
                {
                    return Some(v);
                }
                stack.extend(o.values());
            }
            Value::Array(a) => stack.extend(a.iter()),
            _ => {}
        }
    }
    None
}

/// Every `$ref` (and `$dynamicRef`) text in `v`.
fn refs_in(v: &Value) -> Vec<&str> {
    let mut out = Vec::new();
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(o) => {
                for k in ["$ref", "$dynamicRef"] {
                    if let Some(r) = o.get(k).and_then(Value::as_str) {
                        out.push(r);
                    }
                }
                stack.extend(o.values());
            }
            Value::Array(a) => stack.extend(a.iter()),
            _ => {}
        }
    }
    out
}

/// Whether following the references of `root` can lead back to where they started.
fn recursive(root: &Value) -> bool {
    // Depth-first over reference targets, by address.
    fn visit<'v>(
        root: &'v Value,
        target: &'v Value,
        stack: &mut Vec<*const Value>,
        done: &mut Vec<*const Value>,
    ) -> bool {
        let at: *const Value = target;
        if stack.contains(&at) {
            return true;
        }
        if done.contains(&at) {
            return false;
        }
        stack.push(at);
        for r in refs_in(target) {
            if let Some(next) = resolve(root, r)
                && visit(root, next, stack, done)
            {
                return true;
            }
        }
        stack.pop();
        done.push(at);
        false
    }
    let mut done = Vec::new();
    refs_in(root)
        .into_iter()
        .any(|r| resolve(root, r).is_some_and(|t| visit(root, t, &mut Vec::new(), &mut done)))
}

impl Walker<'_> {
    /// The rules of `$ref`: same-document only everywhere; where the target keeps
    /// references (the strict subsets), to the root or to `$defs` only; for Gemini's JSON
    /// Schema field, only `$`-keywords beside a `$ref`.
    fn references(&mut self, o: &Object, path: &str) {
        for key in ["$ref", "$dynamicRef"] {
            let Some(r) = o.get(key) else { continue };
            let Some(text) = r.as_str() else {
                self.bad(path, format_args!("{key} must be a string"));
                continue;
            };
            let local = self.root.and_then(|root| resolve(root, text));
            let mcp = matches!(self.target, Target::Mcp2025_11_25 | Target::Mcp2026_07_28);
            let same_document = text.starts_with('#') || local.is_some();
            if same_document && local.is_none() {
                self.bad(
                    path,
                    format_args!("{key} {text:?} does not resolve in this schema"),
                );
            }
            // Only MCP's documents may name other documents (which clients must not
            // fetch on their own).
            if !same_document && !mcp {
                self.bad(
                    path,
                    format_args!("{key} {text:?} is not a same-document reference"),
                );
            }
            if matches!(
                self.dialect,
                Dialect::OpenAiStrict | Dialect::AnthropicStrict
            ) {
                let pointer_ok = text == "#"
                    || text
                        .strip_prefix("#/$defs/")
                        .is_some_and(|rest| !rest.is_empty() && !rest.contains('/'));
                if key != "$ref" || !pointer_ok {
                    self.bad(
                        path,
                        format_args!("{key} {text:?}: strict mode takes `$ref` to the root (\"#\") or to a `$defs` entry only"),
                    );
                }
            }
            if self.target == Target::GeminiJsonSchema && o.keys().any(|k| !k.starts_with('$')) {
                self.bad(path, "Gemini takes only `$`-keywords beside a `$ref`");
            }
        }
    }

    fn bad(&mut self, path: &str, what: impl std::fmt::Display) {
        self.out.push(format!("{}: {path}: {what}", self.tool));
    }

    fn walk(&mut self, v: &Value, path: &str, objects: usize, depth: usize) {
        if depth > 200 {
            self.bad(path, "nested too deep to check");
            return;
        }
        let Some(o) = v.as_object() else {
            if !(self.dialect == Dialect::Json && matches!(v, Value::Bool(_))) {
                self.bad(path, "a schema must be a JSON object");
            }
            return;
        };
        self.keywords(o, path);
        self.references(o, path);
        let types = self.types(o, path);
        self.enum_and_const(o, path, &types);
        self.limits(o, path);
        self.applicators(o, path, objects, depth);
        // Arrays.
        if let Some(items) = o.get("items") {
            if !has_type(&types, "array") && self.dialect != Dialect::Json {
                self.bad(path, "items on a schema that is not an array");
            }
            self.walk(items, &format!("{path}.items"), objects, depth + 1);
        } else if has_type(&types, "array") && self.dialect == Dialect::OpenAiStrict {
            self.bad(path, "strict mode needs items on every array");
        }
        if has_type(&types, "object") || o.get("properties").is_some() {
            self.object(o, path, objects, depth);
        }
    }

    /// The keywords the dialect takes. Plain JSON Schema (MCP, the targets without
    /// strict, Gemini's JSON Schema field) takes every keyword: one it does not define is
    /// an annotation.
    fn keywords(&mut self, o: &Object, path: &str) {
        let allowed = match self.dialect {
            Dialect::Json => None,
            Dialect::OpenAiStrict => Some(OPENAI_STRICT_KEYWORDS),
            Dialect::AnthropicStrict => Some(ANTHROPIC_STRICT_KEYWORDS),
            Dialect::GeminiOpenApi => Some(GEMINI_FIELDS),
        };
        for key in o.keys() {
            if allowed.is_some_and(|a| !a.contains(&key)) {
                self.bad(path, format_args!("keyword {key:?} is not accepted here"));
            }
        }
    }

    /// The node's `type` names (a list where the dialect takes one), each checked.
    fn types<'o>(&mut self, o: &'o Object, path: &str) -> Vec<&'o str> {
        let types: Vec<&str> = match o.get("type") {
            None => Vec::new(),
            Some(Value::String(t)) => vec![t],
            Some(Value::Array(list)) if self.dialect == Dialect::OpenAiStrict => {
                list.iter().filter_map(Value::as_str).collect()
            }
            Some(Value::Array(list))
                if matches!(self.dialect, Dialect::AnthropicStrict | Dialect::Json) =>
            {
                list.iter().filter_map(Value::as_str).collect()
            }
            Some(_) => {
                self.bad(path, "type must be a single string");
                Vec::new()
            }
        };
        let known = if self.dialect == Dialect::GeminiOpenApi {
            GEMINI_TYPES
        } else {
            JSON_TYPES
        };
        for t in &types {
            if !known.contains(t) {
                self.bad(path, format_args!("unknown type {t:?}"));
            }
        }
        if self.dialect == Dialect::OpenAiStrict
            && types.is_empty()
            && o.get("anyOf").is_none()
            && o.get("$ref").is_none()
        {
            self.bad(path, "strict mode needs a type (or anyOf) on every schema");
        }
        types
    }

    /// `enum` and `const`: counted, and `enum` checked against the dialect.
    fn enum_and_const(&mut self, o: &Object, path: &str, types: &[&str]) {
        if let Some(e) = o.get("enum") {
            match e.as_array() {
                Some(list) if !list.is_empty() => {
                    self.count.enum_values += list.len();
                    let mut chars = 0;
                    for item in list.iter() {
                        chars += item
                            .as_str()
                            .map_or(item.to_string().len(), |s| s.chars().count());
                    }
                    self.count.chars += chars;
                    if self.dialect == Dialect::GeminiOpenApi
                        && (!has_type(types, "string") || list.iter().any(|x| x.as_str().is_none()))
                    {
                        self.bad(
                            path,
                            "the OpenAPI form takes enum only of strings on STRING",
                        );
                    }
                    if self.dialect == Dialect::OpenAiStrict
                        && list.len() > 250
                        && list.iter().all(|x| x.as_str().is_some() || x.is_null())
                        && chars > 15_000
                    {
                        self.bad(
                            path,
                            "a string enum of more than 250 values exceeds 15000 characters",
                        );
                    }
                }
                _ => self.bad(path, "enum must be a non-empty array"),
            }
        }
        if let Some(c) = o.get("const") {
            self.count.enum_values += 1;
            self.count.chars += c
                .as_str()
                .map_or(c.to_string().len(), |s| s.chars().count());
        }
    }

    /// Anthropic strict's `minItems` and Gemini's `nullable`.
    fn limits(&mut self, o: &Object, path: &str) {
        if self.dialect == Dialect::AnthropicStrict
            && let Some(n) = o.get("minItems").and_then(Value::as_u64)
            && n > 1
        {
            self.bad(path, "strict mode accepts minItems of 0 or 1 only");
        }
        if self.dialect == Dialect::GeminiOpenApi
            && let Some(n) = o.get("nullable")
            && n.as_bool().is_none()
        {
            self.bad(path, "nullable must be a boolean");
        }
    }

    /// The unions and the other applicators, each subschema walked.
    fn applicators(&mut self, o: &Object, path: &str, objects: usize, depth: usize) {
        for key in ["anyOf", "oneOf"] {
            if let Some(b) = o.get(key) {
                match b.as_array() {
                    Some(list) if !list.is_empty() => {
                        for (i, branch) in list.iter().enumerate() {
                            self.walk(branch, &format!("{path}.{key}[{i}]"), objects, depth + 1);
                        }
                    }
                    _ => self.bad(path, format_args!("{key} must be a non-empty array")),
                }
            }
        }
        // The other applicators (only plain JSON Schema takes them; the subsets' keyword
        // lists reject them above).
        for key in ONE_SCHEMA {
            if let Some(sub) = o.get(key) {
                self.walk(sub, &format!("{path}.{key}"), objects, depth + 1);
            }
        }
        for key in SCHEMA_LIST {
            match o.get(key) {
                Some(Value::Array(list)) => {
                    for (i, sub) in list.iter().enumerate() {
                        self.walk(sub, &format!("{path}.{key}[{i}]"), objects, depth + 1);
                    }
                }
                Some(_) => self.bad(path, format_args!("{key} must be an array of schemas")),
                None => {}
            }
        }
        for key in SCHEMA_MAP {
            match o.get(key) {
                Some(Value::Object(map)) => {
                    for (name, sub) in map.iter() {
                        let mut p = format!("{path}.{key}");
                        dsh_runtime::json::path::push_key(&mut p, name);
                        self.walk(sub, &p, objects, depth + 1);
                    }
                }
                Some(_) => self.bad(path, format_args!("{key} must be an object of schemas")),
                None => {}
            }
        }
    }

    /// An object node: its properties walked, `required` against them, the dialect's
    /// rules on objects, and a schema of `additionalProperties` walked.
    fn object(&mut self, o: &Object, path: &str, objects: usize, depth: usize) {
        let level = objects + 1;
        self.count.object_depth = self.count.object_depth.max(level);
        let props = o.get("properties");
        let names = self.properties(props, path, level, depth);
        let required: Vec<&str> = match o.get("required") {
            None => Vec::new(),
            Some(Value::Array(r)) => r.iter().filter_map(Value::as_str).collect(),
            Some(_) => {
                self.bad(path, "required must be an array of strings");
                Vec::new()
            }
        };
        for r in &required {
            if !names.contains(r) && self.dialect != Dialect::Json {
                self.bad(
                    path,
                    format_args!("required names {r:?}, which is not a property"),
                );
            }
        }
        self.count.optional += names.iter().filter(|n| !required.contains(n)).count();
        self.object_rules(o, path, &names, &required);
        if let Some(extra) = o.get("additionalProperties")
            && !matches!(extra, Value::Bool(_))
        {
            self.walk(
                extra,
                &format!("{path}.additionalProperties"),
                level,
                depth + 1,
            );
        }
    }

    /// Each property counted and walked; their names.
    fn properties<'o>(
        &mut self,
        props: Option<&'o Value>,
        path: &str,
        level: usize,
        depth: usize,
    ) -> Vec<&'o str> {
        let mut names: Vec<&str> = Vec::new();
        match props {
            Some(Value::Object(p)) => {
                for (name, child) in p.iter() {
                    names.push(name);
                    self.count.properties += 1;
                    self.count.chars += name.chars().count();
                    let mut child_path = path.to_string();
                    dsh_runtime::json::path::push_key(&mut child_path, name);
                    if self.dialect == Dialect::GeminiOpenApi && !gemini_property_name(name) {
                        self.bad(
                            &child_path,
                            "property name not accepted by the OpenAPI form",
                        );
                    }
                    if child.get("anyOf").is_some()
                        || child.get("oneOf").is_some()
                        || matches!(child.get("type"), Some(Value::Array(_)))
                    {
                        self.count.unions += 1;
                    }
                    self.walk(child, &child_path, level, depth + 1);
                }
            }
            Some(_) => self.bad(path, "properties must be an object"),
            None => {}
        }
        names
    }

    /// What each strict dialect and the OpenAPI form ask of every object.
    fn object_rules(&mut self, o: &Object, path: &str, names: &[&str], required: &[&str]) {
        let closed = o.get("additionalProperties") == Some(&Value::Bool(false));
        match self.dialect {
            Dialect::OpenAiStrict => {
                if !closed {
                    self.bad(
                        path,
                        "strict mode needs additionalProperties: false on every object",
                    );
                }
                if o.get("properties").is_none() {
                    self.bad(path, "strict mode needs properties on every object");
                }
                if names.iter().any(|n| !required.contains(n)) {
                    self.bad(path, "strict mode needs every property listed in required");
                }
            }
            Dialect::AnthropicStrict => {
                if !closed {
                    self.bad(
                        path,
                        "strict mode needs additionalProperties: false on every object",
                    );
                }
            }
            Dialect::GeminiOpenApi => {
                if names.is_empty() {
                    self.bad(
                        path,
                        "the OpenAPI form refuses an OBJECT without properties",
                    );
                }
            }
            Dialect::Json => {}
        }
    }
}

/// Whether a node's `type` names include `name` (any case: Gemini's are upper-case).
fn has_type(types: &[&str], name: &str) -> bool {
    types.iter().any(|t| t.eq_ignore_ascii_case(name))
}

fn root_is_object(
    tool: &str,
    label: &str,
    v: Option<&Value>,
    dialect: Dialect,
    out: &mut Vec<String>,
) {
    let want = if dialect == Dialect::GeminiOpenApi {
        "OBJECT"
    } else {
        "object"
    };
    match v {
        None => out.push(format!("{tool}: {label}: missing")),
        Some(s) if s.get("type").and_then(Value::as_str) != Some(want) => out.push(format!(
            "{tool}: {label}: the root must have \"type\": \"{want}\""
        )),
        _ => {}
    }
}

fn keys_within(tool: &str, label: &str, o: &Value, allowed: &[&str], out: &mut Vec<String>) {
    match o.as_object() {
        Some(obj) => {
            for k in obj.keys() {
                if !allowed.contains(&k) {
                    out.push(format!("{tool}: {label}: unexpected field {k:?}"));
                }
            }
        }
        None => out.push(format!("{tool}: {label}: must be an object")),
    }
}

/// Split the provider's own entries off the tool entries: OpenAI Responses namespaces
/// (checked here, their tools returned with the others) and the tool-search tools of
/// the targets that can defer (checked here, counted).
fn provider_entries<'v>(
    target: Target,
    entries: Vec<&'v Value>,
    out: &mut Vec<String>,
) -> (Vec<&'v Value>, usize) {
    let responses = matches!(
        target,
        Target::OpenAiResponses | Target::OpenAiResponsesStrict
    );
    let anthropic = matches!(target, Target::Anthropic | Target::AnthropicStrict);
    let mut tools = Vec::with_capacity(entries.len());
    let mut searches = 0;
    for entry in entries {
        let kind = entry.get("type").and_then(Value::as_str);
        match kind {
            Some("namespace") if responses => {
                let name = entry
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("(unnamed)");
                let label = format!("namespace {name}");
                keys_within(
                    &label,
                    "entry",
                    entry,
                    &["type", "name", "description", "tools"],
                    out,
                );
                if !openai_name(name) {
                    out.push(format!("{label}: name: must match ^[a-zA-Z0-9_-]{{1,64}}$"));
                }
                if entry.get("description").and_then(Value::as_str).is_none() {
                    out.push(format!("{label}: description: must be a string"));
                }
                match entry.get("tools").and_then(Value::as_array) {
                    Some(list) if !list.is_empty() => tools.extend(list.iter()),
                    _ => out.push(format!("{label}: tools: must be a non-empty array")),
                }
            }
            Some("tool_search") if responses => {
                searches += 1;
                keys_within(
                    "tool_search",
                    "entry",
                    entry,
                    &["type", "execution", "description", "parameters"],
                    out,
                );
            }
            Some(k @ ("tool_search_tool_bm25_20251119" | "tool_search_tool_regex_20251119"))
                if anthropic =>
            {
                searches += 1;
                let name = k.trim_end_matches("_20251119");
                keys_within(name, "entry", entry, &["type", "name"], out);
                if entry.get("name").and_then(Value::as_str) != Some(name) {
                    out.push(format!("{name}: name: must be \"{name}\""));
                }
            }
            _ => tools.push(entry),
        }
    }
    (tools, searches)
}

/// Every rule of `target` that `fragment` (as [`super::Export::fragment`] returns it)
/// breaks, as `tool: path: rule` lines; empty when it complies.
pub fn check(target: Target, fragment: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let entries = request_entries(target, fragment, &mut out);
    let (entries, searches) = provider_entries(target, entries, &mut out);
    let deferred = entries.iter().any(|e| {
        e.get("defer_loading")
            .is_some_and(|d| matches!(d, Value::Bool(true)))
    });
    if deferred && searches == 0 {
        out.push(
            "request: tools: a deferred tool needs the provider's tool search tool in the request"
                .to_string(),
        );
    }
    let mut names = std::collections::HashSet::new();
    let mut optional = 0;
    let mut unions = 0;
    for entry in &entries {
        let (body, wrapper) = match target {
            Target::OpenAiChat | Target::OpenAiChatStrict => (entry.get("function"), Some(*entry)),
            _ => (Some(*entry), None),
        };
        let Some(body) = body else {
            out.push("request: a tool entry has no function".to_string());
            continue;
        };
        let tool = body
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("(unnamed)");
        if !names.insert(tool.to_string()) {
            out.push(format!("{tool}: name: duplicate tool name"));
        }
        let schema_key = entry_fields(target, tool, body, wrapper, &mut out);
        let count = entry_schemas(target, tool, body, schema_key, &mut out);
        optional += count.optional;
        unions += count.unions;
        if target == Target::Mcp2025_11_25 {
            root_is_object(
                tool,
                "outputSchema",
                body.get("outputSchema"),
                Dialect::Json,
                &mut out,
            );
        }
        if matches!(target, Target::Mcp2025_11_25 | Target::Mcp2026_07_28)
            && let Some(a) = body.get("annotations")
        {
            mcp_annotations(tool, a, &mut out);
        }
    }
    if target == Target::AnthropicStrict {
        for (n, limit, what) in [
            (entries.len(), 20, "strict tools"),
            (optional, 24, "optional properties"),
            (unions, 16, "union-typed properties"),
        ] {
            if n > limit {
                out.push(format!("request: {n} {what} (at most {limit} per request)"));
            }
        }
    }
    out
}

/// The entries of the request's tool list, its wrapper (Gemini's one `tools` entry, an
/// MCP result) checked on the way.
fn request_entries<'v>(
    target: Target,
    fragment: &'v Value,
    out: &mut Vec<String>,
) -> Vec<&'v Value> {
    let listed = |v: &'v Value| -> Vec<&'v Value> {
        v.get("tools")
            .and_then(Value::as_array)
            .map(|l| l.iter().collect())
            .unwrap_or_default()
    };
    match target {
        Target::GeminiJsonSchema | Target::GeminiOpenApi => match fragment.as_array() {
            Some(list) if list.len() == 1 => {
                keys_within(
                    "request",
                    "tools[0]",
                    &list[0],
                    &["functionDeclarations"],
                    out,
                );
                list[0]
                    .get("functionDeclarations")
                    .and_then(Value::as_array)
                    .map(|l| l.iter().collect())
                    .unwrap_or_default()
            }
            _ => {
                out.push(
                    "request: tools: must be an array with one functionDeclarations entry"
                        .to_string(),
                );
                Vec::new()
            }
        },
        Target::Mcp2025_11_25 => {
            keys_within("request", "result", fragment, &["tools"], out);
            listed(fragment)
        }
        Target::Mcp2026_07_28 => {
            mcp_2026_result(fragment, out);
            listed(fragment)
        }
        _ => match fragment.as_array() {
            Some(list) => list.iter().collect(),
            None => {
                out.push("request: tools: must be an array".to_string());
                Vec::new()
            }
        },
    }
}

/// The fields of a 2026-07-28 `tools/list` result beside its tools.
fn mcp_2026_result(fragment: &Value, out: &mut Vec<String>) {
    keys_within(
        "request",
        "result",
        fragment,
        &["resultType", "ttlMs", "cacheScope", "tools"],
        out,
    );
    if fragment.get("resultType").and_then(Value::as_str) != Some("complete") {
        out.push("request: result: resultType: must be \"complete\"".to_string());
    }
    let ttl_ok = match fragment.get("ttlMs") {
        Some(Value::Number(n)) => n.as_u64().is_some(),
        _ => false,
    };
    if !ttl_ok {
        out.push("request: result: ttlMs: must be an integer >= 0".to_string());
    }
    if !matches!(
        fragment.get("cacheScope").and_then(Value::as_str),
        Some("public" | "private")
    ) {
        out.push("request: result: cacheScope: must be \"public\" or \"private\"".to_string());
    }
}

/// The schema dialect of `target`'s tool schemas.
fn dialect(target: Target) -> Dialect {
    match target {
        Target::OpenAiResponsesStrict | Target::OpenAiChatStrict => Dialect::OpenAiStrict,
        Target::AnthropicStrict => Dialect::AnthropicStrict,
        Target::GeminiOpenApi => Dialect::GeminiOpenApi,
        _ => Dialect::Json,
    }
}

/// The key of a tool entry's parameter schema on `target`, the fields the entry may
/// have, and whether `target` accepts the tool's name.
fn entry_shape(target: Target, tool: &str) -> (&'static str, &'static [&'static str], bool) {
    match target {
        Target::OpenAiResponses | Target::OpenAiResponsesStrict => (
            "parameters",
            &[
                "type",
                "name",
                "description",
                "parameters",
                "strict",
                "defer_loading",
            ],
            openai_name(tool),
        ),
        Target::OpenAiChat | Target::OpenAiChatStrict => (
            "parameters",
            &["name", "description", "parameters", "strict"],
            openai_name(tool),
        ),
        Target::Anthropic | Target::AnthropicStrict => (
            "input_schema",
            &[
                "name",
                "description",
                "input_schema",
                "strict",
                "defer_loading",
            ],
            openai_name(tool),
        ),
        Target::GeminiJsonSchema => (
            "parametersJsonSchema",
            &["name", "description", "parametersJsonSchema"],
            gemini_name(tool),
        ),
        Target::GeminiOpenApi => (
            "parameters",
            &["name", "description", "parameters"],
            gemini_name(tool),
        ),
        Target::Mcp2025_11_25 | Target::Mcp2026_07_28 => (
            "inputSchema",
            &[
                "name",
                "title",
                "description",
                "inputSchema",
                "outputSchema",
                "annotations",
            ],
            mcp_name(tool),
        ),
    }
}

/// A tool entry's fields other than its schemas: its name, which fields it has, `type`,
/// `strict`, `defer_loading` and `description`. Returns the key of its parameter schema.
fn entry_fields(
    target: Target,
    tool: &str,
    body: &Value,
    wrapper: Option<&Value>,
    out: &mut Vec<String>,
) -> &'static str {
    let (schema_key, allowed, name_ok) = entry_shape(target, tool);
    if !name_ok {
        out.push(format!("{tool}: name: not accepted by {target}"));
    }
    keys_within(tool, "tool", body, allowed, out);
    if let Some(w) = wrapper {
        keys_within(tool, "tool", w, &["type", "function"], out);
        if w.get("type").and_then(Value::as_str) != Some("function") {
            out.push(format!("{tool}: type: must be \"function\""));
        }
    }
    if matches!(
        target,
        Target::OpenAiResponses | Target::OpenAiResponsesStrict
    ) && body.get("type").and_then(Value::as_str) != Some("function")
    {
        out.push(format!("{tool}: type: must be \"function\""));
    }
    let wants_strict = target.is_strict();
    match (target, body.get("strict")) {
        (
            Target::OpenAiResponses
            | Target::OpenAiResponsesStrict
            | Target::OpenAiChat
            | Target::OpenAiChatStrict,
            Some(Value::Bool(b)),
        ) if *b == wants_strict => {}
        (Target::AnthropicStrict, Some(Value::Bool(true))) => {}
        (Target::Anthropic, None) => {}
        (
            Target::GeminiJsonSchema
            | Target::GeminiOpenApi
            | Target::Mcp2025_11_25
            | Target::Mcp2026_07_28,
            None,
        ) => {}
        _ => out.push(format!("{tool}: strict: must be {wants_strict}")),
    }
    if body
        .get("defer_loading")
        .is_some_and(|d| !matches!(d, Value::Bool(true)))
    {
        out.push(format!("{tool}: defer_loading: must be true when present"));
    }
    if let Some(d) = body.get("description")
        && d.as_str().is_none()
    {
        out.push(format!("{tool}: description: must be a string"));
    }
    schema_key
}

/// A tool entry's parameter schema (and MCP's output schema) walked under `target`'s
/// rules, then OpenAI strict's size limits; the sizes counted.
fn entry_schemas(
    target: Target,
    tool: &str,
    body: &Value,
    schema_key: &'static str,
    out: &mut Vec<String>,
) -> Count {
    let dialect = dialect(target);
    let schema = body.get(schema_key);
    if target == Target::GeminiOpenApi && schema.is_none() {
        // A tool without parameters omits them.
    } else {
        root_is_object(tool, schema_key, schema, dialect, out);
    }
    let mcp = matches!(target, Target::Mcp2025_11_25 | Target::Mcp2026_07_28);
    let mut walker = Walker {
        dialect,
        target,
        tool,
        out,
        count: Count::default(),
        root: schema,
    };
    if let Some(s) = schema {
        // MCP declares the dialect with `$schema` (2020-12 by default); providers are
        // sent the schema alone.
        if s.get("$schema").is_some() && !mcp {
            walker.bad(schema_key, "$schema is not sent");
        }
        let cyclic_refused = matches!(
            target,
            Target::AnthropicStrict | Target::GeminiJsonSchema | Target::GeminiOpenApi
        );
        if cyclic_refused && recursive(s) {
            walker.bad(
                schema_key,
                format_args!("a recursive schema, which {target} does not take"),
            );
        }
        walker.walk(s, schema_key, 0, 0);
    }
    if mcp && let Some(output) = body.get("outputSchema") {
        walker.root = Some(output);
        walker.walk(output, "outputSchema", 0, 0);
    }
    let count = walker.count;
    if dialect == Dialect::OpenAiStrict {
        for (n, limit, what) in [
            (count.properties, 5000, "object properties"),
            (count.object_depth, 10, "levels of object nesting"),
            (count.enum_values, 1000, "enum/const values"),
            (
                count.chars,
                120_000,
                "characters of names and enum/const values",
            ),
        ] {
            if n > limit {
                out.push(format!("{tool}: parameters: {n} {what} (at most {limit})"));
            }
        }
    }
    count
}

/// An MCP tool's `annotations`: the known hints, each of its type.
fn mcp_annotations(tool: &str, a: &Value, out: &mut Vec<String>) {
    keys_within(
        tool,
        "annotations",
        a,
        &[
            "title",
            "readOnlyHint",
            "destructiveHint",
            "idempotentHint",
            "openWorldHint",
        ],
        out,
    );
    if let Some(o) = a.as_object() {
        for (k, v) in o.iter() {
            let ok = if k == "title" {
                v.as_str().is_some()
            } else {
                v.as_bool().is_some()
            };
            if !ok {
                out.push(format!("{tool}: annotations.{k}: wrong type"));
            }
        }
    }
}
