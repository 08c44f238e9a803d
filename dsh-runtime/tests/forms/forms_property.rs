//! Properties of the form writer, with MCP's `requestedSchema` definition (the fixture)
//! and the `jsonschema` crate as the independent oracle:
//!
//! - every form written from a generated flat schema of form-able properties (each kind,
//!   bounds, choices titled or not, defaults, optional fields) is an MCP form;
//! - every answer generated from such a form (read as the JSON Schema it is, by
//!   `jsonschema`) is one the original schema accepts: the form never offers what the
//!   body would refuse;
//! - for a typed form, an answer generated from its form round-trips through
//!   `read_form_answer` into the type and back to the same JSON.
//!
//! `PROPTEST_CASES` raises the case count.

use std::collections::BTreeSet;
use std::sync::Arc;

use dsh_runtime::ToolSchema;
use dsh_runtime::caller::{form_schema, read_form_answer};
use dsh_runtime::json;
use dsh_runtime::schema::{Additional, Bound, Property, Schema};
use dsh_runtime::validate;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::forms_shapes::{Color, Priority, Size};
use crate::forms_support::{assert_mcp, form_of, mcp_violations};

// ---------------------------------------------------------------------------------------
// generated schemas

/// Distinct choice names.
fn names() -> impl Strategy<Value = Vec<String>> {
    prop::collection::btree_set("[a-z]{1,6}", 1..5).prop_map(|s| s.into_iter().collect())
}

/// A title, a description, both or neither.
fn words(schema: Schema) -> impl Strategy<Value = Schema> {
    (
        prop::option::of("[A-Z][a-z ]{0,10}"),
        prop::option::of("[A-Z][a-z .]{0,20}"),
    )
        .prop_map(move |(title, description)| {
            let mut s = schema.clone();
            if let Some(t) = title {
                s = s.with_title(t);
            }
            if let Some(d) = description {
                s = s.with_description(d);
            }
            s
        })
}

/// `(min, max)` with `min <= max`, either absent.
fn counts() -> impl Strategy<Value = (Option<u64>, Option<u64>)> {
    (prop::option::of(0u64..4), prop::option::of(0u64..6)).prop_map(|(a, b)| match (a, b) {
        (Some(a), Some(b)) => (Some(a.min(b)), Some(a.max(b))),
        other => other,
    })
}

fn maybe_default(schema: Schema, default: Option<serde_json::Value>) -> Schema {
    match default {
        Some(d) => schema.with_default(json::from_serde(&d).unwrap()),
        None => schema,
    }
}

/// Titled choices (a derived enum's `oneOf` of string constants), each titled by its
/// `title`, its `description`, or nothing.
fn titled_choices() -> impl Strategy<Value = Vec<Arc<Schema>>> {
    names().prop_flat_map(|names| {
        let n = names.len().max(2);
        let names: Vec<String> = (0..n)
            .map(|i| names.get(i).cloned().unwrap_or_else(|| format!("z{i}")))
            .collect();
        prop::collection::vec(0u8..3, n).prop_map(move |how| {
            names
                .iter()
                .zip(how)
                .map(|(name, how)| {
                    let c = Schema::string_const(name.clone());
                    Arc::new(match how {
                        0 => c.with_title(format!("{name} title")),
                        1 => c.with_description(format!("{name} description")),
                        _ => c,
                    })
                })
                .collect()
        })
    })
}

/// One form-able property schema.
fn field() -> impl Strategy<Value = Schema> {
    let string = (counts(), any::<bool>()).prop_map(|((min, max), with_default)| {
        let s = Schema::string().with_length(min, max);
        let default = with_default.then(|| json!("x".repeat(min.unwrap_or(0) as usize)));
        maybe_default(s, default)
    });
    let integer = (
        prop::option::of(-1000i64..1000),
        prop::option::of(0i64..1000),
        any::<bool>(),
    )
        .prop_map(|(min, span, with_default)| {
            let max = min.zip(span).map(|(m, s)| m + s);
            let s = Schema::integer_range(min.map(i128::from), max.map(i128::from));
            maybe_default(s, with_default.then(|| json!(min.unwrap_or(0))))
        });
    let number = (prop::option::of(-1e6f64..1e6), any::<bool>()).prop_map(|(min, with_default)| {
        let s = Schema::number().with_range(min.map(Bound::Float), None);
        maybe_default(s, with_default.then(|| json!(min.unwrap_or(0.5))))
    });
    let boolean = prop::option::of(any::<bool>())
        .prop_map(|d| maybe_default(Schema::boolean(), d.map(|b| json!(b))));
    let choice = (names(), any::<bool>()).prop_map(|(names, with_default)| {
        let default = with_default.then(|| json!(names[0]));
        maybe_default(Schema::string_enum(names), default)
    });
    let titled = (titled_choices(), any::<bool>()).prop_map(|(branches, with_default)| {
        let first = branches[0].const_value.clone();
        let s = Schema::one_of(branches);
        match (with_default, first) {
            (true, Some(first)) => s.with_default(first),
            _ => s,
        }
    });
    let multi = (names(), counts(), any::<bool>()).prop_map(|(names, (min, max), with_default)| {
        let default = with_default.then(|| json!([names[0]]));
        let s = Schema::array(Some(Arc::new(Schema::string_enum(names)))).with_length(min, max);
        maybe_default(s, default)
    });
    let titled_multi = (titled_choices(), counts()).prop_map(|(branches, (min, max))| {
        Schema::array(Some(Arc::new(Schema::one_of(branches)))).with_length(min, max)
    });
    let kind = prop_oneof![
        string,
        integer,
        number,
        boolean,
        choice,
        titled,
        multi,
        titled_multi
    ];
    (kind, any::<bool>()).prop_flat_map(|(s, nullable)| {
        // An `Option` written as a value: `oneOf [T, null]` (`Option<Option<T>>`).
        let s = if nullable && !matches!(s.kind, dsh_runtime::schema::Kind::OneOf(_)) {
            Schema::one_of(vec![Arc::new(s), Arc::new(Schema::null())])
        } else {
            s
        };
        words(s)
    })
}

/// A flat object of form-able properties, some required.
fn form_schema_strategy() -> impl Strategy<Value = Schema> {
    prop::collection::vec((field(), any::<bool>()), 0..8).prop_map(|fields| {
        let properties = fields
            .into_iter()
            .enumerate()
            .map(|(i, (schema, required))| Property::new(format!("f{i}"), schema, required))
            .collect();
        Schema::object(properties, Additional::Closed)
    })
}

// ---------------------------------------------------------------------------------------
// answers generated from a form (read as the JSON Schema it is)

fn bound(form: &serde_json::Value, key: &str) -> Option<f64> {
    form.get(key).and_then(|v| v.as_f64())
}

fn count(form: &serde_json::Value, key: &str) -> Option<usize> {
    form.get(key).and_then(|v| v.as_u64()).map(|n| n as usize)
}

/// The values a choice property offers (`enum`, `oneOf`, `anyOf` of `const`s).
fn offered(form: &serde_json::Value) -> Option<Vec<serde_json::Value>> {
    if let Some(values) = form.get("enum").and_then(|v| v.as_array()) {
        return Some(values.clone());
    }
    form.get("oneOf")
        .or_else(|| form.get("anyOf"))
        .and_then(|v| v.as_array())
        .map(|choices| choices.iter().map(|c| c["const"].clone()).collect())
}

/// A value the property `form` admits.
fn property_value(form: &serde_json::Value) -> BoxedStrategy<serde_json::Value> {
    if let Some(values) = offered(form) {
        return prop::sample::select(values).boxed();
    }
    match form["type"].as_str() {
        Some("string") => {
            let min = count(form, "minLength").unwrap_or(0);
            let max = count(form, "maxLength").unwrap_or(min + 8).max(min);
            prop::collection::vec(prop::char::range('a', 'z'), min..=max)
                .prop_map(|c| json!(c.into_iter().collect::<String>()))
                .boxed()
        }
        Some("integer") => {
            let min = bound(form, "minimum").map_or(-(1i64 << 53), |b| b.ceil() as i64);
            let max = bound(form, "maximum").map_or(1i64 << 53, |b| b.floor() as i64);
            (min..=max).prop_map(|n| json!(n)).boxed()
        }
        Some("number") => {
            let min = bound(form, "minimum").unwrap_or(-1e12);
            let max = bound(form, "maximum").unwrap_or(1e12).max(min);
            (min..=max).prop_map(|n| json!(n)).boxed()
        }
        Some("boolean") => any::<bool>().prop_map(|b| json!(b)).boxed(),
        Some("array") => {
            let items = offered(&form["items"]).expect("a multi-select lists its choices");
            let min = count(form, "minItems").unwrap_or(0);
            let max = count(form, "maxItems").unwrap_or(min + 3).max(min);
            prop::collection::vec(prop::sample::select(items), min..=max)
                .prop_map(|v| json!(v))
                .boxed()
        }
        other => panic!("no values for a property of type {other:?}: {form}"),
    }
}

/// An answer `form` admits: every required property, each optional one or not.
fn answer(form: &serde_json::Value) -> BoxedStrategy<serde_json::Value> {
    let required: BTreeSet<String> = form
        .get("required")
        .and_then(|r| r.as_array())
        .map(|r| {
            r.iter()
                .filter_map(|n| n.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let mut parts: Vec<BoxedStrategy<Option<(String, serde_json::Value)>>> = Vec::new();
    for (name, property) in form["properties"].as_object().expect("properties") {
        let name = name.clone();
        let value = property_value(property);
        if required.contains(&name) {
            parts.push(value.prop_map(move |v| Some((name.clone(), v))).boxed());
        } else {
            parts.push(prop::option::of(value.prop_map(move |v| (name.clone(), v))).boxed());
        }
    }
    parts
        .prop_map(|entries| serde_json::Value::Object(entries.into_iter().flatten().collect()))
        .boxed()
}

/// Which of MCP's property shapes `form` is.
fn shape(form: &serde_json::Value) -> &'static str {
    match (form["type"].as_str(), form.get("items")) {
        (Some("array"), Some(items)) if items.get("anyOf").is_some() => "titled multi",
        (Some("array"), _) => "untitled multi",
        (Some("string"), _) if form.get("oneOf").is_some() => "titled single",
        (Some("string"), _) if form.get("enum").is_some() => "untitled single",
        (Some("string"), _) => "string",
        (Some("integer"), _) => "integer",
        (Some("number"), _) => "number",
        (Some("boolean"), _) => "boolean",
        _ => "other",
    }
}

#[test]
fn the_generator_covers_every_shape() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut seen = BTreeSet::new();
    let mut defaults = 0;
    for _ in 0..200 {
        let schema = form_schema_strategy()
            .new_tree(&mut runner)
            .expect("a schema")
            .current();
        let form = written(&schema);
        for property in form["properties"].as_object().unwrap().values() {
            seen.insert(shape(property));
            defaults += usize::from(property.get("default").is_some());
        }
    }
    let every: BTreeSet<&str> = [
        "string",
        "integer",
        "number",
        "boolean",
        "untitled single",
        "titled single",
        "untitled multi",
        "titled multi",
    ]
    .into();
    assert_eq!(seen, every);
    assert!(defaults >= 50, "{defaults} defaults");
}

#[test]
fn the_oracle_rejects_what_is_outside_the_subset() {
    for form in [
        json!({"type": "object", "properties": {"a": {"type": "object", "properties": {}}}}),
        json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "^a"}}}),
        json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string"}}}}),
        json!({"type": "object", "properties": {"a": {"type": "integer", "enum": [1, 2]}}}),
        json!({"type": "object", "properties": {"a": {"type": "string", "default": 3}}}),
        json!({"type": "object", "properties": {"a": {"type": "string", "oneOf": [{"const": "x"}]}}}),
        json!({"type": "object", "properties": {"a": {"type": ["string", "null"]}}}),
        json!({"type": "object", "title": "A form", "properties": {}}),
        json!({"type": "object", "properties": {}, "required": ["a"]}),
        json!({"type": "string"}),
    ] {
        assert!(!mcp_violations(&form).is_empty(), "accepted: {form}");
    }
    // And accepts each of the five enum shapes of SEP-1330.
    assert_mcp(&json!({
        "type": "object",
        "properties": {
            "a": {"type": "string", "enum": ["x", "y"], "default": "x"},
            "b": {"type": "string", "oneOf": [{"const": "x", "title": "X"}]},
            "c": {"type": "string", "enum": ["x"], "enumNames": ["X"]},
            "d": {"type": "array", "items": {"type": "string", "enum": ["x"]}, "minItems": 1, "default": ["x"]},
            "e": {"type": "array", "items": {"anyOf": [{"const": "x", "title": "X"}]}, "maxItems": 1},
        },
        "required": ["a"],
    }));
}

fn written(schema: &Schema) -> serde_json::Value {
    json::to_serde(&form_schema(schema).expect("a form-able schema is written"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// The form of every generated form-able schema is an MCP `requestedSchema`.
    #[test]
    fn forms_are_mcp_forms(schema in form_schema_strategy()) {
        let form = written(&schema);
        let violations = mcp_violations(&form);
        prop_assert!(violations.is_empty(), "{violations:#?}\n{form:#}");
    }

    /// What a form admits, the schema it was written from accepts.
    #[test]
    fn form_answers_are_accepted(
        (schema, form, answer) in form_schema_strategy().prop_flat_map(|schema| {
            let form = written(&schema);
            let answer = answer(&form);
            (Just(schema), Just(form), answer)
        })
    ) {
        let as_json_schema = jsonschema::draft202012::new(&form).expect("a form is a JSON Schema");
        prop_assert!(as_json_schema.is_valid(&answer), "the generator follows the form: {answer}\n{form:#}");
        let ours = json::from_serde(&answer).unwrap();
        prop_assert!(
            validate::validate_labeled(&schema, &ours, "answer", true).is_ok(),
            "{answer} fits the form but not the schema\n{form:#}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// a typed form, round-tripped

fn default_attempts() -> u32 {
    3
}

/// Every kind of field at once.
#[derive(ToolSchema, Deserialize, Serialize, Debug, PartialEq)]
pub(crate) struct Everything {
    /// Free text.
    text: String,
    #[schema(length(min = 1, max = 4))]
    code: String,
    small: u8,
    #[schema(range(min = -5, max = 5))]
    offset: i32,
    big: u64,
    ratio: f64,
    flag: bool,
    color: Color,
    size: Size,
    priority: Priority,
    colors: Vec<Color>,
    #[schema(length(max = 2))]
    sizes: Vec<Size>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    nickname: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    limit: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    shade: Option<Color>,
    #[serde(default = "default_attempts")]
    attempts: u32,
}

#[test]
fn the_typed_form_is_an_mcp_form() {
    let form = form_of::<Everything>();
    assert_mcp(&form);
    assert_eq!(form["properties"]["attempts"]["default"], json!(3));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// An answer generated from `Everything`'s form reads into an `Everything` that
    /// serializes back to the answer (a field left out has its default).
    #[test]
    fn typed_answers_round_trip(answer in answer(&form_of::<Everything>())) {
        let read = read_form_answer::<Everything>(&json::from_serde(&answer).unwrap());
        prop_assert!(read.is_ok(), "{read:?} for {answer}");
        let back = serde_json::to_value(read.unwrap()).unwrap();
        let (answer, back) = (answer.as_object().unwrap(), back.as_object().unwrap());
        for (key, value) in answer {
            prop_assert_eq!(Some(value), back.get(key), "{}", key);
        }
        for (key, value) in back {
            if !answer.contains_key(key) {
                prop_assert_eq!(key.as_str(), "attempts");
                prop_assert_eq!(value, &json!(3));
            }
        }
    }
}
