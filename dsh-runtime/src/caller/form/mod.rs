//! Typed forms: a Rust type as an MCP elicitation form, and the answer read back into it.
//!
//! Three parts: the compile-time check that a type is within MCP's form subset (the
//! traits of `checks.rs`, implemented by `#[derive(ToolSchema)]`, required by
//! [`ElicitForm`]); the run-time writer of a [`Schema`] as a form ([`form_schema`],
//! [`form_schema_of`]); and the reader of an answer ([`read_form_answer`]). The subset
//! and how each Rust shape is written are documented on [`ElicitForm`].

mod checks;

use std::fmt;
use std::sync::Arc;

use serde::de::DeserializeOwned;

use super::CallerError;
use crate::json::{Number, Object, Value};
use crate::schema::{ArrayRules, IntegerRules, Kind, NumberRules, Schema, StringRules};
use crate::{ToolSchema, validate};

pub use checks::{FormChoice, FormField, FormFields};

/// The checks the derive emits for a form field's `#[schema]` keys (not public API).
#[doc(hidden)]
pub mod derive_checks {
    pub use super::checks::{FormChoicesKey, FormPatternKey, FormWithKey};
}

/// A type a body can ask its caller to fill in as a form
/// ([`ToolContext::elicit`](crate::ToolContext::elicit)): a struct with named fields
/// deriving [`ToolSchema`] and `Deserialize` whose fields are all [`FormField`]s.
/// Implemented for every such type.
///
/// MCP's forms (`requestedSchema`, revision 2025-11-25) are a subset of JSON Schema: a
/// flat object of primitive properties. Each field is written as
///
/// | Rust field | form property |
/// |---|---|
/// | `String` (and `Box<str>`, `Arc<str>`, `Cow<str>`, `char`) | `{"type": "string"}`, with `minLength`/`maxLength` from `#[schema(length)]`; a string `#[schema(enum)]` (or `const`) makes it an untitled single-select |
/// | integers, floats | `{"type": "integer"}`, `{"type": "number"}`, with `minimum`/`maximum` from the type's range (when published) and `#[schema(range)]` |
/// | `bool` | `{"type": "boolean"}` |
/// | an enum of unit variants, none documented or titled | untitled single-select: `{"type": "string", "enum": [..]}` |
/// | an enum of unit variants, some documented or titled | titled single-select: `{"type": "string", "oneOf": [{"const", "title"}, ..]}` |
/// | such an enum with `#[schema(enum_names)]` | legacy titled single-select: `{"type": "string", "enum": [..], "enumNames": [..]}` |
/// | `Vec<E>` (or `VecDeque`, `BTreeSet`, `HashSet`) of an untitled enum | untitled multi-select: `{"type": "array", "items": {"type": "string", "enum": [..]}}`, with `minItems`/`maxItems` from `#[schema(length)]` |
/// | `Vec<E>` of a titled enum | titled multi-select: `{"type": "array", "items": {"anyOf": [{"const", "title"}, ..]}}` (also for an `enum_names` enum: legacy names are a single-select's) |
/// | `Option<T>` of any of these | the same property, not required |
/// | a newtype (`struct Email(String)`, or `#[serde(transparent)]`) of any of these | the same property |
///
/// Each property keeps its `title` (`#[schema(title)]`), its `description` (the field's
/// doc comment, else its type's) and its `default` (SEP-1034: `#[schema(default = ..)]`,
/// or the value of `#[serde(default)]`). A choice's title is its variant's
/// `#[schema(title)]`, else its doc comment, else its name. A field is required unless
/// it is an `Option` or has a default. The form's root carries only `type`,
/// `properties` and `required`: the words for the user are the request's message.
///
/// A type outside the subset is a compile error at the `elicit` call, naming the field
/// type and why: a nested struct, a map, a `Vec` of anything but such an enum,
/// arbitrary JSON (`serde_json::Value`), an enum carrying data, a field with a
/// `#[schema(pattern)]` or a hand-written schema (`#[schema(with)]`), choices that are
/// not strings, and as the form itself anything but a struct with named fields (a tuple
/// struct, an enum). A `#[serde(from = "X")]` type is a form when `X` is one.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be asked as an elicitation form",
    label = "not a form",
    note = "a form is a struct with named fields deriving `ToolSchema` and `Deserialize` whose fields are strings, numbers, integers, booleans, enums of unit variants, or `Vec`s of such enums (each possibly in an `Option`)"
)]
pub trait ElicitForm: FormFields + ToolSchema + DeserializeOwned + 'static {}

impl<T: FormFields + ToolSchema + DeserializeOwned + 'static> ElicitForm for T {}

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

/// `schema` written as an MCP form (`requestedSchema`), every titled single-select as a
/// `oneOf` of `{const, title}`.
///
/// # Errors
///
/// The first property outside MCP's form subset, path-qualified (`/` is the root, `/x`
/// the property `x`): a root that is not an object, a nested object, an array that is
/// not a multi-select of strings, a `oneOf` that is not a choice among strings, a
/// string `pattern`, choices that are not strings, a `default` of another type than its
/// property.
pub fn form_schema(schema: &Schema) -> Result<Value, FormSchemaError> {
    write_form(schema, &|_| false)
}

/// The form of `T` as [`ToolContext::elicit`](crate::ToolContext::elicit) sends it:
/// [`form_schema`] of `T`'s schema, with the single-selects of enums marked
/// `#[schema(enum_names)]` written as MCP's legacy `enum` + `enumNames`.
///
/// # Errors
///
/// As [`form_schema`]: only for a type whose schema the compile-time checks cannot see
/// (a hand-written [`FormFields`] or [`FormField`] impl).
pub fn form_schema_of<T: ElicitForm>() -> Result<Value, FormSchemaError> {
    write_form(&T::schema(), &<T as FormFields>::legacy_enum_names)
}

fn write_form(schema: &Schema, legacy: &dyn Fn(&str) -> bool) -> Result<Value, FormSchemaError> {
    let Kind::Object(rules) = &schema.kind else {
        return Err(fail("/", "a form is an object of named fields"));
    };
    let mut properties = Object::new();
    let mut required = Vec::new();
    for property in &rules.properties {
        let path = format!("/{}", property.name);
        let style = Style {
            legacy: legacy(&property.name),
        };
        let written = field(&property.schema, &path, style)?;
        properties.insert(String::from(&*property.name), written);
        if property.required {
            required.push(Value::from(String::from(&*property.name)));
        }
    }
    // The root carries only what `requestedSchema` declares: the form's words are the
    // request's message.
    let mut form = Object::new();
    form.insert("type", "object");
    form.insert("properties", properties);
    if !required.is_empty() {
        form.insert("required", Value::from(required));
    }
    Ok(form.into())
}

/// How to write one property.
#[derive(Clone, Copy)]
struct Style {
    /// A titled single-select as `enum` + `enumNames`.
    legacy: bool,
}

fn fail(path: &str, reason: impl Into<String>) -> FormSchemaError {
    FormSchemaError {
        path: path.to_string(),
        reason: reason.into(),
    }
}

/// The JSON type a property's `default` must have.
#[derive(Clone, Copy, PartialEq)]
enum DefaultKind {
    String,
    Number,
    Boolean,
    Strings,
}

/// `title`, `description` and `default` of a property, the default checked against the
/// property's type.
fn annotate(
    out: &mut Object,
    schema: &Schema,
    kind: DefaultKind,
    path: &str,
) -> Result<(), FormSchemaError> {
    if let Some(title) = &schema.title {
        out.insert("title", String::from(&**title));
    }
    if let Some(description) = &schema.description {
        out.insert("description", String::from(&**description));
    }
    if let Some(default) = &schema.default {
        let fits = match (kind, default) {
            (DefaultKind::String, Value::String(_))
            | (DefaultKind::Number, Value::Number(_))
            | (DefaultKind::Boolean, Value::Bool(_)) => true,
            (DefaultKind::Strings, Value::Array(items)) => {
                items.iter().all(|v| matches!(v, Value::String(_)))
            }
            _ => false,
        };
        if !fits {
            return Err(fail(
                path,
                format!(
                    "the default {default} is not {}",
                    match kind {
                        DefaultKind::String => "a string",
                        DefaultKind::Number => "a number",
                        DefaultKind::Boolean => "a boolean",
                        DefaultKind::Strings => "a list of strings",
                    }
                ),
            ));
        }
        out.insert("default", default.clone());
    }
    Ok(())
}

/// The branch of a `oneOf [T, null]` (an `Option` written as a value) that is not
/// `null`: a form field the user may leave empty is written as `T`.
fn non_null(branches: &[Arc<Schema>]) -> Option<&Arc<Schema>> {
    match branches {
        [a, b] if matches!(b.kind, Kind::Null) => Some(a),
        [a, b] if matches!(a.kind, Kind::Null) => Some(b),
        _ => None,
    }
}

/// One field of a form: its kind's keywords, then the annotations every field shares.
fn field(schema: &Schema, path: &str, style: Style) -> Result<Value, FormSchemaError> {
    let mut out = Object::new();
    let default_kind = match &schema.kind {
        Kind::String(rules) => string_field(schema, rules, path, style, &mut out)?,
        Kind::Integer(rules) => integer_field(schema, rules, path, &mut out)?,
        Kind::Number(rules) => number_field(schema, rules, path, &mut out)?,
        Kind::Boolean => {
            no_choices(schema, path)?;
            out.insert("type", "boolean");
            DefaultKind::Boolean
        }
        Kind::OneOf(branches) => {
            if let Some(inner) = non_null(branches) {
                // The outer node's own annotations win over the inner one's.
                let mut merged = (**inner).clone();
                merged.title = schema.title.clone().or(merged.title);
                merged.description = schema.description.clone().or(merged.description);
                merged.default = schema.default.clone().or(merged.default);
                return field(&merged, path, style);
            }
            choice_field(branches, path, style, &mut out)?
        }
        Kind::Array(rules) => multi_select_field(rules, path, &mut out)?,
        Kind::Object(_) => return Err(fail(path, "a form is flat: a field cannot be an object")),
        Kind::Null | Kind::Json => {
            return Err(fail(
                path,
                "a form field is a string, number, integer, boolean or enum",
            ));
        }
    };
    annotate(&mut out, schema, default_kind, path)?;
    Ok(out.into())
}

/// A string field: a choice (`enum`) or free text with its length bounds.
fn string_field(
    schema: &Schema,
    rules: &StringRules,
    path: &str,
    style: Style,
    out: &mut Object,
) -> Result<DefaultKind, FormSchemaError> {
    if rules.pattern.is_some() {
        return Err(fail(path, "a form field cannot carry a `pattern`"));
    }
    out.insert("type", "string");
    let values = string_choices(schema, path)?;
    match values {
        Some(values) => {
            // A choice: `enum` (and, legacy, the values as their own titles).
            if style.legacy {
                out.insert("enumNames", Value::from(values.clone()));
            }
            out.insert("enum", Value::from(values));
        }
        None => {
            if let Some(n) = rules.min_length {
                out.insert("minLength", n);
            }
            if let Some(n) = rules.max_length {
                out.insert("maxLength", n);
            }
        }
    }
    Ok(DefaultKind::String)
}

/// An integer field with its published bounds.
fn integer_field(
    schema: &Schema,
    rules: &IntegerRules,
    path: &str,
    out: &mut Object,
) -> Result<DefaultKind, FormSchemaError> {
    no_choices(schema, path)?;
    out.insert("type", "integer");
    let bound = |b: Option<i128>, hidden: bool| b.filter(|_| !hidden).and_then(integer);
    if let Some(n) = bound(rules.minimum, rules.hidden.minimum) {
        out.insert("minimum", n);
    }
    if let Some(n) = bound(rules.maximum, rules.hidden.maximum) {
        out.insert("maximum", n);
    }
    Ok(DefaultKind::Number)
}

/// A number field with its published bounds.
fn number_field(
    schema: &Schema,
    rules: &NumberRules,
    path: &str,
    out: &mut Object,
) -> Result<DefaultKind, FormSchemaError> {
    no_choices(schema, path)?;
    out.insert("type", "number");
    let bound = |b: Option<f64>, hidden: bool| b.filter(|_| !hidden).and_then(Number::from_f64);
    if let Some(n) = bound(rules.minimum, rules.hidden.minimum) {
        out.insert("minimum", n);
    }
    if let Some(n) = bound(rules.maximum, rules.hidden.maximum) {
        out.insert("maximum", n);
    }
    Ok(DefaultKind::Number)
}

/// A titled single choice (a `oneOf` of constants): `oneOf`, or legacy `enum` and
/// `enumNames`.
fn choice_field(
    branches: &[Arc<Schema>],
    path: &str,
    style: Style,
    out: &mut Object,
) -> Result<DefaultKind, FormSchemaError> {
    let choices = choices(branches, path)?;
    out.insert("type", "string");
    if style.legacy {
        let (values, titles): (Vec<Value>, Vec<Value>) = choices
            .into_iter()
            .map(|(value, title)| (Value::from(value), Value::from(title)))
            .unzip();
        out.insert("enum", Value::from(values));
        out.insert("enumNames", Value::from(titles));
    } else {
        out.insert("oneOf", titled(choices));
    }
    Ok(DefaultKind::String)
}

/// A multi-select field: an array of choices with its count bounds.
fn multi_select_field(
    rules: &ArrayRules,
    path: &str,
    out: &mut Object,
) -> Result<DefaultKind, FormSchemaError> {
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
    Ok(DefaultKind::Strings)
}

/// A string node's choices (`enum`, or a `const` as a choice of one), if any; choices
/// that are not strings are outside the subset.
fn string_choices(schema: &Schema, path: &str) -> Result<Option<Vec<Value>>, FormSchemaError> {
    let values: Vec<Value> = match (&schema.enum_values, &schema.const_value) {
        (Some(values), _) => values.as_slice().to_vec(),
        (None, Some(value)) => vec![value.clone()],
        (None, None) => return Ok(None),
    };
    if values.iter().all(|v| matches!(v, Value::String(_))) {
        Ok(Some(values))
    } else {
        Err(fail(path, "a form's choices are strings"))
    }
}

/// A number or boolean field cannot list choices (`enum`, `const`): a form's choices
/// are strings.
fn no_choices(schema: &Schema, path: &str) -> Result<(), FormSchemaError> {
    if schema.enum_values.is_some() || schema.const_value.is_some() {
        return Err(fail(
            path,
            "a form's choices are strings: a number or boolean field cannot list them",
        ));
    }
    Ok(())
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
    match &items.kind {
        Kind::String(rules) if rules.pattern.is_none() => {
            let values = string_choices(items, path)?
                .ok_or_else(|| fail(path, "a multi-select field's items are an enum of strings"))?;
            out.insert("type", "string");
            out.insert("enum", Value::from(values));
        }
        Kind::OneOf(branches) => {
            out.insert("anyOf", titled(choices(branches, path)?));
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

/// `[{const, title}]`.
fn titled(choices: Vec<(String, String)>) -> Value {
    let out: Vec<Value> = choices
        .into_iter()
        .map(|(value, title)| {
            let mut choice = Object::new();
            choice.insert("const", value);
            choice.insert("title", title);
            Value::from(choice)
        })
        .collect();
    Value::from(out)
}

/// Titled choices, `(value, title)`, from branches that are each one string: the title
/// is the branch's `title`, else its `description`, else the value.
fn choices(branches: &[Arc<Schema>], path: &str) -> Result<Vec<(String, String)>, FormSchemaError> {
    let mut out = Vec::with_capacity(branches.len());
    for branch in branches {
        let value = match (&branch.kind, &branch.const_value, &branch.enum_values) {
            (Kind::String(_), Some(Value::String(value)), _) => String::from(&**value),
            (Kind::String(_), None, Some(values)) => match values.as_slice() {
                [Value::String(value)] => String::from(&**value),
                _ => return Err(not_a_choice(path)),
            },
            _ => return Err(not_a_choice(path)),
        };
        let title = branch
            .title
            .as_deref()
            .or(branch.description.as_deref())
            .map_or_else(|| value.clone(), str::to_string);
        out.push((value, title));
    }
    Ok(out)
}

fn not_a_choice(path: &str) -> FormSchemaError {
    fail(
        path,
        "a choice of a form is one string value (a unit enum variant)",
    )
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
