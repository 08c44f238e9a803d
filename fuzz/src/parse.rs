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
//!
//! serde_json's side is built by [`Plain`], a visitor of our own, not by deserializing a
//! `serde_json::Value`: with serde_json's `raw_value` feature enabled (the main workspace
//! enables it, and the replay test compiles this file there), `Value`'s own visitor treats
//! an object whose first key is `$serde_json::private::RawValue` as an embedded raw value
//! and replaces the object by the parse of its string, which is no part of JSON.

use dsh_json::{ParseErrorKind, ParseOptions, Value, from_serde, parse_slice};

/// A JSON value as serde_json's parser reads the text, key for key: duplicate keys keep
/// the last value (as `serde_json::Value` does), and no key is special.
struct Plain(serde_json::Value);

impl<'de> serde::Deserialize<'de> for Plain {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(PlainVisitor)
    }
}

struct PlainVisitor;

impl<'de> serde::de::Visitor<'de> for PlainVisitor {
    type Value = Plain;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, b: bool) -> Result<Plain, E> {
        Ok(Plain(serde_json::Value::Bool(b)))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Plain, E> {
        Ok(Plain(n.into()))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Plain, E> {
        Ok(Plain(n.into()))
    }
    fn visit_f64<E>(self, n: f64) -> Result<Plain, E> {
        Ok(Plain(
            serde_json::Number::from_f64(n).map_or(serde_json::Value::Null, Into::into),
        ))
    }
    fn visit_str<E>(self, s: &str) -> Result<Plain, E> {
        Ok(Plain(serde_json::Value::String(s.to_owned())))
    }
    fn visit_string<E>(self, s: String) -> Result<Plain, E> {
        Ok(Plain(serde_json::Value::String(s)))
    }
    fn visit_unit<E>(self) -> Result<Plain, E> {
        Ok(Plain(serde_json::Value::Null))
    }
    fn visit_none<E>(self) -> Result<Plain, E> {
        Ok(Plain(serde_json::Value::Null))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Plain, A::Error> {
        let mut items = Vec::new();
        while let Some(Plain(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Plain(serde_json::Value::Array(items)))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Plain, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some((key, Plain(value))) = map.next_entry::<String, Plain>()? {
            object.insert(key, value);
        }
        Ok(Plain(serde_json::Value::Object(object)))
    }
}

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
    let theirs = serde_json::from_slice::<Plain>(data).map(|Plain(value)| value);
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
