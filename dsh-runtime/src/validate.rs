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
//! - `oneOf`: when several branches match, one violation says so, unless exactly one of
//!   them matches the value as given (the others only because a `null` counts as
//!   omitted): that one is the match. When none matches, a
//!   tagged union (every branch an object requiring the same string-constant key, as
//!   serde's internally and adjacently tagged enums are) reports its tag: missing, or not
//!   one of the allowed values (listed), or, when the tag picks a branch, that branch's
//!   violations with their full paths. Any other union reports which branch is closest
//!   (the type fits, then the fewest violations) and that branch's violations; for
//!   `oneOf [T, null]` only `T`'s.
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
//! **Ignored keys.** At a `#[tool]`'s parameter root ([`Additional::Ignored`]),
//! undeclared keys are accepted, and [`Validated::normalized`] removes them too.
//!
//! Recursion follows the schema, never the value: it is bounded by the schema depth
//! (at most [`crate::schema::MAX_SCHEMA_DEPTH`] for imported schemas; derived schemas are
//! finite), and `json` nodes are not descended into.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;
use std::fmt::Write as _;
use std::sync::Arc;

use crate::json::NumberRepr as N;
use crate::json::{Number, Object, Value, write_json_string, write_value};
use crate::schema::{
    Additional, ArrayRules, IntegerRules, Kind, NumberRules, ObjectRules, Schema, StringRules,
};
pub use crate::violations::{MAX_REPORTED_VIOLATIONS, Violations, ViolationsIter};
use crate::violations::{Path, char_len_below, cmp_f64, cmp_f64_int, cmp_int, write_path};

/// Arguments that do not match a tool's parameter schema (code `INVALID_ARGS`).
///
/// Displays as `invalid arguments: ` followed by every violation, joined by `; `.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolArgsError {
    violations: Violations,
}

impl ToolArgsError {
    /// The error code of argument failures.
    pub const CODE: &'static str = "INVALID_ARGS";

    /// What the message starts with, before the violations.
    pub const PREFIX: &'static str = "invalid arguments: ";

    /// An error with the given violations (each a full sentence such as
    /// `"path" must be a string`).
    pub fn new<I, S>(violations: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        ToolArgsError {
            violations: violations.into_iter().collect(),
        }
    }

    /// Every violation, in schema-walk order.
    pub fn violations(&self) -> &Violations {
        &self.violations
    }
}

impl From<Violations> for ToolArgsError {
    fn from(violations: Violations) -> Self {
        ToolArgsError { violations }
    }
}

impl fmt::Display for ToolArgsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(Self::PREFIX)?;
        f.write_str(self.violations.joined())
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
    /// Whether [`Validated::normalized`] changes the value: some property that is not
    /// required was `null` (to be treated as omitted), or an ignoring parameter root
    /// ([`Additional::Ignored`]) had undeclared keys.
    pub fn has_omitted_nulls(&self) -> bool {
        self.omitted_nulls
    }

    /// The value serde should see: `value` itself, or a copy without the `null`s that
    /// mean "omitted" and without the undeclared keys of an ignoring parameter root (only
    /// built when there are any).
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
#[inline]
pub fn validate_arguments(schema: &Schema, value: &Value) -> Result<Validated, ToolArgsError> {
    validate_labeled(schema, value, "arguments", false).map_err(ToolArgsError::from)
}

/// Validate a value, naming the root `label`; with `prefix`, every path starts with the
/// label (`value.x`), otherwise only the root itself is named by it.
///
/// Returns every violation as a full sentence.
///
/// A value is first checked by a pass that builds nothing and stops at the first
/// violation; only a value that fails is walked again to report every violation.
#[inline]
pub fn validate_labeled(
    schema: &Schema,
    value: &Value,
    label: &str,
    prefix: bool,
) -> Result<Validated, Violations> {
    let mut omitted_nulls = false;
    if check(schema, value, &mut omitted_nulls) {
        return Ok(Validated { omitted_nulls });
    }
    Err(report(schema, value, label, prefix))
}

/// Validate a tool's output and return the value to send: `value` itself, or, when an
/// optional property held a `null` that the null leniency reads as "omitted", a copy
/// without those keys (root label `value`, paths prefixed: `value.before`).
///
/// What leaves the SDK never holds more than the published schema says, judged by
/// standard JSON Schema as a consumer reads it: serde writes `None` as `null`, while the
/// schema of an `Option<T>` field that is not required types it as plain `T`, so such a
/// `null` is removed here rather than sent. A value that, once those keys are removed, no
/// longer matches exactly (a `oneOf` that becomes ambiguous) is rejected: sending it would
/// break a validating client.
///
/// # Errors
///
/// Every violation, as [`validate_labeled`] reports them.
pub fn validate_output(schema: &Schema, value: Value) -> Result<Value, Violations> {
    let validated = validate_labeled(schema, &value, "value", true)?;
    if !validated.has_omitted_nulls() {
        return Ok(value);
    }
    let Some(stripped) = strip(schema, &value) else {
        return Ok(value);
    };
    let mut nulls = false;
    if check(schema, &stripped, &mut nulls) && !nulls {
        return Ok(stripped);
    }
    let mut out = report_all(schema, &stripped, "value", true);
    if out.is_empty() {
        let m = out.begin();
        m.push_str(
            "\"value\" still relies on a null read as omitted after those nulls were removed",
        );
        out.end();
    }
    let mut all = Violations::new();
    for v in out.iter() {
        all.push(&format!(
            "{v} (once the nulls of optional properties are left out, as they are sent)"
        ));
    }
    Err(all)
}

/// Every violation the reporting walk finds, without the verdict pass first (empty when
/// `value` matches). For tests that check the two passes agree; not a stable API.
#[doc(hidden)]
pub fn report_all(schema: &Schema, value: &Value, label: &str, prefix: bool) -> Violations {
    let mut r = Reporter {
        out: Violations::with_room(),
        label,
        prefix,
    };
    r.node(schema, value, &Path::Root);
    r.out.seal();
    r.out
}

#[cold]
#[inline(never)]
fn report(schema: &Schema, value: &Value, label: &str, prefix: bool) -> Violations {
    let mut out = report_all(schema, value, label, prefix);
    if out.is_empty() {
        // The two passes implement one rule set; should they ever disagree, the value
        // is still rejected, with a message that says so instead of none.
        debug_assert!(false, "the reporting walk found no violation");
        let m = out.begin();
        m.push('"');
        write_path(m, &Path::Root, label, prefix);
        m.push_str("\" does not match the schema");
        out.end();
    }
    out
}

/// Whether `value` matches `schema` (no messages are built).
pub fn is_valid(schema: &Schema, value: &Value) -> bool {
    check(schema, value, &mut false)
}

impl Schema {
    /// Whether `null` matches this node.
    pub fn admits_null(&self) -> bool {
        check(self, &Value::Null, &mut false)
    }
}

// ---------------------------------------------------------------------------------------
// The verdict pass: no paths, no messages, stops at the first violation.
// ---------------------------------------------------------------------------------------

/// Whether `value` matches `schema`; sets `nulls` when the match relies on the null
/// leniency (so normalization has something to strip).
///
/// The common leaves (strings, integers, any-JSON) are checked inline at the call site;
/// everything else goes through one out-of-line function, so the walk over an object's
/// members makes a call only for nested containers.
#[inline(always)]
fn check(schema: &Schema, value: &Value, nulls: &mut bool) -> bool {
    match (&schema.kind, value) {
        (Kind::String(r), Value::String(s)) => string_ok(r, s) && enum_const_ok(schema, value),
        (Kind::Integer(r), Value::Number(n)) => integer_ok(r, n) && enum_const_ok(schema, value),
        (Kind::Json, _) => true,
        _ => check_other(schema, value, nulls),
    }
}

#[inline(never)]
fn check_other(schema: &Schema, value: &Value, nulls: &mut bool) -> bool {
    match (&schema.kind, value) {
        (Kind::Object(r), Value::Object(o)) => check_object(r, o, nulls),
        (Kind::Array(r), Value::Array(a)) => check_array(r, a, nulls),
        (Kind::Number(r), Value::Number(n)) => {
            r.minimum.is_none_or(|m| cmp_f64(n, m) != Ordering::Less)
                && r.maximum.is_none_or(|m| cmp_f64(n, m) != Ordering::Greater)
                && enum_const_ok(schema, value)
        }
        (Kind::Boolean, Value::Bool(_)) | (Kind::Null, Value::Null) => enum_const_ok(schema, value),
        (Kind::OneOf(branches), _) => check_one_of(branches, value, nulls),
        _ => false,
    }
}

#[inline(always)]
fn enum_const_ok(schema: &Schema, value: &Value) -> bool {
    if let Some(values) = &schema.enum_values
        && !values.contains(value)
    {
        return false;
    }
    match &schema.const_value {
        Some(c) => json_eq(c, value),
        None => true,
    }
}

/// ` must be one of [a,b]`: the allowed values, strings as quoted text.
fn write_one_of_list<'v>(m: &mut String, values: impl Iterator<Item = &'v Value>) {
    m.push_str(" must be one of [");
    for (i, e) in values.enumerate() {
        if i > 0 {
            m.push(',');
        }
        let _ = match e {
            Value::String(text) => write_json_string(m, text),
            other => write_value(m, other),
        };
    }
    m.push(']');
}

#[inline(always)]
fn string_ok(r: &StringRules, s: &str) -> bool {
    if let Some(min) = r.min_length
        && char_len_below(s, min)
    {
        return false;
    }
    if let Some(max) = r.max_length
        && !char_len_below(s, max.saturating_add(1))
    {
        return false;
    }
    match &r.pattern {
        Some(p) => p.is_match(s),
        None => true,
    }
}

#[inline(always)]
fn integer_ok(r: &IntegerRules, n: &Number) -> bool {
    let i = match n.repr() {
        N::PosInt(u) => i128::from(u),
        N::NegInt(i) => i128::from(i),
        // Integral floats beyond the 64-bit range (`1e300`) are integers too.
        N::Float(f) => {
            return f.fract() == 0.0
                && r.minimum
                    .is_none_or(|m| cmp_f64_int(f, m) != Ordering::Less)
                && r.maximum
                    .is_none_or(|m| cmp_f64_int(f, m) != Ordering::Greater);
        }
    };
    r.minimum.is_none_or(|m| i >= m) && r.maximum.is_none_or(|m| i <= m)
}

#[inline(always)]
fn check_array(r: &ArrayRules, items: &[Value], nulls: &mut bool) -> bool {
    let len = items.len() as u64;
    if r.min_items.is_some_and(|m| len < m) || r.max_items.is_some_and(|m| len > m) {
        return false;
    }
    match &r.items {
        Some(s) => items.iter().all(|it| check(s, it, nulls)),
        None => true,
    }
}

/// One pass over the value's members in their own order: each key is looked up among the
/// declared properties (trying the one after the previous hit first, since models usually
/// send keys in declaration order), then the required ones that were not seen are
/// checked.
#[inline(always)]
fn check_object(r: &ObjectRules, obj: &Object, nulls: &mut bool) -> bool {
    let props = &r.properties[..];
    let mut next = 0usize;
    // Declared properties seen (the first 64; more are looked up again below).
    let mut seen = 0u64;
    let mut matched = 0usize;
    for (k, v) in obj.entries() {
        // Read the key's text once (an inline key decides where its bytes are on each read).
        let k: &str = k;
        let i = match props.get(next) {
            Some(p) if str_eq(k, &p.name) => next,
            _ => match props.iter().position(|p| str_eq(k, &p.name)) {
                Some(i) => i,
                None => match &r.additional {
                    Additional::Open => continue,
                    Additional::Ignored => {
                        // Normalization removes it before the body sees the arguments.
                        *nulls = true;
                        continue;
                    }
                    Additional::Closed => return false,
                    Additional::Schema(s) => {
                        if check(s, v, nulls) {
                            continue;
                        }
                        return false;
                    }
                },
            },
        };
        next = i + 1;
        matched += 1;
        seen |= 1u64.checked_shl(i as u32).unwrap_or(0);
        let p = &props[i];
        if let Value::Null = v
            && !p.required
            && !p.schema.admits_null()
        {
            // `null` means "omitted" for a property that is not required.
            *nulls = true;
            continue;
        }
        if !check(&p.schema, v, nulls) {
            return false;
        }
    }
    if matched == props.len() && props.len() <= 64 {
        return true;
    }
    for (i, p) in props.iter().enumerate() {
        if !p.required {
            continue;
        }
        let present = if i < 64 {
            seen & (1 << i) != 0
        } else {
            obj.entries().iter().any(|(k, _)| str_eq(k, &p.name))
        };
        if !present {
            return false;
        }
    }
    true
}

#[inline(always)]
fn check_one_of(branches: &[Arc<Schema>], value: &Value, nulls: &mut bool) -> bool {
    match one_of_match(branches, value) {
        OneOfMatch::One { nulls: n, .. } => {
            // A lenient `null` inside the matching branch must be normalized away too.
            *nulls |= n;
            true
        }
        OneOfMatch::NoBranch | OneOfMatch::Several(_) => false,
    }
}

/// Which branch of a `oneOf` a value matches.
enum OneOfMatch {
    /// Exactly this branch (`nulls`: it matches thanks to the null leniency).
    One { index: usize, nulls: bool },
    /// None does.
    NoBranch,
    /// This many branches do, and it is not the case that exactly one of them matches
    /// the value as given.
    Several(usize),
}

/// The branch a value matches: the only one that matches, or, when several match, the
/// only one that matches without reading a `null` as "omitted" (the null leniency only
/// ever widens what a schema accepts; it never makes a value that one branch takes as
/// given ambiguous).
fn one_of_match(branches: &[Arc<Schema>], value: &Value) -> OneOfMatch {
    let (mut matched, mut first) = (0usize, None);
    let (mut strict, mut first_strict) = (0usize, None);
    for (i, b) in branches.iter().enumerate() {
        let mut n = false;
        if check(b, value, &mut n) {
            matched += 1;
            first.get_or_insert((i, n));
            if !n {
                strict += 1;
                first_strict.get_or_insert(i);
            }
        }
    }
    match (matched, first, strict, first_strict) {
        (1, Some((index, nulls)), ..) => OneOfMatch::One { index, nulls },
        (_, _, 1, Some(index)) => OneOfMatch::One {
            index,
            nulls: false,
        },
        (0, ..) => OneOfMatch::NoBranch,
        (n, ..) => OneOfMatch::Several(n),
    }
}

// ---------------------------------------------------------------------------------------
// The reporting pass: every violation, path-qualified, in schema-walk order.
// ---------------------------------------------------------------------------------------

struct Reporter<'l> {
    out: Violations,
    label: &'l str,
    prefix: bool,
}

impl Reporter<'_> {
    /// Record a violation at `path`: the quoted path followed by what `tail` writes.
    fn fail(&mut self, path: &Path<'_>, tail: impl FnOnce(&mut String)) {
        if self.out.count_if_full() {
            return;
        }
        let (label, prefix) = (self.label, self.prefix);
        let m = self.out.begin();
        m.push('"');
        write_path(m, path, label, prefix);
        m.push('"');
        tail(m);
        self.out.end();
    }

    fn node(&mut self, schema: &Schema, value: &Value, path: &Path<'_>) {
        // Each kind's checks; `true`: the value has the node's type, and its `enum` and
        // `const` are checked next.
        let typed = match &schema.kind {
            Kind::Json => true,
            Kind::OneOf(branches) => {
                self.one_of(branches, value, path);
                false
            }
            Kind::String(r) => self.string(r, value, path),
            Kind::Number(r) => self.number(r, value, path),
            Kind::Integer(r) => self.integer(r, value, path),
            Kind::Boolean => self.is(matches!(value, Value::Bool(_)), " must be a boolean", path),
            Kind::Null => self.is(matches!(value, Value::Null), " must be null", path),
            Kind::Array(r) => {
                self.array(r, value, path);
                false
            }
            Kind::Object(r) => {
                match value {
                    Value::Object(obj) => self.object(r, obj, path),
                    _ => self.fail(path, |m| m.push_str(" must be an object")),
                }
                false
            }
        };
        if typed {
            self.values(schema, value, path);
        }
    }

    /// `ok`, or the violation `message` recorded.
    fn is(&mut self, ok: bool, message: &str, path: &Path<'_>) -> bool {
        if !ok {
            self.fail(path, |m| m.push_str(message));
        }
        ok
    }

    /// A string node's checks; whether the value is a string.
    fn string(&mut self, r: &StringRules, value: &Value, path: &Path<'_>) -> bool {
        let Value::String(s) = value else {
            self.fail(path, |m| m.push_str(" must be a string"));
            return false;
        };
        if let Some(min) = r.min_length
            && char_len_below(s, min)
        {
            self.fail(path, |m| {
                m.push_str(" must be at least ");
                m.push_str(itoa::Buffer::new().format(min));
                m.push_str(" characters long");
            });
        }
        if let Some(max) = r.max_length
            && !char_len_below(s, max.saturating_add(1))
        {
            self.fail(path, |m| {
                m.push_str(" must be at most ");
                m.push_str(itoa::Buffer::new().format(max));
                m.push_str(" characters long");
            });
        }
        if let Some(pat) = &r.pattern
            && !pat.is_match(s)
        {
            self.fail(path, |m| {
                m.push_str(" must match the pattern ");
                let _ = write_json_string(m, pat.as_str());
            });
        }
        true
    }

    /// A number node's checks; whether the value is a number.
    fn number(&mut self, r: &NumberRules, value: &Value, path: &Path<'_>) -> bool {
        let Value::Number(n) = value else {
            self.fail(path, |m| m.push_str(" must be a number"));
            return false;
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
        true
    }

    /// An integer node's checks; whether the value is an integer.
    fn integer(&mut self, r: &IntegerRules, value: &Value, path: &Path<'_>) -> bool {
        let n = match value {
            Value::Number(n) if n.is_integer() => n,
            _ => {
                self.fail(path, |m| m.push_str(" must be an integer"));
                return false;
            }
        };
        if let Some(min) = r.minimum
            && cmp_int(n, min) == Ordering::Less
        {
            self.fail(path, |m| {
                m.push_str(" must be at least ");
                m.push_str(itoa::Buffer::new().format(min));
            });
        }
        if let Some(max) = r.maximum
            && cmp_int(n, max) == Ordering::Greater
        {
            self.fail(path, |m| {
                m.push_str(" must be at most ");
                m.push_str(itoa::Buffer::new().format(max));
            });
        }
        true
    }

    /// An array node's checks, then its items'.
    fn array(&mut self, r: &ArrayRules, value: &Value, path: &Path<'_>) {
        let Value::Array(items) = value else {
            return self.fail(path, |m| m.push_str(" must be an array"));
        };
        let len = items.len() as u64;
        if let Some(min) = r.min_items
            && len < min
        {
            self.fail(path, |m| {
                m.push_str(" must have at least ");
                m.push_str(itoa::Buffer::new().format(min));
                m.push_str(" items");
            });
        }
        if let Some(max) = r.max_items
            && len > max
        {
            self.fail(path, |m| {
                m.push_str(" must have at most ");
                m.push_str(itoa::Buffer::new().format(max));
                m.push_str(" items");
            });
        }
        if let Some(item_schema) = &r.items {
            for (i, item) in items.iter().enumerate() {
                self.node(item_schema, item, &Path::Index(path, i));
            }
        }
    }

    /// A scalar's `enum` (first) and `const`.
    fn values(&mut self, schema: &Schema, value: &Value, path: &Path<'_>) {
        if let Some(values) = &schema.enum_values
            && !values.contains(value)
        {
            return self.fail(path, |m| write_one_of_list(m, values.iter()));
        }
        if let Some(c) = &schema.const_value
            && !json_eq(c, value)
        {
            self.fail(path, |m| {
                m.push_str(" must be ");
                let _ = write_value(m, c);
            });
        }
    }

    /// A `oneOf`: nothing when exactly one branch matches. When several match, one
    /// violation says so. When none does: for a tagged union, the tag's violation (missing,
    /// or not one of the allowed values) or, when the tag picks a branch, that branch's
    /// violations; for any other union, the closest branch's violations after a line
    /// naming it.
    fn one_of(&mut self, branches: &[Arc<Schema>], value: &Value, path: &Path<'_>) {
        match one_of_match(branches, value) {
            OneOfMatch::One { .. } => return,
            OneOfMatch::Several(matched) => {
                return self.fail(path, |m| {
                    m.push_str(" must match exactly one oneOf branch (matched ");
                    m.push_str(itoa::Buffer::new().format(matched));
                    m.push(')');
                });
            }
            OneOfMatch::NoBranch => {}
        }
        if let Some(tag) = union_tag(branches) {
            return self.tagged(branches, tag, value, path);
        }
        // A union of constants (a unit-variant enum whose variants are documented) reads
        // like an `enum`.
        let constants: Option<Vec<&Value>> = branches
            .iter()
            .map(|b| match (&b.const_value, &b.enum_values) {
                (Some(c), None) => Some(c),
                _ => None,
            })
            .collect();
        if let Some(constants) = constants.filter(|c| !c.is_empty()) {
            return self.fail(path, |m| write_one_of_list(m, constants.into_iter()));
        }
        // The closest branch: one whose type fits the value, then the fewest violations,
        // then the first.
        let mut best: Option<(bool, usize, usize, Violations)> = None;
        for (i, b) in branches.iter().enumerate() {
            let mut sub = Reporter {
                out: Violations::new(),
                label: self.label,
                prefix: self.prefix,
            };
            sub.node(b, value, path);
            let rank = (!type_fits(b, value), sub.out.len());
            if best.as_ref().is_none_or(|(m, n, ..)| rank < (*m, *n)) {
                best = Some((rank.0, rank.1, i, sub.out));
            }
        }
        let Some((_, _, index, reasons)) = best else {
            return self.fail(path, |m| {
                m.push_str(" must match one oneOf branch (there are none)")
            });
        };
        // `oneOf [T, null]` (an `Option<T>`): T's violations say it all.
        let others_null = branches
            .iter()
            .enumerate()
            .all(|(i, b)| i == index || matches!(b.kind, Kind::Null));
        let mut reasons = reasons.iter();
        if !others_null || value.is_null() {
            // The header and the closest branch's first violation are one message.
            let first = reasons.next();
            self.fail(path, |m| {
                m.push_str(" matches none of the ");
                m.push_str(itoa::Buffer::new().format(branches.len()));
                m.push_str(" oneOf branches; the closest is branch ");
                m.push_str(itoa::Buffer::new().format(index + 1));
                if let Some(first) = first {
                    m.push_str(": ");
                    m.push_str(first);
                }
            });
        }
        for reason in reasons {
            self.out.push(reason);
        }
    }

    /// A tagged union none of whose branches matched.
    fn tagged(&mut self, branches: &[Arc<Schema>], tag: &str, value: &Value, path: &Path<'_>) {
        let Value::Object(obj) = value else {
            return self.fail(path, |m| m.push_str(" must be an object"));
        };
        let tag_path = Path::Key(path, tag);
        let chosen = obj.get(tag).and_then(|v| {
            branches
                .iter()
                .find(|b| branch_tag(b, tag).is_some_and(|c| json_eq(c, v)))
        });
        if let Some(branch) = chosen {
            return self.node(branch, value, path);
        }
        let allowed = |m: &mut String| {
            m.push('[');
            for (i, b) in branches.iter().enumerate() {
                if i > 0 {
                    m.push(',');
                }
                if let Some(c) = branch_tag(b, tag) {
                    let _ = write_value(m, c);
                }
            }
            m.push(']');
        };
        if obj.get(tag).is_none() {
            let (label, prefix) = (self.label, self.prefix);
            let m = self.out.begin();
            m.push_str("missing required property \"");
            write_path(m, &tag_path, label, prefix);
            m.push_str("\" (one of ");
            allowed(m);
            m.push(')');
            self.out.end();
        } else {
            self.fail(&tag_path, |m| {
                m.push_str(" must be one of ");
                allowed(m);
            });
        }
    }

    fn object(&mut self, r: &ObjectRules, obj: &Object, path: &Path<'_>) {
        // Each declared property's value (the first one given), in one pass over the
        // value's members that reads each key's text once.
        let mut inline: [Option<&Value>; 16] = [None; 16];
        let mut spilled: Vec<Option<&Value>>;
        let found: &mut [Option<&Value>] = if r.properties.len() <= inline.len() {
            &mut inline[..r.properties.len()]
        } else {
            spilled = vec![None; r.properties.len()];
            &mut spilled
        };
        for (k, v) in obj.entries() {
            let k: &str = k;
            if let Some(i) = r.properties.iter().position(|p| str_eq(k, &p.name))
                && found[i].is_none()
            {
                found[i] = Some(v);
            }
        }
        let found = &*found;
        // (1) missing required properties, in declaration order; at an ignoring
        // parameter root, one given under a close misspelling says so instead.
        let misspelt = if r.additional == Additional::Ignored {
            misspelt_required(r, obj)
        } else {
            Vec::new()
        };
        for (slot, p) in found.iter().zip(&r.properties) {
            if p.required && slot.is_none() && !self.out.count_if_full() {
                let (label, prefix) = (self.label, self.prefix);
                let m = self.out.begin();
                match misspelt.iter().find(|(_, name)| *name == &*p.name) {
                    Some((given, _)) => {
                        m.push_str("unknown argument ");
                        push_quoted(m, given);
                        m.push_str(": did you mean \"");
                        write_path(m, &Path::Key(path, &p.name), label, prefix);
                        m.push_str("\"?");
                    }
                    None => {
                        m.push_str("missing required property \"");
                        write_path(m, &Path::Key(path, &p.name), label, prefix);
                        m.push('"');
                    }
                }
                self.out.end();
            }
        }
        // (2) declared properties that are present, in declaration order.
        let mut declared_present = 0usize;
        for (slot, p) in found.iter().zip(&r.properties) {
            let Some(v) = *slot else { continue };
            declared_present += 1;
            if !p.required && v.is_null() && !p.schema.admits_null() {
                // `null` means "omitted" for a property that is not required.
                continue;
            }
            self.node(&p.schema, v, &Path::Key(path, &p.name));
        }
        // (3) undeclared keys, in the value's key order.
        if declared_present == obj.len() {
            return;
        }
        for (k, v) in obj.iter() {
            let text: &str = k;
            if r.properties.iter().any(|p| str_eq(text, &p.name)) {
                continue;
            }
            match &r.additional {
                Additional::Open | Additional::Ignored => return,
                Additional::Closed => self.fail(&Path::Key(path, k), |m| {
                    m.push_str(" is not a declared property (additionalProperties: false)")
                }),
                Additional::Schema(s) => self.node(s, v, &Path::Key(path, k)),
            }
        }
    }
}

/// The undeclared keys of `obj` that stand for a missing required property of `r`, each
/// with that property's name: for each missing required property in declaration order,
/// the first undeclared key (in the value's order) close to its name that no earlier one
/// took (`qeury` for `query`).
pub(crate) fn misspelt_required<'o, 'r>(
    r: &'r ObjectRules,
    obj: &'o Object,
) -> Vec<(&'o str, &'r str)> {
    let mut out: Vec<(&str, &str)> = Vec::new();
    for p in r.properties.iter().filter(|p| p.required) {
        if obj.get(&p.name).is_some() {
            continue;
        }
        let given = obj.iter().map(|(k, _)| -> &str { k }).find(|k| {
            !r.declares(k)
                && !out.iter().any(|(taken, _)| taken == k)
                && crate::suggest::is_close(k, &p.name)
        });
        if let Some(k) = given {
            out.push((k, &p.name));
        }
    }
    out
}

fn push_quoted(out: &mut String, s: &str) {
    crate::schema::json_quote_into(out, s);
}

/// The tag of a tagged union (serde's internally or adjacently tagged enums): a key that
/// every branch declares as a required property whose schema is a string constant.
fn union_tag(branches: &[Arc<Schema>]) -> Option<&str> {
    let first = branches.first()?.as_object()?;
    first
        .properties
        .iter()
        .map(|p| &*p.name)
        .find(|name| branches.iter().all(|b| branch_tag(b, name).is_some()))
}

/// The constant a branch requires for `tag`, when it is an object that does.
fn branch_tag<'s>(branch: &'s Schema, tag: &str) -> Option<&'s Value> {
    let p = branch
        .as_object()?
        .properties
        .iter()
        .find(|p| p.required && p.name == tag)?;
    match (&p.schema.kind, &p.schema.const_value) {
        (Kind::String(_), Some(c @ Value::String(_))) => Some(c),
        _ => None,
    }
}

/// Whether the value's JSON type is one the node admits (ignoring its constraints).
fn type_fits(schema: &Schema, value: &Value) -> bool {
    match (&schema.kind, value) {
        (Kind::Json, _)
        | (Kind::String(_), Value::String(_))
        | (Kind::Number(_), Value::Number(_))
        | (Kind::Boolean, Value::Bool(_))
        | (Kind::Null, Value::Null)
        | (Kind::Array(_), Value::Array(_))
        | (Kind::Object(_), Value::Object(_)) => true,
        (Kind::Integer(_), Value::Number(n)) => n.is_integer(),
        (Kind::OneOf(branches), _) => branches.iter().any(|b| type_fits(b, value)),
        _ => false,
    }
}

pub(crate) use crate::json::__private::text_eq as str_eq;

/// JSON equality with the string fast path (`enum`/`const` of strings).
#[inline]
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(x), Value::String(y)) => str_eq(x, y),
        _ => a == b,
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
                    None if r.additional == Additional::Ignored => changed = true,
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
        (Kind::OneOf(branches), _) => match one_of_match(branches, value) {
            OneOfMatch::One { index, .. } => strip(&branches[index], value),
            OneOfMatch::NoBranch | OneOfMatch::Several(_) => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{Schema, Value, enum_const_ok, json_eq};

    fn enum_member() -> impl Strategy<Value = Value> {
        prop_oneof![
            "[a-c]{0,3}".prop_map(Value::from),
            "[a-c]{20,30}".prop_map(Value::from),
            (0u64..4).prop_map(Value::from),
            any::<bool>().prop_map(Value::from),
            Just(Value::Null),
        ]
    }

    proptest! {
        /// Enum membership with the argument's string read once agrees with comparing
        /// every allowed value by `json_eq`.
        #[test]
        fn enum_check_agrees_with_the_general_comparison(
            allowed in proptest::collection::vec(enum_member(), 1..6),
            value in enum_member(),
        ) {
            let schema = Schema::json().with_enum(allowed.clone());
            let general = allowed.iter().any(|e| json_eq(e, &value));
            prop_assert_eq!(enum_const_ok(&schema, &value), general);
        }
    }

    #[test]
    fn a_branch_matching_as_given_wins_over_one_matching_by_null_leniency() {
        let schema = Schema::from_json_schema(
            &crate::json::parse(
                r#"{"type":"object","additionalProperties":false,"properties":{"p":{"oneOf":[
                    {"type":"object","additionalProperties":false,"properties":{"a":{"type":"string"}}},
                    {"type":"string","enum":["fast","slow"]},
                    {"type":"object","additionalProperties":false,"properties":{"a":{"type":"null"}}}
                ]}}}"#,
            )
            .unwrap(),
        )
        .unwrap();
        let value = |t: &str| crate::json::parse(t).unwrap();
        // Branch 1 takes `null` as "omitted"; branch 3 takes it as given: branch 3.
        let given = value(r#"{"p":{"a":null}}"#);
        let validated = super::validate_arguments(&schema, &given).unwrap();
        assert!(!validated.has_omitted_nulls());
        assert_eq!(*validated.normalized(&schema, &given), given);
        // Only branch 1 takes a string.
        assert!(super::is_valid(&schema, &value(r#"{"p":{"a":"x"}}"#)));
        // Both object branches take `{}` as given: ambiguous, reported as such.
        let e = super::validate_arguments(&schema, &value(r#"{"p":{}}"#)).unwrap_err();
        assert_eq!(
            e.violations().joined(),
            r#""p" must match exactly one oneOf branch (matched 2)"#
        );
    }
}
