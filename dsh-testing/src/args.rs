//! Argument generation from a parameter schema: valid arguments, and invalid ones paired
//! with the violation the validator must report.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use proptest::prelude::*;
use proptest::strategy::{Union, ValueTree};

use crate::json_quote;
use dsh_runtime::json::{self, Number, Object, Value};
use dsh_runtime::schema::{Additional, ArrayRules, Kind, ObjectRules, Schema, StringRules};
use dsh_runtime::validate::is_valid;

/// The longest string the generators build when a schema sets no `maxLength`.
pub const LONG_STRING: usize = 300;

/// Items generated beyond `minItems` when a schema sets no (small) `maxItems`.
const EXTRA_ITEMS: u64 = 3;

/// What kind of violation an invalid argument carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ViolationKind {
    /// A required property is absent.
    MissingRequired,
    /// The value has another JSON type than the schema's.
    WrongType,
    /// A number or integer below `minimum` or above `maximum`.
    OutOfRange,
    /// A string shorter than `minLength` or longer than `maxLength`.
    Length,
    /// A string that does not match `pattern`.
    Pattern,
    /// An array with fewer than `minItems` or more than `maxItems` items.
    ItemCount,
    /// A value outside `enum`, or other than `const`.
    NotAllowed,
    /// An undeclared key in an object with `additionalProperties: false`.
    Undeclared,
}

impl ViolationKind {
    /// A short name (`missing required`, `wrong type`, ...), used in messages.
    pub fn name(self) -> &'static str {
        match self {
            ViolationKind::MissingRequired => "missing required",
            ViolationKind::WrongType => "wrong type",
            ViolationKind::OutOfRange => "out of range",
            ViolationKind::Length => "length",
            ViolationKind::Pattern => "pattern",
            ViolationKind::ItemCount => "item count",
            ViolationKind::NotAllowed => "not allowed",
            ViolationKind::Undeclared => "undeclared key",
        }
    }
}

/// The violation an invalid argument must produce: where, what kind, and the text the
/// `INVALID_ARGS` message must contain.
///
/// Paths are written as the validator writes them: `arguments` for the root, then
/// `a.b`, `items[2]`, `m["odd key"]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    path: String,
    kind: ViolationKind,
    fragment: String,
}

impl Violation {
    /// The JSON path of the offending value (or of the missing property).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The kind of violation.
    pub fn kind(&self) -> ViolationKind {
        self.kind
    }

    /// The text the validator's message must contain, e.g. `"limit" must be at least 1`.
    pub fn fragment(&self) -> &str {
        &self.fragment
    }

    /// Whether an `INVALID_ARGS` message reports this violation.
    pub fn is_reported_by(&self, message: &str) -> bool {
        message.contains(&self.fragment)
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at {} ({})",
            self.kind.name(),
            self.path,
            self.fragment
        )
    }
}

/// Arguments that break the schema, and the violation they must produce.
#[derive(Clone, Debug, PartialEq)]
pub struct InvalidArgs {
    /// The arguments.
    pub value: Value,
    /// The violation the validator must report for them.
    pub violation: Violation,
}

/// A path being built, as segments (rendered only for violations).
#[derive(Clone, Debug, Default)]
struct Path(Vec<Seg>);

#[derive(Clone, Debug)]
enum Seg {
    Key(String),
    Index(usize),
}

impl Path {
    fn key(&self, key: &str) -> Path {
        let mut p = self.clone();
        p.0.push(Seg::Key(key.to_string()));
        p
    }

    fn index(&self, i: usize) -> Path {
        let mut p = self.clone();
        p.0.push(Seg::Index(i));
        p
    }

    /// The path as the validator writes it for arguments (root label `arguments`,
    /// paths not prefixed).
    fn render(&self) -> String {
        if self.0.is_empty() {
            return "arguments".to_string();
        }
        let mut out = String::new();
        for seg in &self.0 {
            match seg {
                Seg::Key(k) => {
                    let k = dsh_runtime::json::path::elide(k);
                    if dsh_runtime::json::path::is_identifier_key(&k) {
                        if !out.is_empty() {
                            out.push('.');
                        }
                        out.push_str(&k);
                    } else {
                        out.push('[');
                        out.push_str(&json_quote(&k));
                        out.push(']');
                    }
                }
                Seg::Index(i) => {
                    out.push('[');
                    out.push_str(&i.to_string());
                    out.push(']');
                }
            }
        }
        out
    }

    fn violation(&self, kind: ViolationKind, tail: &str) -> Violation {
        let path = self.render();
        let quoted = json_quote(&path);
        let fragment = match kind {
            ViolationKind::MissingRequired => format!("missing required property {quoted}"),
            _ => format!("{quoted}{tail}"),
        };
        Violation {
            path,
            kind,
            fragment,
        }
    }
}

/// Generators of arguments for one parameter schema, with per-path overrides.
///
/// ```
/// use dsh_testing::ArgStrategy;
/// use dsh_runtime::schema::{Additional, Property, Schema};
/// use proptest::strategy::{Strategy, ValueTree};
/// use proptest::test_runner::TestRunner;
///
/// let schema = Schema::object(
///     vec![Property::new("n", Schema::integer_range(Some(1), Some(9)), true)],
///     Additional::Ignored,
/// );
/// let mut runner = TestRunner::deterministic();
/// let args = ArgStrategy::new(&schema);
/// let valid = args.valid().new_tree(&mut runner).unwrap().current();
/// assert!(dsh_runtime::validate::is_valid(&schema, &valid));
/// let invalid = args.invalid().unwrap().new_tree(&mut runner).unwrap().current();
/// assert!(!dsh_runtime::validate::is_valid(&schema, &invalid.value));
/// ```
#[derive(Clone)]
pub struct ArgStrategy {
    schema: Arc<Schema>,
    overrides: HashMap<String, BoxedStrategy<Value>>,
}

impl fmt::Debug for ArgStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut keys: Vec<&String> = self.overrides.keys().collect();
        keys.sort();
        f.debug_struct("ArgStrategy")
            .field("schema", &self.schema.to_json_string())
            .field("overrides", &keys)
            .finish()
    }
}

impl ArgStrategy {
    /// Generators for `schema` (a tool's parameter schema, or any node).
    pub fn new(schema: &Schema) -> Self {
        ArgStrategy {
            schema: Arc::new(schema.clone()),
            overrides: HashMap::new(),
        }
    }

    /// Generate the value at `path` (as the validator writes it: `command`, `opts.mode`,
    /// `items[0]`) from `strategy` instead of from its schema, in valid arguments (e.g. a
    /// safe set of shell commands for a `command` parameter). Values that break the schema
    /// are filtered out of the valid arguments. Invalid arguments still come from the
    /// schema.
    pub fn with_override(mut self, path: &str, strategy: BoxedStrategy<Value>) -> Self {
        self.overrides.insert(path.to_string(), strategy);
        self
    }

    /// The schema the generators follow.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// Values the schema accepts: every branch of every `oneOf`, `enum` value and
    /// boundary of every range and length, optional properties absent, present and
    /// `null` (read as absent), unicode and long strings within the limits, patterns
    /// generated from the regular expression.
    pub fn valid(&self) -> BoxedStrategy<Value> {
        let schema = self.schema.clone();
        self.valid_at(&self.schema, &Path::default(), true)
            .prop_filter("a value the schema accepts", move |v| is_valid(&schema, v))
            .boxed()
    }

    /// Valid arguments at the boundaries, always tried before the generated ones: one
    /// simplest valid value, then for each bounded integer, number and string length
    /// reachable through object properties, that value with the property set to its
    /// lower and to its upper bound (only the combinations the whole schema accepts).
    /// Deterministic: the same schema gives the same list.
    pub fn edges(&self) -> Vec<Value> {
        self.edge_cases().into_iter().map(|e| e.value).collect()
    }

    /// [`ArgStrategy::edges`], each with how to shrink it.
    pub(crate) fn edge_cases(&self) -> Vec<Edge> {
        let mut runner = proptest::test_runner::TestRunner::new_with_rng(
            proptest::test_runner::Config::default(),
            proptest::test_runner::TestRng::deterministic_rng(
                proptest::test_runner::RngAlgorithm::ChaCha,
            ),
        );
        let Ok(mut tree) = self.valid().new_tree(&mut runner) else {
            return Vec::new();
        };
        // Simplify as far as the tree goes (bounded: generated trees shrink finitely,
        // the bound only guards against a strategy that does not).
        for _ in 0..10_000 {
            if !tree.simplify() {
                break;
            }
        }
        let base = tree.current();
        let mut targets = Vec::new();
        self.edge_targets(
            &self.schema,
            &Path::default(),
            &mut Vec::new(),
            &mut targets,
        );
        let mut out = vec![Edge {
            value: base.clone(),
            integer: None,
            schema: self.schema.clone(),
        }];
        for (keys, value, integer) in targets {
            let mut candidate = base.clone();
            if set_at(&mut candidate, &keys, value)
                && is_valid(&self.schema, &candidate)
                && !out.iter().any(|e| e.value == candidate)
            {
                out.push(Edge {
                    value: candidate,
                    integer: integer.map(|(target, start)| (keys, target, start)),
                    schema: self.schema.clone(),
                });
            }
        }
        out
    }

    /// The boundary values under `schema`, each with the object keys leading to it.
    fn edge_targets(
        &self,
        schema: &Schema,
        path: &Path,
        keys: &mut Vec<String>,
        out: &mut Vec<EdgeTarget>,
    ) {
        if self.overrides.contains_key(&path.render())
            || schema.enum_values.is_some()
            || schema.const_value.is_some()
        {
            return;
        }
        let mut push = |v: Option<Value>, integer: Option<(i128, i128)>| {
            if let Some(v) = v {
                out.push((keys.clone(), v, integer));
            }
        };
        match &schema.kind {
            Kind::Integer(r) => {
                let lo = r.minimum.unwrap_or(i128::from(i64::MIN));
                let hi = r.maximum.unwrap_or(i128::from(u64::MAX));
                let target = 0i128.clamp(lo, hi);
                for bound in [r.minimum, r.maximum].into_iter().flatten() {
                    push(
                        Number::from_i128(bound).map(Value::Number),
                        Some((target, bound)),
                    );
                }
            }
            Kind::Number(r) => {
                for bound in [r.minimum, r.maximum].into_iter().flatten() {
                    push(Number::from_f64(bound).map(Value::Number), None);
                }
            }
            Kind::String(r) if r.pattern.is_none() => {
                for len in [r.min_length, r.max_length].into_iter().flatten() {
                    if let Ok(len) = usize::try_from(len) {
                        push(
                            Some(Value::from("a".repeat(len.min(LONG_STRING * 100)))),
                            None,
                        );
                    }
                }
            }
            Kind::Object(r) => {
                for p in r.properties.iter() {
                    keys.push(p.name.to_string());
                    self.edge_targets(&p.schema, &path.key(&p.name), keys, out);
                    keys.pop();
                }
            }
            _ => {}
        }
    }

    /// Values the schema rejects, each with the violation the validator must report;
    /// `None` when the schema accepts everything the generators could break (no
    /// constraint to break). Violations inside `oneOf` branches are not generated (what
    /// the validator reports there depends on which branch is closest).
    pub fn invalid(&self) -> Option<BoxedStrategy<InvalidArgs>> {
        let all = self.invalid_at(&self.schema, &Path::default());
        if all.is_empty() {
            return None;
        }
        let schema = self.schema.clone();
        Some(
            Union::new(all)
                .prop_filter("a value the schema rejects", move |c| {
                    !is_valid(&schema, &c.value)
                })
                .boxed(),
        )
    }

    fn valid_at(&self, schema: &Schema, path: &Path, root: bool) -> BoxedStrategy<Value> {
        if let Some(s) = self.overrides.get(&path.render()) {
            let node = Arc::new(schema.clone());
            return s
                .clone()
                .prop_filter("an override value the schema accepts", move |v| {
                    is_valid(&node, v)
                })
                .boxed();
        }
        if let Some(values) = &schema.enum_values {
            let values = values.to_vec();
            if !values.is_empty() {
                return proptest::sample::select(values).boxed();
            }
        }
        if let Some(c) = &schema.const_value {
            return Just(c.clone()).boxed();
        }
        match &schema.kind {
            Kind::String(r) => valid_string(r, schema),
            Kind::Integer(r) => {
                let lo = r.minimum.unwrap_or(i128::from(i64::MIN));
                let hi = r.maximum.unwrap_or(i128::from(u64::MAX));
                integer_values(lo, hi)
            }
            Kind::Number(r) => number_values(r.minimum, r.maximum),
            Kind::Boolean => any::<bool>().prop_map(Value::Bool).boxed(),
            Kind::Null => Just(Value::Null).boxed(),
            Kind::Json => any_json(),
            Kind::OneOf(branches) => {
                let node = Arc::new(schema.clone());
                let each: Vec<BoxedStrategy<Value>> = branches
                    .iter()
                    .map(|b| self.valid_at(b, path, false))
                    .collect();
                Union::new(each)
                    .prop_filter("a value exactly one branch accepts", move |v| {
                        is_valid(&node, v)
                    })
                    .boxed()
            }
            Kind::Array(r) => {
                let (lo, hi) = item_bounds(r);
                self.array_of(r, path, lo, hi)
            }
            Kind::Object(r) => self.object(r, path, None, root),
            #[allow(unreachable_patterns)]
            _ => any_json(),
        }
    }

    /// Arrays of `lo..=hi` valid items (lengths at both limits included).
    fn array_of(&self, r: &ArrayRules, path: &Path, lo: u64, hi: u64) -> BoxedStrategy<Value> {
        let item = match &r.items {
            Some(s) => self.valid_at(s, &path.index(0), false),
            None => any_json(),
        };
        let (lo, hi) = (lo as usize, hi as usize);
        prop_oneof![
            proptest::collection::vec(item.clone(), lo..=hi),
            proptest::collection::vec(item.clone(), lo..=lo),
            proptest::collection::vec(item, hi..=hi),
        ]
        .prop_map(Value::from)
        .boxed()
    }

    /// Objects with every required property, each optional one absent, present or
    /// `null`, and (where the schema allows) an undeclared key. `except` is left out
    /// (for invalid values built around one property); `extras` allows undeclared keys.
    fn object(
        &self,
        r: &ObjectRules,
        path: &Path,
        except: Option<&str>,
        extras: bool,
    ) -> BoxedStrategy<Value> {
        let mut parts: Vec<BoxedStrategy<Option<(String, Value)>>> = Vec::new();
        for p in r.properties.iter().filter(|p| Some(&*p.name) != except) {
            let name = p.name.to_string();
            let value = self.valid_at(&p.schema, &path.key(&name), false);
            if p.required {
                parts.push(value.prop_map(move |v| Some((name.clone(), v))).boxed());
            } else {
                let lenient_null = !p.schema.admits_null();
                let (n1, n2) = (name.clone(), name);
                let present = value.prop_map(move |v| Some((n1.clone(), v))).boxed();
                let mut choices = vec![Just(None).boxed(), present];
                if lenient_null {
                    choices.push(Just(Some((n2, Value::Null))).boxed());
                }
                parts.push(Union::new(choices).boxed());
            }
        }
        let extra_key = undeclared_key(r);
        let extra: BoxedStrategy<Option<(String, Value)>> = match (&r.additional, extras) {
            (Additional::Open | Additional::Ignored, true) => proptest::option::of(any_scalar())
                .prop_map(move |v| v.map(|v| (extra_key.clone(), v)))
                .boxed(),
            (Additional::Schema(s), true) => {
                proptest::option::of(self.valid_at(s, &path.key(&extra_key), false))
                    .prop_map(move |v| v.map(|v| (extra_key.clone(), v)))
                    .boxed()
            }
            _ => Just(None).boxed(),
        };
        parts.push(extra);
        parts
            .prop_map(|entries| {
                let mut o = Object::new();
                for (k, v) in entries.into_iter().flatten() {
                    o.insert(k, v);
                }
                Value::Object(o)
            })
            .boxed()
    }

    fn invalid_at(&self, schema: &Schema, path: &Path) -> Vec<BoxedStrategy<InvalidArgs>> {
        if matches!(schema.kind, Kind::Json | Kind::OneOf(_)) {
            return Vec::new();
        }
        let mut out: Vec<BoxedStrategy<InvalidArgs>> = fixed_invalid(schema)
            .into_iter()
            .map(|(value, kind, tail)| {
                Just(InvalidArgs {
                    value,
                    violation: path.violation(kind, &tail),
                })
                .boxed()
            })
            .collect();
        match &schema.kind {
            Kind::Array(r) => out.extend(self.invalid_array(r, path)),
            Kind::Object(r) => out.extend(self.invalid_object(r, path)),
            _ => {}
        }
        out
    }

    /// An array one item short or over, and a bad first item in an array of an allowed
    /// length.
    fn invalid_array(&self, r: &ArrayRules, path: &Path) -> Vec<BoxedStrategy<InvalidArgs>> {
        let mut out: Vec<BoxedStrategy<InvalidArgs>> = Vec::new();
        let (lo, hi) = item_bounds(r);
        let counted = |len: u64, text: String| {
            let v = path.violation(ViolationKind::ItemCount, &text);
            self.array_of(r, path, len, len)
                .prop_map(move |value| InvalidArgs {
                    value,
                    violation: v.clone(),
                })
                .boxed()
        };
        if let Some(min) = r.min_items.filter(|m| *m > 0 && *m <= 64) {
            out.push(counted(min - 1, format!(" must have at least {min} items")));
        }
        if let Some(max) = r.max_items.filter(|m| *m < 64) {
            out.push(counted(max + 1, format!(" must have at most {max} items")));
        }
        if let Some(items) = &r.items
            && hi >= 1
        {
            let lo = lo.max(1);
            for bad in self.invalid_at(items, &path.index(0)) {
                let rest = self.array_of(r, path, lo - 1, hi - 1);
                out.push(
                    (bad, rest)
                        .prop_map(|(bad, rest)| {
                            let mut items = vec![bad.value];
                            if let Value::Array(a) = rest {
                                items.extend(a.to_vec());
                            }
                            InvalidArgs {
                                value: Value::from(items),
                                violation: bad.violation,
                            }
                        })
                        .boxed(),
                );
            }
        }
        out
    }

    /// An object missing a required property, with a bad property, with an undeclared
    /// key where it is closed, or with a bad value of its map.
    fn invalid_object(&self, r: &ObjectRules, path: &Path) -> Vec<BoxedStrategy<InvalidArgs>> {
        let mut out: Vec<BoxedStrategy<InvalidArgs>> = Vec::new();
        for p in &r.properties {
            let name = p.name.to_string();
            let rest = self.object(r, path, Some(&name), false);
            if p.required {
                let v = path
                    .key(&name)
                    .violation(ViolationKind::MissingRequired, "");
                out.push(
                    rest.clone()
                        .prop_map(move |value| InvalidArgs {
                            value,
                            violation: v.clone(),
                        })
                        .boxed(),
                );
            }
            for bad in self.invalid_at(&p.schema, &path.key(&name)) {
                out.push(with_member(rest.clone(), name.clone(), bad));
            }
        }
        let key = undeclared_key(r);
        let whole = self.object(r, path, None, false);
        match &r.additional {
            Additional::Closed => {
                let v = path.key(&key).violation(
                    ViolationKind::Undeclared,
                    " is not a declared property (additionalProperties: false)",
                );
                let extra = any_scalar().prop_map(move |value| InvalidArgs {
                    value,
                    violation: v.clone(),
                });
                out.push(with_member(whole, key, extra.boxed()));
            }
            Additional::Schema(s) => {
                for bad in self.invalid_at(s, &path.key(&key)) {
                    out.push(with_member(whole.clone(), key.clone(), bad));
                }
            }
            _ => {}
        }
        out
    }
}

/// `object` with member `name` set to the invalid value `bad`, which the whole is
/// invalid for.
fn with_member(
    object: BoxedStrategy<Value>,
    name: String,
    bad: BoxedStrategy<InvalidArgs>,
) -> BoxedStrategy<InvalidArgs> {
    (object, bad)
        .prop_map(move |(object, bad)| {
            let mut o = match object {
                Value::Object(o) => o,
                _ => Object::new(),
            };
            o.insert(name.clone(), bad.value);
            InvalidArgs {
                value: Value::Object(o),
                violation: bad.violation,
            }
        })
        .boxed()
}

/// The invalid values of a node that need no strategy, with the violation each makes
/// (kind and message tail): a wrong type, a value outside `enum` / other than `const`,
/// and the values just beyond a number's bounds, a string's lengths or its pattern.
fn fixed_invalid(schema: &Schema) -> Vec<(Value, ViolationKind, String)> {
    let mut out = Vec::new();
    // Wrong type (never `null`: it may mean "omitted").
    let (wrong, tail) = wrong_type(&schema.kind);
    if let Some(wrong) = wrong {
        out.push((wrong, ViolationKind::WrongType, tail.to_string()));
    }
    // Outside `enum` / other than `const`, with the right type.
    if let Some(values) = &schema.enum_values
        && let Some(outside) = outside_of(&schema.kind, values.iter().collect())
    {
        out.push((outside, ViolationKind::NotAllowed, " must be ".to_string()));
    } else if let Some(c) = &schema.const_value
        && let Some(outside) = outside_of(&schema.kind, vec![c])
    {
        out.push((outside, ViolationKind::NotAllowed, " must be ".to_string()));
    }
    match &schema.kind {
        Kind::Integer(r) => {
            if let Some(min) = r.minimum
                && let Some(n) = Number::from_i128(min - 1)
            {
                let tail = format!(" must be at least {min}");
                out.push((Value::Number(n), ViolationKind::OutOfRange, tail));
            }
            if let Some(max) = r.maximum
                && let Some(n) = Number::from_i128(max + 1)
            {
                let tail = format!(" must be at most {max}");
                out.push((Value::Number(n), ViolationKind::OutOfRange, tail));
            }
        }
        Kind::Number(r) => {
            // The exclusive edges: the nearest numbers beyond each bound.
            if let Some(min) = r.minimum
                && let Some(n) = Number::from_f64(min.next_down())
            {
                let tail = " must be at least ".to_string();
                out.push((Value::Number(n), ViolationKind::OutOfRange, tail));
            }
            if let Some(max) = r.maximum
                && let Some(n) = Number::from_f64(max.next_up())
            {
                let tail = " must be at most ".to_string();
                out.push((Value::Number(n), ViolationKind::OutOfRange, tail));
            }
        }
        Kind::String(r) => out.extend(invalid_strings(r)),
        _ => {}
    }
    out
}

/// A string one character short or over its lengths, and one its pattern does not
/// match.
fn invalid_strings(r: &StringRules) -> Vec<(Value, ViolationKind, String)> {
    let mut out = Vec::new();
    if let Some(min) = r.min_length.filter(|m| *m > 0 && *m <= 4096) {
        let text: String = "a".repeat(min as usize - 1);
        let tail = format!(" must be at least {min} characters long");
        out.push((Value::from(text), ViolationKind::Length, tail));
    }
    if let Some(max) = r.max_length.filter(|m| *m < 4096) {
        // Multi-byte characters: lengths count Unicode scalar values.
        let text: String = "é".repeat(max as usize + 1);
        let tail = format!(" must be at most {max} characters long");
        out.push((Value::from(text), ViolationKind::Length, tail));
    }
    if let Some(p) = &r.pattern {
        let lo = r.min_length.unwrap_or(0) as usize;
        let candidates = ["", " ", "~", "\u{1}", "#!", "0", "A", "z"];
        let miss = candidates
            .iter()
            .map(|c| {
                let mut s = c.to_string();
                while s.chars().count() < lo {
                    s.push(' ');
                }
                s
            })
            .find(|s| !p.is_match(s));
        if let Some(miss) = miss {
            let tail = " must match the pattern ".to_string();
            out.push((Value::from(miss), ViolationKind::Pattern, tail));
        }
    }
    out
}

/// A key `r` does not declare (for undeclared-key values).
fn undeclared_key(r: &ObjectRules) -> String {
    let mut key = "zz_extra".to_string();
    while r.declares(&key) {
        key.push('_');
    }
    key
}

/// A boundary value: the object keys leading to it, the value, and for an integer the
/// value nearest zero in its range and the bound (where shrinking goes and starts).
type EdgeTarget = (Vec<String>, Value, Option<(i128, i128)>);

/// A case of [`ArgStrategy::edges`].
pub(crate) struct Edge {
    /// The arguments.
    pub(crate) value: Value,
    /// For an integer's bound: its keys, the value nearest zero in its range, the bound.
    integer: Option<(Vec<String>, i128, i128)>,
    schema: Arc<Schema>,
}

impl Edge {
    /// The smallest arguments found that still fail, for a failing edge: an integer at
    /// its bound is searched towards the value nearest zero in its range (as generated
    /// integers shrink), other edges are already as simple as they get. `fails` runs a
    /// candidate and gives its failure.
    pub(crate) fn shrink<B>(
        &self,
        first: B,
        mut fails: impl FnMut(&Value) -> Option<B>,
    ) -> (Value, B) {
        let mut best = (self.value.clone(), first);
        let Some((keys, target, start)) = &self.integer else {
            return best;
        };
        let mut tree = TowardTree::new(*target, *start);
        if !tree.simplify() {
            return best;
        }
        // Binary search: about 2 log2(distance) steps, bounded for safety.
        for _ in 0..512 {
            let mut candidate = self.value.clone();
            let failed = Number::from_i128(tree.current())
                .map(Value::Number)
                .filter(|v| set_at(&mut candidate, keys, v.clone()))
                .filter(|_| is_valid(&self.schema, &candidate))
                .and_then(|_| fails(&candidate));
            let more = match failed {
                Some(failure) => {
                    best = (candidate, failure);
                    tree.simplify()
                }
                None => tree.complicate(),
            };
            if !more {
                break;
            }
        }
        best
    }
}

/// Set the value under the object keys `keys` (creating the objects on the way when a
/// key is absent); `false` when a non-object value is in the way.
fn set_at(target: &mut Value, keys: &[String], value: Value) -> bool {
    let Some((last, parents)) = keys.split_last() else {
        *target = value;
        return true;
    };
    let mut node = target;
    for key in parents {
        let Value::Object(o) = node else {
            return false;
        };
        if o.get(key).is_none() {
            o.insert(key.clone(), Value::Object(Object::new()));
        }
        match o.get_mut(key) {
            Some(next) => node = next,
            None => return false,
        }
    }
    match node {
        Value::Object(o) => {
            o.insert(last.clone(), value);
            true
        }
        _ => false,
    }
}

/// The item-count bounds valid arrays are generated within.
fn item_bounds(r: &ArrayRules) -> (u64, u64) {
    let lo = r.min_items.unwrap_or(0);
    let hi = match r.max_items {
        Some(max) if max <= lo + 16 => max,
        Some(max) => max.min(lo + EXTRA_ITEMS),
        None => lo + EXTRA_ITEMS,
    };
    (lo, hi.max(lo))
}

/// A value of another type than `kind` admits, and the message tail it produces.
fn wrong_type(kind: &Kind) -> (Option<Value>, &'static str) {
    match kind {
        Kind::String(_) => (Some(Value::from(7u64)), " must be a string"),
        Kind::Integer(_) => (Some(Value::from("7")), " must be an integer"),
        Kind::Number(_) => (Some(Value::from("1.5")), " must be a number"),
        Kind::Boolean => (Some(Value::from("true")), " must be a boolean"),
        Kind::Null => (Some(Value::from(0u64)), " must be null"),
        Kind::Array(_) => (Some(Value::Object(Object::new())), " must be an array"),
        Kind::Object(_) => (Some(Value::from(Vec::<Value>::new())), " must be an object"),
        _ => (None, ""),
    }
}

/// A value of `kind`'s type that is none of `taken`.
fn outside_of(kind: &Kind, taken: Vec<&Value>) -> Option<Value> {
    let candidates: Vec<Value> = match kind {
        Kind::String(_) => ["\u{1}not allowed", "zz-not-allowed", ""]
            .iter()
            .map(|s| Value::from(*s))
            .collect(),
        Kind::Integer(_) => [987_654_321i64, -987_654_321, 0, 1]
            .iter()
            .map(|i| Value::from(*i))
            .collect(),
        Kind::Number(_) => [0.5f64, -987.25, 0.0]
            .iter()
            .filter_map(|f| Number::from_f64(*f).map(Value::Number))
            .collect(),
        Kind::Boolean => vec![Value::Bool(true), Value::Bool(false)],
        _ => return None,
    };
    candidates.into_iter().find(|c| !taken.contains(&c))
}

/// Strings within the length limits (at both limits too), with ASCII, unicode and long
/// text; from the pattern's regular expression when there is one (falling back on the
/// schema's string examples when the expression cannot be generated from).
fn valid_string(r: &StringRules, schema: &Schema) -> BoxedStrategy<Value> {
    let node = Arc::new(schema.clone());
    if let Some(p) = &r.pattern {
        let examples: Vec<Value> = schema
            .examples
            .iter()
            .flatten()
            .filter(|e| is_valid(&node, e))
            .cloned()
            .collect();
        // Generated strings match whole; anchors at the ends say nothing more then.
        let source = p.as_str();
        let source = source.strip_prefix('^').unwrap_or(source);
        let source = match source.strip_suffix('$') {
            Some(s) if !s.ends_with('\\') => s,
            _ => source,
        };
        let from_regex = proptest::string::string_regex(source).ok().map(|s| {
            let node = node.clone();
            s.prop_map(Value::from)
                .prop_filter("a string the pattern and limits accept", move |v| {
                    is_valid(&node, v)
                })
                .boxed()
        });
        return match (from_regex, examples.is_empty()) {
            (Some(s), true) => s,
            (Some(s), false) => prop_oneof![s, proptest::sample::select(examples)].boxed(),
            (None, false) => proptest::sample::select(examples).boxed(),
            (None, true) => {
                let node = node.clone();
                plain_strings(r)
                    .prop_filter("a string the pattern accepts", move |v| is_valid(&node, v))
                    .boxed()
            }
        };
    }
    plain_strings(r)
}

fn plain_strings(r: &StringRules) -> BoxedStrategy<Value> {
    let lo = r.min_length.unwrap_or(0).min(4096) as usize;
    let hi = r
        .max_length
        .map_or(lo + LONG_STRING, |m| (m as usize).min(lo + LONG_STRING))
        .max(lo);
    let short = hi.min(lo + 12);
    let ascii = proptest::char::range('a', 'z');
    let any_char = prop_oneof![
        3 => proptest::char::range('a', 'z'),
        1 => proptest::char::range('0', '9'),
        1 => proptest::sample::select(vec![' ', '-', '_', '.', '/', '"', '\\', '\n']),
        2 => any::<char>(),
    ];
    let text = |chars: BoxedStrategy<char>, lo: usize, hi: usize| {
        proptest::collection::vec(chars, lo..=hi)
            .prop_map(|c| Value::from(c.into_iter().collect::<String>()))
            .boxed()
    };
    prop_oneof![
        4 => text(any_char.clone().boxed(), lo, short),
        1 => text(ascii.boxed(), lo, lo),
        1 => text(any_char.clone().boxed(), hi, hi),
        1 => text(any_char.boxed(), lo, hi),
    ]
    .boxed()
}

/// Integers in `lo..=hi`: both bounds, their neighbours inside, zero, and values spread
/// over the range. Each shrinks by binary search towards the value nearest zero in the
/// range (so a failure at the upper bound can still shrink to the first failing value).
fn integer_values(lo: i128, hi: i128) -> BoxedStrategy<Value> {
    IntegerRange { lo, hi }
        .prop_filter_map("an integer a JSON number holds", |i| {
            Number::from_i128(i).map(Value::Number)
        })
        .boxed()
}

#[derive(Debug, Clone, Copy)]
struct IntegerRange {
    lo: i128,
    hi: i128,
}

impl Strategy for IntegerRange {
    type Tree = TowardTree;
    type Value = i128;

    fn new_tree(
        &self,
        runner: &mut proptest::test_runner::TestRunner,
    ) -> proptest::strategy::NewTree<Self> {
        let (lo, hi) = (self.lo, self.hi);
        let mut edges = vec![
            lo,
            hi,
            lo.saturating_add(1).min(hi),
            hi.saturating_sub(1).max(lo),
        ];
        if lo <= 0 && 0 <= hi {
            edges.push(0);
        }
        let small = (lo.max(-1000), hi.min(1000));
        let mut choices: Vec<BoxedStrategy<i128>> = vec![proptest::sample::select(edges).boxed()];
        if small.0 <= small.1 {
            choices.push((small.0..=small.1).boxed());
        }
        choices.push((lo..=hi).boxed());
        let start = Union::new(choices).new_tree(runner)?.current();
        let target = 0i128.clamp(lo, hi);
        Ok(TowardTree::new(target, start))
    }
}

/// Binary search from a start value towards a target (proptest's integer shrinking,
/// towards the target instead of zero).
#[derive(Debug, Clone, Copy)]
struct TowardTree {
    target: i128,
    negative: bool,
    lo: u128,
    curr: u128,
    hi: u128,
}

impl TowardTree {
    fn new(target: i128, start: i128) -> Self {
        let d = start.abs_diff(target);
        TowardTree {
            target,
            negative: start < target,
            lo: 0,
            curr: d,
            hi: d,
        }
    }

    fn reposition(&mut self) -> bool {
        let mid = self.lo + (self.hi - self.lo) / 2;
        if mid == self.curr {
            false
        } else {
            self.curr = mid;
            true
        }
    }
}

impl ValueTree for TowardTree {
    type Value = i128;

    fn current(&self) -> i128 {
        // `curr` never exceeds the start's distance, so this stays within the range.
        let d = i128::try_from(self.curr).unwrap_or(i128::MAX);
        if self.negative {
            self.target.saturating_sub(d)
        } else {
            self.target.saturating_add(d)
        }
    }

    fn simplify(&mut self) -> bool {
        if self.hi <= self.lo {
            return false;
        }
        self.hi = self.curr;
        self.reposition()
    }

    fn complicate(&mut self) -> bool {
        if self.hi <= self.lo {
            return false;
        }
        self.lo = self.curr + 1;
        self.reposition()
    }
}

/// Numbers within the bounds: both bounds, zero, and values spread over the range.
fn number_values(min: Option<f64>, max: Option<f64>) -> BoxedStrategy<Value> {
    let lo = min.unwrap_or(-1e9);
    let hi = max.unwrap_or(1e9).max(lo);
    let mut edges = vec![lo, hi];
    if lo <= 0.0 && 0.0 <= hi {
        edges.push(0.0);
    }
    let spread = if lo < hi {
        (lo..=hi).boxed()
    } else {
        Just(lo).boxed()
    };
    prop_oneof![proptest::sample::select(edges), spread]
        .prop_filter_map("a finite number", |f| {
            Number::from_f64(f).map(Value::Number)
        })
        .boxed()
}

/// Scalars of every JSON type.
fn any_scalar() -> BoxedStrategy<Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-1000i64..1000).prop_map(Value::from),
        (-1e6f64..1e6).prop_filter_map("finite", |f| Number::from_f64(f).map(Value::Number)),
        "\\PC{0,8}".prop_map(Value::from),
    ]
    .boxed()
}

/// Any JSON value, a few levels deep.
fn any_json() -> BoxedStrategy<Value> {
    any_scalar()
        .prop_recursive(2, 12, 3, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
                proptest::collection::vec(("[a-z]{1,4}", inner), 0..3).prop_map(|kv| {
                    let mut o = json::Object::new();
                    for (k, v) in kv {
                        o.insert(k, v);
                    }
                    Value::Object(o)
                }),
            ]
        })
        .boxed()
}
