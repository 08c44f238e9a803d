//! Conversions between [`Value`] and `serde_json::Value` (both iterative).

use super::number::{N, Number};
use super::path::{self, Seg};
use super::ser::{LosslessError, LosslessErrorKind};
use super::str::Str;
use super::value::{Array, Object, Value};

/// Converts a `serde_json::Value` into a lossless [`Value`].
///
/// Fails on `-0.0` (which `serde_json` produces for the literal `-0`) and on
/// any non-finite number, with a path rooted at `value`. `serde_json` maps
/// have unique keys, so no duplicate check is needed. Iterative.
pub fn from_serde(v: &serde_json::Value) -> Result<Value, LosslessError> {
    enum Frame<'a> {
        Arr(std::slice::Iter<'a, serde_json::Value>, Vec<Value>),
        Obj(serde_json::map::Iter<'a>, Vec<(Str, Value)>, &'a str),
    }
    fn path_of(stack: &[Frame<'_>]) -> String {
        path::render(
            "value",
            stack.iter().map(|f| match f {
                Frame::Arr(_, items) => Seg::Index(items.len()),
                Frame::Obj(_, _, key) => Seg::Key(key),
            }),
        )
    }

    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut cur = v;
    'descend: loop {
        let mut done = match cur {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::String(s) => Value::from(s.as_str()),
            serde_json::Value::Number(n) => {
                let num = if let Some(u) = n.as_u64() {
                    Some(Number::from(u))
                } else if let Some(i) = n.as_i64() {
                    Some(Number::from(i))
                } else {
                    n.as_f64().and_then(Number::from_f64)
                };
                match num {
                    Some(num) => Value::Number(num),
                    None => {
                        let kind = match n.as_f64() {
                            Some(f) if f.is_finite() => LosslessErrorKind::NegativeZero,
                            _ => LosslessErrorKind::NonFinite,
                        };
                        return Err(LosslessError::new(kind, path_of(&stack)));
                    }
                }
            }
            serde_json::Value::Array(a) => {
                let mut it = a.iter();
                match it.next() {
                    Some(first) => {
                        stack.push(Frame::Arr(it, Vec::with_capacity(a.len())));
                        cur = first;
                        continue 'descend;
                    }
                    None => Value::Array(Array::new()),
                }
            }
            serde_json::Value::Object(m) => {
                let mut it = m.iter();
                match it.next() {
                    Some((k, first)) => {
                        stack.push(Frame::Obj(it, Vec::with_capacity(m.len()), k));
                        cur = first;
                        continue 'descend;
                    }
                    None => Value::Object(Object::new()),
                }
            }
        };
        loop {
            match stack.last_mut() {
                None => return Ok(done),
                Some(Frame::Arr(it, items)) => {
                    items.push(done);
                    if let Some(next) = it.next() {
                        cur = next;
                        continue 'descend;
                    }
                    let Some(Frame::Arr(_, items)) = stack.pop() else {
                        unreachable!("top frame is an array frame")
                    };
                    done = Value::Array(Array::from(items));
                }
                Some(Frame::Obj(it, entries, key)) => {
                    entries.push(((*key).into(), done));
                    if let Some((k, next)) = it.next() {
                        *key = k;
                        cur = next;
                        continue 'descend;
                    }
                    let Some(Frame::Obj(_, entries, _)) = stack.pop() else {
                        unreachable!("top frame is an object frame")
                    };
                    done = Value::Object(Object::from_unique(entries));
                }
            }
        }
    }
}

/// Converts a [`Value`] into a `serde_json::Value`. Infallible: every
/// [`Number`] is a finite `serde_json` number. Iterative (but dropping a very
/// deep `serde_json::Value` recurses). Key order follows `serde_json::Map`
/// (sorted unless its `preserve_order` feature is on).
pub fn to_serde(v: &Value) -> serde_json::Value {
    enum Frame<'a> {
        Arr(std::slice::Iter<'a, Value>, Vec<serde_json::Value>),
        Obj(
            std::slice::Iter<'a, (Str, Value)>,
            serde_json::Map<String, serde_json::Value>,
            &'a str,
        ),
    }
    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut cur = v;
    'descend: loop {
        let mut done = match cur {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::String(s) => serde_json::Value::String(s.to_string()),
            Value::Number(n) => serde_json::Value::Number(match n.0 {
                N::PosInt(u) => u.into(),
                N::NegInt(i) => i.into(),
                N::Float(f) => match serde_json::Number::from_f64(f) {
                    Some(x) => x,
                    // Unreachable: floats are finite by construction.
                    None => serde_json::Number::from(0u8),
                },
            }),
            Value::Array(a) => {
                let mut it = a.iter();
                match it.next() {
                    Some(first) => {
                        stack.push(Frame::Arr(it, Vec::with_capacity(a.len())));
                        cur = first;
                        continue 'descend;
                    }
                    None => serde_json::Value::Array(Vec::new()),
                }
            }
            Value::Object(o) => {
                let mut it = o.entries().iter();
                match it.next() {
                    Some((k, first)) => {
                        stack.push(Frame::Obj(it, serde_json::Map::new(), k));
                        cur = first;
                        continue 'descend;
                    }
                    None => serde_json::Value::Object(serde_json::Map::new()),
                }
            }
        };
        loop {
            match stack.last_mut() {
                None => return done,
                Some(Frame::Arr(it, items)) => {
                    items.push(done);
                    if let Some(next) = it.next() {
                        cur = next;
                        continue 'descend;
                    }
                    let Some(Frame::Arr(_, items)) = stack.pop() else {
                        unreachable!("top frame is an array frame")
                    };
                    done = serde_json::Value::Array(items);
                }
                Some(Frame::Obj(it, map, key)) => {
                    map.insert((*key).to_owned(), done);
                    if let Some((k, next)) = it.next() {
                        *key = k;
                        cur = next;
                        continue 'descend;
                    }
                    let Some(Frame::Obj(_, map, _)) = stack.pop() else {
                        unreachable!("top frame is an object frame")
                    };
                    done = serde_json::Value::Object(map);
                }
            }
        }
    }
}

impl From<&Value> for serde_json::Value {
    fn from(v: &Value) -> serde_json::Value {
        to_serde(v)
    }
}
