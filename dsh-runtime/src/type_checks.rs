//! Traits `#[derive(ToolSchema)]` and `#[tool]` check at compile time, and that you may
//! implement for your own types.
//!
//! - [`SchemaNumber`], [`SchemaString`], [`SchemaLength`], [`SchemaBool`]: the field
//!   types `#[schema(range)]`, `pattern`, `length` and typed `enum`/`const` apply to.
//!   Implement one for your own newtype when its schema is of that kind.
//! - [`SchemaHeader`]: the parameter types `#[schema(header = "..")]` applies to (a
//!   string, an integer or a boolean, which an MCP client can repeat in an HTTP header).
//!   Implement it for your own newtype (or unit enum) when its schema is one of those.
//! - [`SchemaObject`]: types whose schema is an object node: the arguments of a
//!   `#[tool(args)]` tool, and the payload of an internally tagged newtype variant.
//!   Derived for structs with named fields.
//! - [`JsonShape`]: which JSON values a type's schema admits, known at compile time, so
//!   the variants of an untagged enum can be proved disjoint. Derived with
//!   `ToolSchema`; implement it next to a hand-written `ToolSchema` impl to use the type
//!   in an untagged enum.
//! - [`DefaultFit`]: which values a `#[schema(default = ..)]` on a field or parameter of
//!   the type may take, known at compile time, so a default the type would reject (a
//!   string for a number, `-1` for a `u32`, a name that is no variant of a unit enum) is
//!   a compile error at the default. Derived with `ToolSchema`; implement it next to a
//!   hand-written `ToolSchema` impl to give such fields a `#[schema(default)]`.
//!
//! ```
//! use dsh_runtime::type_checks::{DefaultFit, Fit, JsonShape, SchemaString, Shape, kind};
//! use dsh_runtime::schema::Schema;
//! use dsh_runtime::ToolSchema;
//!
//! /// A file path, validated by serde elsewhere.
//! pub struct FilePath(String);
//!
//! impl ToolSchema for FilePath {
//!     fn build_schema() -> Schema {
//!         Schema::string().with_description("A path.")
//!     }
//! }
//! // `#[schema(pattern = ..)]` and `length` may now be put on `FilePath` fields, and the
//! // type may be the payload of an untagged enum variant.
//! impl SchemaString for FilePath {}
//! impl JsonShape for FilePath {
//!     const SHAPE: Shape = Shape::of(kind::STRING);
//! }
//! // A field of the type may have a string `#[schema(default = "..")]`.
//! impl DefaultFit for FilePath {
//!     const FIT: Fit = Fit::of(kind::STRING);
//! }
//! # let _ = FilePath(String::new()).0;
//! ```

use std::borrow::Cow as StdCow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::num::{NonZeroU8, NonZeroU16, NonZeroU32, NonZeroU64, NonZeroUsize};
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

use crate::schema::portable::Message;

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

/// Types whose schema is a string, an integer or a boolean node: the `#[tool]` parameter
/// types `#[schema(header = "..")]` applies to (SEP-2243's `x-mcp-header` mirrors only
/// those into an HTTP header; not `number`).
#[diagnostic::on_unimplemented(
    message = "`#[schema(header = ..)]` mirrors only strings, integers and booleans into an HTTP header, but `{Self}` is none of them",
    label = "cannot be mirrored into a header",
    note = "MCP's `x-mcp-header` (SEP-2243) applies to string, integer and boolean parameters only (not to floats, arrays or objects): remove `header`, or give the parameter such a type (and `Option`s of them); a newtype or unit enum whose schema is a string, integer or boolean may implement `dsh_runtime::type_checks::SchemaHeader`"
)]
pub trait SchemaHeader {
    /// Evaluated by the assertion.
    const OK: () = ();
}

/// Types whose schema is an object node: tool arguments taken whole (`#[tool(args)]`)
/// and the payload of an internally tagged newtype variant (serde reads the tag and the
/// payload's keys from one object).
#[diagnostic::on_unimplemented(
    message = "`{Self}` must have an object schema (a struct with named fields or a string-keyed map)",
    label = "not an object",
    note = "tool arguments taken whole with `#[tool(args)]`, and the payload of an internally tagged newtype variant, are one JSON object: use a struct with named fields that derives `ToolSchema`, list the tool's parameters one by one, or use adjacent tagging (`#[serde(tag = \"..\", content = \"..\")]`)"
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
markers!(SchemaHeader: String, str, StdCow<'static, str>, PathBuf, bool, u8, u16, u32, u64,
    u128, usize, i8, i16, i32, i64, i128, isize, NonZeroU8, NonZeroU16, NonZeroU32,
    NonZeroU64, NonZeroUsize);
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
    SchemaHeader,
    SchemaObject
);

macro_rules! option_markers {
    ($($tr:ident),*) => {$(
        #[diagnostic::do_not_recommend]
        impl<T: $tr> $tr for Option<T> {}
    )*};
}
option_markers!(
    SchemaNumber,
    SchemaString,
    SchemaLength,
    SchemaBool,
    SchemaHeader
);

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
/// provably disjoint (used by the derive's disjointness check).
#[doc(hidden)]
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

// What `#[tool]` asks of a tool's output type, asserted at that type's span so that a
// missing derive is one error there, with these messages, instead of serde's generic
// trait error pointing into this crate's source. Not public API: named here (not in
// `__private`) because rustc prints the trait's path in the error.

/// Not public API: `#[tool]` asserts this at the output type of every tool. Implemented
/// for every `Serialize` type.
#[diagnostic::on_unimplemented(
    message = "the output type `{Self}` must implement `serde::Serialize`: add `#[derive(Serialize)]`",
    label = "the output type of this tool",
    note = "a tool's output is serialized to JSON for the model: derive `serde::Serialize` on the type's definition (for `Vec<T>`, `Option<T>` and other containers, on `T`)"
)]
#[doc(hidden)]
pub trait SerializeOutput {
    /// Evaluated by the assertion.
    const OK: () = ();
}

#[diagnostic::do_not_recommend]
impl<T: serde::Serialize + ?Sized> SerializeOutput for T {}

/// Not public API: how `#[tool(render = ..)]` and `presentation_meta` read the output value
/// back into the output type. Implemented for every `DeserializeOwned` type.
#[diagnostic::on_unimplemented(
    message = "the output type `{Self}` must implement `serde::Deserialize` for `render` and `presentation_meta`: add `#[derive(Deserialize)]`",
    label = "this projector reads the output back into `{Self}`",
    note = "`render` and `presentation_meta` receive the typed output, deserialized from the canonical JSON value: derive `serde::Deserialize` on the type's definition (for `Vec<T>`, `Option<T>` and other containers, on `T`)"
)]
#[doc(hidden)]
pub trait DeserializeOutput: Sized {
    /// The output value as `Self`.
    fn from_output(value: &crate::json::Value) -> Result<Self, crate::json::DeError>;
}

#[diagnostic::do_not_recommend]
impl<T: serde::de::DeserializeOwned> DeserializeOutput for T {
    fn from_output(value: &crate::json::Value) -> Result<Self, crate::json::DeError> {
        crate::json::from_value(value)
    }
}

/// Not public API: how generated code reads the schema of a user's type (a field of a
/// derived type, a tool's output). Implemented for every [`ToolSchema`] type; a type
/// without one is reported with `ToolSchema`'s own message, without a list of the types
/// that do implement it.
///
/// [`ToolSchema`]: crate::ToolSchema
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no tool schema",
    label = "`{Self}` does not implement `ToolSchema`",
    note = "add `#[derive(dsh_runtime::ToolSchema)]` (next to `serde::Deserialize`) to the type's definition, or implement `dsh_runtime::ToolSchema` for it by hand"
)]
#[doc(hidden)]
pub trait HasToolSchema {
    /// `ToolSchema::OPTIONAL`.
    const OPTIONAL: bool;
    /// `ToolSchema::PORTABILITY`.
    const PORTABILITY: crate::schema::portable::Facts;
    /// `ToolSchema::PROPERTY_PORTABILITY`.
    const PROPERTY_PORTABILITY: crate::schema::portable::Facts;
    /// `ToolSchema::property_schema`.
    fn property_schema() -> Arc<crate::schema::Schema>
    where
        Self: 'static;
    /// `ToolSchema::schema`.
    fn schema() -> Arc<crate::schema::Schema>
    where
        Self: 'static;
}

#[diagnostic::do_not_recommend]
impl<T: crate::schema::ToolSchema + ?Sized> HasToolSchema for T {
    const OPTIONAL: bool = <T as crate::schema::ToolSchema>::OPTIONAL;
    const PORTABILITY: crate::schema::portable::Facts =
        <T as crate::schema::ToolSchema>::PORTABILITY;
    const PROPERTY_PORTABILITY: crate::schema::portable::Facts =
        <T as crate::schema::ToolSchema>::PROPERTY_PORTABILITY;

    fn property_schema() -> Arc<crate::schema::Schema>
    where
        Self: 'static,
    {
        <T as crate::schema::ToolSchema>::property_schema()
    }

    fn schema() -> Arc<crate::schema::Schema>
    where
        Self: 'static,
    {
        <T as crate::schema::ToolSchema>::schema()
    }
}

// Defaults: what values a `#[schema(default)]` may take, for the check the macros emit at
// the default (a constant evaluated by rustc, like the portability check).

/// The values a `#[schema(default = ..)]` of a type may take (see [`DefaultFit`]):
/// coarse JSON kinds, an integer type's range, a unit enum's variant names.
#[derive(Clone, Copy, Debug)]
pub struct Fit {
    /// Bit set of [`kind`] constants.
    pub kinds: u8,
    /// Numbers must be integers within `min..=max`.
    pub integer: Option<(i128, i128)>,
    /// When not empty, the only strings admitted (a unit enum's variants).
    pub strings: &'static [&'static str],
}

impl Fit {
    /// The given kinds, with no further rule.
    pub const fn of(kinds: u8) -> Fit {
        Fit {
            kinds,
            integer: None,
            strings: &[],
        }
    }

    /// Integers within `min..=max`.
    pub const fn integer(min: i128, max: i128) -> Fit {
        Fit {
            kinds: kind::NUMBER,
            integer: Some((min, max)),
            strings: &[],
        }
    }

    /// Strings, and only these.
    pub const fn strings(names: &'static [&'static str]) -> Fit {
        Fit {
            kinds: kind::STRING,
            integer: None,
            strings: names,
        }
    }

    /// `self` or `null`.
    pub const fn or_null(mut self) -> Fit {
        self.kinds |= kind::NULL;
        self
    }

    /// These kinds added (with no rule for them).
    pub const fn or_kinds(mut self, kinds: u8) -> Fit {
        self.kinds |= kinds;
        self
    }
}

/// Types whose fields and parameters may carry a `#[schema(default = ..)]`: what values
/// such a default may take. Derived with `ToolSchema`.
#[diagnostic::on_unimplemented(
    message = "`#[schema(default)]` cannot be checked against `{Self}`: it does not declare which values it accepts",
    label = "the type of this defaulted field",
    note = "derive `ToolSchema` for `{Self}`, or implement `dsh_runtime::type_checks::DefaultFit` next to its hand-written `ToolSchema` impl"
)]
pub trait DefaultFit {
    /// What a default may be.
    const FIT: Fit;
}

macro_rules! fits {
    ($fit:expr => $($t:ty),*) => {$(
        #[diagnostic::do_not_recommend]
        impl DefaultFit for $t {
            const FIT: Fit = $fit;
        }
    )*};
}
macro_rules! int_fits {
    ($($t:ty),*) => {$(
        #[diagnostic::do_not_recommend]
        impl DefaultFit for $t {
            const FIT: Fit = Fit::integer(<$t>::MIN as i128, <$t>::MAX as i128);
        }
    )*};
}
int_fits!(u8, u16, u32, u64, usize, i8, i16, i32, i64, i128, isize);
fits!(Fit::integer(0, i128::MAX) => u128);
fits!(Fit::integer(1, u8::MAX as i128) => NonZeroU8);
fits!(Fit::integer(1, u16::MAX as i128) => NonZeroU16);
fits!(Fit::integer(1, u32::MAX as i128) => NonZeroU32);
fits!(Fit::integer(1, u64::MAX as i128) => NonZeroU64);
fits!(Fit::integer(1, usize::MAX as i128) => NonZeroUsize);
fits!(Fit::of(kind::NUMBER) => f32, f64);
fits!(Fit::of(kind::STRING) => String, str, StdCow<'static, str>, PathBuf, char);
fits!(Fit::of(kind::BOOLEAN) => bool);
fits!(Fit::of(kind::NULL) => ());
fits!(Fit::of(kind::ANY) => serde_json::Value, crate::json::Value);
fits!(Fit::of(kind::OBJECT) => serde_json::Map<String, serde_json::Value>, crate::json::Object);

#[diagnostic::do_not_recommend]
impl<T: DefaultFit> DefaultFit for Option<T> {
    const FIT: Fit = T::FIT.or_null();
}

macro_rules! delegate_fits {
    ($($p:ident),*) => {$(
        #[diagnostic::do_not_recommend]
        impl<T: DefaultFit + ?Sized> DefaultFit for $p<T> {
            const FIT: Fit = T::FIT;
        }
    )*};
}
delegate_fits!(Box, Arc, Rc);

macro_rules! array_fits {
    ($($t:ident $(<$extra:ident>)?),*) => {$(
        #[diagnostic::do_not_recommend]
        impl<T $(, $extra)?> DefaultFit for $t<T $(, $extra)?> {
            const FIT: Fit = Fit::of(kind::ARRAY);
        }
    )*};
}
array_fits!(Vec, VecDeque, BTreeSet, HashSet<S>);

#[diagnostic::do_not_recommend]
impl<T, const N: usize> DefaultFit for [T; N] {
    const FIT: Fit = Fit::of(kind::ARRAY);
}
#[diagnostic::do_not_recommend]
impl<T> DefaultFit for BTreeMap<String, T> {
    const FIT: Fit = Fit::of(kind::OBJECT);
}
#[diagnostic::do_not_recommend]
impl<T, S> DefaultFit for HashMap<String, T, S> {
    const FIT: Fit = Fit::of(kind::OBJECT);
}

const fn kinds_text(m: Message, kinds: u8) -> Message {
    let names: [(u8, &str); 6] = [
        (kind::STRING, "a string"),
        (kind::NUMBER, "a number"),
        (kind::BOOLEAN, "a boolean"),
        (kind::ARRAY, "an array"),
        (kind::OBJECT, "an object"),
        (kind::NULL, "null"),
    ];
    let mut m = m;
    let mut first = true;
    let mut i = 0;
    while i < names.len() {
        if kinds & names[i].0 != 0 {
            if !first {
                m = m.push(" or ");
            }
            m = m.push(names[i].1);
            first = false;
        }
        i += 1;
    }
    m
}

/// Not public API: why the default `shown` (of JSON kind `given`; `int` when it is an
/// integer literal, `integral` when written without a fraction; `string` when a string)
/// does not fit `fit`, the [`DefaultFit`] of the type written `ty`, or `None` when it
/// does.
#[doc(hidden)]
pub const fn default_fits(
    fit: &Fit,
    given: u8,
    int: Option<i128>,
    integral: bool,
    string: &str,
    shown: &str,
    ty: &str,
) -> Option<Message> {
    let head = Message::new()
        .push("`default = ")
        .push(shown)
        .push("` does not fit `")
        .push(ty)
        .push("`: ");
    if fit.kinds & given == 0 {
        let m = kinds_text(head.push("the type takes "), fit.kinds & !kind::NULL);
        let m = if fit.kinds & kind::NULL != 0 && fit.kinds != kind::NULL {
            m.push(" (or null)")
        } else {
            m
        };
        return Some(m.push("; write a default of that type, or remove it"));
    }
    if given == kind::NUMBER
        && let Some((min, max)) = fit.integer
    {
        let within = match int {
            Some(i) => integral && i >= min && i <= max,
            None => false,
        };
        if !within {
            let m = head
                .push("the type takes integers from ")
                .push_int(min)
                .push(" to ")
                .push_int(max)
                .push("; write a default in that range (without a fraction), or remove it");
            return Some(m);
        }
    }
    if given == kind::STRING && !fit.strings.is_empty() {
        let mut i = 0;
        while i < fit.strings.len() {
            if str_eq(fit.strings[i], string) {
                return None;
            }
            i += 1;
        }
        let mut m = head.push("the type takes one of ");
        let mut i = 0;
        while i < fit.strings.len() {
            if i > 0 {
                m = m.push(", ");
            }
            m = m.push("\"").push(fit.strings[i]).push("\"");
            i += 1;
        }
        return Some(m.push("; write one of them, or remove it"));
    }
    None
}
