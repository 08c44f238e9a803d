//! The projection engine: one walk over a [`Schema`] that writes the JSON Schema text a
//! provider accepts, recording every transform that loses information.
//!
//! The walk is parameterized by a [`Flavor`]; what each flavor keeps, rewrites, moves into
//! the description or refuses is listed on the variants, each with its source.

use dsh_runtime::json::{Number, Object, Value};
use dsh_runtime::schema::{
    Additional, ArrayRules, Kind, MAX_SCHEMA_DEPTH, MCP_HEADER_KEY, ObjectRules, Property, Schema,
    StringRules,
};

use super::{ExportError, ExportWarning};

/// The schema dialect a walk writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// Plain JSON Schema 2020-12, lossless: OpenAI and Anthropic without `strict`,
    /// Gemini `parametersJsonSchema`, MCP `inputSchema`/`outputSchema`.
    Json,
    /// OpenAI Structured Outputs (`strict: true`). Source: OpenAI "Structured Outputs,
    /// supported schemas" and the function-calling guide (providers.md, OpenAI section):
    /// every object closed, every property required, optional properties unioned with
    /// `null`; `oneOf` is not accepted, `anyOf` is; `minLength`/`maxLength`, `default` and
    /// `examples` are not in the supported keyword list; an untyped schema is refused.
    OpenAiStrict,
    /// Anthropic strict tool use. Source: Claude "structured outputs" page and the SDK's
    /// `transform_schema()` (providers.md, Anthropic section): every object closed;
    /// numeric `minimum`/`maximum`, `minLength`/`maxLength`, `maxItems` and `minItems`
    /// above 1 unsupported (moved into the description, as the SDK does); `oneOf` mapped
    /// to `anyOf`.
    AnthropicStrict,
    /// Gemini `parameters`, the OpenAPI 3.0 subset `Schema`. Source: python-genai
    /// `types.py` `Schema` and the observed 400s listed in providers.md (Gemini section):
    /// one upper-case `type`, `nullable` instead of type arrays or a `null` branch, no
    /// `additionalProperties`, no `const`, `enum` only of strings, `example` (singular),
    /// property names `[A-Za-z_][A-Za-z0-9_]*` of at most 64 characters.
    GeminiOpenApi,
}

/// Size figures of one projected schema, for the providers' limits and budgets.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Stats {
    /// Object properties, at every level.
    pub properties: usize,
    /// Properties that are not required (before OpenAI strict makes them required).
    pub optional: usize,
    /// Properties whose projected schema is a union (`anyOf` or a `type` array).
    pub unions: usize,
    /// `enum` entries plus `const` values.
    pub enum_values: usize,
    /// Characters of property names, `enum` and `const` values.
    pub chars: usize,
    /// The deepest object nesting (the root object is level 1).
    pub object_depth: usize,
}

/// One walk's state: the tool it belongs to, what it lost and refused, its sizes.
pub(crate) struct Projector<'a> {
    pub flavor: Flavor,
    /// Publish `x-mcp-header` ([`Schema::header`]): MCP targets only, where a client
    /// reads it; every other target leaves it out (transport metadata, nothing a model
    /// needs, and a keyword strict dialects refuse).
    pub mcp_header: bool,
    pub tool: &'a str,
    pub warnings: Vec<ExportWarning>,
    pub errors: Vec<ExportError>,
    pub stats: Stats,
}

/// Integer bounds that say nothing to a model (the range of `i64`/`u64` itself) are
/// enforced by the validator but never published: they would only cost tokens.
fn informative_int(bound: Option<i128>) -> Option<Number> {
    let b = bound?;
    if b == i128::from(i64::MIN) || b == i128::from(i64::MAX) || b == i128::from(u64::MAX) {
        return None;
    }
    if b >= 0 {
        u64::try_from(b).ok().map(Number::from)
    } else {
        i64::try_from(b).ok().map(Number::from)
    }
}

/// Whether `name` is a property name the Gemini OpenAPI form accepts.
pub(crate) fn gemini_property_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    let head_ok = matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_');
    head_ok && name.len() <= 64 && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The keywords of one node as the walk collects them, each group in output order.
#[derive(Default)]
struct Parts {
    /// `type` (`None`: untyped).
    ty: Option<&'static str>,
    /// What the description says of an untyped node's values.
    untyped_note: Option<String>,
    /// Moved-out keywords, written into the description as `keyword: value`.
    notes: Vec<String>,
    /// `title`, `default`, `examples`, the header name.
    annotations: Vec<(&'static str, Value)>,
    /// Kept constraint keywords.
    kept: Vec<(&'static str, Value)>,
    /// `enum` (or Gemini's one-value `enum` for a string `const`).
    enum_out: Option<(&'static str, Value)>,
    /// `const`, then the containers' members (`items`, `additionalProperties`,
    /// `properties`, `required`).
    tail: Vec<(&'static str, Value)>,
}

/// A node the flavor cannot state; the walk has recorded why.
struct Refused;

fn push_key(path: &mut String, key: &str) {
    dsh_runtime::json::path::push_key(path, key);
}

impl<'a> Projector<'a> {
    pub(super) fn new(flavor: Flavor, tool: &'a str) -> Self {
        Projector {
            flavor,
            mcp_header: false,
            tool,
            warnings: Vec::new(),
            errors: Vec::new(),
            stats: Stats::default(),
        }
    }

    pub(super) fn warn(&mut self, path: &str, lost: impl Into<String>) {
        self.warnings.push(ExportWarning {
            tool: self.tool.to_string(),
            path: path.to_string(),
            lost: lost.into(),
        });
    }

    pub(super) fn fail(&mut self, path: &str, reason: impl Into<String>) {
        self.errors.push(ExportError {
            tool: Some(self.tool.to_string()),
            path: path.to_string(),
            reason: reason.into(),
        });
    }

    fn strict(&self) -> bool {
        matches!(self.flavor, Flavor::OpenAiStrict | Flavor::AnthropicStrict)
    }

    /// Project a tool's parameter schema. An open root is written without
    /// `additionalProperties` (JSON Schema's default is open), as the registry publishes it.
    pub(super) fn parameters(&mut self, schema: &Schema) -> Value {
        let path = "parameters".to_string();
        if schema.as_object().is_none() {
            self.fail(
                &path,
                format!(
                    "the parameter schema is a {} node; every provider needs an object root",
                    schema.kind_name()
                ),
            );
            return Value::Object(Object::new());
        }
        self.node(schema, &mut path.clone(), 0, 0, true)
    }

    /// Project any schema (an output schema) starting at `label`.
    pub(super) fn value(&mut self, schema: &Schema, label: &str) -> Value {
        self.node(schema, &mut label.to_string(), 0, 0, false)
    }

    fn node(
        &mut self,
        s: &Schema,
        path: &mut String,
        objects: usize,
        depth: usize,
        root: bool,
    ) -> Value {
        if depth >= MAX_SCHEMA_DEPTH {
            self.fail(
                path,
                format!("schema nesting deeper than {MAX_SCHEMA_DEPTH} levels"),
            );
            return Value::Object(Object::new());
        }
        if let Kind::OneOf(branches) = &s.kind {
            return self.union(s, branches, path, objects, depth);
        }
        let mut parts = Parts::default();
        if self
            .kind(s, path, objects, depth, root, &mut parts)
            .is_err()
        {
            return Value::Object(Object::new());
        }
        self.enum_and_const(s, path, &mut parts);
        self.annotations(s, path, &mut parts);
        self.assemble(s, parts)
    }

    /// The keywords of the node's kind (its type and constraints, its members), or
    /// `Refused` when the flavor cannot state it (already reported).
    fn kind(
        &mut self,
        s: &Schema,
        path: &mut String,
        objects: usize,
        depth: usize,
        root: bool,
        parts: &mut Parts,
    ) -> Result<(), Refused> {
        match &s.kind {
            // Written by `union`, before this is called.
            Kind::OneOf(_) => Ok(()),
            Kind::Json if self.strict() => {
                self.fail(
                    path,
                    "accepts any JSON value, which strict mode cannot express (it needs a type on every schema and closed objects)",
                );
                Err(Refused)
            }
            Kind::Json => Ok(()),
            Kind::String(r) => {
                self.string(r, path, parts);
                Ok(())
            }
            Kind::Number(r) => {
                parts.ty = Some("number");
                let bounds = [("minimum", r.minimum), ("maximum", r.maximum)];
                self.bounds(
                    bounds.map(|(k, b)| (k, b.and_then(Number::from_f64))),
                    path,
                    parts,
                );
                Ok(())
            }
            Kind::Integer(r) => {
                parts.ty = Some("integer");
                let bounds = [("minimum", r.minimum), ("maximum", r.maximum)];
                self.bounds(bounds.map(|(k, b)| (k, informative_int(b))), path, parts);
                Ok(())
            }
            Kind::Boolean => {
                parts.ty = Some("boolean");
                Ok(())
            }
            Kind::Null => {
                parts.ty = Some("null");
                Ok(())
            }
            Kind::Array(r) => self.array(r, path, objects, depth, parts),
            Kind::Object(r) => self.object(r, path, objects, depth, root, parts),
        }
    }

    /// `minLength`, `maxLength` and `pattern`, kept or moved into the description.
    fn string(&mut self, r: &StringRules, path: &str, parts: &mut Parts) {
        parts.ty = Some("string");
        let (min_ok, max_ok, pattern_ok) = match self.flavor {
            Flavor::Json | Flavor::GeminiOpenApi => (true, true, true),
            Flavor::OpenAiStrict | Flavor::AnthropicStrict => (false, false, true),
        };
        if let Some(v) = r.min_length {
            self.keep_or_move(path, "minLength", Value::from(v), min_ok, parts);
        }
        if let Some(v) = r.max_length {
            self.keep_or_move(path, "maxLength", Value::from(v), max_ok, parts);
        }
        if let Some(p) = &r.pattern {
            self.keep_or_move(path, "pattern", Value::from(p.as_str()), pattern_ok, parts);
        }
    }

    /// A number's or an integer's `minimum` and `maximum` (those it has), kept or moved
    /// into the description (Anthropic strict).
    fn bounds(
        &mut self,
        bounds: [(&'static str, Option<Number>); 2],
        path: &str,
        parts: &mut Parts,
    ) {
        let ok = self.flavor != Flavor::AnthropicStrict;
        for (key, bound) in bounds {
            if let Some(n) = bound {
                self.keep_or_move(path, key, Value::Number(n), ok, parts);
            }
        }
    }

    /// `minItems`, `maxItems` and the items' schema.
    fn array(
        &mut self,
        r: &ArrayRules,
        path: &mut String,
        objects: usize,
        depth: usize,
        parts: &mut Parts,
    ) -> Result<(), Refused> {
        parts.ty = Some("array");
        if let Some(v) = r.min_items {
            let ok = self.flavor != Flavor::AnthropicStrict || v <= 1;
            self.keep_or_move(path, "minItems", Value::from(v), ok, parts);
        }
        if let Some(v) = r.max_items {
            let ok = self.flavor != Flavor::AnthropicStrict;
            self.keep_or_move(path, "maxItems", Value::from(v), ok, parts);
        }
        match &r.items {
            Some(items) => {
                let len = path.len();
                path.push_str(".items");
                let v = self.node(items, path, objects, depth + 1, false);
                path.truncate(len);
                parts.tail.push(("items", v));
            }
            None if self.strict() => {
                self.fail(
                    path,
                    "is an array of any JSON values, which strict mode cannot express (items need a typed schema)",
                );
                return Err(Refused);
            }
            None => {}
        }
        Ok(())
    }

    /// `additionalProperties`, `properties` and `required`.
    fn object(
        &mut self,
        r: &ObjectRules,
        path: &mut String,
        objects: usize,
        depth: usize,
        root: bool,
        parts: &mut Parts,
    ) -> Result<(), Refused> {
        let flavor = self.flavor;
        parts.ty = Some("object");
        let level = objects + 1;
        self.stats.object_depth = self.stats.object_depth.max(level);
        self.additional(&r.additional, path, level, depth, root, parts)?;
        let (props, required) = self.properties(&r.properties, path, level, depth);
        if flavor == Flavor::GeminiOpenApi && r.properties.is_empty() && !root {
            // Gemini refuses an OBJECT without properties; any value is the closest.
            self.warn(
                path,
                "object without declared properties exported without a type (the OpenAPI form refuses an OBJECT with no properties): the model is not told it must be an object",
            );
            parts.ty = None;
            parts.untyped_note = Some("a JSON object".to_string());
        } else {
            if !r.properties.is_empty() || self.strict() {
                parts.tail.push(("properties", Value::Object(props)));
            }
            if !required.is_empty() || flavor == Flavor::OpenAiStrict {
                parts.tail.push(("required", Value::from(required)));
            }
        }
        Ok(())
    }

    /// An object's `additionalProperties` as the flavor states it (or drops it, with a
    /// warning), or `Refused` for a map under strict mode.
    fn additional(
        &mut self,
        additional: &Additional,
        path: &mut String,
        level: usize,
        depth: usize,
        root: bool,
        parts: &mut Parts,
    ) -> Result<(), Refused> {
        match (additional, self.flavor) {
            (Additional::Closed, Flavor::GeminiOpenApi) => self.warn(
                path,
                "additionalProperties: false dropped (the OpenAPI subset has no such field): the schema no longer tells the model that other keys are rejected",
            ),
            (Additional::Closed, _) => parts.tail.push(("additionalProperties", Value::Bool(false))),
            (Additional::Open | Additional::Ignored, Flavor::Json) => {
                if !root {
                    parts.tail.push(("additionalProperties", Value::Bool(true)));
                }
            }
            (Additional::Open | Additional::Ignored, Flavor::GeminiOpenApi) => {}
            (Additional::Open | Additional::Ignored, _) => {
                self.warn(
                    path,
                    if root {
                        "open root closed (additionalProperties: false): undeclared keys, which the tool ignores, can no longer be sent"
                    } else {
                        "open object closed (additionalProperties: false): keys beyond the declared properties can no longer be sent"
                    },
                );
                parts.tail.push(("additionalProperties", Value::Bool(false)));
            }
            (Additional::Schema(values), Flavor::Json) => {
                let len = path.len();
                path.push_str(".additionalProperties");
                let v = self.node(values, path, level, depth + 1, false);
                path.truncate(len);
                parts.tail.push(("additionalProperties", v));
            }
            (Additional::Schema(_), Flavor::GeminiOpenApi) => self.warn(
                path,
                "the schema of the map's values (additionalProperties) dropped: the OpenAPI subset cannot state it",
            ),
            (Additional::Schema(_), _) => {
                self.fail(
                    path,
                    "is a map (additionalProperties with a schema), which strict mode cannot express (every object must be closed)",
                );
                return Err(Refused);
            }
        }
        Ok(())
    }

    /// An object's `properties` and `required` list, each property's schema projected
    /// (OpenAI strict: every property required, the optional ones nullable).
    fn properties(
        &mut self,
        properties: &[Property],
        path: &mut String,
        level: usize,
        depth: usize,
    ) -> (Object, Vec<Value>) {
        let flavor = self.flavor;
        let mut props = Object::new();
        let mut required = Vec::new();
        for p in properties {
            let len = path.len();
            path.push_str(".properties");
            push_key(path, &p.name);
            if flavor == Flavor::GeminiOpenApi && !gemini_property_name(&p.name) {
                self.fail(
                    path,
                    "property name is not accepted by the OpenAPI form (it must match [A-Za-z_][A-Za-z0-9_]* and have at most 64 characters)",
                );
            }
            let mut v = self.node(&p.schema, path, level, depth + 1, false);
            path.truncate(len);
            self.stats.properties += 1;
            self.stats.chars += p.name.chars().count();
            if !p.required {
                self.stats.optional += 1;
            }
            if flavor == Flavor::OpenAiStrict && !p.required {
                v = openai_nullable(v);
            }
            if is_union(&v) {
                self.stats.unions += 1;
            }
            props.insert(p.name.as_ref(), v);
            if p.required || flavor == Flavor::OpenAiStrict {
                required.push(Value::from(p.name.as_ref()));
            }
        }
        (props, required)
    }

    /// `enum` and `const`, as the flavor accepts them (Gemini: string values only, a
    /// string `const` as a one-value `enum`; others moved into the description).
    fn enum_and_const(&mut self, s: &Schema, path: &str, parts: &mut Parts) {
        let flavor = self.flavor;
        if let Some(values) = &s.enum_values {
            self.count_values(values.iter());
            let strings = values.iter().all(|v| v.as_str().is_some());
            if flavor == Flavor::GeminiOpenApi && !strings {
                self.move_note(path, "enum", Value::from(values.clone()), &mut parts.notes);
            } else {
                if flavor == Flavor::OpenAiStrict && strings && values.len() > 250 {
                    let chars: usize = values
                        .iter()
                        .filter_map(Value::as_str)
                        .map(|s| s.chars().count())
                        .sum();
                    if chars > 15_000 {
                        self.fail(
                            path,
                            format!("a string enum of {} values totals {chars} characters (OpenAI strict allows 15000 for enums of more than 250 values)", values.len()),
                        );
                    }
                }
                parts.enum_out = Some(("enum", Value::from(values.clone())));
            }
        }
        if let Some(c) = &s.const_value {
            self.count_values(std::iter::once(c));
            match (flavor, c.as_str()) {
                (Flavor::GeminiOpenApi, Some(text)) => {
                    if parts.enum_out.is_none() {
                        parts.enum_out = Some(("enum", Value::from(vec![Value::from(text)])));
                    }
                }
                (Flavor::GeminiOpenApi, None) => {
                    self.move_note(path, "const", c.clone(), &mut parts.notes)
                }
                _ => parts.tail.insert(0, ("const", c.clone())),
            }
        }
    }

    /// `title`, `default`, `examples` (Gemini: one `example`) and, for MCP, the header
    /// name; what the flavor refuses moved into the description.
    fn annotations(&mut self, s: &Schema, path: &str, parts: &mut Parts) {
        let flavor = self.flavor;
        if let Some(t) = &s.title {
            parts.annotations.push(("title", Value::from(t.as_ref())));
        }
        if let Some(d) = &s.default {
            if flavor == Flavor::OpenAiStrict {
                self.move_note(path, "default", d.clone(), &mut parts.notes);
            } else {
                parts.annotations.push(("default", d.clone()));
            }
        }
        if let Some(e) = &s.examples {
            match flavor {
                Flavor::Json => parts.annotations.push(("examples", Value::from(e.clone()))),
                Flavor::GeminiOpenApi => {
                    if let Some(first) = e.first() {
                        parts.annotations.push(("example", first.clone()));
                    }
                    if e.len() > 1 {
                        let rest = Value::from(e[1..].to_vec());
                        self.move_note(path, "examples", rest, &mut parts.notes);
                    }
                }
                _ => self.move_note(path, "examples", Value::from(e.clone()), &mut parts.notes),
            }
        }
        if self.mcp_header
            && let Some(h) = &s.header
        {
            parts
                .annotations
                .push((MCP_HEADER_KEY, Value::from(h.as_ref())));
        }
    }

    /// The node's object: `type`, `description`, the annotations, the kept constraints,
    /// `enum`, then `const` and the containers' members.
    fn assemble(&self, s: &Schema, parts: Parts) -> Value {
        let mut out = Object::new();
        if let Some(t) = parts.ty {
            out.insert("type", Value::from(self.type_name(t)));
        }
        let description = describe(
            s.description.as_deref(),
            parts.untyped_note.as_deref(),
            &parts.notes,
        );
        if let Some(d) = description {
            out.insert("description", Value::from(d));
        }
        for (k, v) in parts.annotations {
            out.insert(k, v);
        }
        for (k, v) in parts.kept {
            out.insert(k, v);
        }
        if let Some((k, v)) = parts.enum_out {
            out.insert(k, v);
        }
        // `const` sits with the scalar keywords, before containers' members.
        for (k, v) in parts.tail {
            out.insert(k, v);
        }
        Value::Object(out)
    }

    fn union(
        &mut self,
        s: &Schema,
        branches: &[std::sync::Arc<Schema>],
        path: &mut String,
        objects: usize,
        depth: usize,
    ) -> Value {
        let flavor = self.flavor;
        // Strict modes: a documented unit enum (a `oneOf` of string constants with their
        // descriptions) is exactly its `enum`; the variants' descriptions move into the
        // node's description.
        if self.strict()
            && s.default.is_none()
            && s.examples.is_none()
            && let Some(values) = documented_strings(branches)
        {
            return self.documented_enum(s, &values, path);
        }
        // Gemini's OpenAPI form: `X | null` is exactly `X` with `nullable: true`.
        if flavor == Flavor::GeminiOpenApi
            && let Some(v) = self.gemini_nullable(s, branches, path, objects, depth)
        {
            return v;
        }
        let key = if flavor == Flavor::Json {
            "oneOf"
        } else {
            self.warn(
                path,
                "oneOf rewritten as anyOf: the schema no longer rejects a value that matches several branches",
            );
            "anyOf"
        };
        let mut out_branches = Vec::new();
        let mut nullable = false;
        for (i, b) in branches.iter().enumerate() {
            if flavor == Flavor::GeminiOpenApi && is_plain_null(b) {
                nullable = true;
                continue;
            }
            let len = path.len();
            path.push_str(&format!(".oneOf[{i}]"));
            out_branches.push(self.node(b, path, objects, depth + 1, false));
            path.truncate(len);
        }
        let mut notes = Vec::new();
        let mut annotations: Vec<(&'static str, Value)> = Vec::new();
        if let Some(t) = &s.title {
            annotations.push(("title", Value::from(t.as_ref())));
        }
        if let Some(d) = &s.default {
            if flavor == Flavor::OpenAiStrict {
                self.move_note(path, "default", d.clone(), &mut notes);
            } else {
                annotations.push(("default", d.clone()));
            }
        }
        if let Some(e) = &s.examples {
            match flavor {
                Flavor::Json => annotations.push(("examples", Value::from(e.clone()))),
                _ => self.move_note(path, "examples", Value::from(e.clone()), &mut notes),
            }
        }
        let mut out = Object::new();
        out.insert(key, Value::from(out_branches));
        if let Some(d) = describe(s.description.as_deref(), None, &notes) {
            out.insert("description", Value::from(d));
        }
        for (k, v) in annotations {
            out.insert(k, v);
        }
        if nullable {
            out.insert("nullable", Value::Bool(true));
        }
        Value::Object(out)
    }

    /// Gemini: a `oneOf` of one branch and `null` (or of nulls only) as that branch with
    /// `nullable: true`; `None` for any other union.
    fn gemini_nullable(
        &mut self,
        s: &Schema,
        branches: &[std::sync::Arc<Schema>],
        path: &mut String,
        objects: usize,
        depth: usize,
    ) -> Option<Value> {
        let nulls: Vec<usize> = branches
            .iter()
            .enumerate()
            .filter(|(_, b)| is_plain_null(b))
            .map(|(i, _)| i)
            .collect();
        if nulls.is_empty() || branches.len() - nulls.len() > 1 {
            return None;
        }
        // One non-null branch (or only nulls): that branch, nullable.
        let other = (0..branches.len())
            .find(|i| !nulls.contains(i))
            .unwrap_or(0);
        // Exact only when null matches exactly one branch.
        if nulls.len() > 1 || (nulls.len() < branches.len() && branches[other].admits_null()) {
            self.warn(
                path,
                "oneOf rewritten as a nullable schema: the schema no longer rejects a null that matches several branches",
            );
        }
        let len = path.len();
        path.push_str(&format!(".oneOf[{other}]"));
        let v = self.node(&branches[other], path, objects, depth + 1, false);
        path.truncate(len);
        let mut o = match v {
            Value::Object(o) => o,
            _ => Object::new(),
        };
        if let Some(d) = &s.description {
            o.insert("description", Value::from(d.as_ref()));
        }
        o.insert("nullable", Value::Bool(true));
        Some(Value::Object(o))
    }

    /// A documented unit enum under strict mode: `{"type":"string","enum":[..]}`, the
    /// variants' descriptions listed in the description (`"low": Not urgent.`), with a
    /// warning that says so.
    fn documented_enum(
        &mut self,
        s: &Schema,
        values: &[(&str, Option<&str>)],
        path: &str,
    ) -> Value {
        self.warn(
            path,
            "documented string constants written as an enum: the accepted values are unchanged, each value's description moved into the description",
        );
        let mut text = s.description.as_deref().unwrap_or_default().to_string();
        for (value, description) in values {
            if !text.is_empty() {
                text.push('\n');
            }
            // Writing to a `String` cannot fail.
            let _ = dsh_runtime::json::write_json_string(&mut text, value);
            if let Some(d) = description {
                text.push_str(": ");
                text.push_str(d);
            }
        }
        let enum_values: Vec<Value> = values.iter().map(|(v, _)| Value::from(*v)).collect();
        self.count_values(enum_values.iter());
        let mut out = Object::new();
        out.insert("type", Value::from(self.type_name("string")));
        out.insert("enum", Value::from(enum_values));
        if !text.is_empty() {
            out.insert("description", Value::from(text));
        }
        if let Some(t) = &s.title {
            out.insert("title", Value::from(t.as_ref()));
        }
        Value::Object(out)
    }

    fn type_name(&self, t: &'static str) -> &'static str {
        if self.flavor != Flavor::GeminiOpenApi {
            return t;
        }
        match t {
            "string" => "STRING",
            "number" => "NUMBER",
            "integer" => "INTEGER",
            "boolean" => "BOOLEAN",
            "null" => "NULL",
            "array" => "ARRAY",
            _ => "OBJECT",
        }
    }

    fn count_values<'v>(&mut self, values: impl Iterator<Item = &'v Value>) {
        for v in values {
            self.stats.enum_values += 1;
            self.stats.chars += match v.as_str() {
                Some(s) => s.chars().count(),
                None => v.to_string().len(),
            };
        }
    }

    fn keep_or_move(
        &mut self,
        path: &str,
        key: &'static str,
        value: Value,
        keep: bool,
        parts: &mut Parts,
    ) {
        if keep {
            parts.kept.push((key, value));
        } else {
            self.move_note(path, key, value, &mut parts.notes);
        }
    }

    fn move_note(&mut self, path: &str, key: &str, value: Value, notes: &mut Vec<String>) {
        self.warn(
            path,
            format!("{key} is not supported here: moved into the description, no longer enforced by the provider"),
        );
        notes.push(format!("{key}: {value}"));
    }
}

/// The values and descriptions of a `oneOf` whose every branch is a string constant with
/// at most a description and a title (a documented unit enum), in order; `None` for any
/// other union.
fn documented_strings(branches: &[std::sync::Arc<Schema>]) -> Option<Vec<(&str, Option<&str>)>> {
    let mut out = Vec::with_capacity(branches.len());
    for b in branches {
        let plain = matches!(&b.kind, Kind::String(r) if r.min_length.is_none() && r.max_length.is_none() && r.pattern.is_none());
        let value = match &b.const_value {
            Some(Value::String(v)) if plain => v,
            _ => return None,
        };
        if b.default.is_some() || b.examples.is_some() || b.enum_values.is_some() {
            return None;
        }
        if out.iter().any(|(v, _)| v == &&**value) {
            return None;
        }
        out.push((&**value, b.description.as_deref()));
    }
    (out.len() >= 2).then_some(out)
}

/// A `{"type":"null"}` branch with nothing else on it.
fn is_plain_null(s: &Schema) -> bool {
    matches!(s.kind, Kind::Null)
        && s.description.is_none()
        && s.title.is_none()
        && s.default.is_none()
        && s.examples.is_none()
}

/// The description with moved keywords appended: `"Text. (minLength: 1, default: 5)"`.
pub(crate) fn describe(
    base: Option<&str>,
    untyped: Option<&str>,
    notes: &[String],
) -> Option<String> {
    let base = match (base, untyped) {
        (Some(b), Some(u)) => Some(format!("{b} ({u})")),
        (Some(b), None) => Some(b.to_string()),
        (None, Some(u)) => Some(u.to_string()),
        (None, None) => None,
    };
    if notes.is_empty() {
        return base;
    }
    let joined = notes.join(", ");
    Some(match base {
        Some(b) => format!("{b} ({joined})"),
        None => joined,
    })
}

/// Whether a projected schema is a union (`anyOf` or a `type` array).
pub(crate) fn is_union(v: &Value) -> bool {
    v.get("anyOf").is_some()
        || v.get("oneOf").is_some()
        || matches!(v.get("type"), Some(Value::Array(_)))
}

/// OpenAI strict's optional property: still required, its type unioned with `null`
/// (providers.md: "Optional = still required, type unioned with null"). A typed node gets
/// a `type` array (and `null` in its `enum`); a `const` is wrapped in `anyOf`; an
/// `anyOf` gains a `{"type":"null"}` branch.
pub(crate) fn openai_nullable(v: Value) -> Value {
    let mut o = match v {
        Value::Object(o) => o,
        other => return other,
    };
    let null_schema = || {
        let mut n = Object::new();
        n.insert("type", Value::from("null"));
        Value::Object(n)
    };
    if let Some(Value::Array(branches)) = o.get("anyOf") {
        if !branches
            .iter()
            .any(|b| b.get("type").and_then(Value::as_str) == Some("null"))
        {
            let mut list = branches.to_vec();
            list.push(null_schema());
            o.insert("anyOf", Value::from(list));
        }
        return Value::Object(o);
    }
    if o.get("const").is_some() {
        let mut wrapped = Object::new();
        wrapped.insert("anyOf", Value::from(vec![Value::Object(o), null_schema()]));
        return Value::Object(wrapped);
    }
    match o.get("type").and_then(Value::as_str).map(str::to_string) {
        Some(t) if t == "null" => Value::Object(o),
        Some(t) => {
            o.insert(
                "type",
                Value::from(vec![Value::from(t.as_str()), Value::from("null")]),
            );
            if let Some(Value::Array(values)) = o.get("enum") {
                let mut list = values.to_vec();
                list.push(Value::Null);
                o.insert("enum", Value::from(list));
            }
            Value::Object(o)
        }
        None => {
            let mut wrapped = Object::new();
            wrapped.insert("anyOf", Value::from(vec![Value::Object(o), null_schema()]));
            Value::Object(wrapped)
        }
    }
}
