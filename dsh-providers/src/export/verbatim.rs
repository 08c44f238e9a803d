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

    fn object(
        &mut self,
        o: &Object,
        path: &str,
        objects: usize,
        depth: usize,
        root: bool,
    ) -> Value {
        // A reference (or a one-branch `allOf` holding only one) stands for its target.
        if let Some(out) = self.object_reference(o, path, objects, depth) {
            return out;
        }
        let at = At {
            o,
            path,
            objects,
            depth,
            root,
            declared: declared_types(o),
        };
        self.plain_object(&at).unwrap_or_else(|failed| failed)
    }

    /// What a schema object that is a reference (`$ref`, `$dynamicRef`, or a one-branch
    /// `allOf` holding one) becomes; `None` when it is not one.
    fn object_reference(
        &mut self,
        o: &Object,
        path: &str,
        objects: usize,
        depth: usize,
    ) -> Option<Value> {
        let target = self.target;
        let dynamic = o.get("$dynamicRef").and_then(Value::as_str);
        let direct = o.get("$ref").and_then(Value::as_str);
        if dynamic.is_some() && direct.is_some() {
            return Some(self.fail(
                path,
                format!(
                    "has both `$ref` and `$dynamicRef`, which {target} cannot state without `allOf`"
                ),
            ));
        }
        if let Some(text) = direct.or(dynamic) {
            return Some(self.reference(text, o, path, objects, depth));
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
            return Some(self.reference(&text, &merged, path, objects, depth));
        }
        None
    }

    /// A schema object that is not a reference: its keywords, its types, its members,
    /// put together in the flavor's form.
    fn plain_object(&mut self, at: &At<'_>) -> Step<Value> {
        let annotated = self.annotations(at.o, at.path);
        self.refused(at)?;
        let mut node = Node {
            notes: annotated.notes,
            kept: Vec::new(),
            nullable: false,
        };
        for (k, v) in at.o.iter() {
            let k: &str = k;
            // A keyword of another type's family says nothing about this node's values
            // (an `items` beside `"type": "object"`): left out, without loss.
            if applies(&at.declared, k) {
                self.keyword(at, &mut node, k, v)?;
            }
        }
        let mut types = self.types(at, &node)?;
        // What the inferred types leave without effect goes too.
        if at.declared.is_empty() && !types.is_empty() {
            node.kept.retain(|(k, _)| applies(&types, k));
        }
        let is_object = types.iter().any(|t| t == "object");
        let is_array = types.iter().any(|t| t == "array");
        if is_array && self.strict() && !at.o.contains_key("items") {
            return Err(self.fail(
                at.path,
                "is an array of any JSON values, which strict mode cannot express (items need a typed schema)",
            ));
        }
        let (tail, untyped_note) = if is_object {
            self.members(at, &mut types)?
        } else {
            (Vec::new(), None)
        };
        let mut out = self.typed(&types, &mut node.nullable, at.path)?;
        if let Some(d) = describe(
            annotated.description.as_deref(),
            untyped_note.as_deref(),
            &node.notes,
        ) {
            out.insert("description", Value::from(d));
        }
        for (k, v) in annotated.kept.into_iter().chain(node.kept).chain(tail) {
            out.insert(k, v);
        }
        if node.nullable {
            out.insert("nullable", Value::Bool(true));
        }
        Ok(Value::Object(out))
    }

    /// Fails on keywords the subset cannot state.
    fn refused(&mut self, at: &At<'_>) -> Step<()> {
        let target = self.target;
        for (k, _) in at.o.iter() {
            let k: &str = k;
            if REFUSED.contains(&k) && applies(&at.declared, k) {
                return Err(self.fail(at.path, format!("uses `{k}`, which {target} cannot state")));
            }
        }
        if at.o.contains_key("anyOf") && at.o.contains_key("oneOf") {
            return Err(self.fail(
                at.path,
                format!(
                    "has both `anyOf` and `oneOf`, which {target} cannot state without `allOf`"
                ),
            ));
        }
        Ok(())
    }

    /// One keyword of a schema object, by the family it belongs to.
    fn keyword(&mut self, at: &At<'_>, node: &mut Node, k: &str, v: &Value) -> Step<()> {
        match k {
            "$schema" => {
                if at.root {
                    self.p.warn(
                        at.path,
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
            "format" | "contentEncoding" | "contentMediaType" | "contentSchema" | "pattern"
            | "minLength" | "maxLength" => self.string_keyword(at.path, node, k, v),
            "enum" => self.enum_keyword(at, node, v)?,
            "const" => self.const_keyword(at, node, v)?,
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf" => {
                self.number_keyword(at.path, node, k, v)
            }
            "items" => self.items_keyword(at, node, v)?,
            "minItems" | "maxItems" | "uniqueItems" => self.array_keyword(at.path, node, k, v),
            "minProperties" | "maxProperties" => {
                let keep = self.flavor() == Flavor::GeminiOpenApi;
                self.keep_or_note(at.path, node, k, v, keep);
            }
            "anyOf" | "oneOf" => self.union_keyword(at, node, k, v),
            // Taken by `members`.
            "properties" | "required" | "additionalProperties" => {}
            other => self.p.warn(
                at.path,
                format!(
                    "keyword `{other}` left out ({} does not take it)",
                    self.target
                ),
            ),
        }
        Ok(())
    }

    /// `k: v` kept as written when `keep`, else moved into the description.
    fn keep_or_note(&mut self, path: &str, node: &mut Node, k: &str, v: &Value, keep: bool) {
        if keep {
            node.kept.push((k.to_string(), v.clone()));
        } else {
            self.note(path, k, v, &mut node.notes);
        }
    }

    /// `format`, `pattern`, the length bounds and the `content*` keywords.
    fn string_keyword(&mut self, path: &str, node: &mut Node, k: &str, v: &Value) {
        let flavor = self.flavor();
        match k {
            "format" => {
                let allowed: &[&str] = match flavor {
                    Flavor::OpenAiStrict => OPENAI_FORMATS,
                    Flavor::AnthropicStrict => ANTHROPIC_FORMATS,
                    _ => &[],
                };
                let keep = flavor == Flavor::GeminiOpenApi
                    || v.as_str().is_some_and(|f| allowed.contains(&f));
                self.keep_or_note(path, node, k, v, keep);
            }
            "contentSchema" => self.p.warn(
                path,
                format!(
                    "contentSchema left out ({} cannot state the schema of encoded content)",
                    self.target
                ),
            ),
            "pattern" => node.kept.push((k.to_string(), v.clone())),
            "minLength" | "maxLength" => {
                let keep = !self.strict();
                self.keep_or_note(path, node, k, v, keep);
            }
            // `contentEncoding`, `contentMediaType`.
            _ => self.note(path, k, v, &mut node.notes),
        }
    }

    /// `enum`.
    fn enum_keyword(&mut self, at: &At<'_>, node: &mut Node, v: &Value) -> Step<()> {
        let flavor = self.flavor();
        let values = v.as_array().map(|a| a.to_vec()).unwrap_or_default();
        self.count_values(&values);
        let strings = values.iter().all(|x| x.as_str().is_some());
        let complex = values
            .iter()
            .any(|x| matches!(x, Value::Array(_) | Value::Object(_)));
        if flavor == Flavor::AnthropicStrict && complex {
            return Err(self.fail(
                at.path,
                "has an `enum` with array or object members, which Anthropic strict mode does not support",
            ));
        }
        let keep = flavor != Flavor::GeminiOpenApi || (strings && at.on_string());
        self.keep_or_note(at.path, node, "enum", v, keep);
        Ok(())
    }

    /// `const`.
    fn const_keyword(&mut self, at: &At<'_>, node: &mut Node, v: &Value) -> Step<()> {
        self.count_values(std::slice::from_ref(v));
        match (self.flavor(), v) {
            (Flavor::AnthropicStrict, Value::Array(_) | Value::Object(_)) => {
                return Err(self.fail(
                    at.path,
                    "has a `const` array or object, which Anthropic strict mode does not support",
                ));
            }
            (Flavor::GeminiOpenApi, Value::String(_)) if at.on_string() => {
                if !at.o.contains_key("enum") {
                    node.kept
                        .push(("enum".to_string(), Value::from(vec![v.clone()])));
                }
            }
            (Flavor::GeminiOpenApi, _) => self.note(at.path, "const", v, &mut node.notes),
            _ => node.kept.push(("const".to_string(), v.clone())),
        }
        Ok(())
    }

    /// The bounds of a number.
    fn number_keyword(&mut self, path: &str, node: &mut Node, k: &str, v: &Value) {
        let flavor = self.flavor();
        let keep = match k {
            "minimum" | "maximum" => flavor != Flavor::AnthropicStrict,
            // `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`.
            _ => flavor == Flavor::OpenAiStrict,
        };
        self.keep_or_note(path, node, k, v, keep);
    }

    /// The bounds of an array, and `uniqueItems`.
    fn array_keyword(&mut self, path: &str, node: &mut Node, k: &str, v: &Value) {
        let anthropic = self.flavor() == Flavor::AnthropicStrict;
        match k {
            "minItems" => {
                let keep = !anthropic || v.as_u64().is_some_and(|n| n <= 1);
                self.keep_or_note(path, node, k, v, keep);
            }
            "maxItems" => self.keep_or_note(path, node, k, v, !anthropic),
            // `uniqueItems`.
            _ => {
                if v.as_bool() == Some(true) {
                    self.note(path, k, v, &mut node.notes);
                }
            }
        }
    }

    /// `items`.
    fn items_keyword(&mut self, at: &At<'_>, node: &mut Node, v: &Value) -> Step<()> {
        match v {
            Value::Bool(true) => {
                if self.strict() {
                    return Err(self.fail(
                        at.path,
                        "is an array of any JSON values, which strict mode cannot express (items need a typed schema)",
                    ));
                }
            }
            Value::Bool(false) => {
                // Only the empty array: `maxItems: 0` where items need no schema.
                if self.strict() {
                    return Err(self.fail(
                        at.path,
                        "is an array that must be empty (`items: false`), which strict mode cannot express (items need a typed schema)",
                    ));
                }
                node.kept.push(("maxItems".to_string(), Value::from(0u64)));
            }
            _ => {
                let item = self.node(
                    v,
                    &child_path(at.path, "items"),
                    at.objects,
                    at.depth + 1,
                    false,
                );
                node.kept.push(("items".to_string(), item));
            }
        }
        Ok(())
    }

    /// `anyOf` or `oneOf`, both published as `anyOf`.
    fn union_keyword(&mut self, at: &At<'_>, node: &mut Node, k: &str, v: &Value) {
        let Some(list) = v.as_array() else { return };
        if k == "oneOf" {
            self.p.warn(
                at.path,
                "oneOf rewritten as anyOf: the schema no longer rejects a value that matches several branches",
            );
        }
        let mut branches = Vec::new();
        for (i, b) in list.iter().enumerate() {
            let out = self.node(
                b,
                &index_path(at.path, k, i),
                at.objects,
                at.depth + 1,
                false,
            );
            if self.flavor() == Flavor::GeminiOpenApi && is_null_only(&out) {
                node.nullable = true;
                continue;
            }
            branches.push(out);
        }
        node.kept.push(("anyOf".to_string(), Value::from(branches)));
    }

    /// The node's types: as declared, else those of its values (`enum`, `const`), else
    /// the one family its keywords belong to.
    fn types(&mut self, at: &At<'_>, node: &Node) -> Step<Vec<String>> {
        if !at.declared.is_empty() {
            return Ok(at.declared.clone());
        }
        if at.o.contains_key("enum") || at.o.contains_key("const") {
            // The values say which types: exact.
            return Ok(value_types(at.o));
        }
        let has = |keys: &[&str]| {
            keys.iter()
                .any(|k| at.o.contains_key(k) && applies(&at.declared, k))
        };
        let families: Vec<&str> = [
            ("object", has(&OBJECT_KEYWORDS)),
            ("array", has(&ARRAY_KEYWORDS)),
            ("string", has(&STRING_KEYWORDS)),
            ("number", has(&NUMBER_KEYWORDS)),
        ]
        .into_iter()
        .filter(|(_, present)| *present)
        .map(|(t, _)| t)
        .collect();
        let unioned = node.kept.iter().any(|(k, _)| k == "anyOf");
        let target = self.target;
        match families.as_slice() {
            [t] => {
                self.p.warn(
                    at.path,
                    format!("typed as {t} ({target} needs a type, and only {t} keywords apply here): values of other types, which the schema lets through, are no longer accepted"),
                );
                Ok(vec![(*t).to_string()])
            }
            [] if unioned || !self.strict() => Ok(Vec::new()),
            [] => Err(self.any_json(at.path)),
            _ => Err(self.fail(
                at.path,
                format!(
                    "has no `type` but keywords of several types ({}), which {target} cannot state",
                    families.join(", ")
                ),
            )),
        }
    }

    /// An object's `properties`, `required` and `additionalProperties`, in the
    /// flavor's form; and the note that replaces its type when the flavor cannot type it
    /// (`types` then loses `object`).
    fn members(&mut self, at: &At<'_>, types: &mut Vec<String>) -> Step<Members> {
        let flavor = self.flavor();
        let level = at.objects + 1;
        self.p.stats.object_depth = self.p.stats.object_depth.max(level);
        let required: Vec<String> =
            at.o.get("required")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
        let declared_props: Vec<String> =
            at.o.get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().map(str::to_string).collect())
                .unwrap_or_default();
        if let Some(missing) = required.iter().find(|r| !declared_props.contains(r)) {
            return Err(self.fail(
                at.path,
                format!(
                    "`required` names {missing:?}, which `properties` does not declare ({} needs it declared)",
                    self.target
                ),
            ));
        }
        let mut tail: Vec<(String, Value)> = Vec::new();
        if self.additional_properties(at)? {
            tail.push(("additionalProperties".to_string(), Value::Bool(false)));
        }
        let (props, required_out) = self.properties(at, level, &required);
        if flavor == Flavor::GeminiOpenApi && props.is_empty() && !at.root {
            self.p.warn(
                at.path,
                "object without declared properties exported without a type (the OpenAPI form refuses an OBJECT with no properties): the model is not told it must be an object",
            );
            types.retain(|t| t != "object");
            return Ok((tail, Some("a JSON object".to_string())));
        }
        if !props.is_empty() || self.strict() {
            tail.push(("properties".to_string(), Value::Object(props)));
        }
        if !required_out.is_empty() || flavor == Flavor::OpenAiStrict {
            tail.push(("required".to_string(), Value::from(required_out)));
        }
        Ok((tail, None))
    }

    /// Whether the object is published closed (`additionalProperties: false`).
    fn additional_properties(&mut self, at: &At<'_>) -> Step<bool> {
        match (at.o.get("additionalProperties"), self.flavor()) {
            (Some(Value::Bool(false)), Flavor::GeminiOpenApi) => self.p.warn(
                at.path,
                "additionalProperties: false dropped (the OpenAPI subset has no such field): the schema no longer tells the model that other keys are rejected",
            ),
            (Some(Value::Bool(false)), _) => return Ok(true),
            (None | Some(Value::Bool(true)), Flavor::GeminiOpenApi) => {}
            (None | Some(Value::Bool(true)), _) => {
                self.p.warn(
                    at.path,
                    "open object closed (additionalProperties: false): keys beyond the declared properties can no longer be sent",
                );
                return Ok(true);
            }
            (Some(_), Flavor::GeminiOpenApi) => self.p.warn(
                at.path,
                "the schema of the map's values (additionalProperties) dropped: the OpenAPI subset cannot state it",
            ),
            (Some(_), _) => {
                return Err(self.fail(
                    at.path,
                    "is a map (additionalProperties with a schema), which strict mode cannot express (every object must be closed)",
                ));
            }
        }
        Ok(false)
    }

    /// An object's properties, each adapted, and the names the output requires.
    fn properties(
        &mut self,
        at: &At<'_>,
        level: usize,
        required: &[String],
    ) -> (Object, Vec<Value>) {
        let flavor = self.flavor();
        let mut props = Object::new();
        let mut required_out: Vec<Value> = Vec::new();
        let Some(Value::Object(p)) = at.o.get("properties") else {
            return (props, required_out);
        };
        for (name, sub) in p.iter() {
            let name: &str = name;
            let sub_path = child_path(&child_path(at.path, "properties"), name);
            if flavor == Flavor::GeminiOpenApi && !gemini_property_name(name) {
                self.p.fail(
                    &sub_path,
                    "property name is not accepted by the OpenAPI form (it must match [A-Za-z_][A-Za-z0-9_]* and have at most 64 characters)",
                );
            }
            let mut out = self.node(sub, &sub_path, level, at.depth + 1, false);
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
        (props, required_out)
    }

    /// The output object, started with the `type` in the flavor's form (Gemini: one
    /// upper-case type, `nullable` for `null`).
    fn typed(&mut self, types: &[String], nullable: &mut bool, path: &str) -> Step<Object> {
        let mut out = Object::new();
        if types.is_empty() {
            return Ok(out);
        }
        if self.flavor() == Flavor::GeminiOpenApi {
            let non_null: Vec<&String> = types.iter().filter(|t| *t != "null").collect();
            match non_null.as_slice() {
                [] => {
                    out.insert("type", Value::from("NULL"));
                }
                [t] => {
                    out.insert("type", Value::from(self.type_name(t)));
                    if types.len() > 1 {
                        *nullable = true;
                    }
                }
                several => {
                    let names: Vec<&str> = several.iter().map(|t| t.as_str()).collect();
                    return Err(self.fail(
                        path,
                        format!(
                            "has several types ({}), which the OpenAPI form cannot state",
                            names.join(", ")
                        ),
                    ));
                }
            }
        } else if let [t] = types {
            out.insert("type", Value::from(t.as_str()));
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
        Ok(out)
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

/// A step of adapting a schema object: `Err` holds what the object becomes when the
/// step fails (the failure is reported already).
type Step<T> = Result<T, Value>;

/// An object's members after `additionalProperties`, `properties` and `required`, and
/// the note that replaces its type when the flavor cannot type it.
type Members = (Vec<(String, Value)>, Option<String>);

/// A schema object being adapted, and where it is.
struct At<'o> {
    o: &'o Object,
    path: &'o str,
    /// How many objects enclose it.
    objects: usize,
    depth: usize,
    root: bool,
    /// Its `type`, as written.
    declared: Vec<String>,
}

impl At<'_> {
    /// Whether its declared types admit a string (no declared type admits all).
    fn on_string(&self) -> bool {
        self.declared.is_empty() || self.declared.iter().any(|t| t == "string")
    }
}

/// What a schema object's keywords become, gathered in keyword order.
struct Node {
    /// What moves into the description.
    notes: Vec<String>,
    /// The keywords published, in order.
    kept: Vec<(String, Value)>,
    /// Gemini's `nullable`.
    nullable: bool,
}

/// The keywords of each type's family that say which type an untyped node has.
const OBJECT_KEYWORDS: [&str; 5] = [
    "properties",
    "required",
    "additionalProperties",
    "minProperties",
    "maxProperties",
];
const ARRAY_KEYWORDS: [&str; 4] = ["items", "minItems", "maxItems", "uniqueItems"];
const STRING_KEYWORDS: [&str; 4] = ["pattern", "minLength", "maxLength", "format"];
const NUMBER_KEYWORDS: [&str; 5] = [
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
];

/// A schema object's `type`, as written (a name or a list of names).
fn declared_types(o: &Object) -> Vec<String> {
    match o.get("type") {
        Some(Value::String(t)) => vec![t.to_string()],
        Some(Value::Array(list)) => list
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

/// Whether keyword `k` constrains values of one of `types` (every keyword does when
/// `types` is empty).
fn applies(types: &[String], k: &str) -> bool {
    family(k).is_none_or(|f| {
        types.is_empty()
            || types
                .iter()
                .any(|t| t == f || (f == "number" && t == "integer"))
    })
}

/// The types of a schema object's `enum` and `const` values.
fn value_types(o: &Object) -> Vec<String> {
    let mut values: Vec<Value> = o
        .get("enum")
        .and_then(Value::as_array)
        .map(|a| a.to_vec())
        .unwrap_or_default();
    values.extend(o.get("const").cloned());
    let mut types: Vec<String> = Vec::new();
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
    types
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
