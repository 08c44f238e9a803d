//! The execution pipeline: one entry point, [`crate::Registry::execute`], runs every call
//! through the same ordered stages and returns one immutable [`ToolResult`].
//!
//! # Stages
//!
//! 1. **Resolve** the name in the caller's view (capturing the tool's
//!    `finalize_content` for the end), then **snapshot** the arguments losslessly and
//!    freeze them; mint the execution's opaque token. A snapshot failure
//!    (`tool execution arguments must be losslessly JSON-serializable: <detail>`)
//!    outranks everything and goes straight to finalize and observers. An unknown name
//!    fails with `UNKNOWN_TOOL` (`unknown tool "<n>"`) without reaching policy.
//! 2. **Validate** against the parameter schema: `INVALID_ARGS` with every violation; no
//!    policy, no body.
//! 3. A caller token already cancelled: `ABORTED_BEFORE_DISPATCH` (finalize and
//!    observers only).
//! 4. **Pre-execute** waterfall ([`hooks::PreExecute`]): allow, deny, or ask; ask goes
//!    to the [`hooks::ApprovalHandler`].
//! 5. **Guards** ([`hooks::Guard`]): the first denial wins.
//! 6. **Wrappers** ([`hooks::Wrapper`]) around the **body** (the built-in
//!    [`TimeoutWrapper`] outermost): the body gets a child of the caller's token (fused
//!    with a wrapper's replacement), is always awaited, and a panic becomes a failure.
//!    A success is snapshotted, validated against the output schema
//!    (`INVALID_TOOL_OUTPUT`), frozen, rendered, and given presentation meta when the
//!    call has no parent. A success when the token was cancelled becomes `ABORTED`.
//! 7. **Post-execute** ([`hooks::PostExecute`]) on every result that got here: accept
//!    (replace content *or* value), block, attach contexts. A caller abort then turns a
//!    success into the cancellation result.
//! 8. **Finalize** content once, freeze, notify **observers** ([`hooks::Observer`]).
//!
//! Denials (pre-execute, approval, guards) are codeless failures that still pass
//! post-execute (`ABORTED_BEFORE_DISPATCH` instead when the caller aborted meanwhile). A
//! hook, approval handler, guard or wrapper that errs or panics ends the call with that
//! error, skipping post-execute.

mod batch;
mod call;
mod exec;
pub mod hooks;
pub(crate) mod lossless;
pub(crate) mod panic;
mod result;
mod timeout;
mod typed;

pub use batch::ExecutionMode;
pub use call::{Arguments, ToolCall};
pub use result::{DispatchOutcome, ErrorCode, ToolResult};
pub use timeout::TimeoutWrapper;
pub use typed::ToolCallError;
