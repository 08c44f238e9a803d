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
