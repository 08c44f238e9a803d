//! `#[serde(default)]` and `#[serde(default = "path")]` on derived struct fields publish
//! `"default"` when the derive can compute the value (when the schema is built): the
//! field type's `Default::default()` or `path()`, serialized. The published value is what
//! serde fills in for a missing key, and it validates against the property's own schema.

use dsh_runtime::ToolSchema;
use dsh_runtime::json::{self, Value, parse};
use dsh_runtime::schema::Schema;
use dsh_runtime::validate::is_valid;
use serde::{Deserialize, Serialize};

#[derive(Deserialize, Serialize, ToolSchema, Debug, PartialEq, Default)]
#[serde(rename_all = "lowercase")]
enum Mode {
    #[default]
    Fast,
    Thorough,
}

/// Deserialize only: its default cannot be serialized, so none is published.
#[derive(Deserialize, ToolSchema, Default)]
struct OnlyDe {
    #[allow(dead_code)]
    level: u8,
}

fn ten() -> u32 {
    10
}

fn thorough() -> Mode {
    Mode::Thorough
}

fn panics() -> u32 {
    panic!("no default today")
}

fn negative_zero() -> f64 {
    -0.0
}

#[derive(Deserialize, Serialize, ToolSchema)]
struct Options {
    #[serde(default)]
    count: u32,
    #[serde(default)]
    verbose: bool,
    #[serde(default)]
    name: String,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    limit: Option<u32>,
    #[serde(default = "ten")]
    page_size: u32,
    #[serde(default)]
    mode: Mode,
    #[serde(default = "thorough")]
    fallback_mode: Mode,
    /// `0` is below the range: not advertised.
    #[serde(default)]
    #[schema(range(min = 1))]
    at_least_one: u32,
    /// An explicit `#[schema(default)]` wins.
    #[serde(default)]
    #[schema(default = 5)]
    explicit: u32,
    /// Required: no default.
    plain: u32,
}

#[derive(Deserialize, ToolSchema)]
#[allow(dead_code)]
struct Unlucky {
    /// The default fn panics: contained, nothing published.
    #[serde(default = "panics")]
    unlucky: u32,
    /// `-0.0` is not lossless JSON: nothing published.
    #[serde(default = "negative_zero")]
    signed_zero: f64,
}

#[derive(Deserialize, ToolSchema)]
#[allow(dead_code)]
struct WithOnlyDe {
    #[serde(default)]
    inner: OnlyDe,
}

#[derive(Deserialize, ToolSchema)]
#[allow(dead_code)]
struct Generic<T> {
    #[serde(default)]
    value: T,
    #[serde(default = "ten")]
    page_size: u32,
}

fn defaults(schema: &Schema) -> Vec<(String, Option<String>)> {
    let Some(object) = schema.as_object() else {
        panic!("an object schema");
    };
    object
        .properties
        .iter()
        .map(|p| {
            (
                p.name.to_string(),
                p.schema.default.as_ref().map(ToString::to_string),
            )
        })
        .collect()
}

fn some(text: &str) -> Option<String> {
    Some(text.to_string())
}

#[test]
fn serde_defaults_are_published_when_computable() {
    let schema = Options::schema();
    assert_eq!(
        defaults(&schema),
        [
            ("count".to_string(), some("0")),
            ("verbose".to_string(), some("false")),
            ("name".to_string(), some(r#""""#)),
            ("tags".to_string(), some("[]")),
            ("limit".to_string(), None),
            ("page_size".to_string(), some("10")),
            ("mode".to_string(), some(r#""fast""#)),
            ("fallback_mode".to_string(), some(r#""thorough""#)),
            ("at_least_one".to_string(), None),
            ("explicit".to_string(), some("5")),
            ("plain".to_string(), None),
        ]
    );
    let text = schema.to_json_string();
    assert!(
        text.contains(r#""count":{"type":"integer","default":0,"minimum":0,"#),
        "{text}"
    );
}

#[test]
fn serde_defaults_are_not_published_when_not_computable() {
    assert_eq!(
        defaults(&WithOnlyDe::schema()),
        [("inner".to_string(), None)]
    );
    assert_eq!(
        defaults(&Unlucky::schema()),
        [
            ("unlucky".to_string(), None),
            ("signed_zero".to_string(), None)
        ]
    );
    // In a generic type the field type's impls are not known where the schema is built.
    assert_eq!(
        defaults(&Generic::<u32>::schema()),
        [("value".to_string(), None), ("page_size".to_string(), None)]
    );
}

#[test]
fn published_serde_defaults_validate_against_their_own_schema() {
    let schema = Options::schema();
    let Some(object) = schema.as_object() else {
        panic!("an object schema");
    };
    let mut published = 0;
    for p in &object.properties {
        if let Some(d) = &p.schema.default {
            published += 1;
            assert!(is_valid(&p.schema, d), "{}: {d}", p.name);
        }
    }
    assert_eq!(published, 8);
}

#[test]
fn published_serde_defaults_are_what_serde_fills_in() {
    let filled: Options =
        json::from_value(&parse(r#"{"plain":1}"#).expect("JSON")).expect("deserializes");
    let Value::Object(filled) = json::to_value(&filled).expect("serializes") else {
        panic!("an object");
    };
    let schema = Options::schema();
    let Some(object) = schema.as_object() else {
        panic!("an object schema");
    };
    for p in &object.properties {
        if let Some(d) = &p.schema.default
            && p.name != "explicit"
        {
            assert_eq!(filled.get(&p.name), Some(d), "{}", p.name);
        }
    }
}
