//! Reading raw JSON Schema into the vocabulary, and the definition-time checks.
//!
//! Both report every violation, each prefixed with the path of the offending node
//! (`schema.properties.query.items`, `schema.oneOf[1]`), never only the first.

use crate::violations::is_ident_key as is_ident;
use std::fmt;
use std::sync::Arc;

use super::{
    Additional, ArrayRules, Kind, MAX_SCHEMA_DEPTH, MCP_HEADER_KEY, Pattern, Property, Schema,
    is_header_name, json_quote,
};
use crate::json::Value;

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
    let ty = match obj.get("type") {
        None => None,
        Some(Value::String(t)) if TYPES.contains(&&**t) => Some(&**t),
        Some(Value::Array(_)) => {
            errors.push(format!(
                "{path}: `type` must be a single string (type arrays are not supported; use `oneOf`)"
            ));
            return Schema::json();
        }
        Some(other) => {
            errors.push(format!(
                "{path}: `type` must be one of {}, found {other}",
                TYPES.map(json_quote).join(", ")
            ));
            return Schema::json();
        }
    };
    let one_of = obj.get("oneOf");
    if ty.is_some() && one_of.is_some() {
        errors.push(format!("{path}: `type` and `oneOf` cannot be combined"));
        return Schema::json();
    }

    let mut schema = match (ty, one_of) {
        (_, Some(branches)) => match branches.as_array() {
            Some(items) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, b) in items.iter().enumerate() {
                    let len = path.len();
                    path.push_str(&format!(".oneOf[{i}]"));
                    out.push(Arc::new(read_node(b, path, depth + 1, false, errors)));
                    path.truncate(len);
                }
                Schema::one_of(out)
            }
            None => {
                errors.push(format!("{path}: `oneOf` must be an array of schemas"));
                Schema::json()
            }
        },
        (Some("string"), _) => Schema::string(),
        (Some("number"), _) => Schema::number(),
        (Some("integer"), _) => Schema::integer(),
        (Some("boolean"), _) => Schema::boolean(),
        (Some("null"), _) => Schema::null(),
        (Some("array"), _) => Schema::array(None),
        (Some(_), _) => Schema::object(Vec::new(), Additional::Open),
        (None, None) => Schema::json(),
    };

    let mut required: Option<&Value> = None;
    let mut saw_additional = false;
    for (key, v) in obj.iter() {
        let kind = schema.kind_name();
        let wrong = |errors: &mut Vec<String>, path: &str| {
            errors.push(format!(
                "{path}: keyword `{key}` does not apply to a {} node",
                match kind {
                    "json" => "type-less",
                    k => k,
                }
            ));
        };
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
            "minLength" | "maxLength" | "pattern" => {
                let Kind::String(r) = &mut schema.kind else {
                    wrong(errors, path);
                    continue;
                };
                if key == "pattern" {
                    match v.as_str().map(|s| Pattern::new(s.to_string())) {
                        Some(Ok(p)) => r.pattern = Some(p),
                        Some(Err(e)) => errors.push(format!("{path}: {e}")),
                        None => {
                            errors.push(format!("{path}: `pattern` must be a string, found {v}"))
                        }
                    }
                } else if let Some(n) = read_u64(v, path, key, errors) {
                    if key == "minLength" {
                        r.min_length = Some(n);
                    } else {
                        r.max_length = Some(n);
                    }
                }
            }
            "minimum" | "maximum" => match &mut schema.kind {
                Kind::Integer(r) => match v.as_number() {
                    Some(n) => {
                        let b = if let Some(u) = n.as_u64() {
                            Some(u as i128)
                        } else if let Some(i) = n.as_i64() {
                            Some(i as i128)
                        } else {
                            n.as_f64()
                                .map(|f| {
                                    if key == "minimum" {
                                        f.ceil()
                                    } else {
                                        f.floor()
                                    }
                                })
                                .filter(|f| *f >= i64::MIN as f64 && *f <= u64::MAX as f64)
                                .map(|f| f as i128)
                        };
                        match b {
                            Some(b) if key == "minimum" => r.minimum = Some(b),
                            Some(b) => r.maximum = Some(b),
                            None => errors.push(format!(
                                "{path}: `{key}` {v} is outside the integer range a snapshot can hold"
                            )),
                        }
                    }
                    None => errors.push(format!("{path}: `{key}` must be a number, found {v}")),
                },
                Kind::Number(r) => match v.as_number().and_then(|n| n.as_f64()) {
                    Some(f) if key == "minimum" => r.minimum = Some(f),
                    Some(f) => r.maximum = Some(f),
                    None => errors.push(format!("{path}: `{key}` must be a number, found {v}")),
                },
                _ => wrong(errors, path),
            },
            "items" | "minItems" | "maxItems" => {
                let Kind::Array(r) = &mut schema.kind else {
                    wrong(errors, path);
                    continue;
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
            "properties" | "required" | "additionalProperties" => {
                let Kind::Object(r) = &mut schema.kind else {
                    wrong(errors, path);
                    continue;
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
                        None => errors
                            .push(format!("{path}: `properties` must be an object, found {v}")),
                    },
                    "required" => required = Some(v),
                    _ => {
                        saw_additional = true;
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
            other => errors.push(format!(
                "{path}: unsupported keyword {} (outside the schema vocabulary)",
                json_quote(other)
            )),
        }
    }

    if let Kind::Object(r) = &mut schema.kind {
        if !saw_additional && !implicit_open {
            errors.push(format!(
                "{path}: an object schema must state `additionalProperties` (true, false or a schema)"
            ));
        }
        if let Some(req) = required {
            match req.as_array() {
                Some(names) => {
                    for n in names.iter() {
                        match n.as_str() {
                            Some(name) => match r.properties.iter_mut().find(|p| p.name == name) {
                                Some(p) if p.required => errors.push(format!(
                                    "{path}: `required` lists {} twice",
                                    json_quote(name)
                                )),
                                Some(p) => p.required = true,
                                None => errors.push(format!(
                                    "{path}: `required` names {}, which is not a declared property",
                                    json_quote(name)
                                )),
                            },
                            None => errors.push(format!(
                                "{path}: `required` entries must be strings, found {n}"
                            )),
                        }
                    }
                }
                None => errors.push(format!(
                    "{path}: `required` must be an array of property names"
                )),
            }
        }
    }
    schema
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
    let scalar = matches!(
        schema.kind,
        Kind::String(_) | Kind::Number(_) | Kind::Integer(_) | Kind::Boolean | Kind::Null
    );
    if !scalar && (schema.enum_values.is_some() || schema.const_value.is_some()) {
        errors.push(format!(
            "{path}: `enum` and `const` apply only to string, number, integer, boolean and null nodes"
        ));
    }
    if scalar {
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
        Kind::Number(r) => {
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
        Kind::Integer(r) => {
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
        Kind::Array(ArrayRules {
            items,
            min_items,
            max_items,
        }) => {
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
        Kind::Object(r) => {
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
        Kind::OneOf(branches) => {
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
        Kind::Boolean | Kind::Null | Kind::Json => {}
    }
}
