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
//!     r#"{"type":"object","additionalProperties":false,"properties":{"name":{"type":"string","description":"Who to greet."}},"required":["name"]}"#
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
//! Modules:
//! - [`schema`]: the schema vocabulary, the [`ToolSchema`] trait and its std impls;
//! - [`json`]: lossless snapshots of raw arguments;
//! - [`validate`]: path-qualified validation reporting every violation;
//! - [`tool`](mod@tool): the [`Tool`] trait, its definition, context and errors;
//! - [`present`]: the card vocabulary presenters return.
#![deny(missing_docs)]

pub mod jobs;
pub mod json;
pub mod present;
pub mod schema;
pub mod tool;
pub mod validate;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use schema::{Schema, ToolSchema};
pub use tool::{ContentBlock, DynTool, Tool, ToolContext, ToolDefinition, ToolError, Toolbox};
pub use validate::ToolArgsError;

/// Derive [`ToolSchema`](trait@ToolSchema) for a struct or enum.
pub use dsh_macros::ToolSchema;

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
///         r#"{"type":"object","additionalProperties":false,"properties":{"#,
///         r#""path":{"type":"string","description":"Absolute path of the file."},"#,
///         r#""offset":{"type":"integer","description":"1-based first line.","minimum":0,"maximum":18446744073709551615},"#,
///         r#""limit":{"type":"integer","minimum":0,"maximum":18446744073709551615}},"#,
///         r#""required":["path"]}"#,
///     )
/// );
/// ```
///
/// # What it generates
///
/// - **The fn itself**, unchanged except that doc comments on its parameters are removed
///   (rustc does not accept them there). It stays callable as written, e.g. from unit tests.
/// - **A unit struct** named after the fn in PascalCase (`read_file` → `ReadFile`), with the
///   fn's visibility, implementing [`Tool`]:
///   - `Args` is the generated args struct, `Output` the fn's output type;
///   - `definition()` is built once, on first use, and kept in a `static`: the name, the
///     description, the title, the parameter schema (the args struct's), the output schema
///     (the output type's), `timeout_ms` and the annotations;
///   - `call` runs the fn; the hooks (`is_concurrency_safe`, `render`, presenters...) come
///     from the keys below.
/// - **An args struct** `ReadFileArgs` with one `pub` field per parameter (the context
///   excepted), in order, documented like the parameter. It derives serde's `Deserialize`
///   (unknown fields are rejected) and `Serialize` through this crate, so you need no serde
///   dependency of your own, and implements [`ToolSchema`] as a closed object
///   (`additionalProperties: false`) whose properties keep the parameter order.
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
/// The type's schema must be an object; since a schema is only known when built, this is
/// checked when the definition is first built (on registration), which panics naming the
/// tool and the type.
///
/// ```
/// # use dsh_runtime::schema::Schema;
/// # use dsh_runtime::{Tool, ToolSchema, tool};
/// #[derive(serde::Deserialize)]
/// pub struct Filter { field: String, limit: u32 }
/// # impl ToolSchema for Filter {
/// #     fn build_schema() -> Schema {
/// #         dsh_runtime::__private::closed(vec![
/// #             dsh_runtime::__private::field::<String>("field", "", false),
/// #             dsh_runtime::__private::field::<u32>("limit", "", false),
/// #         ])
/// #     }
/// # }
///
/// /// Search with one filter.
/// #[tool(args)]
/// async fn search(Filter { field, limit }: Filter) -> Vec<String> {
///     vec![field; limit as usize]
/// }
///
/// assert_eq!(Search.definition().parameters, Filter::schema());
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
/// | `render = path` | model-facing content: `fn(&Args, &Output) -> Vec<ContentBlock>` |
/// | `present_call = path` | the pending card: `fn(&Args) -> Option<CallView>` (or `-> CallView`) |
/// | `present_result = path` | the completed card: `fn(&Args, &ResultSummary) -> Option<ResultView>` (or `-> ResultView`) |
/// | `presentation_meta = path` | durable card data: `fn(&Args, &Output) -> Option<impl Serialize>` (or any `Serialize`, e.g. a JSON value; `null` means none) |
/// | `finalize_content = path` | replace the final content once: `fn(&Args, &[ContentBlock]) -> Option<Vec<ContentBlock>>` |
/// | `args` | the single parameter is the whole arguments object (see above) |
/// | `crate = "..."` | the path of this crate when it is renamed in `Cargo.toml` |
///
/// [`CallView`](crate::present::CallView), [`ResultView`](crate::present::ResultView) and
/// [`ResultSummary`](crate::present::ResultSummary) are in [`present`].
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
/// Each is reported at the offending token, and the fn plus stand-in items are still emitted
/// so one mistake does not cascade: no description (at the fn name); a fn that is not
/// `async`, is generic, `const`, `unsafe` or `extern`; a `self` parameter outside
/// [`toolbox`](macro@toolbox); a name not matching the pattern, or `run_code`; two
/// parameters with the same JSON name; two contexts; a parameter that is a reference, an
/// `impl Trait` or a pattern (outside `args`); a parameter or output type without
/// [`ToolSchema`] (the trait's own message, at the type); an output without `Serialize`; an
/// error type without `Into<ToolError>`; `timeout_ms = 0`; an unknown or repeated key (the
/// message lists the valid keys); a hook whose signature does not fit (at the path); a body
/// whose future is not `Send` (at the fn name).
pub use dsh_macros::tool;

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
/// `crate = "..."`.
pub use dsh_macros::toolbox;
