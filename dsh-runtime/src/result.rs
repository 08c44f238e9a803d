//! The one result every call produces ([`ToolResult`]) and what a dispatch produces before
//! post-execute ([`DispatchOutcome`]). The error codes are in [`crate::error_code`].
//! Public through [`crate::pipeline`] and the crate root.

use std::borrow::Cow;
use std::fmt;
use std::ops::{Deref, DerefMut};

use triomphe::{Arc, UniqueArc};

use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::cards::ResultSummary;
use crate::content::{Blocks, ContentBlock};
use crate::error_code::{FailureCode, PipelineCode};
use crate::json::{SharedValue, Value};
use crate::tool::{ExecutionId, ToolError};

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
        ContentBlock::Text {
            text,
            annotations: None,
        } => {
            o.insert("type", Value::from("text"));
            o.insert("text", Value::from(text.as_str()));
        }
        // Every other block (MCP's wire shape): its own serde form.
        other => return crate::json::to_value(other).unwrap_or(Value::Null),
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
