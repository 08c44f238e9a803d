//! Start and settle events of the tool calls programs make.

use std::panic::{AssertUnwindSafe, catch_unwind};

use dsh_runtime::json::Value;
use dsh_runtime::{AgentScopeId, ToolResult};

/// A tool call a program made: its identity, and that of the `run_code` call whose
/// program made it.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct SubCall<'a> {
    /// The root call id the call inherited from the outer call.
    pub root_call_id: &'a str,
    /// The id of the outer `run_code` call.
    pub parent_call_id: &'a str,
    /// The call's own id, `<parent_call_id>:code:<n>`.
    pub call_id: &'a str,
    /// The tool called.
    pub name: &'a str,
    /// The agent scope of the outer call (and of this one).
    pub agent: AgentScopeId,
}

/// Told about every tool call a program makes from an agent's scope: once when it
/// starts (enters the pipeline) and once when it settles, in submission order. Register
/// one with [`crate::CodeMode::observe_sub_calls`], e.g. to show a run's progress or to
/// log what a program did.
///
/// - Only calls that started are reported: a call abandoned when its run ended, or
///   refused before it was numbered (arguments that are not lossless JSON), has no
///   event.
/// - Every started call settles, also when the run ended meanwhile (the call is then
///   cancelled and awaited, and its settle event comes before `run_code` returns).
/// - Outer calls without an agent report nothing.
/// - The methods run on the run's engine thread, between the program's steps: keep them
///   short. A panic in one is contained and logged.
///
/// ```
/// # tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(async {
/// use std::sync::{Arc, Mutex};
/// use dsh_code::{CodeMode, Mode, SubCall, SubCallObserver};
/// use dsh_runtime::json::Value;
/// use dsh_runtime::{Registry, ToolCall, ToolResult, tool};
///
/// /// Add two numbers.
/// #[tool(read_only)]
/// async fn add(a: i64, b: i64) -> i64 { a + b }
///
/// #[derive(Clone, Default)]
/// struct Log(Arc<Mutex<Vec<String>>>);
/// impl SubCallObserver for Log {
///     fn started(&self, call: &SubCall<'_>, arguments: &Value) {
///         self.0.lock().unwrap().push(format!("start {} {} {arguments}", call.call_id, call.name));
///     }
///     fn settled(&self, call: &SubCall<'_>, result: &ToolResult) {
///         self.0.lock().unwrap().push(format!("settle {} {}", call.call_id, result.text()));
///     }
/// }
///
/// let registry = Registry::new();
/// let _add = registry.register(Add).unwrap();
/// let scope = registry.scope();
/// let log = Log::default();
/// let _p = CodeMode::new().observe_sub_calls(log.clone()).present_as(&scope, Mode::Code).unwrap();
/// let call = ToolCall::new("run", "run_code", r#"{"code":"return await tools.add({a: 1, b: 2});","description":"Add"}"#)
///     .with_agent(scope.id());
/// assert_eq!(registry.execute(call).await.text(), "3");
/// assert_eq!(*log.0.lock().unwrap(), [r#"start run:code:1 add {"a":1,"b":2}"#, "settle run:code:1 3"]);
/// # });
/// ```
pub trait SubCallObserver: Send + Sync + 'static {
    /// The call enters the pipeline, with the arguments as the program passed them.
    fn started(&self, call: &SubCall<'_>, arguments: &Value) {
        let _ = (call, arguments);
    }

    /// The call settled: `result` is its final result (the program receives its value,
    /// or a `ToolCallError` with its message, unless the run is over).
    fn settled(&self, call: &SubCall<'_>, result: &ToolResult) {
        let _ = (call, result);
    }
}

/// Run an observer method, containing (and logging) a panic.
pub(crate) fn contained(what: &str, f: impl FnOnce()) {
    if let Err(panic) = catch_unwind(AssertUnwindSafe(f)) {
        let message = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a non-string panic".to_string());
        tracing::warn!("sub-call observer panicked in `{what}`: {message}");
    }
}
