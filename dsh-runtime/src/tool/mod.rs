//! What a tool is: the [`Tool`] trait, its static [`ToolDefinition`], the
//! [`ToolContext`] a body receives and [`ToolError`]. What a tool shows the model is a
//! list of [`ContentBlock`]s (see [`crate::content`]).
//!
//! `#[tool]` implements [`Tool`] for you; implement it by hand only for tools whose
//! schemas are not derived from Rust types.

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

use crate::caller::{
    self, CallerAnswer, CallerError, CallerRoute, ElicitForm, Elicited, FormAnswer, FormRequest,
    LogLevel, Root, SampleRequest, SampledMessage, UrlAnswer, UrlRequest,
};
use crate::cards::{CallView, ResultSummary, ResultView};
use crate::content::{ContentBlock, default_render};
use crate::jobs::{CallJobs, JobRuntime};
use crate::json::{SharedValue, Value};
use crate::schema::{Schema, VerbatimSchema};

/// The error a tool body (or a hook) fails with.
///
/// Any `std::error::Error` converts into it with `?`, keeping the error as its
/// [`source`](ToolError::source); [`ToolError::with_code`] attaches a machine-readable code
/// (e.g. `FS_NOT_FOUND`) that the pipeline passes through.
///
/// `ToolError` deliberately does not implement `std::error::Error`, so that the blanket
/// conversion from every error type can exist (as with `anyhow::Error`). Converted into a
/// `Box<dyn std::error::Error>`, it is a standard error whose `source()` is the cause.
///
/// ```
/// use dsh_runtime::ToolError;
///
/// fn read() -> Result<String, ToolError> {
///     Ok(std::fs::read_to_string("/nonexistent/dsh-runtime-doc")?)
/// }
/// let err = read().unwrap_err();
/// let io = err.source().and_then(|e| e.downcast_ref::<std::io::Error>());
/// assert_eq!(io.map(|e| e.kind()), Some(std::io::ErrorKind::NotFound));
/// let boxed: Box<dyn std::error::Error + Send + Sync> = err.into();
/// assert!(boxed.source().is_some_and(|e| e.is::<std::io::Error>()));
/// ```
#[derive(Clone)]
pub struct ToolError {
    message: String,
    code: Option<Cow<'static, str>>,
    source: Option<Arc<dyn std::error::Error + Send + Sync + 'static>>,
}

impl ToolError {
    /// An error with a message and no code.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            code: None,
            source: None,
        }
    }

    /// An error with a code and a message.
    pub fn with_code(code: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            code: Some(code.into()),
            source: None,
        }
    }

    /// The same error, with `source` as its cause (what [`ToolError::source`] returns).
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Arc::new(source));
        self
    }

    /// The human-readable message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The code, typed, when one was given: a registry [`PipelineCode`](crate::PipelineCode) or
    /// the tool's own (see [`ToolError::code_str`] for the wire form).
    pub fn code(&self) -> Option<crate::code::FailureCode<'_>> {
        self.code_str().map(crate::code::FailureCode::of)
    }

    /// The code as given, when one was.
    pub fn code_str(&self) -> Option<&str> {
        self.code.as_deref()
    }

    /// The error this one was converted from, if any (never sent to the model: the
    /// message is what the pipeline reports).
    pub fn source(&self) -> Option<&(dyn std::error::Error + Send + Sync + 'static)> {
        self.source.as_deref()
    }
}

/// Equal when the message and code are (the source is not compared).
impl PartialEq for ToolError {
    fn eq(&self, other: &Self) -> bool {
        self.message == other.message && self.code == other.code
    }
}

impl Eq for ToolError {}

impl fmt::Debug for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("ToolError");
        if let Some(c) = &self.code {
            d.field("code", c);
        }
        d.field("message", &self.message);
        if let Some(source) = &self.source {
            d.field("source", source);
        }
        d.finish()
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Any error, by its message. A [`CallerError`] keeps its code too (`CALLER_…`, see
/// [`crate::caller::codes`]).
impl<E: std::error::Error + Send + Sync + 'static> From<E> for ToolError {
    fn from(e: E) -> Self {
        let code = (&e as &dyn std::any::Any)
            .downcast_ref::<CallerError>()
            .map(CallerError::code);
        let error = match code {
            Some(code) => ToolError::with_code(code, e.to_string()),
            None => ToolError::new(e.to_string()),
        };
        error.with_source(e)
    }
}

/// A [`ToolError`] as a standard error, for `?` in a function returning
/// `Box<dyn std::error::Error + Send + Sync>` (such as `main`): it displays as the
/// message, prefixed by the code when there is one (`FS_NOT_FOUND: …`).
struct AsStdError(ToolError);

impl fmt::Debug for AsStdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for AsStdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0.code {
            Some(code) => write!(f, "{code}: {}", self.0.message),
            None => f.write_str(&self.0.message),
        }
    }
}

impl std::error::Error for AsStdError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self.0.source() {
            Some(e) => Some(e),
            None => None,
        }
    }
}

impl From<ToolError> for Box<dyn std::error::Error + Send + Sync + 'static> {
    /// ```
    /// fn run() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    ///     Err(dsh_runtime::ToolError::with_code("FS_NOT_FOUND", "no such file"))?;
    ///     Ok(())
    /// }
    /// assert_eq!(run().unwrap_err().to_string(), "FS_NOT_FOUND: no such file");
    /// ```
    fn from(e: ToolError) -> Self {
        Box::new(AsStdError(e))
    }
}

impl From<ToolError> for Box<dyn std::error::Error + 'static> {
    fn from(e: ToolError) -> Self {
        Box::new(AsStdError(e))
    }
}

/// MCP-style behaviour hints, published with the tool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// The tool does not modify its environment.
    pub read_only: bool,
    /// The tool may perform destructive updates.
    pub destructive: bool,
    /// Calling the tool twice with the same arguments has no additional effect.
    pub idempotent: bool,
    /// The tool interacts with an open world of external entities.
    pub open_world: bool,
}

/// Everything static about a tool: name, description, schemas and metadata.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ToolDefinition {
    /// The name the model calls (`^[a-zA-Z0-9_-]{1,64}$`).
    pub name: Cow<'static, str>,
    /// The model-facing description.
    pub description: Cow<'static, str>,
    /// A human-facing title.
    pub title: Option<Cow<'static, str>>,
    /// The parameter schema (an object node).
    pub parameters: Arc<Schema>,
    /// The schema of the canonical output value.
    pub output: Arc<Schema>,
    /// Deadline metadata honoured by the timeout wrapper; never part of the schema.
    pub timeout_ms: Option<NonZeroU64>,
    /// Behaviour hints.
    pub annotations: ToolAnnotations,
    /// Deferred loading (`#[tool(defer_loading)]`): the tool is left out of a model's
    /// initial context and found through tool search. Exports mark it where the provider
    /// can defer a tool (Anthropic and OpenAI Responses `defer_loading: true`) and warn
    /// where it cannot; the built-in `tool_search` tool (feature `export`) searches the
    /// deferred tools of a view.
    pub defer_loading: bool,
    /// The group the tool belongs to for providers that group tools (OpenAI Responses
    /// namespaces: the model first sees the group's name and description, then its
    /// tools). Tools keep their own unique names; other targets export them at the top
    /// level and say so in a warning.
    pub namespace: Option<Namespace>,
    /// Example argument objects for the model (`#[tool]`: the ```` ```json ```` blocks
    /// of the doc comment's `# Examples` section, then every `example = ".."` key).
    /// Registration validates each against [`ToolDefinition::parameters`]
    /// ([`RegisterError::Example`](crate::RegisterError::Example)). Exports send them as
    /// Anthropic's `input_examples`; targets without such a field get them appended to
    /// the description (`Examples: {..}; {..}`), with an export warning.
    pub input_examples: Vec<crate::json::Value>,
    /// Whether the tool may run as a task: work a client starts with one request and
    /// follows with others (MCP's tasks, see `dsh-mcp`). Set with
    /// `#[tool(task = "optional")]`; [`TaskSupport::Forbidden`] by default.
    pub task_support: TaskSupport,
    /// Whether the [`timeout_ms`](ToolDefinition::timeout_ms) deadline starts again at
    /// each progress report of the call ([`ToolContext::report_progress`]), so a long
    /// call that keeps reporting is not cut short. Set with
    /// `#[tool(timeout_ms = N, timeout_restarts_on_progress)]`.
    pub timeout_restarts_on_progress: bool,
    /// A call of a task-capable tool runs as an ordinary call, asking its caller what it
    /// needs, and becomes a task when its body calls
    /// [`ToolContext::continue_as_task`] (MCP 2026-07-28: `InputRequiredResult` rounds,
    /// then a `CreateTaskResult`). `#[tool(task = "..", task_after_input)]`.
    pub task_after_input: bool,
    /// Every call asks for approval first, with this reason (`#[tool(ask = "why")]`):
    /// the decision at the end of the pre-execute waterfall is
    /// [`PreDecision::Ask`](crate::hooks::PreDecision::Ask) instead of `Allow`, so the
    /// installed approval handler (over MCP, the client's user) is asked, and without one
    /// the call is denied. A pre-execute hook still decides first: a `Deny` or its own
    /// `Ask` stands, and an explicit `Allow` (a trusted caller) skips the question.
    pub ask: Option<Cow<'static, str>>,
    /// The parameter schema exactly as written, for a tool that publishes its own JSON
    /// Schema 2020-12 document ([`with_verbatim_parameters`](ToolDefinition::with_verbatim_parameters),
    /// [`RawTool::with_json_schema`](crate::RawTool::with_json_schema)). When set:
    ///
    /// - every export publishes this document instead of
    ///   [`parameters`](ToolDefinition::parameters) (verbatim over MCP; adapted, or
    ///   refused with a reason, where a provider cannot take it: see `dsh-providers`);
    /// - the pipeline validates arguments against it (after `parameters`, which is then
    ///   an open object: any JSON object), as [`VerbatimSchema`] describes, so the tool
    ///   owns the validation of what the runtime leaves unchecked;
    /// - consumers that read only the vocabulary (code-mode SDKs, the testing kit) see
    ///   `parameters`: an object with any members.
    ///
    /// Registration refuses a document whose root does not say `"type": "object"`.
    pub verbatim_parameters: Option<VerbatimSchema>,
    /// The output schema exactly as written ([`with_verbatim_output`](ToolDefinition::with_verbatim_output)):
    /// published instead of [`output`](ToolDefinition::output), and every value the tool
    /// returns must match it (`INVALID_TOOL_OUTPUT` otherwise). `output` is then an open
    /// object when the document's root says `"type": "object"`, any JSON otherwise (what
    /// MCP's 2025-11-25 export decides its `{"result": …}` wrapping from).
    ///
    /// Registration refuses a document the runtime does not check exactly unless the
    /// `json-schema` feature is on (see [`VerbatimSchema::output`]).
    pub verbatim_output: Option<VerbatimSchema>,
}

/// A named group of tools, as OpenAI Responses shows it to a model: one entry with a name
/// and a description, holding the group's tools (typically the tools of one imported MCP
/// server). Cheap to clone; tools of one group share one `Namespace`.
///
/// ```
/// # use dsh_runtime::Namespace;
/// let crm = Namespace::new("crm", "Customer records: look up, create and update accounts.");
/// assert_eq!(crm.name(), "crm");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Namespace {
    name: Arc<str>,
    description: Arc<str>,
}

impl Namespace {
    /// A namespace. OpenAI requires the name to match `^[a-zA-Z0-9_-]{1,64}$` and a
    /// description; an export that cannot use them says why (the name is checked there,
    /// where the target is known).
    pub fn new(name: impl Into<Arc<str>>, description: impl Into<Arc<str>>) -> Self {
        Namespace {
            name: name.into(),
            description: description.into(),
        }
    }

    /// The namespace's name (what the model's calls name as their `namespace`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The description the model reads before the group's tools are loaded.
    pub fn description(&self) -> &str {
        &self.description
    }
}

/// Whether a tool may run as a task ([`ToolDefinition::task_support`]).
///
/// A task is a call that answers its request at once with a handle, runs on as a
/// background job of the caller's session, and is followed (polled, cancelled, its
/// result fetched) by id. Hosts without tasks ignore this and run every call directly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TaskSupport {
    /// The tool never runs as a task (the default).
    #[default]
    Forbidden,
    /// The tool runs as a task when the client supports tasks, directly otherwise.
    Optional,
    /// The tool runs only as a task: a client without tasks cannot call it.
    Required,
}

impl TaskSupport {
    /// The name used in attributes and on the wire: `forbidden`, `optional` or
    /// `required`.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        }
    }

    /// Whether the tool may run as a task (`optional` or `required`).
    pub fn allows_task(self) -> bool {
        !matches!(self, TaskSupport::Forbidden)
    }
}

impl fmt::Display for TaskSupport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl ToolDefinition {
    /// A definition with the given name, description and schemas.
    pub fn new(
        name: impl Into<Cow<'static, str>>,
        description: impl Into<Cow<'static, str>>,
        parameters: Arc<Schema>,
        output: Arc<Schema>,
    ) -> Self {
        ToolDefinition {
            name: name.into(),
            description: description.into(),
            title: None,
            parameters,
            output,
            timeout_ms: None,
            annotations: ToolAnnotations::default(),
            defer_loading: false,
            namespace: None,
            input_examples: Vec::new(),
            task_support: TaskSupport::Forbidden,
            timeout_restarts_on_progress: false,
            task_after_input: false,
            ask: None,
            verbatim_parameters: None,
            verbatim_output: None,
        }
    }

    /// Set the title.
    pub fn with_title(mut self, title: impl Into<Cow<'static, str>>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Set the timeout metadata.
    pub fn with_timeout_ms(mut self, ms: NonZeroU64) -> Self {
        self.timeout_ms = Some(ms);
        self
    }

    /// Set the annotations.
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// Set deferred loading (see [`ToolDefinition::defer_loading`]).
    pub fn with_defer_loading(mut self, defer: bool) -> Self {
        self.defer_loading = defer;
        self
    }

    /// Put the tool in a namespace (see [`ToolDefinition::namespace`]); `None` takes it
    /// out.
    pub fn with_namespace(mut self, namespace: Option<Namespace>) -> Self {
        self.namespace = namespace;
        self
    }

    /// Set the input examples (see [`ToolDefinition::input_examples`]).
    pub fn with_input_examples(mut self, examples: Vec<crate::json::Value>) -> Self {
        self.input_examples = examples;
        self
    }

    /// Set whether the tool may run as a task (see [`ToolDefinition::task_support`]).
    pub fn with_task_support(mut self, support: TaskSupport) -> Self {
        self.task_support = support;
        self
    }

    /// Set whether the deadline restarts on progress (see
    /// [`ToolDefinition::timeout_restarts_on_progress`]).
    pub fn with_timeout_restarts_on_progress(mut self, restarts: bool) -> Self {
        self.timeout_restarts_on_progress = restarts;
        self
    }

    /// See [`ToolDefinition::task_after_input`].
    pub fn with_task_after_input(mut self, after_input: bool) -> Self {
        self.task_after_input = after_input;
        self
    }

    /// Ask for approval before every call, with `reason` (see [`ToolDefinition::ask`]).
    pub fn with_ask(mut self, reason: impl Into<Cow<'static, str>>) -> Self {
        self.ask = Some(reason.into());
        self
    }

    /// Publish `schema` as the parameter schema, exactly as written (see
    /// [`ToolDefinition::verbatim_parameters`]); [`parameters`](ToolDefinition::parameters)
    /// becomes an open object (any JSON object), so only `schema`'s rules apply.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use dsh_runtime::{ToolDefinition, json, schema::{Schema, VerbatimSchema}};
    ///
    /// let text = r#"{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}"#;
    /// let def = ToolDefinition::new("search", "Search.", Arc::new(Schema::closed_object(vec![])), Arc::new(Schema::string()))
    ///     .with_verbatim_parameters(VerbatimSchema::parameters(json::parse(text).unwrap()).unwrap());
    /// assert_eq!(def.parameters_json_schema().to_string(), text);
    /// ```
    pub fn with_verbatim_parameters(mut self, schema: VerbatimSchema) -> Self {
        self.parameters = Arc::new(Schema::object(Vec::new(), crate::schema::Additional::Open));
        self.verbatim_parameters = Some(schema);
        self
    }

    /// Publish `schema` as the output schema, exactly as written (see
    /// [`ToolDefinition::verbatim_output`]); [`output`](ToolDefinition::output) becomes
    /// an open object when `schema`'s root says `"type": "object"`, any JSON otherwise.
    pub fn with_verbatim_output(mut self, schema: VerbatimSchema) -> Self {
        self.output = Arc::new(verbatim_output_stand_in(&schema));
        self.verbatim_output = Some(schema);
        self
    }

    /// The parameter schema as published: the verbatim document when there is one
    /// ([`ToolDefinition::verbatim_parameters`]), else the projection of
    /// [`parameters`](ToolDefinition::parameters).
    pub fn parameters_json_schema(&self) -> Cow<'_, crate::json::Value> {
        match &self.verbatim_parameters {
            Some(v) => Cow::Borrowed(v.as_value()),
            None => Cow::Owned(self.parameters.to_json_schema()),
        }
    }

    /// The output schema as published: the verbatim document when there is one
    /// ([`ToolDefinition::verbatim_output`]), else the projection of
    /// [`output`](ToolDefinition::output).
    pub fn output_json_schema(&self) -> Cow<'_, crate::json::Value> {
        match &self.verbatim_output {
            Some(v) => Cow::Borrowed(v.as_value()),
            None => Cow::Owned(self.output.to_json_schema()),
        }
    }
}

/// The vocabulary node standing for a verbatim output schema: an open object when the
/// document's root says `"type": "object"`, any JSON otherwise.
pub(crate) fn verbatim_output_stand_in(schema: &VerbatimSchema) -> Schema {
    if schema.root_type() == Some("object") {
        Schema::object(Vec::new(), crate::schema::Additional::Open)
    } else {
        Schema::json()
    }
}

/// A tool whose name is known from its type: `#[tool]` implements it for the struct it
/// generates, so policy can target a tool by type instead of by a name string that a
/// rename or a typo would silently miss ([`CallInfo::is`](crate::hooks::CallInfo::is),
/// [`hooks::pre_execute_for`](crate::hooks::pre_execute_for)).
///
/// ```
/// use dsh_runtime::{NamedTool, tool};
///
/// /// Close a ticket.
/// #[tool(name = "close")]
/// async fn close_ticket(id: u64) -> u64 { id }
///
/// assert_eq!(CloseTicket::NAME, "close");
/// ```
pub trait NamedTool: Tool {
    /// The name the model calls (`ToolDefinition::name`).
    const NAME: &'static str;
}

/// Not public API. Implemented by `#[tool]` for the unit struct it generates, which it defines in a
/// module of its own and glob-imports where the fn is. A type of the same name in that
/// scope shadows the glob import without an error, so the expansion asserts
/// `<Name as ToolStruct>` at the fn name: this message is then the only error. It lives
/// here rather than in `__private` because rustc names it in the error.
#[diagnostic::on_unimplemented(
    message = "`#[tool]` cannot name its struct `{Self}`: a type of that name already exists here",
    label = "the tool struct of this fn is named `{Self}`",
    note = "name the generated structs with `#[tool(struct_name = \"...\")]` (the arguments struct becomes `<name>Args`), or rename the other type"
)]
#[doc(hidden)]
pub trait ToolStruct {
    /// Evaluated by the assertion.
    const OK: () = ();
}

/// Not public API: what `#[tool]` asks of a parameter's type. Every use the expansion makes
/// of a parameter type (its schema, whether it is optional, reading it from the
/// arguments) goes through this one trait at the type's span, so a type missing
/// `Deserialize`, `ToolSchema` or both gives one error there, with this message, instead
/// of one per use from serde's and this crate's internals.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter: it must implement `serde::Deserialize` and `dsh_runtime::ToolSchema`",
    label = "not usable as a tool parameter",
    note = "derive what is missing on the type's definition: `#[derive(serde::Deserialize, dsh_runtime::ToolSchema)]` (for `Vec<T>`, `Option<T>` and other containers, on `T`); a type from another crate cannot derive them: take a type that has both (`String`, `u64`, a struct of your own) or implement them for a newtype of your own"
)]
#[doc(hidden)]
pub trait ToolParam: Sized {
    /// `ToolSchema::OPTIONAL`.
    const OPTIONAL: bool;
    /// `ToolSchema::PROPERTY_PORTABILITY`.
    const PROPERTY_PORTABILITY: crate::schema::portable::Facts;
    /// `ToolSchema::property_schema`.
    fn property_schema() -> Arc<Schema>;
    /// The member `name` of validated arguments; an absent member is what serde's derive
    /// makes of a missing field (`None` for an `Option`, an error otherwise).
    fn read(
        members: &crate::json::Object,
        name: &'static str,
    ) -> Result<Self, crate::json::DeError>;
}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned + crate::schema::ToolSchema + 'static> ToolParam for T {
    const OPTIONAL: bool = <T as crate::schema::ToolSchema>::OPTIONAL;
    const PROPERTY_PORTABILITY: crate::schema::portable::Facts =
        <T as crate::schema::ToolSchema>::PROPERTY_PORTABILITY;

    fn property_schema() -> Arc<Schema> {
        <T as crate::schema::ToolSchema>::property_schema()
    }

    fn read(
        members: &crate::json::Object,
        name: &'static str,
    ) -> Result<Self, crate::json::DeError> {
        match members.get(name) {
            Some(v) => T::deserialize(v),
            None => T::deserialize(crate::json::__private::MissingField(name)),
        }
    }
}

/// Not public API: how `#[tool]` turns the error of a `Result` return type into the
/// call's failure. A blanket impl over `Into<ToolError>`, so that an error type without
/// the conversion is reported at the error type with this message rather than as a
/// missing `std::error::Error` impl.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's error type: it does not convert into `dsh_runtime::ToolError`",
    label = "the error type of this tool",
    note = "a tool returns `Result<T, E>` where `E: Into<ToolError>`: every `std::error::Error` converts; return `Result<T, ToolError>` and convert other errors in the body, e.g. `.map_err(ToolError::new)` for a `String`, `.map_err(|e| ToolError::new(format!(\"{{e:#}}\")))` for an `anyhow::Error`"
)]
#[doc(hidden)]
pub trait IntoToolError {
    /// The conversion.
    fn into_tool_error(self) -> ToolError;
}

#[diagnostic::do_not_recommend]
impl<E: Into<ToolError>> IntoToolError for E {
    fn into_tool_error(self) -> ToolError {
        self.into()
    }
}

/// A tool: a typed async body plus the hooks the pipeline calls around it.
///
/// Only [`Tool::definition`] and [`Tool::call`] are required. The other hooks receive the
/// frozen JSON arguments (and value) because they also run on replayed logs, where the
/// arguments may no longer match the current schema: implementations deserialize softly
/// (the `#[tool]` macro generates that for typed presenter functions).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool",
    label = "`{Self}` does not implement `Tool`",
    note = "put `#[dsh_runtime::tool]` on an `async fn`, which generates a unit struct implementing `Tool`, and register that struct"
)]
pub trait Tool: Send + Sync + 'static {
    /// The typed arguments the body receives.
    type Args: DeserializeOwned + Send + 'static;
    /// The canonical output value.
    type Output: Serialize + Send + 'static;

    /// Which hooks this implementation overrides (a set of [`hooks`] bits). The erased
    /// tool calls only those and runs the defaults itself, so a tool that overrides none
    /// compiles no hook code of its own. The default says "all", which is always correct;
    /// `#[tool]` states exactly the hooks it generates.
    #[doc(hidden)]
    const OVERRIDDEN_HOOKS: u8 = crate::__private::tool_hooks::ALL;

    /// The static definition.
    fn definition(&self) -> &ToolDefinition;

    /// Run the body. Arguments were validated against the parameter schema already.
    fn call(
        &self,
        args: Self::Args,
        cx: ToolContext,
    ) -> impl Future<Output = Result<Self::Output, ToolError>> + Send;

    /// Read validated, normalized arguments into [`Tool::Args`]. The default goes through
    /// `Args`'s `Deserialize`; `#[tool]` overrides it, for the argument structs it
    /// generates, with a direct read of each member (the same result, less code per tool).
    #[doc(hidden)]
    fn args_from_json(args: &Value) -> Result<Self::Args, crate::json::DeError>
    where
        Self: Sized,
    {
        crate::json::from_value(args)
    }

    /// Model-facing content for a canonical value. Default: a string value as raw text,
    /// anything else as compact JSON.
    fn render(&self, args: &Value, value: &Value) -> Result<Vec<ContentBlock>, ToolError> {
        let _ = args;
        Ok(default_render(value))
    }

    /// Whether a call with these (valid) arguments may run in parallel with other
    /// parallel-safe calls. Default: no.
    fn is_concurrency_safe(&self, args: &Value) -> bool {
        let _ = args;
        false
    }

    /// The pending card for a call; `None` means the generic card.
    fn present_call(&self, args: &Value) -> Option<CallView> {
        let _ = args;
        None
    }

    /// The completed card for a result; `None` means the generic card.
    fn present_result(&self, args: &Value, result: &ResultSummary) -> Option<ResultView> {
        let _ = (args, result);
        None
    }

    /// Durable, replayable card data derived from the canonical value (top-level calls only).
    fn presentation_meta(&self, args: &Value, value: &Value) -> Result<Option<Value>, ToolError> {
        let _ = (args, value);
        Ok(None)
    }

    /// Replace the final content once, after post-execute; `None` keeps it.
    fn finalize_content(
        &self,
        args: &Value,
        content: &[ContentBlock],
    ) -> Option<Vec<ContentBlock>> {
        let _ = (args, content);
        None
    }
}

/// An opaque execution token: compared for equality only, never serialized, never chosen
/// by a caller.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ExecutionId(u64);

impl ExecutionId {
    /// Mint a fresh token.
    pub fn mint() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        ExecutionId(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

impl fmt::Debug for ExecutionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ExecutionId(..)")
    }
}

/// Identifies an agent scope of a registry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AgentScopeId(pub(crate) u64);

impl AgentScopeId {
    /// The raw number (for logs).
    pub fn get(self) -> u64 {
        self.0
    }
}

/// The call a sub-dispatch was made for, by tool name and call id: for a tool call of a
/// code-mode program, the `run_code` call running the program. Set with
/// [`crate::ToolCall::with_parent_call`]; hooks read it with
/// [`crate::hooks::CallInfo::parent_call`], and an approval request shows it beside the
/// call itself ([`crate::hooks::ApprovalRequest::via`]).
///
/// ```
/// # use dsh_runtime::ParentCall;
/// let parent = ParentCall::new("run_code", "call_7");
/// assert_eq!((&*parent.name, &*parent.call_id), ("run_code", "call_7"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParentCall {
    /// The parent call's tool name, as called.
    pub name: Arc<str>,
    /// The parent call's id.
    pub call_id: Arc<str>,
}

impl ParentCall {
    /// The parent call `call_id` of tool `name`.
    pub fn new(name: impl Into<Arc<str>>, call_id: impl Into<Arc<str>>) -> Self {
        ParentCall {
            name: name.into(),
            call_id: call_id.into(),
        }
    }
}

/// The immutable identity of one execution.
#[derive(Debug)]
#[non_exhaustive]
pub struct CallIdentity {
    /// The caller's call id.
    pub call_id: Arc<str>,
    /// The id of the outermost call (defaults to `call_id`).
    pub root_call_id: Arc<str>,
    /// The tool name as called.
    pub name: Arc<str>,
    /// The frozen arguments.
    pub arguments: SharedValue,
    /// The opaque token.
    pub token: ExecutionId,
    /// The agent scope the call comes from, if any.
    pub agent: Option<AgentScopeId>,
    /// The enclosing execution's token for a sub-dispatch.
    pub parent: Option<ExecutionId>,
    /// The call a sub-dispatch was made for, when its caller named it
    /// ([`crate::ToolCall::with_parent_call`]).
    pub parent_call: Option<Arc<ParentCall>>,
    has_arguments: bool,
    /// What the body of this execution sends on the side (kept here rather than in an
    /// allocation of its own).
    side: SideChannel,
    /// The caller's token (kept here so that the body's context can make a child of it
    /// without a handle of its own). Empty when the caller gave none and nothing has
    /// asked for it yet: nobody else can hold it then, so it is not cancelled.
    cancel: OnceLock<CancellationToken>,
    /// The registry's job runtime, if it has one (see [`ToolContext::jobs`]).
    pub(crate) jobs: Option<JobRuntime>,
}

impl CallIdentity {
    /// Build the identity of a call outside the pipeline (for a [`ToolContext`] of a
    /// body called directly, as [`ToolContext::detached`] does), with a fresh token and
    /// no caller's cancellation token. The pipeline builds its own identities.
    pub fn new(
        call_id: Arc<str>,
        root_call_id: Arc<str>,
        name: Arc<str>,
        arguments: SharedValue,
        agent: Option<AgentScopeId>,
        parent: Option<ExecutionId>,
    ) -> Self {
        CallIdentity::for_call(
            call_id,
            root_call_id,
            name,
            Some(arguments),
            agent,
            parent,
            None,
        )
    }

    /// The pipeline's identity of a call whose caller holds `cancel` (`None`: the caller
    /// holds no token, one is made if something asks for it); `arguments` is `None` when
    /// they failed the lossless snapshot (they are then `null`).
    pub(crate) fn for_call(
        call_id: Arc<str>,
        root_call_id: Arc<str>,
        name: Arc<str>,
        arguments: Option<SharedValue>,
        agent: Option<AgentScopeId>,
        parent: Option<ExecutionId>,
        cancel: Option<CancellationToken>,
    ) -> Self {
        let has_arguments = arguments.is_some();
        let token = OnceLock::new();
        if let Some(cancel) = cancel {
            let _ = token.set(cancel);
        }
        CallIdentity {
            call_id,
            root_call_id,
            name,
            arguments: arguments.unwrap_or_else(|| Arc::new(Value::Null)),
            token: ExecutionId::mint(),
            agent,
            parent,
            parent_call: None,
            has_arguments,
            side: SideChannel::default(),
            cancel: token,
            jobs: None,
        }
    }

    /// Whether [`CallIdentity::arguments`] holds the caller's arguments. It is `false` only
    /// when the arguments failed the lossless snapshot at entry; `arguments` is then
    /// `null`, and only content finalization and result observers see the execution.
    pub fn has_arguments(&self) -> bool {
        self.has_arguments
    }

    /// What the pipeline's body of this execution sent on the side.
    pub(crate) fn side(&self) -> &SideChannel {
        &self.side
    }

    /// The caller's token (made now if the caller gave none).
    pub(crate) fn caller_token(&self) -> &CancellationToken {
        self.cancel.get_or_init(CancellationToken::new)
    }

    /// Whether the caller gave a token (or one was made since), i.e. whether the call can
    /// be cancelled from outside.
    pub(crate) fn has_caller_token(&self) -> bool {
        self.cancel.get().is_some()
    }

    /// Whether the caller's token is cancelled, without making one: a token nobody has
    /// asked for yet cannot have been cancelled.
    pub(crate) fn caller_cancelled(&self) -> bool {
        self.cancel
            .get()
            .is_some_and(CancellationToken::is_cancelled)
    }

    /// Whether the body's token of the only run of this execution's body (made lazily,
    /// see [`ToolContext`]) is cancelled: a child not made yet is cancelled exactly when
    /// the caller's token is.
    pub(crate) fn lazy_child_cancelled(&self) -> bool {
        match self.side.child.get() {
            Some(child) => child.is_cancelled(),
            None => self.caller_cancelled(),
        }
    }
}

/// What a tool body receives besides its arguments.
///
/// Declare a parameter of type `ToolContext` (or `&ToolContext`) in a `#[tool]` fn to get
/// it; it is not part of the schema.
#[derive(Clone, Debug)]
pub struct ToolContext {
    exec: Arc<CallIdentity>,
    /// The body's token; `None`: a child of the caller's token (kept by the execution),
    /// made the first time it is asked for and kept in the execution's side channel.
    cancel: Option<CancellationToken>,
    /// The side channel given to [`ToolContext::new`]; `None`: the execution's own.
    side: Option<Arc<SideChannel>>,
    /// Where progress updates go (captured from [`with_progress`] when the context is made).
    progress: Option<ProgressReporter>,
    /// The fallback approval route around the call (captured when the context is made).
    approval: Option<ApprovalRoute>,
    /// A job runtime given with [`ToolContext::with_jobs`], before the execution's.
    jobs: Option<JobRuntime>,
    /// Who answers what the call asks of its caller (captured when the context is made).
    caller: Option<CallerRoute>,
}

/// Where the `ask` decisions of a call go when no registry handler answers them: the
/// fallback approval handler a transport installed around the call (an MCP session's
/// client, say). A body gets it from [`ToolContext::approval_fallback`] and installs it
/// around the calls it dispatches on other tasks or threads with
/// `dsh_runtime::hooks::with_approval`, so that their questions reach the same user.
///
/// Opaque: it is made from an `Arc<dyn hooks::ApprovalHandler>` (`From`), and the
/// pipeline is what reads it. (The handler type lives with the hooks, above this module;
/// the route is how a context carries one without depending on them.)
#[derive(Clone)]
pub struct ApprovalRoute(pub(crate) Arc<dyn std::any::Any + Send + Sync>);

impl fmt::Debug for ApprovalRoute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApprovalRoute(..)")
    }
}

tokio::task_local! {
    /// The route installed by `hooks::with_approval` around the current task's calls.
    pub(crate) static APPROVAL_ROUTE: ApprovalRoute;
}

impl ApprovalRoute {
    /// The route installed around the current call, if any.
    pub(crate) fn current() -> Option<Self> {
        APPROVAL_ROUTE.try_with(Clone::clone).ok()
    }
}

/// One progress update of a running call (see [`ToolContext::report_progress`]).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Progress {
    /// How much is done; increases from one update to the next.
    pub progress: f64,
    /// The total, when known.
    pub total: Option<f64>,
    /// A short human-readable note.
    pub message: Option<String>,
}

/// Where the progress updates of calls go (e.g. an MCP server forwarding them as
/// `notifications/progress`). Install one around [`crate::Registry::execute`] with
/// [`with_progress`].
#[derive(Clone)]
pub struct ProgressReporter(Arc<dyn Fn(Progress) + Send + Sync>);

impl ProgressReporter {
    /// A reporter calling `f` for every update. `f` runs on the reporting task: keep it
    /// short (e.g. push into a channel).
    pub fn new(f: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        ProgressReporter(Arc::new(f))
    }
}

impl fmt::Debug for ProgressReporter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProgressReporter(..)")
    }
}

tokio::task_local! {
    static PROGRESS: ProgressReporter;
}

/// Run `fut` (typically a [`crate::Registry::execute`]) with `reporter` receiving the
/// progress updates of the calls it executes. A context picks the reporter up when the
/// pipeline creates it, so clones moved to other tasks keep reporting to it.
///
/// A plain function, not an `async fn`: the future it returns is `fut` and the reporter,
/// not twice `fut`'s size (an `async fn` keeps its arguments beside the futures it awaits).
pub fn with_progress<F: Future>(
    reporter: ProgressReporter,
    fut: F,
) -> impl Future<Output = F::Output> {
    PROGRESS.scope(reporter, fut)
}

/// `fut` with the progress reporter current here (if any) installed, for running it on
/// another task.
pub(crate) fn progress_scoped<F: Future>(fut: F) -> impl Future<Output = F::Output> {
    let reporter = PROGRESS.try_with(Clone::clone).ok();
    async move {
        match reporter {
            Some(r) => PROGRESS.scope(r, fut).await,
            None => fut.await,
        }
    }
}

/// `fut` with a reporter that calls `on_update` at each progress update, then hands the
/// update on to the reporter current here (if any).
pub(crate) fn progress_observed<F: Future>(
    on_update: impl Fn() + Send + Sync + 'static,
    fut: F,
) -> impl Future<Output = F::Output> {
    let outer = PROGRESS.try_with(Clone::clone).ok();
    let reporter = ProgressReporter::new(move |p| {
        on_update();
        if let Some(outer) = &outer {
            (outer.0)(p);
        }
    });
    PROGRESS.scope(reporter, fut)
}

/// Context a body sends to the final result.
#[derive(Debug, Default)]
pub struct SideChannel {
    deferred: Mutex<Vec<String>>,
    attached: Mutex<Vec<ContentBlock>>,
    concludes_turn: AtomicBool,
    /// Whether anything was ever deferred or attached (set under the lock of the list it
    /// went to), so that taking both lists of a body that sent nothing takes no lock.
    sent: AtomicBool,
    /// The body's cancellation token, when the pipeline let it be created lazily (a child
    /// of the caller's token, made the first time the body asks for it).
    child: OnceLock<CancellationToken>,
}

impl SideChannel {
    /// Take the deferred contexts, in the order they were deferred.
    pub fn take_deferred(&self) -> Vec<String> {
        if !self.sent.load(Ordering::Acquire) {
            return Vec::new();
        }
        std::mem::take(&mut *self.deferred.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Take the attached content blocks, in the order they were attached.
    pub fn take_attached(&self) -> Vec<ContentBlock> {
        if !self.sent.load(Ordering::Acquire) {
            return Vec::new();
        }
        std::mem::take(&mut *self.attached.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Whether the body asked to conclude the turn.
    pub fn concludes_turn(&self) -> bool {
        self.concludes_turn.load(Ordering::Acquire)
    }
}

impl ToolContext {
    /// A context for an execution (used by the pipeline and by tests that call bodies
    /// directly).
    pub fn new(exec: Arc<CallIdentity>, cancel: CancellationToken, side: Arc<SideChannel>) -> Self {
        ToolContext {
            exec,
            cancel: Some(cancel),
            side: Some(side),
            progress: PROGRESS.try_with(Clone::clone).ok(),
            approval: ApprovalRoute::current(),
            jobs: None,
            caller: CallerRoute::current(),
        }
    }

    /// The pipeline's context for one run of a body: the execution's own side channel
    /// and this token.
    pub(crate) fn for_run(exec: Arc<CallIdentity>, cancel: CancellationToken) -> Self {
        ToolContext {
            exec,
            cancel: Some(cancel),
            side: None,
            progress: PROGRESS.try_with(Clone::clone).ok(),
            approval: ApprovalRoute::current(),
            jobs: None,
            caller: CallerRoute::current(),
        }
    }

    /// The pipeline's context for the only run of a body, whose token is a child of the
    /// caller's, made only if the body asks for it (a body that never looks at its token
    /// costs no token). The execution's side channel keeps the child, so there must be
    /// no other run of a body for this execution.
    pub(crate) fn for_only_run(exec: Arc<CallIdentity>) -> Self {
        ToolContext {
            exec,
            cancel: None,
            side: None,
            progress: PROGRESS.try_with(Clone::clone).ok(),
            approval: ApprovalRoute::current(),
            jobs: None,
            caller: CallerRoute::current(),
        }
    }

    fn side(&self) -> &SideChannel {
        self.side.as_deref().unwrap_or(&self.exec.side)
    }

    /// A context for calling a tool body directly, outside any registry (unit tests).
    pub fn detached(name: &str) -> Self {
        let exec = CallIdentity::new(
            "direct".into(),
            "direct".into(),
            name.into(),
            Arc::new(Value::Object(Default::default())),
            None,
            None,
        );
        ToolContext::new(Arc::new(exec), CancellationToken::new(), Arc::default())
    }

    /// The immutable identity of this execution.
    pub fn execution(&self) -> &Arc<CallIdentity> {
        &self.exec
    }
    /// The caller's call id.
    pub fn call_id(&self) -> &str {
        &self.exec.call_id
    }
    /// The tool name.
    pub fn name(&self) -> &str {
        &self.exec.name
    }
    /// The frozen arguments as the model sent them (after snapshot).
    pub fn arguments(&self) -> &SharedValue {
        &self.exec.arguments
    }
    /// The opaque execution token.
    pub fn token(&self) -> ExecutionId {
        self.exec.token
    }
    /// The agent scope of the call.
    pub fn agent(&self) -> Option<AgentScopeId> {
        self.exec.agent
    }
    /// The enclosing execution, for sub-dispatches.
    pub fn parent(&self) -> Option<ExecutionId> {
        self.exec.parent
    }
    /// The cancellation token: cancelled when the caller aborts or a deadline fires.
    /// Bodies should stop promptly when it fires.
    pub fn cancellation(&self) -> &CancellationToken {
        match &self.cancel {
            Some(token) => token,
            None => self
                .exec
                .side
                .child
                .get_or_init(|| self.exec.caller_token().child_token()),
        }
    }
    /// The job runtime this call may publish background work on, acting for no owner
    /// ([`CallJobs::for_owner`] picks one): the registry's
    /// ([`RegistryBuilder::jobs`](crate::RegistryBuilder::jobs)), or the one given with
    /// [`with_jobs`](ToolContext::with_jobs).
    ///
    /// # Errors
    ///
    /// `JOBS_UNAVAILABLE`, naming the tool, when there is none.
    pub fn jobs(&self) -> Result<CallJobs, ToolError> {
        match self.jobs.as_ref().or(self.exec.jobs.as_ref()) {
            Some(runtime) => Ok(CallJobs::new(runtime.clone(), self.cancellation().clone())),
            None => Err(ToolError::with_code(
                "JOBS_UNAVAILABLE",
                format!(
                    "tool {} cannot start background work: the registry has no job runtime (build it with `Registry::builder().jobs(JobRuntime::new())`)",
                    crate::schema::json_quote(&self.exec.name)
                ),
            )),
        }
    }
    /// The same context with `jobs` as its job runtime (for calling bodies directly,
    /// outside a registry).
    #[must_use]
    pub fn with_jobs(mut self, jobs: JobRuntime) -> Self {
        self.jobs = Some(jobs);
        self
    }
    /// Whether cancellation was requested.
    pub fn is_cancelled(&self) -> bool {
        match &self.cancel {
            Some(token) => token.is_cancelled(),
            None => self.exec.lazy_child_cancelled(),
        }
    }
    /// Attach model-facing context to the final result (kept on success, prepended to
    /// the contexts post-execute attaches).
    pub fn defer_context(&self, text: impl Into<String>) {
        let side = self.side();
        let mut deferred = side.deferred.lock().unwrap_or_else(|e| e.into_inner());
        deferred.push(text.into());
        side.sent.store(true, Ordering::Release);
    }
    /// Append `block` to the content of this call's success, after what the tool
    /// renders (dropped when the call fails; replaced with the rest of the content when
    /// post-execute replaces it). For content a body relays rather than renders, such as
    /// the images `run_code` forwards from the calls of a program.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use dsh_runtime::{content::ContentBlock, Registry, ToolCall, ToolContext, tool};
    ///
    /// /// Describe a chart, and show it.
    /// #[tool(read_only)]
    /// async fn chart(cx: ToolContext) -> String {
    ///     cx.attach_content(ContentBlock::image("iVBORw0KGgo=", "image/png"));
    ///     "a rising line".to_string()
    /// }
    ///
    /// let registry = Registry::new();
    /// let _chart = registry.register(Chart).unwrap();
    /// let result = registry.execute(ToolCall::new("1", "chart", "{}")).await;
    /// assert_eq!(result.content().len(), 2);
    /// assert_eq!(result.content()[0].as_text(), Some("a rising line"));
    /// assert!(matches!(result.content()[1], ContentBlock::Image { .. }));
    /// # });
    /// ```
    pub fn attach_content(&self, block: ContentBlock) {
        let side = self.side();
        let mut attached = side.attached.lock().unwrap_or_else(|e| e.into_inner());
        attached.push(block);
        side.sent.store(true, Ordering::Release);
    }
    /// Ask the agent loop to end the turn after this result (success only).
    pub fn conclude_turn(&self) {
        self.side().concludes_turn.store(true, Ordering::Release);
    }
    /// The fallback approval route installed around this call (an MCP session's client,
    /// say), if any. Calls this body dispatches on the same task see it already; install
    /// it with `dsh_runtime::hooks::with_approval` around the calls it dispatches on
    /// other tasks or threads, so that their `ask` decisions reach the same user (code
    /// mode does this for its programs' tool calls).
    pub fn approval_fallback(&self) -> Option<&ApprovalRoute> {
        self.approval.as_ref()
    }

    /// Report progress to whoever executes the call (a no-op unless the caller installed
    /// a reporter with [`with_progress`], as the MCP server does when the client asked
    /// for progress). `progress` should increase from one report to the next.
    pub fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if let Some(reporter) = &self.progress {
            (reporter.0)(Progress {
                progress,
                total,
                message: message.map(str::to_string),
            });
        }
    }

    /// The handler answering what this call asks of its caller (see [`crate::caller`]),
    /// if one was installed around the call. Install it with
    /// [`with_caller`](crate::caller::with_caller) around calls this body dispatches on
    /// other tasks or threads, so that they reach the same caller.
    pub fn caller(&self) -> Option<&CallerRoute> {
        self.caller.as_ref()
    }

    /// This call's caller, as a handle of its own (see [`crate::caller::Caller`]).
    pub fn as_caller(&self) -> caller::Caller {
        caller::Caller::new(
            self.caller.clone(),
            self.exec.call_id.clone(),
            self.exec.name.clone(),
            self.cancellation().clone(),
        )
    }

    /// Log a message to the caller at `level` (an MCP client receives it as
    /// `notifications/message` when it asked for that level or below). Costs nothing
    /// when nobody listens at that level.
    pub fn log(&self, level: LogLevel, message: impl Into<String>) {
        if self.caller.is_some() {
            self.as_caller().log(level, message);
        }
    }

    /// Log structured data to the caller at `level`, under a logger name (see
    /// [`ToolContext::log`]). Data that cannot be written as lossless JSON is logged as
    /// its error message.
    pub fn log_data<T: Serialize + ?Sized>(&self, level: LogLevel, logger: Option<&str>, data: &T) {
        if self.caller.is_some() {
            self.as_caller().log_data(level, logger, data);
        }
    }

    /// Ask the caller's user to fill in a form of type `T` and read the answer.
    ///
    /// `T` derives [`ToolSchema`](crate::ToolSchema) and `Deserialize` and stays within
    /// MCP's form subset (a flat struct of strings, numbers, booleans and enums; see
    /// [`ElicitForm`]). The answer is validated against `T`'s schema before it is read.
    ///
    /// # Errors
    ///
    /// [`CallerError`]: nobody to ask, a caller without forms, an answer that fails the
    /// form (every violation named), the call cancelled while it waited.
    // A boxed future rather than an `async fn`: the bound `T: ElicitForm` then sits on
    // the call alone, so a `T` outside the form subset is one compile error there
    // (an `async fn`'s future repeats it at the call expression and at its `.await`).
    pub fn elicit<T: ElicitForm>(
        &self,
        message: impl Into<String>,
    ) -> caller::CallerFuture<'_, Result<Elicited<T>, CallerError>> {
        let message = message.into();
        Box::pin(async move { self.as_caller().elicit::<T>(message).await })
    }

    /// Ask the caller's user to fill in a form given as a JSON Schema (MCP's
    /// `requestedSchema`), and get the answer as sent: the escape hatch under
    /// [`ToolContext::elicit`] for a form built at run time. The answer is not checked
    /// against the schema.
    ///
    /// # Errors
    ///
    /// As [`ToolContext::elicit`].
    pub async fn elicit_form(&self, request: FormRequest) -> Result<FormAnswer, CallerError> {
        self.as_caller().elicit_form(request).await
    }

    /// Send the caller's user to a URL (MCP's URL-mode elicitation: an OAuth consent, a
    /// payment page). The answer says whether the user agreed to go; what happens there
    /// is out of band.
    ///
    /// # Errors
    ///
    /// As [`ToolContext::elicit`].
    pub async fn elicit_url(&self, request: UrlRequest) -> Result<UrlAnswer, CallerError> {
        self.as_caller().elicit_url(request).await
    }

    /// Ask the caller's model for a message.
    ///
    /// # Errors
    ///
    /// As [`ToolContext::elicit`]; an answer that is not a message is
    /// [`CallerError::InvalidAnswer`].
    pub async fn sample(&self, request: SampleRequest) -> Result<SampledMessage, CallerError> {
        self.as_caller().sample(request).await
    }

    /// The caller's roots (the directories or resources it works in).
    ///
    /// # Errors
    ///
    /// As [`ToolContext::elicit`].
    pub async fn roots(&self) -> Result<Vec<Root>, CallerError> {
        self.as_caller().roots().await
    }

    /// Go on as a task, when the call may become one here: a call of a tool declared
    /// `task_after_input` from an MCP client with tasks on revision 2026-07-28, whose
    /// request is then answered with a `CreateTaskResult`; the body goes on, and its
    /// result is the task's. `false` where the call cannot (it already is a task, or
    /// runs where there are none): it goes on as it was.
    pub async fn continue_as_task(&self) -> bool {
        self.as_caller().continue_as_task().await
    }

    /// Close the stream this call's answer is sent on, and tell the client to come back
    /// after `retry`: it reconnects and gets what was sent since, the answer included
    /// (MCP Streamable HTTP sessions, SEP-1699; for a long call behind a proxy that cuts
    /// idle connections). The call goes on. `false` where the call's transport has no
    /// such stream (stdio, a stateless request, in process).
    pub async fn close_stream(&self, retry: std::time::Duration) -> bool {
        self.as_caller().close_stream(retry).await
    }

    /// Ask the caller several things together: one answer per question, in order. Over
    /// MCP revision 2026-07-28 they go in one `InputRequiredResult` (each under its
    /// [`Question::key`](crate::caller::Question::key)); elsewhere they are asked at
    /// once. A request the caller cannot answer fails alone
    /// ([`CallerError::Unsupported`]), so a body can ask for what the caller supports.
    pub async fn ask_all(
        &self,
        questions: Vec<crate::caller::Question>,
    ) -> Vec<Result<CallerAnswer, CallerError>> {
        self.as_caller().ask_all(questions).await
    }
}

/// What running a body produced, before the pipeline's output stage.
#[derive(Debug)]
#[non_exhaustive]
pub enum BodyOutcome {
    /// The body succeeded; its output as a lossless snapshot.
    Value(Value),
    /// The body succeeded with a string: its output is this text as a JSON string (kept
    /// as text so that the default content block takes it without a copy). Only
    /// [`ErasedTool::call_body`] returns it, to the pipeline.
    #[doc(hidden)]
    Text(String),
    /// The body failed.
    Failed(ToolError),
    /// The validated arguments did not deserialize into the typed arguments (a schema
    /// and serde disagreement); the message is serde's.
    ArgsRejected(String),
    /// The output could not be snapshotted losslessly (e.g. a NaN); the message says where.
    NotLossless(String),
}

/// A boxed, `Send` future (the erased tool interface).
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The object-safe face of a tool, used by the registry.
///
/// Implemented for every [`Tool`]; implement it directly only for tools whose arguments
/// and output are plain JSON (e.g. proxied tools, see [`crate::RawTool`]).
///
/// `Any` is a supertrait so the registry can find a tool by its Rust type for typed
/// calls ([`crate::Registry::call`]).
pub trait ErasedTool: std::any::Any + Send + Sync + 'static {
    /// The static definition.
    fn definition(&self) -> &ToolDefinition;
    /// Deserialize the (validated, normalized) arguments, run the body, snapshot the output.
    fn call_json<'a>(&'a self, args: &'a Value, cx: ToolContext) -> BoxFuture<'a, BodyOutcome>;
    /// [`ErasedTool::call_json`] as the pipeline calls it: a string output may come back
    /// as [`BodyOutcome::Text`] (the pipeline's default content block takes the text
    /// without a copy). Default: `call_json`.
    #[doc(hidden)]
    fn call_body<'a>(&'a self, args: &'a Value, cx: ToolContext) -> BoxFuture<'a, BodyOutcome> {
        self.call_json(args, cx)
    }
    /// See [`Tool::render`].
    fn render(&self, args: &Value, value: &Value) -> Result<Vec<ContentBlock>, ToolError>;
    /// See [`Tool::is_concurrency_safe`].
    fn is_concurrency_safe(&self, args: &Value) -> bool;
    /// See [`Tool::present_call`].
    fn present_call(&self, args: &Value) -> Option<CallView>;
    /// See [`Tool::present_result`].
    fn present_result(&self, args: &Value, result: &ResultSummary) -> Option<ResultView>;
    /// See [`Tool::presentation_meta`].
    fn presentation_meta(&self, args: &Value, value: &Value) -> Result<Option<Value>, ToolError>;
    /// See [`Tool::finalize_content`].
    fn finalize_content(&self, args: &Value, content: &[ContentBlock])
    -> Option<Vec<ContentBlock>>;
    /// Which hooks may run code of the tool's own (a set of [`hooks`] bits; see
    /// [`Tool::OVERRIDDEN_HOOKS`]). The pipeline runs the default of a hook whose bit is
    /// clear itself, without a panic guard (the defaults cannot panic). The default says
    /// "all", which is always correct.
    #[doc(hidden)]
    fn overridden_hooks(&self) -> u8 {
        crate::__private::tool_hooks::ALL
    }
}

impl<T: Tool> ErasedTool for T {
    fn definition(&self) -> &ToolDefinition {
        Tool::definition(self)
    }
    fn call_json<'a>(&'a self, args: &'a Value, cx: ToolContext) -> BoxFuture<'a, BodyOutcome> {
        text_as_value(self.call_body(args, cx))
    }
    fn call_body<'a>(&'a self, args: &'a Value, cx: ToolContext) -> BoxFuture<'a, BodyOutcome> {
        Box::pin(async move {
            let typed: T::Args = match T::args_from_json(args) {
                Ok(a) => a,
                Err(e) => return BodyOutcome::ArgsRejected(e.to_string()),
            };
            match Tool::call(self, typed, cx).await {
                Ok(out) => match output_text(out) {
                    Ok(text) => BodyOutcome::Text(text),
                    Err(out) => match crate::json::to_value(&out) {
                        Ok(v) => BodyOutcome::Value(v),
                        // The reason and where, under the one "not lossless" prefix the
                        // pipeline adds.
                        Err(e) => BodyOutcome::NotLossless(format!("{} at {}", e.kind(), e.path())),
                    },
                },
                Err(e) => BodyOutcome::Failed(e),
            }
        })
    }
    // Each hook calls the tool's own method only when it is overridden; the test is one
    // associated constant, so the branch not taken is not compiled for `T`.
    fn render(&self, args: &Value, value: &Value) -> Result<Vec<ContentBlock>, ToolError> {
        if Overrides::<T>::RENDER {
            Tool::render(self, args, value)
        } else {
            Ok(default_render(value))
        }
    }
    fn is_concurrency_safe(&self, args: &Value) -> bool {
        Overrides::<T>::IS_CONCURRENCY_SAFE && Tool::is_concurrency_safe(self, args)
    }
    fn present_call(&self, args: &Value) -> Option<CallView> {
        if Overrides::<T>::PRESENT_CALL {
            Tool::present_call(self, args)
        } else {
            None
        }
    }
    fn present_result(&self, args: &Value, result: &ResultSummary) -> Option<ResultView> {
        if Overrides::<T>::PRESENT_RESULT {
            Tool::present_result(self, args, result)
        } else {
            None
        }
    }
    fn presentation_meta(&self, args: &Value, value: &Value) -> Result<Option<Value>, ToolError> {
        if Overrides::<T>::PRESENTATION_META {
            Tool::presentation_meta(self, args, value)
        } else {
            Ok(None)
        }
    }
    fn finalize_content(
        &self,
        args: &Value,
        content: &[ContentBlock],
    ) -> Option<Vec<ContentBlock>> {
        if Overrides::<T>::FINALIZE_CONTENT {
            Tool::finalize_content(self, args, content)
        } else {
            None
        }
    }
    fn overridden_hooks(&self) -> u8 {
        T::OVERRIDDEN_HOOKS
    }
}

/// A body's output as a lossless value: what [`crate::json::to_value`] makes of it, except
/// that a `String` is moved into the value instead of copied (the common output of a
/// tool; a test compares both paths on generated values). The pipeline itself keeps a
/// `String` output as text ([`BodyOutcome::Text`]) and makes the value from it.
#[cfg(test)]
pub(crate) fn output_value<O: Serialize + 'static>(
    out: O,
) -> Result<Value, crate::json::LosslessError> {
    match output_text(out) {
        Ok(text) => Ok(Value::String(crate::json::Str::from(text))),
        Err(out) => crate::json::to_value(&out),
    }
}

/// `body` with a [`BodyOutcome::Text`] turned into the value it stands for (the outcome
/// [`ErasedTool::call_json`] promises). Not generic: one copy serves every tool.
fn text_as_value(body: BoxFuture<'_, BodyOutcome>) -> BoxFuture<'_, BodyOutcome> {
    Box::pin(async move {
        match body.await {
            BodyOutcome::Text(text) => BodyOutcome::Value(Value::String(text.into())),
            other => other,
        }
    })
}

/// A body's output that is a `String`, moved out; any other output handed back as
/// `Some(out)`, which serializes exactly as `out` does.
fn output_text<O: 'static>(out: O) -> Result<String, Option<O>> {
    let mut slot = Some(out);
    if let Some(s) = (&mut slot as &mut dyn std::any::Any).downcast_mut::<Option<String>>() {
        // `slot` is `Some` (it was just filled); `take` only moves the string out.
        return Ok(s.take().unwrap_or_default());
    }
    Err(slot)
}

/// [`Tool::OVERRIDDEN_HOOKS`] as one constant per hook (a constant operand lets the
/// compiler drop the branch not taken before code generation).
struct Overrides<T>(std::marker::PhantomData<T>);

impl<T: Tool> Overrides<T> {
    const RENDER: bool = T::OVERRIDDEN_HOOKS & crate::__private::tool_hooks::RENDER != 0;
    const IS_CONCURRENCY_SAFE: bool =
        T::OVERRIDDEN_HOOKS & crate::__private::tool_hooks::IS_CONCURRENCY_SAFE != 0;
    const PRESENT_CALL: bool =
        T::OVERRIDDEN_HOOKS & crate::__private::tool_hooks::PRESENT_CALL != 0;
    const PRESENT_RESULT: bool =
        T::OVERRIDDEN_HOOKS & crate::__private::tool_hooks::PRESENT_RESULT != 0;
    const PRESENTATION_META: bool =
        T::OVERRIDDEN_HOOKS & crate::__private::tool_hooks::PRESENTATION_META != 0;
    const FINALIZE_CONTENT: bool =
        T::OVERRIDDEN_HOOKS & crate::__private::tool_hooks::FINALIZE_CONTENT != 0;
}

/// A type-erased, shareable tool, as the registry holds it.
#[derive(Clone)]
pub struct DynTool(Arc<dyn ErasedTool>);

impl DynTool {
    /// Erase a tool.
    pub fn new<T: ErasedTool>(tool: T) -> Self {
        DynTool(Arc::new(tool))
    }
    /// Erase a shared tool.
    pub fn from_arc(tool: Arc<dyn ErasedTool>) -> Self {
        DynTool(tool)
    }
    /// The erased interface.
    pub fn erased(&self) -> &dyn ErasedTool {
        &*self.0
    }
    /// The static definition.
    pub fn definition(&self) -> &ToolDefinition {
        self.0.definition()
    }
    /// Whether both handles share one tool (clones of one `DynTool`).
    pub fn same_as(&self, other: &DynTool) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// The Rust type of the erased tool (the `#[tool]` struct for derived tools).
    pub fn type_id(&self) -> std::any::TypeId {
        let any: &dyn std::any::Any = &*self.0;
        any.type_id()
    }
}

impl fmt::Debug for DynTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("DynTool")
            .field(&self.definition().name)
            .finish()
    }
}

/// A stateful value whose methods are tools (`#[toolbox] impl S { #[tool] async fn .. }`).
pub trait Toolbox: Send + Sync + 'static {
    /// Every tool of this value, sharing it.
    fn tools(self: Arc<Self>) -> Vec<DynTool>;
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::output_value;

    /// The moved path and the general path make the same value (or the same error).
    fn agrees<O: serde::Serialize + Clone + 'static>(out: &O) -> Result<(), TestCaseError> {
        let general = crate::json::to_value(out).map_err(|e| e.to_string());
        let fast = output_value(out.clone()).map_err(|e| e.to_string());
        prop_assert_eq!(fast, general);
        Ok(())
    }

    proptest! {
        #[test]
        fn output_value_agrees_with_to_value(
            s in any::<String>(),
            v in proptest::collection::vec(any::<String>(), 0..4),
            o in proptest::option::of(any::<String>()),
            n in any::<u64>(),
            f in any::<f64>(),
            m in proptest::collection::btree_map("[a-c]{0,2}", any::<i32>(), 0..4),
        ) {
            agrees(&s)?;
            agrees(&String::with_capacity(s.len() + 7) )?;
            let mut roomy = String::with_capacity(s.len() * 2 + 1);
            roomy.push_str(&s);
            agrees(&roomy)?;
            agrees(&v)?;
            agrees(&o)?;
            agrees(&n)?;
            agrees(&f)?;
            agrees::<BTreeMap<String, i32>>(&m)?;
            agrees(&(s.clone(), n))?;
        }
    }
}
