//! Tasks from the handler's side: finding a request's task, starting a call as a task
//! (both models), and the requests of the 2025-11-25 model the transports reroute.

use std::sync::Arc;

use dsh_runtime::hooks::ApprovalHandler;
use dsh_runtime::jobs::{JobContext, JobSpec};
use dsh_runtime::{Arguments, Progress, ProgressReporter, TaskSupport, ToolCall};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CreateTaskResult, CustomRequest, GetTaskResult,
    PaginatedRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::Value;

use super::context::Session;
use super::handler::{FoundTask, Handler, TaskStart, cannot_ask};
use super::progress::ProgressForwarder;
use super::{raw_arguments, request_id_text};
use crate::approval::{ClientApproval, TaskLink, can_elicit_form};
use crate::caller::logs::LogSink;
use crate::store::{Owner, TaskModel};
use crate::tasks::rev_2025_11_25;
use crate::tasks::{SessionTasks, TaskHandle};
use crate::wire::rev_2025_11_25 as routed;

impl Handler {
    /// The task `id` of the request's context and the owner the request acts for (its
    /// session, or its credentials in the stateless context).
    pub(crate) fn task_of(
        &self,
        id: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<FoundTask, McpError> {
        let session = self.context().ok_or_else(|| crate::tasks::not_found(id))?;
        let tasks = session
            .tasks
            .clone()
            .ok_or_else(|| crate::tasks::not_found(id))?;
        Ok(FoundTask {
            tasks,
            owner: session.owner(context),
            id: id.to_string(),
        })
    }

    /// The tasks of the session a `tasks/*` request names a task of, and its owner.
    pub(crate) fn session_tasks(
        &self,
        id: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<(Arc<SessionTasks>, Owner), McpError> {
        let session = self.session().ok_or_else(|| crate::tasks::not_found(id))?;
        let tasks = session
            .tasks
            .clone()
            .ok_or_else(|| crate::tasks::not_found(id))?;
        Ok((tasks, session.owner(context)))
    }

    /// Start a task-capable tool's call as a job of the session's owner and answer with
    /// the task (see `crate::tasks`).
    pub(crate) async fn start_task(
        &self,
        start: TaskStart<'_>,
    ) -> Result<CallToolResponse, McpError> {
        let TaskStart {
            session,
            tasks,
            name,
            arguments,
            tool,
            context,
            resumable,
            cannot_ask,
            model,
            reservation,
        } = start;
        // A place among the principal's tasks, held until the task settles.
        let place = self.admit_task(context)?;
        let registry = self.shared.registry.clone();
        // The task's result carries the call's cards as a direct answer would.
        let cards = super::apps::Cards::of(
            &registry,
            Some(&session.scope),
            context.client_capabilities().as_ref(),
            name,
            &arguments,
        );
        let answering = super::apps::Answering::new(tool, cards);
        let call = ToolCall::new(request_id_text(&context.id), name, arguments)
            .with_agent(session.scope.id());
        let forwarder = task_progress(context, resumable);
        let stateless = session.stateless();
        let approval = self.task_approval(session, context, cannot_ask, model, resumable);
        // A task outlives its request: its logs go to a session's client (2025-11-25),
        // never on a 2026-07-28 request's stream, which its answer closed.
        let log_level = (!resumable && session.stateless().is_none())
            .then(|| *crate::util::lock(&session.log_level));
        approval.answering_caller(
            context.client_capabilities(),
            Arc::new(LogSink::new(context.peer.clone(), log_level)),
        );
        let owner = session.owner(context);
        let (id, ttl) = stateless_id(stateless)?;
        let start = crate::tasks::TaskStart {
            id,
            owner: owner.clone(),
            model,
            ttl,
            spec: JobSpec::new(name, format!("tools/call {name}")),
        };
        let record = tasks
            .start(start, move |job: JobContext, task: TaskHandle| {
                run_in_task(job, task, call, approval, forwarder, registry, answering)
            })
            .await?;
        if let Some(place) = place {
            super::admission::hold_until_settled(place, &tasks, &owner, &record.id, &session.stop);
        }
        if let (Some(ids), Some(reservation)) = (stateless, reservation) {
            // A stateless task: known by a public id, bound to the request's principal,
            // kept for its time to live. Its client polls (its request's stream ends
            // with the response).
            ids.issue(reservation, record.id.clone(), owner, &tasks);
        } else if !resumable {
            crate::tasks::notify_when_settled(
                context.peer.clone(),
                tasks.clone(),
                owner,
                record.id.clone(),
                session.stop.clone(),
            );
        }
        Ok(CallToolResponse::Task(CreateTaskResult::new(
            crate::tasks::wire::detailed(&record).task,
        )))
    }

    /// The approval route of a task's call: inside a task of the extension a capable client
    /// is asked through the task on every revision (see `crate::tasks`), so only a client
    /// that cannot answer a form there keeps `cannot_ask`.
    fn task_approval(
        &self,
        session: &Session,
        context: &RequestContext<RoleServer>,
        cannot_ask: Option<&'static str>,
        model: TaskModel,
        resumable: bool,
    ) -> Arc<ClientApproval> {
        let cannot_ask = match model {
            TaskModel::Extension => {
                cannot_ask.filter(|_| !can_elicit_form(context.client_capabilities().as_ref()))
            }
            _ => cannot_ask,
        };
        ClientApproval::for_task(
            context.peer.clone(),
            self.shared.registry.clone(),
            Some(session.scope.clone()),
            cannot_ask,
            // A stateless task's client polls: its request's stream is gone.
            TaskLink::new(!resumable && session.stateless().is_none()),
        )
    }
}

/// Where a task's progress reports go besides its status message: on to the client for
/// the task's life, on revisions with plain notifications (not `resumable`) when the
/// request has a progress token.
fn task_progress(
    context: &RequestContext<RoleServer>,
    resumable: bool,
) -> Option<ProgressForwarder> {
    if resumable {
        return None;
    }
    context
        .meta
        .get_progress_token()
        .map(|token| ProgressForwarder::start(context.peer.clone(), token))
}

/// The public id and time to live of a task of the stateless context (`ids`), or
/// neither for a session's task (known by its job id, living as long as the session).
fn stateless_id(
    ids: Option<&Arc<crate::tasks::stateless::PublicIds>>,
) -> Result<(Option<String>, Option<std::time::Duration>), McpError> {
    let Some(ids) = ids else {
        return Ok((None, None));
    };
    let id = crate::tasks::stateless::random_id().ok_or_else(|| {
        McpError::internal_error(
            "no task id: the operating system's random source failed",
            None,
        )
    })?;
    Ok((Some(id), Some(ids.ttl())))
}

/// A task's call, run as its job: approvals through the task, progress to the task's
/// status message (and to the client, with `forwarder`); how it ended (its result as
/// `answering` makes it) and its text. A
/// panic the pipeline contained is a failure of the task (see [`crate::tasks::TaskEnd`]).
async fn run_in_task(
    job: JobContext,
    task: TaskHandle,
    call: ToolCall,
    approval: Arc<ClientApproval>,
    forwarder: Option<ProgressForwarder>,
    registry: dsh_runtime::Registry,
    answering: super::apps::Answering,
) -> (crate::tasks::TaskEnd, String) {
    let stop = job.stop_token().clone();
    approval.attach_task(task.clone(), stop.clone());
    let call = call.with_cancellation(stop);
    let forward = forwarder.clone();
    let reporter = ProgressReporter::new(move |p: Progress| {
        task.progress(p.progress, p.total, p.message.as_deref());
        if let Some(forward) = &forward {
            forward.report(p);
        }
    });
    let handler: Arc<dyn ApprovalHandler> = approval.clone();
    let caller: Arc<dyn dsh_runtime::caller::CallerHandler> = approval.clone();
    let result = dsh_runtime::with_progress(
        reporter,
        dsh_runtime::hooks::with_approval(
            handler,
            dsh_runtime::caller::with_caller(caller, registry.execute(call)),
        ),
    )
    .await;
    if let Some(forwarder) = forwarder {
        forwarder.finish().await;
    }
    let end = if result.error_code() == Some(dsh_runtime::PipelineCode::ToolPanicked) {
        crate::tasks::TaskEnd::Failed(result.text().to_string())
    } else {
        crate::tasks::TaskEnd::Result(answering.result(&result))
    };
    (end, result.text().to_string())
}

impl Handler {
    /// Answer a request of the 2025-11-25 task model rerouted by the transport (see
    /// `crate::tasks::rev_2025_11_25`).
    pub(crate) async fn rev_2025_11_25_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<Value, McpError> {
        let params = request.params.as_ref();
        match request.method.as_str() {
            routed::CALL => {
                self.rev_2025_11_25_call(params.cloned().unwrap_or(Value::Null), context)
                    .await
            }
            routed::LIST_TOOLS => {
                let paginated = match params {
                    Some(p) if !p.is_null() => Some(
                        serde_json::from_value::<PaginatedRequestParams>(p.clone()).map_err(
                            |e| McpError::invalid_params(format!("tools/list params: {e}"), None),
                        )?,
                    ),
                    _ => None,
                };
                // Untraced: this request's span is `tools/list` already.
                let listed = self.list_tools_of(paginated, &context)?;
                let mut value = serde_json::to_value(listed)
                    .map_err(|e| McpError::internal_error(e.to_string(), None))?;
                let session = self.context();
                let list = self.tool_list(session.as_deref());
                if let Some(tools) = value.get_mut("tools").and_then(Value::as_array_mut) {
                    for tool in tools.iter_mut().filter_map(Value::as_object_mut) {
                        let support = tool
                            .get("name")
                            .and_then(Value::as_str)
                            .and_then(|name| list.by_name.get(name))
                            .and_then(|&i| list.tools[i].as_ref())
                            .map_or(TaskSupport::Forbidden, |t| t.task_support);
                        let support = match support {
                            TaskSupport::Optional => "optional",
                            TaskSupport::Required => "required",
                            _ => continue,
                        };
                        tool.insert(
                            "execution".to_string(),
                            serde_json::json!({ "taskSupport": support }),
                        );
                    }
                }
                Ok(value)
            }
            routed::GET | routed::CANCEL | routed::RESULT => {
                let id = rev_2025_11_25::task_id(params)?;
                let (tasks, owner) = self.session_tasks(&id, &context)?;
                let record = tasks.get(&owner, &id).await?;
                match (request.method.as_str(), record.model) {
                    // A task of the extension keeps the extension's answers.
                    (routed::GET, TaskModel::Extension) => serde_json::to_value(
                        GetTaskResult::new(crate::tasks::wire::detailed(&record)),
                    )
                    .map_err(|e| McpError::internal_error(e.to_string(), None)),
                    (routed::CANCEL, TaskModel::Extension) => {
                        tasks.cancel(&owner, &id).await?;
                        Ok(Value::Object(serde_json::Map::new()))
                    }
                    (routed::GET, _) => rev_2025_11_25::get(&tasks, &owner, &id).await,
                    (routed::CANCEL, _) => rev_2025_11_25::cancel(&tasks, &owner, &id).await,
                    _ => rev_2025_11_25::result(&tasks, &owner, &id, context.ct.clone()).await,
                }
            }
            routed::LIST => match self.session_tasks("", &context) {
                Ok((tasks, owner)) => rev_2025_11_25::list(&tasks, &owner, params).await,
                Err(_) => Ok(serde_json::json!({ "tasks": [] })),
            },
            other => Err(McpError::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                format!("method not found: {other}"),
                None,
            )),
        }
    }

    /// A 2025-11-25 `tools/call` with `params.task`: a task-capable tool's call starts
    /// as a task of the session and is answered `{task}`; an unknown tool's call is
    /// answered as an ordinary call is; without a session's tasks, `-32601` (see
    /// `crate::tasks::rev_2025_11_25`).
    pub(crate) async fn rev_2025_11_25_call(
        &self,
        params: Value,
        context: RequestContext<RoleServer>,
    ) -> Result<Value, McpError> {
        rev_2025_11_25::check_task_metadata(&params)?;
        let request: CallToolRequestParams = serde_json::from_value(params)
            .map_err(|e| McpError::invalid_params(format!("tools/call params: {e}"), None))?;
        let session = self.session();
        let list = self.tool_list(session.as_deref());
        let tool = list
            .by_name
            .get(request.name.as_ref())
            .and_then(|&i| list.tools[i].clone());
        let tasks = session.as_ref().and_then(|s| s.tasks.clone());
        let (Some(session), Some(tasks)) = (session.as_ref(), tasks) else {
            // The transports reroute only a session's requests on a server with a job
            // runtime: never answered as a plain result the client would misread.
            let why = if session.is_none() {
                rev_2025_11_25::NotServed::NoSession
            } else {
                rev_2025_11_25::NotServed::NoJobs
            };
            return Err(rev_2025_11_25::not_served(request.name.as_ref(), why));
        };
        let Some(tool) = tool else {
            // An unknown tool: the ordinary call's error.
            // Untraced: this request's span is `tools/call` already.
            let response = self.call_tool_traced(request, context).await?;
            let serialized = match response {
                CallToolResponse::Complete(result) => serde_json::to_value(result),
                CallToolResponse::InputRequired(input) => serde_json::to_value(input),
                CallToolResponse::Task(created) => serde_json::to_value(created),
                _ => return Err(McpError::internal_error("the call had no result", None)),
            };
            return serialized.map_err(|e| McpError::internal_error(e.to_string(), None));
        };
        // The tool's scope and the principal's limits, before anything runs.
        let _permit = self.admit(request.name.as_ref(), Some(&tool.tool), &context)?;
        if !tool.task_support.allows_task() {
            return Err(rev_2025_11_25::method_not_found(format!(
                "tool `{}` cannot run as a task (its execution.taskSupport is \"forbidden\"): \
                 call it without `params.task`",
                request.name
            )));
        }
        let arguments = match raw_arguments(&context) {
            Some(text) => Arguments::Text(text),
            None => Arguments::Serde(Value::Object(request.arguments.clone().unwrap_or_default())),
        };
        let capable = can_elicit_form(context.client_capabilities().as_ref());
        let response = self
            .start_task(TaskStart {
                session,
                tasks: tasks.clone(),
                name: request.name.as_ref(),
                arguments,
                tool: Some(tool),
                context: &context,
                resumable: false,
                cannot_ask: cannot_ask(capable, false, true),
                model: TaskModel::Rev2025_11_25,
                reservation: None,
            })
            .await?;
        let CallToolResponse::Task(created) = response else {
            return Err(McpError::internal_error("no task was created", None));
        };
        let task = tasks
            .get(&session.owner(&context), &created.task.task_id)
            .await?;
        Ok(serde_json::json!({ "task": crate::tasks::wire::task_json(&task) }))
    }
}
