//! An in-memory MCP client/server pair for tests (feature `mcp`): an [`McpServer`]
//! on one end of a `tokio::io::duplex` pipe and rmcp's client on the other, so a test
//! drives a server as a real client would, without processes or ports.
//!
//! ```
//! use dsh_mcp::McpServer;
//! use dsh_testing::mcp::McpTestClient;
//! use dsh_runtime::{tool, Registry};
//!
//! /// Add two numbers.
//! #[tool]
//! async fn add(a: i64, b: i64) -> i64 { a + b }
//!
//! # tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(async {
//! let registry = Registry::new();
//! let _add = registry.register(Add).unwrap();
//! let client = McpTestClient::connect(&McpServer::new(registry)).await.unwrap();
//! let tools = client.list_tools().await.unwrap();
//! assert_eq!(tools[0].name, "add");
//! // The call, and its structuredContent checked against the tool's outputSchema.
//! let result = client.call_checked("add", serde_json::json!({"a": 2, "b": 3})).await.unwrap();
//! assert_eq!(result.structured_content, Some(serde_json::json!({"result": 5})));
//! client.close().await;
//! # });
//! ```

// This client answers MCP 2025-11-25's sampling, roots and logging, which rmcp marks
// deprecated (SEP-2577, in favour of the 2026-07-28 revision).
#![allow(deprecated)]

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig,
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationCapability, FormElicitationCapability, Implementation,
    ListRootsResult, LoggingMessageNotificationParam, RootsCapabilities, SamplingCapability,
    SetLevelRequestParams, Tool, UrlElicitationCapability,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService, ServiceExt};
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::Value;

use dsh_mcp::McpServer;
use dsh_runtime::caller::{
    FormAnswer, LogLevel, LogMessage, Root, SampleRequest, SampledMessage, UrlAnswer,
};

use crate::client::IntoFormAnswer;

/// The buffer size of each direction of the in-memory pipe.
const PIPE_BYTES: usize = 1 << 16;

/// rmcp's client connected to an [`McpServer`] over an in-memory pipe.
///
/// [`McpTestClient::connect`] declares no capabilities, so a call that asks for approval
/// is denied (`POLICY_DENIED`). [`McpTestClient::connect_user`] declares elicitation
/// (forms and URLs), sampling and roots, and answers each approval form from a script,
/// as `dsh_testing::TestClient` does in process: by tool
/// ([`approve`](McpTestClient::approve), [`reject`](McpTestClient::reject),
/// [`cancel`](McpTestClient::cancel), [`answer_once`](McpTestClient::answer_once)) or
/// by predicate ([`answer_if`](McpTestClient::answer_if)); every form is recorded
/// ([`elicitations`](McpTestClient::elicitations)).
///
/// The same user answers what tools ask of their caller over MCP:
///
/// - tools' own forms (`elicitation/create`, form mode, not an approval form): by
///   predicate over the request ([`answer_form_if`](McpTestClient::answer_form_if):
///   its message, its schema) or by tool ([`answer_form`](McpTestClient::answer_form),
///   [`answer_form_once`](McpTestClient::answer_form_once)). A tool's form does not
///   name its tool on the wire: it is taken to be the tool of the one
///   [`call`](McpTestClient::call) in flight, and is unknown while several are. A
///   form nothing answers is dismissed;
/// - URL requests (`elicitation/create`, URL mode) likewise
///   ([`answer_url`](McpTestClient::answer_url),
///   [`answer_url_if`](McpTestClient::answer_url_if)); unanswered: dismissed;
/// - `sampling/createMessage`: [`answer_sample`](McpTestClient::answer_sample),
///   [`answer_sample_with`](McpTestClient::answer_sample_with) (unscripted: a JSON-RPC
///   error), every request kept ([`sampling_requests`](McpTestClient::sampling_requests));
/// - `roots/list`: [`set_roots`](McpTestClient::set_roots) (unset: no roots);
/// - `notifications/message`: kept ([`logs`](McpTestClient::logs)); the server's level
///   is set with [`set_log_level`](McpTestClient::set_log_level).
///
/// [`McpTestClient::connect_with`] declares only some of these
/// ([`UserCapabilities`]), for tests of a client without them.
///
/// ```
/// use dsh_mcp::McpServer;
/// use dsh_testing::mcp::McpTestClient;
/// use dsh_runtime::{tool, Registry};
///
/// /// Close a ticket.
/// #[tool(ask = "closing is final")]
/// async fn close_ticket(id: u64) -> u64 { id }
///
/// # tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(async {
/// let registry = Registry::new();
/// let _t = registry.register(CloseTicket).unwrap();
/// let client = McpTestClient::connect_user(&McpServer::new(registry)).await.unwrap();
/// client.approve("close_ticket");
/// let r = client.call("close_ticket", serde_json::json!({"id": 7})).await.unwrap();
/// assert_eq!(r.is_error, Some(false));
/// let asked = client.elicitations();
/// assert_eq!(asked[0].tool.as_deref(), Some("close_ticket"));
/// assert!(asked[0].message.ends_with("Reason: closing is final"));
/// client.close().await;
/// # });
/// ```
pub struct McpTestClient {
    client: RunningService<RoleClient, TestUser>,
    server: tokio::task::JoinHandle<()>,
    script: Arc<Mutex<Script>>,
}

/// How the scripted user answers an approval form ([`McpTestClient::connect_user`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum McpAnswer {
    /// Accept the form with `approve: true`: the call runs.
    Approve,
    /// Accept the form with `approve: false`: `APPROVAL_REJECTED`.
    Reject,
    /// Decline the form: `APPROVAL_REJECTED`.
    Decline,
    /// Dismiss the form: `APPROVAL_CANCELLED`.
    Cancel,
}

/// What an elicitation the server sent is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ElicitationKind {
    /// An approval form (`Allow tool "<name>" to run?`): the server asking before a call.
    Approval,
    /// A form of a tool's own ([`ToolContext::elicit`](dsh_runtime::ToolContext::elicit)).
    Form,
    /// A URL the user is sent to
    /// ([`ToolContext::elicit_url`](dsh_runtime::ToolContext::elicit_url)).
    Url,
}

/// One elicitation the server sent to the scripted user.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Elicitation {
    /// The tool the elicitation is about: for an approval form, from its message
    /// (`Allow tool "<name>" to run?`); for a tool's own form or URL request, the tool
    /// of the one [`McpTestClient::call`] in flight when it came (`None` while several
    /// are, or none).
    pub tool: Option<String>,
    /// The form's message.
    pub message: String,
    /// The whole request as sent (`elicitation/create` params).
    pub params: Value,
    /// How it was answered. For a tool's own form or a URL request, the action:
    /// [`McpAnswer::Approve`] stands for accept (see [`Elicitation::content`]).
    pub answer: McpAnswer,
    /// What it is.
    pub kind: ElicitationKind,
    /// The content sent back with an accepted form.
    pub content: Option<Value>,
}

impl Elicitation {
    /// The form's schema (`requestedSchema`), when it is a form.
    pub fn requested_schema(&self) -> Option<&Value> {
        self.params.get("requestedSchema")
    }

    /// The names of the form's fields (its schema's `properties`); empty when it is not
    /// a form.
    pub fn form_fields(&self) -> Vec<String> {
        self.requested_schema()
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// The URL, when it is a URL request.
    pub fn url(&self) -> Option<&str> {
        self.params.get("url").and_then(Value::as_str)
    }
}

/// Which client capabilities the scripted user declares ([`McpTestClient::connect_with`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct UserCapabilities {
    /// `elicitation` (form mode): approval forms and tools' own forms.
    pub forms: bool,
    /// `elicitation.url`: URL requests.
    pub urls: bool,
    /// `sampling`.
    pub sampling: bool,
    /// `roots`.
    pub roots: bool,
}

impl UserCapabilities {
    /// Every capability the scripted user answers (what
    /// [`McpTestClient::connect_user`] declares).
    pub fn all() -> Self {
        UserCapabilities {
            forms: true,
            urls: true,
            sampling: true,
            roots: true,
        }
    }

    /// No capability (what [`McpTestClient::connect`] declares).
    pub fn none() -> Self {
        UserCapabilities {
            forms: false,
            urls: false,
            sampling: false,
            roots: false,
        }
    }

    /// With or without form elicitation.
    pub fn forms(mut self, on: bool) -> Self {
        self.forms = on;
        self
    }

    /// With or without URL elicitation.
    pub fn urls(mut self, on: bool) -> Self {
        self.urls = on;
        self
    }

    /// With or without sampling.
    pub fn sampling(mut self, on: bool) -> Self {
        self.sampling = on;
        self
    }

    /// With or without roots.
    pub fn roots(mut self, on: bool) -> Self {
        self.roots = on;
        self
    }

    /// The capabilities as MCP declares them.
    fn declared(self) -> ClientCapabilities {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = match (self.forms, self.urls) {
            (false, false) => None,
            // A bare `elicitation: {}` means forms.
            (true, false) => Some(ElicitationCapability::default()),
            (forms, true) => {
                let mut e = ElicitationCapability::new().with_url(UrlElicitationCapability::new());
                if forms {
                    e = e.with_form(FormElicitationCapability::new());
                }
                Some(e)
            }
        };
        if self.sampling {
            capabilities.sampling = Some(SamplingCapability::default());
        }
        if self.roots {
            capabilities.roots = Some(RootsCapabilities::default());
        }
        capabilities
    }
}

type Predicate = Box<dyn Fn(&Elicitation) -> bool + Send>;

/// A sampling reply: a message, or one made from the request.
#[derive(Clone)]
enum SampleReply {
    Fixed(Box<SampledMessage>),
    With(Arc<dyn Fn(&SampleRequest) -> SampledMessage + Send + Sync>),
}

/// Scripted answers of one kind to tools' own elicitations: once per tool, by
/// predicate, standing per tool.
struct Answers<A> {
    once: HashMap<String, VecDeque<A>>,
    rules: Vec<(Predicate, A)>,
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
    /// The tool's one-shot answer, then the predicates in the order added, then the
    /// tool's standing answer.
    fn answer(&mut self, e: &Elicitation) -> Option<A> {
        if let Some(tool) = &e.tool
            && let Some(a) = self.once.get_mut(tool).and_then(VecDeque::pop_front)
        {
            return Some(a);
        }
        if let Some((_, a)) = self.rules.iter().find(|(p, _)| p(e)) {
            return Some(a.clone());
        }
        e.tool.as_ref().and_then(|t| self.always.get(t).cloned())
    }
}

/// The scripted user's answers.
#[derive(Default)]
struct Script {
    once: HashMap<String, VecDeque<McpAnswer>>,
    rules: Vec<(Predicate, McpAnswer)>,
    always: HashMap<String, McpAnswer>,
    asked: Vec<Elicitation>,
    /// Tools' own forms.
    forms: Answers<FormAnswer>,
    /// URL requests.
    urls: Answers<UrlAnswer>,
    sample: Option<SampleReply>,
    sampling_asked: Vec<Value>,
    roots: Vec<Root>,
    roots_asked: usize,
    logs: Vec<LogMessage>,
    /// The tools of the calls in flight ([`McpTestClient::call`]).
    in_flight: Vec<String>,
}

impl Script {
    /// Once-answers for the tool first, then the predicates in the order added, then the
    /// tool's standing answer; [`McpAnswer::Cancel`] when nothing matches.
    fn answer(&mut self, e: &Elicitation) -> McpAnswer {
        if let Some(tool) = &e.tool
            && let Some(a) = self.once.get_mut(tool).and_then(VecDeque::pop_front)
        {
            return a;
        }
        if let Some((_, a)) = self.rules.iter().find(|(p, _)| p(e)) {
            return *a;
        }
        e.tool
            .as_ref()
            .and_then(|t| self.always.get(t).copied())
            .unwrap_or(McpAnswer::Cancel)
    }

    /// Answer `e` (and note the answer in it): an approval form as [`Script::answer`]
    /// has it; a tool's own form or a URL request from its own script first, then the
    /// approval predicates ([`McpTestClient::answer_if`], as before there was a script
    /// of their own; the per-tool approval answers are for approval forms only), else
    /// dismissed.
    fn respond(&mut self, e: &mut Elicitation) -> ElicitResult {
        let scripted = match e.kind {
            ElicitationKind::Approval => None,
            ElicitationKind::Form => self.forms.answer(e).map(|a| match a {
                FormAnswer::Accepted(content) => (
                    McpAnswer::Approve,
                    Some(dsh_runtime::json::to_serde(&content)),
                ),
                FormAnswer::Declined => (McpAnswer::Decline, None),
                _ => (McpAnswer::Cancel, None),
            }),
            ElicitationKind::Url => self.urls.answer(e).map(|a| match a {
                UrlAnswer::Accepted => (McpAnswer::Approve, None),
                UrlAnswer::Declined => (McpAnswer::Decline, None),
                _ => (McpAnswer::Cancel, None),
            }),
        };
        let (answer, content) = scripted.unwrap_or_else(|| {
            let answer = match e.kind {
                ElicitationKind::Approval => self.answer(e),
                _ => self
                    .rules
                    .iter()
                    .find(|(p, _)| p(e))
                    .map_or(McpAnswer::Cancel, |(_, a)| *a),
            };
            let content = match answer {
                McpAnswer::Approve => Some(serde_json::json!({"approve": true})),
                McpAnswer::Reject => Some(serde_json::json!({"approve": false})),
                McpAnswer::Decline | McpAnswer::Cancel => None,
            };
            (answer, content)
        });
        e.answer = answer;
        e.content = content.clone();
        let action = match answer {
            McpAnswer::Approve | McpAnswer::Reject => ElicitationAction::Accept,
            McpAnswer::Decline => ElicitationAction::Decline,
            McpAnswer::Cancel => ElicitationAction::Cancel,
        };
        let result = ElicitResult::new(action);
        match content {
            Some(content) => result.with_content(content),
            None => result,
        }
    }

    /// The tool of the one call in flight.
    fn calling(&self) -> Option<String> {
        match self.in_flight.as_slice() {
            [one] => Some(one.clone()),
            _ => None,
        }
    }

    /// The reply to a sampling request, kept with the others.
    fn sample(&mut self, params: &CreateMessageRequestParams) -> Result<SampleReply, ErrorData> {
        self.sampling_asked
            .push(serde_json::to_value(params).unwrap_or(Value::Null));
        self.sample.clone().ok_or_else(|| {
            ErrorData::internal_error(
                "the scripted user has no sampling reply (McpTestClient::answer_sample)",
                None,
            )
        })
    }
}

/// `params` read as the runtime's sampling request.
fn sample_request(params: &CreateMessageRequestParams) -> Result<SampleRequest, ErrorData> {
    let json = serde_json::to_value(params)
        .map_err(|e| ErrorData::invalid_params(format!("sampling request: {e}"), None))?;
    let value = crate::client::from_serde_json(&json);
    dsh_runtime::json::from_value::<SampleRequest>(&value).map_err(|e| {
        ErrorData::invalid_params(
            format!("the scripted user cannot read the sampling request: {e}"),
            None,
        )
    })
}

/// `message` as MCP's `CreateMessageResult`.
fn sample_result(message: &SampledMessage) -> Result<CreateMessageResult, ErrorData> {
    let value = dsh_runtime::json::to_value(message)
        .map_err(|e| ErrorData::internal_error(format!("sampling reply: {e}"), None))?;
    serde_json::from_value(dsh_runtime::json::to_serde(&value))
        .map_err(|e| ErrorData::internal_error(format!("sampling reply: {e}"), None))
}

/// A log notification as the runtime's log message (`None` when it is not one: an
/// unknown level).
fn log_message(params: &LoggingMessageNotificationParam) -> Option<LogMessage> {
    let json = serde_json::to_value(params).ok()?;
    dsh_runtime::json::from_value(&crate::client::from_serde_json(&json)).ok()
}

/// The client side's handler: the declared capabilities answered from the script.
#[doc(hidden)]
#[derive(Clone)]
pub struct TestUser {
    capabilities: UserCapabilities,
    script: Arc<Mutex<Script>>,
}

impl TestUser {
    fn script(&self) -> std::sync::MutexGuard<'_, Script> {
        self.script.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The tool named by an approval form's first line, `Allow tool "<name>" to run?`.
fn form_tool(message: &str) -> Option<String> {
    let first = message.lines().next()?;
    let quoted = first
        .strip_prefix("Allow tool ")?
        .strip_suffix(" to run?")?;
    serde_json::from_str(quoted).ok()
}

impl ClientHandler for TestUser {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            self.capabilities.declared(),
            Implementation::new("dsh-mcp-test-client", "0"),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let (message, url) = match &request {
            ElicitRequestParams::FormElicitationParams { message, .. } => (message.clone(), false),
            ElicitRequestParams::UrlElicitationParams { message, .. } => (message.clone(), true),
            _ => (String::new(), false),
        };
        let approval = if url { None } else { form_tool(&message) };
        let kind = match (&approval, url) {
            (_, true) => ElicitationKind::Url,
            (Some(_), false) => ElicitationKind::Approval,
            (None, false) => ElicitationKind::Form,
        };
        let mut script = self.script();
        let mut e = Elicitation {
            tool: approval.or_else(|| script.calling()),
            message,
            params: serde_json::to_value(&request).unwrap_or(Value::Null),
            answer: McpAnswer::Cancel,
            kind,
            content: None,
        };
        let result = script.respond(&mut e);
        script.asked.push(e);
        Ok(result)
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let reply = self.script().sample(&params)?;
        let message = match reply {
            SampleReply::Fixed(message) => *message,
            SampleReply::With(f) => f(&sample_request(&params)?),
        };
        sample_result(&message)
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let mut script = self.script();
        script.roots_asked += 1;
        let roots = script
            .roots
            .iter()
            .map(|r| {
                let root = rmcp::model::Root::new(r.uri.clone());
                match &r.name {
                    Some(name) => root.with_name(name.clone()),
                    None => root,
                }
            })
            .collect();
        Ok(ListRootsResult::new(roots))
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(message) = log_message(&params) {
            self.script().logs.push(message);
        }
    }
}

/// The tool of a call in flight, noted while the call runs.
struct InFlight<'a> {
    script: &'a Mutex<Script>,
    tool: String,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        let mut script = self.script.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(i) = script.in_flight.iter().position(|t| *t == self.tool) {
            script.in_flight.remove(i);
        }
    }
}

impl fmt::Debug for McpTestClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpTestClient").finish_non_exhaustive()
    }
}

/// Why a test client call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpTestError {
    /// The client could not initialize the session.
    #[error("MCP test client: initialization failed: {0}")]
    Connect(String),
    /// The request failed (a JSON-RPC error, or the connection closed).
    #[error("MCP test client: request failed: {0}")]
    Service(rmcp::ServiceError),
    /// `tools/list` has no tool of this name.
    #[error("MCP test client: tools/list has no tool {0:?}")]
    NoSuchTool(String),
    /// The result breaks the tool's published `outputSchema`.
    #[error("tool {tool:?}: structuredContent breaks its outputSchema: {}", .violations.join("; "))]
    OutputSchema {
        /// The tool.
        tool: String,
        /// Every violation, with the JSON pointer of the offending value.
        violations: Vec<String>,
    },
}

impl From<rmcp::ServiceError> for McpTestError {
    fn from(e: rmcp::ServiceError) -> Self {
        McpTestError::Service(e)
    }
}

impl McpTestClient {
    /// Start `server` on one end of an in-memory pipe (on a task of the current Tokio
    /// runtime) and initialize rmcp's client on the other.
    ///
    /// # Errors
    ///
    /// [`McpTestError::Connect`] when the initialization fails.
    pub async fn connect(server: &McpServer) -> Result<McpTestClient, McpTestError> {
        McpTestClient::start(server, UserCapabilities::none()).await
    }

    /// [`McpTestClient::connect`] for a client that declares elicitation (forms and
    /// URLs), sampling and roots, and answers from its script (see the type's docs; a
    /// form nothing in the script answers is dismissed: [`McpAnswer::Cancel`]).
    ///
    /// # Errors
    ///
    /// [`McpTestError::Connect`] when the initialization fails.
    pub async fn connect_user(server: &McpServer) -> Result<McpTestClient, McpTestError> {
        McpTestClient::start(server, UserCapabilities::all()).await
    }

    /// [`McpTestClient::connect_user`] declaring only `capabilities` (a server asks a
    /// client only what it declared: a tool asking for more gets
    /// `CALLER_CAPABILITY_MISSING`).
    ///
    /// # Errors
    ///
    /// [`McpTestError::Connect`] when the initialization fails.
    pub async fn connect_with(
        server: &McpServer,
        capabilities: UserCapabilities,
    ) -> Result<McpTestClient, McpTestError> {
        McpTestClient::start(server, capabilities).await
    }

    /// [`McpTestClient::connect_with`] speaking protocol revision 2026-07-28
    /// (`server/discover`, capabilities with each request): what a tool asks comes as
    /// `InputRequiredResult` rounds, which rmcp's client answers from this user's script
    /// and retries (logs come only with a request's log level, which these calls do not
    /// set).
    ///
    /// # Errors
    ///
    /// [`McpTestError::Connect`] when the discovery fails.
    pub async fn connect_2026(
        server: &McpServer,
        capabilities: UserCapabilities,
    ) -> Result<McpTestClient, McpTestError> {
        McpTestClient::start_on(server, capabilities, true).await
    }

    async fn start(
        server: &McpServer,
        capabilities: UserCapabilities,
    ) -> Result<McpTestClient, McpTestError> {
        McpTestClient::start_on(server, capabilities, false).await
    }

    /// `rev_2026`: speak 2026-07-28, else 2025-11-25.
    async fn start_on(
        server: &McpServer,
        capabilities: UserCapabilities,
        rev_2026: bool,
    ) -> Result<McpTestClient, McpTestError> {
        let (client_io, server_io) = tokio::io::duplex(PIPE_BYTES);
        let server = server.clone();
        let server = tokio::spawn(async move {
            // A failed handshake shows on the client's side.
            let _ = server.serve(server_io).await;
        });
        McpTestClient::over(client_io, server, capabilities, rev_2026).await
    }

    /// The client on `client_io`, whose other end `server` serves.
    async fn over(
        client_io: tokio::io::DuplexStream,
        server: tokio::task::JoinHandle<()>,
        capabilities: UserCapabilities,
        rev_2026: bool,
    ) -> Result<McpTestClient, McpTestError> {
        use rmcp::service::{ClientLifecycleMode, ClientServiceExt as _};
        let script: Arc<Mutex<Script>> = Arc::default();
        let user = TestUser {
            capabilities,
            script: script.clone(),
        };
        let served = if rev_2026 {
            let lifecycle = ClientLifecycleMode::Discover {
                preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
            };
            user.serve_with_lifecycle(client_io, lifecycle).await
        } else {
            user.serve(client_io).await
        };
        match served {
            Ok(client) => Ok(McpTestClient {
                client,
                server,
                script,
            }),
            Err(e) => {
                server.abort();
                Err(McpTestError::Connect(e.to_string()))
            }
        }
    }

    fn script(&self) -> std::sync::MutexGuard<'_, Script> {
        self.script.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Answer every approval form for `tool` with `answer` (after its
    /// [`answer_once`](McpTestClient::answer_once) answers and the predicates).
    pub fn answer(&self, tool: &str, answer: McpAnswer) -> &Self {
        self.script().always.insert(tool.to_string(), answer);
        self
    }

    /// Answer the next approval form for `tool` with `answer` (queued: several calls
    /// answer several forms, in order), before any other rule.
    pub fn answer_once(&self, tool: &str, answer: McpAnswer) -> &Self {
        self.script()
            .once
            .entry(tool.to_string())
            .or_default()
            .push_back(answer);
        self
    }

    /// Answer every form `when` holds for with `answer` (predicates are tried in the
    /// order added, after the once-answers and before the per-tool answers).
    pub fn answer_if(
        &self,
        when: impl Fn(&Elicitation) -> bool + Send + 'static,
        answer: McpAnswer,
    ) -> &Self {
        self.script().rules.push((Box::new(when), answer));
        self
    }

    /// Approve every call of `tool` ([`McpAnswer::Approve`]).
    pub fn approve(&self, tool: &str) -> &Self {
        self.answer(tool, McpAnswer::Approve)
    }

    /// Reject every call of `tool` ([`McpAnswer::Reject`]: `APPROVAL_REJECTED`).
    pub fn reject(&self, tool: &str) -> &Self {
        self.answer(tool, McpAnswer::Reject)
    }

    /// Dismiss every form for `tool` ([`McpAnswer::Cancel`]: `APPROVAL_CANCELLED`).
    pub fn cancel(&self, tool: &str) -> &Self {
        self.answer(tool, McpAnswer::Cancel)
    }

    /// Every elicitation received so far, in order, with its answer.
    pub fn elicitations(&self) -> Vec<Elicitation> {
        self.script().asked.clone()
    }

    /// Answer every form of a tool's own that `tool` asks (see the type's docs for how
    /// a form's tool is known) with `answer`, after its one-shot answers and the
    /// predicates: a [`FormAnswer`], or the content of an accepted form as JSON.
    pub fn answer_form(&self, tool: &str, answer: impl IntoFormAnswer) -> &Self {
        self.script()
            .forms
            .always
            .insert(tool.to_string(), answer.into_form_answer());
        self
    }

    /// Answer the next form of a tool's own that `tool` asks with `answer`, once.
    pub fn answer_form_once(&self, tool: &str, answer: impl IntoFormAnswer) -> &Self {
        self.script()
            .forms
            .once
            .entry(tool.to_string())
            .or_default()
            .push_back(answer.into_form_answer());
        self
    }

    /// Answer every form of a tool's own that `when` holds for with `answer`
    /// (predicates are tried in the order added, after the one-shot answers and before
    /// the per-tool answers). The predicate sees the request: its message, its schema
    /// ([`Elicitation::requested_schema`], [`Elicitation::form_fields`]). Approval forms
    /// are answered by [`answer_if`](McpTestClient::answer_if) and the per-tool
    /// approval answers only.
    pub fn answer_form_if(
        &self,
        when: impl Fn(&Elicitation) -> bool + Send + 'static,
        answer: impl IntoFormAnswer,
    ) -> &Self {
        self.script()
            .forms
            .rules
            .push((Box::new(when), answer.into_form_answer()));
        self
    }

    /// Answer every URL request of `tool` with `answer` (after the predicates).
    pub fn answer_url(&self, tool: &str, answer: UrlAnswer) -> &Self {
        self.script().urls.always.insert(tool.to_string(), answer);
        self
    }

    /// Answer every URL request `when` holds for with `answer` (tried in the order
    /// added, before the per-tool answers).
    pub fn answer_url_if(
        &self,
        when: impl Fn(&Elicitation) -> bool + Send + 'static,
        answer: UrlAnswer,
    ) -> &Self {
        self.script().urls.rules.push((Box::new(when), answer));
        self
    }

    /// Answer every `sampling/createMessage` with `reply`.
    pub fn answer_sample(&self, reply: SampledMessage) -> &Self {
        self.script().sample = Some(SampleReply::Fixed(Box::new(reply)));
        self
    }

    /// Answer every `sampling/createMessage` with what `reply` makes of the request
    /// (read as the runtime's [`SampleRequest`]; a request it cannot read is answered
    /// with a JSON-RPC error).
    pub fn answer_sample_with(
        &self,
        reply: impl Fn(&SampleRequest) -> SampledMessage + Send + Sync + 'static,
    ) -> &Self {
        self.script().sample = Some(SampleReply::With(Arc::new(reply)));
        self
    }

    /// The roots `roots/list` answers with (by default none).
    pub fn set_roots(&self, roots: Vec<Root>) -> &Self {
        self.script().roots = roots;
        self
    }

    /// Every `sampling/createMessage` received so far, in order (the params as sent).
    pub fn sampling_requests(&self) -> Vec<Value> {
        self.script().sampling_asked.clone()
    }

    /// How many `roots/list` requests were received.
    pub fn roots_requests(&self) -> usize {
        self.script().roots_asked
    }

    /// Every `notifications/message` received so far, in order.
    pub fn logs(&self) -> Vec<LogMessage> {
        self.script().logs.clone()
    }

    /// `logging/setLevel`: the server sends log messages at `level` and above.
    ///
    /// # Errors
    ///
    /// [`McpTestError::Service`] when the request fails.
    pub async fn set_log_level(&self, level: LogLevel) -> Result<(), McpTestError> {
        let level = serde_json::from_value(Value::from(level.as_str()))
            .unwrap_or(rmcp::model::LoggingLevel::Debug);
        self.client
            .set_level(SetLevelRequestParams::new(level))
            .await?;
        Ok(())
    }

    /// rmcp's client, for any other request.
    pub fn peer(&self) -> &RunningService<RoleClient, TestUser> {
        &self.client
    }

    /// Every tool `tools/list` shows (all pages).
    ///
    /// # Errors
    ///
    /// [`McpTestError::Service`] when the request fails.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, McpTestError> {
        Ok(self.client.list_all_tools().await?)
    }

    /// `tools/call` of `name` with `arguments` (a JSON object; anything else is sent as
    /// no arguments).
    ///
    /// # Errors
    ///
    /// [`McpTestError::Service`] when the request fails (an unknown tool is a JSON-RPC
    /// error).
    pub async fn call(&self, name: &str, arguments: Value) -> Result<CallToolResult, McpTestError> {
        let mut params = CallToolRequestParams::new(name.to_string());
        if let Value::Object(args) = arguments {
            params = params.with_arguments(args);
        }
        self.script().in_flight.push(name.to_string());
        let _in_flight = InFlight {
            script: &self.script,
            tool: name.to_string(),
        };
        Ok(self.client.call_tool(params).await?)
    }

    /// [`McpTestClient::call`], then check the result's `structuredContent` against the
    /// tool's `outputSchema` from `tools/list` (standard JSON Schema, draft 2020-12).
    ///
    /// # Errors
    ///
    /// Those of [`McpTestClient::call`]; [`McpTestError::NoSuchTool`] when the list has no
    /// such tool; [`McpTestError::OutputSchema`] when the content breaks the schema.
    pub async fn call_checked(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<CallToolResult, McpTestError> {
        let tools = self.list_tools().await?;
        let tool = tools
            .iter()
            .find(|t| t.name == name)
            .ok_or_else(|| McpTestError::NoSuchTool(name.to_string()))?;
        let result = self.call(name, arguments).await?;
        check_structured_content(tool, &result)?;
        Ok(result)
    }

    /// End the session (the server closes it, running its close futures) and wait for
    /// the server task.
    pub async fn close(self) {
        let _ = self.client.cancel().await;
        let _ = self.server.await;
    }
}

/// Check `result` against `tool`'s `outputSchema`: a success with an output schema must
/// carry `structuredContent` that validates (draft 2020-12); an error result (`isError`)
/// and a tool without an output schema pass.
///
/// # Errors
///
/// [`McpTestError::OutputSchema`] with every violation.
pub fn check_structured_content(tool: &Tool, result: &CallToolResult) -> Result<(), McpTestError> {
    let fail = |violations: Vec<String>| McpTestError::OutputSchema {
        tool: tool.name.to_string(),
        violations,
    };
    if result.is_error == Some(true) {
        return Ok(());
    }
    let Some(schema) = &tool.output_schema else {
        return Ok(());
    };
    let schema = Value::Object((**schema).clone());
    let Some(content) = &result.structured_content else {
        return Err(fail(vec![
            "a success has no structuredContent, but the tool publishes an outputSchema"
                .to_string(),
        ]));
    };
    let validator = jsonschema::draft202012::new(&schema)
        .map_err(|e| fail(vec![format!("the outputSchema does not compile: {e}")]))?;
    let violations: Vec<String> = validator
        .iter_errors(content)
        .map(|e| format!("at {:?}: {e}", e.instance_path().to_string()))
        .collect();
    if violations.is_empty() {
        Ok(())
    } else {
        Err(fail(violations))
    }
}

/// The scripted user against a fake server speaking JSON-RPC lines on the pipe (the
/// server side of tools' caller requests is not needed to check the user's answers).
#[cfg(test)]
mod tests {
    use super::*;
    use dsh_runtime::content::ContentBlock;
    use serde_json::json;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

    /// The server's end of the pipe, after the handshake.
    struct Fake {
        lines: tokio::io::Lines<BufReader<ReadHalf<DuplexStream>>>,
        out: WriteHalf<DuplexStream>,
        /// The client's `initialize` request.
        init: Value,
        next_id: u64,
    }

    impl Fake {
        async fn send(&mut self, message: Value) {
            let line = format!("{message}\n");
            self.out.write_all(line.as_bytes()).await.expect("send");
            self.out.flush().await.expect("flush");
        }

        async fn recv(&mut self) -> Value {
            let line = self.lines.next_line().await.expect("read").expect("a line");
            serde_json::from_str(&line).expect("JSON")
        }

        /// Send a request and wait for its response (other messages are returned with
        /// it, in order).
        async fn request(&mut self, method: &str, params: Value) -> (Value, Vec<Value>) {
            self.next_id += 1;
            let id = self.next_id;
            self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
                .await;
            let mut others = Vec::new();
            loop {
                let message = self.recv().await;
                if message["id"] == id && message.get("method").is_none() {
                    return (message, others);
                }
                others.push(message);
            }
        }

        /// Receive the next request of the client, of `method`.
        async fn expect_request(&mut self, method: &str) -> Value {
            let message = self.recv().await;
            assert_eq!(message["method"], method, "{message}");
            message
        }

        async fn respond(&mut self, request: &Value, result: Value) {
            self.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": result}))
                .await;
        }
    }

    async fn pair(capabilities: UserCapabilities) -> (McpTestClient, Fake) {
        let (client_io, server_io) = tokio::io::duplex(PIPE_BYTES);
        let (tx, rx) = tokio::sync::oneshot::channel();
        let server = tokio::spawn(async move {
            let (read, out) = tokio::io::split(server_io);
            let mut fake = Fake {
                lines: BufReader::new(read).lines(),
                out,
                init: Value::Null,
                next_id: 100,
            };
            let init = fake.recv().await;
            assert_eq!(init["method"], "initialize", "{init}");
            let result = json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"logging": {}, "tools": {}},
                "serverInfo": {"name": "fake", "version": "0"}
            });
            fake.respond(&init, result).await;
            let initialized = fake.recv().await;
            assert_eq!(initialized["method"], "notifications/initialized");
            fake.init = init;
            let _ = tx.send(fake);
        });
        let client = McpTestClient::over(client_io, server, capabilities, false)
            .await
            .expect("connect");
        (client, rx.await.expect("the fake server"))
    }

    fn model(text: &str) -> SampledMessage {
        SampledMessage::new(ContentBlock::text(text), "test-model").with_stop_reason("endTurn")
    }

    fn form(message: &str) -> Value {
        json!({
            "mode": "form",
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": {"branch": {"type": "string"}},
                "required": ["branch"]
            }
        })
    }

    #[tokio::test]
    async fn the_user_declares_what_it_answers() {
        let (client, fake) = pair(UserCapabilities::all()).await;
        let declared = &fake.init["params"]["capabilities"];
        assert_eq!(declared["elicitation"], json!({"form": {}, "url": {}}));
        assert_eq!(declared["sampling"], json!({}));
        assert_eq!(declared["roots"], json!({}));
        client.close().await;

        let (client, fake) = pair(UserCapabilities::all().urls(false).sampling(false)).await;
        let declared = &fake.init["params"]["capabilities"];
        assert_eq!(declared["elicitation"], json!({}));
        assert!(declared.get("sampling").is_none(), "{declared}");
        assert_eq!(declared["roots"], json!({}));
        client.close().await;

        let (client, fake) = pair(UserCapabilities::none()).await;
        assert_eq!(fake.init["params"]["capabilities"], json!({}));
        client.close().await;
    }

    #[tokio::test]
    async fn sampling_is_answered_and_kept() {
        let (client, mut fake) = pair(UserCapabilities::all()).await;
        let params = json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "Notes?"}}],
            "maxTokens": 64,
            "systemPrompt": "Be brief."
        });
        // Nothing scripted: an error.
        let (response, _) = fake.request("sampling/createMessage", params.clone()).await;
        assert!(response.get("error").is_some(), "{response}");

        client.answer_sample(model("short notes"));
        let (response, _) = fake.request("sampling/createMessage", params.clone()).await;
        assert_eq!(
            response["result"],
            json!({
                "role": "assistant",
                "content": {"type": "text", "text": "short notes"},
                "model": "test-model",
                "stopReason": "endTurn"
            })
        );

        client.answer_sample_with(|request| {
            model(&format!(
                "{} tokens, system {:?}",
                request.max_tokens,
                request.system_prompt.as_deref().unwrap_or_default()
            ))
        });
        let (response, _) = fake.request("sampling/createMessage", params.clone()).await;
        assert_eq!(
            response["result"]["content"]["text"],
            r#"64 tokens, system "Be brief.""#
        );
        let asked = client.sampling_requests();
        assert_eq!(asked.len(), 3);
        assert_eq!(asked[0]["maxTokens"], 64);
        client.close().await;
    }

    #[tokio::test]
    async fn roots_are_listed_and_counted() {
        let (client, mut fake) = pair(UserCapabilities::all()).await;
        let (response, _) = fake.request("roots/list", json!({})).await;
        assert_eq!(response["result"], json!({"roots": []}));
        client.set_roots(vec![
            Root::new("file:///work/app").with_name("app"),
            Root::new("file:///work/lib"),
        ]);
        let (response, _) = fake.request("roots/list", json!({})).await;
        assert_eq!(
            response["result"],
            json!({"roots": [
                {"uri": "file:///work/app", "name": "app"},
                {"uri": "file:///work/lib"}
            ]})
        );
        assert_eq!(client.roots_requests(), 2);
        client.close().await;
    }

    #[tokio::test]
    async fn log_notifications_are_kept_and_the_level_is_set() {
        let (client, mut fake) = pair(UserCapabilities::all()).await;
        let notify = |level: &str, data: Value| {
            json!({"jsonrpc": "2.0", "method": "notifications/message",
                   "params": {"level": level, "logger": "release", "data": data}})
        };
        fake.send(notify("info", json!("starting"))).await;
        fake.send(notify("warning", json!({"left": 3}))).await;
        // A round trip: the notifications before it were handled.
        let _ = fake.request("ping", json!({})).await;
        let logs = client.logs();
        assert_eq!(logs.len(), 2);
        assert_eq!(logs[0].level, LogLevel::Info);
        assert_eq!(logs[0].logger.as_deref(), Some("release"));
        assert_eq!(
            logs[0].data,
            dsh_runtime::json::parse(r#""starting""#).unwrap()
        );
        assert_eq!(logs[1].level, LogLevel::Warning);

        let (set, request) = tokio::join!(client.set_log_level(LogLevel::Notice), async {
            let request = fake.expect_request("logging/setLevel").await;
            fake.respond(&request, json!({})).await;
            request
        });
        set.expect("set the level");
        assert_eq!(request["params"]["level"], "notice");
        client.close().await;
    }

    #[tokio::test]
    async fn tools_forms_are_answered_by_predicate_or_by_the_tool_in_flight() {
        let (client, mut fake) = pair(UserCapabilities::all()).await;
        client
            .approve("deploy")
            .answer_form_if(
                |e| e.form_fields() == ["branch"] && e.message == "Which branch?",
                json!({"branch": "main"}),
            )
            .answer_form_once("deploy", FormAnswer::Declined);

        // No call in flight: the predicate answers; the approval answer is not used.
        let (response, _) = fake
            .request("elicitation/create", form("Which branch?"))
            .await;
        assert_eq!(
            response["result"],
            json!({"action": "accept", "content": {"branch": "main"}})
        );
        // Nothing answers another form: dismissed.
        let (response, _) = fake.request("elicitation/create", form("Which tag?")).await;
        assert_eq!(response["result"], json!({"action": "cancel"}));

        // While `deploy` is called, its forms are its own: the one-shot answer first.
        let (called, ()) = tokio::join!(client.call("deploy", json!({})), async {
            let call = fake.expect_request("tools/call").await;
            assert_eq!(call["params"]["name"], "deploy");
            let (response, _) = fake
                .request("elicitation/create", form("Which branch?"))
                .await;
            assert_eq!(response["result"], json!({"action": "decline"}));
            let (response, _) = fake
                .request("elicitation/create", form("Which branch?"))
                .await;
            assert_eq!(response["result"]["action"], "accept");
            // An approval form is answered as before.
            let approval = form("Allow tool \"deploy\" to run?\nCall: {}");
            let (response, _) = fake.request("elicitation/create", approval).await;
            assert_eq!(
                response["result"],
                json!({"action": "accept", "content": {"approve": true}})
            );
            let result = json!({"content": [{"type": "text", "text": "done"}], "isError": false});
            fake.respond(&call, result).await;
        });
        assert_eq!(called.expect("the call").is_error, Some(false));

        let asked = client.elicitations();
        let seen: Vec<(Option<&str>, ElicitationKind, McpAnswer)> = asked
            .iter()
            .map(|e| (e.tool.as_deref(), e.kind, e.answer))
            .collect();
        assert_eq!(
            seen,
            [
                (None, ElicitationKind::Form, McpAnswer::Approve),
                (None, ElicitationKind::Form, McpAnswer::Cancel),
                (Some("deploy"), ElicitationKind::Form, McpAnswer::Decline),
                (Some("deploy"), ElicitationKind::Form, McpAnswer::Approve),
                (
                    Some("deploy"),
                    ElicitationKind::Approval,
                    McpAnswer::Approve
                ),
            ]
        );
        assert_eq!(asked[0].content, Some(json!({"branch": "main"})));
        // The call is over: no tool is in flight.
        let (response, _) = fake.request("elicitation/create", form("Which tag?")).await;
        assert_eq!(response["result"], json!({"action": "cancel"}));
        assert_eq!(client.elicitations()[5].tool, None);
        client.close().await;
    }

    #[tokio::test]
    async fn url_requests_are_answered_by_predicate_or_tool() {
        let (client, mut fake) = pair(UserCapabilities::all()).await;
        let url = json!({
            "mode": "url",
            "message": "Sign in",
            "url": "https://example.com/login",
            "elicitationId": "e-1"
        });
        let (response, _) = fake.request("elicitation/create", url.clone()).await;
        assert_eq!(response["result"], json!({"action": "cancel"}));
        client.answer_url_if(
            |e| e.url() == Some("https://example.com/login"),
            UrlAnswer::Accepted,
        );
        let (response, _) = fake.request("elicitation/create", url.clone()).await;
        assert_eq!(response["result"], json!({"action": "accept"}));
        let kinds: Vec<ElicitationKind> = client.elicitations().iter().map(|e| e.kind).collect();
        assert_eq!(kinds, [ElicitationKind::Url, ElicitationKind::Url]);
        client.close().await;
    }
}
