//! The one result every call produces ([`ToolResult`]), the registry's error codes
//! ([`PipelineCode`]) and what a dispatch produces before post-execute ([`DispatchOutcome`]).
//! Public through [`crate::pipeline`] and the crate root.

use std::borrow::Cow;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::str::FromStr;

use triomphe::{Arc, UniqueArc};

use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::cards::ResultSummary;
use crate::content::{Blocks, ContentBlock};
use crate::json::{SharedValue, Value};
use crate::tool::{ExecutionId, ToolError};

/// The error codes the registry itself produces.
///
/// A failure's code is a string ([`ToolResult::code`]): one of these, or a tool's own code
/// (e.g. `FS_NOT_FOUND`), which passes through unchanged. Every failure the registry
/// produces has one, policy denials included, so an agent loop can branch on every
/// failure but a tool's own codeless [`ToolError`].
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

pub(crate) type Code = Option<Cow<'static, str>>;

/// The data of a result.
#[derive(Clone, Debug)]
pub(crate) struct ResultInner {
    pub(crate) kind: Kind,
    content: Blocks,
    pub(crate) contexts: Vec<String>,
}

/// A result while the pipeline builds it. Its data already sits in the allocation the
/// frozen [`ToolResult`] shares (a unique handle, mutable without atomics), so the stages
/// hand each other a pointer rather than moving the data.
pub(crate) struct ResultData(UniqueArc<ResultInner>);

impl ResultData {
    fn new(inner: ResultInner) -> Self {
        ResultData(UniqueArc::new(inner))
    }
}

impl Deref for ResultData {
    type Target = ResultInner;
    fn deref(&self) -> &ResultInner {
        &self.0
    }
}

impl DerefMut for ResultData {
    fn deref_mut(&mut self) -> &mut ResultInner {
        &mut self.0
    }
}

impl Clone for ResultData {
    fn clone(&self) -> Self {
        ResultData::new(ResultInner::clone(self))
    }
}

impl fmt::Debug for ResultData {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

#[derive(Clone, Debug)]
pub(crate) enum Kind {
    Success {
        value: Value,
        meta: Option<SharedValue>,
        concludes_turn: bool,
    },
    Failure {
        code: Code,
        message: Message,
    },
}

/// A failure's message: its own text, or (`None`) the text of the first content block
/// after its `Error: ` prefix, the registry's own failure block, which then holds the
/// message once. [`ResultInner::set_content`] gives the message its own text before that
/// block is replaced.
pub(crate) type Message = Option<Box<str>>;

/// The prefix of the registry's failure block.
const ERROR_PREFIX: &str = "Error: ";

impl ResultData {
    pub(crate) fn success(value: Value, content: Blocks, meta: Option<SharedValue>) -> Self {
        ResultData::new(ResultInner {
            kind: Kind::Success {
                value,
                meta,
                concludes_turn: false,
            },
            content,
            contexts: Vec::new(),
        })
    }

    /// A failure whose content is the registry's `Error: <message>` block.
    pub(crate) fn failure(code: Code, message: String) -> Self {
        ResultData::failure_text(code, [ERROR_PREFIX, &message].concat())
    }

    /// [`ResultData::failure`] with the message written straight into the content block
    /// (one allocation for both).
    pub(crate) fn failure_fmt(code: Code, message: fmt::Arguments<'_>) -> Self {
        let text = match message.as_str() {
            Some(m) => [ERROR_PREFIX, m].concat(),
            None => {
                // Most messages fit; a longer one grows the buffer.
                let mut text = String::with_capacity(96);
                text.push_str(ERROR_PREFIX);
                let _ = fmt::Write::write_fmt(&mut text, message);
                text
            }
        };
        ResultData::failure_text(code, text)
    }

    /// A failure whose message is the concatenation of `parts` (one allocation, of the
    /// exact size).
    pub(crate) fn code_parts(code: PipelineCode, parts: &[&str]) -> Self {
        let len = ERROR_PREFIX.len() + parts.iter().map(|p| p.len()).sum::<usize>();
        let mut text = String::with_capacity(len);
        text.push_str(ERROR_PREFIX);
        parts.iter().for_each(|p| text.push_str(p));
        ResultData::failure_text(Some(code.into()), text)
    }

    /// A failure whose content block is `text`, which starts with [`ERROR_PREFIX`].
    fn failure_text(code: Code, text: String) -> Self {
        debug_assert!(text.starts_with(ERROR_PREFIX));
        ResultData::new(ResultInner {
            content: smallvec::smallvec![ContentBlock::text(text)],
            kind: Kind::Failure {
                code,
                message: None,
            },
            contexts: Vec::new(),
        })
    }

    pub(crate) fn code(code: PipelineCode, message: String) -> Self {
        ResultData::failure(Some(code.into()), message)
    }

    /// [`ResultData::code`] with the message written straight into the content block.
    pub(crate) fn code_fmt(code: PipelineCode, message: fmt::Arguments<'_>) -> Self {
        ResultData::failure_fmt(Some(code.into()), message)
    }

    /// A contained panic (`TOOL_PANICKED`).
    pub(crate) fn panicked(message: String) -> Self {
        ResultData::code(PipelineCode::ToolPanicked, message)
    }

    /// The cancellation result: `ABORTED` once a body was started, else
    /// `ABORTED_BEFORE_DISPATCH`.
    pub(crate) fn aborted(invoked: bool) -> Self {
        if invoked {
            ResultData::code(PipelineCode::Aborted, "tool call aborted".to_string())
        } else {
            ResultData::code(
                PipelineCode::AbortedBeforeDispatch,
                "tool call aborted before dispatch".to_string(),
            )
        }
    }

    /// The cancellation result replacing this one, keeping its contexts.
    pub(crate) fn into_aborted(mut self, invoked: bool) -> Self {
        let mut out = ResultData::aborted(invoked);
        out.contexts = std::mem::take(&mut self.contexts);
        out
    }

    pub(crate) fn from_error(e: ToolError) -> Self {
        let code = e.code_str().map(|c| Cow::Owned(c.to_string()));
        ResultData::failure_fmt(code, format_args!("{}", e.message()))
    }

    pub(crate) fn freeze(self) -> ToolResult {
        ToolResult(self.0.shareable())
    }

    /// The data of a frozen result, to build on: taken back when nothing else holds the
    /// result (no copy), else copied.
    pub(crate) fn thaw(result: ToolResult) -> Self {
        match Arc::try_unique(result.0) {
            Ok(unique) => ResultData(unique),
            Err(shared) => ResultData::new(ResultInner::clone(&shared)),
        }
    }
}

impl ResultInner {
    pub(crate) fn is_success(&self) -> bool {
        matches!(self.kind, Kind::Success { .. })
    }

    /// The failure's message (`None` on success).
    pub(crate) fn message(&self) -> Option<&str> {
        match &self.kind {
            Kind::Failure {
                message: Some(m), ..
            } => Some(m),
            Kind::Failure { message: None, .. } => Some(
                self.content
                    .first()
                    .and_then(ContentBlock::as_text)
                    .and_then(|t| t.strip_prefix(ERROR_PREFIX))
                    .unwrap_or_default(),
            ),
            Kind::Success { .. } => None,
        }
    }

    /// The content.
    pub(crate) fn content(&self) -> &[ContentBlock] {
        &self.content
    }

    /// Replace the content, keeping a failure's message.
    pub(crate) fn set_content(&mut self, content: Blocks) {
        if let Kind::Failure { message, .. } = &self.kind
            && message.is_none()
        {
            let own = Box::from(self.message().unwrap_or_default());
            if let Kind::Failure { message, .. } = &mut self.kind {
                *message = Some(own);
            }
        }
        self.content = content;
    }

    /// Append blocks to a success's content (a failure's content is left alone).
    pub(crate) fn append_content(&mut self, blocks: Vec<ContentBlock>) {
        if self.is_success() {
            self.content.extend(blocks);
        }
    }
}

/// The immutable outcome of one call: a success (value, content, optional presentation
/// meta) or a failure (optional code, message, content). Never a value on failure.
///
/// Cloning is cheap (the data is shared). [`serde::Serialize`] writes the result
/// envelope:
///
/// - success: `{"isError":false,"value":…,"content":[…],"meta":…?,"additionalContexts":[…]?,"concludesTurn":true?}`
/// - failure: `{"isError":true,"error":{"message":…,"info":{"name":…,"code":…}?},"content":[…],"additionalContexts":[…]?}`
///
/// `info` is present only when the failure has a code; policy denials have none.
#[derive(Clone)]
pub struct ToolResult(pub(crate) Arc<ResultInner>);

impl ToolResult {
    /// Whether the call succeeded.
    pub fn is_success(&self) -> bool {
        self.0.is_success()
    }

    /// Whether the call failed.
    pub fn is_error(&self) -> bool {
        !self.is_success()
    }

    /// The canonical value (success only). It is immutable: the result holds it, and a
    /// result is never changed once made.
    pub fn value(&self) -> Option<&Value> {
        match &self.0.kind {
            Kind::Success { value, .. } => Some(value),
            Kind::Failure { .. } => None,
        }
    }

    /// The final model-facing content.
    pub fn content(&self) -> &[ContentBlock] {
        self.0.content()
    }

    /// The text blocks of the content, joined with `\n`.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .0
            .content()
            .iter()
            .filter_map(|b| b.as_text())
            .collect();
        texts.join("\n")
    }

    /// Presentation metadata (successful top-level calls of tools that produce it).
    pub fn meta(&self) -> Option<&SharedValue> {
        match &self.0.kind {
            Kind::Success { meta, .. } => meta.as_ref(),
            Kind::Failure { .. } => None,
        }
    }

    /// Additional model-facing contexts (deferred by the body, then post-execute's).
    pub fn contexts(&self) -> &[String] {
        &self.0.contexts
    }

    /// Whether the body asked to end the turn after this result (success only).
    pub fn concludes_turn(&self) -> bool {
        matches!(
            self.0.kind,
            Kind::Success {
                concludes_turn: true,
                ..
            }
        )
    }

    /// The failure's code, typed: a registry [`PipelineCode`] or the tool's own. `None` on
    /// success and for codeless failures (plain tool errors). See
    /// [`ToolResult::code_str`] for the wire form.
    pub fn code(&self) -> Option<FailureCode<'_>> {
        self.code_str().map(FailureCode::of)
    }

    /// The failure's code as on the wire (`"INVALID_ARGS"`, `"FS_NOT_FOUND"`).
    pub fn code_str(&self) -> Option<&str> {
        match &self.0.kind {
            Kind::Failure { code, .. } => code.as_deref(),
            Kind::Success { .. } => None,
        }
    }

    /// The failure's code when it is one of the registry's.
    pub fn error_code(&self) -> Option<PipelineCode> {
        self.code().and_then(FailureCode::error_code)
    }

    /// The failure's message (without the `Error: ` prefix of the content).
    pub fn message(&self) -> Option<&str> {
        self.0.message()
    }

    /// What result presenters see: content, error flag and meta (never the value).
    pub fn summary(&self) -> ResultSummary {
        ResultSummary {
            content: self.0.content().to_vec(),
            is_error: self.is_error(),
            meta: self.meta().map(|m| (**m).clone()),
        }
    }

    /// Whether two handles share the same result (the pipeline hands observers and the
    /// caller the same frozen result).
    pub fn ptr_eq(a: &ToolResult, b: &ToolResult) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }

    /// The result envelope as a lossless JSON value (same shape as the `Serialize` form).
    pub fn to_json(&self) -> Value {
        use crate::json::Object;
        let mut o = Object::new();
        o.insert("isError", Value::Bool(self.is_error()));
        match &self.0.kind {
            Kind::Success { value, .. } => {
                o.insert("value", value.clone());
            }
            Kind::Failure { code, .. } => {
                let mut e = Object::new();
                e.insert("message", Value::from(self.0.message().unwrap_or_default()));
                if let Some(code) = code {
                    let mut info = Object::new();
                    info.insert("name", Value::from(error_name(code)));
                    info.insert("code", Value::from(code.as_ref()));
                    e.insert("info", Value::Object(info));
                }
                o.insert("error", Value::Object(e));
            }
        }
        o.insert(
            "content",
            Value::from(
                self.0
                    .content
                    .iter()
                    .map(content_json)
                    .collect::<Vec<Value>>(),
            ),
        );
        if let Some(meta) = self.meta() {
            o.insert("meta", (**meta).clone());
        }
        if !self.0.contexts.is_empty() {
            o.insert(
                "additionalContexts",
                Value::from(
                    self.0
                        .contexts
                        .iter()
                        .map(|c| Value::from(c.as_str()))
                        .collect::<Vec<Value>>(),
                ),
            );
        }
        if self.concludes_turn() {
            o.insert("concludesTurn", Value::Bool(true));
        }
        Value::Object(o)
    }
}

fn error_name(code: &str) -> &'static str {
    PipelineCode::from_wire(code).map_or("ToolError", PipelineCode::error_name)
}

fn content_json(block: &ContentBlock) -> Value {
    use crate::json::Object;
    let mut o = Object::new();
    match block {
        ContentBlock::Text { text } => {
            o.insert("type", Value::from("text"));
            o.insert("text", Value::from(text.as_str()));
        }
        ContentBlock::Image { data, media_type } => {
            o.insert("type", Value::from("image"));
            o.insert("data", Value::from(data.as_str()));
            o.insert("media_type", Value::from(media_type.as_str()));
        }
    }
    Value::Object(o)
}

impl fmt::Debug for ToolResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("ToolResult");
        match &self.0.kind {
            Kind::Success {
                value,
                meta,
                concludes_turn,
            } => {
                d.field("value", value);
                if let Some(m) = meta {
                    d.field("meta", m);
                }
                if *concludes_turn {
                    d.field("concludes_turn", &true);
                }
            }
            Kind::Failure { code, .. } => {
                d.field("code", code);
                d.field("message", &self.0.message().unwrap_or_default());
            }
        }
        d.field("content", &self.0.content());
        if !self.0.contexts.is_empty() {
            d.field("contexts", &self.0.contexts);
        }
        d.finish()
    }
}

impl Serialize for ToolResult {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct ErrorBody<'a>(&'a Code, &'a str);
        impl Serialize for ErrorBody<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut m = s.serialize_map(None)?;
                m.serialize_entry("message", self.1)?;
                if let Some(code) = self.0 {
                    struct Info<'a>(&'a str);
                    impl Serialize for Info<'_> {
                        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                            let mut m = s.serialize_map(Some(2))?;
                            m.serialize_entry("name", error_name(self.0))?;
                            m.serialize_entry("code", self.0)?;
                            m.end()
                        }
                    }
                    m.serialize_entry("info", &Info(code))?;
                }
                m.end()
            }
        }

        let mut m = s.serialize_map(None)?;
        m.serialize_entry("isError", &self.is_error())?;
        match &self.0.kind {
            Kind::Success { value, .. } => m.serialize_entry("value", value)?,
            Kind::Failure { code, .. } => m.serialize_entry(
                "error",
                &ErrorBody(code, self.0.message().unwrap_or_default()),
            )?,
        }
        m.serialize_entry("content", self.0.content())?;
        if let Some(meta) = self.meta() {
            m.serialize_entry("meta", &**meta)?;
        }
        if !self.0.contexts.is_empty() {
            m.serialize_entry("additionalContexts", &self.0.contexts)?;
        }
        if self.concludes_turn() {
            m.serialize_entry("concludesTurn", &true)?;
        }
        m.end()
    }
}

/// What a dispatch (the body, or a wrapper around it) produced, before post-execute.
///
/// The body's own outcome is *canonical* and passes through wrappers unchanged. An
/// outcome a wrapper builds itself is treated by kind: a failure
/// ([`DispatchOutcome::failure`]) is kept as it is; a success
/// ([`DispatchOutcome::success`]) is revalidated against the output schema and rendered
/// again (its content and meta are never trusted), and a value that fails becomes the
/// call's final error.
#[derive(Clone, Debug)]
pub struct DispatchOutcome {
    pub(crate) data: ResultData,
    /// The execution whose body produced this outcome; `None` when a wrapper built it.
    pub(crate) origin: Option<ExecutionId>,
}

impl DispatchOutcome {
    /// A wrapper-authored success; the pipeline validates and renders `value`.
    pub fn success(value: Value) -> Self {
        DispatchOutcome {
            data: ResultData::success(value, Blocks::new(), None),
            origin: None,
        }
    }

    /// A wrapper-authored failure, kept as it is (its code passes through).
    pub fn failure(error: ToolError) -> Self {
        DispatchOutcome {
            data: ResultData::from_error(error),
            origin: None,
        }
    }

    /// Whether this is a success.
    pub fn is_success(&self) -> bool {
        self.data.is_success()
    }

    /// The value of a success.
    pub fn value(&self) -> Option<&Value> {
        match &self.data.kind {
            Kind::Success { value, .. } => Some(value),
            Kind::Failure { .. } => None,
        }
    }

    /// The content (empty for a wrapper-authored success, which is rendered later).
    pub fn content(&self) -> &[ContentBlock] {
        self.data.content()
    }

    /// The failure's code, typed (see [`ToolResult::code`]).
    pub fn code(&self) -> Option<FailureCode<'_>> {
        self.code_str().map(FailureCode::of)
    }

    /// The failure's code as on the wire.
    pub fn code_str(&self) -> Option<&str> {
        match &self.data.kind {
            Kind::Failure { code, .. } => code.as_deref(),
            Kind::Success { .. } => None,
        }
    }

    /// The failure's message.
    pub fn message(&self) -> Option<&str> {
        self.data.message()
    }
}
