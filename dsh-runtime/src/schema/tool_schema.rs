//! The [`ToolSchema`] trait (at the crate root).

use std::sync::Arc;

use super::*;

/// Types that publish a schema for the JSON they deserialize from (or serialize to).
///
/// Implemented for the std types listed in the crate docs and derived with
/// `#[derive(ToolSchema)]`. The schema describes exactly what the type's serde
/// implementation accepts, so the validator (which interprets the schema) and
/// deserialization agree. Integer and float impls enforce their type's whole range but
/// publish only the bounds that inform a model: `u8`..`u32` and `i8`..`i32` publish
/// both, `u64`/`usize` only `minimum: 0`, `i64`, `isize` and `f32` none
/// ([`HiddenBounds`]); the validator and serde still reject a value out of range.
///
/// Schemas are built once per type and cached: call [`ToolSchema::schema`]; implement
/// [`ToolSchema::build_schema`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no tool schema",
    label = "`{Self}` does not implement `ToolSchema`",
    note = "add `#[derive(dsh_runtime::ToolSchema)]` (next to `serde::Deserialize`) to the type's definition, or implement `dsh_runtime::ToolSchema` for it by hand"
)]
pub trait ToolSchema {
    /// Whether this type is optional when it is an object property: `true` for
    /// `Option<T>`. An optional property is not `required`, and its schema is
    /// [`ToolSchema::property_schema`].
    const OPTIONAL: bool = false;

    /// Not public API: what the schema holds that a strict or OpenAPI export cannot
    /// keep, for `#[tool(portable = "..")]`. Derived; a hand-written impl keeps the
    /// default, "unknown", and `portable` then checks nothing below the type.
    #[doc(hidden)]
    const PORTABILITY: portable::Facts = portable::Facts::UNKNOWN;

    /// Not public API: [`ToolSchema::PORTABILITY`] of [`ToolSchema::property_schema`].
    #[doc(hidden)]
    const PROPERTY_PORTABILITY: portable::Facts = Self::PORTABILITY;

    /// Build the schema. Called once per type; children are fetched with
    /// [`ToolSchema::schema`] so they are shared, not rebuilt.
    fn build_schema() -> Schema;

    /// The schema of this type as an object property. Defaults to
    /// [`ToolSchema::schema`]; `Option<T>` gives `T`'s schema (it is then not required).
    fn property_schema() -> Arc<Schema>
    where
        Self: 'static,
    {
        Self::schema()
    }

    /// The cached schema of this type (built on first use).
    fn schema() -> Arc<Schema>
    where
        Self: 'static,
    {
        cache::get_or_build::<Self>()
    }
}
