//! What a caller hands the registry: [`ToolCall`] and its [`Arguments`].

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::json::{self, SharedValue, Value};
use crate::tool::{AgentScopeId, ExecutionId, ParentCall};

/// The arguments of a call, as the caller has them.
#[derive(Clone)]
#[non_exhaustive]
pub enum Arguments {
    /// Raw JSON text (what a model sends), parsed by the lossless parser.
    Text(Arc<str>),
    /// An already snapshotted value.
    Value(SharedValue),
    /// A `serde_json` value, converted losslessly (`-0.0`, NaN and infinities fail).
    Serde(serde_json::Value),
}

impl Arguments {
    /// The frozen snapshot, or why the arguments cannot be snapshotted: a plain first
    /// sentence (`arguments are not valid JSON: …`, `arguments have a duplicate key: …`,
    /// `arguments are not lossless JSON: …`, `arguments are nested too deeply: …`)
    /// followed by the detail.
    pub(crate) fn snapshot(self, opts: &json::ParseOptions) -> Result<SharedValue, String> {
        match self {
            Arguments::Text(text) => json::parse_with(&text, opts)
                .map(Arc::new)
                .map_err(|e| parse_failure(&e)),
            Arguments::Value(v) => {
                crate::snapshot::check(&v, "arguments").map_err(not_lossless)?;
                Ok(v)
            }
            Arguments::Serde(v) => {
                let value = json::to_value(&v).map_err(|e| conversion_failure(&e))?;
                crate::snapshot::check(&value, "arguments").map_err(not_lossless)?;
                Ok(Arc::new(value))
            }
        }
    }

    /// A borrowed view of the snapshot (for classification without freezing).
    pub(crate) fn peek(&self, opts: &json::ParseOptions) -> Result<Cow<'_, Value>, String> {
        match self {
            Arguments::Text(text) => json::parse_with(text, opts)
                .map(Cow::Owned)
                .map_err(|e| e.to_string()),
            Arguments::Value(v) => {
                crate::snapshot::check(v, "arguments").map(|()| Cow::Borrowed(&**v))
            }
            Arguments::Serde(v) => json::to_value(v)
                .map_err(|e| e.to_string())
                .and_then(|v| crate::snapshot::check(&v, "arguments").map(|()| Cow::Owned(v))),
        }
    }
}

fn not_lossless(detail: String) -> String {
    format!("arguments are not lossless JSON: {detail}")
}

fn parse_failure(e: &json::ParseError) -> String {
    use json::ParseErrorKind as K;
    let sentence = match e.kind() {
        K::DuplicateKey(_) => "arguments have a duplicate key",
        K::NegativeZero | K::InexactNumber(_) | K::NumberOutOfRange(_) => {
            "arguments are not lossless JSON"
        }
        K::TooDeep { .. } => "arguments are nested too deeply",
        _ => "arguments are not valid JSON",
    };
    format!("{sentence}: {e}")
}

fn conversion_failure(e: &json::LosslessError) -> String {
    let sentence = match e.kind() {
        json::LosslessErrorKind::DuplicateKey(_) => "arguments have a duplicate key",
        _ => "arguments are not lossless JSON",
    };
    format!("{sentence}: {e}")
}

impl fmt::Debug for Arguments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Arguments::Text(t) => f.debug_tuple("Text").field(t).finish(),
            Arguments::Value(v) => f.debug_tuple("Value").field(v).finish(),
            Arguments::Serde(v) => f.debug_tuple("Serde").field(v).finish(),
        }
    }
}

impl From<&str> for Arguments {
    fn from(s: &str) -> Self {
        Arguments::Text(s.into())
    }
}
impl From<String> for Arguments {
    fn from(s: String) -> Self {
        Arguments::Text(s.into())
    }
}
impl From<Arc<str>> for Arguments {
    fn from(s: Arc<str>) -> Self {
        Arguments::Text(s)
    }
}
impl From<Value> for Arguments {
    fn from(v: Value) -> Self {
        Arguments::Value(Arc::new(v))
    }
}
impl From<SharedValue> for Arguments {
    fn from(v: SharedValue) -> Self {
        Arguments::Value(v)
    }
}
impl From<serde_json::Value> for Arguments {
    fn from(v: serde_json::Value) -> Self {
        Arguments::Serde(v)
    }
}

/// One call, as a caller (agent loop, MCP server, test) makes it.
///
/// ```
/// # use dsh_runtime::ToolCall;
/// let call = ToolCall::new("call_1", "read_file", r#"{"path":"/etc/hosts"}"#);
/// assert_eq!(call.call_id(), "call_1");
/// assert_eq!(call.name(), "read_file");
/// assert_eq!(call.root_call_id(), None);
/// assert_eq!(call.effective_root_call_id(), "call_1");
/// let sub = ToolCall::new("call_2", "read_file", "{}").with_root_call_id("call_1");
/// assert_eq!(sub.effective_root_call_id(), "call_1");
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ToolCall {
    /// The caller's id for this call.
    pub(crate) call_id: Arc<str>,
    /// The tool name as the model sent it.
    pub(crate) name: Arc<str>,
    /// The arguments.
    pub(crate) arguments: Arguments,
    /// The caller's cancellation token. Cancelling it aborts the call cooperatively: the
    /// body sees it, and a success becomes `ABORTED`. `None` (the default): the caller
    /// keeps no token, so nobody can cancel the call from outside; the pipeline then
    /// makes one only if a hook, a wrapper or the body asks for it. Use
    /// [`ToolCall::with_cancellation`] or [`ToolCall::cancellation`] to keep one.
    pub(crate) cancel: Option<CancellationToken>,
    /// The agent scope the call comes from (`None`: the global layer's view).
    pub(crate) agent: Option<AgentScopeId>,
    /// The enclosing execution, for a sub-dispatch.
    pub(crate) parent: Option<ExecutionId>,
    /// The outermost call's id (`None`: this call's id).
    pub(crate) root_call_id: Option<Arc<str>>,
    /// The call this sub-dispatch was made for, by name and id (`None`: not said), shown
    /// to the user beside this call when it needs approval.
    pub(crate) parent_call: Option<Arc<ParentCall>>,
}

impl ToolCall {
    /// A top-level call from the global view, with no cancellation token of the caller's
    /// (see [`ToolCall::cancel_token`]).
    pub fn new(
        call_id: impl Into<Arc<str>>,
        name: impl Into<Arc<str>>,
        arguments: impl Into<Arguments>,
    ) -> Self {
        ToolCall {
            call_id: call_id.into(),
            name: name.into(),
            arguments: arguments.into(),
            cancel: None,
            agent: None,
            parent: None,
            root_call_id: None,
            parent_call: None,
        }
    }

    /// The caller's id for this call.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The tool name as the model sent it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The arguments, as the caller gave them.
    pub fn arguments(&self) -> &Arguments {
        &self.arguments
    }

    /// The caller's cancellation token, if it kept one (see [`ToolCall::cancellation`],
    /// which makes one).
    pub fn cancel_token(&self) -> Option<&CancellationToken> {
        self.cancel.as_ref()
    }

    /// The agent scope the call comes from (`None`: the global layer's view).
    pub fn agent(&self) -> Option<AgentScopeId> {
        self.agent
    }

    /// The enclosing execution, for a sub-dispatch.
    pub fn parent(&self) -> Option<ExecutionId> {
        self.parent
    }

    /// The outermost call's id, when set (`None`: this call is the outermost; see
    /// [`ToolCall::effective_root_call_id`]).
    pub fn root_call_id(&self) -> Option<&str> {
        self.root_call_id.as_deref()
    }

    /// The call this sub-dispatch was made for, when its caller named it.
    pub fn parent_call(&self) -> Option<&ParentCall> {
        self.parent_call.as_deref()
    }

    /// The same call under another call id (a template cloned per call, say).
    pub fn with_call_id(mut self, call_id: impl Into<Arc<str>>) -> Self {
        self.call_id = call_id.into();
        self
    }

    /// The same call of another tool.
    pub fn with_name(mut self, name: impl Into<Arc<str>>) -> Self {
        self.name = name.into();
        self
    }

    /// The same call with other arguments.
    pub fn with_arguments(mut self, arguments: impl Into<Arguments>) -> Self {
        self.arguments = arguments.into();
        self
    }

    /// Use this cancellation token.
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// The call's cancellation token, made now if it has none: cancelling it (or a clone)
    /// aborts the call.
    ///
    /// ```
    /// # use dsh_runtime::ToolCall;
    /// let mut call = ToolCall::new("call_1", "read_file", r#"{"path":"/etc/hosts"}"#);
    /// let token = call.cancellation().clone();
    /// token.cancel();
    /// assert!(call.cancel_token().is_some_and(|t| t.is_cancelled()));
    /// ```
    pub fn cancellation(&mut self) -> &CancellationToken {
        self.cancel.get_or_insert_with(CancellationToken::new)
    }

    /// Call from an agent scope.
    pub fn with_agent(mut self, agent: AgentScopeId) -> Self {
        self.agent = Some(agent);
        self
    }

    /// Mark as a sub-dispatch of the execution `parent` (no presentation meta is built).
    pub fn with_parent(mut self, parent: ExecutionId) -> Self {
        self.parent = Some(parent);
        self
    }

    /// Name the call this sub-dispatch was made for (e.g. the `run_code` call whose
    /// program makes it): hooks see it as [`crate::hooks::CallInfo::parent_call`], and an
    /// approval request as [`crate::hooks::ApprovalRequest::via`].
    ///
    /// ```
    /// # use dsh_runtime::{ToolCall, ParentCall};
    /// let sub = ToolCall::new("call_7:code:1", "bash", "{}")
    ///     .with_parent_call(ParentCall::new("run_code", "call_7"));
    /// assert_eq!(sub.parent_call().map(|p| &*p.name), Some("run_code"));
    /// ```
    pub fn with_parent_call(mut self, parent: impl Into<Arc<ParentCall>>) -> Self {
        self.parent_call = Some(parent.into());
        self
    }

    /// Set the outermost call's id.
    pub fn with_root_call_id(mut self, root: impl Into<Arc<str>>) -> Self {
        self.root_call_id = Some(root.into());
        self
    }

    /// The outermost call's id: [`ToolCall::root_call_id`], or this call's id when that
    /// is `None`.
    pub fn effective_root_call_id(&self) -> &str {
        self.root_call_id.as_deref().unwrap_or(&self.call_id)
    }
}
