//! [`TestClient`]: calls as a model host makes them, in memory.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde::de::DeserializeOwned;

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
pub struct TestClient {
    registry: Registry,
    scope: Option<AgentScope>,
    script: Arc<Mutex<Script>>,
    /// Removed with the client: the script answers only while the client lives.
    handler: Mutex<Option<RegistrationGuard>>,
    next_id: AtomicU64,
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

    /// One call: the tool name and the arguments as JSON text (as a model API sends
    /// them; text that is not JSON is `INVALID_ARGS`, as from a model).
    pub async fn call(&self, name: &str, arguments: &str) -> ToolResult {
        self.registry
            .execute(self.tool_call(name, arguments.to_string()))
            .await
    }

    /// One call with the arguments as a JSON value.
    pub async fn call_value(&self, name: &str, arguments: Value) -> ToolResult {
        self.registry.execute(self.tool_call(name, arguments)).await
    }

    /// A batch, as one model turn with several tool calls: parallel-safe calls overlap
    /// (up to `max_parallel`), the others run alone; results keep the calls' order.
    pub async fn batch(&self, calls: &[(&str, &str)], max_parallel: usize) -> Vec<ToolResult> {
        let calls = calls
            .iter()
            .map(|(name, args)| self.tool_call(name, args.to_string()))
            .collect();
        self.registry.execute_batch(calls, max_parallel).await
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
            Some(s) => s.call::<T>(args).await,
            None => self.registry.call::<T>(args).await,
        }
    }
}
