//! The runtime's own validator for verbatim schemas.
//!
//! It checks every keyword of JSON Schema 2020-12 except `unevaluatedItems`,
//! `unevaluatedProperties`, `uniqueItems`, a `multipleOf` that is not an integer of at
//! most 2^53, and the `pattern`s and `patternProperties` the runtime's regular
//! expressions do not compile (see [`super::VerbatimSchema`]). Where a schema uses none
//! of those, its verdict is exact. Where it does, the verdict is *sound*: a value it
//! rejects, the schema rejects too (every unchecked keyword is treated as passing, and
//! every applicator that depends on a subschema's verdict only concludes what that
//! holds for any verdict of the unchecked parts).
//!
//! Messages follow the registry's own (`missing required property "address.city"`,
//! `"count" must be at least 1`); every violation is reported, in schema order.

use std::cell::Cell;
use std::cmp::Ordering;
use std::fmt::Write as _;

use super::compile::{
    Compiled, Node, Regex, Rules, T_ARRAY, T_BOOLEAN, T_INTEGER, T_NULL, T_NUMBER, T_OBJECT,
    T_STRING, TYPE_NAMES,
};
use crate::json::{Number, NumberRepr as N, Object, Value, write_json_string, write_value};
use crate::violations::{Path, Violations, char_len_below, cmp_f64, cmp_int, write_path};

/// How many nested checks one validation makes at most (each level of the value a
/// recursive schema descends into is at least one). Below it nothing is checked: a
/// sound verdict stays sound, an exact one is no longer exact (see [`Checker::truncated`]).
pub(crate) const MAX_CHECK_DEPTH: usize = 256;

/// Where violations go: collected (every one) or not (the first ends the check).
struct Sink {
    collect: bool,
    out: Violations,
}

impl Sink {
    fn verdict() -> Sink {
        Sink {
            collect: false,
            out: Violations::new(),
        }
    }
    fn collecting() -> Sink {
        Sink {
            collect: true,
            out: Violations::new(),
        }
    }
}

/// One validation of a value against a compiled document.
pub(crate) struct Checker<'c> {
    pub c: &'c Compiled,
    pub label: &'c str,
    pub prefix: bool,
    /// Set when some part of the value lies below [`MAX_CHECK_DEPTH`] and was not checked.
    pub truncated: Cell<bool>,
}

fn value_types(v: &Value) -> u8 {
    match v {
        Value::Null => T_NULL,
        Value::Bool(_) => T_BOOLEAN,
        Value::Object(_) => T_OBJECT,
        Value::Array(_) => T_ARRAY,
        Value::String(_) => T_STRING,
        Value::Number(n) if n.is_integer() => T_NUMBER | T_INTEGER,
        Value::Number(_) => T_NUMBER,
    }
}

/// `a string`, `an integer or null`, `a string, a number or null`.
fn types_phrase(types: u8) -> String {
    let names: Vec<&str> = TYPE_NAMES
        .iter()
        .enumerate()
        .filter(|(i, _)| types & (1 << i) != 0)
        .map(|(_, t)| match *t {
            "null" => "null",
            "object" => "an object",
            "array" => "an array",
            "integer" => "an integer",
            "boolean" => "a boolean",
            "number" => "a number",
            _ => "a string",
        })
        .collect();
    match names.split_last() {
        Some((last, [])) => (*last).to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => "nothing".to_string(),
    }
}

/// Exact comparison of two JSON numbers.
fn cmp_numbers(a: &Number, b: &Number) -> Ordering {
    match b.repr() {
        N::PosInt(u) => cmp_int(a, i128::from(u)),
        N::NegInt(i) => cmp_int(a, i128::from(i)),
        N::Float(f) => cmp_f64(a, f),
    }
}

/// Whether `n` is a multiple of the integer `d` (`0 < d <= 2^53`).
fn multiple_of(n: &Number, d: u64) -> bool {
    match n.repr() {
        N::PosInt(u) => u % d == 0,
        N::NegInt(i) => i128::from(i) % i128::from(d) == 0,
        // A float that is not integral is no integer's multiple; an integral one (beyond
        // the 64-bit range) is divided exactly: `%` on floats is exact, and `d` is too.
        N::Float(f) => f.fract() == 0.0 && f % (d as f64) == 0.0,
    }
}

fn list(m: &mut String, values: &[Value]) {
    m.push('[');
    for (i, e) in values.iter().enumerate() {
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

impl Checker<'_> {
    /// Whether `value` passes the document's root, every violation in `out` when it does
    /// not.
    pub(crate) fn run(&self, value: &Value) -> Result<(), Violations> {
        let mut sink = Sink::collecting();
        if self.walk(0, value, &Path::Root, 0, &mut sink) {
            return Ok(());
        }
        if sink.out.is_empty() {
            // The verdict and the report come from one walk; should a branch reject
            // without a message, the value is still rejected, with one.
            let mut m = String::from("\"");
            write_path(&mut m, &Path::Root, self.label, self.prefix);
            m.push_str("\" does not match the schema");
            sink.out.push(&m);
        }
        Err(sink.out)
    }

    /// The verdict alone.
    fn passes(&self, node: usize, value: &Value, path: &Path<'_>, depth: usize) -> bool {
        self.walk(node, value, path, depth, &mut Sink::verdict())
    }

    fn message(&self, path: &Path<'_>, tail: impl FnOnce(&mut String)) -> String {
        let mut m = String::from("\"");
        write_path(&mut m, path, self.label, self.prefix);
        m.push('"');
        tail(&mut m);
        m
    }

    fn missing(&self, path: &Path<'_>, key: &str, why: &str) -> String {
        let mut m = String::from("missing required property \"");
        write_path(&mut m, &Path::Key(path, key), self.label, self.prefix);
        m.push('"');
        m.push_str(why);
        m
    }

    /// Whether `value` passes `node`; violations go to `sink` (all of them when it
    /// collects; otherwise the first failure ends the walk).
    // long function: one pass over a node's rules in the order 2020-12 evaluates them,
    // where a failure may end the walk at any rule and the annotations of one rule feed
    // the `unevaluated*` rules after it; each rule is a few lines.
    fn walk(
        &self,
        node: usize,
        value: &Value,
        path: &Path<'_>,
        depth: usize,
        sink: &mut Sink,
    ) -> bool {
        if depth >= MAX_CHECK_DEPTH {
            self.truncated.set(true);
            return true;
        }
        let r: &Rules = match &self.c.nodes[node] {
            Node::Bool(true) => return true,
            Node::Bool(false) => {
                if sink.collect {
                    sink.out.push(&self.message(path, |m| {
                        m.push_str(" is not allowed here (its schema is `false`)")
                    }));
                }
                return false;
            }
            Node::Rules(r) => r,
        };
        let mut valid = true;
        macro_rules! fail {
            ($msg:expr) => {{
                valid = false;
                if !sink.collect {
                    return false;
                }
                let m: String = $msg;
                sink.out.push(&m);
            }};
        }

        for &target in &r.refs {
            if !self.walk(target, value, path, depth + 1, sink) {
                valid = false;
                if !sink.collect {
                    return false;
                }
            }
        }
        if let Some(types) = r.types
            && value_types(value) & types == 0
        {
            // Nothing else is said about a value of the wrong type.
            if sink.collect {
                sink.out.push(&self.message(path, |m| {
                    m.push_str(" must be ");
                    m.push_str(&types_phrase(types));
                }));
            }
            return false;
        }
        if let Some(values) = &r.enum_values
            && !values.contains(value)
        {
            fail!(self.message(path, |m| {
                m.push_str(" must be one of ");
                list(m, values);
            }));
        }
        if let Some(c) = &r.const_value
            && c != value
        {
            fail!(self.message(path, |m| {
                m.push_str(" must be ");
                let _ = write_value(m, c);
            }));
        }
        match value {
            Value::Number(n) => {
                if let Some(d) = r.multiple_of.and_then(|d| d.as_u64())
                    && !multiple_of(n, d)
                {
                    fail!(self.message(path, |m| {
                        let _ = write!(m, " must be a multiple of {d}");
                    }));
                }
                let bounds: [(&Option<Number>, &str, &[Ordering]); 4] = [
                    (&r.minimum, " must be at least ", &[Ordering::Less]),
                    (&r.maximum, " must be at most ", &[Ordering::Greater]),
                    (
                        &r.exclusive_minimum,
                        " must be greater than ",
                        &[Ordering::Less, Ordering::Equal],
                    ),
                    (
                        &r.exclusive_maximum,
                        " must be less than ",
                        &[Ordering::Greater, Ordering::Equal],
                    ),
                ];
                for (bound, words, bad) in bounds {
                    if let Some(b) = bound
                        && bad.contains(&cmp_numbers(n, b))
                    {
                        fail!(self.message(path, |m| {
                            m.push_str(words);
                            let _ = write!(m, "{b}");
                        }));
                    }
                }
            }
            Value::String(s) => {
                if let Some(min) = r.min_length
                    && char_len_below(s, min)
                {
                    fail!(self.message(path, |m| {
                        let _ = write!(m, " must be at least {min} characters long");
                    }));
                }
                if let Some(max) = r.max_length
                    && !char_len_below(s, max.saturating_add(1))
                {
                    fail!(self.message(path, |m| {
                        let _ = write!(m, " must be at most {max} characters long");
                    }));
                }
                if let Some((source, Regex::Compiled(p))) = &r.pattern
                    && !p.is_match(s)
                {
                    fail!(self.message(path, |m| {
                        m.push_str(" must match the pattern ");
                        let _ = write_json_string(m, source);
                    }));
                }
            }
            Value::Array(items) => {
                let len = items.len() as u64;
                if let Some(min) = r.min_items
                    && len < min
                {
                    fail!(self.message(path, |m| {
                        let _ = write!(m, " must have at least {min} items");
                    }));
                }
                if let Some(max) = r.max_items
                    && len > max
                {
                    fail!(self.message(path, |m| {
                        let _ = write!(m, " must have at most {max} items");
                    }));
                }
                for (i, item) in items.iter().enumerate() {
                    let schema = match r.prefix_items.get(i) {
                        Some(&s) => Some(s),
                        None => r.items,
                    };
                    if let Some(s) = schema
                        && !self.walk(s, item, &Path::Index(path, i), depth + 1, sink)
                    {
                        valid = false;
                        if !sink.collect {
                            return false;
                        }
                    }
                }
                if let Some(c) = r.contains {
                    let exact = self.c.exact[c];
                    let found = items
                        .iter()
                        .enumerate()
                        .filter(|(i, it)| self.passes(c, it, &Path::Index(path, *i), depth + 1))
                        .count() as u64;
                    let min = r.min_contains.unwrap_or(1);
                    // Without an exact `contains`, `found` only bounds the true count
                    // from above: too few is certain, too many is not.
                    if found < min {
                        fail!(self.message(path, |m| {
                            let _ = write!(
                                m,
                                " must contain at least {min} {} matching the `contains` schema",
                                if min == 1 { "item" } else { "items" }
                            );
                        }));
                    }
                    if let Some(max) = r.max_contains
                        && exact
                        && found > max
                    {
                        fail!(self.message(path, |m| {
                            let _ = write!(
                                m,
                                " must contain at most {max} {} matching the `contains` schema",
                                if max == 1 { "item" } else { "items" }
                            );
                        }));
                    }
                }
            }
            Value::Object(obj) => {
                if !self.object(r, value, obj, path, depth, sink) {
                    valid = false;
                    if !sink.collect {
                        return false;
                    }
                }
            }
            Value::Null | Value::Bool(_) => {}
        }
        for &s in &r.all_of {
            if !self.walk(s, value, path, depth + 1, sink) {
                valid = false;
                if !sink.collect {
                    return false;
                }
            }
        }
        if !r.any_of.is_empty()
            && !r
                .any_of
                .iter()
                .any(|&b| self.passes(b, value, path, depth + 1))
        {
            valid = false;
            if !sink.collect {
                return false;
            }
            self.closest("anyOf", &r.any_of, value, path, depth, sink);
        }
        if !r.one_of.is_empty() {
            let mut passed = 0usize;
            let mut passed_exact = 0usize;
            for &b in &r.one_of {
                if self.passes(b, value, path, depth + 1) {
                    passed += 1;
                    if self.c.exact[b] {
                        passed_exact += 1;
                    }
                }
            }
            let all_exact = r.one_of.iter().all(|&b| self.c.exact[b]);
            if passed == 0 {
                valid = false;
                if !sink.collect {
                    return false;
                }
                self.closest("oneOf", &r.one_of, value, path, depth, sink);
            } else if passed_exact >= 2 || (all_exact && passed != 1) {
                fail!(self.message(path, |m| {
                    let _ = write!(m, " must match exactly one oneOf branch (matched {passed})");
                }));
            }
        }
        if let Some(n) = r.not
            && self.c.exact[n]
            && self.passes(n, value, path, depth + 1)
        {
            fail!(self.message(path, |m| m.push_str(" must not match the `not` schema")));
        }
        if let Some(cond) = r.if_ {
            let holds = self.passes(cond, value, path, depth + 1);
            if self.c.exact[cond] || !holds {
                let (branch, why) = if holds {
                    (r.then, " (from `then`: the `if` schema matches)")
                } else {
                    (r.else_, " (from `else`: the `if` schema does not match)")
                };
                if let Some(b) = branch {
                    let mut sub = Sink {
                        collect: sink.collect,
                        out: Violations::new(),
                    };
                    if !self.walk(b, value, path, depth + 1, &mut sub) {
                        valid = false;
                        if !sink.collect {
                            return false;
                        }
                        for v in sub.out.iter() {
                            sink.out.push(&format!("{v}{why}"));
                        }
                    }
                }
            } else {
                // The `if` passed the runtime's checks but is not checked exactly: either
                // branch may apply.
                let then_ok = r
                    .then
                    .is_none_or(|b| self.passes(b, value, path, depth + 1));
                let else_ok = r
                    .else_
                    .is_none_or(|b| self.passes(b, value, path, depth + 1));
                if !then_ok && !else_ok {
                    fail!(self.message(path, |m| {
                        m.push_str(" matches neither the `then` nor the `else` schema")
                    }));
                }
            }
        }
        valid
    }

    /// The object keywords: the counts and required names, then each property, then
    /// `dependentSchemas`.
    fn object(
        &self,
        r: &Rules,
        value: &Value,
        obj: &Object,
        path: &Path<'_>,
        depth: usize,
        sink: &mut Sink,
    ) -> bool {
        let mut valid = self.object_counts(r, obj, path, sink);
        if !valid && !sink.collect {
            return false;
        }
        valid &= self.object_properties(r, obj, path, depth, sink);
        if !valid && !sink.collect {
            return false;
        }
        for (key, node) in &r.dependent_schemas {
            if obj.contains_key(key) && !self.walk(*node, value, path, depth + 1, sink) {
                valid = false;
                if !sink.collect {
                    return false;
                }
            }
        }
        valid
    }

    /// `minProperties`, `maxProperties`, `required` and `dependentRequired`.
    fn object_counts(&self, r: &Rules, obj: &Object, path: &Path<'_>, sink: &mut Sink) -> bool {
        let mut valid = true;
        macro_rules! fail {
            ($msg:expr) => {{
                valid = false;
                if !sink.collect {
                    return false;
                }
                let m: String = $msg;
                sink.out.push(&m);
            }};
        }
        let len = obj.len() as u64;
        if let Some(min) = r.min_properties
            && len < min
        {
            fail!(self.message(path, |m| {
                let _ = write!(m, " must have at least {min} properties");
            }));
        }
        if let Some(max) = r.max_properties
            && len > max
        {
            fail!(self.message(path, |m| {
                let _ = write!(m, " must have at most {max} properties");
            }));
        }
        for name in &r.required {
            if !obj.contains_key(name) {
                fail!(self.missing(path, name, ""));
            }
        }
        for (key, names) in &r.dependent_required {
            if obj.contains_key(key) {
                for name in names {
                    if !obj.contains_key(name) {
                        let mut why = String::from(" (required when ");
                        let _ = write_json_string(&mut why, key);
                        why.push_str(" is present)");
                        fail!(self.missing(path, name, &why));
                    }
                }
            }
        }
        valid
    }

    /// `properties`, `patternProperties`, `additionalProperties` and `propertyNames`.
    fn object_properties(
        &self,
        r: &Rules,
        obj: &Object,
        path: &Path<'_>,
        depth: usize,
        sink: &mut Sink,
    ) -> bool {
        let mut valid = true;
        macro_rules! fail {
            ($msg:expr) => {{
                valid = false;
                if !sink.collect {
                    return false;
                }
                let m: String = $msg;
                sink.out.push(&m);
            }};
        }
        macro_rules! sub {
            ($node:expr, $value:expr, $path:expr) => {{
                if !self.walk($node, $value, $path, depth + 1, sink) {
                    valid = false;
                    if !sink.collect {
                        return false;
                    }
                }
            }};
        }
        for (name, node) in &r.properties {
            if let Some(v) = obj.get(name) {
                sub!(*node, v, &Path::Key(path, name));
            }
        }
        let patterns_checked = r
            .pattern_properties
            .iter()
            .all(|(re, _)| matches!(re, Regex::Compiled(_)));
        for (key, v) in obj.iter() {
            let key: &str = key;
            let mut matched = r.properties.iter().any(|(n, _)| n == key);
            for (re, node) in &r.pattern_properties {
                if let Regex::Compiled(p) = re
                    && p.is_match(key)
                {
                    matched = true;
                    sub!(*node, v, &Path::Key(path, key));
                }
            }
            // With a pattern the runtime cannot test, which keys are "additional" is
            // unknown: `additionalProperties` is not checked.
            if !matched
                && patterns_checked
                && let Some(extra) = r.additional
            {
                if matches!(self.c.nodes[extra], Node::Bool(false)) {
                    fail!(self.message(&Path::Key(path, key), |m| {
                        m.push_str(" is not a declared property (additionalProperties: false)")
                    }));
                } else {
                    sub!(extra, v, &Path::Key(path, key));
                }
            }
            if let Some(names) = r.property_names {
                let as_value = Value::from(key);
                if !self.passes(names, &as_value, &Path::Key(path, key), depth + 1) {
                    fail!(self.message(&Path::Key(path, key), |m| {
                        m.push_str(" is not an allowed property name (propertyNames)")
                    }));
                }
            }
        }
        valid
    }

    /// A union none of whose branches passed: the closest branch (the fewest violations)
    /// is named with its first violation, then its others.
    fn closest(
        &self,
        keyword: &str,
        branches: &[usize],
        value: &Value,
        path: &Path<'_>,
        depth: usize,
        sink: &mut Sink,
    ) {
        let mut best: Option<(usize, Violations)> = None;
        for (i, &b) in branches.iter().enumerate() {
            let mut sub = Sink::collecting();
            self.walk(b, value, path, depth + 1, &mut sub);
            if best.as_ref().is_none_or(|(_, v)| sub.out.len() < v.len()) {
                best = Some((i, sub.out));
            }
        }
        let Some((index, reasons)) = best else {
            return;
        };
        let mut reasons = reasons.iter();
        let first = reasons.next();
        let head = self.message(path, |m| {
            let _ = write!(
                m,
                " matches none of the {} {keyword} branches; the closest is branch {}",
                branches.len(),
                index + 1
            );
            if let Some(first) = first {
                m.push_str(": ");
                m.push_str(first);
            }
        });
        sink.out.push(&head);
        for r in reasons {
            sink.out.push(r);
        }
    }
}
