//! The validator against the `jsonschema` crate on the projected schema.
//!
//! For a generated schema (the whole vocabulary) and a mostly conforming value: our
//! verdict equals jsonschema's, except where the value relies on the documented null
//! leniency; the verdict pass and the reporting walk agree; and a report spells out at
//! most `MAX_REPORTED_VIOLATIONS` violations.

use super::generate::{has_lenient_null, schema, value_for};
use arbitrary::Unstructured;
use dsh_runtime::json;
use dsh_runtime::validate::{MAX_REPORTED_VIOLATIONS, report_all, validate_labeled};

/// Check one input; panics when an invariant breaks. Returns whether the input reached
/// the checks (`false`: it ran out before a schema and a value were generated).
pub fn run(data: &[u8]) -> bool {
    let mut u = Unstructured::new(data);
    let Ok(s) = schema(&mut u, 4) else {
        return false;
    };
    assert!(
        s.check("schema").is_ok(),
        "generated an invalid schema: {:?}",
        s.check("schema")
    );
    let Ok(value) = value_for(&mut u, &s, 5) else {
        return false;
    };

    let ours = validate_labeled(&s, &value, "value", true);
    let reported = report_all(&s, &value, "value", true);
    assert_eq!(
        reported.is_empty(),
        ours.is_ok(),
        "passes disagree: {reported:?}"
    );
    if let Err(v) = &ours {
        assert_eq!(v, &reported);
        assert!(v.len() <= MAX_REPORTED_VIOLATIONS);
    }

    let projected = json::to_serde(&s.to_json_schema());
    let validator = jsonschema::validator_for(&projected).expect("projected schema compiles");
    let theirs = validator.is_valid(&json::to_serde(&value));
    if ours.is_ok() != theirs && !has_lenient_null(&s, &value) {
        panic!(
            "disagreement: ours {:?}, jsonschema {theirs} on schema {} value {value}",
            ours,
            s.to_json_schema()
        );
    }
    true
}
