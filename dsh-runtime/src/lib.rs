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

pub mod jobs;
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
