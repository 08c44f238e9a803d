//! Verbatim JSON Schema 2020-12 documents (`VerbatimSchema`): what is accepted and kept
//! byte for byte, what is refused (every problem, path-qualified), and what the runtime's
//! own validator concludes, checked against the `jsonschema` crate.

use dsh_runtime::json::{self, Value};
use dsh_runtime::schema::VerbatimSchema;

/// The input schema of the MCP conformance suite's `json-schema-2020-12` scenario
/// (`json_schema_2020_12_tool`), in the suite's key order.
pub(crate) const CONFORMANCE_FIXTURE: &str = r##"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},"additionalProperties":false}"##;

fn v(text: &str) -> Value {
    json::parse(text).expect("test JSON")
}

fn refused(text: &str) -> Vec<String> {
    match VerbatimSchema::parameters(v(text)) {
        Ok(s) => panic!("accepted: {s:?}"),
        Err(e) => {
            assert!(
                e.to_string().starts_with("unsupported JSON schema: "),
                "{e}"
            );
            e.violations().to_vec()
        }
    }
}

#[test]
fn the_conformance_fixture_is_kept_byte_for_byte() {
    let schema = VerbatimSchema::parameters(v(CONFORMANCE_FIXTURE)).expect("accepted");
    assert_eq!(schema.to_json_string(), CONFORMANCE_FIXTURE);
    assert_eq!(schema.as_value().to_string(), CONFORMANCE_FIXTURE);
    assert_eq!(schema.root_type(), Some("object"));
    assert!(!schema.is_recursive());
    // Every keyword of the fixture is one the runtime checks exactly.
    assert!(
        schema.is_checked_exactly(),
        "{:?}",
        schema.unchecked_keywords()
    );
    // References resolve to the schema they name, by pointer and by anchor.
    let by_pointer = schema.resolve("#/$defs/address").expect("pointer");
    let by_anchor = schema.resolve("#addressDef").expect("anchor");
    assert_eq!(by_pointer.pointer(), "/$defs/address");
    assert_eq!(by_anchor.pointer(), "/$defs/address");
    assert_eq!(by_anchor.fragment(), "#/$defs/address");
    assert_eq!(
        by_pointer.schema().get("$anchor"),
        Some(&Value::from("addressDef"))
    );
    assert!(schema.resolve("#/$defs/nope").is_none());
    assert!(schema.resolve("https://example.com/schema").is_none());
}

#[test]
fn key_order_and_number_text_are_kept() {
    // Keys in an order no projection would choose; numbers exactly (an integer beyond
    // 2^53 included), written as serde_json writes them.
    let text = r#"{"required":["b","a"],"type":"object","properties":{"b":{"maximum":1e+300,"multipleOf":0.25,"type":"number"},"a":{"x-extension":{"z":1,"a":2},"type":"integer","minimum":-9007199254740993}}}"#;
    let schema = VerbatimSchema::parameters(v(text)).expect("accepted");
    assert_eq!(schema.to_json_string(), text);
}

#[test]
fn refusals_name_every_problem_with_its_path() {
    let problems = refused(
        r##"{"type":"object","properties":{
            "a":{"$ref":"https://example.com/other.json#/x"},
            "b":{"$ref":"#/$defs/missing"},
            "c":{"$ref":"#noSuchAnchor"},
            "d":{"type":"text"},
            "e":{"minLength":-1},
            "f":{"required":"x"},
            "g":{"allOf":[]},
            "h":{"$anchor":"1bad"},
            "i":{"$schema":"https://json-schema.org/draft/2020-12/schema"},
            "j":{"$id":"https://example.com/inner"},
            "k":{"dependencies":{"a":["b"]}},
            "l":{"items":[{"type":"string"}]},
            "m":5
        }}"##,
    );
    let expect = [
        "parameters.properties.d: `type` \"text\" is not one of",
        "parameters.properties.e: `minLength` must be a non-negative integer, found -1",
        "parameters.properties.f: `required` must be an array of strings",
        "parameters.properties.g: `allOf` must be a non-empty array of schemas",
        "parameters.properties.h: `$anchor` \"1bad\" must match",
        "parameters.properties.i: `$schema` \"https://json-schema.org/draft/2020-12/schema\" below the root",
        "parameters.properties.j: `$id` \"https://example.com/inner\" below the root",
        "parameters.properties.k: `dependencies` is a keyword of earlier drafts",
        "parameters.properties.l.items: a schema must be an object or a boolean, found array",
        "parameters.properties.m: a schema must be an object or a boolean, found number",
        "parameters.properties.a: `$ref` \"https://example.com/other.json#/x\" points outside the document",
        "parameters.properties.b: `$ref` \"#/$defs/missing\" does not resolve to a schema of this document",
        "parameters.properties.c: `$ref` \"#noSuchAnchor\" names no anchor of this document",
    ];
    assert_eq!(problems.len(), expect.len(), "{problems:#?}");
    for (got, want) in problems.iter().zip(expect) {
        assert!(got.starts_with(want), "{got}\n  expected: {want}…");
    }
}

#[test]
fn the_root_must_be_an_object_schema_and_the_dialect_2020_12() {
    assert_eq!(
        refused(r#"{"type":"array","items":{"type":"string"}}"#),
        [
            "parameters: a tool's parameter schema must say \"type\": \"object\" at its root (MCP and every provider take only object-rooted parameter schemas)"
        ]
    );
    let p = refused(r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}"#);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].starts_with("parameters: `$schema` is \"http://json-schema.org/draft-07/schema#\": a tool's own schema must be JSON Schema 2020-12"),
        "{}",
        p[0]
    );
    // The 2020-12 URI with an empty fragment is the same dialect.
    assert!(
        VerbatimSchema::parameters(v(
            r#"{"$schema":"https://json-schema.org/draft/2020-12/schema#","type":"object"}"#
        ))
        .is_ok()
    );
    // Any root for a plain document or an output.
    assert!(VerbatimSchema::new(v(r#"{"type":"array"}"#)).is_ok());
    assert!(VerbatimSchema::output(v(r#"{"type":["string","null"]}"#)).is_ok());
}

#[test]
fn loops_that_never_descend_are_refused_and_recursion_through_the_value_is_kept() {
    let p = refused(
        r##"{"type":"object","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"allOf":[{"$ref":"#/$defs/a"}]}},"properties":{"x":{"$ref":"#/$defs/a"}}}"##,
    );
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].contains("references loop back to the same value without descending into it"),
        "{}",
        p[0]
    );
    assert!(
        p[0].contains("parameters.$defs.a") && p[0].contains("parameters.$defs.b"),
        "{}",
        p[0]
    );
    let p = refused(r##"{"type":"object","anyOf":[{"$ref":"#"}]}"##);
    assert!(p[0].contains("loop back"), "{p:?}");

    // A tree: recursion through `items` is fine.
    let tree = VerbatimSchema::parameters(v(
        r##"{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#"}}},"required":["name"]}"##,
    ))
    .expect("a recursive schema that descends");
    assert!(tree.is_recursive());
    assert!(
        tree.validate(
            &v(r#"{"name":"a","children":[{"name":"b","children":[]}]}"#),
            "arguments",
            false
        )
        .is_ok()
    );
    let err = tree
        .validate(
            &v(r#"{"name":"a","children":[{"children":[{"name":1}]}]}"#),
            "arguments",
            false,
        )
        .unwrap_err();
    assert_eq!(
        err,
        [
            "missing required property \"children[0].name\"",
            "\"children[0].children[0].name\" must be a string"
        ]
    );
}

#[test]
fn every_keyword_family_is_checked_with_registry_style_messages() {
    let s = VerbatimSchema::parameters(v(CONFORMANCE_FIXTURE)).expect("fixture");
    let check = |args: &str| {
        s.validate(&v(args), "arguments", false)
            .map_err(|e| e.to_vec())
    };
    assert_eq!(check(r#"{"name":"Ada","email":"a@b.c"}"#), Ok(()));
    assert_eq!(
        check(r#"{"contactMethod":"phone","phone":"1","address":{"city":"Paris"}}"#),
        Ok(())
    );
    assert_eq!(
        check(r#"{"contactMethod":"phone","email":"a@b.c"}"#),
        Err(vec![
            "missing required property \"phone\" (from `then`: the `if` schema matches)"
                .to_string()
        ])
    );
    assert_eq!(
        check(r#"{"phone":"1"}"#),
        Err(vec![
            "missing required property \"email\" (from `else`: the `if` schema does not match)"
                .to_string()
        ])
    );
    assert_eq!(
        check(r#"{"address":{"city":5},"email":"e","fax":"1","contactMethod":"pigeon"}"#),
        Err(vec![
            "\"address.city\" must be a string".to_string(),
            "\"contactMethod\" must be one of [\"phone\",\"email\"]".to_string(),
            "\"fax\" is not a declared property (additionalProperties: false)".to_string(),
        ])
    );
    assert_eq!(
        check(r#"{"name":"x"}"#),
        Err(vec![
            "\"arguments\" matches none of the 2 anyOf branches; the closest is branch 1: missing required property \"phone\"".to_string(),
            "missing required property \"email\" (from `else`: the `if` schema does not match)".to_string(),
        ])
    );
    assert_eq!(
        check("[1]"),
        Err(vec!["\"arguments\" must be an object".to_string()])
    );

    let s = VerbatimSchema::new(v(
        r#"{"type":"object","properties":{
            "n":{"type":"integer","exclusiveMinimum":0,"maximum":10,"multipleOf":3},
            "s":{"type":"string","minLength":2,"maxLength":3,"pattern":"^[a-z]+$"},
            "a":{"type":"array","prefixItems":[{"type":"string"}],"items":{"type":"integer"},"minItems":2,"contains":{"const":7},"maxContains":1},
            "o":{"type":"object","propertyNames":{"pattern":"^[a-z]+$"},"dependentRequired":{"a":["b"]},"maxProperties":2},
            "x":{"not":{"type":"null"}},
            "u":{"oneOf":[{"type":"integer"},{"type":"number"}]}
        }}"#,
    ))
    .expect("accepted");
    let err = s
        .validate(
            &v(r#"{"n":11,"s":"A","a":[1,7,7],"o":{"a":1,"B":2,"c":3},"x":null,"u":2}"#),
            "value",
            true,
        )
        .unwrap_err();
    assert_eq!(
        err,
        [
            "\"value.n\" must be a multiple of 3",
            "\"value.n\" must be at most 10",
            "\"value.s\" must be at least 2 characters long",
            "\"value.s\" must match the pattern \"^[a-z]+$\"",
            "\"value.a[0]\" must be a string",
            "\"value.a\" must contain at most 1 item matching the `contains` schema",
            "\"value.o\" must have at most 2 properties",
            "missing required property \"value.o.b\" (required when \"a\" is present)",
            "\"value.o.B\" is not an allowed property name (propertyNames)",
            "\"value.x\" must not match the `not` schema",
            "\"value.u\" must match exactly one oneOf branch (matched 2)",
        ]
    );
}

#[test]
fn what_the_runtime_leaves_unchecked_is_named() {
    let s = VerbatimSchema::parameters(v(
        r#"{"type":"object","properties":{"tags":{"type":"array","uniqueItems":true},"q":{"type":"string","pattern":"^(?=a)"}},"unevaluatedProperties":false}"#,
    ))
    .expect("accepted");
    assert!(!s.is_checked_exactly());
    assert_eq!(
        s.unchecked_keywords(),
        [
            "parameters: `unevaluatedProperties`",
            "parameters.properties.tags: `uniqueItems`",
            "parameters.properties.q: `pattern`",
        ]
    );
    // What is checked still is.
    assert!(
        s.validate(&v(r#"{"tags":"x"}"#), "arguments", false)
            .is_err()
    );
    #[cfg(not(feature = "json-schema"))]
    {
        // Without the feature the tool owns what is unchecked...
        assert!(
            s.validate(
                &v(r#"{"tags":[1,1],"q":"b","extra":1}"#),
                "arguments",
                false
            )
            .is_ok()
        );
        // ...and such a document cannot be an output schema: outputs are always checked.
        let e = VerbatimSchema::output(v(r#"{"type":"array","uniqueItems":true}"#)).unwrap_err();
        assert_eq!(e.violations().len(), 1);
        assert!(
            e.violations()[0]
                .starts_with("output: `uniqueItems` is not checked by the runtime's own validator"),
            "{e}"
        );
    }
    #[cfg(feature = "json-schema")]
    {
        let e = s
            .validate(
                &v(r#"{"tags":[1,1],"q":"b","extra":1}"#),
                "arguments",
                false,
            )
            .unwrap_err();
        assert_eq!(e.len(), 3, "{e:?}");
        assert!(VerbatimSchema::output(v(r#"{"type":"array","uniqueItems":true}"#)).is_ok());
    }
}

#[test]
fn deep_values_never_overflow_the_stack() {
    // A recursive schema and a value 10,000 levels deep, built without recursion.
    let schema = VerbatimSchema::parameters(v(
        r##"{"type":"object","properties":{"c":{"$ref":"#"},"n":{"type":"integer"}}}"##,
    ))
    .expect("accepted");
    let mut deep = Value::Object(json::Object::new());
    for _ in 0..10_000 {
        let mut o = json::Object::new();
        o.insert("c", deep);
        deep = Value::Object(o);
    }
    let verdict = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let r = schema
                .validate(&deep, "arguments", false)
                .map_err(|e| e.to_vec());
            (r, deep)
        })
        .expect("thread")
        .join()
        .expect("no overflow");
    #[cfg(not(feature = "json-schema"))]
    assert_eq!(
        verdict.0,
        Ok(()),
        "below the checked depth, arguments are the tool's"
    );
    #[cfg(feature = "json-schema")]
    assert_eq!(
        verdict.0,
        Err(vec![
            "\"arguments\" is nested more than 128 levels deep, deeper than a tool's own JSON Schema is checked".to_string()
        ])
    );
    // A violation near the top is found either way.
    let mut bad = json::Object::new();
    bad.insert("n", Value::from("x"));
    bad.insert("c", verdict.1);
    let schema = VerbatimSchema::parameters(v(
        r##"{"type":"object","properties":{"c":{"$ref":"#"},"n":{"type":"integer"}}}"##,
    ))
    .unwrap();
    let err = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || schema.validate(&Value::Object(bad), "arguments", false))
        .expect("thread")
        .join()
        .expect("no overflow")
        .unwrap_err();
    assert_eq!(err.get(0), Some("\"n\" must be an integer"));
}
