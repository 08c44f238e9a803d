//! Tools defined at run time from raw JSON Schema and a JSON handler (e.g. proxied from
//! an MCP server). They go through the same pipeline and validator as derived tools.

use std::fmt;
use std::future::Future;
use std::num::NonZeroU64;
use std::sync::Arc;

use crate::cards::{CallView, ResultSummary, ResultView};
use crate::content::{ContentBlock, default_render};
use crate::json::Value;
use crate::schema::{Schema, SchemaError};
use crate::tool::{
    BodyOutcome, BoxFuture, ErasedTool, ToolAnnotations, ToolContext, ToolDefinition, ToolError,
};

type Handler =
    dyn Fn(Value, ToolContext) -> BoxFuture<'static, Result<Value, ToolError>> + Send + Sync;
type Renderer = dyn Fn(&Value, &Value) -> Result<Vec<ContentBlock>, ToolError> + Send + Sync;

/// A tool whose schemas are JSON Schema documents and whose body is a closure over JSON.
///
/// ```
/// # use dsh_runtime::{RawTool, json};
/// let echo = RawTool::new(
///     "echo",
///     "Echo the text back.",
///     &json::parse(r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}"#).unwrap(),
///     &json::parse(r#"{"type":"string"}"#).unwrap(),
///     |args, _cx| async move {
///         Ok(args.as_object().and_then(|o| o.get("text")).cloned().unwrap_or(json::Value::Null))
///     },
/// )
/// .unwrap();
/// # let _ = echo;
/// ```
pub struct RawTool {
    definition: ToolDefinition,
    handler: Box<Handler>,
    render: Option<Box<Renderer>>,
    concurrency_safe: bool,
}

impl RawTool {
    /// A tool from raw JSON Schema. The parameter schema must be an object node (its
    /// `additionalProperties` may be omitted: the root is then open); the output schema
    /// is any node (`{}` admits any JSON). Anything outside the vocabulary is refused
    /// with every violation (`UNSUPPORTED_SCHEMA`).
    ///
    /// The handler receives the validated arguments (optional properties sent as `null`
    /// removed) and must return lossless JSON matching the output schema.
    pub fn new<F, Fut>(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: &Value,
        output: &Value,
        handler: F,
    ) -> Result<RawTool, SchemaError>
    where
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        let parameters = Schema::parameters_from_json_schema(parameters)?;
        let output = Schema::from_json_schema(output)?;
        Ok(RawTool::from_schemas(
            name,
            description,
            parameters,
            output,
            handler,
        ))
    }

    /// A tool from schemas built in code (checked at registration).
    pub fn from_schemas<F, Fut>(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: Schema,
        output: Schema,
        handler: F,
    ) -> RawTool
    where
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        RawTool {
            definition: ToolDefinition::new(
                name.into(),
                description.into(),
                Arc::new(parameters),
                Arc::new(output),
            ),
            handler: Box::new(move |args, cx| Box::pin(handler(args, cx))),
            render: None,
            concurrency_safe: false,
        }
    }

    /// Set the deadline honoured by the timeout wrapper.
    pub fn with_timeout_ms(mut self, ms: NonZeroU64) -> Self {
        self.definition.timeout_ms = Some(ms);
        self
    }

    /// Set the behaviour hints.
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.definition.annotations = annotations;
        self
    }

    /// Defer loading the tool (see [`ToolDefinition::defer_loading`]).
    pub fn with_defer_loading(mut self, defer: bool) -> Self {
        self.definition.defer_loading = defer;
        self
    }

    /// Put the tool in a namespace (see [`ToolDefinition::namespace`]).
    pub fn with_namespace(mut self, namespace: Option<crate::tool::Namespace>) -> Self {
        self.definition.namespace = namespace;
        self
    }

    /// Declare every valid call parallel-safe (default: exclusive).
    pub fn with_concurrency_safe(mut self, safe: bool) -> Self {
        self.concurrency_safe = safe;
        self
    }

    /// Render the canonical value with this function instead of the default (strings
    /// raw, anything else compact JSON).
    pub fn with_render<R>(mut self, render: R) -> Self
    where
        R: Fn(&Value, &Value) -> Result<Vec<ContentBlock>, ToolError> + Send + Sync + 'static,
    {
        self.render = Some(Box::new(render));
        self
    }
}

impl fmt::Debug for RawTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RawTool")
            .field("name", &self.definition.name)
            .finish_non_exhaustive()
    }
}

impl ErasedTool for RawTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn call_json<'a>(&'a self, args: &'a Value, cx: ToolContext) -> BoxFuture<'a, BodyOutcome> {
        let fut = (self.handler)(args.clone(), cx);
        Box::pin(async move {
            match fut.await {
                Ok(v) => match crate::snapshot::check(&v, "value") {
                    Ok(()) => BodyOutcome::Value(v),
                    Err(e) => BodyOutcome::NotLossless(e),
                },
                Err(e) => BodyOutcome::Failed(e),
            }
        })
    }

    fn render(&self, args: &Value, value: &Value) -> Result<Vec<ContentBlock>, ToolError> {
        match &self.render {
            Some(r) => r(args, value),
            None => Ok(default_render(value)),
        }
    }

    fn is_concurrency_safe(&self, _args: &Value) -> bool {
        self.concurrency_safe
    }

    fn present_call(&self, _args: &Value) -> Option<CallView> {
        None
    }

    fn present_result(&self, _args: &Value, _result: &ResultSummary) -> Option<ResultView> {
        None
    }

    fn presentation_meta(&self, _args: &Value, _value: &Value) -> Result<Option<Value>, ToolError> {
        Ok(None)
    }

    fn finalize_content(
        &self,
        _args: &Value,
        _content: &[ContentBlock],
    ) -> Option<Vec<ContentBlock>> {
        None
    }
}
