//! The lossless parser against serde_json (with correctly rounded floats).
//!
//! - Ours accepts ⇒ serde_json accepts the same text and both give the same JSON value,
//!   and our output re-parses to the same value. (One exception: serde_json's recursion
//!   limit is one level below our default depth limit.)
//! - Ours rejects while serde_json accepts ⇒ the rejection is one of the lossless ones:
//!   a duplicate key, `-0`, a number that would be rounded or that is out of range, a
//!   lone surrogate, or nesting beyond our limit; and it is explained by the value
//!   serde_json produced (the duplicated key is in it; a `-0` or a number is in it).
//! - Every error message stays short, whatever the input.
#![no_main]

use dsh_json::{ParseErrorKind, ParseOptions, Value, from_serde, parse_slice};
use libfuzzer_sys::fuzz_target;

/// No parse error message is longer than this.
const MESSAGE_BOUND: usize = 600;

fn has_key(v: &serde_json::Value, key: &str) -> bool {
    match v {
        serde_json::Value::Object(m) => m.contains_key(key) || m.values().any(|x| has_key(x, key)),
        serde_json::Value::Array(a) => a.iter().any(|x| has_key(x, key)),
        _ => false,
    }
}

fn has_number(v: &serde_json::Value, pred: &dyn Fn(&serde_json::Number) -> bool) -> bool {
    match v {
        serde_json::Value::Number(n) => pred(n),
        serde_json::Value::Object(m) => m.values().any(|x| has_number(x, pred)),
        serde_json::Value::Array(a) => a.iter().any(|x| has_number(x, pred)),
        _ => false,
    }
}

fuzz_target!(|data: &[u8]| {
    let ours = parse_slice(data, &ParseOptions::default());
    let theirs = serde_json::from_slice::<serde_json::Value>(data);
    match (ours, theirs) {
        (Ok(v), Ok(s)) => {
            let converted: Value = from_serde(&s).expect("serde_json's value of accepted text is lossless");
            assert!(v == converted, "values differ: ours {v}, serde_json {s}");
            let again = dsh_json::parse(&v.to_string()).expect("our output parses");
            assert!(again == v, "output does not round-trip: {v}");
        }
        (Ok(v), Err(e)) => {
            assert!(
                e.to_string().contains("recursion limit exceeded"),
                "serde_json rejects what we accept ({e}): {v}"
            );
        }
        (Err(e), theirs) => {
            let msg = e.to_string();
            assert!(msg.len() < MESSAGE_BOUND, "{} byte message", msg.len());
            if let Ok(s) = theirs {
                match e.kind() {
                    ParseErrorKind::DuplicateKey(k) => {
                        // Long keys are shortened in the message; short ones must be there.
                        assert!(k.contains('…') || has_key(&s, k), "{msg}");
                    }
                    ParseErrorKind::NegativeZero => assert!(
                        has_number(&s, &|n| n.as_f64().is_some_and(|f| f == 0.0 && f.is_sign_negative())),
                        "{msg}"
                    ),
                    ParseErrorKind::InexactNumber(_) | ParseErrorKind::NumberOutOfRange(_) => {
                        assert!(has_number(&s, &|_| true), "{msg}")
                    }
                    ParseErrorKind::LoneSurrogate | ParseErrorKind::TooDeep { .. } => {}
                    _ => panic!("we reject what serde_json accepts: {msg}"),
                }
            }
        }
    }
});
