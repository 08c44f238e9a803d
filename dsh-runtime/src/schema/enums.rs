//! [`EnumValues`]: the allowed values of an `enum` constraint.

use std::fmt;
use std::ops::Deref;

use crate::json::Value;

/// The allowed values of an `enum` constraint, in declaration order.
///
/// It dereferences to `[Value]` and is built from a `Vec<Value>` (or any iterator of
/// values). It is immutable once built: besides the values it keeps their string
/// members as plain text, so a membership test of a string reads the argument once
/// and compares it against plain text, never against another inline [`crate::json::Str`].
#[derive(Clone, Default)]
pub struct EnumValues {
    values: Vec<Value>,
    /// The text of every string member, in order.
    strings: Box<[Box<str>]>,
}

impl EnumValues {
    /// The allowed values.
    pub fn as_slice(&self) -> &[Value] {
        &self.values
    }

    /// The allowed values, taken back.
    pub fn into_vec(self) -> Vec<Value> {
        self.values
    }

    /// Whether `value` is one of the allowed values (compared as `Value`'s `==` compares).
    #[inline]
    pub fn contains(&self, value: &Value) -> bool {
        match value {
            Value::String(s) => self.contains_str(s),
            _ => self.values.iter().any(|e| e == value),
        }
    }

    /// Whether the string `s` is one of the allowed values.
    #[inline]
    pub fn contains_str(&self, s: &str) -> bool {
        self.strings
            .iter()
            .any(|e| crate::json::__private::text_eq(e, s))
    }
}

impl From<Vec<Value>> for EnumValues {
    fn from(values: Vec<Value>) -> Self {
        let strings = values
            .iter()
            .filter_map(|v| v.as_str().map(Box::from))
            .collect();
        EnumValues { values, strings }
    }
}

impl FromIterator<Value> for EnumValues {
    fn from_iter<I: IntoIterator<Item = Value>>(iter: I) -> Self {
        EnumValues::from(iter.into_iter().collect::<Vec<_>>())
    }
}

impl From<EnumValues> for Vec<Value> {
    fn from(values: EnumValues) -> Self {
        values.values
    }
}

impl From<EnumValues> for Value {
    /// The values as a JSON array.
    fn from(values: EnumValues) -> Self {
        Value::from(values.values)
    }
}

impl Deref for EnumValues {
    type Target = [Value];
    fn deref(&self) -> &[Value] {
        &self.values
    }
}

impl<'a> IntoIterator for &'a EnumValues {
    type Item = &'a Value;
    type IntoIter = std::slice::Iter<'a, Value>;
    fn into_iter(self) -> Self::IntoIter {
        self.values.iter()
    }
}

impl PartialEq for EnumValues {
    fn eq(&self, other: &Self) -> bool {
        self.values == other.values
    }
}

impl PartialEq<Vec<Value>> for EnumValues {
    fn eq(&self, other: &Vec<Value>) -> bool {
        &self.values == other
    }
}

impl fmt::Debug for EnumValues {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.values, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_and_other_members_are_both_found() {
        let e: EnumValues = vec![
            Value::from("eq"),
            Value::from(3u64),
            Value::Null,
            Value::from("a string longer than twenty-four bytes"),
        ]
        .into();
        assert!(e.contains(&Value::from("eq")));
        assert!(e.contains(&Value::from("a string longer than twenty-four bytes")));
        assert!(e.contains(&Value::from(3u64)));
        assert!(e.contains(&Value::Null));
        assert!(!e.contains(&Value::from("ne")));
        assert!(!e.contains(&Value::from("3")));
        assert!(!e.contains(&Value::from(false)));
        assert_eq!(e.len(), 4);
        assert_eq!(e.clone().into_vec(), e.as_slice().to_vec());
    }
}
