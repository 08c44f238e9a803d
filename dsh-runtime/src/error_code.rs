//! The failure codes: the registry's own ([`PipelineCode`]) and a failure's code as typed
//! ([`FailureCode`]). Below [`crate::tool`] and [`crate::result`], which both use them.
//! Public through [`crate::pipeline`] and the crate root.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

/// The error codes the registry itself produces.
///
/// A failure's code is a string ([`ToolResult::code`](crate::ToolResult::code)): one of these, or a tool's own code
/// (e.g. `FS_NOT_FOUND`), which passes through unchanged. Every failure the registry
/// produces has one, policy denials included, so an agent loop can branch on every
/// failure but a tool's own codeless [`ToolError`](crate::ToolError).
///
/// | code | error name | when | message |
/// | --- | --- | --- | --- |
/// | `UNKNOWN_TOOL` | `UnknownToolError` | no visible tool has the called name (at entry, or unregistered before dispatch) | `unknown tool "<n>"`, then at entry `; did you mean "<m>"?` for the closest visible names and `; available tools: …` when at most 16 are visible |
/// | `INVALID_ARGS` | `ToolArgsError` | the arguments are not JSON, have a duplicate key, are not lossless JSON or are nested too deeply; or they fail the parameter schema (every violation); or serde rejects what the schema accepted | `arguments are not valid JSON: …`, `arguments have a duplicate key: …`, `arguments are not lossless JSON: …`, `arguments are nested too deeply: …`, `invalid arguments: …` |
/// | `INVALID_TOOL_OUTPUT` | `ToolOutputError` | the value fails the output schema or is not lossless, or a projector (`render`, `presentation_meta`) fails | `tool "<n>" returned invalid output: …` |
/// | `TOOL_PANICKED` | `ToolPanicError` | a body, projector, finalizer, hook, guard, approval handler or wrapper panicked | `tool "<n>" panicked: …`, `tool "<n>": output.render panicked: …`, `<hook> panicked: …` |
/// | `ABORTED_BEFORE_DISPATCH` | `AbortError` | the caller cancelled before the body started | `tool call aborted before dispatch` |
/// | `ABORTED` | `AbortError` | the caller cancelled after the body started, and it would have succeeded | `tool call aborted` |
/// | `TOOL_TIMEOUT` | `ToolTimeoutError` | the built-in timeout wrapper's deadline fired | `tool call timed out after <ms>ms` |
/// | `UNSUPPORTED_SCHEMA` | `JsonSchemaError` | a schema outside the vocabulary (at registration, never from a call) | every violation |
/// | `CODE_RUN_FAILED` | `CodeRunError` | a code-mode run failed | |
/// | `POLICY_DENIED` | `PolicyDeniedError` | pre-execute policy denied the call, or asked for an approval no handler could give | the policy's reason, or `tool "<n>" requires approval, but …` |
/// | `GUARD_DENIED` | `GuardDeniedError` | a guard denied the call (final) | the guard's reason |
/// | `APPROVAL_REJECTED` | `ApprovalError` | the approval handler's answer was no | `the user rejected tool "<n>"` |
/// | `APPROVAL_CANCELLED` | `ApprovalError` | the approval was cancelled before an answer | `approval for tool "<n>" was cancelled` |
/// | `RESULT_BLOCKED` | `ResultBlockedError` | post-execute blocked the result | the hook's feedback, or `tool result blocked by post-execute policy` |
/// | `TASK_FAILED` | `TaskError` | the task running a batch call ended without a result (the runtime shut down) | `tool call task failed: …` |
/// | `DETACHED_LIMIT` | `DetachedLimitError` | as many bodies of timed-out or aborted calls as the registry allows are still running detached; the body was not started | `tool "<n>" was not started: …` |
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PipelineCode {
    /// No visible tool has the called name (`unknown tool "<n>"`, with the closest
    /// visible names and, for a short list, all of them).
    UnknownTool,
    /// The arguments cannot be snapshotted (not JSON, a duplicate key, not lossless,
    /// nested too deeply) or do not match the parameter schema.
    InvalidArgs,
    /// The body (or a wrapper or post-execute hook) produced a value that fails the output
    /// schema, is not lossless JSON, or could not be rendered.
    InvalidToolOutput,
    /// User code run by the pipeline panicked: the body, a projector, the finalizer, a
    /// hook, guard, approval handler or wrapper.
    ToolPanicked,
    /// The call was cancelled before its body started.
    AbortedBeforeDispatch,
    /// The call was cancelled after its body started and would otherwise have succeeded.
    Aborted,
    /// The built-in timeout wrapper's deadline fired.
    ToolTimeout,
    /// A schema outside the vocabulary (raised at registration, never by a call).
    UnsupportedSchema,
    /// A code-mode run failed.
    CodeRunFailed,
    /// Pre-execute policy denied the call (`deny`, or `ask` with no handler that could
    /// answer).
    PolicyDenied,
    /// A guard denied the call.
    GuardDenied,
    /// The approval handler answered no.
    ApprovalRejected,
    /// The approval was cancelled before an answer.
    ApprovalCancelled,
    /// Post-execute blocked the result.
    ResultBlocked,
    /// The task running a batch call ended without a result.
    TaskFailed,
    /// Too many bodies of timed-out or aborted calls still run detached
    /// (`RegistryBuilder::max_detached`): the body was not started.
    DetachedLimit,
}

impl PipelineCode {
    /// Every code, in declaration order.
    pub const ALL: [PipelineCode; 16] = [
        PipelineCode::UnknownTool,
        PipelineCode::InvalidArgs,
        PipelineCode::InvalidToolOutput,
        PipelineCode::ToolPanicked,
        PipelineCode::AbortedBeforeDispatch,
        PipelineCode::Aborted,
        PipelineCode::ToolTimeout,
        PipelineCode::UnsupportedSchema,
        PipelineCode::CodeRunFailed,
        PipelineCode::PolicyDenied,
        PipelineCode::GuardDenied,
        PipelineCode::ApprovalRejected,
        PipelineCode::ApprovalCancelled,
        PipelineCode::ResultBlocked,
        PipelineCode::TaskFailed,
        PipelineCode::DetachedLimit,
    ];

    /// The wire form, e.g. `"UNKNOWN_TOOL"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            PipelineCode::UnknownTool => "UNKNOWN_TOOL",
            PipelineCode::InvalidArgs => "INVALID_ARGS",
            PipelineCode::InvalidToolOutput => "INVALID_TOOL_OUTPUT",
            PipelineCode::ToolPanicked => "TOOL_PANICKED",
            PipelineCode::AbortedBeforeDispatch => "ABORTED_BEFORE_DISPATCH",
            PipelineCode::Aborted => "ABORTED",
            PipelineCode::ToolTimeout => "TOOL_TIMEOUT",
            PipelineCode::UnsupportedSchema => "UNSUPPORTED_SCHEMA",
            PipelineCode::CodeRunFailed => "CODE_RUN_FAILED",
            PipelineCode::PolicyDenied => "POLICY_DENIED",
            PipelineCode::GuardDenied => "GUARD_DENIED",
            PipelineCode::ApprovalRejected => "APPROVAL_REJECTED",
            PipelineCode::ApprovalCancelled => "APPROVAL_CANCELLED",
            PipelineCode::ResultBlocked => "RESULT_BLOCKED",
            PipelineCode::TaskFailed => "TASK_FAILED",
            PipelineCode::DetachedLimit => "DETACHED_LIMIT",
        }
    }

    /// The error name published next to the code in the result envelope
    /// (`error.info.name`), e.g. `"ToolArgsError"`.
    pub const fn error_name(self) -> &'static str {
        match self {
            PipelineCode::UnknownTool => "UnknownToolError",
            PipelineCode::InvalidArgs => "ToolArgsError",
            PipelineCode::InvalidToolOutput => "ToolOutputError",
            PipelineCode::ToolPanicked => "ToolPanicError",
            PipelineCode::AbortedBeforeDispatch | PipelineCode::Aborted => "AbortError",
            PipelineCode::ToolTimeout => "ToolTimeoutError",
            PipelineCode::UnsupportedSchema => "JsonSchemaError",
            PipelineCode::CodeRunFailed => "CodeRunError",
            PipelineCode::PolicyDenied => "PolicyDeniedError",
            PipelineCode::GuardDenied => "GuardDeniedError",
            PipelineCode::ApprovalRejected | PipelineCode::ApprovalCancelled => "ApprovalError",
            PipelineCode::ResultBlocked => "ResultBlockedError",
            PipelineCode::TaskFailed => "TaskError",
            PipelineCode::DetachedLimit => "DetachedLimitError",
        }
    }

    /// The code with this wire form, if it is one of the registry's (what [`FromStr`]
    /// gives, without the error).
    pub(crate) fn from_wire(code: &str) -> Option<PipelineCode> {
        PipelineCode::ALL.into_iter().find(|c| c.as_str() == code)
    }
}

/// Parses the wire form ([`PipelineCode::as_str`]): every code of [`PipelineCode::ALL`]
/// round-trips.
///
/// ```
/// use dsh_runtime::PipelineCode;
///
/// assert_eq!("INVALID_ARGS".parse::<PipelineCode>(), Ok(PipelineCode::InvalidArgs));
/// let err = "FS_NOT_FOUND".parse::<PipelineCode>().unwrap_err();
/// assert!(err.to_string().starts_with(r#"unknown error code "FS_NOT_FOUND""#));
/// ```
impl FromStr for PipelineCode {
    type Err = UnknownPipelineCode;

    fn from_str(code: &str) -> Result<PipelineCode, UnknownPipelineCode> {
        PipelineCode::from_wire(code).ok_or_else(|| UnknownPipelineCode(code.into()))
    }
}

/// A string that is not the wire form of any [`PipelineCode`] (see its [`FromStr`] impl).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownPipelineCode(Box<str>);

impl UnknownPipelineCode {
    /// The string that was parsed.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for UnknownPipelineCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown error code {} (the registry's codes are ",
            crate::schema::json_quote(&self.0)
        )?;
        for (i, code) in PipelineCode::ALL.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(code.as_str())?;
        }
        f.write_str(")")
    }
}

impl std::error::Error for UnknownPipelineCode {}

/// A failure's code, typed: one of the registry's [`PipelineCode`]s, or a code of the tool's
/// own (e.g. `FS_NOT_FOUND`). A tool that fails with a registry code's wire form gets
/// that [`PipelineCode`].
///
/// ```
/// use dsh_runtime::{PipelineCode, FailureCode};
///
/// assert_eq!(FailureCode::of("TOOL_TIMEOUT"), FailureCode::Pipeline(PipelineCode::ToolTimeout));
/// assert_eq!(FailureCode::of("FS_NOT_FOUND"), FailureCode::Tool("FS_NOT_FOUND"));
/// assert_eq!(FailureCode::of("FS_NOT_FOUND"), "FS_NOT_FOUND");
/// assert_eq!(FailureCode::Pipeline(PipelineCode::Aborted).as_str(), "ABORTED");
/// ```
// Exhaustive on purpose: a code is the registry's or not, there is no third kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FailureCode<'a> {
    /// A code the registry produces.
    Pipeline(PipelineCode),
    /// A code of the tool's own, passed through unchanged.
    Tool(&'a str),
}

impl<'a> FailureCode<'a> {
    /// The typed form of a wire code.
    pub fn of(code: &'a str) -> FailureCode<'a> {
        match PipelineCode::from_wire(code) {
            Some(c) => FailureCode::Pipeline(c),
            None => FailureCode::Tool(code),
        }
    }

    /// The wire form.
    pub fn as_str(self) -> &'a str {
        match self {
            FailureCode::Pipeline(c) => c.as_str(),
            FailureCode::Tool(s) => s,
        }
    }

    /// The registry's code, when it is one.
    pub fn error_code(self) -> Option<PipelineCode> {
        match self {
            FailureCode::Pipeline(c) => Some(c),
            FailureCode::Tool(_) => None,
        }
    }
}

impl fmt::Display for FailureCode<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<str> for FailureCode<'_> {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for FailureCode<'_> {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<PipelineCode> for FailureCode<'_> {
    fn eq(&self, other: &PipelineCode) -> bool {
        *self == FailureCode::Pipeline(*other)
    }
}

impl fmt::Display for PipelineCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<PipelineCode> for Cow<'static, str> {
    fn from(code: PipelineCode) -> Self {
        Cow::Borrowed(code.as_str())
    }
}

impl PartialEq<str> for PipelineCode {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for PipelineCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}
