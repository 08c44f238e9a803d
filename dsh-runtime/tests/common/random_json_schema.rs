//! Random JSON Schema 2020-12 documents and JSON values (serde_json), for the tests of
//! verbatim schemas: every applicator and assertion keyword, same-document references
//! (by pointer and by anchor) to `$defs` entries that refer to nothing, and nothing the
//! runtime refuses. Shared by the runtime's and the providers' grouped test binaries.
#![allow(dead_code)]

use proptest::prelude::*;
use serde_json::json;

pub(crate) fn scalar() -> impl Strategy<Value = serde_json::Value> {
    prop_oneof![
        Just(json!(null)),
        any::<bool>().prop_map(|b| json!(b)),
        (-2i64..4).prop_map(|n| json!(n)),
        prop_oneof![Just(0.5), Just(2.5), Just(-1.5)].prop_map(|f| json!(f)),
        prop::sample::select(vec!["", "a", "ab", "b", "a1", "ä", "AB", "abc"])
            .prop_map(|s| json!(s)),
    ]
}

pub(crate) fn instance() -> impl Strategy<Value = serde_json::Value> {
    scalar().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::Array),
            prop::collection::vec(
                (prop::sample::select(vec!["a", "b", "c", "d", "B"]), inner),
                0..4
            )
            .prop_map(|members| {
                let mut o = serde_json::Map::new();
                for (k, v) in members {
                    o.insert(k.to_string(), v);
                }
                serde_json::Value::Object(o)
            }),
        ]
    })
}

/// A one-keyword (or one-family) fragment that needs no subschema.
pub(crate) fn leaf_fragment() -> impl Strategy<Value = serde_json::Value> {
    let types = prop::sample::select(vec![
        "null", "boolean", "object", "array", "number", "string", "integer",
    ]);
    prop_oneof![
        types.clone().prop_map(|t| json!({ "type": t })),
        (types.clone(), types).prop_filter_map("distinct", |(a, b)| {
            (a != b).then(|| json!({ "type": [a, b] }))
        }),
        scalar().prop_map(|c| json!({ "const": c })),
        prop::collection::vec(scalar(), 1..4).prop_map(|e| json!({ "enum": e })),
        (-1i64..3).prop_map(|n| json!({ "minimum": n })),
        (-1i64..3).prop_map(|n| json!({ "exclusiveMaximum": n })),
        prop_oneof![Just(json!(2)), Just(json!(0.5))].prop_map(|m| json!({ "multipleOf": m })),
        (0u64..3).prop_map(|n| json!({ "minLength": n })),
        (0u64..3).prop_map(|n| json!({ "maxLength": n })),
        prop::sample::select(vec!["^a", "b$", "[0-9]", "^(?=a)"])
            .prop_map(|p| json!({ "pattern": p })),
        (0u64..3).prop_map(|n| json!({ "minItems": n })),
        (0u64..3).prop_map(|n| json!({ "maxItems": n })),
        Just(json!({ "uniqueItems": true })),
        prop::collection::vec(prop::sample::select(vec!["a", "b", "c"]), 1..3).prop_map(|r| {
            let mut r: Vec<&str> = r;
            r.dedup();
            json!({ "required": r })
        }),
        (0u64..3).prop_map(|n| json!({ "minProperties": n })),
        (0u64..3).prop_map(|n| json!({ "maxProperties": n })),
        Just(json!({ "dependentRequired": { "a": ["b"] } })),
        prop::sample::select(vec!["#/$defs/d0", "#/$defs/d1", "#anchored"])
            .prop_map(|r| json!({ "$ref": r })),
        Just(json!({ "format": "email", "description": "annotations", "x-extension": [1] })),
    ]
}

pub(crate) fn schema() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        3 => prop::collection::vec(leaf_fragment(), 1..3).prop_map(merge),
        1 => prop_oneof![Just(json!(true)), Just(json!(false)), Just(json!({}))],
    ];
    leaf.prop_recursive(3, 20, 3, |inner| {
        let key = prop::sample::select(vec!["a", "b", "c"]);
        let fragment = prop_oneof![
            prop::collection::vec((key, inner.clone()), 1..3).prop_map(|props| {
                let mut o = serde_json::Map::new();
                for (k, s) in props {
                    o.insert(k.to_string(), s);
                }
                json!({ "properties": o })
            }),
            inner
                .clone()
                .prop_map(|s| json!({ "additionalProperties": s })),
            inner
                .clone()
                .prop_map(|s| json!({ "patternProperties": { "^a": s } })),
            inner.clone().prop_map(|s| json!({ "propertyNames": s })),
            inner.clone().prop_map(|s| json!({ "items": s })),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| json!({ "prefixItems": [a, b] })),
            (inner.clone(), 0u64..3, prop::option::of(0u64..3)).prop_map(|(s, min, max)| {
                let mut o = json!({ "contains": s, "minContains": min });
                if let Some(max) = max {
                    o["maxContains"] = json!(max);
                }
                o
            }),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| json!({ "allOf": [a, b] })),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| json!({ "anyOf": [a, b] })),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| json!({ "oneOf": [a, b] })),
            inner.clone().prop_map(|s| json!({ "not": s })),
            (
                inner.clone(),
                prop::option::of(inner.clone()),
                prop::option::of(inner.clone())
            )
                .prop_map(|(i, t, e)| {
                    let mut o = json!({ "if": i });
                    if let Some(t) = t {
                        o["then"] = t;
                    }
                    if let Some(e) = e {
                        o["else"] = e;
                    }
                    o
                }),
            inner
                .clone()
                .prop_map(|s| json!({ "dependentSchemas": { "a": s } })),
            Just(json!({ "properties": { "a": true }, "unevaluatedProperties": false })),
            leaf_fragment(),
        ];
        prop::collection::vec(fragment, 1..3).prop_map(merge)
    })
}

/// One schema object from several fragments (a later key replaces an earlier one).
pub(crate) fn merge(fragments: Vec<serde_json::Value>) -> serde_json::Value {
    let mut out = serde_json::Map::new();
    for f in fragments {
        if let serde_json::Value::Object(o) = f {
            out.extend(o);
        }
    }
    serde_json::Value::Object(out)
}

/// A document: the generated root, with the `$defs` its references name.
pub(crate) fn document() -> impl Strategy<Value = serde_json::Value> {
    (schema(), leaf_fragment(), leaf_fragment()).prop_map(|(root, d0, mut d1)| {
        // Definitions refer to nothing (so no loop can form through them).
        let strip = |v: &mut serde_json::Value| {
            if let Some(o) = v.as_object_mut() {
                o.remove("$ref");
            }
        };
        let mut d0 = d0;
        strip(&mut d0);
        strip(&mut d1);
        d1["$anchor"] = json!("anchored");
        let mut root = match root {
            serde_json::Value::Object(o) => o,
            other => {
                let mut o = serde_json::Map::new();
                o.insert("allOf".to_string(), json!([other]));
                o
            }
        };
        root.insert("$defs".to_string(), json!({ "d0": d0, "d1": d1 }));
        serde_json::Value::Object(root)
    })
}
