//! The validator: interprets exactly the published [`Schema`] against a snapshot.
//!
//! It collects **every** violation, in schema-walk order, each path-qualified:
//!
//! - at an object: first each missing required property (in declaration order), then each
//!   declared property that is present (depth-first), then each undeclared key of a closed
//!   object (in the value's key order);
//! - a type mismatch stops descent into that node;
//! - after the type, a node's constraints (`minimum`/`maximum`, lengths, `pattern`,
//!   `minItems`/`maxItems`) are each checked, then `enum`, then `const` (only the first of
//!   those two that fails is reported);
//! - `oneOf` counts the branches with no violation and reports one violation unless
//!   exactly one matched; branch details are discarded.
//!
//! Paths: `path`, `a.b`, `items[2].name`, `m["odd key"]`; the root itself is named by a
//! label (`arguments` for tool arguments, `value` for outputs, where paths are prefixed:
//! `value.x`, `value[1]`).
//!
//! **Null leniency.** `null` for a property that is not required means "omitted" unless
//! the property's own schema admits `null`. The validator accepts it, and
//! [`Validated::normalized`] removes such keys before the value is handed to serde, so
//! serde sees exactly what the validator accepted.
//!
//! Recursion follows the schema, never the value: it is bounded by the schema depth
//! (at most [`crate::schema::MAX_SCHEMA_DEPTH`] for imported schemas; derived schemas are
//! finite), and `json` nodes are not descended into.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;
use std::fmt::Write as _;

use crate::json::{Number, Object, Value};
use crate::schema::{Additional, Kind, Schema, json_quote};

/// Arguments that do not match a tool's parameter schema (code `INVALID_ARGS`).
///
/// Displays as `invalid arguments: ` followed by every violation, joined by `; `.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolArgsError {
    violations: Vec<String>,
}

impl ToolArgsError {
    /// The error code of argument failures.
    pub const CODE: &'static str = "INVALID_ARGS";

    /// An error with the given violations (each a full sentence such as
    /// `"path" must be a string`).
    pub fn new(violations: Vec<String>) -> Self {
        ToolArgsError { violations }
    }

    /// Every violation, in schema-walk order.
    pub fn violations(&self) -> &[String] {
        &self.violations
    }
}

impl fmt::Display for ToolArgsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid arguments: ")?;
        f.write_str(&self.violations.join("; "))
    }
}

impl std::error::Error for ToolArgsError {}

/// A successful validation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub struct Validated {
    omitted_nulls: bool,
}

impl Validated {
    /// Whether some property that is not required was `null` and is to be treated as
    /// omitted.
    pub fn has_omitted_nulls(&self) -> bool {
        self.omitted_nulls
    }

    /// The value serde should see: `value` itself, or a copy without the `null`s that
    /// mean "omitted" (only built when there are any).
    pub fn normalized<'v>(&self, schema: &Schema, value: &'v Value) -> Cow<'v, Value> {
        if self.omitted_nulls {
            match strip(schema, value) {
                Some(v) => Cow::Owned(v),
                None => Cow::Borrowed(value),
            }
        } else {
            Cow::Borrowed(value)
        }
    }
}

/// Validate tool arguments (root label `arguments`).
pub fn validate_arguments(schema: &Schema, value: &Value) -> Result<Validated, ToolArgsError> {
    validate_labeled(schema, value, "arguments", false).map_err(ToolArgsError::new)
}

/// Validate a value, naming the root `label`; with `prefix`, every path starts with the
/// label (`value.x`), otherwise only the root itself is named by it.
///
/// Returns every violation as a full sentence.
pub fn validate_labeled(
    schema: &Schema,
    value: &Value,
    label: &str,
    prefix: bool,
) -> Result<Validated, Vec<String>> {
    let mut w = Walker {
        out: Some(Vec::new()),
        failed: false,
        omitted_nulls: false,
        label,
        prefix,
    };
    w.node(schema, value, &Path::Root);
    match w.out {
        Some(v) if !v.is_empty() => Err(v),
        _ => Ok(Validated {
            omitted_nulls: w.omitted_nulls,
        }),
    }
}

/// Whether `value` matches `schema` (no messages are built).
pub fn is_valid(schema: &Schema, value: &Value) -> bool {
    matches(schema, value)
}

impl Schema {
    /// Whether `null` matches this node.
    pub fn admits_null(&self) -> bool {
        matches(self, &Value::Null)
    }
}

fn matches(schema: &Schema, value: &Value) -> bool {
    match_info(schema, value).0
}

/// Whether `value` matches `schema`, and whether it relies on the null leniency (so
/// normalization has something to strip).
fn match_info(schema: &Schema, value: &Value) -> (bool, bool) {
    let mut w = Walker {
        out: None,
        failed: false,
        omitted_nulls: false,
        label: "",
        prefix: false,
    };
    w.node(schema, value, &Path::Root);
    (!w.failed, w.omitted_nulls)
}

/// The path of the node being checked: a linked list on the walker's stack, so checking a
/// valid value allocates nothing; it is rendered only for a violation.
#[derive(Clone, Copy)]
enum Path<'p> {
    Root,
    Key(&'p Path<'p>, &'p str),
    Index(&'p Path<'p>, usize),
}

struct Walker<'l> {
    /// `None`: stop at the first violation and build no message.
    out: Option<Vec<String>>,
    failed: bool,
    omitted_nulls: bool,
    label: &'l str,
    prefix: bool,
}

impl Walker<'_> {
    fn stop(&self) -> bool {
        self.failed && self.out.is_none()
    }

    /// Record a violation at `path`: the message is the quoted path followed by what
    /// `tail` writes, built in one buffer.
    // Cold and out of line: message building stays out of the hot walk's code.
    #[cold]
    #[inline(never)]
    fn fail(&mut self, path: &Path<'_>, tail: impl FnOnce(&mut String)) {
        self.failed = true;
        if let Some(out) = &mut self.out {
            let mut m = String::with_capacity(64);
            m.push('"');
            write_path(&mut m, path, self.label, self.prefix);
            m.push('"');
            tail(&mut m);
            out.push(m);
        }
    }

    fn node(&mut self, schema: &Schema, value: &Value, path: &Path<'_>) {
        match &schema.kind {
            Kind::Json => {}
            Kind::OneOf(branches) => {
                let mut matched = 0;
                let mut omitted_nulls = false;
                for b in branches {
                    let (ok, omitted) = match_info(b, value);
                    if ok {
                        matched += 1;
                        omitted_nulls |= omitted;
                    }
                }
                // A lenient `null` inside the matching branch must be normalized away too.
                self.omitted_nulls |= omitted_nulls;
                if matched != 1 {
                    self.fail(path, |m| {
                        let _ = write!(
                            m,
                            " must match exactly one oneOf branch (matched {matched})"
                        );
                    });
                }
                return;
            }
            Kind::String(r) => {
                let Value::String(s) = value else {
                    return self.fail(path, |m| m.push_str(" must be a string"));
                };
                if let Some(min) = r.min_length
                    && char_len_below(s, min)
                {
                    self.fail(path, |m| {
                        let _ = write!(m, " must be at least {min} characters long");
                    });
                }
                if let Some(max) = r.max_length
                    && !char_len_below(s, max.saturating_add(1))
                {
                    self.fail(path, |m| {
                        let _ = write!(m, " must be at most {max} characters long");
                    });
                }
                if let Some(pat) = &r.pattern
                    && !pat.is_match(s)
                {
                    let src = json_quote(pat.as_str());
                    self.fail(path, |m| {
                        let _ = write!(m, " must match the pattern {src}");
                    });
                }
            }
            Kind::Number(r) => {
                let Value::Number(n) = value else {
                    return self.fail(path, |m| m.push_str(" must be a number"));
                };
                if let Some(min) = r.minimum
                    && cmp_f64(n, min) == Ordering::Less
                {
                    self.fail(path, |m| {
                        let _ = write!(m, " must be at least {}", fmt_f64(min));
                    });
                }
                if let Some(max) = r.maximum
                    && cmp_f64(n, max) == Ordering::Greater
                {
                    self.fail(path, |m| {
                        let _ = write!(m, " must be at most {}", fmt_f64(max));
                    });
                }
            }
            Kind::Integer(r) => {
                let Value::Number(n) = value else {
                    return self.fail(path, |m| m.push_str(" must be an integer"));
                };
                if !n.is_integer() {
                    return self.fail(path, |m| m.push_str(" must be an integer"));
                }
                if let Some(min) = r.minimum
                    && cmp_int(n, min) == Ordering::Less
                {
                    self.fail(path, |m| {
                        let _ = write!(m, " must be at least {min}");
                    });
                }
                if let Some(max) = r.maximum
                    && cmp_int(n, max) == Ordering::Greater
                {
                    self.fail(path, |m| {
                        let _ = write!(m, " must be at most {max}");
                    });
                }
            }
            Kind::Boolean => {
                if !matches!(value, Value::Bool(_)) {
                    return self.fail(path, |m| m.push_str(" must be a boolean"));
                }
            }
            Kind::Null => {
                if !matches!(value, Value::Null) {
                    return self.fail(path, |m| m.push_str(" must be null"));
                }
            }
            Kind::Array(r) => {
                let Value::Array(items) = value else {
                    return self.fail(path, |m| m.push_str(" must be an array"));
                };
                let len = items.len() as u64;
                if let Some(min) = r.min_items
                    && len < min
                {
                    self.fail(path, |m| {
                        let _ = write!(m, " must have at least {min} items");
                    });
                }
                if let Some(max) = r.max_items
                    && len > max
                {
                    self.fail(path, |m| {
                        let _ = write!(m, " must have at most {max} items");
                    });
                }
                if let Some(item_schema) = &r.items {
                    for (i, item) in items.iter().enumerate() {
                        if self.stop() {
                            return;
                        }
                        self.node(item_schema, item, &Path::Index(path, i));
                    }
                }
                return;
            }
            Kind::Object(r) => {
                let Value::Object(obj) = value else {
                    return self.fail(path, |m| m.push_str(" must be an object"));
                };
                self.object(r, obj, path);
                return;
            }
        }
        if self.stop() {
            return;
        }
        if let Some(values) = &schema.enum_values
            && !values.iter().any(|e| json_eq(e, value))
        {
            let list = Value::from(values.clone()).to_string();
            self.fail(path, |m| {
                let _ = write!(m, " must be one of {list}");
            });
            return;
        }
        if let Some(c) = &schema.const_value
            && !json_eq(c, value)
        {
            self.fail(path, |m| {
                let _ = write!(m, " must be {c}");
            });
        }
    }

    // Kept out of line so the scalar checks in `node` keep a small stack frame.
    #[inline(never)]
    fn object(&mut self, r: &crate::schema::ObjectRules, obj: &Object, path: &Path<'_>) {
        // Look every declared property up once. Models usually send keys in declaration
        // order, so each lookup first tries the entry after the previous hit.
        let entries = obj.entries();
        // Fast path: exactly the declared keys, in declaration order (what models send
        // most of the time). Nothing can be missing or undeclared, so each property is
        // checked in place; any other shape takes the general path below.
        if entries.len() == r.properties.len()
            && entries
                .iter()
                .zip(&r.properties)
                .all(|((k, _), p)| str_eq(k, &p.name))
        {
            for ((_, v), p) in entries.iter().zip(&r.properties) {
                if !p.required && v.is_null() && !p.schema.admits_null() {
                    self.omitted_nulls = true;
                    continue;
                }
                self.node(&p.schema, v, &Path::Key(path, &p.name));
                if self.stop() {
                    return;
                }
            }
            return;
        }
        let mut inline: [Option<&Value>; 8] = [None; 8];
        let mut spilled: Vec<Option<&Value>>;
        let found: &mut [Option<&Value>] = if r.properties.len() <= inline.len() {
            &mut inline[..r.properties.len()]
        } else {
            spilled = vec![None; r.properties.len()];
            &mut spilled
        };
        let mut hint = 0usize;
        let mut missing_required = false;
        for (slot, p) in found.iter_mut().zip(&r.properties) {
            let name: &str = &p.name;
            let hit = match entries.get(hint) {
                Some((k, v)) if str_eq(k, name) => Some((hint, v)),
                _ => entries
                    .iter()
                    .enumerate()
                    .find(|(_, (k, _))| str_eq(k, name))
                    .map(|(i, (_, v))| (i, v)),
            };
            if let Some((i, v)) = hit {
                hint = i + 1;
                *slot = Some(v);
            } else if p.required {
                missing_required = true;
            }
        }
        // (1) missing required properties, in declaration order.
        if missing_required {
            for (slot, p) in found.iter().zip(&r.properties) {
                if p.required && slot.is_none() {
                    self.failed = true;
                    if let Some(out) = &mut self.out {
                        let mut m = String::from("missing required property \"");
                        write_path(&mut m, &Path::Key(path, &p.name), self.label, self.prefix);
                        m.push('"');
                        out.push(m);
                    }
                    if self.stop() {
                        return;
                    }
                }
            }
        }
        // (2) declared properties that are present, in declaration order.
        let mut declared_present = 0usize;
        for (slot, p) in found.iter().zip(&r.properties) {
            let Some(v) = *slot else { continue };
            declared_present += 1;
            if !p.required && v.is_null() && !p.schema.admits_null() {
                // `null` means "omitted" for a property that is not required.
                self.omitted_nulls = true;
                continue;
            }
            self.node(&p.schema, v, &Path::Key(path, &p.name));
            if self.stop() {
                return;
            }
        }
        // (3) undeclared keys, in the value's key order.
        if declared_present == obj.len() {
            return;
        }
        match &r.additional {
            Additional::Open => {}
            Additional::Closed => {
                for (k, _) in obj.iter() {
                    if r.properties.iter().any(|p| p.name == k) {
                        continue;
                    }
                    self.fail(&Path::Key(path, k), |m| {
                        m.push_str(" is not a declared property (additionalProperties: false)")
                    });
                    if self.stop() {
                        return;
                    }
                }
            }
            Additional::Schema(s) => {
                for (k, v) in obj.iter() {
                    if r.properties.iter().any(|p| p.name == k) {
                        continue;
                    }
                    self.node(s, v, &Path::Key(path, k));
                    if self.stop() {
                        return;
                    }
                }
            }
        }
    }
}

/// Write `path` as it appears inside a JSON string literal (escaped), e.g.
/// `items[2].name` or `m[\"odd key\"]`.
fn write_path(out: &mut String, path: &Path<'_>, label: &str, prefix: bool) {
    let mut segs: Vec<&Path<'_>> = Vec::new();
    let mut at = path;
    while let Path::Key(parent, _) | Path::Index(parent, _) = at {
        segs.push(at);
        at = parent;
    }
    if segs.is_empty() {
        push_escaped(out, label);
        return;
    }
    let start = out.len();
    if prefix {
        push_escaped(out, label);
    }
    for seg in segs.into_iter().rev() {
        match *seg {
            Path::Key(_, k) if crate::schema::is_ident_key(k) => {
                if out.len() > start {
                    out.push('.');
                }
                out.push_str(k);
            }
            Path::Key(_, k) => {
                out.push('[');
                push_escaped(out, &json_quote(k));
                out.push(']');
            }
            Path::Index(_, i) => {
                let _ = write!(out, "[{i}]");
            }
            Path::Root => {}
        }
    }
}

/// Append `s` escaped as the inside of a JSON string.
fn push_escaped(out: &mut String, s: &str) {
    if !s.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        out.push_str(s);
    } else {
        let quoted = json_quote(s);
        out.push_str(&quoted[1..quoted.len() - 1]);
    }
}

/// String equality without a `memcmp` call for the short strings keys and enum values
/// usually are (compared as overlapping machine words).
#[inline(always)]
fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word8 = |s: &[u8], at: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&s[at..at + 8]);
        u64::from_ne_bytes(w)
    };
    let word4 = |s: &[u8], at: usize| {
        let mut w = [0u8; 4];
        w.copy_from_slice(&s[at..at + 4]);
        u32::from_ne_bytes(w)
    };
    match n {
        0 => true,
        1..=3 => a.iter().zip(b).all(|(x, y)| x == y),
        4..=7 => word4(a, 0) == word4(b, 0) && word4(a, n - 4) == word4(b, n - 4),
        8..=16 => word8(a, 0) == word8(b, 0) && word8(a, n - 8) == word8(b, n - 8),
        _ => a == b,
    }
}

/// JSON equality with the string fast path (`enum`/`const` of strings).
#[inline]
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(x), Value::String(y)) => str_eq(x, y),
        _ => a == b,
    }
}

/// Whether `s` has fewer than `n` Unicode scalar values, counting only when the byte
/// length cannot decide it (a scalar value takes one to four bytes).
fn char_len_below(s: &str, n: u64) -> bool {
    let bytes = s.len() as u64;
    if bytes < n {
        true
    } else if bytes >= n.saturating_mul(4) {
        false
    } else {
        (s.chars().count() as u64) < n
    }
}

/// Exact comparison of a JSON number with an integer bound.
fn cmp_int(n: &Number, bound: i128) -> Ordering {
    if let Some(u) = n.as_u64() {
        return (u as i128).cmp(&bound);
    }
    if let Some(i) = n.as_i64() {
        return (i as i128).cmp(&bound);
    }
    cmp_f64_int(n.as_f64().unwrap_or(0.0), bound)
}

/// Exact comparison of a float with an integer.
fn cmp_f64_int(f: f64, bound: i128) -> Ordering {
    const TWO_127: f64 = 170_141_183_460_469_231_731_687_303_715_884_105_728.0;
    if f >= TWO_127 {
        return Ordering::Greater;
    }
    if f < -TWO_127 {
        return Ordering::Less;
    }
    let floor = f.floor();
    match (floor as i128).cmp(&bound) {
        Ordering::Equal if f > floor => Ordering::Greater,
        o => o,
    }
}

/// Exact comparison of a JSON number with a float bound.
fn cmp_f64(n: &Number, bound: f64) -> Ordering {
    let as_int = n
        .as_u64()
        .map(|u| u as i128)
        .or_else(|| n.as_i64().map(|i| i as i128));
    match as_int {
        Some(i) => cmp_f64_int(bound, i).reverse(),
        None => n
            .as_f64()
            .unwrap_or(0.0)
            .partial_cmp(&bound)
            .unwrap_or(Ordering::Equal),
    }
}

fn fmt_f64(f: f64) -> String {
    match Number::from_f64(f) {
        Some(n) => n.to_string(),
        None => f.to_string(),
    }
}

/// Remove the `null`s that mean "omitted"; `None` when nothing changed.
fn strip(schema: &Schema, value: &Value) -> Option<Value> {
    match (&schema.kind, value) {
        (Kind::Object(r), Value::Object(obj)) => {
            let mut changed = false;
            let mut out = Object::new();
            for (k, v) in obj.iter() {
                match r.properties.iter().find(|p| p.name == k) {
                    Some(p) => {
                        if !p.required && v.is_null() && !p.schema.admits_null() {
                            changed = true;
                            continue;
                        }
                        match strip(&p.schema, v) {
                            Some(nv) => {
                                changed = true;
                                out.insert(k, nv);
                            }
                            None => {
                                out.insert(k, v.clone());
                            }
                        }
                    }
                    None => {
                        let nv = match &r.additional {
                            Additional::Schema(s) => strip(s, v),
                            _ => None,
                        };
                        changed |= nv.is_some();
                        out.insert(k, nv.unwrap_or_else(|| v.clone()));
                    }
                }
            }
            changed.then_some(Value::Object(out))
        }
        (Kind::Array(r), Value::Array(items)) => {
            let item_schema = r.items.as_ref()?;
            let mut changed = false;
            let out: Vec<Value> = items
                .iter()
                .map(|it| match strip(item_schema, it) {
                    Some(nv) => {
                        changed = true;
                        nv
                    }
                    None => it.clone(),
                })
                .collect();
            changed.then(|| Value::from(out))
        }
        (Kind::OneOf(branches), _) => {
            let branch = branches.iter().find(|b| matches(b, value))?;
            strip(branch, value)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::str_eq;

    #[test]
    fn str_eq_agrees_with_eq_at_every_length() {
        let base = "abcdefghijklmnopqrstuvwxyz0123456789";
        for n in 0..=base.len() {
            let a = &base[..n];
            assert!(str_eq(a, a));
            for i in 0..n {
                let mut b = a.as_bytes().to_vec();
                b[i] = b'_';
                let b = std::str::from_utf8(&b).unwrap();
                assert!(!str_eq(a, b), "{a} vs {b}");
            }
            if n > 0 {
                assert!(!str_eq(a, &base[..n - 1]));
            }
        }
        assert!(str_eq("é✓", "é✓"));
        assert!(!str_eq("é✓", "e✓x"));
    }
}
