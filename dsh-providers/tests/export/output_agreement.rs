//! What leaves the SDK is what it publishes: every output value our output validation
//! accepts ([`validate_output`], the function the pipeline runs on every success) is
//! valid, under standard Draft 2020-12 semantics (the `jsonschema` crate), against
//!
//! - the output schema's JSON Schema projection, and
//! - each MCP export's `outputSchema`, with the value as `structuredContent` (wrapped as
//!   `{"result": …}` where the 2025-11-25 export wraps it).
//!
//! Values are drawn as serde writes them: an optional property is absent, present, or
//! `null` (serde's `None` for an `Option` field without `skip_serializing_if`), then
//! sometimes mutated into a near miss. The null leniency may accept such a `null`;
//! validation must then leave it out, never send it.
//!
//! `PROPTEST_CASES` raises the case count.

use std::sync::Arc;

use dsh_providers::export::{self, Target};
use dsh_runtime::ToolDefinition;
use dsh_runtime::json::{self, Value};
use dsh_runtime::schema::{Additional, Kind, Property, Schema};
use dsh_runtime::validate::{is_valid, validate_output};
use proptest::prelude::*;
use proptest::strategy::ValueTree;

use crate::random_schema::*;

/// `value` with a `null` added, wherever `bits` says, for optional properties it lacks
/// (in the branch of a `oneOf` the value matches).
fn with_nulls(schema: &Schema, value: Value, bits: &mut u64) -> Value {
    fn take(bits: &mut u64) -> bool {
        let b = *bits & 1 == 1;
        *bits = bits.rotate_right(1);
        b
    }
    match (&schema.kind, value) {
        (Kind::Object(r), Value::Object(o)) => {
            let mut out = json::Object::new();
            for (k, v) in o.iter() {
                let v = match r.properties.iter().find(|p| p.name == k) {
                    Some(p) => with_nulls(&p.schema, v.clone(), bits),
                    None => v.clone(),
                };
                out.insert(k, v);
            }
            for p in r.properties.iter() {
                if !p.required && out.get(&p.name).is_none() && take(bits) {
                    out.insert(p.name.to_string(), Value::Null);
                }
            }
            Value::Object(out)
        }
        (Kind::Array(r), Value::Array(a)) => match &r.items {
            Some(item) => Value::from(
                a.iter()
                    .map(|x| with_nulls(item, x.clone(), bits))
                    .collect::<Vec<_>>(),
            ),
            None => Value::Array(a),
        },
        (Kind::OneOf(branches), v) => match branches.iter().find(|b| is_valid(b, &v)) {
            Some(b) => with_nulls(b, v, bits),
            None => v,
        },
        (_, v) => v,
    }
}

/// An output schema (any root, or an object root with a few properties, the common case)
/// and a value drawn for it as serde would write it.
fn case() -> impl Strategy<Value = (Schema, Value)> {
    let object_root = (
        proptest::collection::vec((schema_strategy(), any::<bool>()), 0..5),
        any::<bool>(),
    )
        .prop_map(|(props, open)| {
            let properties = props
                .into_iter()
                .enumerate()
                .map(|(i, (s, req))| {
                    Property::new(["before", "after", "items", "x y", "n"][i], s, req)
                })
                .collect();
            Schema::object(
                properties,
                if open {
                    Additional::Open
                } else {
                    Additional::Closed
                },
            )
        });
    prop_oneof![schema_strategy(), object_root].prop_flat_map(|s| {
        let base = conforming(&s);
        let s2 = s.clone();
        (base, any::<u64>(), any::<u8>(), any::<u8>(), any_scalar()).prop_map(
            move |(v, mut bits, miss, choice, repl)| {
                let v = with_nulls(&s2, v, &mut bits);
                let v = if miss % 4 == 0 {
                    mutate(v, choice, repl)
                } else {
                    v
                };
                (s2.clone(), v)
            },
        )
    })
}

fn draft2020(schema: &serde_json::Value) -> jsonschema::Validator {
    jsonschema::draft202012::new(schema).expect("a published schema compiles as Draft 2020-12")
}

fn tool(output: Schema) -> ToolDefinition {
    ToolDefinition::new(
        "random_tool",
        "A random tool.",
        Arc::new(Schema::object(Vec::new(), Additional::Closed)),
        Arc::new(output),
    )
}

/// The `outputSchema` the MCP export for `target` publishes for `def`.
fn mcp_output_schema(def: &ToolDefinition, target: Target) -> serde_json::Value {
    let e = export::export([def], target);
    let entry = e.tool(&def.name).expect("the tool is exported");
    json::to_serde(
        entry
            .get("outputSchema")
            .expect("an outputSchema is published"),
    )
}

proptest! {
    #![proptest_config(cases(3000))]

    #[test]
    fn every_output_we_accept_is_valid_as_published((schema, value) in case()) {
        let Ok(sent) = validate_output(&schema, value.clone()) else {
            return Ok(());
        };
        let sent_serde = json::to_serde(&sent);
        let projected = json::to_serde(&schema.to_json_schema());
        prop_assert!(
            draft2020(&projected).is_valid(&sent_serde),
            "sent {} is rejected by its projected schema {} (drawn: {})",
            sent, projected, value
        );
        let def = tool(schema.clone());
        for target in [Target::Mcp2025_11_25, Target::Mcp2026_07_28] {
            let published = mcp_output_schema(&def, target);
            let structured = json::to_serde(&export::mcp_structured_content(&schema, &sent, target));
            let validator = draft2020(&published);
            prop_assert!(
                validator.is_valid(&structured),
                "{:?}: structuredContent {} is rejected by outputSchema {}: {:?}",
                target, structured, published,
                validator.iter_errors(&structured).map(|e| e.to_string()).collect::<Vec<_>>()
            );
        }
        // Nothing was taken away that the schema needs: a value without lenient nulls is
        // sent as it is.
        if !has_lenient_null(&schema, &value) {
            prop_assert_eq!(&sent, &value);
        }
    }
}

/// The generator reaches the case the property is about: accepted values whose `null`s
/// had to be left out, and values sent unchanged.
#[test]
fn generator_yields_stripped_and_unchanged_outputs() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut stripped, mut unchanged, mut rejected) = (0, 0, 0);
    for _ in 0..2000 {
        let (schema, value) = case().new_tree(&mut runner).unwrap().current();
        match validate_output(&schema, value.clone()) {
            Ok(sent) if sent != value => stripped += 1,
            Ok(_) => unchanged += 1,
            Err(_) => rejected += 1,
        }
    }
    assert!(
        stripped > 50 && unchanged > 50 && rejected > 50,
        "stripped {stripped}, unchanged {unchanged}, rejected {rejected}"
    );
}

/// The case that broke validating clients: serde writes `None` as `null`, the schema of
/// an optional `before: string` does not admit it. The pipeline's value leaves it out.
#[test]
fn a_none_field_is_left_out_not_sent_as_null() {
    let schema = Schema::object(
        vec![
            Property::new("path", Schema::string(), true),
            Property::new("before", Schema::string(), false),
        ],
        Additional::Closed,
    );
    let value = json::parse(r#"{"path":"a.txt","before":null}"#).unwrap();
    let projected = json::to_serde(&schema.to_json_schema());
    // Standard JSON Schema rejects what serde wrote ...
    assert!(!draft2020(&projected).is_valid(&json::to_serde(&value)));
    // ... and accepts what is sent.
    let sent = validate_output(&schema, value).unwrap();
    assert_eq!(sent, json::parse(r#"{"path":"a.txt"}"#).unwrap());
    assert!(draft2020(&projected).is_valid(&json::to_serde(&sent)));
}

/// A `oneOf` that becomes ambiguous once a lenient `null` is left out is rejected, with a
/// message saying why: sending either form would break a validating client.
#[test]
fn an_output_ambiguous_once_nulls_are_left_out_is_rejected() {
    let branch = |name: &'static str| {
        Arc::new(Schema::object(
            vec![Property::new(name, Schema::string(), false)],
            Additional::Closed,
        ))
    };
    let schema = Schema::one_of(vec![branch("a"), branch("b")]);
    let e = validate_output(&schema, json::parse(r#"{"a":null}"#).unwrap()).unwrap_err();
    assert!(
        e.joined().contains("matched 2") && e.joined().contains("once the nulls"),
        "{}",
        e.joined()
    );
    // Given as written, each branch is unambiguous.
    assert!(validate_output(&schema, json::parse(r#"{"a":"x"}"#).unwrap()).is_ok());
}
