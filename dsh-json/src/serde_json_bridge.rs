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
    let mut stack: Vec<FromFrame<'_>> = Vec::new();
    let mut cur = v;
    loop {
        let done = match from_open(cur, &mut stack)? {
            Step::Descend(child) => {
                cur = child;
                continue;
            }
            Step::Done(done) => done,
        };
        match from_close(&mut stack, done) {
            Step::Descend(child) => cur = child,
            Step::Done(done) => return Ok(done),
        }
    }
}

/// A container of [`from_serde`]'s walk, partly converted: the members left, those
/// converted, and (for an object) the key of the member being converted.
enum FromFrame<'a> {
    Arr(std::slice::Iter<'a, serde_json::Value>, Vec<Value>),
    Obj(serde_json::map::Iter<'a>, Vec<(Str, Value)>, &'a str),
}

/// Where [`from_serde`]'s walk goes next.
enum Step<'a> {
    /// Into this member.
    Descend(&'a serde_json::Value),
    /// Up, with this converted value.
    Done(Value),
}

/// The path of the member being converted, rooted at `value`.
fn from_path(stack: &[FromFrame<'_>]) -> String {
    path::render(
        "value",
        stack.iter().map(|f| match f {
            FromFrame::Arr(_, items) => Seg::Index(items.len()),
            FromFrame::Obj(_, _, key) => Seg::Key(key),
        }),
    )
}

/// Converts `cur` when it is a scalar or an empty container; opens a frame for a
/// non-empty container and descends into its first member.
#[inline]
fn from_open<'a>(
    cur: &'a serde_json::Value,
    stack: &mut Vec<FromFrame<'a>>,
) -> Result<Step<'a>, LosslessError> {
    let done = match cur {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::String(s) => Value::from(s.as_str()),
        serde_json::Value::Number(n) => match from_number(n) {
            Ok(num) => Value::Number(num),
            Err(kind) => return Err(LosslessError::new(kind, from_path(stack))),
        },
        serde_json::Value::Array(a) => {
            let mut it = a.iter();
            match it.next() {
                Some(first) => {
                    stack.push(FromFrame::Arr(it, Vec::with_capacity(a.len())));
                    return Ok(Step::Descend(first));
                }
                None => Value::Array(Array::new()),
            }
        }
        serde_json::Value::Object(m) => {
            let mut it = m.iter();
            match it.next() {
                Some((k, first)) => {
                    stack.push(FromFrame::Obj(it, Vec::with_capacity(m.len()), k));
                    return Ok(Step::Descend(first));
                }
                None => Value::Object(Object::new()),
            }
        }
    };
    Ok(Step::Done(done))
}

/// A `serde_json` number as a lossless [`Number`]: fails on `-0.0` and on a
/// non-finite number.
#[inline]
fn from_number(n: &serde_json::Number) -> Result<Number, LosslessErrorKind> {
    let num = if let Some(u) = n.as_u64() {
        Some(Number::from(u))
    } else if let Some(i) = n.as_i64() {
        Some(Number::from(i))
    } else {
        n.as_f64().and_then(Number::from_f64)
    };
    num.ok_or_else(|| match n.as_f64() {
        Some(f) if f.is_finite() => LosslessErrorKind::NegativeZero,
        _ => LosslessErrorKind::NonFinite,
    })
}

/// Adds the converted `done` to the innermost open container; closes each container
/// whose members are all converted. Descends into the next member left, or ends with
/// the whole value.
#[inline]
fn from_close<'a>(stack: &mut Vec<FromFrame<'a>>, mut done: Value) -> Step<'a> {
    loop {
        match stack.last_mut() {
            None => return Step::Done(done),
            Some(FromFrame::Arr(it, items)) => {
                items.push(done);
                if let Some(next) = it.next() {
                    return Step::Descend(next);
                }
                let Some(FromFrame::Arr(_, items)) = stack.pop() else {
                    unreachable!("top frame is an array frame")
                };
                done = Value::Array(Array::from(items));
            }
            Some(FromFrame::Obj(it, entries, key)) => {
                entries.push(((*key).into(), done));
                if let Some((k, next)) = it.next() {
                    *key = k;
                    return Step::Descend(next);
                }
                let Some(FromFrame::Obj(_, entries, _)) = stack.pop() else {
                    unreachable!("top frame is an object frame")
                };
                done = Value::Object(Object::from_unique(entries));
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
