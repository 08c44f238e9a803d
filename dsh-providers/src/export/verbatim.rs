//! Tools that publish their own JSON Schema 2020-12 document
//! ([`ToolDefinition::verbatim_parameters`](dsh_runtime::ToolDefinition::verbatim_parameters),
//! [`verbatim_output`](dsh_runtime::ToolDefinition::verbatim_output)): what each target
//! publishes, as the `export` module's docs ("Tools with their own JSON Schema") list it.
//! Whatever is not published as written is reported: a warning where something was
//! dropped, moved or rewritten with a loss, an error (the tool left out) where the target
//! cannot state the schema.

use dsh_runtime::json::{Object, Value};
use dsh_runtime::schema::{MAX_SCHEMA_DEPTH, MCP_HEADER_KEY, VerbatimSchema};

use super::Target;
use super::project::{
    Flavor, Projector, describe, gemini_property_name, is_union, openai_nullable,
};

/// Keywords whose value is one schema.
const ONE_SCHEMA: &[&str] = &[
    "additionalProperties",
    "contains",
    "contentSchema",
    "else",
    "if",
    "items",
    "not",
    "propertyNames",
    "then",
    "unevaluatedItems",
    "unevaluatedProperties",
];
/// Keywords whose value is an array of schemas.
const SCHEMA_LIST: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];
/// Keywords whose value is an object of schemas.
const SCHEMA_MAP: &[&str] = &[
    "$defs",
    "definitions",
    "dependentSchemas",
    "patternProperties",
    "properties",
];
/// Annotations a `$ref` may have beside it on every adapted target.
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];
/// Keywords that only structure-describing subsets cannot state: the tool is refused.
const REFUSED: &[&str] = &[
    "allOf",
    "not",
    "if",
    "prefixItems",
    "contains",
    "patternProperties",
    "propertyNames",
    "dependentRequired",
    "dependentSchemas",
    "unevaluatedItems",
    "unevaluatedProperties",
];

/// OpenAI Structured Outputs: the string formats it takes.
const OPENAI_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];
/// Anthropic strict (SDK `transform_schema()`): the string formats it keeps.
const ANTHROPIC_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
];

fn child_path(path: &str, key: &str) -> String {
    let mut p = path.to_string();
    dsh_runtime::json::path::push_key(&mut p, key);
    p
}

fn index_path(path: &str, key: &str, i: usize) -> String {
    let mut p = child_path(path, key);
    dsh_runtime::json::path::push_index(&mut p, i);
    p
}

/// Apply `f` to every schema object of `v` (pre-order), with its path.
fn each_schema(v: &mut Value, path: &str, depth: usize, f: &mut dyn FnMut(&mut Object, &str)) {
    if depth > MAX_SCHEMA_DEPTH {
        return;
    }
    let Value::Object(o) = v else {
        return;
    };
    f(o, path);
    let keys: Vec<String> = o.keys().map(str::to_string).collect();
    for key in keys {
        let k = key.as_str();
        let Some(sub) = o.get_mut(k) else { continue };
        if ONE_SCHEMA.contains(&k) {
            each_schema(sub, &child_path(path, k), depth + 1, f);
        } else if SCHEMA_LIST.contains(&k) {
            if let Value::Array(items) = sub {
                let mut list: Vec<Value> = std::mem::take(items).into_vec();
                for (i, item) in list.iter_mut().enumerate() {
                    each_schema(item, &index_path(path, k, i), depth + 1, f);
                }
                *sub = Value::from(list);
            }
        } else if SCHEMA_MAP.contains(&k)
            && let Value::Object(map) = sub
        {
            let names: Vec<String> = map.keys().map(str::to_string).collect();
            for name in names {
                if let Some(s) = map.get_mut(&name) {
                    let p = child_path(&child_path(path, k), &name);
                    each_schema(s, &p, depth + 1, f);
                }
            }
        }
    }
}

/// A tool's parameter document as `target` takes it; refusals and losses go to `p`.
pub(crate) fn parameters(p: &mut Projector<'_>, schema: &VerbatimSchema, target: Target) -> Value {
    match target {
        Target::Mcp2025_11_25 | Target::Mcp2026_07_28 => schema.as_value().clone(),
        Target::OpenAiResponses | Target::OpenAiChat | Target::Anthropic => {
            let mut out = schema.as_value().clone();
            drop_dialect(p, &mut out, "parameters");
            drop_mcp_headers(&mut out);
            out
        }
        Target::GeminiJsonSchema => gemini_json(p, schema),
        Target::OpenAiResponsesStrict
        | Target::OpenAiChatStrict
        | Target::AnthropicStrict
        | Target::GeminiOpenApi => {
            if target == Target::AnthropicStrict && schema.is_recursive() {
                p.fail(
                    "parameters",
                    "is a recursive schema, which Anthropic strict mode does not support",
                );
                return Value::Object(Object::new());
            }
            let mut a = Adapter {
                p,
                schema,
                target,
                inlining: Vec::new(),
                defs: Vec::new(),
            };
            a.document()
        }
    }
}

/// Whether the parameter document declares no property (Gemini's OpenAPI form then
/// leaves `parameters` out).
pub(crate) fn has_no_properties(schema: &VerbatimSchema) -> bool {
    schema
        .as_value()
        .get("properties")
        .and_then(Value::as_object)
        .is_none_or(Object::is_empty)
}

/// Remove every `x-mcp-header` (SEP-2243): transport metadata for MCP clients, which
/// every other target leaves out, as for the vocabulary's schemas.
fn drop_mcp_headers(out: &mut Value) {
    each_schema(out, "parameters", 0, &mut |o, _| {
        o.remove(MCP_HEADER_KEY);
    });
}

/// Remove the root `$schema`, with a warning.
fn drop_dialect(p: &mut Projector<'_>, out: &mut Value, path: &str) {
    if let Value::Object(o) = out
        && o.remove("$schema").is_some()
    {
        p.warn(
            path,
            "$schema left out: providers are sent the schema, not its dialect (it is JSON Schema 2020-12 either way)",
        );
    }
}

fn gemini_json(p: &mut Projector<'_>, schema: &VerbatimSchema) -> Value {
    if schema.is_recursive() {
        p.fail(
            "parameters",
            "is a recursive schema: Gemini unrolls cyclic references only to a limited degree, and only under properties that are not required",
        );
        return Value::Object(Object::new());
    }
    let mut out = schema.as_value().clone();
    drop_dialect(p, &mut out, "parameters");
    drop_mcp_headers(&mut out);
    let mut problems: Vec<(String, String)> = Vec::new();
    each_schema(&mut out, "parameters", 0, &mut |o, path| {
        if let Some(Value::String(dynamic)) = o.remove("$dynamicRef") {
            let target = schema
                .resolve(&dynamic)
                .map_or_else(|| dynamic.to_string(), |r| r.fragment());
            o.insert("$ref", Value::from(target));
        }
        let Some(reference) = o.get("$ref").cloned() else {
            return;
        };
        if o.keys().all(|k| k.starts_with('$')) {
            return;
        }
        if o.contains_key("anyOf") {
            problems.push((
                path.to_string(),
                "has `anyOf` and other keywords beside a `$ref`, which Gemini cannot take (only `$`-keywords may stand next to `$ref`)".to_string(),
            ));
            return;
        }
        // `{"$ref": r, k: v}` means `{"anyOf": [{"$ref": r}], k: v}`: the reference
        // moves into a one-branch `anyOf`, in its place.
        let entries: Vec<(String, Value)> = std::mem::take(o)
            .into_vec()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        for (k, v) in entries {
            if k == "$ref" {
                let mut branch = Object::new();
                branch.insert("$ref", reference.clone());
                o.insert("anyOf", Value::from(vec![Value::Object(branch)]));
            } else {
                o.insert(k, v);
            }
        }
    });
    for (path, reason) in problems {
        p.fail(&path, reason);
    }
    out
}

/// MCP's output schema for a verbatim output document: as written, except on
/// 2025-11-25 for a root that is not `"type": "object"`, wrapped as `{"result": …}`.
pub(crate) fn mcp_output(schema: &VerbatimSchema, wrap: bool, key: &str) -> Value {
    if !wrap {
        return schema.as_value().clone();
    }
    let mut inner = schema.as_value().clone();
    let mut dialect = None;
    // A document with a root `$id` is a schema resource of its own where it is embedded:
    // its references keep resolving inside it. Without one, its references are
    // rewritten to point into the wrapper, and `$schema` (allowed only at a resource's
    // root) moves to the wrapper.
    let own_resource = inner.get("$id").is_some();
    if !own_resource {
        if let Value::Object(o) = &mut inner {
            dialect = o.remove("$schema");
        }
        let mut prefix = String::from("#/properties/");
        for c in key.chars() {
            match c {
                '~' => prefix.push_str("~0"),
                '/' => prefix.push_str("~1"),
                c => prefix.push(c),
            }
        }
        each_schema(&mut inner, "output", 0, &mut |o, _| {
            for k in ["$ref", "$dynamicRef"] {
                if let Some(Value::String(r)) = o.get(k)
                    && (r.as_ref() == "#" || r.starts_with("#/"))
                {
                    let rewritten = format!("{prefix}{}", &r[1..]);
                    o.insert(k, Value::from(rewritten));
                }
            }
        });
        // A root that is a boolean schema has no references.
    }
    let mut props = Object::new();
    props.insert(key, inner);
    let mut w = Object::new();
    if let Some(d) = dialect {
        w.insert("$schema", d);
    }
    w.insert("type", Value::from("object"));
    w.insert("additionalProperties", Value::Bool(false));
    w.insert("properties", Value::Object(props));
    w.insert("required", Value::from(vec![Value::from(key)]));
    Value::Object(w)
}

/// The walk that adapts a document to a subset (OpenAI strict, Anthropic strict,
/// Gemini's OpenAPI form).
struct Adapter<'p, 'a> {
    p: &'p mut Projector<'a>,
    schema: &'p VerbatimSchema,
    target: Target,
    /// The pointers being inlined (a recursion guard).
    inlining: Vec<String>,
    /// The `$defs` entries the output refers to, in first-use order.
    defs: Vec<String>,
}

impl Adapter<'_, '_> {
    fn flavor(&self) -> Flavor {
        self.p.flavor
    }

    fn strict(&self) -> bool {
        matches!(
            self.flavor(),
            Flavor::OpenAiStrict | Flavor::AnthropicStrict
        )
    }

    /// Whether references are kept (to the root and to `$defs`) rather than inlined.
    fn keeps_refs(&self) -> bool {
        self.strict()
    }

    fn document(&mut self) -> Value {
        let root = self.schema.as_value();
        let mut out = self.node(root, "parameters", 0, 0, true);
        if self.keeps_refs() && !self.defs.is_empty() {
            // Every `$defs` entry the output refers to, walked once (walking one may
            // refer to more).
            let mut done: Vec<(String, Value)> = Vec::new();
            let mut i = 0;
            while i < self.defs.len() {
                let name = self.defs[i].clone();
                i += 1;
                let pointer = format!("/$defs/{}", escape(&name));
                let Some(def) = self.schema.schema_at(&pointer) else {
                    continue;
                };
                let path = child_path(&child_path("parameters", "$defs"), &name);
                let v = self.node(def, &path, 0, 1, false);
                done.push((name, v));
            }
            // In the document's order.
            let order: Vec<String> = root
                .get("$defs")
                .and_then(Value::as_object)
                .map(|o| o.keys().map(str::to_string).collect())
                .unwrap_or_default();
            let mut defs = Object::new();
            for name in order {
                if let Some(pos) = done.iter().position(|(n, _)| *n == name) {
                    let (n, v) = done.swap_remove(pos);
                    defs.insert(n, v);
                }
            }
            if let Value::Object(o) = &mut out {
                o.insert("$defs", Value::Object(defs));
            }
        }
        out
    }

    fn fail(&mut self, path: &str, reason: impl Into<String>) -> Value {
        self.p.fail(path, reason);
        Value::Object(Object::new())
    }

    fn any_json(&mut self, path: &str) -> Value {
        if self.strict() {
            self.fail(
                path,
                "accepts any JSON value, which strict mode cannot express (it needs a type on every schema and closed objects)",
            )
        } else {
            Value::Object(Object::new())
        }
    }

    fn node(&mut self, v: &Value, path: &str, objects: usize, depth: usize, root: bool) -> Value {
        if depth > 2 * MAX_SCHEMA_DEPTH {
            return self.fail(
                path,
                format!(
                    "nested deeper than {} levels once references are inlined",
                    2 * MAX_SCHEMA_DEPTH
                ),
            );
        }
        match v {
            Value::Bool(true) => self.any_json(path),
            Value::Bool(false) => self.fail(
                path,
                format!(
                    "is the `false` schema (no value matches), which {} cannot state",
                    self.target
                ),
            ),
            Value::Object(o) => self.object(o, path, objects, depth, root),
            _ => self.fail(path, "is not a schema"),
        }
    }

    /// A reference at `path`: kept (root or `$defs`) or inlined.
    fn reference(
        &mut self,
        text: &str,
        siblings: &Object,
        path: &str,
        objects: usize,
        depth: usize,
    ) -> Value {
        let Some(resolved) = self.schema.resolve(text) else {
            return self.fail(path, format!("`$ref` {text:?} does not resolve"));
        };
        let pointer = resolved.pointer().to_string();
        let validation: Vec<&str> = siblings
            .keys()
            .filter(|k| !k.starts_with('$') && !ANNOTATIONS.contains(k))
            .collect();
        if !validation.is_empty() {
            return self.fail(
                path,
                format!(
                    "has a `$ref` beside other validation keywords ({}), which {} cannot state without `allOf`",
                    validation.join(", "),
                    self.target
                ),
            );
        }
        let def_name = pointer
            .strip_prefix("/$defs/")
            .filter(|rest| !rest.contains('/'))
            .map(unescape);
        let kept = self.keeps_refs() && (pointer.is_empty() || def_name.is_some());
        let mut out = if kept {
            if let Some(name) = def_name
                && !self.defs.contains(&name)
            {
                self.defs.push(name);
            }
            let mut o = Object::new();
            o.insert("$ref", Value::from(resolved.fragment()));
            o
        } else {
            if self.inlining.contains(&pointer) {
                return self.fail(
                    path,
                    format!(
                        "refers back to {} (a recursive reference), which {} cannot state once references are inlined",
                        resolved.fragment(),
                        self.target
                    ),
                );
            }
            self.inlining.push(pointer);
            let inner = self.node(resolved.schema(), path, objects, depth + 1, false);
            self.inlining.pop();
            match inner {
                Value::Object(o) => o,
                _ => Object::new(),
            }
        };
        // The reference's own annotations, on top of the target's.
        let annotated = self.annotations(siblings, path);
        let mut notes = annotated.notes;
        for (k, v) in annotated.kept {
            out.insert(k, v);
        }
        if !notes.is_empty() || annotated.description.is_some() {
            let base = annotated.description.or_else(|| {
                out.get("description")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            });
            if let Some(d) = describe(base.as_deref(), None, &std::mem::take(&mut notes)) {
                out = with_description(out, d);
            }
        }
        Value::Object(out)
    }

    /// The annotations of a schema object, as the flavor takes them.
    fn annotations(&mut self, o: &Object, path: &str) -> Annotated {
        let flavor = self.flavor();
        let mut a = Annotated::default();
        for (k, v) in o.iter() {
            let k: &str = k;
            match k {
                "title" => a.kept.push(("title".to_string(), v.clone())),
                "description" => a.description = v.as_str().map(str::to_string),
                "default" if flavor == Flavor::OpenAiStrict => self.note(path, k, v, &mut a.notes),
                "default" => a.kept.push(("default".to_string(), v.clone())),
                "examples" if flavor == Flavor::GeminiOpenApi => {
                    if let Some(list) = v.as_array() {
                        if let Some(first) = list.first() {
                            a.kept.push(("example".to_string(), first.clone()));
                        }
                        if list.len() > 1 {
                            self.note(path, k, &Value::from(list[1..].to_vec()), &mut a.notes);
                        }
                    }
                }
                "examples" | "deprecated" | "readOnly" | "writeOnly" => {
                    self.note(path, k, v, &mut a.notes)
                }
                "$comment" => self.p.warn(
                    path,
                    format!("$comment left out ({} is not sent comments)", self.target),
                ),
                _ => {}
            }
        }
        a
    }

    fn note(&mut self, path: &str, key: &str, value: &Value, notes: &mut Vec<String>) {
        self.p.warn(
            path,
            format!("{key} is not supported here: moved into the description, no longer enforced by the provider"),
        );
        notes.push(format!("{key}: {value}"));
    }

    fn type_name(&self, t: &str) -> String {
        if self.flavor() == Flavor::GeminiOpenApi {
            t.to_ascii_uppercase()
        } else {
            t.to_string()
        }
    }

    #[allow(clippy::too_many_lines)]
    fn object(
        &mut self,
        o: &Object,
        path: &str,
        objects: usize,
        depth: usize,
        root: bool,
    ) -> Value {
        let flavor = self.flavor();
        let target = self.target;
        // A reference (or a one-branch `allOf` holding only one) stands for its target.
        let dynamic = o.get("$dynamicRef").and_then(Value::as_str);
        let direct = o.get("$ref").and_then(Value::as_str);
        if dynamic.is_some() && direct.is_some() {
            return self.fail(
                path,
                format!(
                    "has both `$ref` and `$dynamicRef`, which {target} cannot state without `allOf`"
                ),
            );
        }
        if let Some(text) = direct.or(dynamic) {
            return self.reference(text, o, path, objects, depth);
        }
        if let Some(Value::Array(branches)) = o.get("allOf")
            && let [Value::Object(only)] = &branches[..]
            && let Some(text) = only
                .get("$ref")
                .or(only.get("$dynamicRef"))
                .and_then(Value::as_str)
            && only
                .keys()
                .all(|k| k.starts_with('$') || ANNOTATIONS.contains(&k))
        {
            // `{"allOf":[{"$ref":r}], …}` means `{"$ref": r, …}`.
            let mut merged = only.clone();
            for (k, v) in o.iter() {
                if k != "allOf" {
                    merged.insert(k, v.clone());
                }
            }
            let text = text.to_string();
            return self.reference(&text, &merged, path, objects, depth);
        }

        let mut notes: Vec<String> = Vec::new();
        let annotated = self.annotations(o, path);
        notes.extend(annotated.notes);
        let mut kept: Vec<(String, Value)> = Vec::new();
        let mut types: Vec<String> = match o.get("type") {
            Some(Value::String(t)) => vec![t.to_string()],
            Some(Value::Array(list)) => list
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            _ => Vec::new(),
        };
        let mut nullable = false;
        // A keyword of another type's family says nothing about this node's values (an
        // `items` beside `"type": "object"`): left out, without loss.
        let declared = types.clone();
        let applies = |k: &str| {
            family(k).is_none_or(|f| {
                declared.is_empty()
                    || declared
                        .iter()
                        .any(|t| t == f || (f == "number" && t == "integer"))
            })
        };
        // Keywords the subset cannot state.
        for (k, _) in o.iter() {
            let k: &str = k;
            if REFUSED.contains(&k) && applies(k) {
                return self.fail(path, format!("uses `{k}`, which {target} cannot state"));
            }
        }
        if o.contains_key("anyOf") && o.contains_key("oneOf") {
            return self.fail(
                path,
                format!(
                    "has both `anyOf` and `oneOf`, which {target} cannot state without `allOf`"
                ),
            );
        }
        for (k, v) in o.iter() {
            let k: &str = k;
            if !applies(k) {
                continue;
            }
            match k {
                "$schema" => {
                    if root {
                        self.p.warn(
                            path,
                            "$schema left out: providers are sent the schema, not its dialect (it is JSON Schema 2020-12 either way)",
                        );
                    }
                }
                // Pointers replace anchors; the document is one resource. `x-mcp-header`
                // is for MCP clients only.
                "$id" | "$anchor" | "$dynamicAnchor" | "$defs" | "definitions" | "$comment"
                | "$vocabulary" | MCP_HEADER_KEY => {}
                "type" | "title" | "description" | "default" | "examples" | "deprecated"
                | "readOnly" | "writeOnly" => {}
                // Without `if`, `then` and `else` mean nothing; without `contains`, neither
                // do its bounds.
                "then" | "else" | "minContains" | "maxContains" => {}
                "format" => {
                    let allowed: &[&str] = match flavor {
                        Flavor::OpenAiStrict => OPENAI_FORMATS,
                        Flavor::AnthropicStrict => ANTHROPIC_FORMATS,
                        _ => &[],
                    };
                    if flavor == Flavor::GeminiOpenApi || v.as_str().is_some_and(|f| allowed.contains(&f)) {
                        kept.push((k.to_string(), v.clone()));
                    } else {
                        self.note(path, k, v, &mut notes);
                    }
                }
                "contentEncoding" | "contentMediaType" => self.note(path, k, v, &mut notes),
                "contentSchema" => self.p.warn(
                    path,
                    format!("contentSchema left out ({target} cannot state the schema of encoded content)"),
                ),
                "enum" => {
                    let values = v.as_array().map(|a| a.to_vec()).unwrap_or_default();
                    self.count_values(&values);
                    let strings = values.iter().all(|x| x.as_str().is_some());
                    let complex = values.iter().any(|x| matches!(x, Value::Array(_) | Value::Object(_)));
                    if flavor == Flavor::AnthropicStrict && complex {
                        return self.fail(path, "has an `enum` with array or object members, which Anthropic strict mode does not support");
                    }
                    let on_string = declared.is_empty() || declared.iter().any(|t| t == "string");
                    if flavor == Flavor::GeminiOpenApi && !(strings && on_string) {
                        self.note(path, k, v, &mut notes);
                    } else {
                        kept.push((k.to_string(), v.clone()));
                    }
                }
                "const" => {
                    self.count_values(std::slice::from_ref(v));
                    match (flavor, v) {
                        (Flavor::AnthropicStrict, Value::Array(_) | Value::Object(_)) => {
                            return self.fail(path, "has a `const` array or object, which Anthropic strict mode does not support");
                        }
                        (Flavor::GeminiOpenApi, Value::String(_))
                            if declared.is_empty() || declared.iter().any(|t| t == "string") =>
                        {
                            if !o.contains_key("enum") {
                                kept.push(("enum".to_string(), Value::from(vec![v.clone()])));
                            }
                        }
                        (Flavor::GeminiOpenApi, _) => self.note(path, k, v, &mut notes),
                        _ => kept.push((k.to_string(), v.clone())),
                    }
                }
                "pattern" => kept.push((k.to_string(), v.clone())),
                "minLength" | "maxLength" => {
                    if self.strict() {
                        self.note(path, k, v, &mut notes);
                    } else {
                        kept.push((k.to_string(), v.clone()));
                    }
                }
                "minimum" | "maximum" => {
                    if flavor == Flavor::AnthropicStrict {
                        self.note(path, k, v, &mut notes);
                    } else {
                        kept.push((k.to_string(), v.clone()));
                    }
                }
                "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf" => {
                    if flavor == Flavor::OpenAiStrict {
                        kept.push((k.to_string(), v.clone()));
                    } else {
                        self.note(path, k, v, &mut notes);
                    }
                }
                "minItems" => {
                    if flavor != Flavor::AnthropicStrict || v.as_u64().is_some_and(|n| n <= 1) {
                        kept.push((k.to_string(), v.clone()));
                    } else {
                        self.note(path, k, v, &mut notes);
                    }
                }
                "maxItems" => {
                    if flavor == Flavor::AnthropicStrict {
                        self.note(path, k, v, &mut notes);
                    } else {
                        kept.push((k.to_string(), v.clone()));
                    }
                }
                "uniqueItems" => {
                    if v.as_bool() == Some(true) {
                        self.note(path, k, v, &mut notes);
                    }
                }
                "minProperties" | "maxProperties" => {
                    if flavor == Flavor::GeminiOpenApi {
                        kept.push((k.to_string(), v.clone()));
                    } else {
                        self.note(path, k, v, &mut notes);
                    }
                }
                "items" => match v {
                    Value::Bool(true) => {
                        if self.strict() {
                            return self.fail(
                                path,
                                "is an array of any JSON values, which strict mode cannot express (items need a typed schema)",
                            );
                        }
                    }
                    Value::Bool(false) => {
                        // Only the empty array: `maxItems: 0` where items need no schema.
                        if self.strict() {
                            return self.fail(
                                path,
                                "is an array that must be empty (`items: false`), which strict mode cannot express (items need a typed schema)",
                            );
                        }
                        kept.push(("maxItems".to_string(), Value::from(0u64)));
                    }
                    _ => {
                        let item = self.node(v, &child_path(path, "items"), objects, depth + 1, false);
                        kept.push(("items".to_string(), item));
                    }
                },
                "anyOf" | "oneOf" => {
                    let Some(list) = v.as_array() else { continue };
                    if k == "oneOf" {
                        self.p.warn(
                            path,
                            "oneOf rewritten as anyOf: the schema no longer rejects a value that matches several branches",
                        );
                    }
                    let mut branches = Vec::new();
                    for (i, b) in list.iter().enumerate() {
                        let out = self.node(b, &index_path(path, k, i), objects, depth + 1, false);
                        if flavor == Flavor::GeminiOpenApi && is_null_only(&out) {
                            nullable = true;
                            continue;
                        }
                        branches.push(out);
                    }
                    kept.push(("anyOf".to_string(), Value::from(branches)));
                }
                "properties" | "required" | "additionalProperties" => {}
                other => self.p.warn(
                    path,
                    format!("keyword `{other}` left out ({target} does not take it)"),
                ),
            }
        }

        // Objects.
        let object_keywords = [
            "properties",
            "required",
            "additionalProperties",
            "minProperties",
            "maxProperties",
        ];
        let array_keywords = ["items", "minItems", "maxItems", "uniqueItems"];
        let string_keywords = ["pattern", "minLength", "maxLength", "format"];
        let number_keywords = [
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "multipleOf",
        ];
        let has = |keys: &[&str]| keys.iter().any(|k| o.contains_key(k) && applies(k));
        let unioned = kept.iter().any(|(k, _)| k == "anyOf");
        let valued = o.contains_key("enum") || o.contains_key("const");
        if types.is_empty() {
            if valued {
                // The values say which types: exact.
                let mut values: Vec<Value> = o
                    .get("enum")
                    .and_then(Value::as_array)
                    .map(|a| a.to_vec())
                    .unwrap_or_default();
                values.extend(o.get("const").cloned());
                for x in &values {
                    let t = match x {
                        Value::Null => "null",
                        Value::Bool(_) => "boolean",
                        Value::Number(n) if n.is_integer() => "integer",
                        Value::Number(_) => "number",
                        Value::String(_) => "string",
                        Value::Array(_) => "array",
                        Value::Object(_) => "object",
                    };
                    if !types.iter().any(|have| have == t) {
                        types.push(t.to_string());
                    }
                }
                if types.iter().any(|t| t == "number") {
                    types.retain(|t| t != "integer");
                }
            } else {
                let families: Vec<&str> = [
                    ("object", has(&object_keywords)),
                    ("array", has(&array_keywords)),
                    ("string", has(&string_keywords)),
                    ("number", has(&number_keywords)),
                ]
                .into_iter()
                .filter(|(_, present)| *present)
                .map(|(t, _)| t)
                .collect();
                match families.as_slice() {
                    [t] => {
                        self.p.warn(
                            path,
                            format!("typed as {t} ({target} needs a type, and only {t} keywords apply here): values of other types, which the schema lets through, are no longer accepted"),
                        );
                        types.push((*t).to_string());
                    }
                    [] if unioned || !self.strict() => {}
                    [] => return self.any_json(path),
                    _ => {
                        return self.fail(
                            path,
                            format!("has no `type` but keywords of several types ({}), which {target} cannot state", families.join(", ")),
                        );
                    }
                }
            }
        }
        // What the inferred types leave without effect goes too.
        if declared.is_empty() && !types.is_empty() {
            kept.retain(|(k, _)| {
                family(k).is_none_or(|f| {
                    types
                        .iter()
                        .any(|t| t == f || (f == "number" && t == "integer"))
                })
            });
        }
        let is_object = types.iter().any(|t| t == "object");
        let is_array = types.iter().any(|t| t == "array");
        if is_array && self.strict() && !o.contains_key("items") {
            return self.fail(
                path,
                "is an array of any JSON values, which strict mode cannot express (items need a typed schema)",
            );
        }
        let mut tail: Vec<(String, Value)> = Vec::new();
        let mut untyped_note: Option<String> = None;
        if is_object {
            let level = objects + 1;
            self.p.stats.object_depth = self.p.stats.object_depth.max(level);
            let required: Vec<String> = o
                .get("required")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            let declared_props: Vec<String> = o
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().map(str::to_string).collect())
                .unwrap_or_default();
            if let Some(missing) = required.iter().find(|r| !declared_props.contains(r)) {
                return self.fail(
                    path,
                    format!("`required` names {missing:?}, which `properties` does not declare ({target} needs it declared)"),
                );
            }
            // additionalProperties
            match (o.get("additionalProperties"), flavor) {
                (Some(Value::Bool(false)), Flavor::GeminiOpenApi) => self.p.warn(
                    path,
                    "additionalProperties: false dropped (the OpenAPI subset has no such field): the schema no longer tells the model that other keys are rejected",
                ),
                (Some(Value::Bool(false)), _) => tail.push(("additionalProperties".to_string(), Value::Bool(false))),
                (None | Some(Value::Bool(true)), Flavor::GeminiOpenApi) => {}
                (None | Some(Value::Bool(true)), _) => {
                    self.p.warn(
                        path,
                        "open object closed (additionalProperties: false): keys beyond the declared properties can no longer be sent",
                    );
                    tail.push(("additionalProperties".to_string(), Value::Bool(false)));
                }
                (Some(_), Flavor::GeminiOpenApi) => self.p.warn(
                    path,
                    "the schema of the map's values (additionalProperties) dropped: the OpenAPI subset cannot state it",
                ),
                (Some(_), _) => {
                    return self.fail(
                        path,
                        "is a map (additionalProperties with a schema), which strict mode cannot express (every object must be closed)",
                    );
                }
            }
            let mut props = Object::new();
            let mut required_out: Vec<Value> = Vec::new();
            if let Some(Value::Object(p)) = o.get("properties") {
                for (name, sub) in p.iter() {
                    let name: &str = name;
                    let sub_path = child_path(&child_path(path, "properties"), name);
                    if flavor == Flavor::GeminiOpenApi && !gemini_property_name(name) {
                        self.p.fail(
                            &sub_path,
                            "property name is not accepted by the OpenAPI form (it must match [A-Za-z_][A-Za-z0-9_]* and have at most 64 characters)",
                        );
                    }
                    let mut out = self.node(sub, &sub_path, level, depth + 1, false);
                    let is_required = required.iter().any(|r| r == name);
                    self.p.stats.properties += 1;
                    self.p.stats.chars += name.chars().count();
                    if !is_required {
                        self.p.stats.optional += 1;
                    }
                    if flavor == Flavor::OpenAiStrict && !is_required && !typed_nullable(&out) {
                        out = openai_nullable(out);
                    }
                    if is_union(&out) {
                        self.p.stats.unions += 1;
                    }
                    props.insert(name, out);
                    if is_required || flavor == Flavor::OpenAiStrict {
                        required_out.push(Value::from(name));
                    }
                }
            }
            if flavor == Flavor::GeminiOpenApi && props.is_empty() && !root {
                self.p.warn(
                    path,
                    "object without declared properties exported without a type (the OpenAPI form refuses an OBJECT with no properties): the model is not told it must be an object",
                );
                types.retain(|t| t != "object");
                untyped_note = Some("a JSON object".to_string());
            } else {
                if !props.is_empty() || self.strict() {
                    tail.push(("properties".to_string(), Value::Object(props)));
                }
                if !required_out.is_empty() || flavor == Flavor::OpenAiStrict {
                    tail.push(("required".to_string(), Value::from(required_out)));
                }
            }
        }

        // The type, in the flavor's form.
        let mut out = Object::new();
        if !types.is_empty() {
            if flavor == Flavor::GeminiOpenApi {
                let non_null: Vec<&String> = types.iter().filter(|t| *t != "null").collect();
                match non_null.as_slice() {
                    [] => {
                        out.insert("type", Value::from("NULL"));
                    }
                    [t] => {
                        out.insert("type", Value::from(self.type_name(t)));
                        if types.len() > 1 {
                            nullable = true;
                        }
                    }
                    several => {
                        let names: Vec<&str> = several.iter().map(|t| t.as_str()).collect();
                        return self.fail(
                            path,
                            format!(
                                "has several types ({}), which the OpenAPI form cannot state",
                                names.join(", ")
                            ),
                        );
                    }
                }
            } else if types.len() == 1 {
                out.insert("type", Value::from(types[0].as_str()));
            } else {
                out.insert(
                    "type",
                    Value::from(
                        types
                            .iter()
                            .map(|t| Value::from(t.as_str()))
                            .collect::<Vec<_>>(),
                    ),
                );
            }
        }
        if let Some(d) = describe(
            annotated.description.as_deref(),
            untyped_note.as_deref(),
            &notes,
        ) {
            out.insert("description", Value::from(d));
        }
        for (k, v) in annotated.kept {
            out.insert(k, v);
        }
        for (k, v) in kept {
            out.insert(k, v);
        }
        for (k, v) in tail {
            out.insert(k, v);
        }
        if nullable {
            out.insert("nullable", Value::Bool(true));
        }
        Value::Object(out)
    }

    fn count_values(&mut self, values: &[Value]) {
        for v in values {
            self.p.stats.enum_values += 1;
            self.p.stats.chars += match v.as_str() {
                Some(s) => s.chars().count(),
                None => v.to_string().len(),
            };
        }
    }
}

/// What the annotations of one schema object become.
#[derive(Default)]
struct Annotated {
    description: Option<String>,
    kept: Vec<(String, Value)>,
    notes: Vec<String>,
}

/// `o` with `description` set, placed where a schema's description goes: after its
/// `type` or `$ref` (first, without either) or where it already is.
fn with_description(o: Object, description: String) -> Object {
    if o.contains_key("description") {
        let mut o = o;
        o.insert("description", Value::from(description));
        return o;
    }
    let mut out = Object::with_capacity(o.len() + 1);
    let mut placed = false;
    if !o.contains_key("type") && !o.contains_key("$ref") {
        out.insert("description", Value::from(description.clone()));
        placed = true;
    }
    for (k, v) in o.into_vec() {
        let after_type = &*k == "type" || &*k == "$ref";
        out.insert(k, v);
        if after_type && !placed {
            out.insert("description", Value::from(description.clone()));
            placed = true;
        }
    }
    out
}

/// Whether a schema's `type` already admits `null` (`"null"`, or a list with it).
fn typed_nullable(v: &Value) -> bool {
    match v.get("type") {
        Some(Value::String(t)) => t.as_ref() == "null",
        Some(Value::Array(list)) => list.iter().any(|t| t.as_str() == Some("null")),
        _ => false,
    }
}

/// `{"type":"NULL"}` and nothing else.
fn is_null_only(v: &Value) -> bool {
    v.as_object()
        .is_some_and(|o| o.len() == 1 && o.get("type").and_then(Value::as_str) == Some("NULL"))
}

/// The type whose values a keyword constrains (`None`: every value).
fn family(keyword: &str) -> Option<&'static str> {
    Some(match keyword {
        "items" | "prefixItems" | "contains" | "minContains" | "maxContains" | "minItems"
        | "maxItems" | "uniqueItems" | "unevaluatedItems" => "array",
        "properties"
        | "patternProperties"
        | "additionalProperties"
        | "propertyNames"
        | "required"
        | "dependentRequired"
        | "dependentSchemas"
        | "minProperties"
        | "maxProperties"
        | "unevaluatedProperties" => "object",
        "pattern" | "minLength" | "maxLength" | "contentEncoding" | "contentMediaType"
        | "contentSchema" => "string",
        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf" => "number",
        _ => return None,
    })
}

fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

fn unescape(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}
