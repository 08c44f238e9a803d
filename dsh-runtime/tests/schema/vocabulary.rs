//! The schema vocabulary against the validator: projection, key order and the rules each
//! keyword checks, through the public API.

use std::sync::Arc;

use dsh_runtime::ToolSchema;
use dsh_runtime::json::{Value, parse};
use dsh_runtime::schema::*;
use dsh_runtime::validate::{validate_arguments, validate_labeled};

fn props(list: Vec<(&'static str, Schema, bool)>) -> Vec<Property> {
    list.into_iter()
        .map(|(n, s, r)| Property::new(n, s, r))
        .collect()
}

#[test]
fn projection_key_order_is_fixed() {
    let s = Schema::closed_object(props(vec![
        (
            "path",
            Schema::string().with_description("Absolute path"),
            true,
        ),
        ("limit", (*u8::schema()).clone(), false),
        (
            "mode",
            Schema::string_enum(["fast", "slow"]).with_title("Mode"),
            false,
        ),
    ]))
    .with_description("args");
    assert_eq!(
        s.to_json_string(),
        r#"{"type":"object","description":"args","additionalProperties":false,"properties":{"path":{"type":"string","description":"Absolute path"},"limit":{"type":"integer","minimum":0,"maximum":255},"mode":{"type":"string","title":"Mode","enum":["fast","slow"]}},"required":["path"]}"#
    );
    let one = Schema::one_of(vec![Arc::new(Schema::string()), Arc::new(Schema::null())])
        .with_description("d");
    assert_eq!(
        one.to_json_string(),
        r#"{"oneOf":[{"type":"string"},{"type":"null"}],"description":"d"}"#
    );
    assert_eq!(
        Schema::json().with_title("t").to_json_string(),
        r#"{"title":"t"}"#
    );
}

#[test]
fn std_impls_publish_ranges_and_shapes() {
    assert_eq!(
        u64::schema().to_json_string(),
        r#"{"type":"integer","minimum":0}"#
    );
    // The hidden maximum is still enforced.
    let schema = u64::schema();
    let Kind::Integer(rules) = &schema.kind else {
        panic!("u64's schema is an integer node");
    };
    assert_eq!(
        (rules.minimum, rules.maximum),
        (Some(0), Some(u64::MAX as i128))
    );
    assert_eq!((rules.hidden.minimum, rules.hidden.maximum), (false, true));
    assert!(!dsh_runtime::validate::is_valid(
        &u64::schema(),
        &dsh_runtime::json::parse("18446744073709551616").unwrap()
    ));
    for (schema, text) in [
        (i64::schema(), r#"{"type":"integer"}"#),
        (
            u32::schema(),
            r#"{"type":"integer","minimum":0,"maximum":4294967295}"#,
        ),
        (
            i32::schema(),
            r#"{"type":"integer","minimum":-2147483648,"maximum":2147483647}"#,
        ),
        (
            std::num::NonZeroU64::schema(),
            r#"{"type":"integer","minimum":1}"#,
        ),
        (f32::schema(), r#"{"type":"number"}"#),
        (f64::schema(), r#"{"type":"number"}"#),
    ] {
        assert_eq!(schema.to_json_string(), text);
    }
    assert!(!dsh_runtime::validate::is_valid(
        &f32::schema(),
        &dsh_runtime::json::parse("1e39").unwrap()
    ));
    // An author's bound is published even where the type's own was hidden.
    let ranged = (*u64::schema())
        .clone()
        .with_range(None, Some(Bound::Int(100)));
    assert_eq!(
        ranged.to_json_string(),
        r#"{"type":"integer","minimum":0,"maximum":100}"#
    );
    let loose = (*u64::schema())
        .clone()
        .with_range(Some(Bound::Int(-5)), None);
    assert_eq!(loose.to_json_string(), r#"{"type":"integer","minimum":0}"#);
    assert_eq!(
        i8::schema().to_json_string(),
        r#"{"type":"integer","minimum":-128,"maximum":127}"#
    );
    assert_eq!(
        <[u8; 2]>::schema().to_json_string(),
        r#"{"type":"array","minItems":2,"maxItems":2,"items":{"type":"integer","minimum":0,"maximum":255}}"#
    );
    assert_eq!(
        <std::collections::HashMap<String, bool>>::schema().to_json_string(),
        r#"{"type":"object","additionalProperties":{"type":"boolean"}}"#
    );
    assert_eq!(
        <Option<String>>::schema().to_json_string(),
        r#"{"oneOf":[{"type":"string"},{"type":"null"}]}"#
    );
    assert_eq!(
        <Option<serde_json::Value>>::schema().to_json_string(),
        r#"{}"#
    );
    assert_eq!(
        char::schema().to_json_string(),
        r#"{"type":"string","minLength":1,"maxLength":1}"#
    );
    assert!(Arc::ptr_eq(&<Vec<u32>>::schema(), &<Vec<u32>>::schema()));
}

#[test]
fn raw_import_lists_every_violation() {
    let v = parse(
        r#"{"type":"object","properties":{"a":{"type":"string","format":"uri"},"b":{"type":["string","null"]},"c":{"type":"object"},"d":{"oneOf":[{"type":"string"}]},"e":{"type":"integer","enum":[1,2.5]}},"required":["a","zz"]}"#,
    )
    .unwrap();
    let err = Schema::parameters_from_json_schema(&v).unwrap_err();
    assert_eq!(
        err.violations(),
        &[
            r#"schema.properties.a: unsupported keyword "format" (outside the schema vocabulary)"#,
            "schema.properties.b: `type` must be a single string (type arrays are not supported; use `oneOf`)",
            "schema.properties.c: an object schema must state `additionalProperties` (true, false or a schema)",
            r#"schema: `required` names "zz", which is not a declared property"#,
        ]
    );
    assert!(
        err.to_string()
            .starts_with("unsupported JSON schema: schema.properties.a: ")
    );
    // Semantic checks run once the structure is sound.
    let v = parse(r#"{"type":"object","properties":{"d":{"oneOf":[{"type":"string"}]},"e":{"type":"integer","enum":[1,2.5],"const":3}}}"#).unwrap();
    let err = Schema::parameters_from_json_schema(&v).unwrap_err();
    assert_eq!(
        err.violations(),
        &[
            "schema.properties.d: `oneOf` needs at least two branches, found 1",
            "schema.properties.e: `enum` entry 2.5 is not an integer",
            "schema.properties.e: `const` 3 is not one of the `enum` values",
        ]
    );
}

#[test]
fn raw_import_round_trips_projection() {
    let s = Schema::closed_object(props(vec![
        ("q", Schema::string().with_length(Some(1), Some(9)), true),
        ("n", (*u32::schema()).clone(), false),
        (
            "xs",
            Schema::array(Some(Arc::new(Schema::boolean()))).with_length(None, Some(3)),
            false,
        ),
    ]));
    let projected = s.to_json_schema();
    let back = Schema::from_json_schema(&projected).unwrap();
    assert_eq!(back, s);
}

#[test]
fn validator_reports_every_violation_in_walk_order() {
    let item = Schema::closed_object(props(vec![("name", Schema::string(), true)]));
    let s = Schema::closed_object(props(vec![
        ("path", Schema::string(), true),
        ("x", Schema::string(), true),
        ("items", Schema::array(Some(Arc::new(item))), false),
        ("n", (*u8::schema()).clone(), false),
    ]));
    let v =
        parse(r#"{"path":1,"items":[{"name":"a"},{"name":"b"},{"nam":"c"}],"n":300,"zz":true}"#)
            .unwrap();
    let err = validate_arguments(&s, &v).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"invalid arguments: missing required property "x"; "path" must be a string; missing required property "items[2].name"; "items[2].nam" is not a declared property (additionalProperties: false); "n" must be at most 255; "zz" is not a declared property (additionalProperties: false)"#
    );
    let err = validate_arguments(&s, &parse("[1]").unwrap()).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"invalid arguments: "arguments" must be an object"#
    );
}

#[test]
fn validator_oneof_enum_const_and_labels() {
    let s = Schema::one_of(vec![
        Arc::new(Schema::number()),
        Arc::new(Schema::integer()),
    ]);
    let err = validate_labeled(&s, &parse("3").unwrap(), "value", true).unwrap_err();
    assert_eq!(
        err,
        vec![r#""value" must match exactly one oneOf branch (matched 2)"#]
    );
    let s = Schema::array(Some(Arc::new(Schema::string_enum(["fast", "slow"]))));
    let err =
        validate_labeled(&s, &parse(r#"["fast","medium"]"#).unwrap(), "value", true).unwrap_err();
    assert_eq!(err, vec![r#""value[1]" must be one of ["fast","slow"]"#]);
    let s = Schema::string_const("x");
    let err = validate_labeled(&s, &parse(r#""y""#).unwrap(), "value", true).unwrap_err();
    assert_eq!(err, vec![r#""value" must be "x""#]);
}

#[test]
fn integral_floats_are_integers_and_ranges_are_exact() {
    let s = Schema::closed_object(props(vec![("n", (*u64::schema()).clone(), true)]));
    assert!(validate_arguments(&s, &parse(r#"{"n":2.0}"#).unwrap()).is_ok());
    assert!(validate_arguments(&s, &parse(r#"{"n":1e2}"#).unwrap()).is_ok());
    let err = validate_arguments(&s, &parse(r#"{"n":1e300}"#).unwrap()).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"invalid arguments: "n" must be at most 18446744073709551615"#
    );
    let err =
        validate_arguments(&s, &parse(r#"{"n":18446744073709551616.0}"#).unwrap()).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"invalid arguments: "n" must be at most 18446744073709551615"#
    );
    let err = validate_arguments(&s, &parse(r#"{"n":2.5}"#).unwrap()).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"invalid arguments: "n" must be an integer"#
    );
}

#[test]
fn null_for_an_optional_property_means_omitted() {
    let s = Schema::closed_object(vec![
        dsh_runtime::__private::field::<String>("a", "", false),
        dsh_runtime::__private::field::<Option<u8>>("b", "", false),
        dsh_runtime::__private::field::<Option<serde_json::Value>>("c", "", false),
    ]);
    let v = parse(r#"{"a":"x","b":null,"c":null}"#).unwrap();
    let ok = validate_arguments(&s, &v).unwrap();
    assert!(ok.has_omitted_nulls());
    assert_eq!(ok.normalized(&s, &v).to_string(), r#"{"a":"x","c":null}"#);
    let err = validate_arguments(&s, &parse(r#"{"a":null}"#).unwrap()).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"invalid arguments: "a" must be a string"#
    );
}

#[test]
fn string_lengths_count_scalar_values() {
    let s = Schema::string().with_length(Some(2), Some(3));
    assert!(validate_labeled(&s, &Value::from("éé"), "value", true).is_ok());
    assert!(validate_labeled(&s, &Value::from("ééé"), "value", true).is_ok());
    assert!(validate_labeled(&s, &Value::from("é"), "value", true).is_err());
    assert!(validate_labeled(&s, &Value::from("éééé"), "value", true).is_err());
}

#[test]
fn check_catches_definition_errors() {
    let s = Schema::closed_object(props(vec![
        ("a", Schema::string(), true),
        ("a", Schema::string(), false),
        (
            "b",
            Schema::boolean().with_enum(vec![Value::from("x")]),
            false,
        ),
    ]));
    let err = s.check("parameters").unwrap_err();
    assert_eq!(
        err.violations(),
        &[
            r#"parameters: property "a" is declared twice"#,
            r#"parameters.properties.b: `enum` entry "x" is not a boolean"#,
        ]
    );
}

#[test]
fn odd_keys_are_quoted_and_escaped_in_paths() {
    let s = Schema::closed_object(props(vec![(
        "a\"b",
        Schema::array(Some(Arc::new(Schema::string()))),
        true,
    )]));
    let v = parse(r#"{"a\"b":["x",1],"x y":null}"#).unwrap();
    let err = validate_arguments(&s, &v).unwrap_err();
    assert_eq!(
        err.violations(),
        &[
            r#""[\"a\\\"b\"][1]" must be a string"#,
            r#""[\"x y\"]" is not a declared property (additionalProperties: false)"#,
        ]
    );
}

#[test]
fn descriptions_are_quoted_like_the_json_printer() {
    for s in [
        "plain",
        "a\"b",
        "back\\slash",
        "\n\r\t\u{8}\u{c}",
        "\u{1}\u{1f}",
        "é ✓ 😀",
    ] {
        assert_eq!(
            Schema::string().with_description(s).to_json_string(),
            format!(r#"{{"type":"string","description":{}}}"#, Value::from(s)),
            "{s:?}"
        );
    }
    // An empty description is left out, not printed as `""`.
    assert_eq!(
        Schema::string().with_description("").to_json_string(),
        r#"{"type":"string"}"#
    );
}

#[test]
fn json_nodes_reject_enum_and_const_at_definition_time() {
    // `enum`/`const` belong to scalar nodes (string, number, integer, boolean) only. An any-JSON node
    // carrying them would publish `{}` and enforce nothing, so it is refused.
    let s = Schema::closed_object(props(vec![
        ("a", Schema::json().with_const(Value::from(5u8)), true),
        (
            "b",
            Schema::json().with_enum(vec![Value::from("x"), Value::from(1u8)]),
            false,
        ),
    ]));
    let err = s.check("parameters").unwrap_err();
    assert_eq!(
        err.violations(),
        &[
            "parameters.properties.a: `enum` and `const` apply only to string, number, integer, boolean and null nodes",
            "parameters.properties.b: `enum` and `const` apply only to string, number, integer, boolean and null nodes",
        ]
    );
    for raw in [
        r#"{"const":5}"#,
        r#"{"enum":[1,"x"]}"#,
        r#"{"description":"d","const":null}"#,
    ] {
        let err = Schema::from_json_schema(&parse(raw).unwrap()).unwrap_err();
        assert_eq!(err.violations().len(), 1, "{raw}: {err}");
        let msg = err.violations().first().cloned().unwrap_or_default();
        assert!(msg.starts_with("schema: "), "{raw}: {msg}");
        assert!(
            msg.contains("`enum`") || msg.contains("`const`"),
            "{raw}: {msg}"
        );
    }
}

#[test]
fn pattern_shorthand_classes_follow_ecma_262() {
    let m = |pat: &str, text: &str| Pattern::new(pat.to_string()).unwrap().is_match(text);
    // `\d` is ASCII: an Arabic-Indic three is not a digit.
    assert!(!m(r"^\d$", "٣"));
    assert!(m(r"^\d$", "3"));
    assert!(m(r"^\D$", "٣"));
    assert!(!m(r"^\D$", "3"));
    // `\w` is [A-Za-z0-9_].
    assert!(m(r"^\w+$", "a_Z9"));
    assert!(!m(r"^\w$", "é"));
    assert!(m(r"^\W$", "é"));
    // `\b` by ASCII `\w`: `é` is not a word character, so `x` starts a word.
    assert!(m(r"\bx\b", "éx"));
    assert!(!m(r"\Bx", "éx"));
    assert!(m(r"\Bx", "ax"));
    // `\s` is ECMA-262's set: NBSP and BOM are in, NEL (U+0085) is not.
    for ws in [
        "\t", "\u{b}", " ", "\u{a0}", "\u{2005}", "\u{2028}", "\u{feff}",
    ] {
        assert!(m(r"^\s$", ws), "{ws:?}");
        assert!(!m(r"^\S$", ws), "{ws:?}");
    }
    assert!(!m(r"^\s$", "\u{85}"));
    assert!(m(r"^\S$", "\u{85}"));
    // Inside classes, including complements and `[\b]` (backspace).
    assert!(m(r"^[\d.]+$", "1.5"));
    assert!(!m(r"^[\d]$", "٣"));
    assert!(m(r"^[^\d]$", "٣"));
    assert!(m(r"^[\D]$", "a"));
    assert!(!m(r"^[\D]$", "1"));
    assert!(m(r"^[\s,]+$", "\u{a0}, "));
    assert!(m(r"^[\b]$", "\u{8}"));
    assert!(m(r"^[]\d]+$", "]7"));
    // Other escapes are untouched: an escaped backslash, Unicode properties.
    assert!(m(r"^\\d$", r"\d"));
    assert!(m(r"^\p{L}$", "é"));
    // The published source is the author's text.
    assert_eq!(Pattern::new(r"^\d+$").unwrap().as_str(), r"^\d+$");
}
