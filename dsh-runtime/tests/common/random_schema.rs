//! Random schemas from the whole vocabulary, values that conform to them, and near
//! misses: the generators the validator-agreement and export property tests share.
//! Included by both test binaries with `#[path]`; each uses only part of it.
#![allow(dead_code)]

use std::sync::Arc;

use dsh_runtime::json::{self, Value};
use dsh_runtime::schema::{Additional, Kind, Pattern, Property, Schema};
use proptest::prelude::*;
use proptest::test_runner::Config;

pub(crate) fn cases(default: u32) -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default);
    Config::with_cases(cases)
}

pub(crate) const PATTERNS: [&str; 4] = ["^[a-z]+$", "ab", "^x", "[0-9]{2}"];

pub(crate) fn leaf_schema() -> impl Strategy<Value = Schema> {
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

pub(crate) const NAMES: [&str; 5] = ["a", "b", "items", "x y", "n"];

pub(crate) fn schema_strategy() -> impl Strategy<Value = Schema> {
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

pub(crate) fn any_scalar() -> BoxedStrategy<Value> {
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
pub(crate) fn conforming(schema: &Schema) -> BoxedStrategy<Value> {
    if let Some(values) = &schema.enum_values {
        return proptest::sample::select(values.to_vec()).boxed();
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
    }
}

/// Apply a random near-miss mutation somewhere in the value.
pub(crate) fn mutate(v: Value, choice: u8, replacement: Value) -> Value {
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
pub(crate) fn has_lenient_null(schema: &Schema, v: &Value) -> bool {
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
