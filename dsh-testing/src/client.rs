//! [`TestClient`]: calls as a model host makes them, in memory.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde::Serialize;
use serde::de::DeserializeOwned;

use dsh_runtime::caller::{
    AskingCall, CallerAnswer, CallerError, CallerFuture, CallerHandler, CallerRequest, CallerRoute,
    FormAnswer, FormRequest, LogLevel, LogMessage, RequestKind, Root, SampleRequest,
    SampledMessage, UrlAnswer, with_caller,
};
use dsh_runtime::hooks::Approval;
use dsh_runtime::json::Value;
use dsh_runtime::{
    AgentScope, RegistrationGuard, Registry, Tool, ToolCall, ToolCallError, ToolResult,
};

/// Calls a registry the way a model host does: tool name plus JSON argument text, one at
/// a time or in a batch, typed calls from Rust, optionally from an agent scope, with the
/// answers to approval requests scripted per tool.
///
/// ```
/// use dsh_runtime::hooks::{pre_execute_fn, PreDecision};
/// use dsh_testing::TestClient;
/// use dsh_runtime::{tool, Registry};
///
/// /// Delete a file (pretend).
/// #[tool(destructive)]
/// async fn delete(path: String) -> String {
///     format!("deleted {path}")
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let registry = Registry::new();
/// registry.register(Delete).unwrap();
/// registry.add_pre_execute(pre_execute_fn(|_| Some(PreDecision::ask("sure?"))));
///
/// let client = TestClient::new(&registry);
/// client.reject("delete");
/// let refused = client.call("delete", r#"{"path":"a.txt"}"#).await;
/// assert_eq!(refused.code_str(), Some("APPROVAL_REJECTED"));
///
/// client.approve("delete");
/// let done = client.call("delete", r#"{"path":"a.txt"}"#).await;
/// assert_eq!(done.text(), "deleted a.txt");
/// assert_eq!(client.approvals_asked(), ["delete", "delete"]);
/// # });
/// ```
///
/// # What a call asks of its caller
///
/// Every call the client makes runs with a scripted [`CallerHandler`] installed around
/// it ([`with_caller`]), answering what the body asks through its
/// [`ToolContext`](dsh_runtime::ToolContext) ([`dsh_runtime::caller`]):
///
/// - forms ([`elicit`](dsh_runtime::ToolContext::elicit),
///   [`elicit_form`](dsh_runtime::ToolContext::elicit_form)): by tool
///   ([`answer_form`](TestClient::answer_form),
///   [`answer_form_once`](TestClient::answer_form_once)) or by predicate over the request
///   ([`answer_form_if`](TestClient::answer_form_if)); a form nothing answers is
///   dismissed ([`FormAnswer::Cancelled`]), as a user closing it would;
/// - URL requests likewise ([`answer_url`](TestClient::answer_url),
///   [`answer_url_once`](TestClient::answer_url_once),
///   [`answer_url_if`](TestClient::answer_url_if)); unanswered: [`UrlAnswer::Cancelled`];
/// - sampling: a fixed message or a closure over the request, per tool
///   ([`answer_sample`](TestClient::answer_sample),
///   [`answer_sample_with`](TestClient::answer_sample_with)) or for every tool
///   ([`answer_samples`](TestClient::answer_samples),
///   [`answer_samples_with`](TestClient::answer_samples_with)); unanswered: the caller
///   has no model ([`CallerError::Unsupported`], `CALLER_CAPABILITY_MISSING`);
/// - roots: [`set_roots`](TestClient::set_roots); unset: the caller has none to give
///   ([`CallerError::Unsupported`]);
/// - a tool's requests failed or left waiting forever:
///   [`fail_requests`](TestClient::fail_requests),
///   [`leave_unanswered`](TestClient::leave_unanswered) (the call's cancellation or
///   timeout ends the wait).
///
/// Every request is kept with the call and tool that asked
/// ([`requests`](TestClient::requests)), and so is every log message
/// ([`logs`](TestClient::logs), filtered by [`log_level`](TestClient::log_level)).
/// [`without_caller`](TestClient::without_caller) makes calls with no handler at all
/// (every request fails with `CALLER_UNAVAILABLE`).
///
/// A request is matched to the tool of the call that asks, sub-calls included, so
/// scripts by tool also answer the calls a tool or a code-mode program makes on the
/// caller's behalf.
///
/// ```
/// use dsh_runtime::caller::{Elicited, FormAnswer, LogLevel, SampleRequest, SampledMessage};
/// use dsh_runtime::content::ContentBlock;
/// use dsh_runtime::{tool, Registry, ToolContext, ToolError, ToolSchema};
/// use dsh_testing::TestClient;
/// use serde::Deserialize;
///
/// /// Where to deploy.
/// #[derive(ToolSchema, Deserialize)]
/// struct Target {
///     /// The branch to deploy.
///     branch: String,
/// }
///
/// /// Deploy a branch the user picks, with release notes from the caller's model.
/// #[tool]
/// async fn deploy(cx: ToolContext) -> Result<String, ToolError> {
///     cx.log(LogLevel::Info, "choosing a branch");
///     let Elicited::Accepted(target) = cx.elicit::<Target>("Which branch?").await? else {
///         return Ok("nothing deployed".into());
///     };
///     let notes = cx.sample(SampleRequest::new("Release notes?", 100)).await?;
///     Ok(format!("deploying {}: {}", target.branch, notes.text()))
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let registry = Registry::new();
/// let _deploy = registry.register(Deploy).unwrap();
/// let client = TestClient::new(&registry);
/// client
///     .answer_form_once("deploy", serde_json::json!({"branch": "main"}))
///     .answer_form_once("deploy", FormAnswer::Declined)
///     .answer_sample("deploy", SampledMessage::new(ContentBlock::text("all fixed"), "test-model"));
///
/// assert_eq!(client.call("deploy", "{}").await.text(), "deploying main: all fixed");
/// assert_eq!(client.call("deploy", "{}").await.text(), "nothing deployed");
/// // Nothing answers the third form: dismissed.
/// assert_eq!(client.call("deploy", "{}").await.text(), "nothing deployed");
///
/// let asked: Vec<_> = client.requests().iter().map(|r| r.message().map(str::to_string)).collect();
/// assert_eq!(asked.len(), 4); // three forms and one sampling request
/// assert_eq!(asked[0].as_deref(), Some("Which branch?"));
/// assert!(client.logs().iter().all(|l| l.tool() == Some("deploy") && l.level() == LogLevel::Info));
///
/// client.without_caller();
/// let nobody = client.call("deploy", "{}").await;
/// assert_eq!(nobody.code_str(), Some("CALLER_UNAVAILABLE"));
/// # });
/// ```
pub struct TestClient {
    registry: Registry,
    scope: Option<AgentScope>,
    script: Arc<Mutex<Script>>,
    /// Removed with the client: the script answers only while the client lives.
    handler: Mutex<Option<RegistrationGuard>>,
    next_id: AtomicU64,
    /// The scripted caller installed around every call.
    caller: Arc<ScriptedCaller>,
    /// Whether calls run without a caller handler ([`TestClient::without_caller`]).
    no_caller: AtomicBool,
}

/// Scripted approval answers.
#[derive(Default)]
pub(crate) struct Script {
    /// One-shot answers per tool, used first, in order.
    pub(crate) once: HashMap<String, VecDeque<Approval>>,
    /// The standing answer per tool.
    pub(crate) always: HashMap<String, Approval>,
    /// The tools asked about, in order.
    pub(crate) asked: Vec<String>,
}

impl Script {
    /// The answer for a request about `tool`: a one-shot answer, else the standing one,
    /// else [`Approval::Unavailable`].
    pub(crate) fn answer(&mut self, tool: &str) -> Approval {
        self.asked.push(tool.to_string());
        if let Some(a) = self.once.get_mut(tool).and_then(VecDeque::pop_front) {
            return a;
        }
        self.always
            .get(tool)
            .copied()
            .unwrap_or(Approval::Unavailable)
    }
}

/// Installs an approval handler answering from `script`.
pub(crate) fn scripted_approvals(
    registry: &Registry,
    script: Arc<Mutex<Script>>,
) -> RegistrationGuard {
    registry
        .set_approval_handler(dsh_runtime::hooks::approval_fn(
            move |request| match script.lock() {
                Ok(mut s) => s.answer(request.call.name()),
                Err(_) => dsh_runtime::hooks::Approval::Unavailable,
            },
        ))
        .unregister_on_drop()
}

impl std::fmt::Debug for TestClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestClient")
            .field("scope", &self.scope.as_ref().map(|s| s.id().get()))
            .finish_non_exhaustive()
    }
}

impl TestClient {
    /// A client calling from the registry's global view.
    pub fn new(registry: &Registry) -> Self {
        TestClient {
            registry: registry.clone(),
            scope: None,
            script: Arc::default(),
            handler: Mutex::new(None),
            next_id: AtomicU64::new(1),
            caller: Arc::default(),
            no_caller: AtomicBool::new(false),
        }
    }

    /// A client calling from `scope` (an agent: hooks see `call.agent()`, the scope's
    /// restrictions and tools apply).
    pub fn in_scope(scope: AgentScope) -> Self {
        let mut client = TestClient::new(scope.registry());
        client.scope = Some(scope);
        client
    }

    /// The registry called.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The agent scope calls come from, if any.
    pub fn scope(&self) -> Option<&AgentScope> {
        self.scope.as_ref()
    }

    /// Answer every approval request for `tool` with `answer` (after any one-shot
    /// answers). Installs this client's approval handler on the registry (replacing the
    /// one in use while the client lives). Unscripted tools get
    /// [`Approval::Unavailable`].
    pub fn answer(&self, tool: &str, answer: Approval) -> &Self {
        self.install();
        if let Ok(mut s) = self.script.lock() {
            s.always.insert(tool.to_string(), answer);
        }
        self
    }

    /// Answer the next approval request for `tool` with `answer`, once (queued after
    /// earlier one-shot answers).
    pub fn answer_once(&self, tool: &str, answer: Approval) -> &Self {
        self.install();
        if let Ok(mut s) = self.script.lock() {
            s.once
                .entry(tool.to_string())
                .or_default()
                .push_back(answer);
        }
        self
    }

    /// Approve every request for `tool` ([`Approval::AllowedOnce`] each time).
    pub fn approve(&self, tool: &str) -> &Self {
        self.answer(tool, Approval::AllowedOnce)
    }

    /// Reject every request for `tool` ([`Approval::Rejected`]: `APPROVAL_REJECTED`).
    pub fn reject(&self, tool: &str) -> &Self {
        self.answer(tool, Approval::Rejected)
    }

    /// The tools approval was asked for, in order.
    pub fn approvals_asked(&self) -> Vec<String> {
        self.script
            .lock()
            .map(|s| s.asked.clone())
            .unwrap_or_default()
    }

    fn install(&self) {
        if let Ok(mut h) = self.handler.lock()
            && h.is_none()
        {
            *h = Some(scripted_approvals(&self.registry, self.script.clone()));
        }
    }

    fn fresh_id(&self) -> String {
        format!("test-{}", self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    fn tool_call(&self, name: &str, arguments: impl Into<dsh_runtime::Arguments>) -> ToolCall {
        let call = ToolCall::new(self.fresh_id(), name, arguments);
        match &self.scope {
            Some(s) => call.with_agent(s.id()),
            None => call,
        }
    }

    /// Run `fut` (calls of the registry) with this client's caller handler installed,
    /// unless [`TestClient::without_caller`] was asked.
    async fn asking<F: Future>(&self, fut: F) -> F::Output {
        if self.no_caller.load(Ordering::Acquire) {
            fut.await
        } else {
            with_caller(self.caller_route(), fut).await
        }
    }

    /// One call: the tool name and the arguments as JSON text (as a model API sends
    /// them; text that is not JSON is `INVALID_ARGS`, as from a model).
    pub async fn call(&self, name: &str, arguments: &str) -> ToolResult {
        self.asking(
            self.registry
                .execute(self.tool_call(name, arguments.to_string())),
        )
        .await
    }

    /// One call with the arguments as a JSON value.
    pub async fn call_value(&self, name: &str, arguments: Value) -> ToolResult {
        self.asking(self.registry.execute(self.tool_call(name, arguments)))
            .await
    }

    /// A batch, as one model turn with several tool calls: parallel-safe calls overlap
    /// (up to `max_parallel`), the others run alone; results keep the calls' order. What
    /// each call asks of its caller is answered from the script, by its tool.
    pub async fn batch(&self, calls: &[(&str, &str)], max_parallel: usize) -> Vec<ToolResult> {
        let calls = calls
            .iter()
            .map(|(name, args)| self.tool_call(name, args.to_string()))
            .collect();
        self.asking(self.registry.execute_batch(calls, max_parallel))
            .await
    }

    /// A typed call of the tool of type `T`, through the full pipeline, returning its
    /// final value.
    pub async fn call_typed<T>(&self, args: T::Args) -> Result<T::Output, ToolCallError>
    where
        T: Tool,
        T::Args: Serialize,
        T::Output: DeserializeOwned,
    {
        match &self.scope {
            Some(s) => self.asking(s.call::<T>(args)).await,
            None => self.asking(self.registry.call::<T>(args)).await,
        }
    }
}

// ---------------------------------------------------------------------------------------
// What calls ask of their caller.

/// One request a call made of its caller, as the client's handler received it
/// ([`TestClient::requests`]; the argument of the predicates of
/// [`TestClient::answer_form_if`] and [`TestClient::answer_url_if`]).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Asked {
    /// The asking call's id.
    pub call_id: String,
    /// The asking call's tool, when the client saw the call start (every call made
    /// under its handler: its own, and the sub-calls they make).
    pub tool: Option<String>,
    /// The request.
    pub request: CallerRequest,
}

impl Asked {
    /// What the request is for.
    pub fn kind(&self) -> RequestKind {
        self.request.kind()
    }

    /// The asking call's tool, if known.
    pub fn tool(&self) -> Option<&str> {
        self.tool.as_deref()
    }

    /// The message shown to the user: a form's or a URL request's.
    pub fn message(&self) -> Option<&str> {
        match &self.request {
            CallerRequest::Form(form) => Some(&form.message),
            CallerRequest::Url(url) => Some(&url.message),
            _ => None,
        }
    }

    /// The form, when the request is one.
    pub fn form(&self) -> Option<&FormRequest> {
        match &self.request {
            CallerRequest::Form(form) => Some(form),
            _ => None,
        }
    }

    /// The names of the form's fields (its schema's `properties`), in order; empty when
    /// the request is not a form.
    pub fn form_fields(&self) -> Vec<String> {
        let Some(Value::Object(properties)) = self
            .form()
            .and_then(|form| form.requested_schema.get("properties"))
        else {
            return Vec::new();
        };
        properties.iter().map(|(key, _)| key.to_string()).collect()
    }

    /// The sampling request, when the request is one.
    pub fn sample(&self) -> Option<&SampleRequest> {
        match &self.request {
            CallerRequest::Sample(sample) => Some(sample),
            _ => None,
        }
    }
}

/// One log message of a call, as the client's handler received it
/// ([`TestClient::logs`]).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Logged {
    /// The logging call's id.
    pub call_id: String,
    /// The logging call's tool, if known (see [`Asked::tool`]).
    pub tool: Option<String>,
    /// The message.
    pub message: LogMessage,
}

impl Logged {
    /// The message's level.
    pub fn level(&self) -> LogLevel {
        self.message.level
    }

    /// The logging call's tool, if known.
    pub fn tool(&self) -> Option<&str> {
        self.tool.as_deref()
    }

    /// The message's text, when it is a string
    /// ([`ToolContext::log`](dsh_runtime::ToolContext::log)); `None` for structured data
    /// ([`ToolContext::log_data`](dsh_runtime::ToolContext::log_data)).
    pub fn text(&self) -> Option<&str> {
        match &self.message.data {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
}

/// What a scripted form answer can be given as: a [`FormAnswer`], or the content of an
/// accepted form as JSON (a `dsh_runtime::json::Value` or a `serde_json::Value`, e.g.
/// `serde_json::json!({"branch": "main"})`).
pub trait IntoFormAnswer {
    /// The answer.
    fn into_form_answer(self) -> FormAnswer;
}

impl IntoFormAnswer for FormAnswer {
    fn into_form_answer(self) -> FormAnswer {
        self
    }
}

impl IntoFormAnswer for Value {
    fn into_form_answer(self) -> FormAnswer {
        FormAnswer::Accepted(self)
    }
}

impl IntoFormAnswer for serde_json::Value {
    fn into_form_answer(self) -> FormAnswer {
        FormAnswer::Accepted(from_serde_json(&self))
    }
}

/// `value` as a runtime JSON value (a `-0` is kept as the runtime's parser reads it).
pub(crate) fn from_serde_json(value: &serde_json::Value) -> Value {
    dsh_runtime::json::from_serde(value)
        .ok()
        .or_else(|| dsh_runtime::json::parse(&value.to_string()).ok())
        .unwrap_or(Value::Null)
}

/// A predicate over a request.
type AskedIf = Arc<dyn Fn(&Asked) -> bool + Send + Sync>;

/// A sampling reply: a message, or one made from the request.
#[derive(Clone)]
enum SampleReply {
    Fixed(Box<SampledMessage>),
    With(Arc<dyn Fn(&SampleRequest) -> SampledMessage + Send + Sync>),
}

/// Scripted answers of one kind: once per tool, by predicate, standing per tool.
struct Answers<A> {
    once: HashMap<String, VecDeque<A>>,
    rules: Vec<(AskedIf, A)>,
    always: HashMap<String, A>,
}

impl<A> Default for Answers<A> {
    fn default() -> Self {
        Answers {
            once: HashMap::new(),
            rules: Vec::new(),
            always: HashMap::new(),
        }
    }
}

impl<A: Clone> Answers<A> {
    /// The tool's next one-shot answer (taken), if any.
    fn take_once(&mut self, tool: Option<&str>) -> Option<A> {
        self.once.get_mut(tool?).and_then(VecDeque::pop_front)
    }

    /// What answers when no one-shot answer does: the predicates (to try in order), then
    /// the tool's standing answer.
    fn standing(&self, tool: Option<&str>) -> (Vec<(AskedIf, A)>, Option<A>) {
        let always = tool.and_then(|t| self.always.get(t).cloned());
        (self.rules.clone(), always)
    }
}

/// What the scripted caller does with the requests of one tool, before any answer.
#[derive(Clone)]
enum Override {
    Fail(CallerError),
    Hold,
}

/// The scripted caller's state.
#[derive(Default)]
struct CallerScript {
    forms: Answers<FormAnswer>,
    urls: Answers<UrlAnswer>,
    samples: Answers<SampleReply>,
    /// The sampling reply for every tool, after the per-tool ones.
    every_sample: Option<SampleReply>,
    roots: Option<Vec<Root>>,
    overrides: HashMap<String, Override>,
    /// The least severe level kept (`None`: every level).
    level: Option<LogLevel>,
    asked: Vec<Asked>,
    logs: Vec<Logged>,
}

/// The [`CallerHandler`] a [`TestClient`] installs around its calls.
#[derive(Default)]
struct ScriptedCaller {
    script: Mutex<CallerScript>,
}

impl ScriptedCaller {
    fn script(&self) -> MutexGuard<'_, CallerScript> {
        self.script.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Where the answer to a request comes from, decided under the lock; predicates and
    /// closures run after it is released (so that they may panic, or use the client).
    fn plan(&self, asked: &Asked) -> Plan {
        let mut s = self.script();
        s.asked.push(asked.clone());
        let tool = asked.tool();
        if let Some(o) = tool.and_then(|t| s.overrides.get(t)) {
            return match o.clone() {
                Override::Fail(e) => Plan::Ready(Err(e)),
                Override::Hold => Plan::Hold,
            };
        }
        match &asked.request {
            CallerRequest::Form(_) => match s.forms.take_once(tool) {
                Some(a) => Plan::Ready(Ok(CallerAnswer::Form(a))),
                None => {
                    let (rules, always) = s.forms.standing(tool);
                    Plan::Form(rules, always)
                }
            },
            CallerRequest::Url(_) => match s.urls.take_once(tool) {
                Some(a) => Plan::Ready(Ok(CallerAnswer::Url(a))),
                None => {
                    let (rules, always) = s.urls.standing(tool);
                    Plan::Url(rules, always)
                }
            },
            CallerRequest::Sample(_) => match s.samples.take_once(tool) {
                Some(reply) => Plan::Sample(Vec::new(), Some(reply)),
                None => {
                    let (rules, always) = s.samples.standing(tool);
                    Plan::Sample(rules, always.or_else(|| s.every_sample.clone()))
                }
            },
            CallerRequest::Roots => Plan::Ready(match &s.roots {
                Some(roots) => Ok(CallerAnswer::Roots(roots.clone())),
                None => Err(CallerError::Unsupported {
                    capability: "roots",
                }),
            }),
            _ => Plan::Ready(Err(CallerError::Unsupported {
                capability: asked.kind().capability(),
            })),
        }
    }
}

/// How a request is answered (see [`ScriptedCaller::plan`]).
enum Plan {
    Ready(Result<CallerAnswer, CallerError>),
    Hold,
    Form(Vec<(AskedIf, FormAnswer)>, Option<FormAnswer>),
    Url(Vec<(AskedIf, UrlAnswer)>, Option<UrlAnswer>),
    Sample(Vec<(AskedIf, SampleReply)>, Option<SampleReply>),
}

/// The answer of the first rule that holds for `asked`, else `fallback`.
fn first_rule<A: Clone>(rules: &[(AskedIf, A)], asked: &Asked, fallback: Option<A>) -> Option<A> {
    rules
        .iter()
        .find(|(when, _)| when(asked))
        .map(|(_, a)| a.clone())
        .or(fallback)
}

impl CallerHandler for ScriptedCaller {
    fn request<'a>(
        &'a self,
        call: AskingCall<'a>,
        request: CallerRequest,
    ) -> CallerFuture<'a, Result<CallerAnswer, CallerError>> {
        Box::pin(async move {
            let asked = Asked {
                call_id: call.id.to_string(),
                tool: Some(call.tool.to_string()),
                request,
            };
            match self.plan(&asked) {
                Plan::Ready(answer) => answer,
                Plan::Hold => std::future::pending().await,
                Plan::Form(rules, always) => Ok(CallerAnswer::Form(
                    first_rule(&rules, &asked, always).unwrap_or(FormAnswer::Cancelled),
                )),
                Plan::Url(rules, always) => Ok(CallerAnswer::Url(
                    first_rule(&rules, &asked, always).unwrap_or(UrlAnswer::Cancelled),
                )),
                Plan::Sample(rules, always) => match first_rule(&rules, &asked, always) {
                    Some(SampleReply::Fixed(message)) => Ok(CallerAnswer::Sample(*message)),
                    Some(SampleReply::With(f)) => match asked.sample() {
                        Some(request) => Ok(CallerAnswer::Sample(f(request))),
                        None => Err(CallerError::Failed("not a sampling request".into())),
                    },
                    None => Err(CallerError::Unsupported {
                        capability: "sampling",
                    }),
                },
            }
        })
    }

    fn log(&self, call: AskingCall<'_>, message: LogMessage) {
        let mut s = self.script();
        if s.level.is_some_and(|least| message.level < least) {
            return;
        }
        s.logs.push(Logged {
            call_id: call.id.to_string(),
            tool: Some(call.tool.to_string()),
            message,
        });
    }

    fn logs_at(&self, level: LogLevel) -> bool {
        self.script().level.is_none_or(|least| level >= least)
    }
}

/// A sampling closure, shared.
fn sample_with(
    reply: impl Fn(&SampleRequest) -> SampledMessage + Send + Sync + 'static,
) -> SampleReply {
    SampleReply::With(Arc::new(reply))
}

impl TestClient {
    fn caller_script(&self) -> MutexGuard<'_, CallerScript> {
        self.caller.script()
    }

    /// This client's caller handler, for calls a test makes itself
    /// (`with_caller(client.caller_route(), registry.execute(call))`): they are answered
    /// from the same script and their requests and logs kept with the client's.
    pub fn caller_route(&self) -> CallerRoute {
        CallerRoute::from(self.caller.clone())
    }

    /// Make every later call with no caller handler at all: every request the body
    /// makes fails with [`CallerError::NoCaller`] (`CALLER_UNAVAILABLE`), its logs go
    /// nowhere. (Approvals are unaffected.)
    pub fn without_caller(&self) -> &Self {
        self.no_caller.store(true, Ordering::Release);
        self
    }

    /// Answer every form `tool` asks with `answer` (after its one-shot answers and the
    /// predicates): a [`FormAnswer`], or the content of an accepted form as JSON.
    pub fn answer_form(&self, tool: &str, answer: impl IntoFormAnswer) -> &Self {
        self.caller_script()
            .forms
            .always
            .insert(tool.to_string(), answer.into_form_answer());
        self
    }

    /// Answer the next form `tool` asks with `answer`, once (queued after earlier
    /// one-shot answers; before any other rule).
    pub fn answer_form_once(&self, tool: &str, answer: impl IntoFormAnswer) -> &Self {
        self.caller_script()
            .forms
            .once
            .entry(tool.to_string())
            .or_default()
            .push_back(answer.into_form_answer());
        self
    }

    /// Answer every form `when` holds for with `answer` (predicates are tried in the
    /// order added, after the one-shot answers and before the per-tool answers). The
    /// predicate sees the request: its message and schema ([`Asked::form`]), its tool.
    pub fn answer_form_if(
        &self,
        when: impl Fn(&Asked) -> bool + Send + Sync + 'static,
        answer: impl IntoFormAnswer,
    ) -> &Self {
        self.caller_script()
            .forms
            .rules
            .push((Arc::new(when), answer.into_form_answer()));
        self
    }

    /// Answer every URL request of `tool` with `answer` (after its one-shot answers and
    /// the predicates).
    pub fn answer_url(&self, tool: &str, answer: UrlAnswer) -> &Self {
        self.caller_script()
            .urls
            .always
            .insert(tool.to_string(), answer);
        self
    }

    /// Answer the next URL request of `tool` with `answer`, once.
    pub fn answer_url_once(&self, tool: &str, answer: UrlAnswer) -> &Self {
        self.caller_script()
            .urls
            .once
            .entry(tool.to_string())
            .or_default()
            .push_back(answer);
        self
    }

    /// Answer every URL request `when` holds for with `answer` (tried as
    /// [`TestClient::answer_form_if`]'s predicates are).
    pub fn answer_url_if(
        &self,
        when: impl Fn(&Asked) -> bool + Send + Sync + 'static,
        answer: UrlAnswer,
    ) -> &Self {
        self.caller_script()
            .urls
            .rules
            .push((Arc::new(when), answer));
        self
    }

    /// Answer every sampling request of `tool` with `reply`.
    pub fn answer_sample(&self, tool: &str, reply: SampledMessage) -> &Self {
        self.caller_script()
            .samples
            .always
            .insert(tool.to_string(), SampleReply::Fixed(Box::new(reply)));
        self
    }

    /// Answer every sampling request of `tool` with what `reply` makes of it (a
    /// panicking closure is a caller that failed: `CALLER_FAILED`).
    pub fn answer_sample_with(
        &self,
        tool: &str,
        reply: impl Fn(&SampleRequest) -> SampledMessage + Send + Sync + 'static,
    ) -> &Self {
        self.caller_script()
            .samples
            .always
            .insert(tool.to_string(), sample_with(reply));
        self
    }

    /// Answer the next sampling request of `tool` with `reply`, once.
    pub fn answer_sample_once(&self, tool: &str, reply: SampledMessage) -> &Self {
        self.caller_script()
            .samples
            .once
            .entry(tool.to_string())
            .or_default()
            .push_back(SampleReply::Fixed(Box::new(reply)));
        self
    }

    /// Answer every sampling request `when` holds for with `reply` (tried as
    /// [`TestClient::answer_form_if`]'s predicates are).
    pub fn answer_sample_if(
        &self,
        when: impl Fn(&Asked) -> bool + Send + Sync + 'static,
        reply: SampledMessage,
    ) -> &Self {
        self.caller_script()
            .samples
            .rules
            .push((Arc::new(when), SampleReply::Fixed(Box::new(reply))));
        self
    }

    /// Answer the sampling requests of every tool with `reply` (after each tool's own
    /// answers).
    pub fn answer_samples(&self, reply: SampledMessage) -> &Self {
        self.caller_script().every_sample = Some(SampleReply::Fixed(Box::new(reply)));
        self
    }

    /// Answer the sampling requests of every tool with what `reply` makes of them
    /// (after each tool's own answers).
    pub fn answer_samples_with(
        &self,
        reply: impl Fn(&SampleRequest) -> SampledMessage + Send + Sync + 'static,
    ) -> &Self {
        self.caller_script().every_sample = Some(sample_with(reply));
        self
    }

    /// The caller's roots, as every roots request gets them.
    pub fn set_roots(&self, roots: Vec<Root>) -> &Self {
        self.caller_script().roots = Some(roots);
        self
    }

    /// Fail every request `tool` makes of its caller with `error` (its code reaches the
    /// body, and the result when the body uses `?`), whatever else is scripted.
    pub fn fail_requests(&self, tool: &str, error: CallerError) -> &Self {
        self.caller_script()
            .overrides
            .insert(tool.to_string(), Override::Fail(error));
        self
    }

    /// Leave every request `tool` makes of its caller unanswered: it waits until the
    /// call is cancelled (its timeout, its caller), then fails with
    /// [`CallerError::Cancelled`].
    pub fn leave_unanswered(&self, tool: &str) -> &Self {
        self.caller_script()
            .overrides
            .insert(tool.to_string(), Override::Hold);
        self
    }

    /// Keep only the log messages at `level` or more severe (as MCP's
    /// `logging/setLevel`); bodies skip the others. By default every level is kept.
    pub fn log_level(&self, level: LogLevel) -> &Self {
        self.caller_script().level = Some(level);
        self
    }

    /// Every request calls made of their caller, in the order they were asked.
    pub fn requests(&self) -> Vec<Asked> {
        self.caller_script().asked.clone()
    }

    /// Every log message of the calls, in the order they were logged.
    pub fn logs(&self) -> Vec<Logged> {
        self.caller_script().logs.clone()
    }

    /// Forget the requests and log messages kept so far (the script stays).
    pub fn clear_caller_record(&self) -> &Self {
        let mut s = self.caller_script();
        s.asked.clear();
        s.logs.clear();
        self
    }
}
