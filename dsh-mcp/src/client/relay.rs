//! The client's side of what an imported server asks during a call: its requests
//! (`elicitation/create`, `sampling/createMessage`, `roots/list`), its logs and its
//! progress reach the [`CallerHandler`](dsh_runtime::caller::CallerHandler) of the call
//! that invoked the imported tool.
//!
//! An imported call registers its [`ToolContext`] in the connection's table of calls in
//! flight ([`ClientRelay::enter`]) for as long as its request is open, with the request's id
//! and progress token once rmcp assigned them. A server request or log is matched to a
//! call by the HTTP response stream it came on (the call's own POST), and otherwise
//! (stdio; the standalone stream) by elimination: when every call in flight answers to
//! the same caller, that caller is asked. Progress is matched by its token. A request
//! that matches no call goes to the connection's fallback handler
//! ([`ClientBuilder::caller`](crate::ClientBuilder::caller)), or is refused with an
//! error naming why: the server's request never waits on nobody.
//!
//! On revision 2026-07-28 the server asks inside the call's result instead
//! (`InputRequiredResult`): see [`ClientRelay::answer_input_requests`].

// Sampling, roots and logging are deprecated by revision 2026-07-28 (SEP-2577), which
// keeps them through `InputRequiredResult`; they are relayed on both revisions.
#![allow(deprecated)]

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use dsh_runtime::ToolContext;
use dsh_runtime::caller::{
    Caller, CallerAnswer, CallerError, CallerRequest, CallerRoute, FormAnswer, FormRequest,
    LogLevel, Question, RequestKind, SampleRequest, UrlAnswer, UrlRequest,
};
use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationAction, ErrorCode, ErrorData, InputRequest,
    InputRequests, InputResponses, ListRootsResult, LoggingLevel, LoggingMessageNotificationParam,
    ProgressNotificationParam, ProgressToken, RequestId,
};
use rmcp::service::{InboundStreamOrigin, NotificationContext, RequestContext, RoleClient};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// The request kinds a client relays, in the order capabilities are declared.
pub(crate) type Kinds = BTreeSet<KindKey>;

/// A [`RequestKind`] as a set key (the runtime's kind is not `Ord`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum KindKey {
    Form,
    Url,
    Sample,
    Roots,
}

impl KindKey {
    pub(crate) fn of(kind: RequestKind) -> Option<KindKey> {
        match kind {
            RequestKind::Form => Some(KindKey::Form),
            RequestKind::Url => Some(KindKey::Url),
            RequestKind::Sample => Some(KindKey::Sample),
            RequestKind::Roots => Some(KindKey::Roots),
            _ => None,
        }
    }
}

/// The capabilities declaring `kinds`.
pub(crate) fn capabilities(kinds: &Kinds) -> ClientCapabilities {
    let mut value = json!({});
    let mut elicitation = serde_json::Map::new();
    if kinds.contains(&KindKey::Form) {
        elicitation.insert("form".into(), json!({}));
    }
    if kinds.contains(&KindKey::Url) {
        elicitation.insert("url".into(), json!({}));
    }
    if !elicitation.is_empty() {
        value["elicitation"] = Value::Object(elicitation);
    }
    if kinds.contains(&KindKey::Sample) {
        value["sampling"] = json!({});
    }
    if kinds.contains(&KindKey::Roots) {
        value["roots"] = json!({ "listChanged": false });
    }
    serde_json::from_value(value).unwrap_or_default()
}

/// One imported call in flight.
struct Call {
    key: u64,
    request: Option<RequestId>,
    progress: Option<ProgressToken>,
    cx: ToolContext,
}

/// The state behind a [`ClientRelay`].
struct Inner {
    info: ClientConfig,
    kinds: Kinds,
    fallback: Option<CallerRoute>,
    request_timeout: Option<std::time::Duration>,
    calls: Mutex<Calls>,
    next: AtomicU64,
}

/// The calls in flight, and progress that came before its call's token was known.
#[derive(Default)]
struct Calls {
    open: Vec<Call>,
    early: std::collections::VecDeque<ProgressNotificationParam>,
}

/// Progress notifications kept for calls whose token is not known yet: rmcp hands the
/// token over once the request is on its way, and the server may report at once.
const EARLY_PROGRESS: usize = 64;

/// The client handler of a connection made with
/// [`ClientBuilder`](super::ClientBuilder): it declares the client's identity and
/// capabilities and relays the server's requests, logs and progress to the calls that
/// caused them.
///
/// An imported call is in the connection's table of calls in flight for as long as its
/// request is open. A server request (`elicitation/create`, `sampling/createMessage`,
/// `roots/list`) or log is matched to a call by the HTTP response stream it came on (the
/// call's own POST), and otherwise (stdio; the standalone stream) by elimination: when
/// every call in flight answers to the same caller, that caller is asked. Progress is
/// matched by its token. A request that matches no call goes to the connection's handler
/// ([`ClientBuilder::caller`](super::ClientBuilder::caller)), or is refused with an error
/// saying why: the server's request never waits on nobody. On revision 2026-07-28 the
/// server asks inside the call's result instead (`InputRequiredResult`), and the call's
/// caller answers each round.
#[derive(Clone)]
pub struct ClientRelay {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for ClientRelay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientRelay")
            .field("client", &self.inner.info.client_info.name)
            .field("kinds", &self.inner.kinds)
            .finish_non_exhaustive()
    }
}

/// A call's place in the table of calls in flight: removed when dropped.
pub(crate) struct Entered {
    relay: ClientRelay,
    key: u64,
}

impl Entered {
    /// Record the id and progress token rmcp gave the call's request.
    pub(crate) fn bind(&self, request: RequestId, progress: ProgressToken) {
        let (cx, early) = {
            let mut calls = crate::util::lock(&self.relay.inner.calls);
            let Calls { open, early } = &mut *calls;
            let Some(call) = open.iter_mut().find(|c| c.key == self.key) else {
                return;
            };
            call.request = Some(request);
            call.progress = Some(progress.clone());
            let (mine, others) = early.drain(..).partition(|p| p.progress_token == progress);
            *early = others;
            (call.cx.clone(), mine)
        };
        for p in early {
            cx.report_progress(p.progress, p.total, p.message.as_deref());
        }
    }
}

impl Drop for Entered {
    fn drop(&mut self) {
        let mut calls = crate::util::lock(&self.relay.inner.calls);
        calls.open.retain(|c| c.key != self.key);
        if calls.open.is_empty() {
            calls.early.clear();
        }
    }
}

impl ClientRelay {
    pub(crate) fn new(
        info: ClientConfig,
        kinds: Kinds,
        fallback: Option<CallerRoute>,
        request_timeout: Option<std::time::Duration>,
    ) -> ClientRelay {
        ClientRelay {
            inner: Arc::new(Inner {
                info,
                kinds,
                fallback,
                request_timeout,
                calls: Mutex::new(Calls::default()),
                next: AtomicU64::new(0),
            }),
        }
    }

    /// The timeout of each request to the server, if one was set.
    pub(crate) fn request_timeout(&self) -> Option<std::time::Duration> {
        self.inner.request_timeout
    }

    /// Whether the client relays requests of `kind` (declared the capability).
    pub(crate) fn relays(&self, kind: RequestKind) -> bool {
        KindKey::of(kind).is_some_and(|k| self.inner.kinds.contains(&k))
    }

    /// Register a call in flight until the returned guard is dropped.
    pub(crate) fn enter(&self, cx: &ToolContext) -> Entered {
        let key = self.inner.next.fetch_add(1, Ordering::Relaxed);
        crate::util::lock(&self.inner.calls).open.push(Call {
            key,
            request: None,
            progress: None,
            cx: cx.clone(),
        });
        Entered {
            relay: self.clone(),
            key,
        }
    }

    /// The call a server message belongs to: the call whose request stream carried it,
    /// else the calls in flight when they all answer to one caller.
    fn call_for(&self, origin: Option<&InboundStreamOrigin>) -> Result<ToolContext, Unmatched> {
        let calls = &crate::util::lock(&self.inner.calls).open;
        if let Some(InboundStreamOrigin::OutboundRequest(id)) = origin
            && let Some(call) = calls.iter().find(|c| c.request.as_ref() == Some(id))
        {
            return Ok(call.cx.clone());
        }
        let Some(first) = calls.first() else {
            return Err(Unmatched::NoCall);
        };
        let same = |c: &Call| match (c.cx.caller(), first.cx.caller()) {
            (Some(a), Some(b)) => Arc::ptr_eq(a.handler(), b.handler()),
            (None, None) => true,
            _ => false,
        };
        if calls.iter().all(same) {
            Ok(first.cx.clone())
        } else {
            Err(Unmatched::Ambiguous(calls.len()))
        }
    }

    /// The caller to ask for a server request: the matched call's, else the fallback.
    fn caller_for(&self, origin: Option<&InboundStreamOrigin>) -> Result<Caller, ErrorData> {
        let matched = self.call_for(origin);
        if let Ok(cx) = &matched
            && cx.caller().is_some()
        {
            return Ok(cx.as_caller());
        }
        if let Some(route) = &self.inner.fallback {
            return Ok(Caller::new(
                Some(route.clone()),
                "",
                "",
                CancellationToken::new(),
            ));
        }
        Err(refusal(match matched {
            Ok(cx) => format!(
                "the call of tool {:?} that caused this request has no caller handler to answer it",
                cx.name()
            ),
            Err(Unmatched::NoCall) => {
                "this request came outside any tool call and the client has no handler for it"
                    .to_string()
            }
            Err(Unmatched::Ambiguous(n)) => format!(
                "this request cannot be matched to one of the {n} tool calls in flight, which answer to different callers"
            ),
        }))
    }

    async fn ask(
        &self,
        origin: Option<&InboundStreamOrigin>,
        request: CallerRequest,
    ) -> Result<CallerAnswer, ErrorData> {
        if !self.relays(request.kind()) {
            return Err(undeclared(request.kind()));
        }
        let caller = self.caller_for(origin)?;
        caller.request(request).await.map_err(caller_refusal)
    }

    /// Answer the `inputRequests` of an `InputRequiredResult` (revision 2026-07-28)
    /// through the call's caller (see [`answer_all`]), refusing kinds the client did
    /// not declare.
    pub(crate) async fn answer_input_requests(
        &self,
        cx: &ToolContext,
        requests: InputRequests,
    ) -> Result<InputResponses, CallerError> {
        answer_all(cx, requests, &|kind| self.relays(kind)).await
    }
}

/// Answer the `inputRequests` of an `InputRequiredResult` (revision 2026-07-28)
/// through the call's caller, all asked together: the responses to send back.
///
/// # Errors
///
/// The first request the caller could not answer, or one of a kind not `allowed`.
pub(crate) async fn answer_all(
    cx: &ToolContext,
    requests: InputRequests,
    allowed: &(dyn Fn(RequestKind) -> bool + Sync),
) -> Result<InputResponses, CallerError> {
    let mut keys = Vec::with_capacity(requests.len());
    let mut questions = Vec::with_capacity(requests.len());
    for (key, request) in requests {
        let request = from_input_request(request)?;
        if !allowed(request.kind()) {
            return Err(CallerError::Unsupported {
                capability: request.kind().capability(),
            });
        }
        questions.push(Question::new(request).with_key(key.clone()));
        keys.push(key);
    }
    let answers = cx.as_caller().ask_all(questions).await;
    let mut responses = InputResponses::new();
    for (key, answer) in keys.into_iter().zip(answers) {
        responses.insert(key, answer_json(answer?)?);
    }
    Ok(responses)
}

/// Why a server message matched no call.
enum Unmatched {
    NoCall,
    Ambiguous(usize),
}

/// The error sent upstream for a request nobody here can answer.
fn refusal(why: String) -> ErrorData {
    ErrorData::new(ErrorCode::INVALID_REQUEST, why, None)
}

/// The protocol's error for a request whose capability the client did not declare,
/// naming the elicitation mode (a client may declare forms and not URLs).
fn undeclared(kind: RequestKind) -> ErrorData {
    let capability = match kind {
        RequestKind::Form => "elicitation.form",
        RequestKind::Url => "elicitation.url",
        other => other.capability(),
    };
    ErrorData::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!("the client did not declare the `{capability}` capability"),
        None,
    )
}

/// The error sent upstream when the call's caller could not answer.
fn caller_refusal(e: CallerError) -> ErrorData {
    let code = match e {
        CallerError::Unsupported { .. } => ErrorCode::METHOD_NOT_FOUND,
        _ => ErrorCode::INVALID_REQUEST,
    };
    ErrorData::new(code, e.to_string(), Some(json!({ "code": e.code() })))
}

fn origin_of(extensions: &rmcp::model::Extensions) -> Option<&InboundStreamOrigin> {
    extensions.get::<InboundStreamOrigin>()
}

/// A server's elicitation as the runtime's request.
pub(crate) fn from_elicit(params: ElicitRequestParams) -> Result<CallerRequest, CallerError> {
    let invalid = |e: String| CallerError::Failed(format!("the server's elicitation: {e}"));
    Ok(match params {
        ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } => {
            let schema = serde_json::to_value(&requested_schema)
                .map_err(|e| invalid(e.to_string()))
                .and_then(|v| {
                    dsh_runtime::json::from_serde(&v).map_err(|e| invalid(e.to_string()))
                })?;
            CallerRequest::Form(FormRequest::new(message, schema))
        }
        ElicitRequestParams::UrlElicitationParams {
            message,
            url,
            elicitation_id,
            ..
        } => CallerRequest::Url(UrlRequest::new(message, url, elicitation_id)),
        _ => {
            return Err(invalid(
                "an elicitation mode this client does not know".into(),
            ));
        }
    })
}

/// A server's sampling request as the runtime's request.
pub(crate) fn from_sample(
    params: &CreateMessageRequestParams,
) -> Result<CallerRequest, CallerError> {
    let invalid = |e: String| CallerError::Failed(format!("the server's sampling request: {e}"));
    let mut value = serde_json::to_value(params).map_err(|e| invalid(e.to_string()))?;
    // A message's content may be one block or an array of them: one block is read.
    if let Some(Value::Array(messages)) = value.get_mut("messages") {
        for message in messages {
            if let Some(content) = message.get_mut("content")
                && let Value::Array(blocks) = content
                && blocks.len() == 1
            {
                let block = blocks.remove(0);
                *content = block;
            }
        }
    }
    let value = dsh_runtime::json::from_serde(&value).map_err(|e| invalid(e.to_string()))?;
    let request: SampleRequest =
        dsh_runtime::json::from_value(&value).map_err(|e| invalid(e.to_string()))?;
    Ok(CallerRequest::Sample(request))
}

fn from_input_request(request: InputRequest) -> Result<CallerRequest, CallerError> {
    match request {
        InputRequest::Elicitation(r) => from_elicit(r.params),
        InputRequest::CreateMessage(r) => from_sample(&r.params),
        InputRequest::ListRoots(_) => Ok(CallerRequest::Roots),
        _ => Err(CallerError::Failed(
            "the server asked for input of a kind this client does not know".into(),
        )),
    }
}

/// An answer as the JSON of its MCP result (`ElicitResult`, `CreateMessageResult`,
/// `ListRootsResult`).
pub(crate) fn answer_json(answer: CallerAnswer) -> Result<Value, CallerError> {
    let failed = |e: serde_json::Error| CallerError::InvalidAnswer(e.to_string());
    match answer {
        CallerAnswer::Form(form) => serde_json::to_value(elicit_result(form)).map_err(failed),
        CallerAnswer::Url(url) => {
            let action = match url {
                UrlAnswer::Accepted => ElicitationAction::Accept,
                UrlAnswer::Cancelled => ElicitationAction::Cancel,
                _ => ElicitationAction::Decline,
            };
            serde_json::to_value(ElicitResult::new(action)).map_err(failed)
        }
        CallerAnswer::Sample(message) => {
            let value = dsh_runtime::json::to_serde(
                &dsh_runtime::json::to_value(&message)
                    .map_err(|e| CallerError::InvalidAnswer(e.to_string()))?,
            );
            // Checked against MCP's shape before it is sent.
            let result: CreateMessageResult = serde_json::from_value(value).map_err(failed)?;
            serde_json::to_value(result).map_err(failed)
        }
        CallerAnswer::Roots(roots) => {
            let roots = serde_json::to_value(roots).map_err(failed)?;
            Ok(json!({ "roots": roots }))
        }
        _ => Err(CallerError::InvalidAnswer(
            "an answer of an unknown kind".into(),
        )),
    }
}

fn elicit_result(form: FormAnswer) -> ElicitResult {
    match form {
        FormAnswer::Accepted(content) => ElicitResult::new(ElicitationAction::Accept)
            .with_content(dsh_runtime::json::to_serde(&content)),
        FormAnswer::Cancelled => ElicitResult::new(ElicitationAction::Cancel),
        _ => ElicitResult::new(ElicitationAction::Decline),
    }
}

fn level_of(level: LoggingLevel) -> LogLevel {
    crate::caller::logs::level_of(level)
}

impl rmcp::ClientHandler for ClientRelay {
    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let request = from_sample(&params).map_err(|e| refusal(e.to_string()))?;
        let answer = self.ask(origin_of(&context.extensions), request).await?;
        let value = answer_json(answer).map_err(caller_refusal)?;
        serde_json::from_value(value).map_err(|e| refusal(e.to_string()))
    }

    async fn list_roots(
        &self,
        context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let answer = self
            .ask(origin_of(&context.extensions), CallerRequest::Roots)
            .await?;
        let value = answer_json(answer).map_err(caller_refusal)?;
        serde_json::from_value(value).map_err(|e| refusal(e.to_string()))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let request = from_elicit(request).map_err(|e| refusal(e.to_string()))?;
        let answer = self.ask(origin_of(&context.extensions), request).await?;
        let value = answer_json(answer).map_err(caller_refusal)?;
        serde_json::from_value(value).map_err(|e| refusal(e.to_string()))
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let cx = {
            let mut calls = crate::util::lock(&self.inner.calls);
            let found = calls
                .open
                .iter()
                .find(|c| c.progress.as_ref() == Some(&params.progress_token))
                .map(|c| c.cx.clone());
            // A call whose token is not known yet may be the one: kept until it is.
            if found.is_none() && calls.open.iter().any(|c| c.progress.is_none()) {
                if calls.early.len() == EARLY_PROGRESS {
                    calls.early.pop_front();
                }
                calls.early.push_back(params.clone());
            }
            found
        };
        if let Some(cx) = cx {
            cx.report_progress(params.progress, params.total, params.message.as_deref());
        }
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        context: NotificationContext<RoleClient>,
    ) {
        let caller = match self.call_for(origin_of(&context.extensions)) {
            Ok(cx) if cx.caller().is_some() => cx.as_caller(),
            _ => match &self.inner.fallback {
                Some(route) => Caller::new(Some(route.clone()), "", "", CancellationToken::new()),
                None => return,
            },
        };
        let data = dsh_runtime::json::from_serde(&params.data)
            .unwrap_or_else(|_| dsh_runtime::json::Value::from(params.data.to_string()));
        caller.log_data(level_of(params.level), params.logger.as_deref(), &data);
    }

    fn get_info(&self) -> ClientConfig {
        self.inner.info.clone()
    }
}
