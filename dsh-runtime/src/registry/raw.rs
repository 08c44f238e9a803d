//! Tools defined at run time from raw JSON Schema and a JSON handler (e.g. proxied from
//! an MCP server). They go through the same pipeline and validator as derived tools.

use std::fmt;
use std::future::Future;
use std::num::NonZeroU64;
use std::sync::Arc;

use crate::cards::{CallView, ResultSummary, ResultView};
use crate::content::{ContentBlock, default_render};
use crate::json::Value;
use crate::schema::{Schema, SchemaError, VerbatimSchema};
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

    /// A tool whose JSON Schema 2020-12 documents are published exactly as written: every
    /// keyword, every key in its order (`$schema`, `$defs`/`$ref`, `allOf`/`anyOf`/`not`,
    /// `if`/`then`/`else`, `$anchor`, extension keywords such as `x-mcp-header`…).
    ///
    /// `input_schema` must say `"type": "object"` at its root. `output_schema` may have
    /// any root; `None` means any JSON value (published as `{}`). Both are checked as
    /// [`VerbatimSchema`] describes (the meta-schema's shape of every keyword,
    /// same-document references only, no loop that never descends into the value), and
    /// every problem of both is reported, path-qualified (`parameters.…`, `output.…`).
    ///
    /// **The tool owns its input validation** beyond what the runtime checks: the
    /// pipeline validates arguments against `input_schema` with the runtime's own
    /// validator (every keyword but `unevaluatedItems`, `unevaluatedProperties`,
    /// `uniqueItems`, a non-integer `multipleOf` and regular expressions it does not
    /// compile), and with dsh-runtime's `json-schema` feature fully, through the
    /// `jsonschema` crate. Failures are `INVALID_ARGS`, every violation path-qualified,
    /// before policy or the body. The handler receives the arguments as sent (or, when
    /// they only match without their `null` members, without them). Outputs are always
    /// validated fully: without the feature an `output_schema` the runtime does not check
    /// exactly is refused here.
    ///
    /// Every export publishes the documents: verbatim over MCP, adapted or refused with a
    /// reason for the providers that cannot take them (see `dsh-providers`).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use dsh_runtime::{RawTool, Registry, ToolCall, json};
    ///
    /// let input = json::parse(r##"{
    ///   "$schema": "https://json-schema.org/draft/2020-12/schema",
    ///   "type": "object",
    ///   "properties": { "phone": { "type": "string" }, "email": { "type": "string" } },
    ///   "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }],
    ///   "additionalProperties": false
    /// }"##).unwrap();
    /// let contact = RawTool::with_json_schema("contact", "Record a contact.", input.clone(), None, |args, _cx| async move {
    ///     Ok(args)
    /// })
    /// .unwrap();
    /// let published = contact.definition().parameters_json_schema().into_owned();
    /// assert_eq!(published.to_string(), input.to_string()); // byte for byte, key order kept
    ///
    /// let registry = Registry::new();
    /// let _contact = registry.register(contact).unwrap();
    /// let ok = registry.execute(ToolCall::new("1", "contact", r#"{"email":"a@b.c"}"#)).await;
    /// assert!(!ok.is_error());
    /// let bad = registry.execute(ToolCall::new("2", "contact", r#"{"fax":"1"}"#)).await;
    /// assert_eq!(bad.code_str(), Some("INVALID_ARGS"));
    /// assert!(bad.text().contains(r#""fax" is not a declared property (additionalProperties: false)"#), "{}", bad.text());
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// Every problem of both documents, as one [`SchemaError`] (`UNSUPPORTED_SCHEMA`).
    pub fn with_json_schema<F, Fut>(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
        output_schema: Option<Value>,
        handler: F,
    ) -> Result<RawTool, SchemaError>
    where
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        let parameters = VerbatimSchema::parameters(input_schema);
        let output = output_schema.map(VerbatimSchema::output).transpose();
        let (parameters, output) = match (parameters, output) {
            (Ok(p), Ok(o)) => (p, o),
            (Err(a), Err(b)) => {
                let mut all = a.violations().to_vec();
                all.extend(b.violations().iter().cloned());
                return Err(SchemaError::new(all));
            }
            (Err(e), _) | (_, Err(e)) => return Err(e),
        };
        let mut tool = RawTool::from_schemas(
            name,
            description,
            Schema::closed_object(Vec::new()),
            Schema::json(),
            handler,
        );
        tool.definition = tool.definition.with_verbatim_parameters(parameters);
        if let Some(output) = output {
            tool.definition = tool.definition.with_verbatim_output(output);
        }
        Ok(tool)
    }

    /// The tool's definition (what registration checks and exports publish).
    pub fn definition(&self) -> &ToolDefinition {
        &self.definition
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
