//! # dsh-runtime
//!
//! Write the tools LLM agents call as ordinary async Rust functions. The `#[tool]`
//! attribute derives the model-facing JSON parameter schema, the output schema and strict
//! argument validation from the Rust types and doc comments; the runtime runs every call
//! through one ordered pipeline.
//!
//! Modules:
//! - [`schema`]: the schema vocabulary, the [`ToolSchema`] trait and its std impls;
//! - [`json`]: lossless snapshots of raw arguments;
//! - [`validate`]: path-qualified validation reporting every violation.
#![deny(missing_docs)]

pub mod json;
pub mod present;
pub mod schema;
pub mod tool;
pub mod validate;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use schema::{Schema, ToolSchema};
pub use tool::{ContentBlock, DynTool, Tool, ToolContext, ToolDefinition, ToolError, Toolbox};
pub use validate::ToolArgsError;

pub use dsh_macros::*;

/// Derive [`ToolSchema`](trait@ToolSchema): the JSON schema of exactly what the type's serde
/// `Deserialize` accepts, from its shape, doc comments and `#[serde(...)]` attributes, plus
/// what serde cannot say from `#[schema(...)]`.
///
/// `use dsh_runtime::ToolSchema;` brings both the trait and this derive into scope.
///
/// ```
/// use dsh_runtime::ToolSchema;
/// use serde::Deserialize;
///
/// /// One search filter.
/// #[derive(Deserialize, ToolSchema)]
/// #[serde(rename_all = "camelCase")]
/// struct Filter {
///     /// The field to compare.
///     field_name: String,
///     /// At most this many matches.
///     #[schema(range(min = 1, max = 100))]
///     limit: Option<u32>,
/// }
///
/// assert_eq!(
///     Filter::schema().to_json_string(),
///     r#"{"type":"object","description":"One search filter.","additionalProperties":false,"properties":{"fieldName":{"type":"string","description":"The field to compare."},"limit":{"type":"integer","description":"At most this many matches.","minimum":1,"maximum":100}},"required":["fieldName"]}"#
/// );
/// ```
///
/// # Shapes
///
/// | Rust | schema |
/// | --- | --- |
/// | struct with named fields | closed object (`additionalProperties: false`), even without `deny_unknown_fields`; `#[schema(open)]` opens it |
/// | newtype struct `struct Id(u64);` | the inner type's schema (serde reads newtypes transparently) |
/// | unit struct | `null` |
/// | tuple struct with several fields, tuple variant | compile error: the vocabulary has no positional arrays |
/// | unit-only enum | string `enum` of the variant names; a `oneOf` of string `const`s when variants have docs (to keep each description) |
/// | enum with data | `oneOf`, one branch per variant, in serde's representation (below) |
///
/// A field is required unless its type is `Option`-like ([`ToolSchema::OPTIONAL`](trait@ToolSchema))
/// or it has `#[serde(default)]` (or the struct has). A property that is not required also
/// accepts `null`, meaning "omitted" (see [`validate`]).
///
/// Doc comments become descriptions: the type's on its node, a field's on its property
/// (replacing the field type's own description), a variant's on its branch.
/// `#[doc = include_str!(..)]` works too.
///
/// # Enum representations
///
/// ```
/// # use dsh_runtime::ToolSchema;
/// # use serde::Deserialize;
/// # #[derive(Deserialize, ToolSchema)] struct Point { x: f64, y: f64 }
/// // "Stop", {"Move": {"x": .., "y": ..}}, {"Say": "hi"}
/// #[derive(Deserialize, ToolSchema)]
/// enum External { Stop, Move(Point), Say(String) }
///
/// // {"kind": "circle", "radius": 1.0}, {"kind": "point", "x": .., "y": ..}, {"kind": "empty"}
/// #[derive(Deserialize, ToolSchema)]
/// #[serde(tag = "kind", rename_all = "lowercase")]
/// enum Internal { Circle { radius: f64 }, Point(Point), Empty }
///
/// // {"t": "Ping"}, {"t": "Text", "c": "hi"}
/// #[derive(Deserialize, ToolSchema)]
/// #[serde(tag = "t", content = "c")]
/// enum Adjacent { Ping, Text(String) }
///
/// // "text", ["a", "b"], {"x": .., "y": ..}, null
/// #[derive(Deserialize, ToolSchema)]
/// #[serde(untagged)]
/// enum Untagged { One(String), Many(Vec<String>), At(Point), Nothing }
/// # let _ = (External::schema(), Internal::schema(), Adjacent::schema(), Untagged::schema());
/// ```
///
/// Tagged branches are disjoint by their tag constant. An internally tagged newtype variant
/// must hold a type whose schema is an object (a struct with named fields or a string-keyed
/// map, see [`markers::SchemaObject`]); its keys are inlined after the tag.
///
/// **Untagged enums** map to `oneOf`, where exactly one branch must match, while serde takes
/// the first variant that deserializes. So the variants must be provably disjoint, or the
/// enum does not compile. The rule, checked by rustc in a constant over each payload's
/// [`markers::JsonShape`]: two variants are disjoint when they admit no common JSON kind
/// (`null`, boolean, number — integers included —, string, array, object), or when both
/// are objects and one is a closed object that does not declare a key the other requires.
/// Two unit variants (both `null`), `u64` and `f64`, or `String` and `char` overlap. A
/// payload whose shape is not known (a type with a hand-written `ToolSchema` impl and no
/// `JsonShape` impl) cannot be proved disjoint and is an error. For generic enums the
/// check runs when the instantiation is compiled to code (`cargo build`, not `cargo check`).
/// serde stays lenient in one way the schema is not: an earlier struct variant without
/// `deny_unknown_fields` may capture an object that the schema assigns to a later one.
///
/// # serde attributes
///
/// | attribute | where | effect on the schema |
/// | --- | --- | --- |
/// | `rename = ".."`, `rename(deserialize = "..")` | type, variant, field | the name serde reads |
/// | `rename_all = ".."` (every serde convention) | type, variant | variant names (enum) or field names (struct, struct variant) |
/// | `rename_all_fields = ".."` | enum | field names of every struct variant (a variant's `rename_all` wins) |
/// | `tag`, `content`, `untagged` | enum | representation (above) |
/// | `default`, `default = ".."` | struct, field | not required |
/// | `skip`, `skip_deserializing` | variant, field | left out of the schema |
/// | `transparent` | struct | the single live field's schema; optional when that field is |
/// | `from = "T"` | type | `T`'s schema (the conversion is infallible) |
/// | `deny_unknown_fields` | type | none: objects are closed anyway |
/// | `bound`, `crate`, `expecting`, `into`, `borrow`, `skip_serializing`, `skip_serializing_if`, `serialize_with` | | ignored (serialization only, or no effect on what is accepted) |
/// | `deserialize_with`, `with` | field | need `#[schema(with = ..)]`; the field is then required unless it has a default |
/// | `try_from = "T"` | type | needs `#[schema(with = ..)]` on the type |
/// | `flatten`, `alias`, `other`, `remote`, `untagged` on a variant, identifier enums | | compile error naming the fix |
/// | anything else | | compile error (an attribute the derive cannot read could make serde accept what the schema does not say) |
///
/// # `#[schema(...)]` keys
///
/// | key | where | meaning |
/// | --- | --- | --- |
/// | `description = ".."` | type, variant, field | replaces the doc comment |
/// | `title = ".."` | type, variant, field | `title` annotation |
/// | `examples = [..]`, `example = ..` | type, variant, field | `examples` annotation (JSON literals: `null`, `true`, numbers, strings, `[..]`, `{ "key": .. }`) |
/// | `default = ..` | type, variant, field | `default` annotation (documentation only, never applied) |
/// | `open` | struct, struct variant | `additionalProperties: true` |
/// | `range(min = .., max = ..)` | number field | `minimum`/`maximum` (integer or float literals; narrows the type's own range) |
/// | `length(min = .., max = ..)` | string or array field | `minLength`/`maxLength` or `minItems`/`maxItems` |
/// | `pattern = ".."` | string field | `pattern`, checked at compile time with the `regex` crate's parser |
/// | `enum = [..]`, `const = ..` | string, number or boolean field | `enum` / `const` |
/// | `with = path` | type, field | the schema is `path()`, a `fn() -> Schema` (for custom deserialization) |
/// | `crate = path` | type | path to `dsh_runtime` when it is renamed |
///
/// Constraints apply to the property's own schema (for `Option<T>`, to `T`'s). A constraint
/// on the wrong kind of field is a compile error on the field's type, through the traits
/// in [`markers`]. Unknown and duplicate keys are errors listing the valid keys.
///
/// ```
/// use dsh_runtime::ToolSchema;
/// use dsh_runtime::schema::Schema;
/// use serde::{Deserialize, Deserializer};
///
/// fn hex_schema() -> Schema {
///     Schema::string().with_description("Hexadecimal digits.")
/// }
///
/// fn hex<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
///     let s = String::deserialize(d)?;
///     u64::from_str_radix(&s, 16).map_err(serde::de::Error::custom)
/// }
///
/// /// A query.
/// #[derive(Deserialize, ToolSchema)]
/// #[schema(title = "Query", example = { "text": "rust" })]
/// struct Query {
///     #[schema(length(min = 1, max = 80), pattern = "^[^\\n]*$", examples = ["rust"])]
///     text: String,
///     #[schema(range(min = 1, max = 50), default = 10)]
///     limit: Option<u32>,
///     #[schema(enum = ["asc", "desc"], description = "Sort order.")]
///     order: Option<String>,
///     #[serde(deserialize_with = "hex")]
///     #[schema(with = hex_schema)]
///     id: u64,
/// }
/// # let _ = Query::schema();
/// ```
///
/// # Not supported
///
/// Recursive types (a field mentioning the type itself: schemas are finite trees with no
/// `$ref`; recursion through other types is caught when the schema is built), types with
/// lifetime parameters (arguments are deserialized from owned JSON), unions. Generic types
/// get `T: ToolSchema + 'static` bounds.
pub use dsh_macros::ToolSchema;

pub mod markers {
    //! Traits `#[derive(ToolSchema)]` checks at compile time.
    //!
    //! - [`SchemaNumber`], [`SchemaString`], [`SchemaLength`], [`SchemaBool`]: the field
    //!   types `#[schema(range)]`, `pattern`, `length` and typed `enum`/`const` apply to.
    //!   Implement one for your own newtype when its schema is of that kind.
    //! - [`SchemaObject`]: types whose schema is an object node, which an internally
    //!   tagged enum can carry in a newtype variant. Derived for structs with named fields.
    //! - [`JsonShape`]: which JSON values a type's schema admits, known at compile time, so
    //!   the variants of an untagged enum can be proved disjoint. Derived with
    //!   `ToolSchema`; implement it next to a hand-written `ToolSchema` impl to use the type
    //!   in an untagged enum.
    pub use crate::__private::derive::{
        JsonShape, Key, ObjectShape, SchemaBool, SchemaLength, SchemaNumber, SchemaObject,
        SchemaString, Shape, kind,
    };
}
