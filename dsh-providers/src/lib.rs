//! # dsh-providers
//!
//! Hand the tools of a [`dsh_runtime::Registry`] to a model provider, and read back what
//! the model does with them.
//!
//! - [`export`]: the request fragment each model API takes (OpenAI Responses and Chat
//!   Completions, Anthropic, Gemini, MCP `tools/list`), normal or strict, with every lossy
//!   transform reported; [`export::check`] holds each target's own rules against an
//!   exported fragment; with the `tokens` feature, `export::tokens` counts what each
//!   definition costs in o200k tokens.
//! - [`round_trip`]: a provider response's tool calls to [`dsh_runtime::ToolCall`]s, and
//!   results back to the provider's messages, in a loop around the caller's HTTP client.
//! - [`tool_search`]: a built-in `tool_search` tool over the deferred tools of a scope, for
//!   providers and hosts without server-side tool search.
//! - [`catalog`]: a Markdown catalog of a registry's tools, for people rather than models
//!   (it reads the same definitions the exports publish, so it lives beside them).
//!
//! ```
//! use dsh_providers::export::{self, Target};
//! use dsh_runtime::{Registry, ToolError, tool};
//!
//! /// Add two numbers.
//! #[tool]
//! async fn add(a: i64, b: i64) -> Result<i64, ToolError> {
//!     Ok(a + b)
//! }
//!
//! let registry = Registry::new();
//! let _add = registry.register(Add).unwrap();
//! let tools = export::export_registry(&registry, Target::AnthropicStrict);
//! assert!(tools.is_complete());
//! assert_eq!(tools.tools[0].name, "add");
//! ```
//!
//! # Features
//!
//! - `tokens` (off by default): `export::tokens`, o200k token counts of the exported
//!   definitions per target, with the tokenizer and its vocabulary built in (about 3.6 MB).
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod catalog;
pub mod export;
pub mod round_trip;
pub mod tool_search;
