//! Agreement, proven differentially.
//!
//! 1. Generated schemas from the whole vocabulary, with conforming and near-miss values:
//!    our validator and the independent `jsonschema` crate (on the projected schema)
//!    give the same verdict, except where a value relies on the documented null
//!    leniency (`null` for a property that is not required means "omitted").
//! 2. For the std `ToolSchema` impls: every value our validator accepts deserializes with
//!    serde into the Rust type the schema came from.
//!
//! Case counts default to a few thousand per property; run a longer campaign with
//! `PROPTEST_CASES=200000 cargo test --release -p dsh-runtime --test validate_agreement`.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;

use dsh_runtime::json::{self, Value};
use dsh_runtime::schema::{Additional, Kind, Pattern, Property, Schema, ToolSchema};
use dsh_runtime::validate::validate_labeled;
use proptest::prelude::*;
use proptest::test_runner::Config;

fn cases(default: u32) -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default);
    Config::with_cases(cases)
}

const PATTERNS: [&str; 4] = ["^[a-z]+$", "ab", "^x", "[0-9]{2}"];

fn leaf_schema() -> impl Strategy<Value = Schema> {
    prop_oneof![
        (
            proptest::option::of(0u64..4),
            proptest::option::of(0u64..6),
            proptest::option::of(0usize..PATTERNS.len())
        )
            .prop_map(|(min, max, pat)| {
                let (min, max) = match (min, max) {
                    (Some(a), Some(b)) if a > b => (Some(b), Some(a)),
                    x => x,
                };
                let mut s = Schema::string().with_length(min, max);
                if let Some(p) = pat {
                    s = s.with_pattern(Pattern::new(PATTERNS[p]).unwrap());
                }
                s
            }),
        (
            proptest::option::of(-50i64..50),
            proptest::option::of(-50i64..50)
        )
            .prop_map(|(a, b)| {
                let (a, b) = match (a, b) {
                    (Some(x), Some(y)) if x > y => (Some(y), Some(x)),
                    x => x,
                };
                Schema::integer_range(a.map(i128::from), b.map(i128::from))
            }),
        (
            proptest::option::of(-50.0f64..50.0),
            proptest::option::of(-50.0f64..50.0)
        )
            .prop_map(|(a, b)| {
                let (a, b) = match (a, b) {
                    (Some(x), Some(y)) if x > y => (Some(y), Some(x)),
                    x => x,
                };
                Schema::number_range(a, b)
            }),
        Just(Schema::boolean()),
        Just(Schema::null()),
        Just(Schema::json()),
        Just(Schema::string_enum(["fast", "slow", "x"])),
        Just(Schema::integer().with_enum(vec![Value::from(1u64), Value::from(-3i64)])),
        Just(Schema::string_const("x")),
        Just(Schema::boolean().with_const(Value::Bool(true))),
    ]
}

const NAMES: [&str; 5] = ["a", "b", "items", "x y", "n"];

fn schema_strategy() -> impl Strategy<Value = Schema> {
    leaf_schema().prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            (
                proptest::option::of(inner.clone()),
                proptest::option::of(0u64..3),
                proptest::option::of(0u64..4)
            )
                .prop_map(|(items, min, max)| {
                    let (min, max) = match (min, max) {
                        (Some(a), Some(b)) if a > b => (Some(b), Some(a)),
                        x => x,
                    };
                    Schema::array(items.map(Arc::new)).with_length(min, max)
                }),
            (
                proptest::collection::vec((inner.clone(), any::<bool>()), 0..4),
                0u8..3,
                inner.clone()
            )
                .prop_map(|(props, open, extra)| {
                    let properties = props
                        .into_iter()
                        .enumerate()
                        .map(|(i, (s, req))| Property::new(NAMES[i], s, req))
                        .collect();
                    let additional = match open {
                        0 => Additional::Closed,
                        1 => Additional::Open,
                        _ => Additional::Schema(Arc::new(extra)),
                    };
                    Schema::object(properties, additional)
                }),
            proptest::collection::vec(inner, 2..4)
                .prop_map(|b| Schema::one_of(b.into_iter().map(Arc::new).collect())),
        ]
    })
}

fn any_scalar() -> BoxedStrategy<Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-60i64..60).prop_map(Value::from),
        (-60.0f64..60.0).prop_map(|f| Value::Number(json::Number::from_f64(f).unwrap())),
        "[a-z0-9]{0,5}".prop_map(Value::from),
        Just(Value::from("x")),
        Just(Value::from("fast")),
    ]
    .boxed()
}

/// A value built to conform to `schema` (it may still miss, e.g. a random string versus a
/// pattern: that only adds near-misses).
fn conforming(schema: &Schema) -> BoxedStrategy<Value> {
    if let Some(values) = &schema.enum_values {
        return proptest::sample::select(values.clone()).boxed();
    }
    if let Some(c) = &schema.const_value {
        return Just(c.clone()).boxed();
    }
    match &schema.kind {
        Kind::String(_) => prop_oneof!["[a-z]{0,6}", "x[a-z0-9]{0,4}", "[0-9]{2,3}", "ab"]
            .prop_map(Value::from)
            .boxed(),
        Kind::Integer(r) => {
            let lo = r.minimum.map_or(-60, |m| m as i64);
            let hi = r.maximum.map_or(60, |m| m as i64);
            (lo..=hi).prop_map(Value::from).boxed()
        }
        Kind::Number(r) => {
            let lo = r.minimum.unwrap_or(-60.0);
            let hi = r.maximum.unwrap_or(60.0);
            (lo..=hi)
                .prop_map(|f| Value::Number(json::Number::from_f64(f).unwrap()))
                .boxed()
        }
        Kind::Boolean => any::<bool>().prop_map(Value::Bool).boxed(),
        Kind::Null => Just(Value::Null).boxed(),
        Kind::Json | Kind::OneOf(_) if matches!(schema.kind, Kind::Json) => any_scalar(),
        Kind::OneOf(branches) => {
            let strategies: Vec<BoxedStrategy<Value>> =
                branches.iter().map(|b| conforming(b)).collect();
            proptest::strategy::Union::new(strategies).boxed()
        }
        Kind::Array(r) => {
            let item = r.items.as_ref().map_or_else(any_scalar, |s| conforming(s));
            let min = r.min_items.unwrap_or(0) as usize;
            let max = r.max_items.map_or(min + 3, |m| m as usize);
            proptest::collection::vec(item, min..=max.max(min))
                .prop_map(Value::from)
                .boxed()
        }
        Kind::Object(r) => {
            let mut parts: Vec<BoxedStrategy<Option<(String, Value)>>> = Vec::new();
            for p in &r.properties {
                let name = p.name.to_string();
                let v = conforming(&p.schema);
                if p.required {
                    parts.push(v.prop_map(move |v| Some((name.clone(), v))).boxed());
                } else {
                    parts.push(
                        proptest::option::of(v)
                            .prop_map(move |v| v.map(|v| (name.clone(), v)))
                            .boxed(),
                    );
                }
            }
            let extra: BoxedStrategy<Option<(String, Value)>> = match &r.additional {
                Additional::Schema(s) => proptest::option::of(conforming(s))
                    .prop_map(|v| v.map(|v| ("extra".to_string(), v)))
                    .boxed(),
                Additional::Open => proptest::option::of(any_scalar())
                    .prop_map(|v| v.map(|v| ("extra".to_string(), v)))
                    .boxed(),
                _ => Just(None).boxed(),
            };
            parts.push(extra);
            parts
                .prop_map(|entries| {
                    let mut o = json::Object::new();
                    for (k, v) in entries.into_iter().flatten() {
                        o.insert(k, v);
                    }
                    Value::Object(o)
                })
                .boxed()
        }
        Kind::Json => any_scalar(),
        _ => any_scalar(),
    }
}

/// Apply a random near-miss mutation somewhere in the value.
fn mutate(v: Value, choice: u8, replacement: Value) -> Value {
    match (v, choice % 4) {
        (Value::Object(o), 0) => {
            // Drop the first key.
            let mut out = json::Object::new();
            for (k, val) in o.iter().skip(1) {
                out.insert(k, val.clone());
            }
            Value::Object(out)
        }
        (Value::Object(o), 1) => {
            let mut out = o.clone();
            out.insert("zz", replacement);
            Value::Object(out)
        }
        (Value::Object(o), _) if !o.is_empty() => {
            // Mutate the first entry's value, recursively.
            let mut out = json::Object::new();
            for (i, (k, val)) in o.iter().enumerate() {
                let val = if i == 0 {
                    mutate(val.clone(), choice / 4, replacement.clone())
                } else {
                    val.clone()
                };
                out.insert(k, val);
            }
            Value::Object(out)
        }
        (Value::Array(a), c) if !a.is_empty() && c < 2 => {
            let mut items = a.to_vec();
            items[0] = mutate(items[0].clone(), choice / 4, replacement);
            Value::from(items)
        }
        (Value::Array(a), 2) => {
            let mut items = a.to_vec();
            items.push(replacement);
            Value::from(items)
        }
        _ => replacement,
    }
}

/// Whether `v` has, somewhere `schema` reaches, a `null` for a property that is not
/// required and whose schema does not admit `null` (the documented leniency).
fn has_lenient_null(schema: &Schema, v: &Value) -> bool {
    match (&schema.kind, v) {
        (Kind::Object(r), Value::Object(o)) => {
            o.iter()
                .any(|(k, val)| match r.properties.iter().find(|p| p.name == k) {
                    Some(p) => {
                        (!p.required && val.is_null() && !p.schema.admits_null())
                            || has_lenient_null(&p.schema, val)
                    }
                    None => match &r.additional {
                        Additional::Schema(s) => has_lenient_null(s, val),
                        _ => false,
                    },
                })
        }
        (Kind::Array(r), Value::Array(a)) => r
            .items
            .as_ref()
            .is_some_and(|s| a.iter().any(|x| has_lenient_null(s, x))),
        (Kind::OneOf(b), _) => b.iter().any(|s| has_lenient_null(s, v)),
        _ => false,
    }
}

fn oracle(schema: &Schema, value: &Value) -> bool {
    let projected = json::to_serde(&schema.to_json_schema());
    let validator = jsonschema::validator_for(&projected).expect("projected schema compiles");
    validator.is_valid(&json::to_serde(value))
}

fn case() -> impl Strategy<Value = (Schema, Value)> {
    schema_strategy().prop_flat_map(|s| {
        let base = conforming(&s);
        let s2 = s.clone();
        (base, any::<bool>(), any::<u8>(), any_scalar()).prop_map(move |(v, miss, choice, repl)| {
            let v = if miss { mutate(v, choice, repl) } else { v };
            (s2.clone(), v)
        })
    })
}

proptest! {
    #![proptest_config(cases(3000))]

    #[test]
    fn validator_agrees_with_jsonschema((schema, value) in case()) {
        prop_assert!(schema.check("schema").is_ok(), "generated an invalid schema: {:?}", schema.check("schema"));
        let ours = validate_labeled(&schema, &value, "value", true);
        let theirs = oracle(&schema, &value);
        // The verdict pass and the reporting walk agree.
        let reported = dsh_runtime::validate::report_all(&schema, &value, "value", true);
        prop_assert_eq!(reported.is_empty(), ours.is_ok(), "passes disagree: {:?}", reported);
        if let Err(v) = &ours {
            prop_assert_eq!(v, &reported);
        }
        if ours.is_ok() != theirs {
            prop_assume!(!has_lenient_null(&schema, &value));
            prop_assert!(false, "disagreement: ours {:?}, jsonschema {} on schema {} value {}",
                ours, theirs, schema.to_json_schema(), value);
        }
        if let Ok(ok) = ours {
            // What serde will see is accepted by the strict oracle as well.
            let normalized = ok.normalized(&schema, &value);
            if !matches!(schema.kind, Kind::OneOf(_)) && !has_oneof_below(&schema) {
                prop_assert!(oracle(&schema, &normalized), "normalized value rejected: {}", normalized);
            }
        }
    }

    #[test]
    fn raw_import_round_trips_generated_schemas(schema in schema_strategy()) {
        let back = Schema::from_json_schema(&schema.to_json_schema());
        prop_assert_eq!(back.as_ref().ok(), Some(&schema));
    }
}

fn has_oneof_below(s: &Schema) -> bool {
    match &s.kind {
        Kind::OneOf(_) => true,
        Kind::Array(r) => r.items.as_ref().is_some_and(|i| has_oneof_below(i)),
        Kind::Object(r) => {
            r.properties.iter().any(|p| has_oneof_below(&p.schema))
                || matches!(&r.additional, Additional::Schema(x) if has_oneof_below(x))
        }
        _ => false,
    }
}

/// Values that probe the std impls: boundaries of every integer type, integral floats,
/// one-char strings, nested containers.
fn probe_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        prop_oneof![
            Just(-129i64),
            Just(-128),
            Just(-1),
            Just(0),
            Just(1),
            Just(127),
            Just(128),
            Just(255),
            Just(256),
            Just(65535),
            Just(65536),
            Just(i32::MAX as i64),
            Just(i32::MIN as i64),
            Just(i64::MIN),
            Just(i64::MAX),
            -1000i64..1000,
        ]
        .prop_map(Value::from),
        prop_oneof![Just(u64::MAX), Just(u32::MAX as u64 + 1)].prop_map(Value::from),
        prop_oneof![
            Just(1.5f64),
            Just(-0.5),
            Just(1e300),
            Just(3.5e38),
            Just(2.5e-3)
        ]
        .prop_map(|f| Value::Number(json::Number::from_f64(f).unwrap())),
        prop_oneof!["", "a", "é", "ab", "[a-z]{0,3}"].prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            proptest::collection::vec(("[a-c]", inner), 0..3).prop_map(|kv| {
                let mut o = json::Object::new();
                for (k, v) in kv {
                    o.insert(k, v);
                }
                Value::Object(o)
            }),
        ]
    })
}

fn accepted_values_deserialize<T>(v: &Value) -> Result<(), TestCaseError>
where
    T: ToolSchema + serde::de::DeserializeOwned + 'static,
{
    let schema = T::schema();
    if let Ok(ok) = validate_labeled(&schema, v, "value", true) {
        let normalized = ok.normalized(&schema, v);
        let ours = json::from_value::<T>(&normalized);
        prop_assert!(
            ours.is_ok(),
            "{} accepted {} but serde (json::from_value) rejected it: {:?}",
            std::any::type_name::<T>(),
            v,
            ours.err().map(|e| e.to_string())
        );
        let via_serde_json = serde_json::from_value::<T>(json::to_serde(&normalized));
        prop_assert!(
            via_serde_json.is_ok(),
            "{} accepted {} but serde_json rejected it",
            std::any::type_name::<T>(),
            v
        );
    }
    Ok(())
}

macro_rules! check_types {
    ($v:expr; $($t:ty),* $(,)?) => {{
        $( accepted_values_deserialize::<$t>(&$v)?; )*
    }};
}

proptest! {
    #![proptest_config(cases(3000))]

    #[test]
    fn std_impls_accept_only_what_serde_accepts(v in probe_value()) {
        check_types!(v;
            u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize,
            std::num::NonZeroU8, std::num::NonZeroU64,
            f32, f64, bool, char, String, Box<str>, PathBuf, (),
            Option<u8>, Option<Option<bool>>, Box<i16>,
            Vec<u16>, VecDeque<bool>, BTreeSet<i8>, HashSet<String>, [u8; 2], [Option<i8>; 1],
            BTreeMap<String, u8>, HashMap<String, Vec<bool>>,
            serde_json::Value, serde_json::Map<String, serde_json::Value>,
            Vec<Option<u8>>, Option<Vec<Option<char>>>,
        );
    }
}

/// Guards against a vacuous agreement test: the generator must produce plenty of both
/// accepted and rejected values.
#[test]
fn generator_yields_both_verdicts() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = case();
    let (mut ok, mut bad, mut lenient) = (0, 0, 0);
    for _ in 0..600 {
        let (schema, value) = strategy.new_tree(&mut runner).unwrap().current();
        if has_lenient_null(&schema, &value) {
            lenient += 1;
        }
        if validate_labeled(&schema, &value, "value", true).is_ok() {
            ok += 1;
        } else {
            bad += 1;
        }
    }
    assert!(ok > 150 && bad > 150, "accepted {ok}, rejected {bad}");
    assert!(lenient < 300, "too many lenient nulls: {lenient}");
}
