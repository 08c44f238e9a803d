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
//! `PROPTEST_CASES=200000 cargo test --release -p dsh-runtime --test schema validate_agreement`.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::path::PathBuf;

use dsh_runtime::json::{self, Value};
use dsh_runtime::validate::validate_labeled;
use dsh_runtime::{
    ToolSchema,
    schema::{Additional, Kind, Schema},
};
use proptest::prelude::*;

use crate::random_schema::*;

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
