//! The [`Value`] tree: [`Value`], [`Array`] and [`Object`].

use std::collections::HashMap;
use std::ops::{Deref, Index};

use super::keys::{LINEAR_LIMIT, dedup_last_wins};
use super::number::Number;
use super::str::Str;

/// A lossless JSON value.
///
/// Compared with `serde_json::Value`:
///
/// * numbers are always finite and exact (see [`Number`]): there is no NaN,
///   no infinity and no `-0`;
/// * object keys are unique and keep their insertion order;
/// * dropping, cloning, comparing and printing never recurse, so values of any
///   depth are safe to handle on small stacks.
///
/// Equality is JSON equality: numbers compare by value and objects compare
/// as maps (key order does not matter; see [`Object`]).
///
/// `Display` (and `to_string()`) writes compact JSON, byte for byte what
/// `serde_json::to_string` writes for the same data (keys in insertion order).
/// `Debug` writes the same text.
#[derive(Default)]
// Exhaustive on purpose: JSON has exactly these six kinds of value.
pub enum Value {
    /// JSON `null`.
    #[default]
    Null,
    /// JSON `true` / `false`.
    Bool(bool),
    /// A JSON number.
    Number(Number),
    /// A JSON string.
    String(Str),
    /// A JSON array.
    Array(Array),
    /// A JSON object.
    Object(Object),
}

/// The frozen, shared, immutable snapshot of a [`Value`].
///
/// `Value` has no interior mutability, so once wrapped in an `Arc` nobody can
/// change it; clones share the same tree.
pub type SharedValue = std::sync::Arc<Value>;

static NULL: Value = Value::Null;

impl Value {
    /// Whether this is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The boolean, if this is `true` or `false`.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The number, if this is a number.
    pub fn as_number(&self) -> Option<&Number> {
        match self {
            Value::Number(n) => Some(n),
            _ => None,
        }
    }

    /// The string contents, if this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The array, if this is an array.
    pub fn as_array(&self) -> Option<&Array> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The object, if this is an object.
    pub fn as_object(&self) -> Option<&Object> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The number as a `u64`, if this is a non-negative integer that fits.
    pub fn as_u64(&self) -> Option<u64> {
        self.as_number().and_then(Number::as_u64)
    }

    /// The number as an `i64`, if this is an integer that fits.
    pub fn as_i64(&self) -> Option<i64> {
        self.as_number().and_then(Number::as_i64)
    }

    /// The number as an `f64` (possibly rounded for huge integers), if this is
    /// a number.
    pub fn as_f64(&self) -> Option<f64> {
        self.as_number().and_then(Number::as_f64)
    }

    /// The JSON type name: `"null"`, `"boolean"`, `"number"`, `"string"`,
    /// `"array"` or `"object"`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        }
    }

    /// The member `key`, if this is an object that has it.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_object().and_then(|o| o.get(key))
    }

    /// The element at `index`, if this is an array that long.
    pub fn get_index(&self, index: usize) -> Option<&Value> {
        self.as_array().and_then(|a| a.get(index))
    }

    /// Wraps the value into a [`SharedValue`] snapshot.
    pub fn freeze(self) -> SharedValue {
        std::sync::Arc::new(self)
    }

    /// A shallow copy of a scalar; containers must not be passed.
    fn clone_scalar(&self) -> Value {
        match self {
            Value::Null => Value::Null,
            Value::Bool(b) => Value::Bool(*b),
            Value::Number(n) => Value::Number(*n),
            Value::String(s) => Value::String(s.clone()),
            Value::Array(_) => Value::Array(Array::new()),
            Value::Object(_) => Value::Object(Object::new()),
        }
    }
}

impl Index<&str> for Value {
    type Output = Value;
    /// The member `key`, or `null` when absent or when this is not an object.
    fn index(&self, key: &str) -> &Value {
        self.get(key).unwrap_or(&NULL)
    }
}

impl Index<usize> for Value {
    type Output = Value;
    /// The element at `index`, or `null` when out of range or when this is not
    /// an array.
    fn index(&self, index: usize) -> &Value {
        self.get_index(index).unwrap_or(&NULL)
    }
}

// ---------------------------------------------------------------------------
// Array

/// A JSON array.
///
/// Dereferences to `[Value]`. Dropping is iterative, so arbitrarily deep
/// nesting cannot overflow the stack.
#[derive(Default)]
pub struct Array(pub(crate) Vec<Value>);

impl Array {
    /// An empty array.
    pub fn new() -> Array {
        Array(Vec::new())
    }

    /// An empty array with room for `cap` elements.
    pub fn with_capacity(cap: usize) -> Array {
        Array(Vec::with_capacity(cap))
    }

    /// Appends an element.
    pub fn push(&mut self, v: impl Into<Value>) {
        self.0.push(v.into());
    }

    /// The elements as a vector.
    pub fn into_vec(mut self) -> Vec<Value> {
        std::mem::take(&mut self.0)
    }
}

impl Deref for Array {
    type Target = [Value];
    fn deref(&self) -> &[Value] {
        &self.0
    }
}

impl From<Vec<Value>> for Array {
    fn from(v: Vec<Value>) -> Array {
        Array(v)
    }
}

impl FromIterator<Value> for Array {
    fn from_iter<I: IntoIterator<Item = Value>>(iter: I) -> Array {
        Array(iter.into_iter().collect())
    }
}

impl<'a> IntoIterator for &'a Array {
    type Item = &'a Value;
    type IntoIter = std::slice::Iter<'a, Value>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl IntoIterator for Array {
    type Item = Value;
    type IntoIter = std::vec::IntoIter<Value>;
    fn into_iter(self) -> Self::IntoIter {
        self.into_vec().into_iter()
    }
}

impl Clone for Array {
    fn clone(&self) -> Array {
        match clone_value_iter(Cloning::Array(self)) {
            Value::Array(a) => a,
            _ => Array::new(),
        }
    }
}

impl PartialEq for Array {
    fn eq(&self, other: &Array) -> bool {
        self.len() == other.len() && eq_iter(self.iter().zip(other.iter()).collect())
    }
}

// ---------------------------------------------------------------------------
// Object

/// A JSON object: unique keys, kept in insertion order.
///
/// Lookups by key scan linearly, which is fastest for the small objects tool
/// arguments consist of. Equality ignores key order (JSON object semantics);
/// iteration and printing follow insertion order.
#[derive(Default)]
pub struct Object(pub(crate) Vec<(Str, Value)>);

impl Object {
    /// An empty object.
    pub fn new() -> Object {
        Object(Vec::new())
    }

    /// An empty object with room for `cap` members.
    pub fn with_capacity(cap: usize) -> Object {
        Object(Vec::with_capacity(cap))
    }

    /// Wraps entries whose keys are known to be distinct.
    pub(crate) fn from_unique(entries: Vec<(Str, Value)>) -> Object {
        Object(entries)
    }

    /// The members, in insertion order.
    pub fn entries(&self) -> &[(Str, Value)] {
        &self.0
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are no members.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The value of member `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.iter().find(|(k, _)| &**k == key).map(|(_, v)| v)
    }

    /// A mutable reference to the value of member `key`.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.0.iter_mut().find(|(k, _)| &**k == key).map(|(_, v)| v)
    }

    /// Whether member `key` exists.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The members `(key, value)` in insertion order.
    pub fn iter(&self) -> ObjectIter<'_> {
        ObjectIter(self.0.iter())
    }

    /// The keys in insertion order.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &str> + DoubleEndedIterator + '_ {
        self.0.iter().map(|(k, _)| &**k)
    }

    /// The values in insertion order.
    pub fn values(&self) -> impl ExactSizeIterator<Item = &Value> + DoubleEndedIterator + '_ {
        self.0.iter().map(|(_, v)| v)
    }

    /// Sets member `key`. An existing member keeps its position and its old
    /// value is returned; a new member is appended.
    pub fn insert(&mut self, key: impl Into<Str>, value: impl Into<Value>) -> Option<Value> {
        let key = key.into();
        let value = value.into();
        match self.get_mut(&key) {
            Some(slot) => Some(std::mem::replace(slot, value)),
            None => {
                self.0.push((key, value));
                None
            }
        }
    }

    /// Removes member `key`, keeping the order of the others, and returns its
    /// value.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let pos = self.0.iter().position(|(k, _)| &**k == key)?;
        Some(self.0.remove(pos).1)
    }

    /// The members as a vector of `(key, value)` pairs in insertion order.
    pub fn into_vec(mut self) -> Vec<(Str, Value)> {
        std::mem::take(&mut self.0)
    }
}

/// Iterator over the members of an [`Object`], in insertion order.
#[derive(Clone)]
pub struct ObjectIter<'a>(std::slice::Iter<'a, (Str, Value)>);

impl<'a> Iterator for ObjectIter<'a> {
    type Item = (&'a str, &'a Value);
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (&**k, v))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl ExactSizeIterator for ObjectIter<'_> {}

impl DoubleEndedIterator for ObjectIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(|(k, v)| (&**k, v))
    }
}

impl<'a> IntoIterator for &'a Object {
    type Item = (&'a str, &'a Value);
    type IntoIter = ObjectIter<'a>;
    fn into_iter(self) -> ObjectIter<'a> {
        self.iter()
    }
}

impl IntoIterator for Object {
    type Item = (Str, Value);
    type IntoIter = std::vec::IntoIter<(Str, Value)>;
    fn into_iter(self) -> Self::IntoIter {
        self.into_vec().into_iter()
    }
}

impl<K: Into<Str>, V: Into<Value>> FromIterator<(K, V)> for Object {
    /// Collects members; a repeated key keeps its first position and takes the
    /// last value (like repeated [`Object::insert`]).
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Object {
        let mut entries: Vec<(Str, Value)> = iter
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        dedup_last_wins(&mut entries);
        Object(entries)
    }
}

impl Clone for Object {
    fn clone(&self) -> Object {
        match clone_value_iter(Cloning::Object(self)) {
            Value::Object(o) => o,
            _ => Object::new(),
        }
    }
}

impl PartialEq for Object {
    fn eq(&self, other: &Object) -> bool {
        let mut pairs = Vec::new();
        push_object_pairs(self, other, &mut pairs) && eq_iter(pairs)
    }
}

// ---------------------------------------------------------------------------
// Iterative drop

/// Whether `v` is a non-empty container.
#[inline]
fn is_nested(v: &Value) -> bool {
    match v {
        Value::Array(a) => !a.0.is_empty(),
        Value::Object(o) => !o.0.is_empty(),
        _ => false,
    }
}

/// Whether dropping `v` could recurse more than one level: it is a container
/// with a non-empty container among its children.
#[inline]
fn is_deep(v: &Value) -> bool {
    match v {
        Value::Array(a) => a.0.iter().any(is_nested),
        Value::Object(o) => o.0.iter().any(|(_, v)| is_nested(v)),
        _ => false,
    }
}

/// Moves the deep children of `children` onto `stack` (leaving `null`).
#[inline]
fn detach_deep<'a>(children: impl Iterator<Item = &'a mut Value>, stack: &mut Vec<Value>) {
    for child in children {
        if is_deep(child) {
            stack.push(std::mem::take(child));
        }
    }
}

/// Drops the deep values on `stack` without recursion. Each popped container
/// first hands its own deep children to the stack, so when it is dropped its
/// remaining children are at most one level deep.
fn drop_stack(mut stack: Vec<Value>) {
    while let Some(mut v) = stack.pop() {
        match &mut v {
            Value::Array(a) => detach_deep(a.0.iter_mut(), &mut stack),
            Value::Object(o) => detach_deep(o.0.iter_mut().map(|(_, v)| v), &mut stack),
            _ => {}
        }
        drop(v);
    }
}

/// How many containers deep a drop recurses before it switches to the explicit
/// stack (a few hundred bytes of the thread's stack per level).
const RECURSIVE_DROP_DEPTH: u32 = 48;

thread_local! {
    /// How many container drops are running on this thread, one inside another.
    static DROP_DEPTH: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Drops `children` (the contents of one container): recursively while the
/// containers being dropped on this thread are fewer than
/// [`RECURSIVE_DROP_DEPTH`], which is what typical trees need and costs no
/// allocation; deeper down, the deep children are detached onto an explicit
/// stack first, so dropping never recurses further than that plus two levels.
#[inline]
fn drop_contents<T>(children: &mut Vec<T>, deep: impl FnOnce(&mut Vec<T>, &mut Vec<Value>)) {
    if children.is_empty() {
        return;
    }
    let depth = DROP_DEPTH.get();
    if depth < RECURSIVE_DROP_DEPTH {
        DROP_DEPTH.set(depth + 1);
        drop(std::mem::take(children));
        DROP_DEPTH.set(depth);
    } else {
        let mut stack = Vec::new();
        deep(children, &mut stack);
        if !stack.is_empty() {
            drop_stack(stack);
        }
    }
}

impl Drop for Array {
    fn drop(&mut self) {
        drop_contents(&mut self.0, |items, stack| {
            detach_deep(items.iter_mut(), stack)
        });
    }
}

impl Drop for Object {
    fn drop(&mut self) {
        drop_contents(&mut self.0, |members, stack| {
            detach_deep(members.iter_mut().map(|(_, v)| v), stack)
        });
    }
}

// ---------------------------------------------------------------------------
// Iterative clone

enum Cloning<'a> {
    Array(&'a Array),
    Object(&'a Object),
    Value(&'a Value),
}

enum CloneFrame<'a> {
    Arr(std::slice::Iter<'a, Value>, Vec<Value>),
    Obj(std::slice::Iter<'a, (Str, Value)>, Vec<(Str, Value)>, Str),
}

fn clone_value_iter(root: Cloning<'_>) -> Value {
    let mut stack: Vec<CloneFrame<'_>> = Vec::new();
    let mut cur = match root {
        Cloning::Array(a) => Either::Arr(a),
        Cloning::Object(o) => Either::Obj(o),
        Cloning::Value(v) => Either::from_value(v),
    };
    'descend: loop {
        let mut done = match cur {
            Either::Arr(a) => match a.split_first() {
                Some((first, rest)) => {
                    stack.push(CloneFrame::Arr(rest.iter(), Vec::with_capacity(a.len())));
                    cur = Either::from_value(first);
                    continue 'descend;
                }
                None => Value::Array(Array::new()),
            },
            Either::Obj(o) => match o.0.split_first() {
                Some(((k, first), rest)) => {
                    stack.push(CloneFrame::Obj(
                        rest.iter(),
                        Vec::with_capacity(o.len()),
                        k.clone(),
                    ));
                    cur = Either::from_value(first);
                    continue 'descend;
                }
                None => Value::Object(Object::new()),
            },
            Either::Scalar(v) => v.clone_scalar(),
        };
        loop {
            match stack.last_mut() {
                None => return done,
                Some(CloneFrame::Arr(it, out)) => {
                    out.push(done);
                    if let Some(next) = it.next() {
                        cur = Either::from_value(next);
                        continue 'descend;
                    }
                    let Some(CloneFrame::Arr(_, out)) = stack.pop() else {
                        unreachable!("top frame is an array frame")
                    };
                    done = Value::Array(Array(out));
                }
                Some(CloneFrame::Obj(it, out, key)) => {
                    out.push((std::mem::take(key), done));
                    if let Some((k, next)) = it.next() {
                        *key = k.clone();
                        cur = Either::from_value(next);
                        continue 'descend;
                    }
                    let Some(CloneFrame::Obj(_, out, _)) = stack.pop() else {
                        unreachable!("top frame is an object frame")
                    };
                    done = Value::Object(Object(out));
                }
            }
        }
    }
}

enum Either<'a> {
    Arr(&'a Array),
    Obj(&'a Object),
    Scalar(&'a Value),
}

impl<'a> Either<'a> {
    fn from_value(v: &'a Value) -> Either<'a> {
        match v {
            Value::Array(a) => Either::Arr(a),
            Value::Object(o) => Either::Obj(o),
            other => Either::Scalar(other),
        }
    }
}

impl Clone for Value {
    /// Deep copy, iterative (safe at any depth).
    fn clone(&self) -> Value {
        clone_value_iter(Cloning::Value(self))
    }
}

// ---------------------------------------------------------------------------
// Iterative equality

/// Pushes the value pairs to compare for two objects; `false` when their key
/// sets differ.
fn push_object_pairs<'a>(
    a: &'a Object,
    b: &'a Object,
    pairs: &mut Vec<(&'a Value, &'a Value)>,
) -> bool {
    if a.len() != b.len() {
        return false;
    }
    if a.0
        .iter()
        .zip(b.0.iter())
        .all(|((ka, _), (kb, _))| ka == kb)
    {
        pairs.extend(
            a.0.iter()
                .zip(b.0.iter())
                .map(|((_, va), (_, vb))| (va, vb)),
        );
        return true;
    }
    // Same keys in another order (or different keys). Keys are unique, so
    // equal lengths plus every key of `a` found in `b` means equal key sets.
    if a.len() <= LINEAR_LIMIT {
        for (k, va) in &a.0 {
            match b.get(k) {
                Some(vb) => pairs.push((va, vb)),
                None => return false,
            }
        }
    } else {
        let index: HashMap<&str, &Value> = b.0.iter().map(|(k, v)| (&**k, v)).collect();
        for (k, va) in &a.0 {
            match index.get(&**k) {
                Some(vb) => pairs.push((va, *vb)),
                None => return false,
            }
        }
    }
    true
}

fn eq_iter<'a>(mut stack: Vec<(&'a Value, &'a Value)>) -> bool {
    while let Some((a, b)) = stack.pop() {
        let same = match (a, b) {
            (Value::Null, Value::Null) => true,
            (Value::Bool(x), Value::Bool(y)) => x == y,
            (Value::Number(x), Value::Number(y)) => x == y,
            (Value::String(x), Value::String(y)) => x == y,
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
                stack.extend(x.iter().zip(y.iter()));
                true
            }
            (Value::Object(x), Value::Object(y)) => push_object_pairs(x, y, &mut stack),
            _ => false,
        };
        if !same {
            return false;
        }
    }
    true
}

impl PartialEq for Value {
    /// JSON equality, iterative (safe at any depth). Object key order is
    /// ignored.
    fn eq(&self, other: &Value) -> bool {
        // Scalars compare directly (the validator's `enum`/`const` checks are hot);
        // only containers take the iterative walk.
        match (self, other) {
            (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Number(a), Value::Number(b)) => a == b,
            (Value::String(a), Value::String(b)) => a == b,
            (Value::Array(_), Value::Array(_)) | (Value::Object(_), Value::Object(_)) => {
                eq_iter(vec![(self, other)])
            }
            _ => false,
        }
    }
}

// Numbers are never NaN, so equality is reflexive.
impl Eq for Value {}
impl Eq for Array {}
impl Eq for Object {}

// ---------------------------------------------------------------------------
// Conversions

impl From<Number> for Value {
    fn from(n: Number) -> Value {
        Value::Number(n)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

macro_rules! from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Value {
            /// An exact integer number.
            fn from(i: $t) -> Value {
                Value::Number(Number::from(i))
            }
        }
    )*};
}

from_int!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(Str::from(s))
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.into())
    }
}

impl From<Box<str>> for Value {
    fn from(s: Box<str>) -> Value {
        Value::String(s.into())
    }
}

impl From<Str> for Value {
    fn from(s: Str) -> Value {
        Value::String(s)
    }
}

impl From<Vec<Value>> for Value {
    fn from(v: Vec<Value>) -> Value {
        Value::Array(Array(v))
    }
}

impl From<Array> for Value {
    fn from(a: Array) -> Value {
        Value::Array(a)
    }
}

impl From<Object> for Value {
    fn from(o: Object) -> Value {
        Value::Object(o)
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    /// `None` becomes `null`.
    fn from(o: Option<T>) -> Value {
        o.map_or(Value::Null, Into::into)
    }
}

impl FromIterator<Value> for Value {
    /// Collects into an array.
    fn from_iter<I: IntoIterator<Item = Value>>(iter: I) -> Value {
        Value::Array(iter.into_iter().collect())
    }
}

/// Checks the [`Number`] invariants; used by tests.
#[cfg(test)]
pub(crate) fn number_is_canonical(n: &Number) -> bool {
    use super::number::N;
    match n.0 {
        N::PosInt(_) => true,
        N::NegInt(i) => i < 0,
        N::Float(f) => {
            f.is_finite()
                && !(f == 0.0 && f.is_sign_negative())
                && !matches!(Number::normalise_finite(f), N::PosInt(_) | N::NegInt(_))
                && f != 0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deep_array(depth: usize) -> Value {
        let mut v = Value::Null;
        for _ in 0..depth {
            v = Value::Array(Array(vec![v]));
        }
        v
    }

    fn deep_object(depth: usize) -> Value {
        let mut v = Value::from(1u8);
        for _ in 0..depth {
            v = Value::Object(Object(vec![("k".into(), v)]));
        }
        v
    }

    #[test]
    fn object_insert_remove_order() {
        let mut o = Object::new();
        assert!(o.insert("b", 1u8).is_none());
        assert!(o.insert("a", 2u8).is_none());
        assert!(o.insert("c", 3u8).is_none());
        assert_eq!(o.insert("b", 9u8), Some(Value::from(1u8)));
        assert_eq!(o.keys().collect::<Vec<_>>(), ["b", "a", "c"]);
        assert_eq!(o.remove("a"), Some(Value::from(2u8)));
        assert_eq!(o.remove("zz"), None);
        assert_eq!(o.keys().collect::<Vec<_>>(), ["b", "c"]);
        assert_eq!(o.get("b"), Some(&Value::from(9u8)));
        assert!(o.contains_key("c") && !o.contains_key("a"));
        assert_eq!(o.len(), 2);
        assert!(!o.is_empty());
        let pairs: Vec<(&str, &Value)> = o.iter().collect();
        assert_eq!(pairs, [("b", &Value::from(9u8)), ("c", &Value::from(3u8))]);
    }

    #[test]
    fn object_from_iter_dedups() {
        let o: Object = [("x", 1u8), ("y", 2), ("x", 3)].into_iter().collect();
        assert_eq!(o.to_string(), r#"{"x":3,"y":2}"#);
        let many: Object = (0..100)
            .map(|i| (format!("k{}", i % 50), Value::from(i)))
            .collect();
        assert_eq!(many.len(), 50);
        assert_eq!(many.get("k0"), Some(&Value::from(50)));
        assert_eq!(many.keys().next(), Some("k0"));
    }

    #[test]
    fn equality_ignores_key_order() {
        let a: Object = [("x", 1u8), ("y", 2)].into_iter().collect();
        let b: Object = [("y", 2u8), ("x", 1)].into_iter().collect();
        let c: Object = [("y", 2u8), ("z", 1)].into_iter().collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        let big_a: Object = (0..100)
            .map(|i| (format!("k{i}"), Value::from(i)))
            .collect();
        let big_b: Object = (0..100)
            .rev()
            .map(|i| (format!("k{i}"), Value::from(i)))
            .collect();
        assert_eq!(big_a, big_b);
        let big_c: Object = (1..101)
            .map(|i| (format!("k{i}"), Value::from(i)))
            .collect();
        assert_ne!(big_a, big_c);
        assert_ne!(Value::from(1u8), Value::from("1"));
        assert_ne!(Value::from(vec![Value::Null]), Value::from(vec![]));
    }

    #[test]
    fn accessors_and_index() {
        let v = Value::Object(
            [("a", Value::from(vec![Value::from(true)]))]
                .into_iter()
                .collect(),
        );
        assert_eq!(v["a"][0], Value::Bool(true));
        assert!(v["missing"].is_null());
        assert!(v["a"][7].is_null());
        assert_eq!(v.type_name(), "object");
        assert_eq!(v["a"].type_name(), "array");
        assert_eq!(Value::from(-3i8).as_i64(), Some(-3));
        assert_eq!(Value::from(3u8).as_u64(), Some(3));
        assert_eq!(Value::from(3u8).as_f64(), Some(3.0));
        assert_eq!(Value::from("s").as_str(), Some("s"));
        assert_eq!(Value::from(Option::<u8>::None), Value::Null);
        assert_eq!(Value::Null.type_name(), "null");
        assert_eq!(Value::Bool(false).type_name(), "boolean");
        assert_eq!(Value::from(1u8).type_name(), "number");
        assert_eq!(Value::from("").type_name(), "string");
    }

    #[test]
    fn deep_values_on_small_stack() {
        let handle = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| {
                let a = deep_array(1_000_000);
                let b = a.clone();
                assert!(a == b);
                let text = a.to_string();
                assert_eq!(text.len(), 2_000_004);
                drop(a);
                drop(b);
                let o = deep_object(1_000_000);
                let o2 = o.clone();
                assert!(o == o2);
                drop(o);
                drop(o2);
            })
            .unwrap();
        handle.join().unwrap();
    }
}
