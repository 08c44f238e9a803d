//! Typed forms: a Rust type as an MCP elicitation form, and the answer read back into it.
//!
//! MCP's forms are a subset of JSON Schema: a flat object whose properties are strings
//! (with `minLength`, `maxLength`, `format`), numbers and integers (with `minimum`,
//! `maximum`), booleans, single-select enums of strings (untitled `enum`, titled
//! `oneOf` of `const`s) and multi-select arrays of them, each with an optional `title`,
//! `description` and `default`. [`form_schema`] writes a [`ToolSchema`]'s schema in that
//! subset, or says which property is outside it.

use std::fmt;
use std::sync::Arc;

use serde::de::DeserializeOwned;

use super::CallerError;
use crate::json::{Number, Object, Value};
use crate::schema::{Kind, Schema};
use crate::{ToolSchema, validate};

/// A type a body can ask its caller to fill in as a form
/// ([`ToolContext::elicit`](crate::ToolContext::elicit)).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be asked as an elicitation form",
    label = "not a form",
    note = "a form is a struct deriving `ToolSchema` and `Deserialize` whose fields are strings, numbers, integers, booleans, enums of unit variants, or `Vec`s of such enums (each possibly in an `Option`)"
)]
pub trait ElicitForm: ToolSchema + DeserializeOwned + 'static {}

impl<T: ToolSchema + DeserializeOwned + 'static> ElicitForm for T {}

/// Why a schema is not an MCP form: the property (a JSON pointer, `/` for the root) and
/// what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormSchemaError {
    /// Where: `/` or `/property`.
    pub path: String,
    /// What is outside the form subset there.
    pub reason: String,
}

impl fmt::Display for FormSchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not an MCP form at `{}`: {}", self.path, self.reason)
    }
}

impl std::error::Error for FormSchemaError {}

/// `schema` written as an MCP form (`requestedSchema`).
///
/// # Errors
///
/// The first property outside MCP's form subset: a root that is not an object, a
/// nested object or array of objects, a `oneOf` that is not a choice among strings, a
/// string `pattern` (forms cannot carry one).
pub fn form_schema(schema: &Schema) -> Result<Value, FormSchemaError> {
    let Kind::Object(rules) = &schema.kind else {
        return Err(FormSchemaError {
            path: "/".into(),
            reason: "a form is an object of named fields".into(),
        });
    };
    let mut properties = Object::new();
    let mut required = Vec::new();
    for property in &rules.properties {
        let path = format!("/{}", property.name);
        let written = field(&property.schema, &path)?;
        properties.insert(String::from(&*property.name), written);
        if property.required {
            required.push(Value::from(String::from(&*property.name)));
        }
    }
    let mut form = Object::new();
    form.insert("type", "object");
    annotate(&mut form, schema);
    form.insert("properties", properties);
    if !required.is_empty() {
        form.insert("required", Value::from(required));
    }
    Ok(form.into())
}

fn fail(path: &str, reason: impl Into<String>) -> FormSchemaError {
    FormSchemaError {
        path: path.to_string(),
        reason: reason.into(),
    }
}

/// `title`, `description`, `default` of a node.
fn annotate(out: &mut Object, schema: &Schema) {
    if let Some(title) = &schema.title {
        out.insert("title", String::from(&**title));
    }
    if let Some(description) = &schema.description {
        out.insert("description", String::from(&**description));
    }
    if let Some(default) = &schema.default {
        out.insert("default", default.clone());
    }
}

/// One field of a form.
fn field(schema: &Schema, path: &str) -> Result<Value, FormSchemaError> {
    let mut out = Object::new();
    match &schema.kind {
        Kind::String(rules) => {
            if rules.pattern.is_some() {
                return Err(fail(path, "a form field cannot carry a `pattern`"));
            }
            out.insert("type", "string");
            if let Some(n) = rules.min_length {
                out.insert("minLength", n);
            }
            if let Some(n) = rules.max_length {
                out.insert("maxLength", n);
            }
            if let Some(values) = &schema.enum_values {
                out.insert("enum", Value::from(values.as_slice().to_vec()));
            }
        }
        Kind::Integer(rules) => {
            out.insert("type", "integer");
            let bound = |b: Option<i128>, hidden: bool| b.filter(|_| !hidden).and_then(integer);
            if let Some(n) = bound(rules.minimum, rules.hidden.minimum) {
                out.insert("minimum", n);
            }
            if let Some(n) = bound(rules.maximum, rules.hidden.maximum) {
                out.insert("maximum", n);
            }
        }
        Kind::Number(rules) => {
            out.insert("type", "number");
            let bound =
                |b: Option<f64>, hidden: bool| b.filter(|_| !hidden).and_then(Number::from_f64);
            if let Some(n) = bound(rules.minimum, rules.hidden.minimum) {
                out.insert("minimum", n);
            }
            if let Some(n) = bound(rules.maximum, rules.hidden.maximum) {
                out.insert("maximum", n);
            }
        }
        Kind::Boolean => {
            out.insert("type", "boolean");
        }
        Kind::OneOf(branches) => {
            out.insert("type", "string");
            out.insert("oneOf", choices(branches, path)?);
        }
        Kind::Array(rules) => {
            out.insert("type", "array");
            let items = rules
                .items
                .as_deref()
                .ok_or_else(|| fail(path, "a multi-select field lists its choices"))?;
            out.insert("items", multi_items(items, path)?);
            if let Some(n) = rules.min_items {
                out.insert("minItems", n);
            }
            if let Some(n) = rules.max_items {
                out.insert("maxItems", n);
            }
        }
        Kind::Object(_) => return Err(fail(path, "a form is flat: a field cannot be an object")),
        Kind::Null | Kind::Json => {
            return Err(fail(
                path,
                "a form field is a string, number, integer, boolean or enum",
            ));
        }
    }
    annotate(&mut out, schema);
    Ok(out.into())
}

fn integer(n: i128) -> Option<Value> {
    i64::try_from(n)
        .map(Value::from)
        .ok()
        .or_else(|| u64::try_from(n).map(Value::from).ok())
}

/// The items of a multi-select: an untitled `enum` of strings, or titled `anyOf`
/// choices.
fn multi_items(items: &Schema, path: &str) -> Result<Value, FormSchemaError> {
    let mut out = Object::new();
    match (&items.kind, &items.enum_values) {
        (Kind::String(_), Some(values)) => {
            out.insert("type", "string");
            out.insert("enum", Value::from(values.as_slice().to_vec()));
        }
        (Kind::OneOf(branches), _) => {
            out.insert("anyOf", choices(branches, path)?);
        }
        _ => {
            return Err(fail(
                path,
                "a multi-select field's items are an enum of strings",
            ));
        }
    }
    Ok(out.into())
}

/// Titled choices: `[{const, title}]`, from branches that are each one string.
fn choices(branches: &[Arc<Schema>], path: &str) -> Result<Value, FormSchemaError> {
    let mut out = Vec::with_capacity(branches.len());
    for branch in branches {
        let value = match (&branch.kind, &branch.const_value, &branch.enum_values) {
            (Kind::String(_), Some(value), _) => value.clone(),
            (Kind::String(_), None, Some(values)) if values.as_slice().len() == 1 => {
                values.as_slice()[0].clone()
            }
            _ => {
                return Err(fail(
                    path,
                    "a choice of a form is one string value (a unit enum variant)",
                ));
            }
        };
        let mut choice = Object::new();
        let title = branch
            .title
            .as_deref()
            .or(branch.description.as_deref())
            .map(str::to_string);
        let title = match (title, &value) {
            (Some(title), _) => title,
            (None, Value::String(s)) => String::from(&**s),
            (None, other) => other.to_string(),
        };
        choice.insert("const", value);
        choice.insert("title", title);
        out.push(Value::from(choice));
    }
    Ok(Value::from(out))
}

/// Read a form's accepted content into `T`: validated against `T`'s schema first, so a
/// wrong type, a missing required field or a choice outside the list is an
/// [`CallerError::InvalidAnswer`] naming every violation, never a panic.
///
/// # Errors
///
/// [`CallerError::InvalidAnswer`].
pub fn read_form_answer<T: ElicitForm>(content: &Value) -> Result<T, CallerError> {
    let schema = T::schema();
    if let Err(violations) = validate::validate_labeled(&schema, content, "answer", true) {
        return Err(CallerError::InvalidAnswer(violations.to_string()));
    }
    let normalized = strip_nulls(&schema, content);
    crate::json::from_value::<T>(&normalized)
        .map_err(|e| CallerError::InvalidAnswer(format!("answer: {e}")))
}

/// `content` without the `null`s of optional fields (read as "omitted").
fn strip_nulls(schema: &Schema, content: &Value) -> Value {
    match content {
        Value::Object(object) if matches!(schema.kind, Kind::Object(_)) => {
            let mut out = Object::new();
            for (key, value) in object.iter() {
                if !matches!(value, Value::Null) {
                    out.insert(key, value.clone());
                }
            }
            out.into()
        }
        other => other.clone(),
    }
}
