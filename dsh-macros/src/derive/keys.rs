//! The schema keys' values, as the attribute readers produce them and the checks and
//! expansions read them: where an attribute sits, bounds, lengths and JSON literals.
//!
//! This sits below `attr.rs` (which fills these in) and `default.rs` (which checks a
//! default against them), so that neither imports the other's helpers back.

use proc_macro2::Span;

/// Where an attribute sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pos {
    Container,
    Variant,
    Field,
    /// A `#[tool]` fn parameter (`#[schema]` only).
    Param,
}

impl Pos {
    pub(crate) fn noun(self) -> &'static str {
        match self {
            Pos::Container => "a type",
            Pos::Variant => "a variant",
            Pos::Field => "a field",
            Pos::Param => "a tool parameter",
        }
    }
}

pub(crate) fn error(span: Span, msg: impl std::fmt::Display) -> syn::Error {
    syn::Error::new(span, msg)
}

/// A numeric bound literal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Bound {
    Int(i128),
    Float(f64),
}

impl Bound {
    pub(crate) fn as_f64(self) -> f64 {
        match self {
            Bound::Int(i) => i as f64,
            Bound::Float(f) => f,
        }
    }
}

/// `range(min = .., max = ..)`.
pub(crate) struct Range {
    pub min: Option<Bound>,
    pub max: Option<Bound>,
}

/// `length(min = .., max = ..)`.
pub(crate) struct Length {
    pub min: Option<u64>,
    pub max: Option<u64>,
}

/// The JSON kind of a literal, to pick the marker trait a field type must implement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum JsonKind {
    Null,
    Bool,
    Int,
    Float,
    String,
    Array,
    Object,
}

/// A JSON-ish literal, rendered as JSON text.
#[derive(Clone, Debug)]
pub(crate) struct Json {
    pub text: String,
    pub kind: JsonKind,
}

/// What the `#[schema(...)]` attributes of one item say.
#[derive(Default)]
pub(crate) struct SchemaAttrs {
    pub description: Option<syn::Expr>,
    pub title: Option<syn::Expr>,
    pub open: Option<Span>,
    pub range: Option<Range>,
    pub length: Option<Length>,
    pub pattern: Option<(String, Span)>,
    pub examples: Option<Vec<Json>>,
    pub default: Option<Json>,
    /// Where the default's value is written (its errors point there).
    pub default_span: Option<Span>,
    pub with: Option<syn::Path>,
    pub enum_values: Option<(Vec<Json>, Span)>,
    pub const_value: Option<(Json, Span)>,
    pub krate: Option<syn::Path>,
    /// `header = "Name"` (a `#[tool]` parameter only): the `x-mcp-header` annotation, and
    /// the span of its literal.
    pub header: Option<(String, Span)>,
    /// `enum_names` (an enum of unit variants only): as an elicitation form's
    /// single-select, the choices are written as MCP's legacy `enum` + `enumNames`.
    pub enum_names: Option<Span>,
}

/// Quote a string as JSON.
pub(crate) fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
