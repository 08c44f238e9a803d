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

// --- derive support ---
//
// Everything in `derive` is called by `#[derive(ToolSchema)]` expansions, only through
// `::dsh_runtime::__private::derive` (or `<path>::__private::derive` with
// `#[schema(crate = path)]`). It is a module of its own so that names never clash with
// the helpers `#[tool]` expansions use. The marker traits and shapes are re-exported
// publicly as `dsh_runtime::markers`, which is also the path rustc prints in errors.
pub mod derive {
    //! Support for `#[derive(ToolSchema)]` expansions.

    pub use crate::json::Value;
    pub use crate::schema::{Additional, Bound, Pattern, Property, Schema, ToolSchema};
    pub use std::sync::Arc;

    use super::doc;

    use std::borrow::Cow as StdCow;
    use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
    use std::num::{NonZeroU8, NonZeroU16, NonZeroU32, NonZeroU64, NonZeroUsize};
    use std::path::PathBuf;
    use std::rc::Rc;

    use crate::schema::Kind;

    /// Annotations and constraints from doc comments and `#[schema(...)]`, applied to one node.
    ///
    /// JSON values (`examples`, `default`, `enum`, `const`) arrive as JSON text the macro
    /// produced from literals it checked, so parsing them cannot fail.
    #[derive(Clone, Copy, Debug)]
    pub struct Edit {
        /// Doc-comment text (normalised with [`doc`]) or a `description = ...` override;
        /// empty text keeps the node's own description.
        pub description: &'static str,
        /// `title`.
        pub title: Option<&'static str>,
        /// `examples` (or `example`), as JSON texts.
        pub examples: Option<&'static [&'static str]>,
        /// `default` annotation, as JSON text.
        pub default: Option<&'static str>,
        /// `range(min = ..)`.
        pub minimum: Option<Bound>,
        /// `range(max = ..)`.
        pub maximum: Option<Bound>,
        /// `length(min = ..)`.
        pub min_length: Option<u64>,
        /// `length(max = ..)`.
        pub max_length: Option<u64>,
        /// `pattern`, checked by the macro with the regex crate's parser.
        pub pattern: Option<&'static str>,
        /// `enum`, as JSON texts.
        pub enum_values: Option<&'static [&'static str]>,
        /// `const`, as JSON text.
        pub const_value: Option<&'static str>,
    }

    impl Edit {
        /// No change.
        pub const NONE: Edit = Edit {
            description: "",
            title: None,
            examples: None,
            default: None,
            minimum: None,
            maximum: None,
            min_length: None,
            max_length: None,
            pattern: None,
            enum_values: None,
            const_value: None,
        };

        fn has_constraints(&self) -> bool {
            self.minimum.is_some()
                || self.maximum.is_some()
                || self.min_length.is_some()
                || self.max_length.is_some()
                || self.pattern.is_some()
                || self.enum_values.is_some()
                || self.const_value.is_some()
        }

        fn has_annotations(&self) -> bool {
            !self.description.is_empty()
                || self.title.is_some()
                || self.examples.is_some()
                || self.default.is_some()
        }

        /// Apply to a shared node; it is copied only when there is something to apply.
        pub fn apply(&self, schema: Arc<Schema>) -> Arc<Schema> {
            if !self.has_constraints() && !self.has_annotations() {
                return schema;
            }
            Arc::new(self.node(Arc::unwrap_or_clone(schema)))
        }

        /// Apply to a node.
        pub fn node(&self, mut s: Schema) -> Schema {
            if self.has_constraints() {
                s = self.constrain(s);
            }
            let d = doc(self.description);
            if !d.is_empty() {
                s = s.with_description(d);
            }
            if let Some(t) = self.title {
                s = s.with_title(t);
            }
            if let Some(e) = self.examples {
                s = s.with_examples(e.iter().map(|t| json_text(t)).collect());
            }
            if let Some(d) = self.default {
                s = s.with_default(json_text(d));
            }
            s
        }

        /// Constraints go to the node itself, or to every branch of a `oneOf` (an `Option<T>`
        /// outside a property is `oneOf [T, null]`; the `null` branch ignores them).
        fn constrain(&self, mut s: Schema) -> Schema {
            if let Kind::OneOf(branches) = &mut s.kind {
                for b in branches.iter_mut() {
                    if !matches!(b.kind, Kind::Null) {
                        *b = Arc::new(self.constrain((**b).clone()));
                    }
                }
                return s;
            }
            s = s.with_range(self.minimum, self.maximum);
            s = s.with_length(self.min_length, self.max_length);
            if let Some(src) = self.pattern {
                match Pattern::new(src) {
                    Ok(p) => s = s.with_pattern(p),
                    // The macro parsed the pattern with the regex crate's own parser; only the
                    // compiled-size limit can still refuse it. This depends on the source code,
                    // never on input.
                    Err(e) => panic!("`#[schema(pattern = ...)]`: {e}"),
                }
            }
            if let Some(values) = self.enum_values {
                s = s.with_enum(values.iter().map(|t| json_text(t)).collect());
            }
            if let Some(c) = self.const_value {
                s = s.with_const(json_text(c));
            }
            s
        }
    }

    /// Parse JSON text produced by the macro from literals it checked.
    pub fn json_text(text: &'static str) -> Value {
        crate::json::parse(text).unwrap_or(Value::Null)
    }

    /// An object property.
    pub fn property(name: &'static str, schema: Arc<Schema>, required: bool) -> Property {
        Property::new(name, schema, required)
    }

    /// An object node: closed unless `open`.
    pub fn object(properties: Vec<Property>, open: bool) -> Schema {
        let additional = if open {
            Additional::Open
        } else {
            Additional::Closed
        };
        Schema::object(properties, additional)
    }

    /// `oneOf` over the branches; a single branch stands for itself (`oneOf` needs two).
    pub fn one_of(mut branches: Vec<Arc<Schema>>) -> Schema {
        if branches.len() == 1
            && let Some(only) = branches.pop()
        {
            return Arc::unwrap_or_clone(only);
        }
        Schema::one_of(branches)
    }

    /// A string node admitting exactly the given names.
    pub fn string_enum(names: &[&'static str]) -> Schema {
        Schema::string_enum(names.iter().copied())
    }

    /// A string node admitting exactly one name.
    pub fn string_const(name: &'static str) -> Schema {
        Schema::string_const(name)
    }

    /// The required tag property of an internally or adjacently tagged variant.
    pub fn tag_property(tag: &'static str, variant: &'static str) -> Property {
        Property::new(tag, Schema::string_const(variant), true)
    }

    /// An internally tagged newtype variant: the payload's object with the tag property
    /// declared first. The payload implements [`SchemaObject`], so its schema is an object.
    pub fn inline_tag(tag: &'static str, variant: &'static str, payload: Arc<Schema>) -> Schema {
        let mut s = Arc::unwrap_or_clone(payload);
        match &mut s.kind {
            Kind::Object(rules) => {
                rules.properties.insert(0, tag_property(tag, variant));
            }
            _ => panic!(
                "internally tagged variant `{variant}`: the payload's schema is a {}, not an object",
                s.kind_name()
            ),
        }
        s
    }

    // Marker traits: the derive asserts them at the field's type (spanned there), so a
    // constraint on the wrong kind of field is a compile error naming the field's type. Their
    // impls are `do_not_recommend` so the error does not list this module's impls.

    /// Types whose schema is a number node (`range` applies).
    #[diagnostic::on_unimplemented(
        message = "this `#[schema(..)]` key applies only to numbers, but `{Self}` is not a number",
        label = "not a number",
        note = "`range` and number-valued `enum`/`const` accept integer and float fields (and `Option`s of them)"
    )]
    pub trait SchemaNumber {
        /// Evaluated by the assertion.
        const OK: () = ();
    }

    /// Types whose schema is a string node (`pattern`, string `enum`/`const` apply).
    #[diagnostic::on_unimplemented(
        message = "this `#[schema(..)]` key applies only to strings, but `{Self}` is not a string",
        label = "not a string",
        note = "`pattern` and string-valued `enum`/`const` accept `String`-like fields (and `Option`s of them)"
    )]
    pub trait SchemaString {
        /// Evaluated by the assertion.
        const OK: () = ();
    }

    /// Types whose schema is a string or array node (`length` applies).
    #[diagnostic::on_unimplemented(
        message = "`length` applies only to strings and arrays, but `{Self}` is neither",
        label = "not a string or array",
        note = "`#[schema(length(..))]` accepts `String`-like, `Vec`-like and set fields (and `Option`s of them)"
    )]
    pub trait SchemaLength {
        /// Evaluated by the assertion.
        const OK: () = ();
    }

    /// Types whose schema is a boolean node (boolean `enum`/`const` apply).
    #[diagnostic::on_unimplemented(
        message = "a boolean `enum`/`const` applies only to `bool`, but `{Self}` is not a boolean",
        label = "not a boolean"
    )]
    pub trait SchemaBool {
        /// Evaluated by the assertion.
        const OK: () = ();
    }

    /// Types whose schema is an object node, so an internally tagged newtype variant can
    /// carry them (serde reads the tag and the payload's keys from one object).
    #[diagnostic::on_unimplemented(
        message = "an internally tagged newtype variant must hold a struct with named fields or a map, but `{Self}` is neither",
        label = "not an object",
        note = "serde reads the tag and the payload's fields from one JSON object; use a struct variant, adjacent tagging (`#[serde(tag = \"..\", content = \"..\")]`), or a struct payload that derives `ToolSchema`"
    )]
    pub trait SchemaObject {
        /// Evaluated by the assertion.
        const OK: () = ();
    }

    macro_rules! markers {
        ($tr:ident: $($t:ty),*) => {$(
            #[diagnostic::do_not_recommend]
            impl $tr for $t {}
        )*};
    }

    markers!(SchemaNumber: u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64,
        NonZeroU8, NonZeroU16, NonZeroU32, NonZeroU64, NonZeroUsize);
    markers!(SchemaString: String, str, StdCow<'static, str>, PathBuf);
    markers!(SchemaLength: String, str, StdCow<'static, str>, PathBuf);
    markers!(SchemaBool: bool);
    markers!(SchemaObject: serde_json::Map<String, serde_json::Value>, crate::json::Object);

    macro_rules! wrapper_markers {
        ($($tr:ident),*) => {$(
            #[diagnostic::do_not_recommend]
            impl<T: $tr + ?Sized> $tr for Box<T> {}
            #[diagnostic::do_not_recommend]
            impl<T: $tr + ?Sized> $tr for Arc<T> {}
            #[diagnostic::do_not_recommend]
            impl<T: $tr + ?Sized> $tr for Rc<T> {}
        )*};
    }
    wrapper_markers!(
        SchemaNumber,
        SchemaString,
        SchemaLength,
        SchemaBool,
        SchemaObject
    );

    macro_rules! option_markers {
        ($($tr:ident),*) => {$(
            #[diagnostic::do_not_recommend]
            impl<T: $tr> $tr for Option<T> {}
        )*};
    }
    option_markers!(SchemaNumber, SchemaString, SchemaLength, SchemaBool);

    #[diagnostic::do_not_recommend]
    impl<T> SchemaLength for Vec<T> {}
    #[diagnostic::do_not_recommend]
    impl<T> SchemaLength for VecDeque<T> {}
    #[diagnostic::do_not_recommend]
    impl<T> SchemaLength for BTreeSet<T> {}
    #[diagnostic::do_not_recommend]
    impl<T, S> SchemaLength for HashSet<T, S> {}
    #[diagnostic::do_not_recommend]
    impl<T, const N: usize> SchemaLength for [T; N] {}
    #[diagnostic::do_not_recommend]
    impl<T> SchemaObject for BTreeMap<String, T> {}
    #[diagnostic::do_not_recommend]
    impl<T, S> SchemaObject for HashMap<String, T, S> {}

    // JSON shapes: what kinds of JSON value a type's schema admits, known at compile time, so
    // the derive can prove the branches of an untagged enum disjoint (`oneOf` needs exactly
    // one branch to match) in a constant evaluated by rustc.

    /// The JSON kinds of [`Shape::kinds`] (integers count as numbers: every integer is one).
    pub mod kind {
        /// `null`.
        pub const NULL: u8 = 1;
        /// `true` / `false`.
        pub const BOOLEAN: u8 = 2;
        /// Any number, integral or not.
        pub const NUMBER: u8 = 4;
        /// A string.
        pub const STRING: u8 = 8;
        /// An array.
        pub const ARRAY: u8 = 16;
        /// An object.
        pub const OBJECT: u8 = 32;
        /// Any JSON value.
        pub const ANY: u8 = 63;
    }

    /// A declared key of an object shape.
    #[derive(Clone, Copy, Debug)]
    pub struct Key {
        /// The key.
        pub name: &'static str,
        /// Whether every admitted object has it.
        pub required: bool,
    }

    /// The object part of a [`Shape`], when it is exactly one known object node.
    #[derive(Clone, Copy, Debug)]
    pub struct ObjectShape {
        /// Every declared key.
        pub keys: &'static [Key],
        /// Undeclared keys are rejected.
        pub closed: bool,
    }

    /// The JSON values a schema admits, coarsely: a set of kinds, plus the keys of its object
    /// node when that is known exactly.
    #[derive(Clone, Copy, Debug)]
    pub struct Shape {
        /// Bit set of [`kind`] constants.
        pub kinds: u8,
        /// Present only when the object part is one object node with exactly these keys.
        pub object: Option<ObjectShape>,
    }

    impl Shape {
        /// A shape of the given kinds, with no known object keys.
        pub const fn of(kinds: u8) -> Shape {
            Shape {
                kinds,
                object: None,
            }
        }

        /// One object node with exactly these keys.
        pub const fn object(keys: &'static [Key], closed: bool) -> Shape {
            Shape {
                kinds: kind::OBJECT,
                object: Some(ObjectShape { keys, closed }),
            }
        }

        /// `self` or `null`.
        pub const fn or_null(self) -> Shape {
            Shape {
                kinds: self.kinds | kind::NULL,
                object: self.object,
            }
        }

        /// Values admitted by either shape.
        pub const fn union(self, other: Shape) -> Shape {
            let object = if self.kinds & kind::OBJECT != 0 && other.kinds & kind::OBJECT != 0 {
                None
            } else if self.kinds & kind::OBJECT != 0 {
                self.object
            } else {
                other.object
            };
            Shape {
                kinds: self.kinds | other.kinds,
                object,
            }
        }
    }

    const fn str_eq(a: &str, b: &str) -> bool {
        let (a, b) = (a.as_bytes(), b.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        let mut i = 0;
        while i < a.len() {
            if a[i] != b[i] {
                return false;
            }
            i += 1;
        }
        true
    }

    /// Whether `closed` (a closed object) rejects every object `other` admits: `other`
    /// requires a key that `closed` does not declare.
    const fn excludes(closed: &ObjectShape, other: &ObjectShape) -> bool {
        if !closed.closed {
            return false;
        }
        let mut i = 0;
        while i < other.keys.len() {
            let k = &other.keys[i];
            if k.required {
                let mut declared = false;
                let mut j = 0;
                while j < closed.keys.len() {
                    if str_eq(closed.keys[j].name, k.name) {
                        declared = true;
                    }
                    j += 1;
                }
                if !declared {
                    return true;
                }
            }
            i += 1;
        }
        false
    }

    /// The first JSON kind (a [`kind`] bit) that both shapes may admit, or 0 when they are
    /// provably disjoint.
    pub const fn overlap(a: &Shape, b: &Shape) -> u8 {
        let mut common = a.kinds & b.kinds;
        if common & kind::OBJECT != 0
            && let (Some(x), Some(y)) = (&a.object, &b.object)
            && (excludes(x, y) || excludes(y, x))
        {
            common &= !kind::OBJECT;
        }
        common & common.wrapping_neg()
    }

    /// Types whose [`Shape`] is known at compile time: the payloads of untagged enum variants.
    #[diagnostic::on_unimplemented(
        message = "cannot prove the variants of this untagged enum disjoint: `{Self}` does not declare which JSON values it accepts",
        label = "payload of an untagged variant",
        note = "exactly one `oneOf` branch must match; derive `ToolSchema` for `{Self}`, or tag the enum (`#[serde(tag = \"..\")]`)"
    )]
    pub trait JsonShape {
        /// The shape of this type's schema.
        const SHAPE: Shape;
    }

    macro_rules! shapes {
        ($k:ident: $($t:ty),*) => {$(
            #[diagnostic::do_not_recommend]
            impl JsonShape for $t {
                const SHAPE: Shape = Shape::of(kind::$k);
            }
        )*};
    }

    shapes!(NUMBER: u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64,
        NonZeroU8, NonZeroU16, NonZeroU32, NonZeroU64, NonZeroUsize);
    shapes!(STRING: String, Box<str>, Arc<str>, Rc<str>, StdCow<'static, str>, PathBuf, char);
    shapes!(BOOLEAN: bool);
    shapes!(NULL: ());
    shapes!(ANY: serde_json::Value, crate::json::Value);
    shapes!(OBJECT: serde_json::Map<String, serde_json::Value>, crate::json::Object);

    #[diagnostic::do_not_recommend]
    impl<T: JsonShape> JsonShape for Option<T> {
        const SHAPE: Shape = T::SHAPE.or_null();
    }

    macro_rules! delegate_shapes {
        ($($p:ident),*) => {$(
            #[diagnostic::do_not_recommend]
            impl<T: JsonShape + ?Sized> JsonShape for $p<T> {
                const SHAPE: Shape = T::SHAPE;
            }
        )*};
    }
    delegate_shapes!(Box, Arc, Rc);

    macro_rules! array_shapes {
        ($($t:ident $(<$extra:ident>)?),*) => {$(
            #[diagnostic::do_not_recommend]
            impl<T $(, $extra)?> JsonShape for $t<T $(, $extra)?> {
                const SHAPE: Shape = Shape::of(kind::ARRAY);
            }
        )*};
    }
    array_shapes!(Vec, VecDeque, BTreeSet, HashSet<S>);

    #[diagnostic::do_not_recommend]
    impl<T, const N: usize> JsonShape for [T; N] {
        const SHAPE: Shape = Shape::of(kind::ARRAY);
    }
    #[diagnostic::do_not_recommend]
    impl<T> JsonShape for BTreeMap<String, T> {
        const SHAPE: Shape = Shape::of(kind::OBJECT);
    }
    #[diagnostic::do_not_recommend]
    impl<T, S> JsonShape for HashMap<String, T, S> {
        const SHAPE: Shape = Shape::of(kind::OBJECT);
    }
}
