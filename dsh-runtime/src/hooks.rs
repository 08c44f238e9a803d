//! Policy and observation hooks: what runs around a call, and what each hook sees.
//!
//! | hook | stage | can |
//! | --- | --- | --- |
//! | [`PreExecute`] | after validation | allow, deny, or ask for approval (waterfall with `next`) |
//! | [`ApprovalHandler`] | on `ask` | allow once, reject, cancel, or report no channel |
//! | [`Guard`] | after `allow` | deny; nothing registered later can undo it |
//! | [`Wrapper`] | around the body | retry (`next` more than once), set a deadline, measure |
//! | [`PostExecute`] | after the body | replace content *or* value, block, attach contexts |
//! | [`Observer`] | last | see the frozen final result |
//!
//! Hooks registered on the registry see every call; hooks registered on a
//! [`crate::AgentScope`] see only calls whose agent is that scope or one of its descendants.
//! Within one stage hooks run in registration order (guards: the global ones first, then
//! each scope of the caller's chain from the farthest to the nearest).
//!
//! Hooks return a [`HookFuture`]: [`HookFuture::ready`] for synchronous decisions
//! (no allocation) or [`HookFuture::new`] for asynchronous ones. A hook that returns
//! `Err` or panics "throws": the call ends with that error and post-execute is skipped
//! (a throwing wrapper is handled likewise; a panicking observer is contained and logged;
//! see [the pipeline](crate#the-pipeline)).
//!
//! The `*_fn` helpers turn closures into hooks: `registry.guard(guard_fn(|call| …))`.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio_util::sync::CancellationToken;

use crate::content::ContentBlock;
use crate::json::{SharedValue, Value};
use crate::result::{DispatchOutcome, ToolResult};
use crate::tool::{
    AgentScopeId, ApprovalRoute, BoxFuture, CallIdentity, DynTool, ExecutionId, NamedTool,
    ParentCall, ToolDefinition, ToolError,
};

/// The future a hook returns: either an immediate value (no allocation) or a boxed
/// future.
#[must_use = "futures do nothing unless awaited"]
pub struct HookFuture<'a, T>(Repr<'a, T>);

enum Repr<'a, T> {
    Ready(Option<T>),
    Boxed(BoxFuture<'a, T>),
}

impl<'a, T> HookFuture<'a, T> {
    /// An immediate value.
    pub fn ready(value: T) -> Self {
        HookFuture(Repr::Ready(Some(value)))
    }

    /// An asynchronous value (boxed).
    pub fn new(fut: impl Future<Output = T> + Send + 'a) -> Self {
        HookFuture(Repr::Boxed(Box::pin(fut)))
    }
}

// Nothing is ever pinned in place: a ready value is moved out, a boxed future is pinned
// on the heap.
impl<T> Unpin for HookFuture<'_, T> {}

impl<T> Future for HookFuture<'_, T> {
    type Output = T;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        match &mut self.0 {
            Repr::Ready(v) => match v.take() {
                Some(v) => Poll::Ready(v),
                None => panic!("`HookFuture` polled after completion"),
            },
            Repr::Boxed(f) => f.as_mut().poll(cx),
        }
    }
}

impl<T> fmt::Debug for HookFuture<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.0 {
            Repr::Ready(_) => "HookFuture::Ready",
            Repr::Boxed(_) => "HookFuture::Boxed",
        })
    }
}

/// What every hook sees of a call: its immutable identity, the tool it resolved to and
/// the caller's cancellation token.
#[derive(Clone, Copy)]
pub struct CallInfo<'a> {
    pub(crate) exec: &'a Arc<CallIdentity>,
    pub(crate) tool: Option<&'a DynTool>,
}

impl<'a> CallInfo<'a> {
    /// The immutable identity of the execution.
    pub fn execution(&self) -> &'a Arc<CallIdentity> {
        self.exec
    }
    /// The tool name as called.
    pub fn name(&self) -> &'a str {
        &self.exec.name
    }
    /// The caller's call id.
    pub fn call_id(&self) -> &'a str {
        &self.exec.call_id
    }
    /// The frozen arguments as the caller sent them (after the lossless snapshot).
    /// Pre-execute hooks, guards and wrappers only ever see arguments that passed
    /// validation. `null` when the snapshot failed (only observers see such calls).
    pub fn arguments(&self) -> &'a SharedValue {
        &self.exec.arguments
    }
    /// The agent scope the call comes from.
    pub fn agent(&self) -> Option<AgentScopeId> {
        self.exec.agent
    }
    /// The enclosing execution, for sub-dispatches.
    pub fn parent(&self) -> Option<ExecutionId> {
        self.exec.parent
    }
    /// The call this sub-dispatch was made for, when its caller named it (a code-mode
    /// program's tool call names its `run_code` call); see
    /// [`crate::ToolCall::with_parent_call`].
    pub fn parent_call(&self) -> Option<&'a ParentCall> {
        self.exec.parent_call.as_deref()
    }
    /// The opaque execution token.
    pub fn token(&self) -> ExecutionId {
        self.exec.token
    }
    /// The tool the name resolved to at entry; `None` for an unknown name (seen by
    /// post-execute hooks and observers only).
    pub fn tool(&self) -> Option<&'a DynTool> {
        self.tool
    }
    /// The resolved tool's definition (see [`CallInfo::tool`]).
    pub fn definition(&self) -> Option<&'a ToolDefinition> {
        self.tool.map(DynTool::definition)
    }
    /// The caller's cancellation token (never a wrapper's replacement).
    pub fn cancellation(&self) -> &'a CancellationToken {
        self.exec.caller_token()
    }
    /// Whether this is a call of the tool `T` (by its [`NamedTool::NAME`]): a policy
    /// that names the tool by type follows a rename, and a typo does not compile.
    pub fn is<T: NamedTool>(&self) -> bool {
        self.name() == T::NAME
    }
}

impl fmt::Debug for CallInfo<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallInfo")
            .field("name", &self.name())
            .field("call_id", &self.call_id())
            .field("agent", &self.agent())
            .finish_non_exhaustive()
    }
}

// ---------------------------------------------------------------------------------------
// pre-execute

/// A pre-execute decision.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PreDecision {
    /// Let the call proceed (to the guards).
    Allow,
    /// Refuse the call: it fails with `reason` as its message (no code) and still passes
    /// post-execute.
    Deny {
        /// The message of the failure.
        reason: String,
    },
    /// Ask the installed [`ApprovalHandler`]; without one the call is denied with
    /// `reason`, or `tool "<n>" requires approval (not yet supported)`.
    Ask {
        /// Why approval is needed.
        reason: Option<String>,
    },
}

impl PreDecision {
    /// [`PreDecision::Deny`] with a reason.
    pub fn deny(reason: impl Into<String>) -> Self {
        PreDecision::Deny {
            reason: reason.into(),
        }
    }

    /// [`PreDecision::Ask`] with a reason.
    pub fn ask(reason: impl Into<String>) -> Self {
        PreDecision::Ask {
            reason: Some(reason.into()),
        }
    }
}

/// A pre-execute hook: one link of a waterfall. Return a decision to short-circuit, or
/// `next.run()` to defer to the hooks registered after this one (the end of the chain
/// allows). The arguments cannot be rewritten.
pub trait PreExecute: Send + Sync + 'static {
    /// Decide on a call.
    fn pre_execute<'a>(
        &'a self,
        call: &'a CallInfo<'a>,
        next: PreNext<'a>,
    ) -> HookFuture<'a, Result<PreDecision, ToolError>>;
}

/// The rest of the pre-execute waterfall.
pub struct PreNext<'a> {
    pub(crate) hooks: &'a [Arc<dyn PreExecute>],
    pub(crate) call: &'a CallInfo<'a>,
}

impl<'a> PreNext<'a> {
    /// Run the remaining hooks; `Allow` when there are none.
    pub fn run(self) -> HookFuture<'a, Result<PreDecision, ToolError>> {
        match self.hooks.split_first() {
            None => HookFuture::ready(Ok(declared(self.call))),
            Some((hook, rest)) => hook.pre_execute(
                self.call,
                PreNext {
                    hooks: rest,
                    call: self.call,
                },
            ),
        }
    }
}

impl fmt::Debug for PreNext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PreNext")
            .field("remaining", &self.hooks.len())
            .finish()
    }
}

/// The decision at the end of the waterfall: `Ask` for a tool declared with
/// `#[tool(ask = "why")]` ([`ToolDefinition::ask`]), else `Allow`.
pub(crate) fn declared(call: &CallInfo<'_>) -> PreDecision {
    match call.definition().and_then(|d| d.ask.as_deref()) {
        Some(reason) => PreDecision::ask(reason),
        None => PreDecision::Allow,
    }
}

/// A pre-execute hook for the calls of one tool, named by its type: `f` decides on the
/// calls of `T` (`None` defers), every other call goes on down the waterfall.
///
/// ```
/// use dsh_runtime::hooks::{pre_execute_for, PreDecision};
/// use dsh_runtime::{Registry, ToolCall, tool};
///
/// /// Delete a ticket.
/// #[tool(destructive)]
/// async fn delete_ticket(id: u64) -> u64 { id }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let registry = Registry::new();
/// let _t = registry.register(DeleteTicket).unwrap();
/// let _p = registry.add_pre_execute(pre_execute_for::<DeleteTicket, _>(|call| {
///     let id = call.arguments().as_object()?.get("id")?.as_u64()?;
///     (id < 100).then(|| PreDecision::deny("tickets below 100 are archived"))
/// }));
/// let r = registry.execute(ToolCall::new("1", "delete_ticket", r#"{"id":7}"#)).await;
/// assert_eq!(r.message(), Some("tickets below 100 are archived"));
/// # });
/// ```
pub fn pre_execute_for<T, F>(
    f: F,
) -> PreExecuteFn<impl Fn(&CallInfo<'_>) -> Option<PreDecision> + Send + Sync + 'static>
where
    T: NamedTool,
    F: Fn(&CallInfo<'_>) -> Option<PreDecision> + Send + Sync + 'static,
{
    pre_execute_fn(move |call: &CallInfo<'_>| if call.is::<T>() { f(call) } else { None })
}

/// A pre-execute hook from a closure: `Some(decision)` short-circuits, `None` defers to
/// the next hook.
pub fn pre_execute_fn<F>(f: F) -> PreExecuteFn<F>
where
    F: Fn(&CallInfo<'_>) -> Option<PreDecision> + Send + Sync + 'static,
{
    PreExecuteFn(f)
}

/// See [`pre_execute_fn`].
#[derive(Clone, Debug)]
pub struct PreExecuteFn<F>(F);

impl<F> PreExecute for PreExecuteFn<F>
where
    F: Fn(&CallInfo<'_>) -> Option<PreDecision> + Send + Sync + 'static,
{
    fn pre_execute<'a>(
        &'a self,
        call: &'a CallInfo<'a>,
        next: PreNext<'a>,
    ) -> HookFuture<'a, Result<PreDecision, ToolError>> {
        match (self.0)(call) {
            Some(d) => HookFuture::ready(Ok(d)),
            None => next.run(),
        }
    }
}

// ---------------------------------------------------------------------------------------
// approval

/// The answer of an [`ApprovalHandler`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Approval {
    /// Run this call (once).
    AllowedOnce,
    /// Denied, `APPROVAL_REJECTED`: `the user rejected tool "<n>"`.
    Rejected,
    /// Denied, `APPROVAL_CANCELLED`: `approval for tool "<n>" was cancelled` (or
    /// `ABORTED_BEFORE_DISPATCH` when the caller aborted too).
    Cancelled,
    /// Denied, `POLICY_DENIED`: `tool "<n>" requires approval, but no approval channel
    /// is available`.
    Unavailable,
    /// As [`Approval::Unavailable`], saying why no one could be asked: the denial's
    /// message ends with the text in parentheses (e.g. a client that cannot ask its
    /// user). A fallback handler's answer keeps the message of a call with no handler,
    /// with the text added.
    UnavailableBecause(&'static str),
}

/// A request for approval, made when pre-execute answers `ask` (for calls from an agent
/// scope and from the global view alike).
#[derive(Clone, Copy, Debug)]
pub struct ApprovalRequest<'a> {
    /// The call.
    pub call: &'a CallInfo<'a>,
    /// The reason pre-execute gave.
    pub reason: Option<&'a str>,
    /// The agent scope the call comes from, to route the question through (`None`: a
    /// call from the global view; the registry's handler answers it).
    pub agent: Option<AgentScopeId>,
    /// The call this one was made for, when it is a sub-dispatch that names it
    /// ([`CallInfo::parent_call`]): for a tool call of a code-mode program, the
    /// `run_code` call. Show both to the user: what runs, and what asked for it.
    pub via: Option<&'a ParentCall>,
}

/// Routes `ask` decisions to a user (installed with
/// [`crate::Registry::set_approval_handler`]).
pub trait ApprovalHandler: Send + Sync + 'static {
    /// Ask. Watch `request.call.cancellation()` to give up when the caller aborts.
    fn request<'a>(
        &'a self,
        request: ApprovalRequest<'a>,
    ) -> HookFuture<'a, Result<Approval, ToolError>>;
}

/// Run `fut` (typically a [`crate::Registry::execute`]) with `handler` answering the
/// `ask` decisions of the calls it executes that no registry handler answered: when the
/// registry has none installed, or its handler answers [`Approval::Unavailable`]. A
/// transport uses this to route a call's approval to the user on the other end of the
/// call's connection (an MCP client). A fallback that answers `Unavailable` itself
/// leaves the denial of a call with no handler: the policy's reason, `POLICY_DENIED`.
///
/// The handler is seen by the pipeline of calls executed on this task. A call's body
/// receives it too ([`crate::ToolContext::approval_fallback`]), to install it around the
/// calls it dispatches on other tasks or threads (as code mode does for its programs'
/// tool calls).
///
/// `handler` is an `Arc<dyn ApprovalHandler>` or the [`ApprovalRoute`] a body got from
/// [`crate::ToolContext::approval_fallback`].
///
/// A plain function, not an `async fn`: the future it returns is `fut` and the handler,
/// not twice `fut`'s size (an `async fn` keeps its arguments beside the futures it awaits).
pub fn with_approval<F: Future>(
    handler: impl Into<ApprovalRoute>,
    fut: F,
) -> impl Future<Output = F::Output> {
    crate::tool::APPROVAL_ROUTE.scope(handler.into(), fut)
}

impl From<Arc<dyn ApprovalHandler>> for ApprovalRoute {
    fn from(handler: Arc<dyn ApprovalHandler>) -> Self {
        ApprovalRoute(Arc::new(handler))
    }
}

/// The fallback handler installed by [`with_approval`] around the current call.
pub(crate) fn fallback_approval() -> Option<Arc<dyn ApprovalHandler>> {
    let route = ApprovalRoute::current()?;
    // Every route is made by the `From` impl above, so this is the only type it holds.
    route.0.downcast_ref::<Arc<dyn ApprovalHandler>>().cloned()
}

/// An approval handler from a synchronous closure.
pub fn approval_fn<F>(f: F) -> ApprovalFn<F>
where
    F: Fn(&ApprovalRequest<'_>) -> Approval + Send + Sync + 'static,
{
    ApprovalFn(f)
}

/// See [`approval_fn`].
#[derive(Clone, Debug)]
pub struct ApprovalFn<F>(F);

impl<F> ApprovalHandler for ApprovalFn<F>
where
    F: Fn(&ApprovalRequest<'_>) -> Approval + Send + Sync + 'static,
{
    fn request<'a>(
        &'a self,
        request: ApprovalRequest<'a>,
    ) -> HookFuture<'a, Result<Approval, ToolError>> {
        HookFuture::ready(Ok((self.0)(&request)))
    }
}

// ---------------------------------------------------------------------------------------
// guards

/// A guard: runs only after pre-execute allowed the call. `Ok(Some(reason))` denies;
/// the first denial wins and no later guard runs.
pub trait Guard: Send + Sync + 'static {
    /// Check a call.
    fn check<'a>(
        &'a self,
        call: &'a CallInfo<'a>,
    ) -> HookFuture<'a, Result<Option<String>, ToolError>>;
}

/// A guard from a closure returning the denial reason, if any.
pub fn guard_fn<F>(f: F) -> GuardFn<F>
where
    F: Fn(&CallInfo<'_>) -> Option<String> + Send + Sync + 'static,
{
    GuardFn(f)
}

/// See [`guard_fn`].
#[derive(Clone, Debug)]
pub struct GuardFn<F>(F);

impl<F> Guard for GuardFn<F>
where
    F: Fn(&CallInfo<'_>) -> Option<String> + Send + Sync + 'static,
{
    fn check<'a>(
        &'a self,
        call: &'a CallInfo<'a>,
    ) -> HookFuture<'a, Result<Option<String>, ToolError>> {
        HookFuture::ready(Ok((self.0)(call)))
    }
}

// ---------------------------------------------------------------------------------------
// around-dispatch wrappers

/// An around-dispatch wrapper (deadline, retry, metrics).
///
/// Call `next.run()` to dispatch (the body, or the wrappers registered after this one);
/// it may be called more than once. `next.with_cancellation(token)` dispatches with a
/// replaced cancellation token (e.g. a deadline): the body still sees the caller's
/// cancellation too, because the pipeline fuses the two.
///
/// Return the outcome `next` produced, or your own: [`DispatchOutcome::failure`] is kept
/// as it is, [`DispatchOutcome::success`] is revalidated and rendered again.
pub trait Wrapper: Send + Sync + 'static {
    /// Wrap one dispatch.
    fn around<'a>(
        &'a self,
        call: &'a CallInfo<'a>,
        next: Next<'a>,
    ) -> HookFuture<'a, Result<DispatchOutcome, ToolError>>;
}

/// The end of the wrapper chain: what runs the body. Implemented by the pipeline, so that
/// this module does not depend on it.
pub(crate) trait Dispatch<'a>: Sync {
    /// The call being dispatched.
    fn info(&self) -> &'a CallInfo<'a>;
    /// One run of the body with `cancel` (`replaced`: a wrapper chose that token); never
    /// an `Err` (the body's own failures are outcomes).
    fn body(
        &'a self,
        cancel: CancellationToken,
        replaced: bool,
    ) -> HookFuture<'a, Result<DispatchOutcome, ToolError>>;
}

/// The rest of the dispatch: later wrappers, then the body.
#[derive(Clone)]
pub struct Next<'a> {
    pub(crate) wrappers: &'a [Arc<dyn Wrapper>],
    pub(crate) dispatch: &'a dyn Dispatch<'a>,
    pub(crate) cancel: CancellationToken,
    pub(crate) replaced: bool,
}

impl<'a> Next<'a> {
    /// The cancellation token the dispatch will use.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// The same continuation with a replaced cancellation token. The original is
    /// unchanged (the replacement is "restored" when this copy is dropped), and the
    /// caller's token still cancels what the body sees.
    pub fn with_cancellation(&self, token: CancellationToken) -> Next<'a> {
        Next {
            wrappers: self.wrappers,
            dispatch: self.dispatch,
            cancel: token,
            replaced: true,
        }
    }

    /// Dispatch. May be called again (retry): every run re-checks cancellation and
    /// re-resolves the tool.
    pub fn run(&self) -> HookFuture<'a, Result<DispatchOutcome, ToolError>> {
        match self.wrappers.split_first() {
            Some((w, rest)) => w.around(
                self.dispatch.info(),
                Next {
                    wrappers: rest,
                    dispatch: self.dispatch,
                    cancel: self.cancel.clone(),
                    replaced: self.replaced,
                },
            ),
            None => self.dispatch.body(self.cancel.clone(), self.replaced),
        }
    }
}

impl fmt::Debug for Next<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Next")
            .field("remaining_wrappers", &self.wrappers.len())
            .field("replaced_cancellation", &self.replaced)
            .finish()
    }
}

// ---------------------------------------------------------------------------------------
// post-execute

/// A post-execute decision.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum PostDecision {
    /// Keep the result, optionally replacing its content or (success only) its value.
    Accept(Accept),
    /// Turn the result into a failure whose content is the feedback.
    Block(Block),
}

impl PostDecision {
    /// Accept unchanged.
    pub fn accept() -> Self {
        PostDecision::Accept(Accept::default())
    }

    /// Block with feedback content.
    pub fn block(feedback: Vec<ContentBlock>) -> Self {
        PostDecision::Block(Block::new(feedback))
    }
}

/// Accept a result, keeping it or replacing its content *or* its value (one
/// [`Replacement`], so both at once cannot be asked for).
///
/// A replaced content keeps the value and meta. A replaced value (successes only) is
/// validated against the output schema, rendered, and its meta recomputed. Contexts are
/// appended after the ones the body deferred.
///
/// ```
/// use dsh_runtime::content::ContentBlock;
/// use dsh_runtime::hooks::{Accept, Replacement};
///
/// let a = Accept::content(vec![ContentBlock::text("redacted")]).with_context("note");
/// assert!(matches!(a.replacement, Replacement::Content(_)));
/// assert_eq!(a.contexts, ["note"]);
/// assert_eq!(Accept::new().replacement, Replacement::Unchanged);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Accept {
    /// What replaces part of the result, if anything.
    pub replacement: Replacement,
    /// Additional contexts.
    pub contexts: Vec<String>,
}

/// What an [`Accept`] replaces: nothing, the content, or (successes only) the value.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub enum Replacement {
    /// Keep the result as it is.
    #[default]
    Unchanged,
    /// Replace the model-facing content (the value and meta stay).
    Content(Vec<ContentBlock>),
    /// Replace the value of a success: it is validated against the output schema,
    /// rendered, and its meta recomputed.
    Value(Value),
}

impl Accept {
    /// Accept unchanged.
    pub fn new() -> Self {
        Accept::default()
    }
    /// Accept, replacing the content.
    pub fn content(content: Vec<ContentBlock>) -> Self {
        Accept {
            replacement: Replacement::Content(content),
            contexts: Vec::new(),
        }
    }
    /// Accept a success, replacing its value (on a failure this is an error).
    pub fn value(value: Value) -> Self {
        Accept {
            replacement: Replacement::Value(value),
            contexts: Vec::new(),
        }
    }
    /// Attach a context.
    pub fn with_context(mut self, text: impl Into<String>) -> Self {
        self.contexts.push(text.into());
        self
    }
}

impl From<Accept> for PostDecision {
    fn from(a: Accept) -> Self {
        PostDecision::Accept(a)
    }
}

/// Block a result: it becomes a failure (no code) whose content is `feedback` and whose
/// message is the feedback's text blocks joined with `\n` (other blocks appear as
/// `[<type> content]`; no feedback at all gives
/// `tool result blocked by post-execute policy`). The body's deferred contexts are
/// dropped; only these contexts are attached.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Block {
    /// The model-facing feedback.
    pub feedback: Vec<ContentBlock>,
    /// Contexts to attach.
    pub contexts: Vec<String>,
}

impl Block {
    /// Block with feedback.
    pub fn new(feedback: Vec<ContentBlock>) -> Self {
        Block {
            feedback,
            contexts: Vec::new(),
        }
    }
    /// Attach a context.
    pub fn with_context(mut self, text: impl Into<String>) -> Self {
        self.contexts.push(text.into());
        self
    }
}

impl From<Block> for PostDecision {
    fn from(b: Block) -> Self {
        PostDecision::Block(b)
    }
}

/// A post-execute hook: one link of a waterfall that sees every result reaching this
/// stage, failures included. Return a decision, or `next.run()` to defer (the end of the
/// chain accepts unchanged).
pub trait PostExecute: Send + Sync + 'static {
    /// Decide on a result.
    fn post_execute<'a>(
        &'a self,
        call: &'a CallInfo<'a>,
        result: &'a ToolResult,
        next: PostNext<'a>,
    ) -> HookFuture<'a, Result<PostDecision, ToolError>>;
}

/// The rest of the post-execute waterfall.
pub struct PostNext<'a> {
    pub(crate) hooks: &'a [Arc<dyn PostExecute>],
    pub(crate) call: &'a CallInfo<'a>,
    pub(crate) result: &'a ToolResult,
}

impl<'a> PostNext<'a> {
    /// Run the remaining hooks; accept unchanged when there are none.
    pub fn run(self) -> HookFuture<'a, Result<PostDecision, ToolError>> {
        match self.hooks.split_first() {
            None => HookFuture::ready(Ok(PostDecision::accept())),
            Some((hook, rest)) => hook.post_execute(
                self.call,
                self.result,
                PostNext {
                    hooks: rest,
                    call: self.call,
                    result: self.result,
                },
            ),
        }
    }
}

impl fmt::Debug for PostNext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostNext")
            .field("remaining", &self.hooks.len())
            .finish()
    }
}

/// A post-execute hook from a closure: `Some(decision)` short-circuits, `None` defers.
pub fn post_execute_fn<F>(f: F) -> PostExecuteFn<F>
where
    F: Fn(&CallInfo<'_>, &ToolResult) -> Option<PostDecision> + Send + Sync + 'static,
{
    PostExecuteFn(f)
}

/// See [`post_execute_fn`].
#[derive(Clone, Debug)]
pub struct PostExecuteFn<F>(F);

impl<F> PostExecute for PostExecuteFn<F>
where
    F: Fn(&CallInfo<'_>, &ToolResult) -> Option<PostDecision> + Send + Sync + 'static,
{
    fn post_execute<'a>(
        &'a self,
        call: &'a CallInfo<'a>,
        result: &'a ToolResult,
        next: PostNext<'a>,
    ) -> HookFuture<'a, Result<PostDecision, ToolError>> {
        match (self.0)(call, result) {
            Some(d) => HookFuture::ready(Ok(d)),
            None => next.run(),
        }
    }
}

// ---------------------------------------------------------------------------------------
// observers

/// Sees every final result, frozen (the same one the caller receives). A panicking
/// observer is contained and logged at `warn` level.
pub trait Observer: Send + Sync + 'static {
    /// Observe a result.
    fn observe(&self, call: &CallInfo<'_>, result: &ToolResult);
}

/// An observer from a closure.
pub fn observer_fn<F>(f: F) -> ObserverFn<F>
where
    F: Fn(&CallInfo<'_>, &ToolResult) + Send + Sync + 'static,
{
    ObserverFn(f)
}

/// See [`observer_fn`].
#[derive(Clone, Debug)]
pub struct ObserverFn<F>(F);

impl<F> Observer for ObserverFn<F>
where
    F: Fn(&CallInfo<'_>, &ToolResult) + Send + Sync + 'static,
{
    fn observe(&self, call: &CallInfo<'_>, result: &ToolResult) {
        (self.0)(call, result)
    }
}
