//! Reading raw JSON Schema into the vocabulary, and the definition-time checks.
//!
//! Both report every violation, each prefixed with the path of the offending node
//! (`schema.properties.query.items`, `schema.oneOf[1]`), never only the first.

use crate::violations::is_ident_key as is_ident;
use std::fmt;
use std::sync::Arc;

use super::{
    Additional, ArrayRules, IntegerRules, Kind, MAX_SCHEMA_DEPTH, MCP_HEADER_KEY, NumberRules,
    ObjectRules, Pattern, Property, Schema, is_header_name, json_quote,
};
use crate::json::{Object, Value};

/// A schema outside the vocabulary (code `UNSUPPORTED_SCHEMA`).
///
/// Displays as `unsupported JSON schema: ` followed by every violation, joined by `; `.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError {
    violations: Vec<String>,
}

impl SchemaError {
    /// The error code carried by failures built from this error.
    pub const CODE: &'static str = "UNSUPPORTED_SCHEMA";

    pub(crate) fn new(violations: Vec<String>) -> Self {
        SchemaError { violations }
    }

    /// Every violation, each starting with the path of its node.
    pub fn violations(&self) -> &[String] {
        &self.violations
    }
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("unsupported JSON schema: ")?;
        for (i, v) in self.violations.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            f.write_str(v)?;
        }
        Ok(())
    }
}

impl std::error::Error for SchemaError {}

#[derive(Clone, Copy, PartialEq)]
pub(super) enum Root {
    Value,
    Parameters,
}

const TYPES: [&str; 7] = [
    "string", "number", "integer", "boolean", "null", "array", "object",
];

/// Append a property segment to a schema path.
fn push_prop(path: &mut String, name: &str) {
    if is_ident(name) {
        path.push('.');
        path.push_str(name);
    } else {
        path.push('[');
        path.push_str(&json_quote(name));
        path.push(']');
    }
}

pub(super) fn import(value: &Value, root: Root) -> Result<Schema, SchemaError> {
    let mut errors = Vec::new();
    let mut path = String::from("schema");
    let schema = read_node(value, &mut path, 0, root == Root::Parameters, &mut errors);
    if root == Root::Parameters && errors.is_empty() && !matches!(schema.kind, Kind::Object(_)) {
        errors.push(format!(
            "schema: a tool's parameters must be an object schema, found {}",
            schema.kind_name()
        ));
    }
    if errors.is_empty() {
        check_node(&schema, &mut String::from("schema"), 0, &mut errors);
    }
    if errors.is_empty() {
        Ok(schema)
    } else {
        Err(SchemaError::new(errors))
    }
}

fn read_u64(v: &Value, path: &str, key: &str, errors: &mut Vec<String>) -> Option<u64> {
    match v.as_number().and_then(|n| n.as_u64()) {
        Some(n) => Some(n),
        None => {
            errors.push(format!(
                "{path}: `{key}` must be a non-negative integer, found {v}"
            ));
            None
        }
    }
}

fn read_node(
    value: &Value,
    path: &mut String,
    depth: usize,
    implicit_open: bool,
    errors: &mut Vec<String>,
) -> Schema {
    let Some(obj) = value.as_object() else {
        errors.push(format!(
            "{path}: a schema must be a JSON object, found {value}"
        ));
        return Schema::json();
    };
    if depth >= MAX_SCHEMA_DEPTH {
        errors.push(format!(
            "{path}: schema nesting deeper than {MAX_SCHEMA_DEPTH} levels"
        ));
        return Schema::json();
    }
    let Some(mut schema) = base_node(obj, path, depth, errors) else {
        return Schema::json();
    };
    let mut seen = Seen::default();
    for (key, v) in obj.iter() {
        read_keyword(&mut schema, key, v, path, depth, errors, &mut seen);
    }
    if let Kind::Object(r) = &mut schema.kind {
        if !seen.additional && !implicit_open {
            errors.push(format!(
                "{path}: an object schema must state `additionalProperties` (true, false or a schema)"
            ));
        }
        if let Some(req) = seen.required {
            mark_required(r, req, path, errors);
        }
    }
    schema
}

/// What the keywords of an object node said that is applied after all of them.
#[derive(Default)]
struct Seen<'v> {
    /// The `required` list, applied once every property is read.
    required: Option<&'v Value>,
    /// Whether `additionalProperties` was stated.
    additional: bool,
}

/// The node its `type` or `oneOf` makes, before its other keywords; `None` (the problem
/// recorded) when `type` is malformed or combined with `oneOf`.
fn base_node(
    obj: &Object,
    path: &mut String,
    depth: usize,
    errors: &mut Vec<String>,
) -> Option<Schema> {
    let ty = match obj.get("type") {
        None => None,
        Some(Value::String(t)) if TYPES.contains(&&**t) => Some(&**t),
        Some(Value::Array(_)) => {
            errors.push(format!(
                "{path}: `type` must be a single string (type arrays are not supported; use `oneOf`)"
            ));
            return None;
        }
        Some(other) => {
            errors.push(format!(
                "{path}: `type` must be one of {}, found {other}",
                TYPES.map(json_quote).join(", ")
            ));
            return None;
        }
    };
    let one_of = obj.get("oneOf");
    if ty.is_some() && one_of.is_some() {
        errors.push(format!("{path}: `type` and `oneOf` cannot be combined"));
        return None;
    }
    Some(match (ty, one_of) {
        (_, Some(branches)) => read_one_of(branches, path, depth, errors),
        (Some("string"), _) => Schema::string(),
        (Some("number"), _) => Schema::number(),
        (Some("integer"), _) => Schema::integer(),
        (Some("boolean"), _) => Schema::boolean(),
        (Some("null"), _) => Schema::null(),
        (Some("array"), _) => Schema::array(None),
        (Some(_), _) => Schema::object(Vec::new(), Additional::Open),
        (None, None) => Schema::json(),
    })
}

/// A `oneOf` node from its branches.
fn read_one_of(
    branches: &Value,
    path: &mut String,
    depth: usize,
    errors: &mut Vec<String>,
) -> Schema {
    let Some(items) = branches.as_array() else {
        errors.push(format!("{path}: `oneOf` must be an array of schemas"));
        return Schema::json();
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, b) in items.iter().enumerate() {
        let len = path.len();
        path.push_str(&format!(".oneOf[{i}]"));
        out.push(Arc::new(read_node(b, path, depth + 1, false, errors)));
        path.truncate(len);
    }
    Schema::one_of(out)
}

/// A keyword that does not apply to the node's kind.
fn wrong_keyword(schema: &Schema, key: &str, path: &str, errors: &mut Vec<String>) {
    errors.push(format!(
        "{path}: keyword `{key}` does not apply to a {} node",
        match schema.kind_name() {
            "json" => "type-less",
            k => k,
        }
    ));
}

/// One keyword of a node, applied to `schema` (or its problem recorded).
fn read_keyword<'v>(
    schema: &mut Schema,
    key: &str,
    v: &'v Value,
    path: &mut String,
    depth: usize,
    errors: &mut Vec<String>,
    seen: &mut Seen<'v>,
) {
    match key {
        "type" | "oneOf" => {}
        "description" | "title" => match v {
            Value::String(s) => {
                let text: super::Text = s.to_string().into();
                if key == "description" {
                    schema.description = Some(text);
                } else {
                    schema.title = Some(text);
                }
            }
            _ => errors.push(format!("{path}: `{key}` must be a string, found {v}")),
        },
        "default" => schema.default = Some(v.clone()),
        MCP_HEADER_KEY => match v {
            Value::String(h) => schema.header = Some(h.to_string().into()),
            _ => errors.push(format!("{path}: `{key}` must be a string, found {v}")),
        },
        "examples" => match v.as_array() {
            Some(a) => schema.examples = Some(a.to_vec()),
            None => errors.push(format!("{path}: `examples` must be an array, found {v}")),
        },
        "enum" => match v.as_array() {
            Some(a) => schema.enum_values = Some(a.to_vec().into()),
            None => errors.push(format!("{path}: `enum` must be an array, found {v}")),
        },
        "const" => schema.const_value = Some(v.clone()),
        "minLength" | "maxLength" | "pattern" => string_keyword(schema, key, v, path, errors),
        "minimum" | "maximum" => bound_keyword(schema, key, v, path, errors),
        "items" | "minItems" | "maxItems" => array_keyword(schema, key, v, path, depth, errors),
        "properties" | "required" | "additionalProperties" => {
            object_keyword(schema, key, v, path, depth, errors, seen)
        }
        other => errors.push(format!(
            "{path}: unsupported keyword {} (outside the schema vocabulary)",
            json_quote(other)
        )),
    }
}

/// `minLength`, `maxLength` and `pattern`.
fn string_keyword(schema: &mut Schema, key: &str, v: &Value, path: &str, errors: &mut Vec<String>) {
    let Kind::String(r) = &mut schema.kind else {
        return wrong_keyword(schema, key, path, errors);
    };
    if key == "pattern" {
        match v.as_str().map(|s| Pattern::new(s.to_string())) {
            Some(Ok(p)) => r.pattern = Some(p),
            Some(Err(e)) => errors.push(format!("{path}: {e}")),
            None => errors.push(format!("{path}: `pattern` must be a string, found {v}")),
        }
    } else if let Some(n) = read_u64(v, path, key, errors) {
        if key == "minLength" {
            r.min_length = Some(n);
        } else {
            r.max_length = Some(n);
        }
    }
}

/// `minimum` and `maximum`, of an integer or a number node.
fn bound_keyword(schema: &mut Schema, key: &str, v: &Value, path: &str, errors: &mut Vec<String>) {
    match &mut schema.kind {
        Kind::Integer(r) => match v.as_number() {
            Some(n) => match integer_bound(n, key == "minimum") {
                Some(b) if key == "minimum" => r.minimum = Some(b),
                Some(b) => r.maximum = Some(b),
                None => errors.push(format!(
                    "{path}: `{key}` {v} is outside the integer range a snapshot can hold"
                )),
            },
            None => errors.push(format!("{path}: `{key}` must be a number, found {v}")),
        },
        Kind::Number(r) => match v.as_number().and_then(|n| n.as_f64()) {
            Some(f) if key == "minimum" => r.minimum = Some(f),
            Some(f) => r.maximum = Some(f),
            None => errors.push(format!("{path}: `{key}` must be a number, found {v}")),
        },
        _ => wrong_keyword(schema, key, path, errors),
    }
}

/// An integer node's bound: a fraction rounded inwards (up for a `minimum`), `None`
/// outside the range a snapshot can hold.
fn integer_bound(n: &crate::json::Number, minimum: bool) -> Option<i128> {
    if let Some(u) = n.as_u64() {
        Some(u as i128)
    } else if let Some(i) = n.as_i64() {
        Some(i as i128)
    } else {
        n.as_f64()
            .map(|f| if minimum { f.ceil() } else { f.floor() })
            .filter(|f| *f >= i64::MIN as f64 && *f <= u64::MAX as f64)
            .map(|f| f as i128)
    }
}

/// `items`, `minItems` and `maxItems`.
fn array_keyword(
    schema: &mut Schema,
    key: &str,
    v: &Value,
    path: &mut String,
    depth: usize,
    errors: &mut Vec<String>,
) {
    let Kind::Array(r) = &mut schema.kind else {
        return wrong_keyword(schema, key, path, errors);
    };
    if key == "items" {
        let len = path.len();
        path.push_str(".items");
        r.items = Some(Arc::new(read_node(v, path, depth + 1, false, errors)));
        path.truncate(len);
    } else if let Some(n) = read_u64(v, path, key, errors) {
        if key == "minItems" {
            r.min_items = Some(n);
        } else {
            r.max_items = Some(n);
        }
    }
}

/// `properties`, `required` (kept for the end) and `additionalProperties`.
fn object_keyword<'v>(
    schema: &mut Schema,
    key: &str,
    v: &'v Value,
    path: &mut String,
    depth: usize,
    errors: &mut Vec<String>,
    seen: &mut Seen<'v>,
) {
    let Kind::Object(r) = &mut schema.kind else {
        return wrong_keyword(schema, key, path, errors);
    };
    match key {
        "properties" => match v.as_object() {
            Some(props) => {
                for (name, p) in props.iter() {
                    let len = path.len();
                    path.push_str(".properties");
                    push_prop(path, name);
                    let s = read_node(p, path, depth + 1, false, errors);
                    path.truncate(len);
                    r.properties.push(Property::new(name.to_string(), s, false));
                }
            }
            None => errors.push(format!("{path}: `properties` must be an object, found {v}")),
        },
        "required" => seen.required = Some(v),
        _ => {
            seen.additional = true;
            match v {
                Value::Bool(true) => r.additional = Additional::Open,
                Value::Bool(false) => r.additional = Additional::Closed,
                Value::Object(_) => {
                    let len = path.len();
                    path.push_str(".additionalProperties");
                    let s = read_node(v, path, depth + 1, false, errors);
                    path.truncate(len);
                    r.additional = Additional::Schema(Arc::new(s));
                }
                _ => errors.push(format!(
                    "{path}: `additionalProperties` must be a boolean or a schema, found {v}"
                )),
            }
        }
    }
}

/// An object node's `required` list, applied to its declared properties.
fn mark_required(r: &mut ObjectRules, req: &Value, path: &str, errors: &mut Vec<String>) {
    let Some(names) = req.as_array() else {
        errors.push(format!(
            "{path}: `required` must be an array of property names"
        ));
        return;
    };
    for n in names.iter() {
        let Some(name) = n.as_str() else {
            errors.push(format!(
                "{path}: `required` entries must be strings, found {n}"
            ));
            continue;
        };
        match r.properties.iter_mut().find(|p| p.name == name) {
            Some(p) if p.required => errors.push(format!(
                "{path}: `required` lists {} twice",
                json_quote(name)
            )),
            Some(p) => p.required = true,
            None => errors.push(format!(
                "{path}: `required` names {}, which is not a declared property",
                json_quote(name)
            )),
        }
    }
}

/// The `x-mcp-header` rules that span a whole schema: an annotation only on a property
/// reached from the root through `properties` alone (where a client finds it), and each
/// name once, compared case-insensitively (header names are).
fn check_headers(root: &Schema, path: &mut String, errors: &mut Vec<String>) {
    fn walk<'a>(
        schema: &'a Schema,
        on_chain: bool,
        depth: usize,
        path: &mut String,
        seen: &mut Vec<(&'a str, String)>,
        errors: &mut Vec<String>,
    ) {
        if depth >= MAX_SCHEMA_DEPTH {
            return;
        }
        if let Some(h) = &schema.header {
            if !on_chain || depth == 0 {
                errors.push(format!(
                    "{path}: `{MCP_HEADER_KEY}` applies only to a property reached from the parameter root through `properties` (not to the root, array items, `oneOf` branches or `additionalProperties`)"
                ));
            } else if let Some((_, first)) = seen
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case(h.as_ref()))
            {
                errors.push(format!(
                    "{path}: `{MCP_HEADER_KEY}` {} is already the header of {first} (header names are compared case-insensitively)",
                    json_quote(h)
                ));
            } else {
                seen.push((h.as_ref(), path.clone()));
            }
        }
        // Each child with whether it is still on the `properties` chain, and its path.
        let mut children: Vec<(&'a Schema, bool, String)> = Vec::new();
        match &schema.kind {
            Kind::Object(r) => {
                for p in &r.properties {
                    let mut suffix = String::from(".properties");
                    push_prop(&mut suffix, &p.name);
                    children.push((&p.schema, on_chain, suffix));
                }
                if let Additional::Schema(s) = &r.additional {
                    children.push((s, false, ".additionalProperties".to_string()));
                }
            }
            Kind::Array(r) => {
                if let Some(items) = &r.items {
                    children.push((items, false, ".items".to_string()));
                }
            }
            Kind::OneOf(branches) => {
                for (i, b) in branches.iter().enumerate() {
                    children.push((b, false, format!(".oneOf[{i}]")));
                }
            }
            _ => {}
        }
        for (child, chain, suffix) in children {
            let len = path.len();
            path.push_str(&suffix);
            walk(child, chain, depth + 1, path, seen, errors);
            path.truncate(len);
        }
    }
    walk(root, true, 0, path, &mut Vec::new(), errors);
}

/// Definition-time checks on a node and its children.
pub(super) fn check_node(
    schema: &Schema,
    path: &mut String,
    depth: usize,
    errors: &mut Vec<String>,
) {
    if depth >= MAX_SCHEMA_DEPTH {
        errors.push(format!(
            "{path}: schema nesting deeper than {MAX_SCHEMA_DEPTH} levels"
        ));
        return;
    }
    if depth == 0 {
        check_headers(schema, path, errors);
    }
    if let Some(h) = &schema.header {
        check_header(schema, h, path, errors);
    }
    check_values(schema, path, errors);
    match &schema.kind {
        Kind::String(r) => {
            if let (Some(a), Some(b)) = (r.min_length, r.max_length)
                && a > b
            {
                errors.push(format!(
                    "{path}: `minLength` {a} is greater than `maxLength` {b}"
                ));
            }
        }
        Kind::Number(r) => check_number(r, path, errors),
        Kind::Integer(r) => check_integer(r, path, errors),
        Kind::Array(r) => check_array(r, path, depth, errors),
        Kind::Object(r) => check_object(r, path, depth, errors),
        Kind::OneOf(branches) => check_one_of(branches, path, depth, errors),
        Kind::Boolean | Kind::Null | Kind::Json => {}
    }
}

/// A node's `x-mcp-header` annotation: a field-name token, on a scalar it can carry.
fn check_header(schema: &Schema, h: &str, path: &str, errors: &mut Vec<String>) {
    if !is_header_name(h) {
        errors.push(format!(
            "{path}: `{MCP_HEADER_KEY}` {} is not an HTTP field-name token (ASCII letters, digits and !#$%&'*+-.^_`|~, at least one)",
            json_quote(h)
        ));
    }
    if !matches!(
        schema.kind,
        Kind::String(_) | Kind::Integer(_) | Kind::Boolean
    ) {
        errors.push(format!(
            "{path}: `{MCP_HEADER_KEY}` applies only to string, integer and boolean nodes, not to a {} node",
            schema.kind_name()
        ));
    }
}

/// A node's `enum` and `const`: on scalars only, each value of the node's kind, `const`
/// among the `enum` values.
fn check_values(schema: &Schema, path: &str, errors: &mut Vec<String>) {
    let scalar = matches!(
        schema.kind,
        Kind::String(_) | Kind::Number(_) | Kind::Integer(_) | Kind::Boolean | Kind::Null
    );
    if !scalar {
        if schema.enum_values.is_some() || schema.const_value.is_some() {
            errors.push(format!(
                "{path}: `enum` and `const` apply only to string, number, integer, boolean and null nodes"
            ));
        }
        return;
    }
    let kind = match schema.kind_name() {
        k @ "integer" => format!("an {k}"),
        k => format!("a {k}"),
    };
    let fits = |v: &Value| match (&schema.kind, v) {
        (Kind::String(_), Value::String(_)) => true,
        (Kind::Boolean, Value::Bool(_)) => true,
        (Kind::Null, Value::Null) => true,
        (Kind::Number(_), Value::Number(_)) => true,
        (Kind::Integer(_), Value::Number(n)) => n.is_integer(),
        _ => false,
    };
    if let Some(values) = &schema.enum_values {
        if values.is_empty() {
            errors.push(format!("{path}: `enum` must list at least one value"));
        }
        for v in values {
            if !fits(v) {
                errors.push(format!("{path}: `enum` entry {v} is not {kind}"));
            }
        }
    }
    if let Some(c) = &schema.const_value {
        if !fits(c) {
            errors.push(format!("{path}: `const` {c} is not {kind}"));
        } else if let Some(values) = &schema.enum_values
            && !values.contains(c)
        {
            errors.push(format!(
                "{path}: `const` {c} is not one of the `enum` values"
            ));
        }
    }
}

/// A number node's bounds: finite, in order.
fn check_number(r: &NumberRules, path: &str, errors: &mut Vec<String>) {
    for b in [r.minimum, r.maximum].into_iter().flatten() {
        if !b.is_finite() {
            errors.push(format!("{path}: numeric bounds must be finite"));
        }
    }
    if let (Some(a), Some(b)) = (r.minimum, r.maximum)
        && a > b
    {
        errors.push(format!(
            "{path}: `minimum` {a} is greater than `maximum` {b}"
        ));
    }
}

/// An integer node's bounds: in the range a snapshot holds, in order.
fn check_integer(r: &IntegerRules, path: &str, errors: &mut Vec<String>) {
    for b in [r.minimum, r.maximum].into_iter().flatten() {
        if b < i64::MIN as i128 || b > u64::MAX as i128 {
            errors.push(format!(
                "{path}: integer bound {b} is outside the range a snapshot can hold ({}..={})",
                i64::MIN,
                u64::MAX
            ));
        }
    }
    if let (Some(a), Some(b)) = (r.minimum, r.maximum)
        && a > b
    {
        errors.push(format!(
            "{path}: `minimum` {a} is greater than `maximum` {b}"
        ));
    }
}

/// An array node: its bounds in order, then its items.
fn check_array(r: &ArrayRules, path: &mut String, depth: usize, errors: &mut Vec<String>) {
    let ArrayRules {
        items,
        min_items,
        max_items,
    } = r;
    if let (Some(a), Some(b)) = (min_items, max_items)
        && a > b
    {
        errors.push(format!(
            "{path}: `minItems` {a} is greater than `maxItems` {b}"
        ));
    }
    if let Some(items) = items {
        let len = path.len();
        path.push_str(".items");
        check_node(items, path, depth + 1, errors);
        path.truncate(len);
    }
}

/// An object node: `Ignored` at the root only, each property once, then the properties
/// and the additional properties' schema.
fn check_object(r: &ObjectRules, path: &mut String, depth: usize, errors: &mut Vec<String>) {
    if r.additional == Additional::Ignored && depth > 0 {
        errors.push(format!(
            "{path}: only a tool's parameter root may ignore undeclared keys (`Additional::Ignored`); use `Additional::Open`"
        ));
    }
    for (i, p) in r.properties.iter().enumerate() {
        if r.properties[..i].iter().any(|q| q.name == p.name) {
            errors.push(format!(
                "{path}: property {} is declared twice",
                json_quote(&p.name)
            ));
            continue;
        }
        let len = path.len();
        path.push_str(".properties");
        push_prop(path, &p.name);
        check_node(&p.schema, path, depth + 1, errors);
        path.truncate(len);
    }
    if let Additional::Schema(s) = &r.additional {
        let len = path.len();
        path.push_str(".additionalProperties");
        check_node(s, path, depth + 1, errors);
        path.truncate(len);
    }
}

/// A `oneOf` node: at least two branches, each checked.
fn check_one_of(
    branches: &[Arc<Schema>],
    path: &mut String,
    depth: usize,
    errors: &mut Vec<String>,
) {
    if branches.len() < 2 {
        errors.push(format!(
            "{path}: `oneOf` needs at least two branches, found {}",
            branches.len()
        ));
    }
    for (i, b) in branches.iter().enumerate() {
        let len = path.len();
        path.push_str(&format!(".oneOf[{i}]"));
        check_node(b, path, depth + 1, errors);
        path.truncate(len);
    }
}
