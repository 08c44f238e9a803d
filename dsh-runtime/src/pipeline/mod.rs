//! The execution pipeline: one entry point, [`crate::Registry::execute`], runs every call
//! through the same ordered stages and returns one immutable [`ToolResult`].
//!
//! # Stages
//!
//! Each stage is one function in this module's source (`exec.rs` runs them in order):
//!
//! | # | stage | function | on failure |
//! | --- | --- | --- | --- |
//! | 1 | **resolve** the name in the caller's view (capturing the tool's `finalize_content`) | `exec::enter` | unknown name: `UNKNOWN_TOOL`, through post-execute |
//! | 2 | **snapshot** the arguments losslessly, freeze them, mint the execution's token | `exec::enter` | `INVALID_ARGS`, straight to finalize (outranks an unknown name) |
//! | 3 | **validate** against the parameter schema | `exec::validate` | `INVALID_ARGS` with every violation, through post-execute |
//! | 4 | **pre-execute** waterfall ([`hooks::PreExecute`](crate::hooks::PreExecute)), approval on `ask` ([`hooks::ApprovalHandler`](crate::hooks::ApprovalHandler)); a caller token already cancelled stops here first | `exec::policy` | cancelled: `ABORTED_BEFORE_DISPATCH`, straight to finalize · denial: codeless failure, through post-execute |
//! | 5 | **guards** ([`hooks::Guard`](crate::hooks::Guard)), the first denial wins | `exec::policy` | denial: codeless failure, through post-execute |
//! | 6 | **wrappers** ([`hooks::Wrapper`](crate::hooks::Wrapper)) around the dispatch, the built-in [`TimeoutWrapper`] outermost | `dispatch::dispatch` | `TOOL_TIMEOUT` · a wrapper's own error, straight to finalize |
//! | 7 | **body**, with a child of the caller's token (fused with a wrapper's replacement); on a task of its own when it can be cancelled (`detach`) | `dispatch::Dispatcher::body` | the tool's error and code · `INVALID_ARGS` when serde rejects the validated arguments · `ABORTED` after a cancelled success, or when a cancelled body was detached · a codeless refusal while the detached bodies reach the registry's limit |
//! | 8 | **output**: snapshot, validate against the output schema, freeze, render, presentation meta (top-level calls) | `output::success`, `output::settle` | `INVALID_TOOL_OUTPUT` |
//! | 9 | **post-execute** ([`hooks::PostExecute`](crate::hooks::PostExecute)): accept (replace content *or* value), block, attach contexts; then a caller abort turns a success into `ABORTED` | `post::post_execute` | the hook's error |
//! | 10 | **finalize** the content once, freeze, notify **observers** ([`hooks::Observer`](crate::hooks::Observer)) | `post::finalize` | a panicking finalizer: `TOOL_PANICKED` |
//!
//! Denials (pre-execute, approval, guards) are codeless failures that still pass
//! post-execute (`ABORTED_BEFORE_DISPATCH` instead when the caller aborted meanwhile). A
//! hook, approval handler, guard or wrapper that errs ends the call with that error,
//! skipping post-execute; one that panics does the same with `TOOL_PANICKED`.
//!
//! Undeclared keys at a `#[tool]`'s parameter root pass validation (the root is open) and
//! never reach the body; stage 10 names them in a context of the result (see
//! [`crate::tool`](macro@crate::tool), "Unknown arguments").
//!
//! # Error codes
//!
//! Every failure the registry produces has a code ([`ErrorCode`]) except policy denials
//! (pre-execute, approval, guards, post-execute `block`), which carry the policy's
//! message only. A tool's own code passes through unchanged.

mod batch;
mod call;
mod dispatch;
mod exec;
mod output;
mod post;
mod stage;
mod timeout;
mod typed;

pub use crate::result::{DispatchOutcome, ErrorCode, FailureCode, ToolResult, UnknownErrorCode};
pub use batch::{CallOrder, ExecutionMode};
pub use call::{Arguments, ToolCall};
pub use timeout::TimeoutWrapper;
pub use typed::ToolCallError;
