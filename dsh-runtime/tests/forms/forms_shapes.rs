//! The form each Rust shape derives: every property kind of MCP's subset, the five enum
//! shapes of SEP-1330, defaults (SEP-1034), required and optional fields, bounds,
//! titles and descriptions; and `form_schema`'s path-qualified errors for schemas built
//! by hand. Every derived form is also checked against MCP's definition (`form_of`).

// The form types are built by serde and never read.
#![allow(dead_code)]

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;

use dsh_runtime::ToolSchema;
use dsh_runtime::caller::{FormSchemaError, form_schema};
use dsh_runtime::schema::{Additional, Property, Schema};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::forms_support::{assert_mcp, form_of, property_of, required_of};

// ---------------------------------------------------------------------------------------
// enums

/// A color.
#[derive(
    ToolSchema, Deserialize, Serialize, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash,
)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Color {
    Red,
    Green,
    Blue,
}

/// A size, each shown by name.
#[derive(
    ToolSchema, Deserialize, Serialize, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash,
)]
pub(crate) enum Size {
    /// Small
    S,
    /// Medium
    M,
    #[schema(title = "Large")]
    L,
    // Neither doc nor title: titled by its name.
    XL,
}

/// A priority, for clients that know only `enumNames`.
#[derive(ToolSchema, Deserialize, Serialize, Debug, Clone, Copy, PartialEq, Eq)]
#[schema(enum_names)]
pub(crate) enum Priority {
    /// Low priority
    Low,
    /// High priority
    High,
}

/// A region, legacy-styled but without titles.
#[derive(ToolSchema, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[schema(enum_names)]
pub(crate) enum Region {
    Eu,
    Us,
}

#[derive(ToolSchema, Deserialize, Debug)]
pub(crate) struct Choices {
    color: Color,
    size: Size,
    priority: Priority,
    region: Region,
    colors: Vec<Color>,
    sizes: Vec<Size>,
    /// Legacy names are a single-select's: a multi-select of the enum is titled.
    priorities: Vec<Priority>,
    color_set: BTreeSet<Color>,
    size_set: HashSet<Size>,
    #[serde(rename = "maybeColor")]
    maybe_color: Option<Color>,
    #[serde(rename = "maybePriority")]
    maybe_priority: Option<Priority>,
}

#[test]
fn untitled_single_select() {
    assert_eq!(
        property_of::<Choices>("color"),
        json!({"type": "string", "enum": ["red", "green", "blue"], "description": "A color."})
    );
}

#[test]
fn titled_single_select_titles_by_title_then_doc_then_name() {
    assert_eq!(
        property_of::<Choices>("size"),
        json!({
            "type": "string",
            "oneOf": [
                {"const": "S", "title": "Small"},
                {"const": "M", "title": "Medium"},
                {"const": "L", "title": "Large"},
                {"const": "XL", "title": "XL"},
            ],
            "description": "A size, each shown by name.",
        })
    );
}

#[test]
fn legacy_enum_names_on_opt_in() {
    assert_eq!(
        property_of::<Choices>("priority"),
        json!({
            "type": "string",
            "enum": ["Low", "High"],
            "enumNames": ["Low priority", "High priority"],
            "description": "A priority, for clients that know only `enumNames`.",
        })
    );
    // Without titles, the names are the values.
    assert_eq!(
        property_of::<Choices>("region"),
        json!({
            "type": "string",
            "enumNames": ["Eu", "Us"],
            "enum": ["Eu", "Us"],
            "description": "A region, legacy-styled but without titles.",
        })
    );
    // Through `Option` and a rename (the property's wire name).
    assert_eq!(
        property_of::<Choices>("maybePriority")["enumNames"],
        json!(["Low priority", "High priority"])
    );
    assert!(
        property_of::<Choices>("maybeColor")
            .get("enumNames")
            .is_none()
    );
}

#[test]
fn untitled_multi_select() {
    let colors = json!({
        "type": "array",
        "items": {"type": "string", "enum": ["red", "green", "blue"]},
    });
    assert_eq!(property_of::<Choices>("colors"), colors);
    assert_eq!(property_of::<Choices>("color_set"), colors);
}

#[test]
fn titled_multi_select() {
    let sizes = json!({
        "type": "array",
        "items": {"anyOf": [
            {"const": "S", "title": "Small"},
            {"const": "M", "title": "Medium"},
            {"const": "L", "title": "Large"},
            {"const": "XL", "title": "XL"},
        ]},
    });
    assert_eq!(property_of::<Choices>("sizes"), sizes);
    assert_eq!(property_of::<Choices>("size_set"), sizes);
    assert_eq!(
        property_of::<Choices>("priorities"),
        json!({
            "type": "array",
            "items": {"anyOf": [
                {"const": "Low", "title": "Low priority"},
                {"const": "High", "title": "High priority"},
            ]},
            "description": "Legacy names are a single-select's: a multi-select of the enum is titled.",
        })
    );
}

#[derive(ToolSchema, Deserialize)]
pub(crate) struct Bounded {
    #[schema(length(min = 1, max = 2))]
    colors: Vec<Color>,
}

#[test]
fn multi_select_item_counts() {
    assert_eq!(
        property_of::<Bounded>("colors"),
        json!({
            "type": "array",
            "items": {"type": "string", "enum": ["red", "green", "blue"]},
            "minItems": 1,
            "maxItems": 2,
        })
    );
}

// ---------------------------------------------------------------------------------------
// primitives, bounds, required

/// Not published: the form's words are the request's message.
#[derive(ToolSchema, Deserialize, Debug, PartialEq)]
pub(crate) struct Primitives {
    /// Your name.
    name: String,
    #[schema(title = "Nickname", length(min = 2, max = 20))]
    nick: String,
    initial: char,
    boxed: Box<str>,
    cow: Cow<'static, str>,
    small: u8,
    signed: i16,
    wide: u64,
    wider: i64,
    #[schema(range(min = 1, max = 10))]
    rating: u32,
    ratio: f64,
    single: f32,
    #[schema(range(min = 0.0, max = 1.0))]
    share: f64,
    agree: bool,
    #[schema(enum = ["yes", "no"])]
    answer: String,
    #[schema(const = "ok")]
    fixed: String,
}

#[test]
fn primitive_fields() {
    let form = form_of::<Primitives>();
    assert_eq!(
        form,
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "Your name."},
                "nick": {"type": "string", "minLength": 2, "maxLength": 20, "title": "Nickname"},
                "initial": {"type": "string", "minLength": 1, "maxLength": 1},
                "boxed": {"type": "string"},
                "cow": {"type": "string"},
                "small": {"type": "integer", "minimum": 0, "maximum": 255},
                "signed": {"type": "integer", "minimum": -32768, "maximum": 32767},
                // Bounds beyond 2^53 are enforced, not published.
                "wide": {"type": "integer", "minimum": 0},
                "wider": {"type": "integer"},
                "rating": {"type": "integer", "minimum": 1, "maximum": 10},
                "ratio": {"type": "number"},
                "single": {"type": "number"},
                "share": {"type": "number", "minimum": 0, "maximum": 1},
                "agree": {"type": "boolean"},
                "answer": {"type": "string", "enum": ["yes", "no"]},
                "fixed": {"type": "string", "enum": ["ok"]},
            },
            "required": [
                "name", "nick", "initial", "boxed", "cow", "small", "signed", "wide",
                "wider", "rating", "ratio", "single", "share", "agree", "answer", "fixed",
            ],
        })
    );
}

fn default_note() -> String {
    "none".into()
}

/// Defaults for every kind (SEP-1034).
#[derive(ToolSchema, Deserialize, Debug)]
pub(crate) struct Defaults {
    #[schema(default = "anonymous")]
    name: Option<String>,
    #[serde(default = "default_note")]
    note: String,
    #[serde(default)]
    count: u32,
    #[schema(default = 2.5)]
    scale: Option<f64>,
    #[serde(default)]
    verbose: bool,
    #[schema(default = true)]
    color_output: Option<bool>,
    #[schema(default = "green")]
    color: Option<Color>,
    #[schema(default = "M")]
    size: Option<Size>,
    #[schema(default = "High")]
    priority: Option<Priority>,
    #[schema(default = ["red", "blue"])]
    colors: Option<Vec<Color>>,
    #[serde(default)]
    sizes: Vec<Size>,
}

#[test]
fn defaults_of_every_kind() {
    let form = form_of::<Defaults>();
    let p = &form["properties"];
    assert_eq!(p["name"]["default"], json!("anonymous"));
    assert_eq!(p["note"]["default"], json!("none"));
    assert_eq!(p["count"]["default"], json!(0));
    assert_eq!(p["scale"]["default"], json!(2.5));
    assert_eq!(p["verbose"]["default"], json!(false));
    assert_eq!(p["color_output"]["default"], json!(true));
    assert_eq!(p["color"]["default"], json!("green"));
    assert_eq!(p["size"]["default"], json!("M"));
    assert!(p["size"].get("oneOf").is_some());
    assert_eq!(p["priority"]["default"], json!("High"));
    assert!(p["priority"].get("enumNames").is_some());
    assert_eq!(p["colors"]["default"], json!(["red", "blue"]));
    assert_eq!(p["sizes"]["default"], json!([]));
    // Every field has a default or is optional: nothing is required.
    assert!(form.get("required").is_none(), "{form:#}");
}

#[derive(ToolSchema, Deserialize, Debug, PartialEq)]
pub(crate) struct Required {
    needed: String,
    optional: Option<String>,
    #[serde(default)]
    defaulted: u8,
    maybe_maybe: Option<Option<String>>,
    maybe_many: Option<Vec<Color>>,
}

#[test]
fn required_and_optional_fields() {
    assert_eq!(required_of::<Required>(), ["needed"]);
    let form = form_of::<Required>();
    // An `Option<Option<T>>` is asked as a `T` the user may leave empty.
    assert_eq!(form["properties"]["maybe_maybe"], json!({"type": "string"}));
}

#[derive(ToolSchema, Deserialize, Default, Debug)]
#[serde(default)]
pub(crate) struct AllDefaulted {
    a: String,
    b: u8,
}

#[test]
fn a_defaulted_struct_requires_nothing() {
    assert!(required_of::<AllDefaulted>().is_empty());
}

// ---------------------------------------------------------------------------------------
// descriptions and titles

/// A shipping speed.
#[derive(ToolSchema, Deserialize, Debug)]
pub(crate) enum Speed {
    Slow,
    Fast,
}

#[derive(ToolSchema, Deserialize, Debug)]
pub(crate) struct Described {
    /// How fast to ship.
    speed: Speed,
    // The type's doc when the field has none.
    fallback: Speed,
    #[schema(title = "Express", description = "Ship overnight.")]
    express: bool,
}

#[test]
fn descriptions_from_doc_comments() {
    let form = form_of::<Described>();
    let p = &form["properties"];
    assert_eq!(p["speed"]["description"], json!("How fast to ship."));
    assert_eq!(p["fallback"]["description"], json!("A shipping speed."));
    assert_eq!(
        p["express"],
        json!({"type": "boolean", "title": "Express", "description": "Ship overnight."})
    );
    // The root carries only what `requestedSchema` declares.
    let keys: BTreeSet<&str> = form
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(keys, BTreeSet::from(["type", "properties", "required"]));
}

// ---------------------------------------------------------------------------------------
// serde shapes

/// An email address, read through its one field.
#[derive(ToolSchema, Deserialize, Debug, PartialEq)]
pub(crate) struct Email(#[schema(length(max = 254))] String);

#[derive(ToolSchema, Deserialize, Debug, PartialEq)]
#[serde(transparent)]
pub(crate) struct Count {
    value: u16,
}

#[derive(ToolSchema, Deserialize, Debug, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Contact {
    email_address: Email,
    max_count: Option<Count>,
    #[serde(skip)]
    // A skipped field is not asked, so its type is free.
    cache: BTreeMap<String, serde_json::Value>,
}

#[test]
fn newtypes_renames_and_skips() {
    assert_eq!(
        form_of::<Contact>(),
        json!({
            "type": "object",
            "properties": {
                "emailAddress": {"type": "string", "maxLength": 254, "description": "An email address, read through its one field."},
                "maxCount": {"type": "integer", "minimum": 0, "maximum": 65535},
            },
            "required": ["emailAddress"],
        })
    );
}

#[derive(ToolSchema, Deserialize, Debug, PartialEq)]
pub(crate) struct Pair<T> {
    first: T,
    second: Option<T>,
}

#[test]
fn generic_forms() {
    assert_eq!(
        property_of::<Pair<Color>>("second")["enum"],
        json!(["red", "green", "blue"])
    );
    assert_eq!(required_of::<Pair<u8>>(), ["first"]);
}

#[derive(ToolSchema, Deserialize)]
pub(crate) struct Raw {
    amount: u32,
}

/// Read through `Raw`.
#[derive(ToolSchema, Deserialize, Debug, PartialEq)]
#[serde(from = "Raw")]
pub(crate) struct Converted {
    cents: u64,
}

impl From<Raw> for Converted {
    fn from(raw: Raw) -> Self {
        Converted {
            cents: u64::from(raw.amount) * 100,
        }
    }
}

#[test]
fn a_from_type_is_the_form_of_its_source() {
    assert_eq!(
        form_of::<Converted>(),
        json!({
            "type": "object",
            "properties": {"amount": {"type": "integer", "minimum": 0, "maximum": 4294967295u64}},
            "required": ["amount"],
        })
    );
}

/// Not a form (a nested struct): still a tool parameter type, only never asked as a form.
#[derive(ToolSchema, Deserialize)]
pub(crate) struct NotAForm {
    contact: Contact,
    tags: Vec<String>,
}

#[test]
fn a_type_outside_the_subset_still_derives() {
    let schema = NotAForm::schema();
    assert!(schema.as_object().is_some());
    // The run-time writer says why it is not a form.
    let err = form_schema(&schema).unwrap_err();
    assert_eq!(err.path, "/contact");
}

// ---------------------------------------------------------------------------------------
// hand-built schemas: `form_schema` names the property outside the subset

fn object(properties: Vec<Property>) -> Schema {
    Schema::object(properties, Additional::Closed)
}

fn err(schema: Schema) -> FormSchemaError {
    match form_schema(&schema) {
        Ok(form) => panic!("accepted: {form}"),
        Err(e) => e,
    }
}

#[test]
fn hand_built_schemas_outside_the_subset_name_the_property() {
    let nested = object(vec![Property::new(
        "address",
        object(vec![Property::new("street", Schema::string(), true)]),
        true,
    )]);
    let e = err(nested);
    assert_eq!(e.path, "/address");
    assert!(e.reason.contains("flat"), "{e}");

    let pattern = object(vec![Property::new(
        "tag",
        Schema::string().with_pattern(dsh_runtime::schema::Pattern::new("^v").unwrap()),
        true,
    )]);
    assert_eq!(err(pattern).path, "/tag");

    let numbers = object(vec![Property::new(
        "face",
        Schema::integer().with_enum(vec![1.into(), 2.into()]),
        true,
    )]);
    let e = err(numbers);
    assert_eq!(e.path, "/face");
    assert!(e.reason.contains("strings"), "{e}");

    let any = object(vec![Property::new("extra", Schema::json(), false)]);
    assert_eq!(err(any).path, "/extra");

    let free_list = object(vec![Property::new(
        "tags",
        Schema::array(Some(Arc::new(Schema::string()))),
        true,
    )]);
    let e = err(free_list);
    assert_eq!(e.path, "/tags");
    assert!(e.reason.contains("multi-select"), "{e}");

    let bad_default = object(vec![Property::new(
        "n",
        Schema::integer().with_default(dsh_runtime::json::Value::from("three")),
        true,
    )]);
    let e = err(bad_default);
    assert_eq!(e.path, "/n");
    assert!(e.reason.contains("default"), "{e}");

    let e = err(Schema::string());
    assert_eq!(e.path, "/");
    assert_eq!(
        e.to_string(),
        "not an MCP form at `/`: a form is an object of named fields"
    );
}

#[test]
fn hand_built_schemas_inside_the_subset_are_written() {
    let schema = object(vec![
        Property::new("name", Schema::string().with_title("Name"), true),
        Property::new(
            "choice",
            Schema::one_of(vec![
                Arc::new(Schema::string_const("a").with_title("A")),
                Arc::new(Schema::string_const("b").with_description("Bee")),
            ]),
            false,
        ),
    ]);
    let form = dsh_runtime::json::to_serde(&form_schema(&schema).unwrap());
    assert_mcp(&form);
    assert_eq!(
        form,
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Name"},
                "choice": {"type": "string", "oneOf": [
                    {"const": "a", "title": "A"},
                    {"const": "b", "title": "Bee"},
                ]},
            },
            "required": ["name"],
        })
    );
}
