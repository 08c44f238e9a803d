//! Probe tools and helpers shared by the dsh-code tests.
#![allow(dead_code)]

pub(crate) mod programs;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dsh_code::{CodeConfig, CodeMode, Mode, Presentation};
use dsh_runtime::json::{self, Value};
use dsh_runtime::{
    AgentScope, RegistrationHandle, Registry, ToolCall, ToolContext, ToolError, ToolResult, tool,
    toolbox,
};

/// What a probe tool saw.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Event {
    pub what: &'static str,
    pub label: String,
    pub call_id: String,
    pub root_call_id: String,
    pub has_parent: bool,
    pub at: Duration,
}

pub(crate) struct Probe {
    pub events: Mutex<Vec<Event>>,
    t0: Instant,
}

impl Probe {
    fn record(&self, what: &'static str, label: &str, cx: &ToolContext) {
        let exec = cx.execution();
        self.events.lock().unwrap().push(Event {
            what,
            label: label.to_string(),
            call_id: exec.call_id.to_string(),
            root_call_id: exec.root_call_id.to_string(),
            has_parent: exec.parent.is_some(),
            at: self.t0.elapsed(),
        });
    }

    pub(crate) fn events(&self) -> Vec<Event> {
        self.events.lock().unwrap().clone()
    }

    pub(crate) fn labels(&self, what: &str) -> Vec<String> {
        self.events()
            .into_iter()
            .filter(|e| e.what == what)
            .map(|e| e.label)
            .collect()
    }

    async fn sleep(
        &self,
        what: &'static str,
        label: &str,
        ms: u64,
        cx: &ToolContext,
    ) -> Result<String, ToolError> {
        self.record(what, label, cx);
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(ms)) => {
                self.record("end", label, cx);
                Ok(label.to_string())
            }
            _ = cx.cancellation().cancelled() => {
                self.record("cancelled", label, cx);
                Err(ToolError::new(format!("{label} was cancelled")))
            }
        }
    }
}

#[toolbox]
impl Probe {
    /// Return the value it was given.
    #[tool(read_only, concurrency_safe)]
    async fn echo(
        &self,
        /// Any JSON value.
        value: Value,
        cx: ToolContext,
    ) -> Value {
        self.record("echo", &value.to_string(), &cx);
        value
    }

    /// Wait `ms` milliseconds, then return `label`; stops early when cancelled.
    #[tool(read_only, concurrency_safe)]
    async fn slow(&self, label: String, ms: u64, cx: ToolContext) -> Result<String, ToolError> {
        self.sleep("start", &label, ms, &cx).await
    }

    /// Like `slow`, but it must run alone.
    #[tool]
    async fn exclusive(
        &self,
        label: String,
        ms: u64,
        cx: ToolContext,
    ) -> Result<String, ToolError> {
        self.sleep("start", &label, ms, &cx).await
    }

    /// Always fails.
    #[tool]
    async fn fail(&self, message: String) -> Result<Value, ToolError> {
        Err(ToolError::with_code("PROBE_FAILED", message))
    }

    /// Return the caption; the content shows it with a tiny image.
    #[tool(args, read_only, concurrency_safe, render = picture_content)]
    async fn picture(&self, args: PictureArgs) -> String {
        args.caption
    }

    /// Attach a context and end the turn.
    #[tool]
    async fn remark(&self, text: String, cx: ToolContext) -> bool {
        cx.defer_context(text);
        cx.conclude_turn();
        true
    }
}

/// Arguments of `picture`.
#[derive(serde::Deserialize, dsh_runtime::ToolSchema)]
pub(crate) struct PictureArgs {
    /// What the picture shows.
    pub caption: String,
}

fn picture_content(args: &PictureArgs, _out: &String) -> Vec<dsh_runtime::content::ContentBlock> {
    vec![
        dsh_runtime::content::ContentBlock::text(format!("picture: {}", args.caption)),
        dsh_runtime::content::ContentBlock::image(format!("BASE64-{}", args.caption), "image/png"),
    ]
}

/// A registry with the probe tools in the global layer and one agent scope in `mode`.
pub(crate) struct Env {
    pub registry: Registry,
    pub scope: AgentScope,
    pub probe: Arc<Probe>,
    pub presentation: Option<Presentation>,
    _tools: RegistrationHandle,
}

pub(crate) fn env(mode: Mode, config: CodeConfig) -> Env {
    env_with(mode, CodeMode::with_config(config))
}

/// [`env`] with the scope presented by `code_mode`.
pub(crate) fn env_with(mode: Mode, code_mode: CodeMode) -> Env {
    let registry = Registry::new();
    let probe = Arc::new(Probe {
        events: Mutex::new(Vec::new()),
        t0: Instant::now(),
    });
    let tools = registry.register_toolbox(probe.clone()).unwrap();
    let scope = registry.scope();
    let presentation = Some(code_mode.present_as(&scope, mode).unwrap());
    Env {
        registry,
        scope,
        probe,
        presentation,
        _tools: tools,
    }
}

pub(crate) fn default_env() -> Env {
    env(Mode::Both, CodeConfig::default())
}

pub(crate) fn run_code_call(code: &str) -> ToolCall {
    let mut args = json::Object::new();
    args.insert("code", Value::from(code));
    args.insert("description", Value::from("Test program"));
    ToolCall::new("outer", "run_code", Value::Object(args))
}

impl Env {
    pub(crate) async fn run(&self, code: &str) -> ToolResult {
        self.registry
            .execute(run_code_call(code).with_agent(self.scope.id()))
            .await
    }

    /// Run and return the result value, panicking with the message on failure.
    pub(crate) async fn value(&self, code: &str) -> Value {
        let r = self.run(code).await;
        match r.value() {
            Some(v) => v.get("result").cloned().unwrap_or(Value::Null),
            None => panic!("run failed: {:?}", r.message()),
        }
    }

    /// A direct call from the scope.
    pub(crate) async fn direct(&self, name: &str, args: &str) -> ToolResult {
        self.registry
            .execute(ToolCall::new("direct", name, args).with_agent(self.scope.id()))
            .await
    }
}

pub(crate) fn v(text: &str) -> Value {
    json::parse(text).unwrap()
}

/// Get the current weather for a city.
#[tool(read_only, defer_loading)]
async fn weather(
    /// The city name.
    city: String,
) -> String {
    format!("sunny in {city}")
}

/// Look up the latest price of a stock.
#[tool(read_only, defer_loading)]
async fn stock_price(
    /// The ticker symbol.
    ticker: String,
) -> f64 {
    let _ = ticker;
    12.5
}

/// Register the deferred tools `weather` and `stock_price` (kept while the
/// registrations live).
pub(crate) fn register_deferred(registry: &Registry) -> Vec<RegistrationHandle> {
    vec![
        registry.register(Weather).unwrap(),
        registry.register(StockPrice).unwrap(),
    ]
}
