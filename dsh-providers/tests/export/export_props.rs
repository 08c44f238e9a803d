//! Exports of random schemas: every target's output passes its provider's checker, and
//! values accepted by an export are accepted by our validator where the export claims to
//! have lost nothing that narrows (the round trips the issue names):
//!
//! - the lossless forms (Gemini `parametersJsonSchema`, MCP, non-strict OpenAI and
//!   Anthropic) accept exactly what our validator accepts (our validator also takes `null`
//!   for an optional property: "omitted");
//! - a value valid under the strict OpenAI form, with explicit `null`s for optional
//!   properties, passes our validator, unless the export reported a dropped constraint
//!   or a `oneOf` widened to `anyOf`;
//! - a value valid under the Gemini OpenAPI form is valid under ours when the export
//!   reported no warning.
//!
//! `PROPTEST_CASES` raises the case count.

use std::sync::Arc;

use dsh_providers::export::{self, Target, check};
use dsh_runtime::ToolDefinition;
use dsh_runtime::json::{self, Value};
use dsh_runtime::schema::{Additional, Property, Schema};
use dsh_runtime::validate::validate_labeled;
use proptest::prelude::*;
use proptest::strategy::ValueTree;

use crate::random_schema::*;

/// A parameter root: an object (open or closed) with random properties.
fn params_strategy() -> impl Strategy<Value = Schema> {
    (
        proptest::collection::vec((schema_strategy(), any::<bool>()), 0..5),
        any::<bool>(),
    )
        .prop_map(|(props, open)| {
            let properties = props
                .into_iter()
                .enumerate()
                .map(|(i, (s, req))| Property::new(["p", "q", "items", "x y", "n"][i], s, req))
                .collect();
            Schema::object(
                properties,
                if open {
                    Additional::Open
                } else {
                    Additional::Closed
                },
            )
        })
}

fn tool(params: Schema, output: Schema) -> ToolDefinition {
    ToolDefinition::new(
        "random_tool",
        "A random tool.",
        Arc::new(params),
        Arc::new(output),
    )
}

fn schema_of_entry(target: Target, entry: &Value) -> Option<Value> {
    let v = match target {
        Target::OpenAiChat | Target::OpenAiChatStrict => entry.get("function")?.get("parameters"),
        Target::Anthropic | Target::AnthropicStrict => entry.get("input_schema"),
        Target::GeminiJsonSchema => entry.get("parametersJsonSchema"),
        Target::Mcp2025_11_25 | Target::Mcp2026_07_28 => entry.get("inputSchema"),
        _ => entry.get("parameters"),
    };
    v.cloned()
}

fn validator(schema: &serde_json::Value) -> jsonschema::Validator {
    jsonschema::validator_for(schema).expect("an exported schema compiles as JSON Schema")
}

fn ours(schema: &Schema, v: &serde_json::Value) -> bool {
    let v = json::from_serde(v).expect("lossless");
    validate_labeled(schema, &v, "arguments", true).is_ok()
}

/// The Gemini OpenAPI form read back as JSON Schema: lower-case types, `nullable` as a
/// `null` alternative, `example` dropped.
fn openapi_to_json_schema(v: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value as J;
    match v {
        J::Object(o) => {
            let mut out = serde_json::Map::new();
            for (k, val) in o {
                match k.as_str() {
                    "type" => {
                        out.insert(
                            k.clone(),
                            J::from(val.as_str().unwrap_or("").to_lowercase()),
                        );
                    }
                    "example" | "nullable" => {}
                    "properties" => {
                        let props = val
                            .as_object()
                            .map(|p| {
                                p.iter()
                                    .map(|(n, s)| (n.clone(), openapi_to_json_schema(s)))
                                    .collect::<serde_json::Map<_, _>>()
                            })
                            .unwrap_or_default();
                        out.insert(k.clone(), J::Object(props));
                    }
                    "items" => {
                        out.insert(k.clone(), openapi_to_json_schema(val));
                    }
                    "anyOf" => {
                        let list = val
                            .as_array()
                            .map(|l| l.iter().map(openapi_to_json_schema).collect())
                            .unwrap_or_default();
                        out.insert(k.clone(), J::Array(list));
                    }
                    _ => {
                        out.insert(k.clone(), val.clone());
                    }
                }
            }
            if o.get("nullable") == Some(&J::Bool(true)) {
                let inner = J::Object(out);
                return serde_json::json!({"anyOf": [inner, {"type": "null"}]});
            }
            J::Object(out)
        }
        other => other.clone(),
    }
}

/// Values drawn from an exported JSON Schema (strict OpenAI or converted Gemini): every
/// property present (optional ones often `null`), branches and types chosen at random.
fn sample(schema: &serde_json::Value, depth: u32) -> BoxedStrategy<serde_json::Value> {
    use serde_json::Value as J;
    let leaf_any = || {
        prop_oneof![
            Just(J::Null),
            any::<bool>().prop_map(J::Bool),
            (-5i64..5).prop_map(J::from)
        ]
        .boxed()
    };
    if depth > 12 {
        return leaf_any();
    }
    let Some(o) = schema.as_object() else {
        return leaf_any();
    };
    if let Some(J::Array(e)) = o.get("enum") {
        return proptest::sample::select(e.clone()).boxed();
    }
    if let Some(c) = o.get("const") {
        return Just(c.clone()).boxed();
    }
    if let Some(J::Array(branches)) = o.get("anyOf") {
        let s: Vec<BoxedStrategy<J>> = branches.iter().map(|b| sample(b, depth + 1)).collect();
        return proptest::strategy::Union::new(s).boxed();
    }
    let types: Vec<String> = match o.get("type") {
        Some(J::String(t)) => vec![t.clone()],
        Some(J::Array(l)) => l
            .iter()
            .filter_map(|t| t.as_str().map(str::to_string))
            .collect(),
        _ => return leaf_any(),
    };
    let per_type: Vec<BoxedStrategy<J>> = types
        .iter()
        .map(|t| match t.as_str() {
            "null" => Just(J::Null).boxed(),
            "boolean" => any::<bool>().prop_map(J::Bool).boxed(),
            "integer" => {
                let lo = o.get("minimum").and_then(J::as_i64).unwrap_or(-60);
                let hi = o.get("maximum").and_then(J::as_i64).unwrap_or(60);
                (lo.min(hi)..=hi.max(lo)).prop_map(J::from).boxed()
            }
            "number" => {
                let lo = o.get("minimum").and_then(J::as_f64).unwrap_or(-60.0);
                let hi = o.get("maximum").and_then(J::as_f64).unwrap_or(60.0);
                (lo.min(hi)..=hi.max(lo)).prop_map(J::from).boxed()
            }
            "string" => prop_oneof![
                "[a-z]{0,6}",
                "x[a-z0-9]{0,4}",
                "[0-9]{2,3}",
                "ab",
                Just(String::new())
            ]
            .prop_map(J::from)
            .boxed(),
            "array" => {
                let item = o
                    .get("items")
                    .map_or_else(leaf_any, |i| sample(i, depth + 1));
                let min = o.get("minItems").and_then(J::as_u64).unwrap_or(0) as usize;
                let max = o
                    .get("maxItems")
                    .and_then(J::as_u64)
                    .map_or(min + 3, |m| m as usize);
                proptest::collection::vec(item, min..=max.max(min))
                    .prop_map(J::Array)
                    .boxed()
            }
            "object" => {
                let props: Vec<(String, BoxedStrategy<J>)> = o
                    .get("properties")
                    .and_then(J::as_object)
                    .map(|p| {
                        p.iter()
                            .map(|(k, s)| (k.clone(), sample(s, depth + 1)))
                            .collect()
                    })
                    .unwrap_or_default();
                let required: Vec<String> = o
                    .get("required")
                    .and_then(J::as_array)
                    .map(|r| {
                        r.iter()
                            .filter_map(|x| x.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                let parts: Vec<BoxedStrategy<Option<(String, J)>>> = props
                    .into_iter()
                    .map(|(k, s)| {
                        if required.contains(&k) {
                            s.prop_map(move |v| Some((k.clone(), v))).boxed()
                        } else {
                            proptest::option::of(s)
                                .prop_map(move |v| v.map(|v| (k.clone(), v)))
                                .boxed()
                        }
                    })
                    .collect();
                parts
                    .prop_map(|entries| J::Object(entries.into_iter().flatten().collect()))
                    .boxed()
            }
            _ => leaf_any(),
        })
        .collect();
    proptest::strategy::Union::new(per_type).boxed()
}

fn strict_case() -> impl Strategy<Value = (Schema, serde_json::Value, serde_json::Value)> {
    params_strategy().prop_flat_map(|params| {
        let e = export::export(
            [&tool(params.clone(), Schema::null())],
            Target::OpenAiResponsesStrict,
        );
        let narrowing_only = e.is_complete()
            && e.warnings
                .iter()
                .all(|w| w.lost.contains(" closed (additionalProperties: false)"));
        let exported = if narrowing_only {
            json::to_serde(&e.tools[0].definition["parameters"])
        } else {
            serde_json::json!({"type": "null"})
        };
        let values = sample(&exported, 0);
        (Just(params), Just(exported), values)
    })
}

fn gemini_case() -> impl Strategy<Value = (Schema, serde_json::Value, serde_json::Value)> {
    params_strategy().prop_flat_map(|params| {
        let e = export::export(
            [&tool(params.clone(), Schema::null())],
            Target::GeminiOpenApi,
        );
        let exported = if e.is_complete() && e.warnings.is_empty() {
            openapi_to_json_schema(&json::to_serde(
                &e.tools[0]
                    .definition
                    .get("parameters")
                    .cloned()
                    .unwrap_or(Value::Null),
            ))
        } else {
            serde_json::json!({"type": "null"})
        };
        let exported = if exported.is_null() {
            serde_json::json!({"type": "object"})
        } else {
            exported
        };
        let values = prop_oneof![
            sample(&exported, 0),
            conforming(&params).prop_map(|v| json::to_serde(&v))
        ];
        (Just(params), Just(exported), values)
    })
}

proptest! {
    #![proptest_config(cases(600))]

    #[test]
    fn every_export_passes_its_checker(params in params_strategy(), output in schema_strategy()) {
        let d = tool(params, output);
        for target in Target::ALL {
            let e = export::export([&d], target);
            let problems = check::check(target, &e.fragment());
            prop_assert!(problems.is_empty(), "{}: {:#?}\n{}", target, problems, e.to_pretty_string());
            // A refused tool says why, with a path.
            for err in &e.errors {
                prop_assert!(!err.reason.is_empty() && (err.tool.is_none() || !err.path.is_empty()));
            }
            // Byte-stable.
            prop_assert_eq!(e.to_pretty_string(), export::export([&d], target).to_pretty_string());
        }
    }

    #[test]
    fn lossless_forms_agree_with_our_validator(params in params_strategy(), miss in any::<bool>(), choice in any::<u8>(), repl in any_scalar()) {
        let d = tool(params.clone(), Schema::null());
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let value = conforming(&params).new_tree(&mut runner).map(|t| t.current()).unwrap_or(Value::Null);
        let value = if miss { mutate(value, choice, repl) } else { value };
        let v = json::to_serde(&value);
        let ours_ok = ours(&params, &v);
        for target in [Target::GeminiJsonSchema, Target::Mcp2025_11_25, Target::OpenAiResponses, Target::Anthropic] {
            let e = export::export([&d], target);
            prop_assert!(e.is_complete() && e.warnings.iter().all(|w| !w.path.starts_with("parameters")), "{}: {:?} {:?}", target, e.warnings, e.errors);
            let exported = json::to_serde(&schema_of_entry(target, &e.tools[0].definition).unwrap_or(Value::Null));
            let theirs = validator(&exported).is_valid(&v);
            // Valid under the export ⇒ valid under ours (ours also takes null for optionals).
            if theirs {
                prop_assert!(ours_ok, "{}: export accepts {} but ours rejects; schema {}", target, v, exported);
            }
        }
    }

    #[test]
    fn strict_openai_values_pass_our_validator((params, exported, v) in strict_case()) {
        if exported.get("type") != Some(&serde_json::json!("object")) || !validator(&exported).is_valid(&v) {
            return Ok(());
        }
        prop_assert!(ours(&params, &v), "strict export accepts {} but ours rejects; schema {}", v, exported);
    }

    #[test]
    fn gemini_openapi_values_pass_our_validator((params, exported, v) in gemini_case()) {
        if exported.get("type") != Some(&serde_json::json!("object")) || exported.get("properties").is_none() {
            return Ok(());
        }
        if validator(&exported).is_valid(&v) {
            prop_assert!(ours(&params, &v), "Gemini export accepts {} but ours rejects; schema {}", v, exported);
        }
    }
}

#[test]
fn the_round_trip_cases_are_not_all_filtered_out() {
    // The strict and Gemini cases above only test warning-free (or narrowing-only)
    // exports; make sure such exports are common among the generated shapes.
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut strict, mut gemini) = (0, 0);
    for _ in 0..300 {
        let params = params_strategy()
            .new_tree(&mut runner)
            .expect("tree")
            .current();
        let d = tool(params, Schema::null());
        let s = export::export([&d], Target::OpenAiResponsesStrict);
        if s.is_complete()
            && s.warnings
                .iter()
                .all(|w| w.lost.contains(" closed (additionalProperties: false)"))
        {
            strict += 1;
        }
        let g = export::export([&d], Target::GeminiOpenApi);
        if g.is_complete() && g.warnings.is_empty() {
            gemini += 1;
        }
    }
    assert!(
        strict > 30,
        "only {strict} of 300 strict exports are testable"
    );
    assert!(
        gemini > 30,
        "only {gemini} of 300 Gemini exports are testable"
    );
}
