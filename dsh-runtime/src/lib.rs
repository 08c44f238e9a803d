//! # dsh-runtime
//!
//! Write the tools LLM agents call as ordinary async Rust functions. The `#[tool]`
//! attribute derives the model-facing JSON parameter schema, the output schema and strict
//! argument validation from the Rust types and doc comments; the runtime runs every call
//! through one ordered pipeline.
//!
//! # A first tool
//!
//! ```
//! use dsh_runtime::{Tool, ToolContext, ToolError, tool};
//!
//! /// Greet someone by name.
//! #[tool(read_only)]
//! async fn greet(
//!     /// Who to greet.
//!     name: String,
//!     cx: ToolContext,
//! ) -> Result<String, ToolError> {
//!     Ok(format!("Hello, {name}! (call {})", cx.call_id()))
//! }
//!
//! assert_eq!(Greet.definition().name, "greet");
//! ```
//!
//! `#[tool]` keeps `greet` callable as written and adds a unit struct `Greet` implementing
//! [`Tool`], plus `GreetArgs { name }`. The model sees the doc comment as the tool's
//! description and this parameter schema (the context is not a property):
//!
//! ```
//! # use dsh_runtime::{Tool, ToolContext, ToolError, tool};
//! # /// Greet someone by name.
//! # #[tool(read_only)]
//! # async fn greet(
//! #     /// Who to greet.
//! #     name: String,
//! #     cx: ToolContext,
//! # ) -> Result<String, ToolError> {
//! #     Ok(format!("Hello, {name}! (call {})", cx.call_id()))
//! # }
//! assert_eq!(
//!     Greet.definition().parameters.to_json_string(),
//!     r#"{"type":"object","properties":{"name":{"type":"string","description":"Who to greet."}},"required":["name"]}"#
//! );
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let text = Greet.call(GreetArgs { name: "Ada".into() }, ToolContext::detached("greet")).await;
//! assert_eq!(text, Ok("Hello, Ada! (call direct)".to_string()));
//! # });
//! ```
//!
//! See [`tool`](macro@tool) for everything `#[tool]` accepts and generates, and [`toolbox`](macro@toolbox) for tools
//! that share state.
//!
//! At the root: the [`Tool`] contract ([`ToolDefinition`], [`ToolContext`], [`ToolError`]),
//! the [`Registry`] with its agent scopes ([`AgentScope`]) and views ([`ToolView`]), and
//! the pipeline's calls and results ([`ToolCall`], [`ToolResult`], [`PipelineCode`],
//! [`DispatchOutcome`]). Each public name has one path. The modules, in dependency order
//! (each uses only the ones before it):
//! - [`json`]: lossless snapshots of raw arguments (the `dsh-json` crate);
//! - [`schema`]: the schema vocabulary behind [`ToolSchema`] and its std impls;
//! - [`validate`]: path-qualified validation reporting every violation;
//! - [`type_checks`]: the traits `#[derive(ToolSchema)]` and `#[tool]` check a type
//!   against at compile time, which you may implement for your own types;
//! - [`content`]: the model-facing content blocks;
//! - [`cards`]: the card vocabulary presenters return;
//! - [`jobs`]: background jobs with owners, bounded output buffers and kill/wait, which
//!   a tool reaches through [`ToolContext::jobs`];
//! - [`hooks`]: policy hooks (pre-execute, approval, guards, wrappers, post-execute,
//!   observers) and what they see;
//! - [`log`]: the call log's records.
//!
//! # The pipeline
//!
//! One entry point, [`crate::Registry::execute`], runs every call
//! through the same ordered stages and returns one immutable [`ToolResult`].
//!
//! ## Stages
//!
//! Each stage is one function in the `pipeline` module's source (`pipeline/exec.rs` runs them in order):
//!
//! | # | stage | function | on failure |
//! | --- | --- | --- | --- |
//! | 1 | **resolve** the name in the caller's view (capturing the tool's `finalize_content`) | `exec::enter` | unknown name: `UNKNOWN_TOOL`, through post-execute |
//! | 2 | **snapshot** the arguments losslessly, freeze them, mint the execution's token | `exec::enter` | `INVALID_ARGS`, straight to finalize (outranks an unknown name) |
//! | 3 | **validate** against the parameter schema | `exec::validate` | `INVALID_ARGS` with every violation, through post-execute |
//! | 4 | **pre-execute** waterfall ([`hooks::PreExecute`]), approval on `ask` ([`hooks::ApprovalHandler`]); a caller token already cancelled stops here first | `exec::policy` | cancelled: `ABORTED_BEFORE_DISPATCH`, straight to finalize · denial: codeless failure, through post-execute |
//! | 5 | **guards** ([`hooks::Guard`]), the first denial wins | `exec::policy` | denial: codeless failure, through post-execute |
//! | 6 | **wrappers** ([`hooks::Wrapper`]) around the dispatch, the built-in [`TimeoutWrapper`] outermost | `dispatch::dispatch` | `TOOL_TIMEOUT` · a wrapper's own error, straight to finalize |
//! | 7 | **body**, with a child of the caller's token (fused with a wrapper's replacement); on a task of its own when it can be cancelled (`detach`) | `dispatch::Dispatcher::body` | the tool's error and code · `INVALID_ARGS` when serde rejects the validated arguments · `ABORTED` after a cancelled success, or when a cancelled body was detached · a codeless refusal while the detached bodies reach the registry's limit |
//! | 8 | **output**: snapshot, validate against the output schema, freeze, render, presentation meta (top-level calls) | `output::success`, `output::settle` | `INVALID_TOOL_OUTPUT` |
//! | 9 | **post-execute** ([`hooks::PostExecute`]): accept (replace content *or* value), block, attach contexts; then a caller abort turns a success into `ABORTED` | `post::post_execute` | the hook's error |
//! | 10 | **finalize** the content once, freeze, notify **observers** ([`hooks::Observer`]) | `post::finalize` | a panicking finalizer: `TOOL_PANICKED` |
//!
//! Denials (pre-execute, approval, guards) are codeless failures that still pass
//! post-execute (`ABORTED_BEFORE_DISPATCH` instead when the caller aborted meanwhile). A
//! hook, approval handler, guard or wrapper that errs ends the call with that error,
//! skipping post-execute; one that panics does the same with `TOOL_PANICKED`.
//!
//! Undeclared keys at a `#[tool]`'s parameter root pass validation (the root is open) and
//! never reach the body; stage 10 names them in a context of the result (see
//! [`crate::tool`](macro@crate::tool), "Unknown arguments").
//!
//! ## Error codes
//!
//! Every failure the registry produces has a code ([`PipelineCode`]) except policy denials
//! (pre-execute, approval, guards, post-execute `block`), which carry the policy's
//! message only. A tool's own code passes through unchanged.
//!
//! # The crates around it
//!
//! This crate is the contract every tool and host shares, with one optional feature,
//! `json-schema`: full JSON Schema 2020-12 validation (the `jsonschema` crate) for the tools
//! that publish their own schema ([`schema::VerbatimSchema`], [`RawTool::with_json_schema`]),
//! which otherwise own the validation of the few keywords the runtime leaves unchecked. What
//! else a project needs is a crate of its own, so a build carries only what it uses:
//! - `dsh-providers`: the tools in the shape each model API (OpenAI, Anthropic, Gemini,
//!   MCP) takes, with the checkers, the round trip between provider messages and
//!   [`ToolCall`]s/[`ToolResult`]s, token counts, `tool_search` and the Markdown catalog;
//! - `dsh-testing` (a dev-dependency): property checks of a tool from its schemas
//!   (`ToolCheck`), argument strategies, an in-memory client and call-log replay;
//! - `dsh-mcp`: serve a registry over MCP, or import an MCP server's tools;
//! - `dsh-code`: code mode, the `run_code` tool and the TypeScript and Python SDKs it
//!   describes;
//! - `dsh-tools`: the reference tools (read, write, edit, grep, glob, bash, jobs) and the
//!   `dsh-tools` host.
//!
//! Cancellation uses [`CancellationToken`] (re-exported from `tokio-util`, so you need no
//! dependency of your own to cancel a call).
#![deny(missing_docs)]

/// The card vocabulary: neutral render intents a UI maps to its own views (the
/// [`dsh_cards`] crate, without its [`ContentBlock`](crate::content::ContentBlock), which
/// is in [`content`]).
///
/// Tools describe a pending call with a [`CallView`](cards::CallView) and a completed
/// result with a [`ResultView`](cards::ResultView), from their presenters.
pub mod cards {
    #[doc(inline)]
    pub use dsh_cards::{
        CallView, FileDiff, FileLocation, ReadLine, ReadView, ResultSummary, ResultView,
        SearchFile, SearchMatch, SearchView, TerminalExit, ToolCallKind, WebSource, WebView,
    };
}
pub mod caller;
pub mod complete;
pub mod content;
mod error_code;
pub mod hooks;
pub mod jobs;
pub mod log;
pub mod prompts;
#[doc(inline)]
pub use dsh_json as json;
mod panic;
mod pipeline;
mod registry;
pub mod resources;
mod result;
pub mod schema;
mod snapshot;
mod suggest;
mod tool;
pub mod type_checks;
pub mod validate;
mod violations;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

// Not public API: traits the `#[tool]` expansion asserts at the user's own tokens. rustc
// prints a trait's path in the compile error it reports, so they have plain names at the
// root (`dsh_runtime::ToolParam`) instead of a path through `__private`.
#[doc(hidden)]
pub use tool::{IntoToolError, ToolParam, ToolStruct};

pub use pipeline::{
    Arguments, CallOrder, DispatchOutcome, ExecutionMode, FailureCode, PipelineCode,
    TimeoutWrapper, ToolCall, ToolCallError, ToolResult, UnknownPipelineCode,
};
pub use registry::{
    AgentScope, RUN_CODE, RawTool, RegisterError, RegistrationGuard, RegistrationHandle, Registry,
    RegistryBuilder, RestrictError, Restriction, ToolDescriptor, ToolView, WeakRegistry,
};
pub use schema::tool_schema::ToolSchema;
pub use tokio_util::sync::CancellationToken;
pub use tool::{
    AgentScopeId, ApprovalRoute, BodyOutcome, BoxFuture, CallIdentity, DynTool, ErasedTool,
    ExecutionId, NamedTool, Namespace, ParentCall, Progress, ProgressReporter, SideChannel,
    TaskSupport, Tool, ToolAnnotations, ToolContext, ToolDefinition, ToolError, Toolbox,
    with_progress,
};

/// Turn an `async fn` into a tool the model can call.
///
/// ```
/// use dsh_runtime::{Tool, ToolContext, ToolError, tool};
///
/// /// Read a file from disk.
/// ///
/// /// Returns the text, or a window of lines when `offset`/`limit` are given.
/// ///
/// /// # Arguments
/// ///
/// /// * `offset` - 1-based first line.
/// #[tool(read_only, concurrency_safe, timeout_ms = 10_000)]
/// pub async fn read_file(
///     /// Absolute path of the file.
///     path: String,
///     offset: Option<u64>,
///     limit: Option<u64>,
///     cx: ToolContext,
/// ) -> Result<String, ToolError> {
///     let _ = (offset, limit, cx);
///     std::fs::read_to_string(&path).map_err(|e| ToolError::with_code("FS_READ", e.to_string()))
/// }
///
/// let def = ReadFile.definition();
/// assert_eq!(def.name, "read_file");
/// assert_eq!(def.description, "Read a file from disk.\n\nReturns the text, or a window of lines when `offset`/`limit` are given.");
/// assert_eq!(
///     def.parameters.to_json_string(),
///     concat!(
///         r#"{"type":"object","properties":{"#,
///         r#""path":{"type":"string","description":"Absolute path of the file."},"#,
///         r#""offset":{"type":"integer","description":"1-based first line.","minimum":0},"#,
///         r#""limit":{"type":"integer","minimum":0}},"#,
///         r#""required":["path"]}"#,
///     )
/// );
/// ```
///
/// # What it generates
///
/// - **The fn itself**, unchanged except that doc comments on its parameters are removed
///   (rustc does not accept them there). It stays callable as written, e.g. from unit tests.
/// - **A unit struct** named after the fn in PascalCase (`read_file` → `ReadFile`), or
///   `struct_name`, with the fn's visibility, implementing [`Tool`]:
///   - `Args` is the generated args struct, `Output` the fn's output type;
///   - `definition()` is built once, on first use, and kept in a `static`: the name, the
///     description, the title, the parameter schema (the args struct's), the output schema
///     (the output type's), `timeout_ms` and the annotations;
///   - `call` runs the fn; the hooks (`is_concurrency_safe`, `render`, presenters...) come
///     from the keys below.
/// - **An args struct** `ReadFileArgs` (the tool struct's name plus `Args`, or
///   `args_struct_name`) with one `pub` field per parameter (the context excepted), in
///   order, documented like the parameter. It implements serde's `Deserialize` (reading
///   the arguments object member by member, as the pipeline does; unknown fields are
///   ignored unless `deny_unknown_args`) and derives `Serialize`, both through this crate,
///   so you need no serde dependency of your own, and implements [`ToolSchema`] as the
///   parameter root: an object whose properties keep the parameter order, open unless
///   `deny_unknown_args` (see "Unknown arguments").
///
/// **Naming the generated structs.** The default names can be taken: `fn text_stats`
/// returning a `struct TextStats` of its own. The tool struct then cannot be named
/// `TextStats`, and the compiler says so in one error at the fn name. Name the generated
/// structs yourself with `struct_name` (the args struct follows it) and, if you need to,
/// `args_struct_name`:
///
/// ```
/// use dsh_runtime::{Tool, ToolSchema, tool};
///
/// #[derive(serde::Serialize, ToolSchema)]
/// pub struct TextStats { words: usize }
///
/// /// Count the words of a text.
/// #[tool(struct_name = "TextStatsTool")]
/// pub async fn text_stats(text: String) -> TextStats {
///     TextStats { words: text.split_whitespace().count() }
/// }
///
/// assert_eq!(TextStatsTool.definition().name, "text_stats");
/// let _args = TextStatsToolArgs { text: "a b".into() };
/// ```
///
/// # Parameters
///
/// Each parameter is written `name: Type`; the identifier (without `r#`) is the JSON
/// property. The type must be owned (arguments are deserialized into it) and implement
/// [`ToolSchema`] and serde's `Deserialize`. `Option<T>` parameters are not required, and
/// `null` for them means "omitted".
///
/// Descriptions come from `///` on the parameter, or from a rustdoc `# Arguments` section in
/// the fn's doc comment (`` * `name` - text ``); that section is then left out of the tool
/// description. An entry naming no parameter is a compile error, and so is documenting a
/// parameter in both places. Doc text may also be `#[doc = include_str!("..")]` or
/// `#[doc = concat!(..)]`; the `# Arguments` section is read from literal doc lines only.
///
/// **Constraints and annotations.** `#[schema(...)]` on a parameter takes the keys of a
/// struct field of [`derive@ToolSchema`] (`range`, `length`, `pattern`, `enum`, `const`,
/// `examples`/`example`, `default`, `title`, `description`; not `with`: a parameter is read
/// with its type's own `Deserialize`), with the same meaning: they are published on the
/// parameter's property, enforced by validation before the body runs, and checked against
/// the parameter's type at compile time. A `default` is checked too, at the default: it
/// must satisfy the parameter's own `range`, `length`, `pattern`, `enum` and `const`, and
/// fit its type ([`type_checks::DefaultFit`]: the JSON type, an integer type's range, a unit
/// enum's variants; the items of an array default are not checked). The attribute is
/// removed from the emitted fn.
///
/// ```
/// use dsh_runtime::{Tool, tool};
///
/// /// Search the notes.
/// #[tool]
/// async fn search_notes(
///     /// What to look for.
///     #[schema(length(min = 1, max = 80), examples = ["rust"])]
///     query: String,
///     #[schema(range(min = 1, max = 50), description = "At most this many notes.")]
///     limit: Option<u32>,
/// ) -> Vec<String> {
///     vec![query; limit.unwrap_or(1) as usize]
/// }
///
/// assert_eq!(
///     SearchNotes.definition().parameters.to_json_string(),
///     concat!(
///         r#"{"type":"object","properties":{"#,
///         r#""query":{"type":"string","description":"What to look for.","examples":["rust"],"minLength":1,"maxLength":80},"#,
///         r#""limit":{"type":"integer","description":"At most this many notes.","minimum":1,"maximum":50}},"#,
///         r#""required":["query"]}"#,
///     )
/// );
/// ```
///
/// **Mirrored into an HTTP header.** `#[schema(header = "Name")]` (parameters only) marks
/// the property `"x-mcp-header": "Name"` (SEP-2243, MCP revision 2026-07-28): an MCP client
/// on Streamable HTTP repeats the argument as the request header `Mcp-Param-Name`, so
/// load balancers and gateways can route on it without reading the body, and dsh-mcp
/// refuses a `tools/call` whose header disagrees with the argument (HTTP 400, JSON-RPC
/// `-32020`) before the body runs. Three compile-time rules, each an error at the
/// offending token: the name is an HTTP token (ASCII letters, digits and
/// `` !#$%&'*+-.^_`|~ ``, at least one); the type is a string, an integer or a boolean, or
/// an `Option` of one ([`type_checks::SchemaHeader`]; not a float, an array or an object);
/// no two parameters share a name, compared case-insensitively. Only MCP exports publish
/// the keyword; the other providers' schemas leave it out.
///
/// ```
/// use dsh_runtime::{Tool, tool};
///
/// /// Run a query in a region.
/// #[tool]
/// async fn execute_sql(
///     /// The region to run in.
///     #[schema(header = "Region")]
///     region: String,
///     query: String,
/// ) -> String {
///     format!("{query} in {region}")
/// }
///
/// assert_eq!(
///     ExecuteSql.definition().parameters.to_json_string(),
///     concat!(
///         r#"{"type":"object","properties":{"#,
///         r#""region":{"type":"string","description":"The region to run in.","x-mcp-header":"Region"},"#,
///         r#""query":{"type":"string"}},"required":["region","query"]}"#,
///     )
/// );
/// ```
///
/// **The context.** A parameter whose type is named `ToolContext`, by value or by `&`, gets
/// the call's [`ToolContext`] and is not part of the schema. At most one is allowed. The type
/// is recognised by its name (a macro sees only syntax) and then checked to really be
/// `dsh_runtime::ToolContext`, so an unrelated type of that name is a type error at the
/// parameter.
///
/// **One struct as the arguments.** With `#[tool(args)]`, the fn's one parameter besides the
/// context is the whole arguments object: its type is `Tool::Args` and its schema is the
/// parameter schema, and no args struct is generated. The rule is explicit rather than
/// guessed from the type, because a macro cannot tell a struct from an alias of `String`.
/// The type's schema must be an object: a struct with named fields deriving [`ToolSchema`],
/// or a string-keyed map. This is checked at compile time (the [`type_checks::SchemaObject`]
/// trait, at the parameter's type); a hand-written `SchemaObject` impl whose schema is not an
/// object is caught when the definition is first built, which panics naming the tool.
///
/// ```
/// # use dsh_runtime::{Tool, ToolSchema, tool};
/// #[derive(serde::Deserialize, ToolSchema)]
/// pub struct Filter { field: String, limit: u32 }
///
/// /// Search with one filter.
/// #[tool(args)]
/// async fn search(Filter { field, limit }: Filter) -> Vec<String> {
///     vec![field; limit as usize]
/// }
///
/// let parameters = &Search.definition().parameters;
/// assert_eq!(parameters.as_object().unwrap().properties, Filter::schema().as_object().unwrap().properties);
/// // As the parameter root, the object is open (nested, `Filter` stays closed).
/// assert!(!parameters.to_json_string().contains("additionalProperties"));
/// ```
///
/// # Unknown arguments
///
/// The parameter root is open: its published schema has no `additionalProperties`, and a
/// key that names no parameter is not an error. Such keys never reach the body (they are
/// removed before deserialization), and the result names them in a context
/// ([`ToolResult::contexts`], the envelope's `additionalContexts`), e.g.
/// `ignored unknown argument "limt": did you mean "limit"? (tool "read_file" takes "path", "offset", "limit")`,
/// so a misspelt optional parameter is caught without failing the call (a key close to an
/// optional parameter the call left out is named with it, as a misspelt required one is). Objects below the
/// root stay closed.
///
/// `#[tool(deny_unknown_args)]` closes the root instead: `additionalProperties: false`,
/// and an unknown key is `INVALID_ARGS` naming it. With `#[tool(args)]`, a type whose
/// `Deserialize` rejects unknown fields (serde's `deny_unknown_fields`) closes the root
/// too (found out once, when the definition is built).
///
/// ```
/// # use dsh_runtime::{Registry, Tool, ToolCall, tool};
/// /// Count to a number.
/// #[tool]
/// async fn count(to: u32, step: Option<u32>) -> u32 { to / step.unwrap_or(1) }
///
/// /// Count to a number, strictly.
/// #[tool(deny_unknown_args)]
/// async fn count_strictly(to: u32) -> u32 { to }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let registry = Registry::new();
/// let _c = registry.register(Count).unwrap();
/// let _s = registry.register(CountStrictly).unwrap();
/// let r = registry.execute(ToolCall::new("1", "count", r#"{"to":6,"stpe":2}"#)).await;
/// assert_eq!(r.text(), "6");
/// assert_eq!(r.contexts(), [r#"ignored unknown argument "stpe": did you mean "step"? (tool "count" takes "to", "step")"#]);
///
/// let r = registry.execute(ToolCall::new("2", "count_strictly", r#"{"to":6,"stpe":2}"#)).await;
/// assert_eq!(r.code_str(), Some("INVALID_ARGS"));
/// assert_eq!(r.message(), Some(r#"invalid arguments: "stpe" is not a declared property (additionalProperties: false)"#));
/// # });
/// ```
///
/// # Return type
///
/// - `Result<T, E>`: `T` is the output and an `Err` fails the call; `E` must convert with
///   `Into<ToolError>` (every `std::error::Error` does). A return type whose last path
///   segment is `Result` counts, so `std::io::Result<T>` and similar aliases work; an alias
///   under another name is taken as a plain output type.
/// - Any other `T`: the call always succeeds with it. No return type means `()`, published
///   as `null`.
///
/// The output type must implement [`ToolSchema`] (its schema is published; any JSON root is
/// fine) and `Serialize`; with `render` or `presentation_meta` also `Deserialize`, since those
/// receive the canonical value typed.
///
/// # Keys
///
/// | key | meaning |
/// | --- | --- |
/// | `name = "..."` | the tool name (default: the fn name); must match `^[a-zA-Z0-9_-]{1,64}$`, and `run_code` is reserved |
/// | `description = "..."` | the description, instead of the doc comment (a literal, `include_str!` or `concat!`) |
/// | `title = "..."` | a human-facing title |
/// | `timeout_ms = N` | deadline metadata for the timeout wrapper; a positive integer |
/// | `concurrency_safe` | calls may run in parallel with other parallel-safe calls |
/// | `concurrency_safe = path` | the same, decided per call by `fn(&Args) -> bool` |
/// | `read_only`, `destructive`, `idempotent`, `open_world` | MCP-style annotations |
/// | `ask = "why"` | every call asks for approval first, with this reason ([`ToolDefinition::ask`]: the installed approval handler, over MCP the client's user, answers; without one the call is denied); not with `read_only`. Policy that targets one tool names it by type: [`hooks::pre_execute_for`], [`NamedTool::NAME`] |
/// | `defer_loading` | load the tool on demand: exports mark it deferred (Anthropic, OpenAI Responses), `tool_search` finds it |
/// | `render = path` | model-facing content: `fn(&Args, &Output) -> Vec<ContentBlock>` |
/// | `present_call = path` | the pending card: `fn(&Args) -> Option<CallView>` (or `-> CallView`) |
/// | `present_result = path` | the completed card: `fn(&Args, &ResultSummary) -> Option<ResultView>` (or `-> ResultView`) |
/// | `presentation_meta = path` | durable card data: `fn(&Args, &Output) -> Option<impl Serialize>` (or any `Serialize`, e.g. a JSON value; `null` means none) |
/// | `finalize_content = path` | replace the final content once: `fn(&Args, &[ContentBlock]) -> Option<Vec<ContentBlock>>` |
/// | `args` | the single parameter is the whole arguments object (see above) |
/// | `deny_unknown_args` | close the parameter root: an unknown key is `INVALID_ARGS` (see "Unknown arguments") |
/// | `crate = "..."` | the path of this crate when it is renamed in `Cargo.toml` |
/// | `struct_name = "..."` | the name of the generated tool struct (default: the fn name in PascalCase); the args struct becomes `<name>Args` |
/// | `args_struct_name = "..."` | the name of the generated args struct (not with `args`, which generates none) |
/// | `example = r#"{..}"#` | an input example: one JSON object of arguments (repeatable; see "Input examples") |
/// | `portable = "target"`, `portable("a", "b")` | fail the build when the export to a target would change the schema (see "Portability") |
///
/// # Input examples
///
/// Whole example calls help a model more than a per-field `#[schema(example)]`. The
/// ```` ```json ```` blocks of the doc comment's `# Examples` section, then every
/// `example = ".."` key, become [`ToolDefinition::input_examples`], in that order. Each
/// must be one JSON object (else a compile error at the block's line or the literal); the
/// registry validates each against the parameter schema
/// ([`RegisterError::Example`] names the example and the path). An `# Examples` section
/// with JSON blocks holds only JSON blocks and captions, and is left out of the
/// description; one without JSON blocks stays in the description as before. Exports send
/// the examples as Anthropic's `input_examples`; every other target has no such field and
/// gets them appended to the description (`Examples: {..}; {..}`), with a warning.
///
/// ```
/// # use dsh_runtime::{Tool, tool};
/// /// Read lines of a file.
/// ///
/// /// # Examples
/// ///
/// /// The first ten lines:
/// ///
/// /// ```json
/// /// {"path": "src/lib.rs", "limit": 10}
/// /// ```
/// #[tool(read_only, example = r#"{"path": "README.md"}"#)]
/// async fn read_lines(path: String, limit: Option<u32>) -> String {
///     format!("{path}:{limit:?}")
/// }
/// let examples = &ReadLines.definition().input_examples;
/// assert_eq!(examples[0].to_string(), r#"{"path":"src/lib.rs","limit":10}"#);
/// assert_eq!(examples.len(), 2);
/// ```
///
/// # Portability
///
/// A tool's provider is usually known when it is written. `portable = ".."` names the
/// targets whose export must keep the parameter schema as it is: `"openai-strict"`
/// (OpenAI Structured Outputs, Responses and Chat Completions), `"anthropic-strict"`
/// (Anthropic strict tool use) and `"gemini"` (Gemini's OpenAPI `parameters` form).
/// Each parameter type states at compile time what its schema holds (derived with
/// [`ToolSchema`], and for the std types), and the build fails at the parameter, naming
/// the field path inside its type and what to change, when the export would lose or
/// rewrite something:
///
/// | rule | `openai-strict` | `anthropic-strict` | `gemini` |
/// | --- | --- | --- | --- |
/// | a map (`HashMap<String, T>`) | ✗ | ✗ | ✗ (value schema dropped) |
/// | any JSON (`serde_json::Value`) | ✗ | ✗ | |
/// | an open object below the root (`#[schema(open)]`, `serde_json::Map`) | ✗ | ✗ | |
/// | an object without properties | | | ✗ |
/// | `minLength`/`maxLength` (`length(..)` on a string, `char`) | ✗ | ✗ | |
/// | `minimum`/`maximum` (`range(..)`, `u32`, `u64`, `i32`, `f32`..) | | ✗ | |
/// | `maxItems`, `minItems` above 1 (`[T; N]`, `length(..)` on an array) | | ✗ | |
/// | `default` (`#[schema(default)]`, `#[serde(default)]`) | ✗ | | |
/// | schema `examples` | ✗ | ✗ | more than one |
/// | `oneOf` (an enum with data, or unit variants with examples or defaults) | ✗ | ✗ | ✗ |
/// | a unit enum with documented variants (`oneOf` of described strings) | | | ✗ |
/// | `Option` outside an object property (`Vec<Option<T>>`) | ✗ | ✗ | |
/// | an `enum`/`const` of non-strings | | | ✗ |
/// | a property name outside `[A-Za-z_][A-Za-z0-9_]*` (`dry-run`) | | | ✗ |
/// | more than 10 levels of object nesting, the root included | ✗ | | |
///
/// These are the export's own rules (`dsh_providers::export` with `Target::OpenAiResponsesStrict`,
/// `AnthropicStrict`, `GeminiOpenApi`; a test keeps the two in agreement). Not counted:
/// the root's openness (strict mode closes an open root, whose unknown keys the tool
/// ignores anyway; Gemini's form cannot state `additionalProperties: false`, and the
/// registry still enforces it) and the input examples. A unit enum whose variants have doc
/// comments is exported to the strict targets as a plain string `enum`, each variant's
/// description listed in the parameter's description (`"low": Not urgent.`), with a
/// warning that says so; its values are unchanged, so `portable` accepts it there. Not checked at compile time
/// (the export still reports them): per-request budgets (Anthropic's optional and
/// union-typed parameters, OpenAI's property, enum and character totals), and types
/// with a hand-written [`ToolSchema`] impl, whose schema is known only at run time.
///
/// ```compile_fail
/// # use dsh_runtime::tool;
/// /// Tag things.
/// #[tool(portable = "openai-strict", deny_unknown_args)]
/// async fn tag(tags: std::collections::HashMap<String, String>) -> usize {
///     tags.len()
/// }
/// // error: `tags: HashMap<String, String>` is a map, which OpenAI strict mode cannot
/// // express (every object must be closed); use a Vec of key/value structs, or drop
/// // `openai-strict` from `portable`
/// ```
///
/// [`CallView`](crate::cards::CallView), [`ResultView`](crate::cards::ResultView) and
/// [`ResultSummary`](crate::cards::ResultSummary) are in [`cards`].
///
/// **Typed hooks on raw JSON.** The pipeline hands hooks the logged JSON arguments, which may
/// come from a replayed log that no longer matches the schema. The generated wrappers validate
/// them against the parameter schema and deserialize softly:
///
/// - `concurrency_safe` (both forms), `present_call`, `present_result` and `finalize_content`
///   are never an error: arguments that do not validate, or a panic in the function, give
///   `false` / `None` (the generic card, the content unchanged);
/// - `render` and `presentation_meta` project a live result: a panic, or a value that does
///   not deserialize into the output type, is an error (reported by the pipeline as invalid
///   output); `render` also fails on arguments that do not validate, `presentation_meta`
///   gives `None` for them.
///
/// # Compile errors
///
/// Each is reported once, at the offending token, and the fn plus stand-in items are still
/// emitted so one mistake does not cascade:
///
/// - at the fn: no description; a fn that is not `async`, is generic, `const`, `unsafe` or
///   `extern`; a `self` parameter outside [`toolbox`](macro@toolbox); a name not matching
///   the pattern, or `run_code`; a generated struct name that another type in the module
///   already has (see `struct_name` above); a body whose future is not `Send`;
/// - at a parameter: two with the same JSON name; two contexts; a reference, an
///   `impl Trait` or a pattern (outside `args`); a type without `Deserialize` or
///   [`ToolSchema`] (one message naming both, whichever is missing); a `#[tool(args)]` type
///   with no object schema;
/// - at a parameter's `#[schema(...)]`: an unknown, repeated or misplaced key, a bad value
///   (as on a struct field); at the parameter's type, a constraint that does not fit it
///   (`range` on a `String`); at a `default`, a value the parameter would reject;
/// - at the return type: an output without [`ToolSchema`], or without `Serialize` (one
///   message saying to derive it); an error type without `Into<ToolError>` (a `String`,
///   an `anyhow::Error`: the message says how to convert; for an alias such as
///   `anyhow::Result<T>`, at its `Result`);
/// - at `render = ..` or `presentation_meta = ..`: an output type without `Deserialize`
///   (one message saying to derive it);
/// - at the key: `timeout_ms = 0`; an unknown key (with the closest valid one, and the
///   list of valid keys) or a repeated one; a hook whose signature does not fit; an
///   `example` that is not a JSON object; an unknown `portable` target (with the list);
/// - at an `# Examples` JSON block: text that is not a JSON object (at its line);
/// - at a parameter, with `portable`: a schema the target's export would change (see
///   "Portability").
pub use dsh_macros::tool;

/// Derive [`ToolSchema`](trait@ToolSchema): the JSON schema of exactly what the type's serde
/// `Deserialize` accepts, from its shape, doc comments and `#[serde(...)]` attributes, plus
/// what serde cannot say from `#[schema(...)]`.
///
/// `use dsh_runtime::ToolSchema;` brings both the trait and this derive into scope.
///
/// ```
/// use dsh_runtime::ToolSchema;
/// use serde::Deserialize;
///
/// /// One search filter.
/// #[derive(Deserialize, ToolSchema)]
/// #[serde(rename_all = "camelCase")]
/// struct Filter {
///     /// The field to compare.
///     field_name: String,
///     /// At most this many matches.
///     #[schema(range(min = 1, max = 100))]
///     limit: Option<u32>,
/// }
///
/// assert_eq!(
///     Filter::schema().to_json_string(),
///     r#"{"type":"object","description":"One search filter.","additionalProperties":false,"properties":{"fieldName":{"type":"string","description":"The field to compare."},"limit":{"type":"integer","description":"At most this many matches.","minimum":1,"maximum":100}},"required":["fieldName"]}"#
/// );
/// ```
///
/// # Shapes
///
/// | Rust | schema |
/// | --- | --- |
/// | struct with named fields | closed object (`additionalProperties: false`), even without `deny_unknown_fields`; `#[schema(open)]` opens it |
/// | newtype struct `struct Id(u64);` | the inner type's schema (serde reads newtypes transparently) |
/// | unit struct | `null` |
/// | tuple struct with several fields, tuple variant | compile error: the vocabulary has no positional arrays |
/// | unit-only enum | string `enum` of the variant names; a `oneOf` of string `const`s when variants have docs (to keep each description) |
/// | enum with data | `oneOf`, one branch per variant, in serde's representation (below) |
///
/// A field is required unless its type is `Option`-like ([`ToolSchema::OPTIONAL`](trait@ToolSchema))
/// or it has `#[serde(default)]` (or the struct has). A property that is not required also
/// accepts `null`, meaning "omitted" (see [`validate`]).
///
/// Doc comments become descriptions: the type's on its node, a field's on its property
/// (replacing the field type's own description), a variant's on its branch.
/// `#[doc = include_str!(..)]` works too.
///
/// # Enum representations
///
/// ```
/// # use dsh_runtime::ToolSchema;
/// # use serde::Deserialize;
/// # #[derive(Deserialize, ToolSchema)] struct Point { x: f64, y: f64 }
/// // "Stop", {"Move": {"x": .., "y": ..}}, {"Say": "hi"}
/// #[derive(Deserialize, ToolSchema)]
/// enum External { Stop, Move(Point), Say(String) }
///
/// // {"kind": "circle", "radius": 1.0}, {"kind": "point", "x": .., "y": ..}, {"kind": "empty"}
/// #[derive(Deserialize, ToolSchema)]
/// #[serde(tag = "kind", rename_all = "lowercase")]
/// enum Internal { Circle { radius: f64 }, Point(Point), Empty }
///
/// // {"t": "Ping"}, {"t": "Text", "c": "hi"}
/// #[derive(Deserialize, ToolSchema)]
/// #[serde(tag = "t", content = "c")]
/// enum Adjacent { Ping, Text(String) }
///
/// // "text", ["a", "b"], {"x": .., "y": ..}, null
/// #[derive(Deserialize, ToolSchema)]
/// #[serde(untagged)]
/// enum Untagged { One(String), Many(Vec<String>), At(Point), Nothing }
/// # let _ = (External::schema(), Internal::schema(), Adjacent::schema(), Untagged::schema());
/// ```
///
/// Tagged branches are disjoint by their tag constant. An internally tagged newtype variant
/// must hold a type whose schema is an object (a struct with named fields or a string-keyed
/// map, see [`type_checks::SchemaObject`]); its keys are inlined after the tag.
///
/// **Untagged enums** map to `oneOf`, where exactly one branch must match, while serde takes
/// the first variant that deserializes. So the variants must be provably disjoint, or the
/// enum does not compile. The rule, checked by rustc in a constant over each payload's
/// [`type_checks::JsonShape`]: two variants are disjoint when they admit no common JSON kind
/// (`null`, boolean, number — integers included —, string, array, object), or when both
/// are objects and one is a closed object that does not declare a key the other requires.
/// Two unit variants (both `null`), `u64` and `f64`, or `String` and `char` overlap. A
/// payload whose shape is not known (a type with a hand-written `ToolSchema` impl and no
/// `JsonShape` impl) cannot be proved disjoint and is an error. For generic enums the
/// check runs when the instantiation is compiled to code (`cargo build`, not `cargo check`).
/// serde stays lenient in one way the schema is not: an earlier struct variant without
/// `deny_unknown_fields` may capture an object that the schema assigns to a later one.
///
/// # serde attributes
///
/// | attribute | where | effect on the schema |
/// | --- | --- | --- |
/// | `rename = ".."`, `rename(deserialize = "..")` | type, variant, field | the name serde reads |
/// | `rename_all = ".."` (every serde convention) | type, variant | variant names (enum) or field names (struct, struct variant) |
/// | `rename_all_fields = ".."` | enum | field names of every struct variant (a variant's `rename_all` wins) |
/// | `tag`, `content`, `untagged` | enum | representation (above) |
/// | `default`, `default = ".."` | struct, field | not required; on a field, the value is also published as `default` when it can be computed (below) |
/// | `skip`, `skip_deserializing` | variant, field | left out of the schema |
/// | `transparent` | struct | the single live field's schema; optional when that field is |
/// | `from = "T"` | type | `T`'s schema (the conversion is infallible) |
/// | `deny_unknown_fields` | type | none: objects are closed anyway |
/// | `bound`, `crate`, `expecting`, `into`, `borrow`, `skip_serializing`, `skip_serializing_if`, `serialize_with` | | ignored (serialization only, or no effect on what is accepted) |
/// | `deserialize_with`, `with` | field | need `#[schema(with = ..)]`; the field is then required unless it has a default |
/// | `try_from = "T"` | type | needs `#[schema(with = ..)]` on the type |
/// | `flatten`, `alias`, `other`, `remote`, `untagged` on a variant, identifier enums | | compile error naming the fix |
/// | anything else | | compile error (an attribute the derive cannot read could make serde accept what the schema does not say) |
///
/// **Published defaults.** For `#[serde(default)]` and `#[serde(default = "path")]` on a
/// field, the derive computes the value serde fills in, when the schema is built (once:
/// schemas are cached), and publishes it as the property's `default`: the field type's
/// `Default::default()`, or `path()`, serialized. That happens when the field type is
/// `Serialize` (integers, `bool`, `String`, `Vec` as `[]`, your own `Serialize` types),
/// and the value is omitted when it cannot be published truthfully: `null` (an `Option`
/// defaulting to `None`: a missing key already means that), a value that is not
/// lossless JSON (`-0.0`, a NaN) or fails to serialize, a panicking default, a value the
/// property's own schema rejects (`0` under `range(min = 1)`), a field type that is not
/// `Serialize`, a field read by a custom function (`with`), and in generic types (where
/// the field type's impls are not known). An explicit `#[schema(default = ..)]` wins.
/// `#[serde(default)]` on the struct makes fields optional but publishes no values.
///
/// # `#[schema(...)]` keys
///
/// | key | where | meaning |
/// | --- | --- | --- |
/// | `description = ".."` | type, variant, field | replaces the doc comment |
/// | `title = ".."` | type, variant, field | `title` annotation |
/// | `examples = [..]`, `example = ..` | type, variant, field | `examples` annotation (JSON literals: `null`, `true`, numbers, strings, `[..]`, `{ "key": .. }`) |
/// | `default = ..` | type, variant, field | `default` annotation (documentation only, never applied); on a field, a compile error at the value when it breaks the field's `range`, `length`, `pattern`, `enum` or `const`, or does not fit its type ([`type_checks::DefaultFit`]) |
/// | `open` | struct, struct variant | `additionalProperties: true` |
/// | `range(min = .., max = ..)` | number field | `minimum`/`maximum` (integer or float literals; narrows the type's own range) |
/// | `length(min = .., max = ..)` | string or array field | `minLength`/`maxLength` or `minItems`/`maxItems` |
/// | `pattern = ".."` | string field | `pattern`, checked at compile time with the `regex` crate's parser |
/// | `enum = [..]`, `const = ..` | string, number or boolean field | `enum` / `const` |
/// | `with = path` | type, field | the schema is `path()`, a `fn() -> Schema` (for custom deserialization) |
/// | `header = ".."` | `#[tool]` parameter (string, integer or boolean) | `x-mcp-header`: MCP clients repeat the argument in the header `Mcp-Param-<name>` (see [`macro@tool`], "Parameters") |
/// | `enum_names` | enum of unit variants | in an elicitation form ([`caller`]), the legacy `enum` + `enumNames` shape instead of titled `oneOf` choices |
/// | `crate = path` | type | path to `dsh_runtime` when it is renamed |
///
/// The field keys other than `with` also apply to `#[tool]` fn parameters (see
/// [`macro@tool`], "Parameters").
///
/// Constraints apply to the property's own schema (for `Option<T>`, to `T`'s). A constraint
/// on the wrong kind of field is a compile error on the field's type, through the traits
/// in [`type_checks`]. Unknown and duplicate keys are errors listing the valid keys.
///
/// ```
/// use dsh_runtime::ToolSchema;
/// use dsh_runtime::schema::Schema;
/// use serde::{Deserialize, Deserializer};
///
/// fn hex_schema() -> Schema {
///     Schema::string().with_description("Hexadecimal digits.")
/// }
///
/// fn hex<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
///     let s = String::deserialize(d)?;
///     u64::from_str_radix(&s, 16).map_err(serde::de::Error::custom)
/// }
///
/// /// A query.
/// #[derive(Deserialize, ToolSchema)]
/// #[schema(title = "Query", example = { "text": "rust" })]
/// struct Query {
///     #[schema(length(min = 1, max = 80), pattern = "^[^\\n]*$", examples = ["rust"])]
///     text: String,
///     #[schema(range(min = 1, max = 50), default = 10)]
///     limit: Option<u32>,
///     #[schema(enum = ["asc", "desc"], description = "Sort order.")]
///     order: Option<String>,
///     #[serde(deserialize_with = "hex")]
///     #[schema(with = hex_schema)]
///     id: u64,
/// }
/// # let _ = Query::schema();
/// ```
///
/// # Not supported
///
/// Recursive types (a field mentioning the type itself: schemas are finite trees with no
/// `$ref`; recursion through other types is caught when the schema is built), types with
/// lifetime parameters (arguments are deserialized from owned JSON), unions. Generic types
/// get `T: ToolSchema + 'static` bounds.
pub use dsh_macros::ToolSchema;
/// Turn the `#[tool]` methods of an impl block into tools that share one value.
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicU64, Ordering};
///
/// use dsh_runtime::{Tool, ToolContext, Toolbox, tool, toolbox};
///
/// pub struct Counter {
///     hits: AtomicU64,
/// }
///
/// #[toolbox]
/// impl Counter {
///     /// Count one hit and return the total.
///     #[tool]
///     pub async fn hit(&self, /// How many hits to add.
///         by: u64) -> u64 {
///         self.hits.fetch_add(by, Ordering::SeqCst) + by
///     }
///
///     /// Read the total.
///     #[tool(name = "total", read_only)]
///     pub async fn read_total(self: Arc<Self>, cx: &ToolContext) -> u64 {
///         let _ = cx;
///         self.hits.load(Ordering::SeqCst)
///     }
/// }
///
/// let counter = Arc::new(Counter { hits: AtomicU64::new(0) });
/// let tools = Arc::clone(&counter).tools();
/// let names: Vec<_> = tools.iter().map(|t| t.definition().name.to_string()).collect();
/// assert_eq!(names, ["hit", "total"]);
/// // One tool on its own: the struct holds the shared value.
/// assert_eq!(CounterHit(Arc::clone(&counter)).definition().name, "hit");
/// ```
///
/// Each `#[tool]` method is expanded as by [`tool`](macro@tool) (same keys, same rules), with
/// these differences:
///
/// - The tool struct is named after the type and the method, `CounterHit` for `hit` on
///   `impl Counter` (args struct `CounterHitArgs`), so tools of several toolboxes and free
///   tools can live in one module. It is a tuple struct holding an `Arc` of the value
///   (`pub struct CounterHit(pub Arc<Counter>)`), with the method's visibility.
/// - The receiver is `&self` or `self: Arc<Self>`; a method without a receiver is allowed
///   too. `&mut self` and `self` by value are compile errors: calls may run concurrently.
/// - `Self` in parameter and output types and in hook paths (`present_call = Self::card`)
///   means the impl's type.
/// - The type implements [`Toolbox`]: `tools()` returns one [`DynTool`] per `#[tool]` method,
///   in declaration order. The type must be `Send + Sync + 'static`.
///
/// Methods keep working as ordinary methods, and methods without `#[tool]` are left alone.
/// The impl must be inherent and not generic (every tool publishes one fixed schema: write the
/// impl for a concrete type, e.g. `impl Server<Local>`); `#[toolbox]` takes no keys but
/// `crate = "..."`. Each tool's description is the doc comment of its method: a doc comment
/// on the impl block itself describes no tool, so it is a compile error saying to move it
/// to the method(s) (a plain `//` comment there is fine).
pub use dsh_macros::toolbox;

/// Turn an `async fn` into a resource: its URI (fixed, or a URI template whose
/// placeholders are the fn's parameters), its name and description from the signature
/// and doc comment, its contents from what it returns.
///
/// ```
/// use dsh_runtime::content::ResourceContents;
/// use dsh_runtime::resources::{Json, ResourceError, Resources};
/// use dsh_runtime::{ToolSchema, resource};
///
/// /// The project's README.
/// #[resource("docs://readme", title = "README", mime_type = "text/markdown", audience = "user")]
/// async fn readme() -> &'static str {
///     "# Hello"
/// }
///
/// #[derive(serde::Deserialize, serde::Serialize, ToolSchema)]
/// #[serde(rename_all = "lowercase")]
/// enum Format {
///     Short,
///     Full,
/// }
///
/// #[derive(serde::Serialize)]
/// struct UserProfile {
///     id: u64,
///     format: Format,
/// }
///
/// /// One user's profile.
/// #[resource("users://{id}/profile/{format}")]
/// async fn profile(id: u64, format: Format) -> Result<Json<UserProfile>, ResourceError> {
///     Ok(Json(UserProfile { id, format }))
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let resources = Resources::new();
/// let _readme = resources.register(Readme).unwrap();
/// let _profile = resources.register(Profile).unwrap();
/// assert_eq!(resources.list()[0].description.as_deref(), Some("The project's README."));
/// assert_eq!(
///     resources.read("users://7/profile/short").await.unwrap(),
///     [ResourceContents::text("users://7/profile/short", r#"{"id":7,"format":"short"}"#)
///         .with_mime_type("application/json")]
/// );
/// // A placeholder's text that does not parse names the placeholder.
/// assert!(matches!(
///     resources.read("users://x/profile/short").await,
///     Err(ResourceError::InvalidParams { placeholder, .. }) if placeholder == "id"
/// ));
/// # });
/// ```
///
/// # The URI
///
/// First, as a string literal (or `uri = ".."`): a URI with a scheme (`docs://readme`,
/// `file:///etc/hosts`), or a URI template of RFC 6570 level 1, `users://{id}/profile`,
/// whose `{name}` placeholders each match one or more characters up to the next literal
/// text, never a `/` (see [`resources::UriTemplate`]). Checked at compile time: the
/// template's syntax, and that **every placeholder is a parameter and every parameter a
/// placeholder** (an error at the URI naming the placeholder, or at the parameter).
///
/// # Keys
///
/// | key | meaning |
/// | --- | --- |
/// | `"scheme://.."` first, or `uri = ".."` | the URI or URI template (required) |
/// | `name = ".."` | the resource's name, an identifier (default: the fn's name) |
/// | `title = ".."` | a title to show (a string literal or a macro call expanding to one) |
/// | `description = ".."` | replaces the doc comment |
/// | `mime_type = "type/subtype"` | its MIME type, published and given to the contents made from the value |
/// | `size = 1024` | its size in bytes, when known (a fixed URI only) |
/// | `audience = "user"`, `"assistant"` or `["user", "assistant"]` | annotation: who it is for |
/// | `priority = 0.5` | annotation: from 0 (entirely optional) to 1 (effectively required) |
/// | `last_modified = "2025-01-12T15:00:58Z"` | annotation: an RFC 3339 date-time, checked at compile time |
/// | `struct_name = "Name"` | the generated struct's name |
/// | `crate = "path"` | where `dsh_runtime` is, when renamed |
///
/// The description is the doc comment (normalised as a tool's), none when there is
/// none. A title is only ever the `title` key.
///
/// # Parameters
///
/// Each parameter is a placeholder of the same name (`r#type` is `{type}`), read from the
/// placeholder's text (percent-decoded) into its type, the first way that applies: the
/// type's `FromStr` (numbers, `bool`, `char`, `String`, `PathBuf`, your own), else serde
/// from the string (a unit enum deriving `Deserialize`, by the names serde reads). Text
/// that does not parse is [`resources::ResourceError::InvalidParams`] naming the
/// placeholder (MCP's invalid-params error), and the body does not run. A type read
/// neither way is a compile error at the type.
///
/// **Completion.** A placeholder whose type is a unit enum with a [`ToolSchema`] completes
/// from its variants (as serde writes them), with no code: the values starting with what
/// was typed, at most 100 with the total and whether there are more
/// ([`complete::Completion`]). `#[complete(with = path)]` on a parameter names an
/// `async fn(CompletionRequest) -> Vec<String>` for any other (it filters by
/// `request.prefix` itself; its answer is cut to 100).
///
/// # Return types
///
/// Anything implementing [`resources::IntoContents`]: `String` or `&'static str` (text),
/// `Vec<u8>` (bytes, sent as base64), [`resources::Json<T>`] (a `Serialize` value as JSON
/// text, MIME type `application/json` unless `mime_type` says otherwise), or
/// `ResourceContents` / `Vec<ResourceContents>` as they are; or a `Result` of one of
/// these, whose error is a [`resources::ResourceError`] (kept as it is) or any `Display`
/// error (a failed read, [`resources::ResourceError::Failed`]). A panicking body is
/// contained: the read fails with `Failed`, the collection keeps working.
///
/// # Generated items
///
/// The fn stays as written and callable. Beside it, a unit struct named after it in
/// CamelCase (`Readme` for `readme`, or `struct_name`), with the fn's visibility, and
/// `impl From<Readme> for Resource`: register it with `resources.register(Readme)`, or
/// several with [`resources::Resources::register_all`]. As for [`tool`](macro@tool), a
/// type of that name already in scope is a compile error at the fn name saying to use
/// `struct_name`. For resources that share a value, see [`context`](macro@context).
///
/// # Compile errors
///
/// Each at the offending token, with the fn and stand-in items still emitted: no URI; a
/// URI without a scheme or with bad template syntax (an unclosed `{`, an empty or
/// operator placeholder such as `{+path}`, two placeholders without text between them, a
/// name used twice); a placeholder that is not a parameter, a parameter that is not a
/// placeholder; `size` on a template; an unknown or repeated key (with the closest valid
/// key), a bad `mime_type`, `audience`, `priority` or `last_modified`; a fn that is not
/// `async`, or is generic, `const` or `unsafe`; a `self` parameter outside `#[context]`;
/// a parameter that is a pattern, a reference, an `Option` (a placeholder always has a
/// value) or has a doc comment (MCP publishes none per placeholder: describe it in the
/// fn's doc); a parameter type read from text neither way; a return type that is not
/// contents, or an error type that does not display; a body whose future is not `Send`.
pub use dsh_macros::resource;

/// Turn an `async fn` into a prompt: its arguments from the fn's parameters, its name
/// and description from the signature and doc comment, its messages from what it
/// returns.
///
/// ```
/// use dsh_runtime::content::ContentBlock;
/// use dsh_runtime::complete::CompletionRequest;
/// use dsh_runtime::prompts::{PromptError, PromptMessage, Prompts};
/// use dsh_runtime::{ToolSchema, prompt};
///
/// #[derive(serde::Deserialize, ToolSchema)]
/// #[serde(rename_all = "lowercase")]
/// enum Depth {
///     Quick,
///     Thorough,
/// }
///
/// /// Review a file.
/// #[prompt(title = "Code review")]
/// async fn review(
///     /// The file to review.
///     file: String,
///     /// How closely to look.
///     depth: Depth,
///     /// At most this many remarks.
///     limit: Option<u32>,
/// ) -> Vec<PromptMessage> {
///     let depth = match depth {
///         Depth::Quick => "a quick",
///         Depth::Thorough => "a thorough",
///     };
///     let limit = limit.map(|n| format!(" (at most {n} remarks)")).unwrap_or_default();
///     vec![
///         PromptMessage::user(ContentBlock::text(format!("Give {file} {depth} review{limit}."))),
///         PromptMessage::assistant(ContentBlock::text("Reading it now.")),
///     ]
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let prompts = Prompts::new();
/// let _review = prompts.register(Review).unwrap();
/// let info = &prompts.list()[0];
/// assert_eq!((info.name.as_str(), info.title.as_deref()), ("review", Some("Code review")));
/// assert_eq!(info.arguments[2].description.as_deref(), Some("At most this many remarks."));
/// assert!(info.arguments[1].required && !info.arguments[2].required);
///
/// let got = prompts.get("review", [("file", "main.rs"), ("depth", "quick")]).await.unwrap();
/// assert_eq!(got.messages[0].content.as_text(), Some("Give main.rs a quick review."));
/// // A missing argument, or one that does not parse, is named.
/// assert!(matches!(
///     prompts.get("review", [("file", "main.rs"), ("depth", "deep")]).await,
///     Err(PromptError::InvalidArgument { argument, .. }) if argument == "depth"
/// ));
/// // The enum argument completes from its variants.
/// let c = prompts.complete("review", CompletionRequest::new("depth", "t")).await.unwrap();
/// assert_eq!(c.values, ["thorough"]);
/// # });
/// ```
///
/// # Keys
///
/// | key | meaning |
/// | --- | --- |
/// | `name = ".."` | the prompt's name (default: the fn's name) |
/// | `title = ".."` | a title to show (a string literal or a macro call expanding to one) |
/// | `description = ".."` | replaces the doc comment |
/// | `struct_name = "Name"` | the generated struct's name |
/// | `crate = "path"` | where `dsh_runtime` is, when renamed |
///
/// # Arguments
///
/// Each parameter is an argument of the same name (`r#type` is `type`), described by its
/// doc comment, required unless its type is `Option<T>`. MCP sends arguments as text:
/// each is read into its type (`T` for `Option<T>`) the first way that applies, the
/// type's `FromStr`, else serde from the string (a unit enum deriving `Deserialize`).
/// A required argument that is missing is [`prompts::PromptError::MissingArgument`], one
/// that does not parse [`prompts::PromptError::InvalidArgument`], each naming the
/// argument; the body does not run. A type read neither way is a compile error at the
/// type.
///
/// **Completion**, as for [`resource`](macro@resource): a unit enum with a
/// [`ToolSchema`] completes from its variants with no code (prefix-filtered, at most 100,
/// with the total and whether there are more); `#[complete(with = path)]` on a parameter
/// names an `async fn(CompletionRequest) -> Vec<String>` for any other.
///
/// # Return types
///
/// Anything implementing [`prompts::IntoMessages`]: `String` or `&'static str` (one user
/// message of that text), a [`content::ContentBlock`] (one user message: text, image,
/// audio, embedded resource), a [`prompts::PromptMessage`] or `Vec<PromptMessage>` (any
/// roles and contents); or a `Result` of one of these, whose error is a
/// [`prompts::PromptError`] (kept as it is) or any `Display` error (a failed prompt,
/// [`prompts::PromptError::Failed`]). A panicking body is contained: getting the prompt
/// fails with `Failed`.
///
/// # Generated items and compile errors
///
/// As for [`resource`](macro@resource): the fn stays as written; a unit struct named after
/// it in CamelCase (`Review`, or `struct_name`) with `impl From<Review> for Prompt`,
/// registered with `prompts.register(Review)`. Compile errors, each at its token: an
/// unknown or repeated key; a fn that is not `async`, or is generic, `const` or
/// `unsafe`; a `self` parameter outside [`context`](macro@context); a parameter that is a
/// pattern or a reference; a parameter type read from text neither way; a return type
/// that is not messages, or an error type that does not display; a body whose future is
/// not `Send`.
pub use dsh_macros::prompt;

/// Turn the `#[resource]` and `#[prompt]` methods of an impl block into resources and
/// prompts that share one value, registered together.
///
/// ```
/// use std::sync::Arc;
///
/// use dsh_runtime::prompts::Prompts;
/// use dsh_runtime::resources::Resources;
/// use dsh_runtime::{context, prompt, resource};
///
/// pub struct Library {
///     books: Vec<String>,
/// }
///
/// #[context]
/// impl Library {
///     /// Every title, one a line.
///     #[resource("library://titles", mime_type = "text/plain")]
///     pub async fn titles(&self) -> String {
///         self.books.join("\n")
///     }
///
///     /// One book.
///     #[resource("library://books/{index}")]
///     pub async fn book(self: Arc<Self>, index: usize) -> String {
///         self.books.get(index).cloned().unwrap_or_default()
///     }
///
///     /// Recommend a book.
///     #[prompt]
///     pub async fn recommend(&self, /// What the reader likes.
///         taste: String) -> String {
///         format!("Which of {} suits a reader who likes {taste}?", self.books.join(", "))
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let library = Arc::new(Library { books: vec!["Dune".into(), "Emma".into()] });
/// let resources = Resources::new();
/// let prompts = Prompts::new();
/// // All of them or none, each under one handle that unregisters them all.
/// let _resources = resources.register_group(Arc::clone(&library)).unwrap();
/// let _prompts = prompts.register_group(Arc::clone(&library)).unwrap();
/// let read = resources.read("library://books/1").await.unwrap();
/// assert_eq!(read[0], dsh_runtime::content::ResourceContents::text("library://books/1", "Emma"));
/// // One on its own: the struct holds the shared value.
/// let _titles = Resources::new().register(LibraryTitles(library)).unwrap();
/// # });
/// ```
///
/// Each marked method is expanded as by [`resource`](macro@resource) or
/// [`prompt`](macro@prompt) (same keys, same rules), with these differences, as for
/// [`toolbox`](macro@toolbox):
///
/// - The struct is named after the type and the method, `LibraryTitles` for `titles` on
///   `impl Library`: a tuple struct holding an `Arc` of the value, with the method's
///   visibility.
/// - The receiver is `&self` or `self: Arc<Self>`; a method without one is allowed too.
///   `&mut self` and `self` by value are compile errors: reads may run concurrently.
/// - `Self` in parameter and return types and in `#[complete(with = Self::names)]` means
///   the impl's type.
/// - The type implements [`resources::ResourceGroup`] when it has a `#[resource]` method,
///   [`prompts::PromptGroup`] when it has a `#[prompt]` one; register them all with
///   [`resources::Resources::register_group`] / [`prompts::Prompts::register_group`]:
///   all or none, under one handle (dropping it unregisters them all). The type must be
///   `Send + Sync + 'static`.
///
/// Methods without these attributes are left alone, and the same block may also carry
/// [`toolbox`](macro@toolbox) for its `#[tool]` methods. The impl must be inherent and
/// not generic; `#[context]` takes no keys but `crate = "..."`, and a block with no
/// `#[resource]` or `#[prompt]` method is a compile error.
pub use dsh_macros::context;

/// This crate's README (its crates.io page), compiled and run as doctests so it stays
/// true. The project README's examples run as doctests of the `examples` crate.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// The enums users match and the crate will extend are `#[non_exhaustive]`: a `match`
/// outside the crate needs a wildcard arm. Each block below lists every variant of one
/// enum without a wildcard, and must fail to compile with E0004 (non-exhaustive patterns).
///
/// ```compile_fail,E0004
/// use dsh_runtime::hooks::PreDecision;
/// fn f(x: PreDecision) -> u8 {
///     match x { PreDecision::Allow => 0, PreDecision::Deny { .. } => 1, PreDecision::Ask { .. } => 2, }
/// }
/// ```
///
/// ```compile_fail,E0004
/// use dsh_runtime::hooks::Approval;
/// fn f(x: Approval) -> u8 {
///     match x { Approval::AllowedOnce => 0, Approval::Rejected => 1, Approval::Cancelled => 2, Approval::Unavailable => 3, }
/// }
/// ```
///
/// ```compile_fail,E0004
/// use dsh_runtime::hooks::PostDecision;
/// fn f(x: PostDecision) -> u8 {
///     match x { PostDecision::Accept(_) => 0, PostDecision::Block(_) => 1, }
/// }
/// ```
///
/// ```compile_fail,E0004
/// use dsh_runtime::hooks::Replacement;
/// fn f(x: Replacement) -> u8 {
///     match x { Replacement::Unchanged => 0, Replacement::Content(_) => 1, Replacement::Value(_) => 2, }
/// }
/// ```
///
/// ```compile_fail,E0004
/// use dsh_runtime::ExecutionMode;
/// fn f(x: ExecutionMode) -> u8 {
///     match x { ExecutionMode::Parallel => 0, ExecutionMode::Exclusive => 1, }
/// }
/// ```
///
/// ```compile_fail,E0004
/// use dsh_runtime::cards::ToolCallKind;
/// fn f(x: ToolCallKind) -> u8 {
///     match x { ToolCallKind::Read | ToolCallKind::Edit | ToolCallKind::Delete | ToolCallKind::Move | ToolCallKind::Search | ToolCallKind::Execute | ToolCallKind::Fetch | ToolCallKind::Other => 0, }
/// }
/// ```
///
/// ```compile_fail,E0004
/// use dsh_runtime::cards::SearchView;
/// fn f(x: SearchView) -> u8 {
///     match x { SearchView::Matches { .. } => 0, SearchView::Paths { .. } => 1, }
/// }
/// ```
///
/// ```compile_fail,E0004
/// use dsh_runtime::cards::WebView;
/// fn f(x: WebView) -> u8 {
///     match x { WebView::Search { .. } => 0, WebView::Fetch { .. } => 1, }
/// }
/// ```
///
/// The same match with a wildcard arm compiles:
///
/// ```
/// use dsh_runtime::hooks::PreDecision;
/// fn f(x: PreDecision) -> u8 {
///     match x { PreDecision::Allow => 0, PreDecision::Deny { .. } => 1, _ => 2 }
/// }
/// assert_eq!(f(PreDecision::Allow), 0);
/// ```
#[cfg(doctest)]
pub struct NonExhaustiveDoctests;
