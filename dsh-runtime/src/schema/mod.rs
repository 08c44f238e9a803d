//! The schema vocabulary: the small, closed set of JSON Schema nodes a tool can publish.
//!
//! Every schema the SDK publishes is a [`Schema`]. The validator in [`crate::validate`]
//! interprets exactly this structure, and [`Schema::to_json_schema`] projects it to JSON
//! Schema text with a fixed key order, so the published schema and the enforced rules
//! cannot drift apart. One deliberate difference: bounds marked [`HiddenBounds`] (the
//! range of wide Rust types such as `u64` and `f32`) are enforced but not published.
//!
//! # Node kinds
//!
//! | kind | JSON Schema | constraints |
//! | --- | --- | --- |
//! | [`Kind::String`] | `{"type":"string"}` | `minLength`, `maxLength` (in Unicode scalar values), `pattern` |
//! | [`Kind::Number`] | `{"type":"number"}` | `minimum`, `maximum` |
//! | [`Kind::Integer`] | `{"type":"integer"}` | `minimum`, `maximum` (every Rust integer type enforces its range; bounds beyond ±2^53 are enforced but not published, see [`HiddenBounds`]) |
//! | [`Kind::Boolean`] | `{"type":"boolean"}` | |
//! | [`Kind::Null`] | `{"type":"null"}` | |
//! | [`Kind::Array`] | `{"type":"array"}` | `items`, `minItems`, `maxItems` |
//! | [`Kind::Object`] | `{"type":"object"}` | `properties`, `required`, `additionalProperties` (explicit, except at a `#[tool]`'s open parameter root: [`Additional::Ignored`]) |
//! | [`Kind::Json`] | `{}` | any JSON value |
//! | [`Kind::OneOf`] | `{"oneOf":[..]}` | at least two branches; exactly one must match |
//!
//! Every node may carry the annotations `description`, `title`, `default` and `examples`
//! (never applied, never validated against) and scalar nodes may carry `enum` and
//! `const` values of their own type. A string, integer or boolean property may also carry
//! `x-mcp-header` ([`Schema::header`]): MCP clients on Streamable HTTP repeat the
//! argument as the request header `Mcp-Param-<name>` (SEP-2243).
//!
//! # Key order
//!
//! The projection is byte-stable: a prompt is byte-identical for an unchanged tool set.
//! Keys appear as `type`, annotations (`description`, `title`, `default`, `examples`,
//! `x-mcp-header`), the
//! kind's constraints, then `enum`/`const` for scalars; `items` last for arrays;
//! `additionalProperties`, `properties`, `required` last for objects (a `#[tool]`'s
//! parameter root has no `additionalProperties`: `type`, `properties`, `required`);
//! `oneOf` first for unions. Properties and `required` keep declaration order.
//!
//! # Depth
//!
//! Schemas are finite trees (recursive Rust types are rejected), and every schema built
//! from raw JSON Schema is limited to [`MAX_SCHEMA_DEPTH`] levels, so walks over a schema
//! recurse at most that deep.

mod cache;
mod enums;
mod impls;
#[doc(hidden)]
pub mod portable;
mod raw;
mod verbatim;

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use crate::json::{Number, Object, Value};

pub use enums::EnumValues;
// Re-exported at the crate root only (one path per public name).
pub(crate) mod tool_schema;
pub(crate) use crate::violations::is_ident_key;
pub use raw::SchemaError;
pub(crate) use tool_schema::ToolSchema;
pub use verbatim::{ResolvedRef, VerbatimSchema};

/// The deepest nesting of schema nodes accepted from raw JSON Schema.
pub const MAX_SCHEMA_DEPTH: usize = 64;

/// The JSON Schema keyword of [`Schema::header`] (SEP-2243).
pub const MCP_HEADER_KEY: &str = "x-mcp-header";

/// Whether `name` may be an `x-mcp-header` ([`Schema::header`]): an HTTP field-name
/// token (RFC 9110 `1*tchar`: ASCII letters, digits and `` !#$%&'*+-.^_`|~ ``).
pub fn is_header_name(name: &str) -> bool {
    !name.is_empty()
        && name.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'!' | b'#'
                        | b'$'
                        | b'%'
                        | b'&'
                        | b'\''
                        | b'*'
                        | b'+'
                        | b'-'
                        | b'.'
                        | b'^'
                        | b'_'
                        | b'`'
                        | b'|'
                        | b'~'
                )
        })
}

/// Shared, immutable text used for names and annotations.
pub type Text = Cow<'static, str>;

/// One node of the schema vocabulary.
///
/// Build nodes with the constructors ([`Schema::string`], [`Schema::object`], ...) and the
/// `with_*` methods; a node built in code is checked with [`Schema::check`] when a tool is
/// registered, and a node read from JSON with [`Schema::from_json_schema`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Schema {
    /// What values the node admits.
    pub kind: Kind,
    /// `description` annotation.
    pub description: Option<Text>,
    /// `title` annotation.
    pub title: Option<Text>,
    /// `default` annotation (documentation only: never applied).
    pub default: Option<Value>,
    /// `examples` annotation (documentation only: never validated).
    pub examples: Option<Vec<Value>>,
    /// `x-mcp-header` annotation (SEP-2243, MCP 2026-07-28): the name `<name>` of the
    /// HTTP header `Mcp-Param-<name>` an MCP client on Streamable HTTP repeats this
    /// argument in, so proxies can route on it; the server checks the header against the
    /// argument. Only on string, integer and boolean properties reached from the
    /// parameter root through `properties`; an HTTP field-name token, unique
    /// (case-insensitively) in the parameter schema ([`Schema::check`] enforces all
    /// three). Published to MCP only (see [`MCP_HEADER_KEY`]).
    pub header: Option<Text>,
    /// `enum`: the value must equal one of these (scalar kinds only).
    pub enum_values: Option<EnumValues>,
    /// `const`: the value must equal this (scalar kinds only).
    pub const_value: Option<Value>,
}

/// The kind of a [`Schema`] node, with its kind-specific constraints.
///
/// Not `#[non_exhaustive]`: every consumer of a schema (validation, the exports, the
/// catalog, the code-mode SDKs) must say what a new kind means, so adding one is meant to
/// break their matches.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// A JSON string.
    String(StringRules),
    /// Any finite JSON number.
    Number(NumberRules),
    /// A JSON number with an integral value (`2`, `2.0` and `1e2` all qualify).
    Integer(IntegerRules),
    /// `true` or `false`.
    Boolean,
    /// `null`.
    Null,
    /// A JSON array.
    Array(ArrayRules),
    /// A JSON object.
    Object(ObjectRules),
    /// Any JSON value.
    Json,
    /// Exactly one of at least two branches must match.
    OneOf(Vec<Arc<Schema>>),
}

/// Constraints of a string node.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct StringRules {
    /// Minimum length in Unicode scalar values.
    pub min_length: Option<u64>,
    /// Maximum length in Unicode scalar values.
    pub max_length: Option<u64>,
    /// A regular expression the string must contain a match of (unanchored, like JSON Schema).
    pub pattern: Option<Pattern>,
}

/// Constraints of a number node.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct NumberRules {
    /// Inclusive lower bound.
    pub minimum: Option<f64>,
    /// Inclusive upper bound.
    pub maximum: Option<f64>,
    /// Which bounds are enforced without being published.
    pub hidden: HiddenBounds,
}

/// Constraints of an integer node.
///
/// Bounds are held as `i128` but must lie within `i64::MIN..=u64::MAX`, the range of
/// integers a snapshot can hold exactly.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct IntegerRules {
    /// Inclusive lower bound.
    pub minimum: Option<i128>,
    /// Inclusive upper bound.
    pub maximum: Option<i128>,
    /// Which bounds are enforced without being published.
    pub hidden: HiddenBounds,
}

/// Bounds a number or integer node enforces but leaves out of its JSON Schema: the range
/// of a wide Rust type (`u64`'s maximum, `i64`'s and `f32`'s range), which tells a model
/// nothing, costs tokens, and loses precision in JavaScript hosts.
///
/// The validator checks hidden bounds like published ones (and serde enforces the type's
/// range anyway), so a value beyond them is still `INVALID_ARGS` with a message naming the
/// bound; only the published text omits them. See [`Schema::with_hidden_bounds`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct HiddenBounds {
    /// The `minimum` is not published.
    pub minimum: bool,
    /// The `maximum` is not published.
    pub maximum: bool,
}

/// Constraints of an array node.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct ArrayRules {
    /// Schema of every item; `None` admits any items.
    pub items: Option<Arc<Schema>>,
    /// Minimum number of items.
    pub min_items: Option<u64>,
    /// Maximum number of items.
    pub max_items: Option<u64>,
}

/// Constraints of an object node.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ObjectRules {
    /// Declared properties, in declaration order (names unique).
    pub properties: Vec<Property>,
    /// What happens to keys that are not declared.
    pub additional: Additional,
}

impl ObjectRules {
    /// Whether `key` is a declared property.
    pub fn declares(&self, key: &str) -> bool {
        self.properties
            .iter()
            .any(|p| crate::json::__private::text_eq(&p.name, key))
    }
}

/// The `additionalProperties` of an object node.
#[derive(Clone, Debug, PartialEq)]
// Exhaustive on purpose: these are the forms `additionalProperties` takes (absent, a
// boolean, a schema); the validator and every exporter must handle each one.
pub enum Additional {
    /// `additionalProperties: false`: undeclared keys are violations.
    Closed,
    /// `additionalProperties: true`: undeclared keys are accepted and kept.
    Open,
    /// No `additionalProperties` is published: the implicit, open parameter root of a
    /// `#[tool]`. Undeclared keys are accepted, removed by [`Validated::normalized`]
    /// before the arguments reach the body, and named in a context of the call's result.
    /// Only a tool's parameter root may be `Ignored` ([`Schema::check`]).
    ///
    /// [`Validated::normalized`]: crate::validate::Validated::normalized
    Ignored,
    /// `additionalProperties: {schema}`: every undeclared key's value must match the schema
    /// (maps such as `HashMap<String, T>`).
    Schema(Arc<Schema>),
}

/// One declared property of an object node.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Property {
    /// The key, exactly as it appears in JSON.
    pub name: Text,
    /// The value's schema.
    pub schema: Arc<Schema>,
    /// Whether the key must be present. A property that is not required also accepts
    /// `null`, meaning "omitted".
    pub required: bool,
}

/// A compiled `pattern` constraint, remembering its source text.
///
/// Patterns use the syntax of the [`regex`] crate (a subset of ECMA-262 without
/// look-around or back-references) and, as in JSON Schema, are not anchored.
///
/// The shorthand classes mean what they mean in ECMA-262 (what a model or a JSON
/// Schema validator reading the published pattern expects), not the regex crate's
/// Unicode defaults: `\d` is `[0-9]`, `\w` is `[A-Za-z0-9_]`, `\b`/`\B` are word
/// boundaries by that ASCII `\w`, `\s` is ECMA-262's white space and line terminators
/// (ASCII `\t\n\v\f\r` and space, plus U+00A0, U+1680, U+2000–U+200A, U+2028,
/// U+2029, U+202F, U+205F, U+3000, U+FEFF), and `\D`, `\W`, `\S` their complements.
/// Inside a character class `[\b]` is a backspace, as in ECMA-262. So `^\d$` does not
/// match `"٣"` (an Arabic-Indic digit). The published source text is unchanged.
#[derive(Clone)]
pub struct Pattern {
    source: Text,
    regex: regex::Regex,
}

impl Pattern {
    /// Compile a pattern. The error text says why the pattern is not accepted.
    pub fn new(source: impl Into<Text>) -> Result<Pattern, String> {
        let source = source.into();
        match dsh_pattern::compile(&source) {
            Ok(regex) => Ok(Pattern { source, regex }),
            Err(e) => Err(format!("invalid pattern {}: {e}", json_quote(&source))),
        }
    }

    /// The pattern's source text.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Whether `text` contains a match.
    pub fn is_match(&self, text: &str) -> bool {
        self.regex.is_match(text)
    }
}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Pattern").field(&self.source).finish()
    }
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl Property {
    /// A property with the given schema.
    pub fn new(name: impl Into<Text>, schema: impl Into<Arc<Schema>>, required: bool) -> Self {
        Property {
            name: name.into(),
            schema: schema.into(),
            required,
        }
    }
}

impl Schema {
    fn of(kind: Kind) -> Schema {
        Schema {
            kind,
            description: None,
            title: None,
            default: None,
            examples: None,
            header: None,
            enum_values: None,
            const_value: None,
        }
    }

    /// `{"type":"string"}`.
    pub fn string() -> Schema {
        Schema::of(Kind::String(StringRules::default()))
    }
    /// `{"type":"number"}`.
    pub fn number() -> Schema {
        Schema::of(Kind::Number(NumberRules::default()))
    }
    /// `{"type":"integer"}`.
    pub fn integer() -> Schema {
        Schema::of(Kind::Integer(IntegerRules::default()))
    }
    /// `{"type":"integer"}` with inclusive bounds.
    pub fn integer_range(minimum: Option<i128>, maximum: Option<i128>) -> Schema {
        Schema::of(Kind::Integer(IntegerRules {
            minimum,
            maximum,
            hidden: HiddenBounds::default(),
        }))
    }
    /// `{"type":"number"}` with inclusive bounds.
    pub fn number_range(minimum: Option<f64>, maximum: Option<f64>) -> Schema {
        Schema::of(Kind::Number(NumberRules {
            minimum,
            maximum,
            hidden: HiddenBounds::default(),
        }))
    }
    /// `{"type":"boolean"}`.
    pub fn boolean() -> Schema {
        Schema::of(Kind::Boolean)
    }
    /// `{"type":"null"}`.
    pub fn null() -> Schema {
        Schema::of(Kind::Null)
    }
    /// `{}`: any JSON value.
    pub fn json() -> Schema {
        Schema::of(Kind::Json)
    }
    /// `{"type":"array"}` with the given item schema (`None`: any items).
    pub fn array(items: Option<Arc<Schema>>) -> Schema {
        Schema::of(Kind::Array(ArrayRules {
            items,
            ..ArrayRules::default()
        }))
    }
    /// An object node with the given properties and openness.
    pub fn object(properties: Vec<Property>, additional: Additional) -> Schema {
        Schema::of(Kind::Object(ObjectRules {
            properties,
            additional,
        }))
    }
    /// A closed object (`additionalProperties: false`) with the given properties.
    pub fn closed_object(properties: Vec<Property>) -> Schema {
        Schema::object(properties, Additional::Closed)
    }
    /// `{"oneOf":[..]}`. [`Schema::check`] rejects fewer than two branches.
    pub fn one_of(branches: Vec<Arc<Schema>>) -> Schema {
        Schema::of(Kind::OneOf(branches))
    }
    /// A string node that admits exactly the given strings (a Rust unit-only enum).
    pub fn string_enum<I, S>(values: I) -> Schema
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut s = Schema::string();
        s.enum_values = Some(values.into_iter().map(|v| Value::from(v.into())).collect());
        s
    }
    /// A string node that admits exactly one string.
    pub fn string_const(value: impl Into<String>) -> Schema {
        let mut s = Schema::string();
        s.const_value = Some(Value::from(value.into()));
        s
    }

    /// Set the `description` annotation (an empty text clears it).
    pub fn with_description(mut self, text: impl Into<Text>) -> Schema {
        let text = text.into();
        self.description = if text.is_empty() { None } else { Some(text) };
        self
    }
    /// Set the `title` annotation.
    pub fn with_title(mut self, text: impl Into<Text>) -> Schema {
        self.title = Some(text.into());
        self
    }
    /// Set the `default` annotation.
    pub fn with_default(mut self, value: Value) -> Schema {
        self.default = Some(value);
        self
    }
    /// Set the `examples` annotation.
    pub fn with_examples(mut self, values: Vec<Value>) -> Schema {
        self.examples = Some(values);
        self
    }
    /// Set the `x-mcp-header` annotation ([`Schema::header`]): MCP clients on Streamable
    /// HTTP repeat this property's argument as the header `Mcp-Param-<name>`.
    pub fn with_header(mut self, name: impl Into<Text>) -> Schema {
        self.header = Some(name.into());
        self
    }
    /// Set `enum`.
    pub fn with_enum(mut self, values: Vec<Value>) -> Schema {
        self.enum_values = Some(values.into());
        self
    }
    /// Set `const`.
    pub fn with_const(mut self, value: Value) -> Schema {
        self.const_value = Some(value);
        self
    }
    /// Set string length bounds (Unicode scalar values). Ignored on other kinds; use
    /// [`Schema::check`] to catch misuse.
    pub fn with_length(mut self, min: Option<u64>, max: Option<u64>) -> Schema {
        match &mut self.kind {
            Kind::String(r) => {
                r.min_length = min.or(r.min_length);
                r.max_length = max.or(r.max_length);
            }
            Kind::Array(r) => {
                r.min_items = min.or(r.min_items);
                r.max_items = max.or(r.max_items);
            }
            _ => {}
        }
        self
    }
    /// Set a string pattern.
    pub fn with_pattern(mut self, pattern: Pattern) -> Schema {
        if let Kind::String(r) = &mut self.kind {
            r.pattern = Some(pattern);
        }
        self
    }
    /// Narrow integer or number bounds (the tighter of the existing and new bound wins,
    /// so an author range never widens a Rust type's range). On integer nodes a
    /// fractional bound is rounded inwards. A bound the author states is published, even
    /// where the type's own bound was hidden.
    pub fn with_range(mut self, min: Option<Bound>, max: Option<Bound>) -> Schema {
        /// The new bound, and whether the author's bound is the one kept.
        fn narrow<T: PartialOrd + Copy>(old: Option<T>, new: T, lower: bool) -> (T, bool) {
            match old {
                Some(o) if (lower && o > new) || (!lower && o < new) => (o, false),
                _ => (new, true),
            }
        }
        match &mut self.kind {
            Kind::Integer(r) => {
                if let Some(m) = min.map(Bound::ceil_int) {
                    let (v, authored) = narrow(r.minimum, m, true);
                    r.minimum = Some(v);
                    r.hidden.minimum &= !authored;
                }
                if let Some(m) = max.map(Bound::floor_int) {
                    let (v, authored) = narrow(r.maximum, m, false);
                    r.maximum = Some(v);
                    r.hidden.maximum &= !authored;
                }
            }
            Kind::Number(r) => {
                if let Some(m) = min.map(Bound::as_f64) {
                    let (v, authored) = narrow(r.minimum, m, true);
                    r.minimum = Some(v);
                    r.hidden.minimum &= !authored;
                }
                if let Some(m) = max.map(Bound::as_f64) {
                    let (v, authored) = narrow(r.maximum, m, false);
                    r.maximum = Some(v);
                    r.hidden.maximum &= !authored;
                }
            }
            _ => {}
        }
        self
    }

    /// Keep enforcing a number or integer node's bounds but leave the chosen ones out of
    /// the published JSON Schema ([`HiddenBounds`]). Ignored on other kinds.
    pub fn with_hidden_bounds(mut self, minimum: bool, maximum: bool) -> Schema {
        let hidden = HiddenBounds { minimum, maximum };
        match &mut self.kind {
            Kind::Integer(r) => r.hidden = hidden,
            Kind::Number(r) => r.hidden = hidden,
            _ => {}
        }
        self
    }

    /// The JSON type name of this node (`"string"`, ..., `"json"`, `"oneOf"`), used in messages.
    pub fn kind_name(&self) -> &'static str {
        match &self.kind {
            Kind::String(_) => "string",
            Kind::Number(_) => "number",
            Kind::Integer(_) => "integer",
            Kind::Boolean => "boolean",
            Kind::Null => "null",
            Kind::Array(_) => "array",
            Kind::Object(_) => "object",
            Kind::Json => "json",
            Kind::OneOf(_) => "oneOf",
        }
    }

    /// The object rules, when this node is an object.
    pub fn as_object(&self) -> Option<&ObjectRules> {
        match &self.kind {
            Kind::Object(o) => Some(o),
            _ => None,
        }
    }

    /// Project to JSON Schema with the byte-stable key order described in the module docs.
    pub fn to_json_schema(&self) -> Value {
        let mut out = Object::new();
        match &self.kind {
            Kind::OneOf(branches) => {
                out.insert(
                    "oneOf",
                    Value::from(
                        branches
                            .iter()
                            .map(|b| b.to_json_schema())
                            .collect::<Vec<_>>(),
                    ),
                );
                self.annotations(&mut out);
            }
            Kind::Json => self.annotations(&mut out),
            kind => {
                out.insert("type", Value::from(self.kind_name()));
                self.annotations(&mut out);
                match kind {
                    Kind::String(r) => string_keywords(r, &mut out),
                    Kind::Number(r) => number_keywords(r, &mut out),
                    Kind::Integer(r) => integer_keywords(r, &mut out),
                    Kind::Array(r) => array_keywords(r, &mut out),
                    Kind::Object(r) => object_keywords(r, &mut out),
                    Kind::Boolean | Kind::Null | Kind::Json | Kind::OneOf(_) => {}
                }
                if let Some(values) = &self.enum_values {
                    out.insert("enum", Value::from(values.clone()));
                }
                if let Some(v) = &self.const_value {
                    out.insert("const", v.clone());
                }
            }
        }
        Value::Object(out)
    }

    fn annotations(&self, out: &mut Object) {
        if let Some(d) = &self.description {
            out.insert("description", Value::from(d.as_ref()));
        }
        if let Some(t) = &self.title {
            out.insert("title", Value::from(t.as_ref()));
        }
        if let Some(d) = &self.default {
            out.insert("default", d.clone());
        }
        if let Some(e) = &self.examples {
            out.insert("examples", Value::from(e.clone()));
        }
        if let Some(h) = &self.header {
            out.insert(MCP_HEADER_KEY, Value::from(h.as_ref()));
        }
    }

    /// [`Schema::to_json_schema`] as compact JSON text.
    pub fn to_json_string(&self) -> String {
        self.to_json_schema().to_string()
    }

    /// Check the definition-time rules of nodes built in code (the same ones
    /// [`Schema::from_json_schema`] enforces on imported JSON): enum and
    /// const of the node's own type, `const` inside `enum`, at least two `oneOf` branches,
    /// unique property names, bounds in order and in range, no `enum`/`const` on
    /// non-scalar nodes. Reports every violation, path-qualified from `root`.
    pub fn check(&self, root: &str) -> Result<(), SchemaError> {
        let mut errors = Vec::new();
        raw::check_node(self, &mut root.to_string(), 0, &mut errors);
        if errors.is_empty() {
            Ok(())
        } else {
            Err(SchemaError::new(errors))
        }
    }

    /// Read a node from raw JSON Schema (for tools registered without the macro, e.g.
    /// proxied ones). Anything outside the vocabulary is rejected with
    /// [`SchemaError`] (`UNSUPPORTED_SCHEMA`) listing every violation.
    pub fn from_json_schema(value: &Value) -> Result<Schema, SchemaError> {
        raw::import(value, raw::Root::Value)
    }

    /// Read a tool's parameter schema from raw JSON Schema. The root must be an object
    /// node; unlike nested objects it may omit `additionalProperties`, which then means
    /// open, like a `#[tool]`'s own parameter root ([`Additional::Ignored`]).
    pub fn parameters_from_json_schema(value: &Value) -> Result<Schema, SchemaError> {
        raw::import(value, raw::Root::Parameters)
    }
}

impl HiddenBounds {
    /// The bounds to publish, keyed `minimum` / `maximum` (hidden ones as `None`).
    fn published<T>(
        self,
        minimum: Option<T>,
        maximum: Option<T>,
    ) -> [(&'static str, Option<T>); 2] {
        [
            ("minimum", minimum.filter(|_| !self.minimum)),
            ("maximum", maximum.filter(|_| !self.maximum)),
        ]
    }
}

/// A numeric bound given by an author (`#[schema(range(min = .., max = ..))]`).
#[derive(Clone, Copy, Debug, PartialEq)]
// Exhaustive on purpose: a Rust numeric literal is an integer or a float.
pub enum Bound {
    /// An integer literal.
    Int(i128),
    /// A number literal with a fraction or exponent.
    Float(f64),
}

impl Bound {
    fn as_f64(self) -> f64 {
        match self {
            Bound::Int(i) => i as f64,
            Bound::Float(f) => f,
        }
    }
    fn ceil_int(self) -> i128 {
        match self {
            Bound::Int(i) => i,
            Bound::Float(f) => f.ceil() as i128,
        }
    }
    fn floor_int(self) -> i128 {
        match self {
            Bound::Int(i) => i,
            Bound::Float(f) => f.floor() as i128,
        }
    }
}

macro_rules! bound_from {
    ($($t:ty => $v:ident),*) => {$(
        impl From<$t> for Bound {
            fn from(v: $t) -> Bound {
                Bound::$v(v.into())
            }
        }
    )*};
}
bound_from!(i8 => Int, i16 => Int, i32 => Int, i64 => Int, i128 => Int, u8 => Int, u16 => Int, u32 => Int, u64 => Int, f32 => Float, f64 => Float);

/// The string keywords of [`Schema::to_json_schema`], after the type and annotations.
fn string_keywords(r: &StringRules, out: &mut Object) {
    if let Some(v) = r.min_length {
        out.insert("minLength", Value::from(v));
    }
    if let Some(v) = r.max_length {
        out.insert("maxLength", Value::from(v));
    }
    if let Some(p) = &r.pattern {
        out.insert("pattern", Value::from(p.as_str()));
    }
}

/// The number keywords of [`Schema::to_json_schema`]: the bounds that are published.
fn number_keywords(r: &NumberRules, out: &mut Object) {
    for (key, bound) in r.hidden.published(r.minimum, r.maximum) {
        if let Some(n) = bound.and_then(Number::from_f64) {
            out.insert(key, Value::Number(n));
        }
    }
}

/// The integer keywords of [`Schema::to_json_schema`]: the bounds that are published.
fn integer_keywords(r: &IntegerRules, out: &mut Object) {
    for (key, bound) in r.hidden.published(r.minimum, r.maximum) {
        if let Some(n) = bound.and_then(int_number) {
            out.insert(key, Value::Number(n));
        }
    }
}

/// The array keywords of [`Schema::to_json_schema`].
fn array_keywords(r: &ArrayRules, out: &mut Object) {
    if let Some(v) = r.min_items {
        out.insert("minItems", Value::from(v));
    }
    if let Some(v) = r.max_items {
        out.insert("maxItems", Value::from(v));
    }
    if let Some(items) = &r.items {
        out.insert("items", items.to_json_schema());
    }
}

/// The object keywords of [`Schema::to_json_schema`]: `additionalProperties`,
/// `properties`, `required`.
fn object_keywords(r: &ObjectRules, out: &mut Object) {
    let additional = match &r.additional {
        Additional::Closed => Some(Value::Bool(false)),
        Additional::Open => Some(Value::Bool(true)),
        Additional::Schema(s) => Some(s.to_json_schema()),
        Additional::Ignored => None,
    };
    if let Some(additional) = additional {
        out.insert("additionalProperties", additional);
    }
    if !r.properties.is_empty() {
        let mut props = Object::new();
        for p in &r.properties {
            props.insert(p.name.as_ref(), p.schema.to_json_schema());
        }
        out.insert("properties", Value::Object(props));
    }
    let required: Vec<Value> = r
        .properties
        .iter()
        .filter(|p| p.required)
        .map(|p| Value::from(p.name.as_ref()))
        .collect();
    if !required.is_empty() {
        out.insert("required", Value::from(required));
    }
}

/// An integer bound as a JSON number, when it is representable.
fn int_number(v: i128) -> Option<Number> {
    if v >= 0 {
        u64::try_from(v).ok().map(Number::from)
    } else {
        i64::try_from(v).ok().map(Number::from)
    }
}

/// JSON-quote a string (used in messages), escaping exactly as the JSON printer does.
pub(crate) fn json_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    json_quote_into(&mut out, s);
    out
}

/// [`json_quote`], appended to `out`.
#[inline]
pub(crate) fn json_quote_into(out: &mut String, s: &str) {
    // Writing to a `String` cannot fail.
    let _ = crate::json::write_json_string(out, s);
}
