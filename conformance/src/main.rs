//! # The everything server of the MCP conformance suite, on dsh-rs
//!
//! The official conformance suite (`@modelcontextprotocol/conformance`) drives an SDK's
//! "everything server" through fixed fixtures: tools of known names that answer known
//! payloads. This one is written only on dsh-rs's public API, the way a user writes a
//! server: `#[tool]` functions and a `#[toolbox]`, a [`Registry`] with a job runtime (for
//! tasks), [`McpServer`] and [`dsh_mcp::serve_http`]. It has no MCP handler of its own,
//! so what the suite sees is what dsh-mcp does with ordinary tools.
//!
//! It serves `http://127.0.0.1:$PORT/mcp` (`PORT`, default 3000; `0` picks a free port)
//! with sessions on, so one endpoint answers both revisions at their own wire: clients
//! that start with `initialize` (2025-11-25) get a session, requests carrying their
//! revision in `_meta` (2026-07-28) are served statelessly. Once bound it prints
//! `serving MCP at URL` on stderr; it stops on Ctrl-C or `SIGTERM`. `conformance/run.sh`
//! builds it, starts it and runs the suite against it.
//!
//! `everything-server --stdio` serves the same fixtures to one client over standard input
//! and output instead (one JSON-RPC message a line, [`McpServer::serve_stdio`]), at either
//! revision, until the client closes its end; standard output carries MCP alone (`PORT` is
//! not read). `conformance/tests/clients.rs` drives both modes with the official
//! TypeScript and Python clients.
//!
//! ## The fixtures it serves
//!
//! - Tools: `test_simple_text`, `test_image_content` (a 1x1 red PNG), `test_error_handling`
//!   (a tool error, `isError: true`), `test_tool_with_progress` (progress 0, 50, 100 of
//!   100), `test_reconnection` (closes its stream mid-call; the client resumes it),
//!   `test_audio_content` (a silent WAV clip), `test_embedded_resource` (a text resource)
//!   and `test_multiple_content_types` (text, an image and a JSON resource).
//! - Diagnostics of the stateless (2026-07-28) scenario: `test_streaming_elicitation` (a
//!   call that reports progress while it runs), `test_logging_tool` (a call that has
//!   nothing it could log), `test_trigger_tool_change` (adds or removes the tool
//!   `test_dynamic_tool`, so `tools/list` changes and listeners are told).
//! - `test_input_required_result_tampered_state`: a tool declared `ask`, whose
//!   `InputRequiredResult` carries dsh-mcp's sealed `requestState`.
//! - `test_custom_header` (SEP-2243): its `region` parameter is marked
//!   `#[schema(header = "Region")]`, so it is published with `x-mcp-header` and a
//!   2026-07-28 client repeats it as the header `Mcp-Param-Region`, which dsh-mcp checks
//!   against the argument before the call runs.
//! - Tasks (the `io.modelcontextprotocol/tasks` extension): `greet` (never a task),
//!   `slow_compute` (sleeps `seconds`, may run as a task, stops when cancelled),
//!   `failing_job` (only a task, fails as a tool after about a second),
//!   `protocol_error_job` (may run as a task, its body panics), `confirm_delete` (may run
//!   as a task, asks the user first: the task is `input_required` with the approval form;
//!   nothing is deleted), `multi_input` (may run as a task, asks two questions at once:
//!   two calls of an asking tool of a private registry, run concurrently).
//!
//! - Tools that talk to their client (`talking`): `test_tool_with_logging`,
//!   `test_logging_tool`, `test_sampling`, `test_missing_capability` (needs the client's
//!   `sampling`: `-32021` on 2026-07-28 without it), `test_elicitation` (a typed form),
//!   `test_elicitation_sep1034_defaults`, `test_elicitation_sep1330_enums`, and the
//!   `test_input_required_result_*` tools (named questions, several in one round,
//!   several rounds, only what the client declared), and `test_tool_with_task`
//!   (`task_after_input`: it asks first, then goes on as a task).
//! - Resources, prompts and completion (`context`): `test://static-text`,
//!   `test://static-binary`, `test://watched-resource`, the template
//!   `test://template/{id}/data`, the prompts `test_simple_prompt`,
//!   `test_prompt_with_arguments` (its `arg1` completes), `test_prompt_with_embedded_resource`,
//!   `test_prompt_with_image`, `test_input_required_result_prompt` (a prompt that asks
//!   its caller, through `Caller::current`), and `test_trigger_prompt_change`.
//!
//! Every fixture the suite's scenarios call is here.

mod context;
mod talking;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use dsh_mcp::{HttpOptions, McpServer};
use dsh_runtime::content::ContentBlock;
use dsh_runtime::jobs::JobRuntime;
use dsh_runtime::{
    RawTool, RegistrationGuard, Registry, ToolCall, ToolContext, ToolError, ToolResult,
    WeakRegistry, json, tool, toolbox,
};

/// The text `test_simple_text` answers.
const SIMPLE_TEXT: &str = "This is a simple text response for testing.";

/// The text of `test_error_handling`'s error.
const ERROR_TEXT: &str = "This tool intentionally returns an error for testing";

/// A 1x1 red pixel, as a base64 PNG.
pub(crate) const RED_PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

/// The longest `slow_compute` sleeps, whatever it is asked.
const MAX_COMPUTE_SECONDS: u64 = 600;

/// Answer a fixed sentence of text.
#[tool(read_only)]
async fn test_simple_text() -> String {
    SIMPLE_TEXT.to_string()
}

/// Show a 1x1 red pixel (a PNG image).
#[tool(read_only, render = render_red_pixel)]
async fn test_image_content() -> String {
    "a 1x1 red pixel".to_string()
}

/// The content of `test_image_content`: the image alone.
fn render_red_pixel(_args: &TestImageContentArgs, _output: &String) -> Vec<ContentBlock> {
    vec![ContentBlock::image(RED_PIXEL_PNG, "image/png")]
}

/// A WAV file with no samples (8 kHz, mono, 8-bit PCM): the 44-byte header alone, base64.
const SILENT_WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";

/// Play a silent WAV clip (audio content).
#[tool(read_only, render = render_silent_wav)]
async fn test_audio_content() -> String {
    "a silent WAV clip".to_string()
}

/// The content of `test_audio_content`: the clip alone.
fn render_silent_wav(_args: &TestAudioContentArgs, _output: &String) -> Vec<ContentBlock> {
    vec![ContentBlock::audio(SILENT_WAV, "audio/wav")]
}

/// Embed a short text resource.
#[tool(read_only, render = render_embedded_resource)]
async fn test_embedded_resource() -> String {
    "an embedded text resource".to_string()
}

/// The content of `test_embedded_resource`: the resource alone.
fn render_embedded_resource(
    _args: &TestEmbeddedResourceArgs,
    _output: &String,
) -> Vec<ContentBlock> {
    vec![
        ContentBlock::resource_text(
            "test://embedded-resource",
            "This is an embedded resource content.",
        )
        .with_mime_type("text/plain"),
    ]
}

/// Answer with text, an image and an embedded JSON resource.
#[tool(read_only, render = render_multiple_content_types)]
async fn test_multiple_content_types() -> String {
    "text, an image and a resource".to_string()
}

/// The content of `test_multiple_content_types`: the three blocks.
fn render_multiple_content_types(
    _args: &TestMultipleContentTypesArgs,
    _output: &String,
) -> Vec<ContentBlock> {
    vec![
        ContentBlock::text("Multiple content types test:"),
        ContentBlock::image(RED_PIXEL_PNG, "image/png"),
        ContentBlock::resource_text(
            "test://mixed-content-resource",
            r#"{"test":"data","value":123}"#,
        )
        .with_mime_type("application/json"),
    ]
}

/// Always fail, as a tool (a result with `isError: true`).
#[tool(read_only)]
async fn test_error_handling() -> Result<String, ToolError> {
    Err(ToolError::new(ERROR_TEXT))
}

/// Report progress 0, 50 and 100 of 100, about 50 ms apart.
#[tool(read_only)]
async fn test_tool_with_progress(cx: ToolContext) -> String {
    for (step, done) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if step > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        cx.report_progress(done, Some(100.0), Some(&format!("{done} of 100")));
    }
    "Progress test completed: 0, 50 and 100 of 100 reported.".to_string()
}

/// Close the call's stream (the client is told to come back after 100 ms), go on for
/// 300 ms, then answer: the client gets the answer on the stream it resumes with
/// `Last-Event-ID` (SEP-1699).
#[tool(read_only)]
async fn test_reconnection(cx: ToolContext) -> String {
    let closed = cx.close_stream(Duration::from_millis(100)).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    format!("Reconnection test completed (stream closed mid-call: {closed}).")
}

/// Report progress while the call runs, then answer.
#[tool(read_only)]
async fn test_streaming_elicitation(cx: ToolContext) -> String {
    cx.report_progress(50.0, Some(100.0), Some("halfway"));
    tokio::time::sleep(Duration::from_millis(20)).await;
    cx.report_progress(100.0, Some(100.0), Some("done"));
    "Streaming complete".to_string()
}

/// Answer with the state the client signed for (asks the user first).
#[tool(ask = "the conformance suite checks that a tampered request state is refused")]
async fn test_input_required_result_tampered_state() -> String {
    "The request state was intact.".to_string()
}

/// Say hello (never runs as a task).
#[tool(read_only)]
async fn greet(
    /// Who to greet.
    name: String,
) -> String {
    format!("Hello, {name}!")
}

/// Compute for `seconds` seconds (at most 600), as a task for clients with tasks.
#[tool(read_only, task = "optional")]
async fn slow_compute(
    cx: ToolContext,
    /// How long to compute, in seconds (0: answer at once).
    seconds: u64,
    /// A label repeated in the answer.
    label: Option<String>,
) -> Result<String, ToolError> {
    let seconds = seconds.min(MAX_COMPUTE_SECONDS);
    let label = label.unwrap_or_else(|| "unlabelled".to_string());
    tokio::select! {
        () = tokio::time::sleep(Duration::from_secs(seconds)) => {
            Ok(format!("computed {label} in {seconds} s"))
        }
        () = cx.cancellation().cancelled() => {
            Err(ToolError::with_code("CANCELLED", format!("{label} was cancelled")))
        }
    }
}

/// Fail as a tool after about a second; only ever runs as a task.
#[tool(read_only, task = "required")]
async fn failing_job() -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err(ToolError::new("failing_job fails on purpose"))
}

/// Panic inside the body: an internal failure of the server, not a tool error.
#[tool(read_only, task = "optional")]
async fn protocol_error_job() -> String {
    panic!("protocol_error_job fails on purpose with an internal error")
}

/// Delete a file, after the user confirms (nothing is deleted: this is a fixture).
#[tool(
    destructive,
    task = "optional",
    ask = "deleting a file cannot be undone"
)]
async fn confirm_delete(
    /// The file to delete.
    filename: String,
) -> String {
    format!("{filename} would have been deleted")
}

/// One of the two confirmations `multi_input` asks for at once.
#[tool(ask = "multi_input asks for two confirmations at once")]
async fn confirm_step(
    /// Which confirmation this is.
    step: u32,
) -> String {
    format!("confirmation {step} given")
}

/// `multi_input`: two asking calls of a registry of its own, run concurrently.
struct MultiInput {
    /// Holds `confirm_step` (not served: only `multi_input` calls it).
    steps: Registry,
}

#[toolbox]
impl MultiInput {
    /// Ask two questions at once, then answer with both answers.
    #[tool(name = "multi_input", read_only, task = "optional")]
    async fn multi_input(&self, cx: &ToolContext) -> Result<String, ToolError> {
        let (first, second) = tokio::join!(self.confirm(cx, 1), self.confirm(cx, 2));
        Ok(format!("{}; {}", first.text(), second.text()))
    }
}

impl MultiInput {
    /// Call `confirm_step` for `step`, its question going to the caller's user.
    async fn confirm(&self, cx: &ToolContext, step: u32) -> ToolResult {
        let call = self.steps.execute(ToolCall::new(
            format!("{}-{step}", cx.call_id()),
            "confirm_step",
            format!(r#"{{"step":{step}}}"#),
        ));
        match cx.approval_fallback() {
            Some(route) => dsh_runtime::hooks::with_approval(route.clone(), call).await,
            None => call.await,
        }
    }
}

/// `test_trigger_tool_change`: adds or removes `test_dynamic_tool`.
struct ToolChange {
    /// The served registry (weak: the registry holds this tool).
    registry: WeakRegistry,
    /// `test_dynamic_tool` while it is registered.
    dynamic: Mutex<Option<RegistrationGuard>>,
}

#[toolbox]
impl ToolChange {
    /// Change the tool list: add `test_dynamic_tool`, or remove it if it is there.
    #[tool(name = "test_trigger_tool_change")]
    async fn trigger(&self) -> Result<String, ToolError> {
        let mut dynamic = self.dynamic.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(guard) = dynamic.take() {
            guard.unregister();
            return Ok("Mutation triggered: test_dynamic_tool removed".to_string());
        }
        let registry = self
            .registry
            .upgrade()
            .ok_or_else(|| ToolError::new("the server is stopping"))?;
        let handle = registry
            .register(TestDynamicTool)
            .map_err(|e| ToolError::new(format!("cannot add test_dynamic_tool: {e}")))?;
        *dynamic = Some(handle.unregister_on_drop());
        Ok("Mutation triggered: test_dynamic_tool added".to_string())
    }
}

/// A tool that `test_trigger_tool_change` adds and removes.
#[tool(read_only)]
async fn test_dynamic_tool() -> String {
    "here".to_string()
}

/// The input schema the `json-schema-2020-12` scenario expects to see preserved.
const JSON_SCHEMA_2020_12_INPUT: &str = r##"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "$defs": {
    "address": {
      "$anchor": "addressDef",
      "type": "object",
      "properties": { "street": { "type": "string" }, "city": { "type": "string" } }
    }
  },
  "properties": {
    "name": { "type": "string" },
    "address": { "$ref": "#/$defs/address" },
    "contactMethod": { "type": "string", "enum": ["phone", "email"] },
    "phone": { "type": "string" },
    "email": { "type": "string" }
  },
  "allOf": [{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }],
  "if": { "properties": { "contactMethod": { "const": "phone" } }, "required": ["contactMethod"] },
  "then": { "required": ["phone"] },
  "else": { "required": ["email"] },
  "additionalProperties": false
}"##;

/// `json_schema_2020_12_tool`: its schema published as written (`RawTool::with_json_schema`),
/// or why dsh-runtime refuses it.
fn json_schema_2020_12_tool() -> Result<RawTool, String> {
    let parameters = json::parse(JSON_SCHEMA_2020_12_INPUT).map_err(|e| e.to_string())?;
    let output = json::parse(r#"{"type":"string"}"#).map_err(|e| e.to_string())?;
    RawTool::with_json_schema(
        "json_schema_2020_12_tool",
        "Tool with JSON Schema 2020-12 features",
        parameters,
        Some(output),
        |_args, _cx| async { Ok(json::Value::from("accepted")) },
    )
    .map_err(|e| e.to_string())
}

/// Echo the region, which 2026-07-28 clients also send as the header `Mcp-Param-Region`
/// (the `http-custom-header-server-validation` scenario takes the first tool with an
/// `x-mcp-header` parameter).
#[tool(read_only)]
async fn test_custom_header(
    /// The region to echo.
    #[schema(header = "Region")]
    region: String,
) -> String {
    region
}

/// The served registry: every fixture, a job runtime for tasks.
fn registry() -> Result<(Registry, Vec<RegistrationGuard>), Box<dyn std::error::Error>> {
    let registry = Registry::builder().jobs(JobRuntime::new()).build();
    let steps = Registry::new();
    let _step = steps.register(ConfirmStep)?;
    let multi_input = Arc::new(MultiInput { steps });
    let tool_change = Arc::new(ToolChange {
        registry: registry.downgrade(),
        dynamic: Mutex::new(None),
    });
    let mut held = vec![
        registry.register(TestSimpleText)?,
        registry.register(TestImageContent)?,
        registry.register(TestErrorHandling)?,
        registry.register(TestAudioContent)?,
        registry.register(TestEmbeddedResource)?,
        registry.register(TestMultipleContentTypes)?,
        registry.register(TestToolWithProgress)?,
        registry.register(TestReconnection)?,
        registry.register(TestStreamingElicitation)?,
        registry.register(talking::TestLoggingTool)?,
        registry.register(talking::TestToolWithLogging)?,
        registry.register(talking::TestSampling)?,
        registry.register(talking::TestMissingCapability)?,
        registry.register(talking::TestElicitation)?,
        registry.register(talking::TestElicitationSep1034Defaults)?,
        registry.register(talking::TestElicitationSep1330Enums)?,
        registry.register(talking::TestInputRequiredResultElicitation)?,
        registry.register(talking::TestInputRequiredResultSampling)?,
        registry.register(talking::TestInputRequiredResultListRoots)?,
        registry.register(talking::TestInputRequiredResultRequestState)?,
        registry.register(talking::TestInputRequiredResultMultipleInputs)?,
        registry.register(talking::TestInputRequiredResultMultiRound)?,
        registry.register(talking::TestInputRequiredResultCapabilities)?,
        registry.register(talking::TestToolWithTask)?,
        registry.register(TestInputRequiredResultTamperedState)?,
        registry.register(TestCustomHeader)?,
        registry.register(Greet)?,
        registry.register(SlowCompute)?,
        registry.register(FailingJob)?,
        registry.register(ProtocolErrorJob)?,
        registry.register(ConfirmDelete)?,
        registry.register(MultiInputMultiInput(multi_input))?,
        registry.register(ToolChangeTrigger(tool_change))?,
    ];
    match json_schema_2020_12_tool() {
        Ok(tool) => held.push(registry.register(tool)?),
        Err(why) => eprintln!("json_schema_2020_12_tool not served: {why}"),
    }
    Ok((
        registry,
        held.into_iter()
            .map(|handle| handle.unregister_on_drop())
            .collect(),
    ))
}

/// The port to serve on: `PORT`, else 3000.
fn port() -> Result<u16, String> {
    match std::env::var("PORT") {
        Ok(text) => text
            .trim()
            .parse()
            .map_err(|e| format!("PORT={text:?} is not a port number: {e}")),
        Err(std::env::VarError::NotPresent) => Ok(3000),
        Err(e) => Err(format!("PORT: {e}")),
    }
}

/// How the server is reached: the command line's choice.
enum Mode {
    /// Streamable HTTP on `127.0.0.1:$PORT` (the default).
    Http,
    /// One client on standard input and output (`--stdio`).
    Stdio,
}

/// The mode the command line asks for: nothing (HTTP) or `--stdio`.
fn mode() -> Result<Mode, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        [] => Ok(Mode::Http),
        ["--stdio"] => Ok(Mode::Stdio),
        _ => Err(format!(
            "usage: everything-server [--stdio] (HTTP on PORT unless --stdio); got {args:?}"
        )),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mode = mode()?;
    let (registry, mut _tools) = registry()?;
    let prompts = context::prompts()?;
    let prompt_change = Arc::new(context::PromptChange {
        prompts: prompts.clone(),
        dynamic: Mutex::new(None),
    });
    _tools.push(
        registry
            .register(context::PromptChangeTrigger(prompt_change))?
            .unregister_on_drop(),
    );
    let server = McpServer::new(registry)
        .with_server_info(
            "dsh-conformance-everything-server",
            env!("CARGO_PKG_VERSION"),
        )
        .with_resources(context::resources()?)
        .with_prompts(prompts);
    match mode {
        Mode::Http => serve_http(&server).await,
        Mode::Stdio => {
            // Standard output carries MCP alone: nothing else is printed there.
            server.serve_stdio().await?;
            Ok(())
        }
    }
}

/// Serve `server` over HTTP on `PORT` until Ctrl-C or `SIGTERM`, then drain.
async fn serve_http(server: &McpServer) -> Result<(), Box<dyn std::error::Error>> {
    let port = port()?;
    let options = HttpOptions::default().bind(std::net::SocketAddr::from(([127, 0, 0, 1], port)));
    let http = dsh_mcp::serve_http(server, options).await?;
    eprintln!("serving MCP at {}", http.url());
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        ctrl_c = tokio::signal::ctrl_c() => ctrl_c?,
        _ = terminate.recv() => {}
    }
    http.drain(Duration::from_secs(5)).await?;
    Ok(())
}
