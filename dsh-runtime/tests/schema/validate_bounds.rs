//! Validation reports stay small whatever the input: at most
//! `MAX_REPORTED_VIOLATIONS` messages plus "and N more", and long keys shortened.

use std::sync::Arc;

use dsh_runtime::json;
use dsh_runtime::schema::{Additional, Property, Schema};
use dsh_runtime::validate::{MAX_REPORTED_VIOLATIONS, Violations, validate_arguments};

/// A whole report (what the model sees) stays under this many bytes.
const REPORT_BOUND: usize = 4096;

fn strings_array() -> Schema {
    Schema::closed_object(vec![Property::new(
        "items",
        Schema::array(Some(Arc::new(Schema::string()))),
        true,
    )])
}

#[test]
fn a_million_bad_items_give_twenty_messages_and_a_count() {
    let text = format!("{{\"items\":[{}1]}}", "1,".repeat(999_999));
    let value = json::parse(&text).unwrap();
    let err = validate_arguments(&strings_array(), &value).unwrap_err();
    let report = err.to_string();
    assert!(report.len() < REPORT_BOUND, "{} bytes", report.len());
    assert_eq!(err.violations().len(), MAX_REPORTED_VIOLATIONS);
    assert_eq!(
        err.violations().omitted(),
        1_000_000 - MAX_REPORTED_VIOLATIONS
    );
    assert_eq!(
        err.violations().get(0),
        Some(r#""items[0]" must be a string"#)
    );
    assert_eq!(
        err.violations().get(19),
        Some(r#""items[19]" must be a string"#)
    );
    assert!(
        report.ends_with(r#""items[19]" must be a string; and 999980 more violations"#),
        "{}",
        &report[report.len() - 100..]
    );
    // Iteration yields the spelled-out messages only.
    assert_eq!(err.violations().iter().count(), MAX_REPORTED_VIOLATIONS);
}

#[test]
fn the_count_is_exact_at_the_cap() {
    for (n, suffix) in [
        (MAX_REPORTED_VIOLATIONS, None),
        (MAX_REPORTED_VIOLATIONS + 1, Some("; and 1 more violation")),
        (MAX_REPORTED_VIOLATIONS + 2, Some("; and 2 more violations")),
    ] {
        let text = format!("{{\"items\":[{}]}}", vec!["0"; n].join(","));
        let err = validate_arguments(&strings_array(), &json::parse(&text).unwrap()).unwrap_err();
        let joined = err.violations().joined();
        assert_eq!(err.violations().omitted(), n - MAX_REPORTED_VIOLATIONS);
        match suffix {
            None => assert!(
                joined.ends_with(r#""items[19]" must be a string"#),
                "{joined}"
            ),
            Some(s) => assert!(joined.ends_with(s), "{joined}"),
        }
    }
}

#[test]
fn missing_required_properties_count_toward_the_cap() {
    let props: Vec<Property> = (0..50)
        .map(|i| Property::new(format!("p{i}"), Schema::string(), true))
        .collect();
    let schema = Schema::closed_object(props);
    let err = validate_arguments(&schema, &json::parse("{}").unwrap()).unwrap_err();
    assert_eq!(err.violations().len(), MAX_REPORTED_VIOLATIONS);
    assert_eq!(err.violations().omitted(), 30);
    assert_eq!(
        err.violations().get(0),
        Some(r#"missing required property "p0""#)
    );
    assert!(err.to_string().ends_with("; and 30 more violations"));
}

#[test]
fn a_ten_megabyte_key_is_shortened() {
    let key = "k".repeat(10 * 1024 * 1024);
    let value = json::parse(&format!("{{\"{key}\":1,\"items\":[]}}")).unwrap();
    let err = validate_arguments(&strings_array(), &value).unwrap_err();
    let report = err.to_string();
    assert!(report.len() < REPORT_BOUND, "{} bytes", report.len());
    assert_eq!(
        err.violations().get(0).map(str::to_owned),
        Some(format!(
            r#""[\"{}…(10485760 bytes)\"]" is not a declared property (additionalProperties: false)"#,
            "k".repeat(64)
        ))
    );
    // In a nested path too (a map with a value schema).
    let map = Schema::object(
        vec![],
        Additional::Schema(Arc::new(Schema::array(Some(Arc::new(Schema::string()))))),
    );
    let value = json::parse(&format!("{{\"{key}\":[\"a\",2]}}")).unwrap();
    let err = validate_arguments(&map, &value).unwrap_err();
    assert_eq!(
        err.violations().get(0).map(str::to_owned),
        Some(format!(
            r#""[\"{}…(10485760 bytes)\"][1]" must be a string"#,
            "k".repeat(64)
        ))
    );
}

#[test]
fn pushed_violations_are_capped_too() {
    let v: Violations = (0..100).map(|i| format!("m{i}")).collect();
    assert_eq!(v.len(), MAX_REPORTED_VIOLATIONS);
    assert_eq!(v.omitted(), 80);
    assert!(v.joined().starts_with("m0; m1; "));
    assert!(v.joined().ends_with("m19; and 80 more violations"));
    assert_eq!(v.get(19), Some("m19"));
    assert_eq!(v.get(20), None);
}
