//! `tools/call` as named steps: [`Handler::tool_call`] reads the call
//! ([`Handler::read_call`]), checks its `Mcp-Param-*` headers over HTTP
//! ([`check_param_headers`]), starts it as a task when it may be one
//! ([`Handler::as_task`]), else runs it one of three ways (the retry of a suspended call,
//! [`Handler::resume_call`]; a call that may be suspended on its approval,
//! [`Handler::suspendable_call`]; a call answered in its request,
//! [`Handler::direct_call`]), and answers its result ([`answer`]).

use std::sync::{Arc, Mutex};

use std::sync::atomic::AtomicU64;

use dsh_runtime::caller::{LogLevel, RequestKind, with_caller};
use dsh_runtime::hooks::ApprovalHandler;
use dsh_runtime::{Arguments, PipelineCode, TaskSupport, ToolCall, ToolResult};
use rmcp::model::{CallToolRequestParams, CallToolResponse, ClientCapabilities};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::context::Session;
use super::handler::{Handler, TaskStart, cannot_ask};
use super::progress::ProgressForwarder;
use super::tool_list::ToolList;
use super::{raw_arguments, request_id_text};
use crate::approval::resume;
use crate::approval::{ClientApproval, can_elicit_form};
use crate::caller::logs::LogSink;
use crate::caller::session::SessionCaller;
use crate::definition::McpTool;
use crate::definition::to_mcp_result;
use crate::store::{Owner, TaskModel};
use crate::tasks::rev_2025_11_25;
use crate::tasks::stateless::PublicIds;
use crate::util::lock;
use crate::wire;

/// A `tools/call` as read: where it runs, the tool, its arguments, what the client can.
struct Call {
    name: String,
    /// The session of the connection, if any: only it carries requests to the client.
    connection: Option<Arc<Session>>,
    /// Where it runs: its session, or the stateless context.
    session: Option<Arc<Session>>,
    list: Arc<ToolList>,
    tool: Option<Arc<McpTool>>,
    arguments: Arguments,
    /// The arguments' text, which a resumable approval's state is bound to.
    arguments_text: Arc<str>,
    /// The client declared form elicitation.
    capable: bool,
    /// What the client declared (on this request, or at `initialize`).
    capabilities: Option<ClientCapabilities>,
    /// The least severe level of the call's logs the client gets (`None`: none).
    log_level: Option<LogLevel>,
    /// The revision has no server-to-client requests: asks with `InputRequiredResult`.
    resumable: bool,
}

/// How a call that ran ended: its result, or a question for the client's retry.
enum Ran {
    Result(ToolResult),
    InputRequired(rmcp::model::InputRequiredResult),
    /// The answer of a resumed call (here, or by the instance holding it).
    Answer(CallToolResponse),
}

impl Call {
    fn support(&self) -> TaskSupport {
        self.tool
            .as_ref()
            .map_or(TaskSupport::Forbidden, |t| t.task_support)
    }

    /// What an approval state of this call is bound to (a stateless request's, to its
    /// sender too).
    fn binding(&self, context: &RequestContext<RoleServer>) -> Vec<u8> {
        let sender = self
            .session
            .as_ref()
            .and_then(|s| s.principal(context))
            .map(|p| p.tag());
        // A stateless request's state is bound to its sender alone: the stateless
        // context is every instance's own, and another instance may take the retry.
        let session = self
            .session
            .as_ref()
            .filter(|s| s.stateless().is_none())
            .map(|s| s.scope.id());
        resume::binding(session, sender.as_deref(), &self.name, &self.arguments_text)
    }

    /// The pipeline call, cancelled by `cancel`, in the session's scope.
    fn tool_call(
        &self,
        context: &RequestContext<RoleServer>,
        cancel: CancellationToken,
    ) -> ToolCall {
        let call = ToolCall::new(
            request_id_text(&context.id),
            self.name.as_str(),
            self.arguments.clone(),
        )
        .with_cancellation(cancel);
        match &self.session {
            Some(session) => call.with_agent(session.scope.id()),
            None => call,
        }
    }

    /// Who the call's tasks and approval states belong to.
    fn owner(&self, context: &RequestContext<RoleServer>) -> Owner {
        self.session
            .as_ref()
            .map_or_else(|| Owner::new("no session"), |s| s.owner(context))
    }

    /// Whether the client can answer anything a call asks (a form, sampling, roots).
    fn asks(&self) -> bool {
        self.capable
            || [RequestKind::Url, RequestKind::Sample, RequestKind::Roots]
                .into_iter()
                .any(|kind| crate::caller::can_answer(self.capabilities.as_ref(), kind))
    }

    /// Whether the call runs as an ordinary call first, where it can ask (a tool that
    /// becomes a task after asking its caller, `continue_as_task`).
    fn asks_before_task(&self) -> bool {
        self.tool.as_ref().is_some_and(|t| t.task_after_input) && self.resumable && self.asks()
    }

    /// Where the call's logs go.
    fn logs(&self, context: &RequestContext<RoleServer>) -> Arc<LogSink> {
        Arc::new(LogSink::new(context.peer.clone(), self.log_level))
    }

    fn cannot_ask(&self) -> Option<&'static str> {
        cannot_ask(self.capable, self.resumable, self.connection.is_some())
    }
}

/// Refuse a call whose `Mcp-Param-*` headers (taken off a 2026-07-28 request by the HTTP
/// transport) disagree with its arguments, before anything runs: HTTP `400`, JSON-RPC
/// `-32020` (see [`wire::param_headers`]). Calls without such headers taken (stdio,
/// earlier revisions) are not checked.
fn check_param_headers(call: &Call, context: &RequestContext<RoleServer>) -> Result<(), McpError> {
    let Some(sent) = super::extension::<wire::param_headers::ParamHeaders>(&context.extensions)
    else {
        return Ok(());
    };
    let Some(tool) = &call.tool else {
        return Ok(());
    };
    wire::param_headers::check(&tool.tool.input_schema, &call.arguments_text, sent)
        .map_err(|message| McpError::header_mismatch(message, None))
}

impl Handler {
    /// Answer a `tools/call` (see the module docs).
    pub(super) async fn tool_call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let state = request.request_state.clone();
        let responses = request.input_responses.clone();
        let call = self.read_call(request, &context)?;
        check_param_headers(&call, &context)?;
        // The tool's scope and the principal's limits, before anything runs.
        let _permit = self.admit(&call.name, call.tool.as_deref().map(|t| &t.tool), &context)?;
        if state.is_none()
            && let Some(response) = self.as_task(&call, &context).await?
        {
            return Ok(response);
        }
        let ran = match state.as_deref() {
            Some(state) => {
                self.resume_call(&call, state, responses.as_ref(), &context)
                    .await?
            }
            None if call.resumable && call.asks() => {
                self.suspendable_call(&call, &context, None, responses.unwrap_or_default())
                    .await?
            }
            None => Ran::Result(self.direct_call(&call, &context).await),
        };
        match ran {
            Ran::Result(result) => answer(&call, &result).map(|response| {
                let cards = self.cards(&call);
                super::apps::with_cards(response, cards.as_ref(), &result)
            }),
            Ran::InputRequired(input) => Ok(CallToolResponse::InputRequired(input)),
            Ran::Answer(response) => Ok(response),
        }
    }

    /// The call's cards for the MCP Apps view (see `super::apps`), if the client shows them.
    fn cards(&self, call: &Call) -> Option<super::apps::Cards> {
        super::apps::Cards::of(
            &self.shared.registry,
            call.session.as_ref().map(|s| &s.scope),
            call.capabilities.as_ref(),
            &call.name,
            &call.arguments,
        )
    }

    /// Read the call: its context, its tool (a tool left out of the list is refused),
    /// its arguments as the client sent them.
    fn read_call(
        &self,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<Call, McpError> {
        let session = self.context();
        let list = self.tool_list(session.as_deref());
        let name = request.name.to_string();
        if !list.by_name.contains_key(name.as_str())
            && list.fingerprint.iter().any(|(n, _)| **n == *name)
        {
            // Visible but left out of the list: as unknown to the client as a tool
            // that does not exist. (The registry's own schema limits keep every
            // registered tool within the export's, so this is a safeguard.)
            return Err(McpError::invalid_params(
                format!("tool `{name}` is not published over MCP"),
                None,
            ));
        }
        let raw = raw_arguments(context);
        let arguments_text: Arc<str> = match &raw {
            Some(text) => text.clone(),
            None => Arc::from(
                serde_json::to_string(&request.arguments.clone().unwrap_or_default())
                    .unwrap_or_default(),
            ),
        };
        let arguments = match raw {
            Some(text) => Arguments::Text(text),
            None => Arguments::Serde(Value::Object(request.arguments.unwrap_or_default())),
        };
        let tool = list
            .by_name
            .get(name.as_str())
            .and_then(|&i| list.tools[i].clone());
        Ok(Call {
            name,
            connection: self.session(),
            session,
            list,
            tool,
            arguments,
            arguments_text,
            capable: can_elicit_form(context.client_capabilities().as_ref()),
            capabilities: context.client_capabilities(),
            log_level: self.log_level(context),
            resumable: context
                .protocol_version()
                .is_some_and(|v| !v.has_initialize()),
        })
    }

    /// The least severe level of a call's logs the client gets: on revisions with
    /// sessions the session's (`logging/setLevel`), on 2026-07-28 the request's
    /// `_meta["io.modelcontextprotocol/logLevel"]` (none without it).
    fn log_level(&self, context: &RequestContext<RoleServer>) -> Option<LogLevel> {
        let resumable = context
            .protocol_version()
            .is_some_and(|v| !v.has_initialize());
        if resumable {
            return context
                .meta
                .0
                .get(crate::caller::logs::LOG_LEVEL_META)
                .and_then(Value::as_str)
                .and_then(LogLevel::parse);
        }
        self.session().map(|s| *lock(&s.log_level))
    }

    /// Start the call as a task of the extension when it may be one (`None`: it runs as
    /// an ordinary call), or refuse a tool that runs only as a task where none can start.
    ///
    /// Task creation is the server's choice: a task-capable tool runs as a task whenever
    /// the client declared the tasks extension on this request (or at `initialize`) and
    /// the context can hold one.
    async fn as_task(
        &self,
        call: &Call,
        context: &RequestContext<RoleServer>,
    ) -> Result<Option<CallToolResponse>, McpError> {
        let support = call.support();
        if !support.allows_task() {
            return Ok(None);
        }
        if call.asks_before_task() {
            return Ok(None);
        }
        let declared = context
            .client_capabilities()
            .is_some_and(|c| c.supports_tasks());
        let session = call.session.as_ref();
        let tasks = session.and_then(|s| s.tasks.clone());
        let required = support == TaskSupport::Required;
        match (declared, session, tasks) {
            (true, Some(session), Some(tasks)) => {
                // A stateless task takes a place among the server's kept tasks.
                let reservation = match session.stateless().map(PublicIds::reserve) {
                    Some(None) if required => {
                        return Err(McpError::invalid_request(
                            format!(
                                "tool `{}` runs only as a task, and this server keeps as many \
                                 tasks as it may ({}): try again when one has expired",
                                call.name, self.shared.stateless_tasks.max_tasks
                            ),
                            None,
                        ));
                    }
                    // No place left: the call is answered directly.
                    Some(None) => return Ok(None),
                    reservation => reservation.flatten(),
                };
                let start = TaskStart {
                    session,
                    tasks,
                    name: &call.name,
                    arguments: call.arguments.clone(),
                    tool: call.tool.clone(),
                    context,
                    resumable: call.resumable,
                    cannot_ask: call.cannot_ask(),
                    model: TaskModel::Extension,
                    reservation,
                };
                self.start_task(start).await.map(Some)
            }
            (false, _, _)
                if required
                    && self.shared.registry.jobs().is_some()
                    && context
                        .protocol_version()
                        .is_some_and(|v| v.as_str() == wire::rev_2025_11_25::VERSION) =>
            {
                // 2025-11-25: a tool that runs only as a task is called with
                // `params.task` (see `crate::tasks::rev_2025_11_25`).
                Err(rev_2025_11_25::method_not_found(format!(
                    "tool `{}` runs only as a task: call it with `params.task` \
                     (its execution.taskSupport is \"required\")",
                    call.name
                )))
            }
            (false, _, _) if required => Err(McpError::missing_required_client_capability(
                ClientCapabilities::builder().enable_tasks().build(),
            )),
            (true, session, _) if required => Err(no_task_here(call, session.is_none())),
            _ => Ok(None),
        }
    }

    /// How a call may go on as a task (a `task_after_input` tool, from a client that
    /// declared tasks, where the context keeps them).
    fn escalation(
        &self,
        call: &Call,
        context: &RequestContext<RoleServer>,
    ) -> Option<resume::Escalation> {
        let after_input = call.tool.as_ref().is_some_and(|t| t.task_after_input);
        let declared = context
            .client_capabilities()
            .is_some_and(|c| c.supports_tasks());
        let session = call.session.as_ref()?;
        let tasks = session.tasks.clone()?;
        (after_input && declared && call.support().allows_task()).then(|| resume::Escalation {
            tasks,
            owner: call.owner(context),
            stateless: session.stateless().cloned(),
        })
    }

    /// The retry of a call suspended on its approval: its result, or its next question.
    /// The call goes on here when this instance holds it; else it runs again here with
    /// the approval given, when nothing of it ran before it asked; else the answer goes
    /// to the instance holding it (see `crate::approval::resume`).
    async fn resume_call(
        &self,
        call: &Call,
        state: &str,
        responses: Option<&rmcp::model::InputResponses>,
        context: &RequestContext<RoleServer>,
    ) -> Result<Ran, McpError> {
        let bound = call.binding(context);
        let owner = call.owner(context);
        let resumes = &self.shared.resumes;
        // A retry without every answer its call waits for is asked them again.
        if let Some(again) = resumes.ask_again(state, responses, &bound) {
            return Ok(Ran::InputRequired(again));
        }
        let taken = resumes
            .take(
                &*self.shared.store,
                state,
                responses,
                &bound,
                &owner,
                &call.name,
            )
            .await?;
        if let Some(suspended) = taken.local {
            let resumed = resumes
                .continue_call(suspended, &taken.answer, &context.ct, &call.name)
                .await?;
            return Ok(match resumed {
                resume::Resumed::Complete(result) => {
                    Ran::Answer(CallToolResponse::Complete(result))
                }
                resume::Resumed::InputRequired(input) => Ran::InputRequired(input),
                resume::Resumed::Task(created) => Ran::Answer(CallToolResponse::Task(created)),
            });
        }
        let instance = &self.shared.instance;
        let holder = taken
            .record
            .holder
            .as_deref()
            .filter(|h| *h != instance.id());
        if taken.record.rerun {
            if let Some(holder) = holder {
                instance.release(holder, &taken.nonce).await;
            }
            let approval = resume::approval_of_responses(&taken.answer);
            return self
                .suspendable_call(call, context, Some(approval), Default::default())
                .await;
        }
        let Some(holder) = holder else {
            return Err(McpError::invalid_params(
                format!(
                    "tools/call `{}`: requestState refused: its call has ended",
                    call.name
                ),
                None,
            ));
        };
        let response = instance
            .forward(holder, &taken.nonce, &call.name, &taken.answer, &context.ct)
            .await?;
        Ok(Ran::Answer(response))
    }

    /// A call on a revision without server-to-client requests, from a client that can
    /// ask its user: it runs on a task of its own, and when its approval is asked it is
    /// suspended there and the request answered with an `InputRequiredResult` (see
    /// `crate::approval::resume`).
    ///
    /// `preanswer` answers the call's own policy's question (a retry running the call
    /// again); `ahead` holds answers the request carried without a state (see
    /// `resume::Suspend::ahead`).
    async fn suspendable_call(
        &self,
        call: &Call,
        context: &RequestContext<RoleServer>,
        preanswer: Option<dsh_runtime::hooks::Approval>,
        ahead: rmcp::model::InputResponses,
    ) -> Result<Ran, McpError> {
        // The instance listens for answers forwarded to the calls it holds.
        let instance = self.shared.instance.clone();
        instance.ready().await.map_err(|e| {
            McpError::internal_error(format!("tools/call `{}`: {e}", call.name), None)
        })?;
        // A suspended call ends with its session.
        let cancel = call
            .session
            .as_ref()
            .map_or_else(CancellationToken::new, |s| s.stop.child_token());
        let tool_call = call.tool_call(context, cancel.clone());
        let (asked_tx, asked_rx) = oneshot::channel();
        let (result_tx, mut result_rx) = oneshot::channel();
        let registry = self.shared.registry.clone();
        let logs = call.logs(context);
        let suspend = self.suspend(call, context, &cancel, asked_tx, &logs, preanswer, ahead);
        // Progress goes on this request's stream until it is answered (with the result,
        // or with the question that suspends the call).
        let progress = forwarder(context);
        let reporter = progress.as_ref().map(ProgressForwarder::reporter);
        run_suspendable(registry, tool_call, suspend, reporter, result_tx);
        let ended = |_| {
            McpError::internal_error(
                format!(
                    "tools/call `{}`: the call ended without a result",
                    call.name
                ),
                None,
            )
        };
        // This request's cancellation is the call's until it is suspended.
        let round = context.ct.clone();
        let ran = tokio::select! {
            // What the call tells first (a question, its task) comes before its result,
            // which may follow at once.
            biased;
            asked = asked_rx => match asked {
                Ok(resume::Next::Input(nonce, input)) => {
                    self.shared.resumes.park_result(&nonce, result_rx);
                    Ok(Ran::InputRequired(input))
                }
                Ok(resume::Next::Task(created, handoff)) => {
                    let _ = handoff.send(result_rx);
                    Ok(Ran::Answer(CallToolResponse::Task(created)))
                }
                // The call ended without asking.
                Err(_) => result_rx.await.map(Ran::Result).map_err(ended),
            },
            result = &mut result_rx => result.map(Ran::Result).map_err(ended),
            () = round.cancelled() => {
                cancel.cancel();
                result_rx.await.map(Ran::Result).map_err(ended)
            }
        };
        // Every report and log made so far is sent before the answer; later ones are
        // dropped.
        if let Some(progress) = progress {
            progress.finish().await;
        }
        logs.finish().await;
        ran
    }

    /// The route of a suspendable call's questions (see `crate::approval::resume`).
    #[allow(clippy::too_many_arguments)]
    fn suspend(
        &self,
        call: &Call,
        context: &RequestContext<RoleServer>,
        cancel: &CancellationToken,
        asked: resume::Asked,
        logs: &Arc<LogSink>,
        preanswer: Option<dsh_runtime::hooks::Approval>,
        ahead: rmcp::model::InputResponses,
    ) -> Arc<resume::Suspend> {
        Arc::new(resume::Suspend {
            resumes: self.shared.resumes.clone(),
            registry: self.shared.registry.clone(),
            scope: call.session.as_ref().map(|s| s.scope.clone()),
            binding: call.binding(context),
            cancel: cancel.clone(),
            asked: Arc::new(Mutex::new(Some(asked))),
            store: self.shared.store.clone(),
            owner: call.owner(context),
            name: call.name.clone(),
            tool: call.tool.clone(),
            cards: self.cards(call).map(super::apps::Cards::adder),
            holder: self.shared.instance.id().to_string(),
            preanswer: Mutex::new(preanswer),
            capabilities: call.capabilities.clone(),
            logs: logs.clone(),
            keys: AtomicU64::new(0),
            escalation: self.escalation(call, context),
            ahead: Mutex::new(ahead),
        })
    }

    /// A call answered in its request: progress forwarded, an `ask` put to the client's
    /// user (see `crate::approval`).
    async fn direct_call(&self, call: &Call, context: &RequestContext<RoleServer>) -> ToolResult {
        let registry = self.shared.registry.clone();
        let tool_call = call.tool_call(context, context.ct.clone());
        let progress = forwarder(context);
        let reporter = progress.as_ref().map(ProgressForwarder::reporter);
        let client = ClientApproval::new(
            context.peer.clone(),
            registry.clone(),
            call.session.as_ref().map(|s| s.scope.clone()),
            call.cannot_ask(),
        );
        let handler: Arc<dyn ApprovalHandler> = client;
        let logs = call.logs(context);
        // Requests to the client go where it can answer them: a session on a revision
        // with server-to-client requests.
        let requests = !call.resumable && call.connection.is_some();
        let stream = super::extension::<crate::caller::StreamCloser>(&context.extensions)
            .map(|closer| (closer.clone(), context.id.to_string()));
        let caller = SessionCaller::with_stream(
            context.peer.clone(),
            call.capabilities.clone(),
            requests,
            logs.clone(),
            stream,
        );
        let execute = dsh_runtime::hooks::with_approval(
            handler,
            with_caller(caller, registry.execute(tool_call)),
        );
        // rmcp runs each request handler on its own detached task and signals
        // cancellation through the token, never by dropping the handler, so the call is
        // always awaited to its end here (its body sees the cancellation and cleans up).
        let result = match reporter {
            Some(reporter) => dsh_runtime::with_progress(reporter, execute).await,
            None => execute.await,
        };
        if let Some(progress) = progress {
            progress.finish().await;
        }
        logs.finish().await;
        result
    }
}

/// Run a suspendable call on a task of its own (it outlives its request when it is
/// suspended), its questions routed to `suspend`, its progress to `reporter`, its result
/// sent to `result_tx`.
fn run_suspendable(
    registry: dsh_runtime::Registry,
    tool_call: ToolCall,
    suspend: Arc<resume::Suspend>,
    reporter: Option<dsh_runtime::ProgressReporter>,
    result_tx: oneshot::Sender<ToolResult>,
) {
    tokio::spawn(async move {
        let approval: Arc<dyn ApprovalHandler> = suspend.clone();
        let execute = dsh_runtime::hooks::with_approval(
            approval,
            with_caller(suspend, registry.execute(tool_call)),
        );
        let result = match reporter {
            Some(reporter) => dsh_runtime::with_progress(reporter, execute).await,
            None => execute.await,
        };
        let _ = result_tx.send(result);
    });
}

/// The refusal of a call of a tool that runs only as a task where none can start
/// (`sessionless`: the request has no session; else there is no job runtime).
fn no_task_here(call: &Call, sessionless: bool) -> McpError {
    let why = if sessionless {
        "a request without a session cannot start one"
    } else {
        "this server has no job runtime to run it"
    };
    McpError::invalid_request(
        format!("tool `{}` runs only as a task, and {why}", call.name),
        None,
    )
}

/// The forwarding of a call's progress reports, when its request carried a progress
/// token.
fn forwarder(context: &RequestContext<RoleServer>) -> Option<ProgressForwarder> {
    context
        .meta
        .get_progress_token()
        .map(|token| ProgressForwarder::start(context.peer.clone(), token))
}

/// The answer to a call that ended: its result, or (an unknown tool) the protocol's
/// JSON-RPC error.
fn answer(call: &Call, result: &ToolResult) -> Result<CallToolResponse, McpError> {
    if result.error_code() == Some(PipelineCode::UnknownTool)
        && !call.list.by_name.contains_key(call.name.as_str())
    {
        return Err(McpError::invalid_params(
            result.message().unwrap_or("unknown tool").to_string(),
            None,
        ));
    }
    if call.resumable && result.code_str() == Some(dsh_runtime::caller::codes::CALLER_UNSUPPORTED) {
        // Revision 2026-07-28: a call needing what the client did not declare is the
        // protocol's error, naming the capability.
        let message = result.message().unwrap_or_default();
        let capability = message
            .split_once("lacks the `")
            .and_then(|(_, rest)| rest.split_once('`'))
            .map_or("elicitation", |(name, _)| name);
        return Err(McpError::missing_required_client_capability(
            crate::caller::required_named(capability),
        ));
    }
    Ok(CallToolResponse::Complete(to_mcp_result(
        result,
        call.tool.as_deref(),
    )))
}
