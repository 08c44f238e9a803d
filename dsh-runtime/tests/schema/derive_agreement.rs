//! Agreement of three verdicts on the corpus of derived types (`derive_support`): our
//! validator, the independent `jsonschema` crate on the enforced JSON Schema (the
//! published one with its hidden bounds shown, see `HiddenBounds`), and serde
//! deserializing into the Rust type. The published schema itself must accept every value
//! our validator accepts (hiding a bound only loosens the text).
//!
//! Values are generated from each type's [`Schema`] (conforming values, favouring bounds
//! and optional keys given as `null`) and then mutated into near misses (wrong types,
//! bounds off by one, missing and undeclared keys, strings too long). For every value `v`:
//!
//! - `jsonschema` accepts `v` => our validator accepts `v`;
//! - our validator accepts `v` => `jsonschema` accepts the normalized value (the documented
//!   null leniency: `null` for a property that is not required means "omitted", and
//!   normalization removes exactly those keys) and serde deserializes the normalized value.
//!
//! serde may accept more than the schema (closed objects are stricter than serde's
//! default of ignoring unknown keys), never less.
//!
//! CI runs a few hundred cases per type; for a longer campaign set `PROPTEST_CASES`, e.g.
//! `PROPTEST_CASES=20000 cargo test -p dsh-runtime --test schema derive_agreement --release`.

use crate::derive_support;

use dsh_runtime::json;
use dsh_runtime::schema::{Additional, HiddenBounds, Kind, Schema};
use dsh_runtime::validate::validate_labeled;
use proptest::prelude::*;
use proptest::strategy::Union;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{Map, Value as J, json};

/// Cases per corpus type (per strategy) unless `PROPTEST_CASES` says otherwise.
const DEFAULT_CASES: u32 = 500;

fn number(i: i128) -> J {
    if let Ok(u) = u64::try_from(i) {
        J::from(u)
    } else if let Ok(s) = i64::try_from(i) {
        J::from(s)
    } else {
        J::from(i as f64)
    }
}

/// Small arbitrary JSON for `json` nodes and open objects.
fn any_json() -> BoxedStrategy<J> {
    let leaf = prop_oneof![
        Just(J::Null),
        any::<bool>().prop_map(J::from),
        (-1000i64..1000).prop_map(J::from),
        "[a-z]{0,4}".prop_map(J::from),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..3).prop_map(J::from),
            proptest::collection::btree_map("[a-z]{1,3}", inner, 0..3)
                .prop_map(|m| J::Object(m.into_iter().collect())),
        ]
    })
    .boxed()
}

fn strip_anchors(p: &str) -> &str {
    let p = p.strip_prefix('^').unwrap_or(p);
    p.strip_suffix('$').unwrap_or(p)
}

/// Conforming values of `schema` (our validator must accept every one).
fn conforming(schema: &Schema) -> BoxedStrategy<J> {
    if let Some(values) = &schema.enum_values {
        let values: Vec<J> = values.iter().map(json::to_serde).collect();
        return proptest::sample::select(values).boxed();
    }
    if let Some(c) = &schema.const_value {
        return Just(json::to_serde(c)).boxed();
    }
    match &schema.kind {
        Kind::String(r) => {
            let min = r.min_length.unwrap_or(0) as usize;
            let max = r.max_length.map_or(min + 6, |m| m as usize).min(min + 6);
            let base = match &r.pattern {
                Some(p) => proptest::string::string_regex(strip_anchors(p.as_str()))
                    .expect("corpus patterns are generable"),
                None => proptest::string::string_regex(&format!("[a-zA-Z0-9 é😀]{{{min},{max}}}"))
                    .expect("valid regex"),
            };
            base.prop_filter("length bounds", move |s| {
                let n = s.chars().count();
                n >= min && n <= max.max(min)
            })
            .prop_map(J::from)
            .boxed()
        }
        Kind::Integer(r) => {
            let lo = r.minimum.unwrap_or(-1_000_000);
            let hi = r.maximum.unwrap_or(1_000_000);
            prop_oneof![Just(lo), Just(hi), lo..=hi]
                .prop_map(number)
                .boxed()
        }
        Kind::Number(r) => {
            let lo = r.minimum.unwrap_or(-1e6);
            let hi = r.maximum.unwrap_or(1e6);
            prop_oneof![Just(lo), Just(hi), lo..=hi]
                .prop_map(|f| {
                    // Integral values stay integers, as a model would write them.
                    if f.fract() == 0.0 && f.abs() < 1e15 {
                        number(f as i128)
                    } else {
                        J::from(f)
                    }
                })
                .boxed()
        }
        Kind::Boolean => any::<bool>().prop_map(J::from).boxed(),
        Kind::Null => Just(J::Null).boxed(),
        Kind::Json => any_json(),
        Kind::Array(r) => {
            let min = r.min_items.unwrap_or(0) as usize;
            let max = r.max_items.map_or(min + 3, |m| m as usize).min(min + 3);
            let item = r.items.as_ref().map_or_else(any_json, |s| conforming(s));
            proptest::collection::vec(item, min..=max)
                .prop_map(J::from)
                .boxed()
        }
        Kind::Object(r) => {
            let mut parts: Vec<BoxedStrategy<Vec<(String, J)>>> = Vec::new();
            for p in &r.properties {
                let name = p.name.to_string();
                let value = conforming(&p.schema);
                if p.required {
                    parts.push(value.prop_map(move |v| vec![(name.clone(), v)]).boxed());
                } else {
                    // Absent, `null` (omitted, by the leniency), or a value.
                    let n1 = name.clone();
                    parts.push(
                        prop_oneof![
                            2 => Just(Vec::new()),
                            1 => Just(vec![(n1, J::Null)]),
                            3 => value.prop_map(move |v| vec![(name.clone(), v)]),
                        ]
                        .boxed(),
                    );
                }
            }
            match &r.additional {
                Additional::Closed => {}
                Additional::Open | Additional::Ignored => parts.push(
                    proptest::option::of(any_json())
                        .prop_map(|v| v.map(|v| ("x-extra".to_string(), v)).into_iter().collect())
                        .boxed(),
                ),
                Additional::Schema(s) => parts.push(
                    proptest::collection::vec(conforming(s), 0..3)
                        .prop_map(|vs| {
                            vs.into_iter()
                                .enumerate()
                                .map(|(i, v)| (format!("x-extra-{i}"), v))
                                .collect()
                        })
                        .boxed(),
                ),
            }
            parts
                .prop_map(|parts| {
                    let mut m = Map::new();
                    for (k, v) in parts.into_iter().flatten() {
                        m.insert(k, v);
                    }
                    J::Object(m)
                })
                .boxed()
        }
        Kind::OneOf(branches) => Union::new(branches.iter().map(|b| conforming(b))).boxed(),
    }
}

/// Every node of a value, in pre-order, as a path of keys/indices.
fn paths(v: &J, at: &mut Vec<PathSeg>, out: &mut Vec<Vec<PathSeg>>) {
    out.push(at.clone());
    match v {
        J::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                at.push(PathSeg::Index(i));
                paths(item, at, out);
                at.pop();
            }
        }
        J::Object(m) => {
            for (k, item) in m {
                at.push(PathSeg::Key(k.clone()));
                paths(item, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

#[derive(Clone, Debug)]
enum PathSeg {
    Key(String),
    Index(usize),
}

fn node_mut<'a>(v: &'a mut J, path: &[PathSeg]) -> Option<&'a mut J> {
    let mut cur = v;
    for seg in path {
        cur = match (seg, cur) {
            (PathSeg::Key(k), J::Object(m)) => m.get_mut(k)?,
            (PathSeg::Index(i), J::Array(a)) => a.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// A near miss: one mutation at one node, both picked by `seed`.
fn mutate(mut v: J, seed: u64) -> J {
    let mut all = Vec::new();
    paths(&v, &mut Vec::new(), &mut all);
    let path = &all[(seed % all.len() as u64) as usize];
    let op = (seed / all.len() as u64) % 8;
    let Some(node) = node_mut(&mut v, path) else {
        return v;
    };
    let replacements = [
        J::Null,
        json!(true),
        json!(0),
        json!(-1),
        json!(1.5),
        json!(""),
        json!("zzz"),
        json!([]),
        json!({}),
    ];
    let generic = replacements[(seed / 7 % replacements.len() as u64) as usize].clone();
    match (op, &mut *node) {
        (0 | 1, J::Number(n)) => {
            let delta = if op == 0 { 1 } else { -1 };
            *node = match (n.as_i64(), n.as_u64(), n.as_f64()) {
                (Some(i), _, _) => number(i as i128 + delta),
                (None, Some(u), _) => number(u as i128 + delta),
                (_, _, Some(f)) => J::from(f + delta as f64 * 0.75),
                _ => generic,
            }
        }
        (2, J::Number(n)) => {
            *node = match n.as_f64() {
                Some(f) => J::from(f * 3.0 + 0.5),
                None => generic,
            }
        }
        (0 | 1, J::String(s)) => {
            if op == 0 {
                s.push_str("xxxxxxxxxx");
            } else {
                s.clear();
            }
        }
        (2, J::String(s)) => s.insert(0, '#'),
        (0, J::Object(m)) => {
            if let Some(k) = m.keys().nth((seed / 11) as usize % m.len().max(1)).cloned() {
                m.remove(&k);
            }
        }
        (1, J::Object(m)) => {
            m.insert("unexpected".into(), json!(1));
        }
        (2, J::Object(m)) => {
            if let Some(k) = m.keys().nth((seed / 11) as usize % m.len().max(1)).cloned() {
                m.insert(k, J::Null);
            }
        }
        (0, J::Array(a)) => {
            if let Some(last) = a.last().cloned() {
                a.push(last);
            } else {
                a.push(json!(1));
            }
        }
        (1, J::Array(a)) => {
            a.pop();
        }
        _ => *node = generic,
    }
    v
}

fn integral_floats_as_integers(v: J) -> J {
    match v {
        J::Number(n) if n.is_f64() => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && (-(2f64.powi(63))..2f64.powi(64)).contains(&f) => {
                number(f as i128)
            }
            _ => J::Number(n),
        },
        J::Array(items) => J::Array(items.into_iter().map(integral_floats_as_integers).collect()),
        J::Object(m) => J::Object(
            m.into_iter()
                .map(|(k, v)| (k, integral_floats_as_integers(v)))
                .collect(),
        ),
        v => v,
    }
}

struct Checker {
    name: &'static str,
    schema: std::sync::Arc<Schema>,
    validator: jsonschema::Validator,
    published: jsonschema::Validator,
    deserialize: fn(J) -> Result<(), String>,
}

impl Checker {
    fn check(&self, value: &J) -> Result<bool, TestCaseError> {
        let ours_input =
            json::from_serde(value).map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        let ours = validate_labeled(&self.schema, &ours_input, "value", true);
        let js = self.validator.is_valid(value);
        let name = self.name;
        match ours {
            Err(violations) => {
                prop_assert!(
                    !js,
                    "{name}: jsonschema accepts {value} but our validator rejects it: {violations:?}"
                );
                Ok(false)
            }
            Ok(validated) => {
                let normalized = validated.normalized(&self.schema, &ours_input);
                prop_assert!(
                    validate_labeled(&self.schema, &normalized, "value", true).is_ok(),
                    "{name}: the normalized form of {value} does not validate"
                );
                let normalized = json::to_serde(&normalized);
                prop_assert!(
                    self.validator.is_valid(&normalized),
                    "{name}: our validator accepts {value} but jsonschema rejects its normalized form {normalized}"
                );
                prop_assert!(
                    self.published.is_valid(&normalized),
                    "{name}: our validator accepts {value} but the published schema rejects {normalized}"
                );
                // The pipeline turns integral floats into integers before typed
                // deserialization (the validator accepts `2.0` as an integer; serde does not).
                let typed = integral_floats_as_integers(normalized.clone());
                if let Err(e) = (self.deserialize)(typed) {
                    return Err(TestCaseError::fail(format!(
                        "{name}: our validator accepts {value} but serde rejects {normalized}: {e}"
                    )));
                }
                Ok(true)
            }
        }
    }
}

fn config() -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(DEFAULT_CASES);
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

fn checkers() -> Vec<Checker> {
    derive_support::corpus()
        .into_iter()
        .map(|e| {
            let compile = |schema: &Schema| {
                let text = json::to_serde(&schema.to_json_schema());
                jsonschema::validator_for(&text).unwrap_or_else(|err| {
                    panic!("{}: jsonschema rejects the schema: {err}", e.name)
                })
            };
            Checker {
                name: e.name,
                validator: compile(&enforced(&e.schema)),
                published: compile(&e.schema),
                schema: e.schema,
                deserialize: e.deserialize,
            }
        })
        .collect()
}

/// `schema` with every hidden bound published: the rules the validator enforces.
fn enforced(schema: &Schema) -> Schema {
    let mut s = schema.clone();
    let shown = |s: &std::sync::Arc<Schema>| std::sync::Arc::new(enforced(s));
    match &mut s.kind {
        Kind::Integer(r) => r.hidden = HiddenBounds::default(),
        Kind::Number(r) => r.hidden = HiddenBounds::default(),
        Kind::Array(r) => r.items = r.items.as_ref().map(shown),
        Kind::Object(r) => {
            for p in &mut r.properties {
                p.schema = shown(&p.schema);
            }
            if let Additional::Schema(a) = &mut r.additional {
                *a = shown(a);
            }
        }
        Kind::OneOf(branches) => {
            for b in branches.iter_mut() {
                *b = shown(b);
            }
        }
        _ => {}
    }
    s
}

#[test]
fn conforming_values_agree() {
    for c in checkers() {
        let mut runner = TestRunner::new(config());
        runner
            .run(&conforming(&c.schema), |v| {
                let accepted = c.check(&v)?;
                prop_assert!(accepted, "{}: generated value {v} does not conform", c.name);
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{}: {e}", c.name));
    }
}

#[test]
fn near_misses_agree() {
    for c in checkers() {
        let mut runner = TestRunner::new(config());
        let rejected = std::cell::Cell::new(0u32);
        runner
            .run(&(conforming(&c.schema), any::<u64>()), |(v, seed)| {
                if !c.check(&mutate(v, seed))? {
                    rejected.set(rejected.get() + 1);
                }
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{}: {e}", c.name));
        // The mutations must actually produce invalid values, or this test proves little.
        assert!(
            rejected.get() > 0,
            "{}: no mutation produced an invalid value",
            c.name
        );
    }
}

#[test]
fn mutations_change_values() {
    let v = json!({"a": [1, "x"], "b": {"c": 2.5}});
    let mut changed = 0;
    for seed in 0..200 {
        if mutate(v.clone(), seed) != v {
            changed += 1;
        }
    }
    assert!(
        changed > 150,
        "only {changed} of 200 mutations changed the value"
    );
}
