//! What a tool is: the [`Tool`] trait, its static [`ToolDefinition`], the
//! [`ToolContext`] a body receives and [`ToolError`]. What a tool shows the model is a
//! list of [`ContentBlock`](crate::content::ContentBlock)s (see [`crate::content`]).
//!
//! `#[tool]` implements [`Tool`] for you; implement it by hand only for tools whose
//! schemas are not derived from Rust types.
//!
//! One file per concern: [`error`](ToolError), the [`definition`](ToolDefinition), the
//! tool [`traits`](Tool), the call's [`identity`](CallIdentity), the body's
//! [`context`](ToolContext), [`progress`](Progress), the [`side`](SideChannel) channel
//! and the [`erased`](ErasedTool) tool.

mod context;
mod definition;
mod erased;
mod error;
mod identity;
mod progress;
mod side;
mod traits;

pub(crate) use context::APPROVAL_ROUTE;
pub use context::{ApprovalRoute, ToolContext};
pub use definition::{Namespace, TaskSupport, ToolAnnotations, ToolDefinition};
pub use erased::{BodyOutcome, BoxFuture, DynTool, ErasedTool, Toolbox};
pub use error::ToolError;
pub use identity::{AgentScopeId, CallIdentity, ExecutionId, ParentCall};
pub use progress::{Progress, ProgressReporter, with_progress};
pub(crate) use progress::{progress_observed, progress_scoped};
pub use side::SideChannel;
pub use traits::{IntoToolError, NamedTool, Tool, ToolParam, ToolStruct};
