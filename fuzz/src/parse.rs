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

use dsh_json::{ParseErrorKind, ParseOptions, Value, from_serde, parse_slice};

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

/// Whether serde_json's value is ours. Numbers compare exactly, except that a literal with
/// a fraction or exponent whose value is a 64-bit integer (`1844674407370937095.0`) is
/// that integer exactly for us, while serde_json rounds it to an `f64`: then our integer
/// must round to serde_json's `f64`.
fn agree(ours: &Value, theirs: &serde_json::Value) -> bool {
    use serde_json::Value as S;
    match (ours, theirs) {
        (Value::Null, S::Null) => true,
        (Value::Bool(a), S::Bool(b)) => a == b,
        (Value::String(a), S::String(b)) => **a == **b,
        (Value::Number(a), S::Number(b)) => match (b.as_u64(), b.as_i64(), b.as_f64()) {
            (Some(u), _, _) => a.as_u64() == Some(u),
            (None, Some(i), _) => a.as_i64() == Some(i),
            (None, None, Some(f)) => a.as_f64() == Some(f),
            _ => false,
        },
        (Value::Array(a), S::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| agree(x, y))
        }
        (Value::Object(a), S::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(k, x)| b.get(k).is_some_and(|y| agree(x, y)))
        }
        _ => false,
    }
}

/// Check one input; panics when an invariant breaks. Every input is checked: returns
/// `true` (the signature of every body).
pub fn run(data: &[u8]) -> bool {
    let ours = parse_slice(data, &ParseOptions::default());
    let theirs = serde_json::from_slice::<serde_json::Value>(data);
    match (ours, theirs) {
        (Ok(v), Ok(s)) => {
            assert!(agree(&v, &s), "values differ: ours {v}, serde_json {s}");
            // Where serde_json kept every number exactly, its value converts to ours.
            if let Ok(converted) = from_serde(&s)
                && converted != v
            {
                assert!(
                    has_number(&s, &|n| n.is_f64()),
                    "values differ: ours {v}, serde_json {s}"
                );
            }
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
                        has_number(&s, &|n| n
                            .as_f64()
                            .is_some_and(|f| f == 0.0 && f.is_sign_negative())),
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
    true
}
