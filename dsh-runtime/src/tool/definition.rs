//! A tool's static [`ToolDefinition`]: its name, description, schemas and
//! [`ToolAnnotations`].

use std::borrow::Cow;
use std::fmt;
use std::num::NonZeroU64;
use std::sync::Arc;

use serde::Serialize;

use crate::schema::{Schema, VerbatimSchema};

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
    /// each progress report of the call ([`ToolContext::report_progress`](crate::ToolContext::report_progress)), so a long
    /// call that keeps reporting is not cut short. Set with
    /// `#[tool(timeout_ms = N, timeout_restarts_on_progress)]`.
    pub timeout_restarts_on_progress: bool,
    /// A call of a task-capable tool runs as an ordinary call, asking its caller what it
    /// needs, and becomes a task when its body calls
    /// [`ToolContext::continue_as_task`](crate::ToolContext::continue_as_task) (MCP 2026-07-28: `InputRequiredResult` rounds,
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
