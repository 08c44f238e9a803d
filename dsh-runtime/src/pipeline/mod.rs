//! The execution pipeline (its stages are documented at the crate root, "The pipeline").

mod batch;
mod call;
mod dispatch;
mod exec;
mod output;
mod post;
mod stage;
mod timeout;
mod typed;
mod validation;

pub use crate::error_code::{FailureCode, PipelineCode, UnknownPipelineCode};
pub use crate::result::{DispatchOutcome, ToolResult};
pub use batch::{CallOrder, ExecutionMode};
pub use call::{Arguments, ToolCall};
pub use timeout::TimeoutWrapper;
pub use typed::ToolCallError;
