//! The [`ToolContext`] a body receives, and the [`ApprovalRoute`] it carries.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::error::ToolError;
use super::identity::{AgentScopeId, CallIdentity, ExecutionId};
use super::progress::{PROGRESS, Progress, ProgressReporter};
use super::side::SideChannel;
use crate::caller::{
    self, CallerAnswer, CallerError, CallerRoute, ElicitForm, Elicited, FormAnswer, FormRequest,
    LogLevel, Root, SampleRequest, SampledMessage, UrlAnswer, UrlRequest,
};
use crate::content::ContentBlock;
use crate::jobs::{CallJobs, JobRuntime};
use crate::json::{SharedValue, Value};

/// What a tool body receives besides its arguments.
///
/// Declare a parameter of type `ToolContext` (or `&ToolContext`) in a `#[tool]` fn to get
/// it; it is not part of the schema.
#[derive(Clone, Debug)]
pub struct ToolContext {
    exec: Arc<CallIdentity>,
    /// The body's token; `None`: a child of the caller's token (kept by the execution),
    /// made the first time it is asked for and kept in the execution's side channel.
    cancel: Option<CancellationToken>,
    /// The side channel given to [`ToolContext::new`]; `None`: the execution's own.
    side: Option<Arc<SideChannel>>,
    /// Where progress updates go (captured from [`with_progress`] when the context is made).
    progress: Option<ProgressReporter>,
    /// The fallback approval route around the call (captured when the context is made).
    approval: Option<ApprovalRoute>,
    /// A job runtime given with [`ToolContext::with_jobs`], before the execution's.
    jobs: Option<JobRuntime>,
    /// Who answers what the call asks of its caller (captured when the context is made).
    caller: Option<CallerRoute>,
}

/// Where the `ask` decisions of a call go when no registry handler answers them: the
/// fallback approval handler a transport installed around the call (an MCP session's
/// client, say). A body gets it from [`ToolContext::approval_fallback`] and installs it
/// around the calls it dispatches on other tasks or threads with
/// `dsh_runtime::hooks::with_approval`, so that their questions reach the same user.
///
/// Opaque: it is made from an `Arc<dyn hooks::ApprovalHandler>` (`From`), and the
/// pipeline is what reads it. (The handler type lives with the hooks, above this module;
/// the route is how a context carries one without depending on them.)
#[derive(Clone)]
pub struct ApprovalRoute(pub(crate) Arc<dyn std::any::Any + Send + Sync>);

impl fmt::Debug for ApprovalRoute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApprovalRoute(..)")
    }
}

tokio::task_local! {
    /// The route installed by `hooks::with_approval` around the current task's calls.
    pub(crate) static APPROVAL_ROUTE: ApprovalRoute;
}

impl ApprovalRoute {
    /// The route installed around the current call, if any.
    pub(crate) fn current() -> Option<Self> {
        APPROVAL_ROUTE.try_with(Clone::clone).ok()
    }
}

impl ToolContext {
    /// A context for an execution (used by the pipeline and by tests that call bodies
    /// directly).
    pub fn new(exec: Arc<CallIdentity>, cancel: CancellationToken, side: Arc<SideChannel>) -> Self {
        ToolContext {
            exec,
            cancel: Some(cancel),
            side: Some(side),
            progress: PROGRESS.try_with(Clone::clone).ok(),
            approval: ApprovalRoute::current(),
            jobs: None,
            caller: CallerRoute::current(),
        }
    }

    /// The pipeline's context for one run of a body: the execution's own side channel
    /// and this token.
    pub(crate) fn for_run(exec: Arc<CallIdentity>, cancel: CancellationToken) -> Self {
        ToolContext {
            exec,
            cancel: Some(cancel),
            side: None,
            progress: PROGRESS.try_with(Clone::clone).ok(),
            approval: ApprovalRoute::current(),
            jobs: None,
            caller: CallerRoute::current(),
        }
    }

    /// The pipeline's context for the only run of a body, whose token is a child of the
    /// caller's, made only if the body asks for it (a body that never looks at its token
    /// costs no token). The execution's side channel keeps the child, so there must be
    /// no other run of a body for this execution.
    pub(crate) fn for_only_run(exec: Arc<CallIdentity>) -> Self {
        ToolContext {
            exec,
            cancel: None,
            side: None,
            progress: PROGRESS.try_with(Clone::clone).ok(),
            approval: ApprovalRoute::current(),
            jobs: None,
            caller: CallerRoute::current(),
        }
    }

    fn side(&self) -> &SideChannel {
        self.side.as_deref().unwrap_or(&self.exec.side)
    }

    /// A context for calling a tool body directly, outside any registry (unit tests).
    pub fn detached(name: &str) -> Self {
        let exec = CallIdentity::new(
            "direct".into(),
            "direct".into(),
            name.into(),
            Arc::new(Value::Object(Default::default())),
            None,
            None,
        );
        ToolContext::new(Arc::new(exec), CancellationToken::new(), Arc::default())
    }

    /// The immutable identity of this execution.
    pub fn execution(&self) -> &Arc<CallIdentity> {
        &self.exec
    }
    /// The caller's call id.
    pub fn call_id(&self) -> &str {
        &self.exec.call_id
    }
    /// The tool name.
    pub fn name(&self) -> &str {
        &self.exec.name
    }
    /// The frozen arguments as the model sent them (after snapshot).
    pub fn arguments(&self) -> &SharedValue {
        &self.exec.arguments
    }
    /// The opaque execution token.
    pub fn token(&self) -> ExecutionId {
        self.exec.token
    }
    /// The agent scope of the call.
    pub fn agent(&self) -> Option<AgentScopeId> {
        self.exec.agent
    }
    /// The enclosing execution, for sub-dispatches.
    pub fn parent(&self) -> Option<ExecutionId> {
        self.exec.parent
    }
    /// The cancellation token: cancelled when the caller aborts or a deadline fires.
    /// Bodies should stop promptly when it fires.
    pub fn cancellation(&self) -> &CancellationToken {
        match &self.cancel {
            Some(token) => token,
            None => self
                .exec
                .side
                .child
                .get_or_init(|| self.exec.caller_token().child_token()),
        }
    }
    /// The job runtime this call may publish background work on, acting for no owner
    /// ([`CallJobs::for_owner`] picks one): the registry's
    /// ([`RegistryBuilder::jobs`](crate::RegistryBuilder::jobs)), or the one given with
    /// [`with_jobs`](ToolContext::with_jobs).
    ///
    /// # Errors
    ///
    /// `JOBS_UNAVAILABLE`, naming the tool, when there is none.
    pub fn jobs(&self) -> Result<CallJobs, ToolError> {
        match self.jobs.as_ref().or(self.exec.jobs.as_ref()) {
            Some(runtime) => Ok(CallJobs::new(runtime.clone(), self.cancellation().clone())),
            None => Err(ToolError::with_code(
                "JOBS_UNAVAILABLE",
                format!(
                    "tool {} cannot start background work: the registry has no job runtime (build it with `Registry::builder().jobs(JobRuntime::new())`)",
                    crate::schema::json_quote(&self.exec.name)
                ),
            )),
        }
    }
    /// The same context with `jobs` as its job runtime (for calling bodies directly,
    /// outside a registry).
    #[must_use]
    pub fn with_jobs(mut self, jobs: JobRuntime) -> Self {
        self.jobs = Some(jobs);
        self
    }
    /// Whether cancellation was requested.
    pub fn is_cancelled(&self) -> bool {
        match &self.cancel {
            Some(token) => token.is_cancelled(),
            None => self.exec.lazy_child_cancelled(),
        }
    }
    /// Attach model-facing context to the final result (kept on success, prepended to
    /// the contexts post-execute attaches).
    pub fn defer_context(&self, text: impl Into<String>) {
        let side = self.side();
        let mut deferred = side.deferred.lock().unwrap_or_else(|e| e.into_inner());
        deferred.push(text.into());
        side.sent.store(true, Ordering::Release);
    }
    /// Append `block` to the content of this call's success, after what the tool
    /// renders (dropped when the call fails; replaced with the rest of the content when
    /// post-execute replaces it). For content a body relays rather than renders, such as
    /// the images `run_code` forwards from the calls of a program.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use dsh_runtime::{content::ContentBlock, Registry, ToolCall, ToolContext, tool};
    ///
    /// /// Describe a chart, and show it.
    /// #[tool(read_only)]
    /// async fn chart(cx: ToolContext) -> String {
    ///     cx.attach_content(ContentBlock::image("iVBORw0KGgo=", "image/png"));
    ///     "a rising line".to_string()
    /// }
    ///
    /// let registry = Registry::new();
    /// let _chart = registry.register(Chart).unwrap();
    /// let result = registry.execute(ToolCall::new("1", "chart", "{}")).await;
    /// assert_eq!(result.content().len(), 2);
    /// assert_eq!(result.content()[0].as_text(), Some("a rising line"));
    /// assert!(matches!(result.content()[1], ContentBlock::Image { .. }));
    /// # });
    /// ```
    pub fn attach_content(&self, block: ContentBlock) {
        let side = self.side();
        let mut attached = side.attached.lock().unwrap_or_else(|e| e.into_inner());
        attached.push(block);
        side.sent.store(true, Ordering::Release);
    }
    /// Ask the agent loop to end the turn after this result (success only).
    pub fn conclude_turn(&self) {
        self.side().concludes_turn.store(true, Ordering::Release);
    }
    /// The fallback approval route installed around this call (an MCP session's client,
    /// say), if any. Calls this body dispatches on the same task see it already; install
    /// it with `dsh_runtime::hooks::with_approval` around the calls it dispatches on
    /// other tasks or threads, so that their `ask` decisions reach the same user (code
    /// mode does this for its programs' tool calls).
    pub fn approval_fallback(&self) -> Option<&ApprovalRoute> {
        self.approval.as_ref()
    }

    /// Report progress to whoever executes the call (a no-op unless the caller installed
    /// a reporter with [`with_progress`](crate::with_progress), as the MCP server does when the client asked
    /// for progress). `progress` should increase from one report to the next.
    pub fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if let Some(reporter) = &self.progress {
            (reporter.0)(Progress {
                progress,
                total,
                message: message.map(str::to_string),
            });
        }
    }

    /// The handler answering what this call asks of its caller (see [`crate::caller`]),
    /// if one was installed around the call. Install it with
    /// [`with_caller`](crate::caller::with_caller) around calls this body dispatches on
    /// other tasks or threads, so that they reach the same caller.
    pub fn caller(&self) -> Option<&CallerRoute> {
        self.caller.as_ref()
    }

    /// This call's caller, as a handle of its own (see [`crate::caller::Caller`]).
    pub fn as_caller(&self) -> caller::Caller {
        caller::Caller::new(
            self.caller.clone(),
            self.exec.call_id.clone(),
            self.exec.name.clone(),
            self.cancellation().clone(),
        )
    }

    /// Log a message to the caller at `level` (an MCP client receives it as
    /// `notifications/message` when it asked for that level or below). Costs nothing
    /// when nobody listens at that level.
    pub fn log(&self, level: LogLevel, message: impl Into<String>) {
        if self.caller.is_some() {
            self.as_caller().log(level, message);
        }
    }

    /// Log structured data to the caller at `level`, under a logger name (see
    /// [`ToolContext::log`]). Data that cannot be written as lossless JSON is logged as
    /// its error message.
    pub fn log_data<T: Serialize + ?Sized>(&self, level: LogLevel, logger: Option<&str>, data: &T) {
        if self.caller.is_some() {
            self.as_caller().log_data(level, logger, data);
        }
    }

    /// Ask the caller's user to fill in a form of type `T` and read the answer.
    ///
    /// `T` derives [`ToolSchema`](crate::ToolSchema) and `Deserialize` and stays within
    /// MCP's form subset (a flat struct of strings, numbers, booleans and enums; see
    /// [`ElicitForm`]). The answer is validated against `T`'s schema before it is read.
    ///
    /// # Errors
    ///
    /// [`CallerError`]: nobody to ask, a caller without forms, an answer that fails the
    /// form (every violation named), the call cancelled while it waited.
    // A boxed future rather than an `async fn`: the bound `T: ElicitForm` then sits on
    // the call alone, so a `T` outside the form subset is one compile error there
    // (an `async fn`'s future repeats it at the call expression and at its `.await`).
    pub fn elicit<T: ElicitForm>(
        &self,
        message: impl Into<String>,
    ) -> caller::CallerFuture<'_, Result<Elicited<T>, CallerError>> {
        let message = message.into();
        Box::pin(async move { self.as_caller().elicit::<T>(message).await })
    }

    /// Ask the caller's user to fill in a form given as a JSON Schema (MCP's
    /// `requestedSchema`), and get the answer as sent: the escape hatch under
    /// [`ToolContext::elicit`] for a form built at run time. The answer is not checked
    /// against the schema.
    ///
    /// # Errors
    ///
    /// As [`ToolContext::elicit`].
    pub async fn elicit_form(&self, request: FormRequest) -> Result<FormAnswer, CallerError> {
        self.as_caller().elicit_form(request).await
    }

    /// Send the caller's user to a URL (MCP's URL-mode elicitation: an OAuth consent, a
    /// payment page). The answer says whether the user agreed to go; what happens there
    /// is out of band.
    ///
    /// # Errors
    ///
    /// As [`ToolContext::elicit`].
    pub async fn elicit_url(&self, request: UrlRequest) -> Result<UrlAnswer, CallerError> {
        self.as_caller().elicit_url(request).await
    }

    /// Ask the caller's model for a message.
    ///
    /// # Errors
    ///
    /// As [`ToolContext::elicit`]; an answer that is not a message is
    /// [`CallerError::InvalidAnswer`].
    pub async fn sample(&self, request: SampleRequest) -> Result<SampledMessage, CallerError> {
        self.as_caller().sample(request).await
    }

    /// The caller's roots (the directories or resources it works in).
    ///
    /// # Errors
    ///
    /// As [`ToolContext::elicit`].
    pub async fn roots(&self) -> Result<Vec<Root>, CallerError> {
        self.as_caller().roots().await
    }

    /// Go on as a task, when the call may become one here: a call of a tool declared
    /// `task_after_input` from an MCP client with tasks on revision 2026-07-28, whose
    /// request is then answered with a `CreateTaskResult`; the body goes on, and its
    /// result is the task's. `false` where the call cannot (it already is a task, or
    /// runs where there are none): it goes on as it was.
    pub async fn continue_as_task(&self) -> bool {
        self.as_caller().continue_as_task().await
    }

    /// Close the stream this call's answer is sent on, and tell the client to come back
    /// after `retry`: it reconnects and gets what was sent since, the answer included
    /// (MCP Streamable HTTP sessions, SEP-1699; for a long call behind a proxy that cuts
    /// idle connections). The call goes on. `false` where the call's transport has no
    /// such stream (stdio, a stateless request, in process).
    pub async fn close_stream(&self, retry: std::time::Duration) -> bool {
        self.as_caller().close_stream(retry).await
    }

    /// Ask the caller several things together: one answer per question, in order. Over
    /// MCP revision 2026-07-28 they go in one `InputRequiredResult` (each under its
    /// [`Question::key`](crate::caller::Question::key)); elsewhere they are asked at
    /// once. A request the caller cannot answer fails alone
    /// ([`CallerError::Unsupported`]), so a body can ask for what the caller supports.
    pub async fn ask_all(
        &self,
        questions: Vec<crate::caller::Question>,
    ) -> Vec<Result<CallerAnswer, CallerError>> {
        self.as_caller().ask_all(questions).await
    }
}
