//! Answers read back into the form's type (`read_form_answer`): checked against the
//! type's schema first, so a wrong type, a missing required field or a choice outside
//! the list is `CallerError::InvalidAnswer` naming the property, never a panic.

use dsh_runtime::ToolSchema;
use dsh_runtime::caller::{CallerError, codes, read_form_answer};
use proptest::prelude::*;
use serde::Deserialize;

use crate::forms_shapes::{Color, Priority, Size};
use crate::forms_support::value;

#[derive(ToolSchema, Deserialize, Debug, PartialEq)]
pub(crate) struct Order {
    item: String,
    #[schema(range(min = 1, max = 99))]
    quantity: u8,
    color: Color,
    extras: Vec<Size>,
    gift: Option<bool>,
    priority: Option<Priority>,
    #[schema(length(max = 5))]
    note: Option<String>,
}

fn invalid(text: &str) -> String {
    match read_form_answer::<Order>(&value(text)) {
        Err(e @ CallerError::InvalidAnswer(_)) => {
            assert_eq!(e.code(), codes::INVALID_ANSWER);
            e.to_string()
        }
        other => panic!("{text}: expected an invalid answer, got {other:?}"),
    }
}

#[test]
fn a_valid_answer_is_read() {
    let order = read_form_answer::<Order>(&value(
        r#"{"item":"mug","quantity":2,"color":"blue","extras":["S","XL"],"priority":"High"}"#,
    ))
    .unwrap();
    assert_eq!(
        order,
        Order {
            item: "mug".into(),
            quantity: 2,
            color: Color::Blue,
            extras: vec![Size::S, Size::XL],
            gift: None,
            priority: Some(Priority::High),
            note: None,
        }
    );
}

#[test]
fn null_for_an_optional_field_is_no_answer() {
    let order = read_form_answer::<Order>(&value(
        r#"{"item":"mug","quantity":2,"color":"red","extras":[],"gift":null,"note":null}"#,
    ))
    .unwrap();
    assert_eq!((order.gift, order.note), (None, None));
}

#[test]
fn a_wrong_type_names_the_property() {
    let e = invalid(r#"{"item":"mug","quantity":"two","color":"red","extras":[]}"#);
    assert!(e.contains("answer.quantity"), "{e}");
}

#[test]
fn a_missing_required_field_is_named() {
    let e = invalid(r#"{"quantity":1,"color":"red","extras":[]}"#);
    assert!(e.contains("item"), "{e}");
}

#[test]
fn a_choice_outside_the_list_is_named() {
    let e = invalid(r#"{"item":"mug","quantity":1,"color":"purple","extras":[]}"#);
    assert!(e.contains("answer.color"), "{e}");
    let e = invalid(r#"{"item":"mug","quantity":1,"color":"red","extras":["XXL"]}"#);
    assert!(e.contains("answer.extras"), "{e}");
    let e = invalid(r#"{"item":"mug","quantity":1,"color":"red","extras":[],"priority":"low"}"#);
    assert!(e.contains("answer.priority"), "{e}");
}

#[test]
fn bounds_are_checked() {
    let e = invalid(r#"{"item":"mug","quantity":100,"color":"red","extras":[]}"#);
    assert!(e.contains("answer.quantity"), "{e}");
    let e = invalid(r#"{"item":"mug","quantity":1,"color":"red","extras":[],"note":"too long"}"#);
    assert!(e.contains("answer.note"), "{e}");
}

#[test]
fn every_violation_is_named() {
    let e = invalid(r#"{"item":7,"quantity":0,"color":"red","extras":[],"surplus":1}"#);
    for needle in ["answer.item", "answer.quantity", "surplus"] {
        assert!(e.contains(needle), "{needle} in {e}");
    }
}

#[test]
fn an_answer_that_is_not_an_object_is_invalid() {
    for text in ["null", "[]", "\"mug\"", "3"] {
        let e = invalid(text);
        assert!(e.contains("answer"), "{e}");
    }
}

/// Any JSON, shaped like an answer or not.
fn any_json() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(serde_json::Value::from),
        prop_oneof![
            Just("red".to_string()),
            Just("S".to_string()),
            Just("High".to_string()),
            ".{0,6}",
        ]
        .prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
            prop::collection::btree_map(
                prop_oneof![
                    Just("item".to_string()),
                    Just("quantity".to_string()),
                    Just("color".to_string()),
                    Just("extras".to_string()),
                    Just("gift".to_string()),
                    Just("priority".to_string()),
                    Just("note".to_string()),
                    "[a-z]{1,3}",
                ],
                inner,
                0..8,
            )
            .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    /// Whatever the caller answers, reading it never panics: it is an `Order` or an
    /// `InvalidAnswer`.
    #[test]
    fn any_answer_reads_or_is_invalid(answer in any_json()) {
        // The runtime's JSON holds no `-0.0`: such an answer never reaches a form.
        let answer = dsh_runtime::json::from_serde(&answer);
        prop_assume!(answer.is_ok());
        let answer = answer.unwrap();
        match read_form_answer::<Order>(&answer) {
            Ok(_) | Err(CallerError::InvalidAnswer(_)) => {}
            Err(other) => prop_assert!(false, "{other:?}"),
        }
    }
}
