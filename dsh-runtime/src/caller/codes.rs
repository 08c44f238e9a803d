//! The codes of [`CallerError`](super::CallerError), as a body's `?` carries them into
//! its [`ToolError`](crate::ToolError) (and so into the result the model and the host
//! see).

/// No caller handler is installed around the call (an in-process host that installed
/// none, a replay): nobody can be asked.
pub const NO_CALLER: &str = "CALLER_UNAVAILABLE";
/// The caller cannot answer this kind of request (an MCP client without the
/// capability).
pub const CALLER_UNSUPPORTED: &str = "CALLER_CAPABILITY_MISSING";
/// The caller's answer is not one of the request (a form answer failing the form's
/// schema, a sampling answer that is not a message).
pub const INVALID_ANSWER: &str = "CALLER_INVALID_ANSWER";
/// The call was cancelled while it waited for its caller.
pub const CALLER_CANCELLED: &str = "CALLER_CANCELLED";
/// The request failed on its way to the caller or back.
pub const CALLER_FAILED: &str = "CALLER_FAILED";
