//! Asking the MCP client's user: the approval route of a session's calls.
//!
//! When pre-execute policy answers `ask` for a call from an MCP session and no approval
//! handler of the registry answered, the server sends the client an `elicitation/create`
//! request: a one-field form (a required boolean `approve`) whose message names the
//! tool, a one-line summary of the call, the call it was made for (a code-mode
//! program's tool call names its `run_code` call: the program waits for the answer) and
//! the policy's reason. `accept` with
//! `approve: true` runs the call; `accept` with `false` and `decline` are
//! `APPROVAL_REJECTED`; `cancel` is `APPROVAL_CANCELLED`. A client that did not declare
//! the (form) elicitation capability cannot be asked: the call gets the denial of a call
//! with no approval handler (`POLICY_DENIED`, the policy's reason), its text saying so.
//!
//! Inside a task of the tasks extension (on every revision) the question is not sent as
//! a request: the task goes `input_required`, `tasks/get` shows the same form as an
//! input request under a key unique over the task's life (`approval-1`, `approval-2`,
//! …), and `tasks/update` answers it, with the same meaning of the answers; stopping the
//! task's job (`tasks/cancel`, the session's end) cancels the approval (see
//! [`crate::tasks`]). Inside a 2025-11-25 task the request goes to the client as above,
//! with the related-task `_meta` (`io.modelcontextprotocol/related-task`), and the task
//! is `input_required` until it is answered.

pub(crate) mod instance;
pub(crate) mod keys;
pub(crate) mod resume;

use std::sync::{Arc, OnceLock};

use dsh_runtime::ParentCall;
use dsh_runtime::caller::{
    AskingCall, CallerAnswer, CallerError, CallerFuture, CallerHandler, CallerRequest, LogLevel,
    LogMessage, RequestKind,
};
use dsh_runtime::cards::CallView;
use dsh_runtime::hooks::{Approval, ApprovalHandler, ApprovalRequest, HookFuture};
use dsh_runtime::{AgentScope, Registry, ToolError};
use futures_util::StreamExt as _;
use rmcp::model::{
    CancelledNotificationParam, ClientCapabilities, ClientResult, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationSchema, InputRequest, MetaObject, Request,
    RequestMetaObject, ServerRequest,
};
use rmcp::service::PeerRequestOptions;
use rmcp::{Peer, RoleServer};
use tokio_util::sync::CancellationToken;

use crate::caller::logs::LogSink;
use crate::store::{Change, TaskModel, Wake};
use crate::tasks::TaskHandle;

/// The form's one field.
pub(crate) const APPROVE_FIELD: &str = "approve";

/// The longest call summary in an approval message, in characters.
const SUMMARY_CHARS: usize = 160;

/// The approval route of one call from an MCP session: its client.
pub(crate) struct ClientApproval {
    peer: Peer<RoleServer>,
    registry: Registry,
    scope: Option<AgentScope>,
    /// Why the client cannot be asked, if it cannot: the note its denial carries.
    cannot_ask: Option<&'static str>,
    /// The task the call runs as, if it runs as one.
    task: Option<TaskLink>,
    /// What the client declared (for the requests of a task's body to its caller), once
    /// known.
    capabilities: OnceLock<Option<ClientCapabilities>>,
    /// Where a task's body's logs go.
    logs: OnceLock<Arc<LogSink>>,
}

/// What the approval of a task's call needs of its task.
pub(crate) struct TaskLink {
    /// Push the task's state when it starts and stops waiting (sessions with plain
    /// notifications).
    notify: bool,
    /// The task and its job's stop token (known once the call started).
    task: OnceLock<(TaskHandle, CancellationToken)>,
}

impl TaskLink {
    /// The link of a task's call to its task (`notify`: push its state to the client).
    pub(crate) fn new(notify: bool) -> Self {
        TaskLink {
            notify,
            task: OnceLock::new(),
        }
    }

    /// The job's stop token, once known.
    fn stop(&self) -> Option<&CancellationToken> {
        self.task.get().map(|(_, stop)| stop)
    }

    /// Tell the client the task's state (when this session gets plain notifications).
    async fn notify(&self, peer: &Peer<RoleServer>) {
        if let (true, Some((task, _))) = (self.notify, self.task.get()) {
            task.notify(peer).await;
        }
    }
}

/// Wait until `call` or (when known) `stop` is cancelled.
async fn ended(call: &CancellationToken, stop: Option<&CancellationToken>) {
    match stop {
        Some(stop) => {
            tokio::select! {
                () = call.cancelled() => {}
                () = stop.cancelled() => {}
            }
        }
        None => call.cancelled().await,
    }
}

impl ClientApproval {
    pub(crate) fn new(
        peer: Peer<RoleServer>,
        registry: Registry,
        scope: Option<AgentScope>,
        cannot_ask: Option<&'static str>,
    ) -> Arc<Self> {
        Self::routed(peer, registry, scope, cannot_ask, None)
    }

    /// The approval route of a call that runs as a task (see the module docs).
    pub(crate) fn for_task(
        peer: Peer<RoleServer>,
        registry: Registry,
        scope: Option<AgentScope>,
        cannot_ask: Option<&'static str>,
        task: TaskLink,
    ) -> Arc<Self> {
        Self::routed(peer, registry, scope, cannot_ask, Some(task))
    }

    fn routed(
        peer: Peer<RoleServer>,
        registry: Registry,
        scope: Option<AgentScope>,
        cannot_ask: Option<&'static str>,
        task: Option<TaskLink>,
    ) -> Arc<Self> {
        Arc::new(ClientApproval {
            peer,
            registry,
            scope,
            cannot_ask,
            task,
            capabilities: OnceLock::new(),
            logs: OnceLock::new(),
        })
    }

    /// Answer the requests of the call's body to its caller too (see [`crate::caller`]):
    /// those the client declared `capabilities` for, its logs going to `logs`.
    pub(crate) fn answering_caller(
        &self,
        capabilities: Option<ClientCapabilities>,
        logs: Arc<LogSink>,
    ) {
        let _ = self.capabilities.set(capabilities);
        let _ = self.logs.set(logs);
    }

    /// The task's call has started, with `stop` as its job's stop token (a route
    /// without a task ignores this).
    pub(crate) fn attach_task(&self, task: TaskHandle, stop: CancellationToken) {
        if let Some(link) = &self.task {
            let _ = link.task.set((task, stop));
        }
    }

    async fn ask(&self, request: ApprovalRequest<'_>) -> Result<Approval, ToolError> {
        let name = request.call.name();
        if let Some(why) = self.cannot_ask {
            return Ok(Approval::UnavailableBecause(why));
        }
        let message = approval_message(
            name,
            &self.summary(name, request.call.arguments()),
            request.via,
            request.reason,
        );
        let mut params = approval_form(name, message)?;
        let cancel = request.call.cancellation();
        let Some((link, (task, _))) = self
            .task
            .as_ref()
            .and_then(|link| Some((link, link.task.get()?)))
        else {
            return self.ask_client(name, params, cancel).await;
        };
        if task.model() == TaskModel::Extension {
            return Ok(self.ask_in_task(link, task, params, cancel).await);
        }
        // A 2025-11-25 task: the request goes to the client, related to the task, and
        // the task is `input_required` while it is out.
        set_related_task(&mut params, task.id());
        let asked = task
            .change(Change::Ask {
                request: input_request(&params),
                in_band: false,
            })
            .await
            .ok()
            .and_then(|applied| applied.key);
        link.notify(&self.peer).await;
        let answer = self.ask_client(name, params, cancel).await;
        if let Some(key) = asked {
            let _ = task.change(Change::Withdraw { key }).await;
            if matches!(answer, Ok(Approval::AllowedOnce | Approval::Rejected)) {
                // Answered: the task works again (a cancelled one ends, and says so).
                link.notify(&self.peer).await;
            }
        }
        answer
    }

    /// Ask with an input request of the task, answered by `tasks/update`.
    async fn ask_in_task(
        &self,
        link: &TaskLink,
        task: &TaskHandle,
        params: ElicitRequestParams,
        cancel: &CancellationToken,
    ) -> Approval {
        let answer = self
            .ask_input_in_task(link, task, input_request(&params), cancel)
            .await
            .and_then(|answer| serde_json::from_value::<ElicitResult>(answer).ok());
        match answer {
            Some(answer) => approval_of(&answer),
            // Cancelled (the call, or the task's job), or withdrawn.
            None => Approval::Cancelled,
        }
    }

    /// Put `request` (an input request, as JSON) to the client through the task: it is
    /// `input_required` until `tasks/update` answers it. The answer, or `None` when the
    /// call or the task's job stopped first, or it was withdrawn.
    async fn ask_input_in_task(
        &self,
        link: &TaskLink,
        task: &TaskHandle,
        request: serde_json::Value,
        cancel: &CancellationToken,
    ) -> Option<serde_json::Value> {
        // Subscribed before asking: the answer cannot pass unseen.
        let mut wakes = task.subscribe().await.ok()?;
        let asked = task
            .change(Change::Ask {
                request,
                in_band: true,
            })
            .await;
        let key = asked.ok().and_then(|applied| applied.key)?;
        link.notify(&self.peer).await;
        let answered = async {
            while let Some(wake) = wakes.next().await {
                if let Wake::Answered { key: k, answer } = wake
                    && k == key
                {
                    return Some(answer);
                }
            }
            None
        };
        let answer = tokio::select! {
            answer = answered => answer,
            () = ended(cancel, link.stop()) => None,
        };
        let _ = task.change(Change::Withdraw { key }).await;
        if answer.is_some() {
            // Answered: the task works again (a cancelled one ends, and says so).
            link.notify(&self.peer).await;
        }
        answer
    }

    /// The route's answer to a request of the task's body to its caller (see
    /// [`crate::caller`]): through the task (`tasks/update`) in a task of the extension,
    /// as a request to the client related to the task on 2025-11-25.
    async fn ask_caller(&self, request: CallerRequest) -> Result<CallerAnswer, CallerError> {
        let kind = request.kind();
        if !crate::caller::can_answer(self.capabilities.get().and_then(Option::as_ref), kind) {
            return Err(CallerError::Unsupported {
                capability: kind.capability(),
            });
        }
        let Some((link, (task, _))) = self
            .task
            .as_ref()
            .and_then(|link| Some((link, link.task.get()?)))
        else {
            return Err(CallerError::Failed(
                "the call's task has not started".to_string(),
            ));
        };
        let input = crate::caller::input_request(&request)?;
        let input = serde_json::to_value(&input).map_err(|e| CallerError::Failed(e.to_string()))?;
        let never = CancellationToken::new();
        if task.model() == TaskModel::Extension {
            let answer = self
                .ask_input_in_task(link, task, input, &never)
                .await
                .ok_or(CallerError::Cancelled)?;
            return crate::caller::read_answer(kind, &answer);
        }
        // A 2025-11-25 task: the request goes to the client, related to the task, and the
        // task is `input_required` while it is out.
        let mut sent: ServerRequest = match serde_json::from_value::<ServerRequest>(input.clone()) {
            Ok(sent) => sent,
            Err(e) => return Err(CallerError::Failed(e.to_string())),
        };
        relate_request(&mut sent, task.id());
        let asked = task
            .change(Change::Ask {
                request: input,
                in_band: false,
            })
            .await
            .ok()
            .and_then(|applied| applied.key);
        link.notify(&self.peer).await;
        let answer = self.send_to_client(sent).await;
        if let Some(key) = asked {
            let _ = task.change(Change::Withdraw { key }).await;
            link.notify(&self.peer).await;
        }
        read_client_result(kind, answer?)
    }

    /// Send `request` to the client and wait for its result.
    async fn send_to_client(&self, request: ServerRequest) -> Result<ClientResult, CallerError> {
        let handle = self
            .peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .map_err(|e| CallerError::Failed(e.to_string()))?;
        handle
            .await_response()
            .await
            .map_err(|e| CallerError::Failed(e.to_string()))
    }

    /// Send the `elicitation/create` request and wait for its answer (or the call's
    /// end, which withdraws it).
    async fn ask_client(
        &self,
        name: &str,
        params: ElicitRequestParams,
        cancel: &CancellationToken,
    ) -> Result<Approval, ToolError> {
        let failed = |e: &dyn std::fmt::Display| {
            ToolError::new(format!(
                "asking the MCP client's user to approve tool {}: {e}",
                quoted(name)
            ))
        };
        let handle = self
            .peer
            .send_cancellable_request(
                ServerRequest::ElicitRequest(Request::new(params)),
                PeerRequestOptions::no_options(),
            )
            .await
            .map_err(|e| failed(&e))?;
        let id = handle.id.clone();
        let stop = self.task.as_ref().and_then(TaskLink::stop);
        let answer = tokio::select! {
            answer = handle.await_response() => answer,
            () = ended(cancel, stop) => {
                // The call is over: withdraw the question.
                let _ = self
                    .peer
                    .notify_cancelled(CancelledNotificationParam::new(
                        Some(id),
                        Some("the call was cancelled".to_string()),
                    ))
                    .await;
                return Ok(Approval::Cancelled);
            }
        };
        match answer.map_err(|e| failed(&e))? {
            ClientResult::ElicitResult(answer) => Ok(approval_of(&answer)),
            _ => Err(failed(&"the client answered with another result")),
        }
    }

    fn summary(&self, name: &str, arguments: &dsh_runtime::json::Value) -> String {
        let card = match &self.scope {
            Some(scope) => scope.present_call(name, arguments),
            None => self.registry.present_call(name, arguments),
        };
        summary(card, name, arguments)
    }
}

/// The call card's title, or (for the generic card) the tool and its arguments, on one
/// line.
pub(crate) fn summary(card: CallView, name: &str, arguments: &dsh_runtime::json::Value) -> String {
    let line = match card {
        CallView::Generic { title, .. } if title != name => title,
        CallView::Terminal { title, .. } | CallView::Diff { title, .. } => title,
        _ => format!("{name} {arguments}"),
    };
    one_line(&line, SUMMARY_CHARS)
}

/// The one-field approval form for a call of `name`.
pub(crate) fn approval_form(name: &str, message: String) -> Result<ElicitRequestParams, ToolError> {
    let schema = ElicitationSchema::builder()
        .required_bool_with(APPROVE_FIELD, |b| {
            b.title("Approve")
                .description(format!("Run this call of tool {}", quoted(name)))
        })
        .build()
        .map_err(|e| ToolError::new(format!("approval form for tool {}: {e}", quoted(name))))?;
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema: schema,
    })
}

/// The input request of an approval form, as a task record keeps it.
fn input_request(params: &ElicitRequestParams) -> serde_json::Value {
    serde_json::to_value(InputRequest::Elicitation(Request::new(params.clone())))
        .unwrap_or(serde_json::Value::Null)
}

/// Relate an elicitation request to the task it is made for (2025-11-25:
/// `_meta["io.modelcontextprotocol/related-task"] = {"taskId": …}`).
fn set_related_task(params: &mut ElicitRequestParams, task_id: &str) {
    let meta = match params {
        ElicitRequestParams::FormElicitationParams { meta, .. }
        | ElicitRequestParams::UrlElicitationParams { meta, .. } => meta,
        #[allow(unreachable_patterns)]
        _ => return,
    };
    let meta = meta.get_or_insert_with(|| RequestMetaObject(MetaObject::default()));
    meta.0.0.insert(
        crate::tasks::wire::RELATED_TASK.to_string(),
        serde_json::json!({ "taskId": task_id }),
    );
}

/// Relate a request of a 2025-11-25 task's body to its task (the related-task `_meta`).
#[allow(deprecated)] // sampling: deprecated by 2026-07-28, served on 2025-11-25
fn relate_request(request: &mut ServerRequest, task_id: &str) {
    let meta = serde_json::json!({ "taskId": task_id });
    if let ServerRequest::ElicitRequest(r) = request {
        set_related_task(&mut r.params, task_id);
        return;
    }
    let extensions = match request {
        ServerRequest::CreateMessageRequest(r) => &mut r.params.meta,
        _ => return,
    };
    let extensions = extensions.get_or_insert_with(|| RequestMetaObject(MetaObject::default()));
    extensions
        .0
        .0
        .insert(crate::tasks::wire::RELATED_TASK.to_string(), meta);
}

/// The answer of a client's result to a request of `kind`.
fn read_client_result(
    kind: RequestKind,
    result: ClientResult,
) -> Result<CallerAnswer, CallerError> {
    match result {
        ClientResult::ElicitResult(result) => Ok(crate::caller::elicit_answer(kind, result)),
        other => {
            let value = serde_json::to_value(&other)
                .map_err(|e| CallerError::InvalidAnswer(e.to_string()))?;
            crate::caller::read_answer(kind, &value)
        }
    }
}

/// The approval an elicitation answer gives.
pub(crate) fn approval_of(answer: &ElicitResult) -> Approval {
    match answer.action {
        ElicitationAction::Accept => {
            let approved = answer
                .content
                .as_ref()
                .and_then(|c| c.get(APPROVE_FIELD))
                .and_then(serde_json::Value::as_bool);
            if approved == Some(true) {
                Approval::AllowedOnce
            } else {
                Approval::Rejected
            }
        }
        ElicitationAction::Cancel => Approval::Cancelled,
        // Decline, and any action a later revision adds: not a yes.
        _ => Approval::Rejected,
    }
}

/// Whether client capabilities include form elicitation (a bare `elicitation: {}` means
/// form, as the protocol has it).
pub(crate) fn can_elicit_form(capabilities: Option<&ClientCapabilities>) -> bool {
    capabilities
        .and_then(|c| c.elicitation.as_ref())
        .is_some_and(|e| e.form.is_some() || e.url.is_none())
}

impl ApprovalHandler for ClientApproval {
    fn request<'a>(
        &'a self,
        request: ApprovalRequest<'a>,
    ) -> HookFuture<'a, Result<Approval, ToolError>> {
        HookFuture::new(self.ask(request))
    }
}

/// The message of the approval form: the tool, the call's summary, the call it was made
/// for (a code-mode program's `run_code` call) and the policy's reason.
pub(crate) fn approval_message(
    name: &str,
    summary: &str,
    via: Option<&ParentCall>,
    reason: Option<&str>,
) -> String {
    let mut message = format!("Allow tool {} to run?\nCall: {summary}", quoted(name));
    if let Some(via) = via {
        message.push_str(&format!(
            "\nVia: tool {}, call {}",
            quoted(&via.name),
            quoted(&one_line(&via.call_id, SUMMARY_CHARS))
        ));
    }
    if let Some(reason) = reason {
        message.push_str("\nReason: ");
        message.push_str(&one_line(reason, SUMMARY_CHARS));
    }
    message
}

pub(crate) fn quoted(name: &str) -> String {
    serde_json::to_string(name).unwrap_or_else(|_| name.to_string())
}

/// `text` on one line (whitespace runs as one space), cut to `max` characters with `…`.
fn one_line(text: &str, max: usize) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if joined.chars().count() <= max {
        return joined;
    }
    let mut cut: String = joined.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

impl CallerHandler for ClientApproval {
    fn request<'a>(
        &'a self,
        _call: AskingCall<'a>,
        request: CallerRequest,
    ) -> CallerFuture<'a, Result<CallerAnswer, CallerError>> {
        Box::pin(self.ask_caller(request))
    }

    fn log(&self, _call: AskingCall<'_>, message: LogMessage) {
        if let Some(logs) = self.logs.get() {
            logs.log(message);
        }
    }

    fn logs_at(&self, level: LogLevel) -> bool {
        self.logs.get().is_some_and(|logs| logs.accepts(level))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_joins_and_cuts_on_char_boundaries() {
        assert_eq!(one_line("a\n  b\tc", 10), "a b c");
        assert_eq!(one_line("ééééé", 3), "éé…");
    }

    #[test]
    fn message_names_tool_summary_and_reason() {
        assert_eq!(
            approval_message("bash", "echo hi", None, Some("bash asks")),
            "Allow tool \"bash\" to run?\nCall: echo hi\nReason: bash asks"
        );
        assert_eq!(
            approval_message("x", "x {}", None, None),
            "Allow tool \"x\" to run?\nCall: x {}"
        );
        let program = ParentCall::new("run_code", "7");
        assert_eq!(
            approval_message("bash", "echo hi", Some(&program), Some("bash asks")),
            "Allow tool \"bash\" to run?\nCall: echo hi\nVia: tool \"run_code\", call \"7\"\nReason: bash asks"
        );
    }
}
