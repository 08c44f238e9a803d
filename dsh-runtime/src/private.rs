//! Support for macro-generated code. Not public API: anything here may change in any
//! release.
#![doc(hidden)]

pub use serde;
pub use serde_json;
pub use std::sync::{Arc, OnceLock};

use std::borrow::Cow;

use crate::schema::{Property, Schema, ToolSchema};

/// Normalise doc-comment text gathered with `concat!` (one line per `#[doc]`): strip the
/// common leading indentation, trailing whitespace and surrounding blank lines.
pub fn doc(raw: &'static str) -> Cow<'static, str> {
    let lines: Vec<&str> = raw.lines().collect();
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out: Vec<&str> = lines
        .iter()
        .map(|l| {
            if l.len() >= indent {
                l[indent..].trim_end()
            } else {
                l.trim()
            }
        })
        .collect();
    while out.first().is_some_and(|l| l.is_empty()) {
        out.remove(0);
    }
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    let joined = out.join("\n");
    if joined == raw {
        Cow::Borrowed(raw)
    } else {
        Cow::Owned(joined)
    }
}

/// A struct field or fn parameter as an object property.
pub fn field<T: ToolSchema + ?Sized + 'static>(
    name: &'static str,
    doc_text: &'static str,
    has_default: bool,
) -> Property {
    let mut schema = T::property_schema();
    let d = doc(doc_text);
    if !d.is_empty() {
        schema = Arc::new((*schema).clone().with_description(d));
    }
    Property::new(name, schema, !T::OPTIONAL && !has_default)
}

/// A closed object schema from properties.
pub fn closed(properties: Vec<Property>) -> Schema {
    Schema::closed_object(properties)
}
