//! Who a call is: the [`ExecutionId`] token, the [`AgentScopeId`] it comes from, the
//! [`ParentCall`] it was made for and its frozen [`CallIdentity`].

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use tokio_util::sync::CancellationToken;

use super::side::SideChannel;
use crate::jobs::JobRuntime;
use crate::json::{SharedValue, Value};

/// An opaque execution token: compared for equality only, never serialized, never chosen
/// by a caller.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ExecutionId(u64);

impl ExecutionId {
    /// Mint a fresh token.
    pub fn mint() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        ExecutionId(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

impl fmt::Debug for ExecutionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ExecutionId(..)")
    }
}

/// Identifies an agent scope of a registry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AgentScopeId(pub(crate) u64);

impl AgentScopeId {
    /// The raw number (for logs).
    pub fn get(self) -> u64 {
        self.0
    }
}

/// The call a sub-dispatch was made for, by tool name and call id: for a tool call of a
/// code-mode program, the `run_code` call running the program. Set with
/// [`crate::ToolCall::with_parent_call`]; hooks read it with
/// [`crate::hooks::CallInfo::parent_call`], and an approval request shows it beside the
/// call itself ([`crate::hooks::ApprovalRequest::via`]).
///
/// ```
/// # use dsh_runtime::ParentCall;
/// let parent = ParentCall::new("run_code", "call_7");
/// assert_eq!((&*parent.name, &*parent.call_id), ("run_code", "call_7"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParentCall {
    /// The parent call's tool name, as called.
    pub name: Arc<str>,
    /// The parent call's id.
    pub call_id: Arc<str>,
}

impl ParentCall {
    /// The parent call `call_id` of tool `name`.
    pub fn new(name: impl Into<Arc<str>>, call_id: impl Into<Arc<str>>) -> Self {
        ParentCall {
            name: name.into(),
            call_id: call_id.into(),
        }
    }
}

/// The immutable identity of one execution.
#[derive(Debug)]
#[non_exhaustive]
pub struct CallIdentity {
    /// The caller's call id.
    pub call_id: Arc<str>,
    /// The id of the outermost call (defaults to `call_id`).
    pub root_call_id: Arc<str>,
    /// The tool name as called.
    pub name: Arc<str>,
    /// The frozen arguments.
    pub arguments: SharedValue,
    /// The opaque token.
    pub token: ExecutionId,
    /// The agent scope the call comes from, if any.
    pub agent: Option<AgentScopeId>,
    /// The enclosing execution's token for a sub-dispatch.
    pub parent: Option<ExecutionId>,
    /// The call a sub-dispatch was made for, when its caller named it
    /// ([`crate::ToolCall::with_parent_call`]).
    pub parent_call: Option<Arc<ParentCall>>,
    pub(super) has_arguments: bool,
    /// What the body of this execution sends on the side (kept here rather than in an
    /// allocation of its own).
    pub(super) side: SideChannel,
    /// The caller's token (kept here so that the body's context can make a child of it
    /// without a handle of its own). Empty when the caller gave none and nothing has
    /// asked for it yet: nobody else can hold it then, so it is not cancelled.
    pub(super) cancel: OnceLock<CancellationToken>,
    /// The registry's job runtime, if it has one (see [`ToolContext::jobs`]).
    pub(crate) jobs: Option<JobRuntime>,
    /// The call's `execute_tool` span; none when nothing traces the call (see
    /// [`CallIdentity::span`]). Boxed: an untraced call's identity only grows by a null
    /// pointer.
    pub(crate) span: Option<Box<tracing::Span>>,
}

impl CallIdentity {
    /// Build the identity of a call outside the pipeline (for a [`ToolContext`](crate::ToolContext) of a
    /// body called directly, as [`ToolContext::detached`](crate::ToolContext::detached) does), with a fresh token and
    /// no caller's cancellation token. The pipeline builds its own identities.
    pub fn new(
        call_id: Arc<str>,
        root_call_id: Arc<str>,
        name: Arc<str>,
        arguments: SharedValue,
        agent: Option<AgentScopeId>,
        parent: Option<ExecutionId>,
    ) -> Self {
        CallIdentity::for_call(
            call_id,
            root_call_id,
            name,
            Some(arguments),
            agent,
            parent,
            None,
        )
    }

    /// The pipeline's identity of a call whose caller holds `cancel` (`None`: the caller
    /// holds no token, one is made if something asks for it); `arguments` is `None` when
    /// they failed the lossless snapshot (they are then `null`).
    pub(crate) fn for_call(
        call_id: Arc<str>,
        root_call_id: Arc<str>,
        name: Arc<str>,
        arguments: Option<SharedValue>,
        agent: Option<AgentScopeId>,
        parent: Option<ExecutionId>,
        cancel: Option<CancellationToken>,
    ) -> Self {
        let has_arguments = arguments.is_some();
        let token = OnceLock::new();
        if let Some(cancel) = cancel {
            let _ = token.set(cancel);
        }
        CallIdentity {
            call_id,
            root_call_id,
            name,
            arguments: arguments.unwrap_or_else(|| Arc::new(Value::Null)),
            token: ExecutionId::mint(),
            agent,
            parent,
            parent_call: None,
            has_arguments,
            side: SideChannel::default(),
            cancel: token,
            jobs: None,
            span: None,
        }
    }

    /// The execution's `execute_tool` span (OpenTelemetry GenAI conventions), or a
    /// disabled span when no subscriber traces it. An adapter that would otherwise open
    /// a span of its own for the same tool execution (an MCP client's `tools/call` of
    /// an imported tool) records its attributes on this one instead: the span declares
    /// `mcp.method.name` and `mcp.protocol.version` for that, unset until then.
    pub fn span(&self) -> &tracing::Span {
        static DISABLED: tracing::Span = tracing::Span::none();
        self.span.as_deref().unwrap_or(&DISABLED)
    }

    /// Whether [`CallIdentity::arguments`] holds the caller's arguments. It is `false` only
    /// when the arguments failed the lossless snapshot at entry; `arguments` is then
    /// `null`, and only content finalization and result observers see the execution.
    pub fn has_arguments(&self) -> bool {
        self.has_arguments
    }

    /// What the pipeline's body of this execution sent on the side.
    pub(crate) fn side(&self) -> &SideChannel {
        &self.side
    }

    /// The caller's token (made now if the caller gave none).
    pub(crate) fn caller_token(&self) -> &CancellationToken {
        self.cancel.get_or_init(CancellationToken::new)
    }

    /// Whether the caller gave a token (or one was made since), i.e. whether the call can
    /// be cancelled from outside.
    pub(crate) fn has_caller_token(&self) -> bool {
        self.cancel.get().is_some()
    }

    /// Whether the caller's token is cancelled, without making one: a token nobody has
    /// asked for yet cannot have been cancelled.
    pub(crate) fn caller_cancelled(&self) -> bool {
        self.cancel
            .get()
            .is_some_and(CancellationToken::is_cancelled)
    }

    /// Whether the body's token of the only run of this execution's body (made lazily,
    /// see [`ToolContext`]) is cancelled: a child not made yet is cancelled exactly when
    /// the caller's token is.
    pub(crate) fn lazy_child_cancelled(&self) -> bool {
        match self.side.child.get() {
            Some(child) => child.is_cancelled(),
            None => self.caller_cancelled(),
        }
    }
}
