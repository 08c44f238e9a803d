//! The lossless check for values that reach the pipeline from user code (body values,
//! wrapper- and policy-authored values, presentation meta, argument values passed as
//! [`crate::json::Value`]).
//!
//! A snapshot [`Value`] is meant to hold only finite numbers, but the check is cheap and
//! keeps the guarantee independent of how a value was built: it rejects NaN, ±infinity
//! and `-0`. It allocates nothing for values up to [`RECURSION_LIMIT`] levels deep and
//! continues with a heap stack below that, so deep values cannot overflow the stack.

use crate::json::{Number, Value};

/// Nesting handled by (cheap, allocation-free) recursion before switching to a heap
/// stack.
const RECURSION_LIMIT: usize = 64;

/// `Ok` when every number in `value` is finite and not `-0`; otherwise a message naming
/// the path of the first offending number (`value.a[2]`), rooted at `label`.
pub(crate) fn check(value: &Value, label: &str) -> Result<(), String> {
    if walk(value, 0) {
        Ok(())
    } else {
        Err(describe(value, label))
    }
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

fn walk(v: &Value, depth: usize) -> bool {
    match v {
        Value::Number(n) => finite(n),
        Value::Array(_) | Value::Object(_) if depth >= RECURSION_LIMIT => walk_deep(v),
        Value::Array(items) => items.iter().all(|i| walk(i, depth + 1)),
        Value::Object(o) => o.iter().all(|(_, i)| walk(i, depth + 1)),
        _ => true,
    }
}

fn walk_deep(root: &Value) -> bool {
    let mut stack = vec![root];
    while let Some(v) = stack.pop() {
        match v {
            Value::Number(n) if !finite(n) => return false,
            Value::Array(items) => stack.extend(items.iter()),
            Value::Object(o) => stack.extend(o.iter().map(|(_, v)| v)),
            _ => {}
        }
    }
    true
}

/// The message for the first offending number, in document order (failure path only).
fn describe(root: &Value, label: &str) -> String {
    let mut stack: Vec<(&Value, String)> = vec![(root, label.to_string())];
    while let Some((v, path)) = stack.pop() {
        match v {
            Value::Number(n) if !finite(n) => {
                return format!("{path} is not a finite JSON number ({n})");
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate().rev() {
                    stack.push((item, format!("{path}[{i}]")));
                }
            }
            Value::Object(o) => {
                let entries: Vec<_> = o.iter().collect();
                for (k, item) in entries.into_iter().rev() {
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
    format!("{label} is not lossless JSON")
}
