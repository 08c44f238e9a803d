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

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, Implementation, Tool,
};
use rmcp::service::{RequestContext, RunningService, ServiceExt};
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::Value;

use dsh_mcp::McpServer;

/// The buffer size of each direction of the in-memory pipe.
const PIPE_BYTES: usize = 1 << 16;

/// rmcp's client connected to an [`McpServer`] over an in-memory pipe.
///
/// [`McpTestClient::connect`] declares no capabilities, so a call that asks for approval
/// is denied (`POLICY_DENIED`). [`McpTestClient::connect_user`] declares elicitation and
/// answers each approval form from a script, as `dsh_testing::TestClient` does
/// in process: by tool ([`approve`](McpTestClient::approve),
/// [`reject`](McpTestClient::reject), [`cancel`](McpTestClient::cancel),
/// [`answer_once`](McpTestClient::answer_once)) or by predicate
/// ([`answer_if`](McpTestClient::answer_if)); every form is recorded
/// ([`elicitations`](McpTestClient::elicitations)).
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

/// One elicitation the server sent to the scripted user.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Elicitation {
    /// The tool the approval form is about (from its message, `Allow tool "<name>" to
    /// run?`), when it is one.
    pub tool: Option<String>,
    /// The form's message.
    pub message: String,
    /// The whole request as sent (`elicitation/create` params).
    pub params: Value,
    /// How it was answered.
    pub answer: McpAnswer,
}

type Predicate = Box<dyn Fn(&Elicitation) -> bool + Send>;

/// The scripted user's answers.
#[derive(Default)]
struct Script {
    once: HashMap<String, VecDeque<McpAnswer>>,
    rules: Vec<(Predicate, McpAnswer)>,
    always: HashMap<String, McpAnswer>,
    asked: Vec<Elicitation>,
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
}

/// The client side's handler: no capabilities, or elicitation answered from the script.
#[doc(hidden)]
#[derive(Clone)]
pub struct TestUser {
    elicits: bool,
    script: Arc<Mutex<Script>>,
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
        let capabilities = if self.elicits {
            ClientCapabilities::builder().enable_elicitation().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(
            capabilities,
            Implementation::new("dsh-mcp-test-client", "0"),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let message = match &request {
            ElicitRequestParams::FormElicitationParams { message, .. }
            | ElicitRequestParams::UrlElicitationParams { message, .. } => message.clone(),
            _ => String::new(),
        };
        let mut e = Elicitation {
            tool: form_tool(&message),
            message,
            params: serde_json::to_value(&request).unwrap_or(Value::Null),
            answer: McpAnswer::Cancel,
        };
        let mut script = self.script.lock().unwrap_or_else(PoisonError::into_inner);
        e.answer = script.answer(&e);
        let answer = e.answer;
        script.asked.push(e);
        Ok(match answer {
            McpAnswer::Approve => ElicitResult::new(ElicitationAction::Accept)
                .with_content(serde_json::json!({"approve": true})),
            McpAnswer::Reject => ElicitResult::new(ElicitationAction::Accept)
                .with_content(serde_json::json!({"approve": false})),
            McpAnswer::Decline => ElicitResult::new(ElicitationAction::Decline),
            McpAnswer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        })
    }
}

impl fmt::Debug for McpTestClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpTestClient").finish_non_exhaustive()
    }
}

/// Why a test client call failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum McpTestError {
    /// The client could not initialize the session.
    Connect(String),
    /// The request failed (a JSON-RPC error, or the connection closed).
    Service(rmcp::ServiceError),
    /// `tools/list` has no tool of this name.
    NoSuchTool(String),
    /// The result breaks the tool's published `outputSchema`.
    OutputSchema {
        /// The tool.
        tool: String,
        /// Every violation, with the JSON pointer of the offending value.
        violations: Vec<String>,
    },
}

impl fmt::Display for McpTestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            McpTestError::Connect(e) => write!(f, "MCP test client: initialization failed: {e}"),
            McpTestError::Service(e) => write!(f, "MCP test client: request failed: {e}"),
            McpTestError::NoSuchTool(name) => {
                write!(f, "MCP test client: tools/list has no tool {name:?}")
            }
            McpTestError::OutputSchema { tool, violations } => write!(
                f,
                "tool {tool:?}: structuredContent breaks its outputSchema: {}",
                violations.join("; ")
            ),
        }
    }
}

impl std::error::Error for McpTestError {}

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
        McpTestClient::start(server, false).await
    }

    /// [`McpTestClient::connect`] for a client that declares the elicitation capability
    /// and answers approval forms from its script (see the type's docs; a form nothing
    /// in the script answers is dismissed: [`McpAnswer::Cancel`]).
    ///
    /// # Errors
    ///
    /// [`McpTestError::Connect`] when the initialization fails.
    pub async fn connect_user(server: &McpServer) -> Result<McpTestClient, McpTestError> {
        McpTestClient::start(server, true).await
    }

    async fn start(server: &McpServer, elicits: bool) -> Result<McpTestClient, McpTestError> {
        let (client_io, server_io) = tokio::io::duplex(PIPE_BYTES);
        let server = server.clone();
        let server = tokio::spawn(async move {
            // A failed handshake shows on the client's side.
            let _ = server.serve(server_io).await;
        });
        let script: Arc<Mutex<Script>> = Arc::default();
        let user = TestUser {
            elicits,
            script: script.clone(),
        };
        match user.serve(client_io).await {
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
