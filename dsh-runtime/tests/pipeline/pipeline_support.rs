//! Shared test tools and instrumented hooks for the pipeline and registry tests.
#![allow(dead_code)]

use std::future::Future;
use std::num::NonZeroU64;
use std::sync::{Arc, Mutex};

use dsh_runtime::BoxFuture;
use dsh_runtime::hooks::{
    CallInfo, HookFuture, Next, Wrapper, guard_fn, observer_fn, post_execute_fn, pre_execute_fn,
};
use dsh_runtime::json::{self, Value};
use dsh_runtime::schema::{Property, Schema};
use dsh_runtime::{
    DispatchOutcome, RegistrationHandle, Registry, Tool, ToolContext, ToolDefinition, ToolError,
    content::ContentBlock,
};

/// A shared, ordered record of which stages ran.
#[derive(Clone, Default)]
pub(crate) struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    pub(crate) fn new() -> Log {
        Log::default()
    }
    pub(crate) fn push(&self, s: impl Into<String>) {
        self.0.lock().unwrap().push(s.into());
    }
    pub(crate) fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
    pub(crate) fn get(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

pub(crate) fn v(text: &str) -> Value {
    json::parse(text).expect("test JSON")
}

type BodyFn =
    Arc<dyn Fn(Value, ToolContext) -> BoxFuture<'static, Result<Value, ToolError>> + Send + Sync>;
type RenderFn = Arc<dyn Fn(&Value, &Value) -> Result<Vec<ContentBlock>, ToolError> + Send + Sync>;
type MetaFn = Arc<dyn Fn(&Value, &Value) -> Result<Option<Value>, ToolError> + Send + Sync>;
type FinalizeFn = Arc<dyn Fn(&Value, &[ContentBlock]) -> Option<Vec<ContentBlock>> + Send + Sync>;
type SafeFn = Arc<dyn Fn(&Value) -> bool + Send + Sync>;

/// A hand-written tool whose every hook is configurable and logged.
#[derive(Clone)]
pub(crate) struct Probe {
    def: ToolDefinition,
    log: Log,
    body: BodyFn,
    render: Option<RenderFn>,
    meta: Option<MetaFn>,
    finalize: Option<FinalizeFn>,
    safe: Option<SafeFn>,
}

/// `{text: string (required), n: integer}`, closed.
pub(crate) fn text_params() -> Schema {
    Schema::closed_object(vec![
        Property::new("text", Schema::string(), true),
        Property::new("n", Schema::integer(), false),
    ])
}

impl Probe {
    /// Echoes `text` (output schema: string).
    pub(crate) fn new(name: &'static str, log: &Log) -> Probe {
        let log2 = log.clone();
        Probe {
            def: ToolDefinition::new(
                name,
                format!("The {name} probe."),
                Arc::new(text_params()),
                Arc::new(Schema::string()),
            ),
            log: log.clone(),
            body: Arc::new(move |args, _cx| {
                let log = log2.clone();
                Box::pin(async move {
                    log.push("body");
                    Ok(args
                        .as_object()
                        .and_then(|o| o.get("text"))
                        .cloned()
                        .unwrap_or(Value::Null))
                })
            }),
            render: None,
            meta: None,
            finalize: None,
            safe: None,
        }
    }

    pub(crate) fn body<F, Fut>(mut self, f: F) -> Probe
    where
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        let log = self.log.clone();
        self.body = Arc::new(move |args, cx| {
            log.push("body");
            Box::pin(f(args, cx))
        });
        self
    }
    pub(crate) fn params(mut self, s: Schema) -> Probe {
        self.def.parameters = Arc::new(s);
        self
    }
    pub(crate) fn output(mut self, s: Schema) -> Probe {
        self.def.output = Arc::new(s);
        self
    }
    pub(crate) fn timeout_ms(mut self, ms: u64) -> Probe {
        self.def.timeout_ms = NonZeroU64::new(ms);
        self
    }
    pub(crate) fn render(
        mut self,
        f: impl Fn(&Value, &Value) -> Result<Vec<ContentBlock>, ToolError> + Send + Sync + 'static,
    ) -> Probe {
        self.render = Some(Arc::new(f));
        self
    }
    pub(crate) fn meta(
        mut self,
        f: impl Fn(&Value, &Value) -> Result<Option<Value>, ToolError> + Send + Sync + 'static,
    ) -> Probe {
        self.meta = Some(Arc::new(f));
        self
    }
    pub(crate) fn finalize(
        mut self,
        f: impl Fn(&Value, &[ContentBlock]) -> Option<Vec<ContentBlock>> + Send + Sync + 'static,
    ) -> Probe {
        self.finalize = Some(Arc::new(f));
        self
    }
    pub(crate) fn safe(mut self, f: impl Fn(&Value) -> bool + Send + Sync + 'static) -> Probe {
        self.safe = Some(Arc::new(f));
        self
    }
}

impl Tool for Probe {
    type Args = Value;
    type Output = Value;

    fn definition(&self) -> &ToolDefinition {
        &self.def
    }

    fn call(
        &self,
        args: Value,
        cx: ToolContext,
    ) -> impl Future<Output = Result<Value, ToolError>> + Send {
        (self.body)(args, cx)
    }

    fn render(&self, args: &Value, value: &Value) -> Result<Vec<ContentBlock>, ToolError> {
        self.log.push("render");
        match &self.render {
            Some(f) => f(args, value),
            None => Ok(dsh_runtime::content::default_render(value)),
        }
    }

    fn presentation_meta(&self, args: &Value, value: &Value) -> Result<Option<Value>, ToolError> {
        match &self.meta {
            Some(f) => {
                self.log.push("meta");
                f(args, value)
            }
            None => Ok(None),
        }
    }

    fn finalize_content(
        &self,
        args: &Value,
        content: &[ContentBlock],
    ) -> Option<Vec<ContentBlock>> {
        self.log.push("finalize");
        self.finalize.as_ref().and_then(|f| f(args, content))
    }

    fn is_concurrency_safe(&self, args: &Value) -> bool {
        self.safe.as_ref().is_some_and(|f| f(args))
    }
}

/// Typed arguments of [`Add`].
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug)]
pub(crate) struct AddArgs {
    pub a: i64,
    pub b: i64,
}

/// A typed tool: `a + b`.
pub(crate) struct Add {
    def: ToolDefinition,
}

impl Add {
    pub(crate) fn new() -> Add {
        Add {
            def: ToolDefinition::new(
                "add",
                "Add two integers.",
                Arc::new(Schema::closed_object(vec![
                    Property::new("a", Schema::integer(), true),
                    Property::new("b", Schema::integer(), true),
                ])),
                Arc::new(Schema::integer()),
            ),
        }
    }
}

impl Tool for Add {
    type Args = AddArgs;
    type Output = i64;

    fn definition(&self) -> &ToolDefinition {
        &self.def
    }

    async fn call(&self, args: AddArgs, _cx: ToolContext) -> Result<i64, ToolError> {
        args.a
            .checked_add(args.b)
            .ok_or_else(|| ToolError::with_code("OVERFLOW", "the sum overflows"))
    }
}

/// Registers logging hooks at every stage on `registry` (global): `pre`, `guard`,
/// `post`, `observe`, and a pass-through wrapper `wrap`.
pub(crate) fn instrument(registry: &Registry, log: &Log) -> Vec<RegistrationHandle> {
    let (a, b, c, d, e) = (
        log.clone(),
        log.clone(),
        log.clone(),
        log.clone(),
        log.clone(),
    );
    vec![
        registry.add_pre_execute(pre_execute_fn(move |_| {
            a.push("pre");
            None
        })),
        registry.add_guard(guard_fn(move |_| {
            b.push("guard");
            None
        })),
        registry.add_wrapper(LogWrapper(c, "wrap")),
        registry.add_post_execute(post_execute_fn(move |_, _| {
            d.push("post");
            None
        })),
        registry.add_observer(observer_fn(move |_, _| e.push("observe"))),
    ]
}

/// A wrapper that logs and passes through.
pub(crate) struct LogWrapper(pub Log, pub &'static str);

impl Wrapper for LogWrapper {
    fn around<'a>(
        &'a self,
        _call: &'a CallInfo<'a>,
        next: Next<'a>,
    ) -> HookFuture<'a, Result<DispatchOutcome, ToolError>> {
        self.0.push(self.1);
        next.run()
    }
}

pub(crate) fn text(result: &dsh_runtime::ToolResult) -> String {
    result.text()
}

/// The names a scope sees, as owned strings.
pub(crate) fn scope_names(s: &dsh_runtime::AgentScope) -> Vec<String> {
    s.view().names().iter().map(|n| n.to_string()).collect()
}

/// A probe tool whose value is `tag` (which of several same-named tools answered).
pub(crate) fn tagged(name: &'static str, tag: &'static str, log: &Log) -> Probe {
    Probe::new(name, log).body(move |_, _| async move { Ok(Value::from(tag)) })
}

/// Run `name` from `scope` with `{"text":"x"}`: its value as text, or its error message.
pub(crate) async fn run(
    r: &dsh_runtime::Registry,
    scope: Option<dsh_runtime::AgentScopeId>,
    name: &str,
) -> Result<String, String> {
    let mut call = dsh_runtime::ToolCall::new("c", name, r#"{"text":"x"}"#);
    if let Some(agent) = scope {
        call = call.with_agent(agent);
    }
    let result = r.execute(call).await;
    match result.value() {
        Some(v) => Ok(v.as_str().unwrap_or_default().to_string()),
        None => Err(result.message().unwrap_or_default().to_string()),
    }
}
