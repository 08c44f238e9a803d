//! The lossless check for values that reach the pipeline from user code (body values,
//! wrapper- and policy-authored values, presentation meta, argument values passed as
//! [`crate::json::Value`]).
//!
//! A snapshot [`Value`] can only hold finite numbers, but the check is cheap and keeps
//! the guarantee independent of how a value was built: it rejects NaN, ±infinity and
//! `-0`. The walk is iterative, so deep values cannot overflow the stack.

use crate::json::{Number, Value};

/// `Ok` when every number in `value` is finite and not `-0`; otherwise the path of the
/// first offending number (`value.a[2]`), rooted at `label`.
pub(crate) fn check(value: &Value, label: &str) -> Result<(), String> {
    // `Vec::new` does not allocate: scalars are checked without any allocation.
    let mut stack: Vec<&Value> = Vec::new();
    let mut next = Some(value);
    while let Some(v) = next {
        match v {
            Value::Number(n) if !finite(n) => {
                return Err(format!(
                    "{} is not a finite JSON number ({n})",
                    locate(value, v, label)
                ));
            }
            Value::Array(items) => stack.extend(items.iter()),
            Value::Object(o) => stack.extend(o.iter().map(|(_, v)| v)),
            _ => {}
        }
        next = stack.pop();
    }
    Ok(())
}

fn finite(n: &Number) -> bool {
    if !n.is_f64() {
        return true;
    }
    match n.as_f64() {
        Some(f) => f.is_finite() && !(f == 0.0 && f.is_sign_negative()),
        None => false,
    }
}

/// The path of `target` (found by address) inside `root`; only computed on failure.
fn locate(root: &Value, target: &Value, label: &str) -> String {
    let mut stack: Vec<(&Value, String)> = vec![(root, label.to_string())];
    while let Some((v, path)) = stack.pop() {
        if std::ptr::eq(v, target) {
            return path;
        }
        match v {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    stack.push((item, format!("{path}[{i}]")));
                }
            }
            Value::Object(o) => {
                for (k, item) in o.iter() {
                    let seg = if crate::schema::is_ident_key(k) {
                        format!("{path}.{k}")
                    } else {
                        format!("{path}[{}]", crate::schema::json_quote(k))
                    };
                    stack.push((item, seg));
                }
            }
            _ => {}
        }
    }
    label.to_string()
}
