//! The argument reader `#[tool]` generates (one pass over the members, each key matched
//! against the parameter names) against two references, on generated objects: members in
//! any order, optional ones missing, undeclared ones present, values of every type:
//!
//! - a lookup per parameter name (`Object::get`, then the parameter type's
//!   `Deserialize`, a missing member read as serde's derive reads a missing field): the
//!   same value or the same error, first error included;
//! - serde's derived `Deserialize` on a struct with the same fields: the same value
//!   whenever it succeeds (with an open root) or the same refusal of an undeclared key
//!   (with `deny_unknown_args`).
//!
//! The args struct's own `Deserialize` goes through the same reader and must agree too.
//! `PROPTEST_CASES` raises the case count.

use dsh_runtime::json::{self, DeError, Object, Value};
use dsh_runtime::{Tool, tool};
use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// Four parameters, two of them optional; the root is open.
#[tool]
async fn four(
    name: String,
    count: u64,
    r#type: Option<String>,
    flags: Option<Vec<bool>>,
) -> String {
    let _ = (count, r#type, flags);
    name
}

/// The same parameters; an undeclared key is an error.
#[tool(deny_unknown_args)]
async fn four_strict(
    name: String,
    count: u64,
    r#type: Option<String>,
    flags: Option<Vec<bool>>,
) -> String {
    let _ = (count, r#type, flags);
    name
}

/// No parameters, open root.
#[tool]
async fn none_open() -> u64 {
    0
}

/// No parameters; every key is undeclared.
#[tool(deny_unknown_args)]
async fn none_strict() -> u64 {
    0
}

#[derive(Deserialize, Serialize)]
struct FourMirror {
    name: String,
    count: u64,
    r#type: Option<String>,
    flags: Option<Vec<bool>>,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct FourStrictMirror {
    name: String,
    count: u64,
    r#type: Option<String>,
    flags: Option<Vec<bool>>,
}

const NAMES: [&str; 4] = ["name", "count", "type", "flags"];

/// One parameter read by name: the member, or serde's missing-field reading.
fn by_name<T: DeserializeOwned>(members: &Object, name: &'static str) -> Result<T, DeError> {
    match members.get(name) {
        Some(v) => json::from_value(v),
        None => T::deserialize(json::__private::MissingField(name)),
    }
}

/// The reference reader for `four` (and, with `deny`, `four_strict`): the object check,
/// the first undeclared key, then each parameter by name in declaration order.
fn reference(value: &Value, deny: bool) -> Result<String, String> {
    use serde::de::Error as _;
    let Value::Object(members) = value else {
        return Err("tool arguments must be a JSON object".into());
    };
    if deny && let Some(k) = members.keys().find(|k| !NAMES.contains(k)) {
        return Err(DeError::unknown_field(k, &NAMES).to_string());
    }
    let read = || -> Result<FourMirror, DeError> {
        Ok(FourMirror {
            name: by_name(members, "name")?,
            count: by_name(members, "count")?,
            r#type: by_name(members, "type")?,
            flags: by_name(members, "flags")?,
        })
    };
    read().map(|a| text(&a)).map_err(|e| e.to_string())
}

fn text<A: Serialize>(args: &A) -> String {
    json::to_value(args)
        .map(|v| v.to_string())
        .unwrap_or_else(|e| format!("unserializable: {e}"))
}

/// What the generated reader, and the args struct's `Deserialize`, make of `value`.
fn generated<T: Tool>(value: &Value) -> [Result<String, String>; 2]
where
    T::Args: Serialize,
{
    [
        T::args_from_json(value)
            .map(|a| text(&a))
            .map_err(|e| e.to_string()),
        json::from_value::<T::Args>(value)
            .map(|a| text(&a))
            .map_err(|e| e.to_string()),
    ]
}

fn serde_mirror<M: DeserializeOwned + Serialize>(value: &Value) -> Result<String, String> {
    json::from_value::<M>(value)
        .map(|a| text(&a))
        .map_err(|e| e.to_string())
}

/// A member value: mostly of a parameter's type, sometimes of another.
fn member_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        "[a-z/]{0,6}".prop_map(Value::from),
        (0u64..1000).prop_map(|n| Value::from(json::Number::from(n))),
        (-5i64..0).prop_map(|n| Value::from(json::Number::from(n))),
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        prop::collection::vec(any::<bool>().prop_map(Value::from), 0..3).prop_map(Value::from),
        prop::collection::vec(Just(Value::from("x")), 1..2).prop_map(Value::from),
    ]
}

/// A key: mostly a parameter's name, sometimes an undeclared one (near misses among them).
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(NAMES.to_vec()).prop_map(str::to_string),
        1 => prop::sample::select(vec!["nam", "names", "Type", "", "count "])
            .prop_map(str::to_string),
        1 => "[a-z]{1,5}",
    ]
}

/// An object of these members; a later duplicate of a key is dropped (an object's keys
/// are unique).
fn object(members: Vec<(String, Value)>) -> Value {
    let mut object = Object::new();
    for (k, v) in members {
        if !object.contains_key(&k) {
            object.insert(k, v);
        }
    }
    Value::Object(object)
}

/// Members of the parameters' types: the required ones mostly present, the optional
/// ones present or not, with no undeclared key or a few.
fn well_typed() -> impl Strategy<Value = Vec<(String, Value)>> {
    let member = |name: &'static str, value: BoxedStrategy<Value>, weight: u32| {
        prop::option::weighted(
            f64::from(weight) / 10.0,
            value.prop_map(move |v| (name.to_string(), v)),
        )
    };
    let string = "[a-z/]{0,6}".prop_map(Value::from).boxed();
    let count = (0u64..1000)
        .prop_map(|n| Value::from(json::Number::from(n)))
        .boxed();
    let kind = prop_oneof![Just(Value::Null), "[a-z]{1,3}".prop_map(Value::from)].boxed();
    let flags = prop::collection::vec(any::<bool>().prop_map(Value::from), 0..3)
        .prop_map(Value::from)
        .boxed();
    (
        member("name", string, 9),
        member("count", count, 9),
        member("type", kind, 5),
        member("flags", flags, 5),
        prop::collection::vec((key(), member_value()), 0..2),
    )
        .prop_map(|(a, b, c, d, extra)| {
            [a, b, c, d]
                .into_iter()
                .flatten()
                .chain(extra)
                .collect::<Vec<_>>()
        })
        .prop_shuffle()
}

/// Arguments: well-typed members, or any keys with any values, in any order; sometimes
/// not an object at all.
fn arguments() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => well_typed().prop_map(object),
        4 => prop::collection::vec((key(), member_value()), 0..7).prop_map(object),
        1 => member_value(),
    ]
}

proptest! {
    #[test]
    fn the_one_pass_reader_agrees_with_lookups_by_name_and_with_serde(value in arguments()) {
        let [ours, deserialized] = generated::<Four>(&value);
        let expected = reference(&value, false);
        prop_assert_eq!(&ours, &expected, "{}", value);
        prop_assert_eq!(&deserialized, &expected, "{}", value);
        if let Ok(serde) = serde_mirror::<FourMirror>(&value) {
            prop_assert_eq!(Ok(serde), ours, "{}", value);
        }
        let [ours, deserialized] = generated::<FourStrict>(&value);
        let expected = reference(&value, true);
        prop_assert_eq!(&ours, &expected, "{}", value);
        prop_assert_eq!(&deserialized, &expected, "{}", value);
        match serde_mirror::<FourStrictMirror>(&value) {
            Ok(serde) => prop_assert_eq!(Ok(serde), ours, "{}", value),
            // serde reports an undeclared key where it meets it, before any missing
            // field; so does the reader (it checks every key before reading).
            Err(e) if e.starts_with("unknown field") => prop_assert_eq!(Err(e), ours, "{}", value),
            Err(_) => {}
        }
    }

    #[test]
    fn a_tool_without_parameters_reads_any_object(value in arguments()) {
        use serde::de::Error as _;
        let [open, open_de] = generated::<NoneOpen>(&value);
        let [strict, strict_de] = generated::<NoneStrict>(&value);
        prop_assert_eq!(&open, &open_de);
        prop_assert_eq!(&strict, &strict_de);
        let not_object = Err("tool arguments must be a JSON object".to_string());
        let (open_expected, strict_expected) = match value.as_object() {
            None => (not_object.clone(), not_object),
            Some(members) => (
                Ok("{}".to_string()),
                match members.keys().next() {
                    None => Ok("{}".to_string()),
                    Some(k) => Err(DeError::unknown_field(k, &[]).to_string()),
                },
            ),
        };
        prop_assert_eq!(open, open_expected);
        prop_assert_eq!(strict, strict_expected);
    }
}

#[test]
fn the_generated_objects_cover_every_branch() {
    // Not vacuous: among the generated arguments, some read, some fail on a member's
    // type, some on a missing required member, some on an undeclared key.
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut ok, mut invalid, mut missing, mut unknown) = (0, 0, 0, 0);
    for _ in 0..500 {
        let value = arguments()
            .new_tree(&mut runner)
            .expect("a value")
            .current();
        match FourStrict::args_from_json(&value).map_err(|e| e.to_string()) {
            Ok(_) => ok += 1,
            Err(e) if e.starts_with("unknown field") => unknown += 1,
            Err(e) if e.starts_with("missing field") => missing += 1,
            Err(_) => invalid += 1,
        }
    }
    assert!(
        ok > 5 && invalid > 5 && missing > 5 && unknown > 5,
        "{ok} {invalid} {missing} {unknown}"
    );
}
