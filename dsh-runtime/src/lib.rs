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
//! - [`validate`]: path-qualified validation reporting every violation;
//! - [`registry`]: the [`Registry`] of tools, agent scopes and hooks;
//! - [`pipeline`]: [`Registry::execute`] and what it produces ([`ToolResult`]);
//! - [`hooks`]: policy hooks (pre-execute, approval, guards, wrappers, post-execute,
//!   observers).
#![deny(missing_docs)]

pub mod json;
pub mod pipeline;
pub mod present;
pub mod registry;
pub mod schema;
pub mod tool;
pub mod validate;

pub use pipeline::hooks;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use pipeline::{
    Arguments, DispatchOutcome, ErrorCode, ExecutionMode, TimeoutWrapper, ToolCall, ToolCallError,
    ToolResult,
};
pub use registry::{
    RawTool, RegisterError, Registration, Registry, RegistryBuilder, RestrictError, Restriction,
    Scope, ToolDescriptor,
};
pub use schema::{Schema, ToolSchema};
pub use tool::{
    ContentBlock, DynTool, ExecToken, Execution, ScopeId, Tool, ToolContext, ToolDefinition,
    ToolError, Toolbox,
};
pub use validate::ToolArgsError;

pub use dsh_macros::*;
