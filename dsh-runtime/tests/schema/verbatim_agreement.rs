//! The runtime's own validator for verbatim schemas, against the `jsonschema` crate on
//! generated JSON Schema 2020-12 documents and values:
//!
//! - what the runtime rejects, `jsonschema` rejects (it never refuses arguments the
//!   schema accepts);
//! - where the runtime claims to check a document exactly, the verdicts are equal;
//! - with the `json-schema` feature, the verdicts are always equal;
//! - a document the runtime accepts is valid against the 2020-12 meta-schema and compiles.
//!
//! `PROPTEST_CASES` raises the case count.

use dsh_runtime::json::{self, Value};
use dsh_runtime::schema::VerbatimSchema;
use proptest::prelude::*;
use proptest::strategy::ValueTree;

use crate::random_json_schema::{document, instance, scalar};
use crate::random_schema::cases;

fn oracle(schema: &serde_json::Value) -> jsonschema::Validator {
    jsonschema::draft202012::options()
        .should_validate_formats(false)
        .build(schema)
        .expect("an accepted document compiles")
}

fn ours(schema: &serde_json::Value) -> VerbatimSchema {
    let value = json::from_serde(schema).expect("lossless");
    VerbatimSchema::new(value).expect("the generator writes valid documents")
}

#[test]
fn generated_documents_are_accepted_and_varied() {
    // The generator's documents are valid 2020-12 (the meta-schema says so), and so
    // the runtime accepts them: its refusals are about real problems. And the cases
    // below are not vacuous: documents checked exactly and not, values accepted and not.
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut exact, mut valid, mut invalid) = (0, 0, 0);
    for _ in 0..300 {
        let doc = document()
            .new_tree(&mut runner)
            .expect("a document")
            .current();
        assert!(jsonschema::draft202012::meta::is_valid(&doc), "{doc}");
        let schema = ours(&doc);
        exact += usize::from(schema.is_checked_exactly());
        let value = instance().new_tree(&mut runner).expect("a value").current();
        match oracle(&doc).is_valid(&value) {
            true => valid += 1,
            false => invalid += 1,
        }
    }
    assert!((30..270).contains(&exact), "{exact} of 300 exact");
    assert!(
        valid >= 30 && invalid >= 30,
        "{valid} valid, {invalid} invalid"
    );
}

proptest! {
    #![proptest_config(cases(2000))]

    #[test]
    fn sound_always_exact_where_claimed(doc in document(), values in prop::collection::vec(instance(), 1..6)) {
        let schema = ours(&doc);
        let validator = oracle(&doc);
        for value in values {
            let theirs = validator.is_valid(&value);
            let v: Value = json::from_serde(&value).expect("lossless");
            let verdict = schema.validate(&v, "value", true);
            if verdict.is_err() {
                prop_assert!(!theirs, "rejected what the schema accepts: {:?}\nschema {}\nvalue {}", verdict, doc, value);
            }
            if schema.is_checked_exactly() || cfg!(feature = "json-schema") {
                prop_assert_eq!(verdict.is_ok(), theirs, "schema {}\nvalue {}\nours {:?}", doc, value, verdict);
            }
        }
    }

    #[test]
    fn accepted_documents_are_valid_2020_12(doc in document(), noise in prop::collection::vec((prop::sample::select(vec!["minLength", "required", "type", "allOf", "$ref", "properties", "enum", "$anchor"]), scalar()), 0..3)) {
        // Arbitrary (often wrong) values for keywords: whatever the runtime accepts, the
        // meta-schema accepts and `jsonschema` compiles.
        let mut doc = doc;
        for (k, v) in noise {
            doc[k] = v;
        }
        let value = json::from_serde(&doc).expect("lossless");
        if VerbatimSchema::new(value).is_ok() {
            prop_assert!(jsonschema::draft202012::meta::is_valid(&doc), "{}", doc);
            prop_assert!(jsonschema::draft202012::options().build(&doc).is_ok(), "{}", doc);
        }
    }
}
