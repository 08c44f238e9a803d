//! # dsh-testing
//!
//! The testing kit for tool authors, for `[dev-dependencies]`. It changes the features of
//! nothing `dsh-runtime` or `dsh-mcp` is built with, so `cargo test` reuses the build of
//! `cargo build` instead of building the runtime a second time.
//!
//! - [`check_tool`] and [`ToolCheck`]: generated calls of one tool through a registry,
//!   checked against the invariants every tool keeps ([`invariant`]): no panic, valid
//!   arguments reach the body, invalid ones are `INVALID_ARGS` naming the path and never
//!   reach it, outputs pass the published output schema under standard JSON Schema,
//!   render and presenters never panic, cancellation before the body means no body and
//!   a cancelled body stops. A failing case is shrunk and reported with the JSON
//!   arguments that reproduce it. Add your own properties over the typed arguments.
//! - [`ArgStrategy`]: the `proptest` strategies behind it, valid and invalid arguments
//!   from a parameter schema (each invalid one with the [`Violation`] it must produce).
//! - [`TestClient`]: calls as a model host makes them (one call, a batch, a typed call,
//!   from an agent scope, with scripted approval answers), answering what the calls ask
//!   of their caller from a script (forms, URL requests, sampling, roots) and keeping
//!   every request ([`Asked`]) and log message ([`Logged`]).
//! - [`replay_log`]: a call log (JSON Lines, the host's `--log` format) replayed against
//!   the current registry, with a diff of outcomes.
//! - `proxy::RoundRobin` (feature `mcp-proxy`): several MCP server instances behind one
//!   URL, each request to the next instance, as a load balancer without sticky routing
//!   sends them, for tests of a deployment.
//!
//! ```
//! use dsh_testing::ToolCheck;
//! use dsh_runtime::{tool, ToolError, ToolSchema};
//!
//! /// Arguments of `repeat`.
//! #[derive(serde::Serialize, serde::Deserialize, ToolSchema)]
//! pub struct RepeatArgs {
//!     /// The word.
//!     #[schema(length(min = 1, max = 8))]
//!     pub word: String,
//!     /// How often.
//!     #[schema(range(min = 1, max = 3))]
//!     pub times: u8,
//! }
//!
//! /// Repeat a word.
//! #[tool(args)]
//! async fn repeat(args: RepeatArgs) -> Result<String, ToolError> {
//!     Ok(args.word.repeat(args.times as usize))
//! }
//!
//! ToolCheck::new(Repeat)
//!     .cases(32)
//!     .property(|args: &RepeatArgs, result| {
//!         let text = result.text();
//!         (text.chars().count() == args.word.chars().count() * args.times as usize)
//!             .then_some(())
//!             .ok_or_else(|| format!("unexpected length of {text:?}"))
//!     })
//!     .run();
//! ```

#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod args;
mod check;
mod client;
mod registry_api;
mod replay;

#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub mod mcp;

#[cfg(feature = "mcp-proxy")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp-proxy")))]
pub mod proxy;

pub use args::{ArgStrategy, InvalidArgs, LONG_STRING, Violation, ViolationKind};
pub use check::{CheckFailure, ToolCheck, check_tool, invariant, toolbox_tool};
pub use client::{Asked, IntoFormAnswer, Logged, TestClient};
pub use replay::{FieldChange, Outcome, ReplayDiff, ReplayedRecord, replay_log};

/// `s` as a JSON string literal, escaped exactly as the runtime's JSON printer does (for
/// messages that quote names and values).
pub(crate) fn json_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    // Writing to a `String` cannot fail.
    let _ = dsh_runtime::json::write_json_string(&mut out, s);
    out
}
