//! The argument generators agree with the validator: every valid value validates, and
//! every invalid one fails with the violation it was built for, over random schemas.

use dsh_runtime::schema::Schema;
use dsh_runtime::validate::{is_valid, validate_arguments};
use dsh_testing::ArgStrategy;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestRunner};

use crate::random_schema::{cases, schema_strategy};

/// Draws `n` values of `strategy`.
fn draw<T: std::fmt::Debug>(
    strategy: &BoxedStrategy<T>,
    n: usize,
    runner: &mut TestRunner,
) -> Vec<T> {
    (0..n)
        .filter_map(|_| strategy.new_tree(runner).ok().map(|t| t.current()))
        .collect()
}

proptest! {
    #![proptest_config(cases(48))]

    #[test]
    fn generated_values_agree_with_the_validator(schema in schema_strategy()) {
        let args = ArgStrategy::new(&schema);
        // Some random schemas admit few values (`oneOf` branches that overlap): give up on a
        // draw early rather than after proptest's default 65536 rejections.
        let mut runner = TestRunner::new(Config { max_local_rejects: 1000, ..Config::default() });
        for v in draw(&args.valid(), 8, &mut runner) {
            prop_assert!(is_valid(&schema, &v), "{} rejects {v}", schema.to_json_string());
        }
        if let Some(invalid) = args.invalid() {
            for c in draw(&invalid, 8, &mut runner) {
                let err = validate_arguments(&schema, &c.value);
                let message = match err {
                    Ok(_) => return Err(TestCaseError::fail(format!("{} accepts {}", schema.to_json_string(), c.value))),
                    Err(e) => e.to_string(),
                };
                prop_assert!(
                    c.violation.is_reported_by(&message),
                    "schema {}: value {}: expected {}, got {message}",
                    schema.to_json_string(), c.value, c.violation
                );
            }
        }
    }
}

#[test]
fn boundaries_and_optional_forms_are_generated() {
    let schema = Schema::parameters_from_json_schema(&dsh_runtime::json::parse(
        r#"{"type":"object","properties":{"n":{"type":"integer","minimum":3,"maximum":9},"s":{"type":"string","maxLength":4},"o":{"type":"boolean"}},"required":["n"]}"#,
    ).unwrap()).unwrap();
    let mut runner = TestRunner::deterministic();
    let values = draw(&ArgStrategy::new(&schema).valid(), 400, &mut runner);
    let has = |f: &dyn Fn(&dsh_runtime::json::Value) -> bool| values.iter().any(f);
    assert!(has(&|v| v["n"].as_i64() == Some(3)), "minimum");
    assert!(has(&|v| v["n"].as_i64() == Some(9)), "maximum");
    assert!(has(&|v| v.get("o").is_none()), "optional absent");
    assert!(
        has(&|v| v.get("o").is_some_and(|o| o.is_null())),
        "optional null"
    );
    assert!(
        has(&|v| v.get("o").is_some_and(|o| o.as_bool().is_some())),
        "optional present"
    );
    assert!(
        has(&|v| v
            .get("s")
            .and_then(|s| s.as_str())
            .is_some_and(|s| s.chars().count() == 4)),
        "longest string"
    );
    assert!(
        has(&|v| v
            .get("s")
            .and_then(|s| s.as_str())
            .is_some_and(|s| !s.is_ascii())),
        "unicode"
    );
    let invalid = draw(
        &ArgStrategy::new(&schema).invalid().unwrap(),
        400,
        &mut runner,
    );
    let paths: std::collections::BTreeSet<String> = invalid
        .iter()
        .map(|c| format!("{} {}", c.violation.kind().name(), c.violation.path()))
        .collect();
    for expected in [
        "missing required n",
        "out of range n",
        "wrong type n",
        "length s",
        "wrong type arguments",
    ] {
        assert!(paths.contains(expected), "{expected} not in {paths:?}");
    }
}

#[test]
fn edges_set_each_bound_on_a_simplest_valid_value() {
    let schema = Schema::parameters_from_json_schema(&dsh_runtime::json::parse(
        r#"{"type":"object","properties":{"n":{"type":"integer","minimum":3,"maximum":9},"x":{"type":"number","maximum":2.5},"s":{"type":"string","minLength":2,"maxLength":4},"k":{"type":"string","enum":["a","b"]},"o":{"type":"object","properties":{"d":{"type":"integer","minimum":-4}},"required":["d"],"additionalProperties":false}},"required":["n","o"]}"#,
    ).unwrap()).unwrap();
    let args = ArgStrategy::new(&schema);
    let edges = args.edges();
    assert_eq!(edges, args.edges(), "deterministic");
    assert!(edges.iter().all(|v| is_valid(&schema, v)), "{edges:?}");
    let has = |f: &dyn Fn(&dsh_runtime::json::Value) -> bool| edges.iter().any(f);
    assert!(has(&|v| v["n"].as_i64() == Some(3)), "minimum: {edges:?}");
    assert!(has(&|v| v["n"].as_i64() == Some(9)), "maximum: {edges:?}");
    assert!(
        has(&|v| v.get("x").and_then(|x| x.as_f64()) == Some(2.5)),
        "number maximum: {edges:?}"
    );
    assert!(
        has(&|v| v.get("s").and_then(|s| s.as_str()) == Some("aa")),
        "shortest: {edges:?}"
    );
    assert!(
        has(&|v| v.get("s").and_then(|s| s.as_str()) == Some("aaaa")),
        "longest: {edges:?}"
    );
    assert!(
        has(&|v| v["o"]["d"].as_i64() == Some(-4)),
        "nested minimum: {edges:?}"
    );
    // The base and at most one per bound (six here; enums have none of their own).
    assert!(edges.len() <= 1 + 6, "{edges:?}");
    // An overridden parameter keeps its override's values.
    let overridden = ArgStrategy::new(&schema)
        .with_override("n", Just(dsh_runtime::json::Value::from(5u8)).boxed())
        .edges();
    assert!(
        overridden.iter().all(|v| v["n"].as_i64() == Some(5)),
        "{overridden:?}"
    );
}

#[test]
fn patterns_are_generated_from_the_regular_expression() {
    let schema = Schema::parameters_from_json_schema(&dsh_runtime::json::parse(
        r#"{"type":"object","properties":{"id":{"type":"string","pattern":"^[A-Z]{2}-[0-9]{3}$"}},"required":["id"]}"#,
    ).unwrap()).unwrap();
    let mut runner = TestRunner::deterministic();
    let values = draw(&ArgStrategy::new(&schema).valid(), 20, &mut runner);
    assert_eq!(values.len(), 20);
    assert!(values.iter().all(|v| is_valid(&schema, v)));
}
