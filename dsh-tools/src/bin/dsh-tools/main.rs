//! `dsh-tools`: list, call, document and replay the reference tools.
//!
//! ```text
//! dsh-tools [--root DIR] list [--json]
//! dsh-tools [--root DIR] call NAME [ARGS|-] [--json | --content-only] [--log FILE] [--html OUT.html]
//! dsh-tools [--root DIR] session
//! dsh-tools [--root DIR] docs [--out FILE]
//! dsh-tools [--root DIR] replay FILE [--json | --html OUT.html]
//! dsh-tools export --provider openai|openai-strict|anthropic|gemini|mcp|...
//! dsh-tools sdk --lang ts|py
//! dsh-tools list --tokens [--target NAME[,NAME...]] [--json]
//! dsh-tools [--root DIR] code PROGRAM|- [--json]
//! dsh-tools [--root DIR] mcp [--http ADDR [--stateless] [--bearer-token-env VAR] [--allowed-origin ORIGIN]... [--allowed-host HOST]... [--allow-any-host] [--session-idle-timeout SECS] [--drain-timeout SECS]] [--code-mode native|code|both] [--ask TOOLS] [--state-key-file PATH] [--store redis://HOST:PORT/DB [--store-prefix NAME]]
//! dsh-tools [--mcp 'CMD ARGS']... [--mcp-http URL]... [--mcp-oauth] [--mcp-oauth-client-id ID] [--mcp-oauth-client-secret-env VAR] [--mcp-oauth-grant authorization-code|client-credentials] [--mcp-oauth-scopes 'A B'] [--mcp-oauth-token-file PATH] [--mcp-oauth-timeout SECS] COMMAND ...
//! dsh-tools [--root DIR] mcp --http ADDR --oauth-issuer URL [--oauth-audience URL] [--oauth-jwks URL|FILE] [--oauth-jwks-refresh SECS] [--oauth-leeway SECS] [--tool-scope RULE=SCOPE]... [--oauth-scope SCOPE]...
//! ```
//!
//! File paths given to the command line (`call --log`, `call --html`, `docs --out`,
//! `replay FILE`, `replay --html`, `mcp --state-key-file`, `mcp --oauth-jwks FILE`,
//! `--mcp-oauth-token-file`) are relative to the working directory, as in any command;
//! paths in tool arguments are relative to `--root`.
//!
//! `session` reads calls as JSON Lines on stdin, `{"id", "name", "arguments"}` (the
//! arguments a JSON value, or a string holding JSON text, sent to the pipeline as it is),
//! runs them one after the other in this one process, so background jobs started by one
//! call can be read by the next, and prints one JSON line per call: `{"id", "name",
//! "result", "callCard", "resultCard"}` (`result` is the result envelope; an unknown name
//! adds `didYouMean` when a tool name is close). A line that is not such an object, or is
//! not UTF-8, gets `{"line", "error"}` and the session goes on. At the end of input, or on `SIGINT`, `SIGTERM` or `SIGHUP`, the
//! running call is cancelled and every background job is stopped before the process exits.
//!
//! `--mcp 'CMD ARGS'` and `--mcp-http URL` (repeatable, any command) add an external
//! MCP server's tools; `--mcp-oauth*` authorize with a remote server that requires
//! OAuth 2.1 (see the `import` module), and without `--mcp-http` are a usage error.
//!
//! Exit status: 0 on success; 2 when the request itself is wrong (usage errors, ARGS that
//! are not JSON, an unknown tool, arguments that fail the schema: `UNKNOWN_TOOL`,
//! `INVALID_ARGS`, malformed session lines); 1 for every other failure (the tool failed,
//! a guard denied the call, a file could not be read or written, a replayed log has
//! malformed lines); 128 + the signal number when a signal stopped it (130 for Ctrl-C).

mod code;
mod export;
use export as export_cmd;
mod import;
mod loopback;
mod mcp;
mod replay;

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use dsh_providers::catalog;
use dsh_runtime::json::{self, Value};
use dsh_runtime::{PipelineCode, ToolCall, ToolResult, content::ContentBlock};
use dsh_tools::REGENERATE_CATALOG;
use dsh_tools::host::{Host, HostOptions};
use serde::Serialize;
use tokio::io::AsyncBufReadExt as _;
use tokio_util::sync::CancellationToken;

/// Run the dsh-rs reference tools (read, write, edit, grep, glob, bash, job control)
/// through the full pipeline.
#[derive(Parser, Debug)]
#[command(
    name = "dsh-tools",
    version,
    after_help = "Exit status: 0 on success; 2 for a wrong request (usage, ARGS not JSON, \
UNKNOWN_TOOL, INVALID_ARGS); 1 for any other failure (the tool failed, a guard denied \
the call, a file could not be read or written, malformed lines in a replayed log).\n\n\
Replay logs are JSON Lines, one record per call: \
{\"call\":{\"id\",\"name\",\"arguments\"},\"result\":{\"content\",\"isError\",\"meta\"}} \
(result optional; `call --log FILE` writes them).\n\n\
`session` reads {\"id\",\"name\",\"arguments\"} lines on stdin and prints \
{\"id\",\"name\",\"result\",\"callCard\",\"resultCard\"} lines; background jobs live \
until the input ends or a signal arrives."
)]
struct Cli {
    /// Work in this directory: relative paths resolve against it, and the file tools
    /// cannot reach outside it.
    #[arg(long, global = true, value_name = "DIR", default_value = ".")]
    root: PathBuf,
    #[command(flatten)]
    imports: import::ImportArgs,
    /// Export traces and metrics over OTLP/HTTP to this collector, by its base URL
    /// (`/v1/traces` and `/v1/metrics` are appended), e.g. `http://localhost:4318`.
    /// Default: `OTEL_EXPORTER_OTLP_ENDPOINT`, else no export.
    #[arg(long, global = true, value_name = "URL")]
    otlp_endpoint: Option<String>,
    /// Record each call's arguments and result on its exported span
    /// (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`). Off by default: they
    /// may be sensitive.
    #[arg(long, global = true)]
    otel_record_content: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Show the tools a model would see.
    List {
        /// Print the schemas as JSON (`[{name, description, parameters}]`).
        #[arg(long)]
        json: bool,
        /// Show the o200k tokens of each tool's definition per export target, and of each
        /// request's whole `tools` fragment.
        #[arg(long)]
        tokens: bool,
        /// With --tokens: only these targets (repeatable or comma-separated; default: all).
        #[arg(long, alias = "provider", requires = "tokens", value_delimiter = ',')]
        target: Vec<String>,
    },
    /// Print the tools as a model API takes them (warnings on stderr; exit 1 when a tool
    /// cannot be exported). Providers: openai, openai-strict, openai-chat,
    /// openai-chat-strict, anthropic, anthropic-strict, gemini, gemini-openapi, mcp,
    /// mcp-2026-07-28.
    Export {
        /// The target API.
        #[arg(long)]
        provider: String,
    },
    /// Print the code-mode SDK (TypeScript or Python) of the tools.
    Sdk {
        /// `ts` or `py`.
        #[arg(long)]
        lang: String,
    },
    /// Call one tool; print its content and its result card.
    Call {
        /// The tool name.
        name: String,
        /// The arguments, a JSON object; `-` reads them from standard input.
        #[arg(default_value = "{}")]
        args: String,
        /// Print one JSON document: the call, the result envelope and both cards.
        #[arg(long, conflicts_with = "content_only")]
        json: bool,
        /// Print only what the model sees (the result's content), also for failures.
        #[arg(long)]
        content_only: bool,
        /// Append the call and the persisted part of its result to this JSON Lines log.
        #[arg(long, value_name = "FILE")]
        log: Option<PathBuf>,
        /// Also write the call's cards as one self-contained HTML page.
        #[arg(long, value_name = "OUT.html")]
        html: Option<PathBuf>,
    },
    /// Run calls read as JSON Lines from standard input in one process; print one JSON
    /// line per call.
    Session,
    /// Write a Markdown catalog of the tools.
    Docs {
        /// Write to this file instead of standard output.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Run a TypeScript program against the tools through `run_code` (`-` reads it
    /// from standard input).
    Code {
        /// The program: the body of an async function, e.g. `return await tools.glob({pattern: "*.md"})`.
        program: String,
        /// Print the result envelope as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Serve the tools over MCP (stdio, or Streamable HTTP with --http); with
    /// --code-mode code|both, each session is offered run_code.
    Mcp(Box<mcp::McpArgs>),
    /// Print the cards of every call in a JSON Lines log.
    Replay {
        /// The log.
        file: PathBuf,
        /// Print one JSON object per call.
        #[arg(long, conflicts_with = "html")]
        json: bool,
        /// Write the cards as one self-contained HTML page instead of printing them.
        #[arg(long, value_name = "OUT.html")]
        html: Option<PathBuf>,
    },
}

impl Command {
    /// The command's own file paths (not those of tool calls): `call --log`, `docs
    /// --out`, `replay FILE`, and the files of `mcp`'s options.
    fn files_mut(&mut self) -> Vec<&mut PathBuf> {
        match self {
            Command::Call { log, html, .. } => log.iter_mut().chain(html.iter_mut()).collect(),
            Command::Docs { out: Some(p) } => vec![p],
            Command::Replay { file, html, .. } => {
                std::iter::once(file).chain(html.iter_mut()).collect()
            }
            Command::Mcp(args) => args.files_mut(),
            _ => Vec::new(),
        }
    }

    /// Make the command's own file paths absolute, relative to `dir`, without their `.`
    /// components (`..` stays: after a symbolic link it leads elsewhere than the text
    /// says).
    fn anchor_files(&mut self, dir: &std::path::Path) {
        for path in self.files_mut() {
            *path = dir.join(&*path).components().collect();
        }
    }
}

/// `println!` that ignores a closed stdout (`dsh-tools list | head`) instead of panicking.
macro_rules! outln {
    ($($arg:tt)*) => {
        emit(&format!("{}\n", format_args!($($arg)*)))
    };
}

fn emit(text: &str) {
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// Export traces and metrics to the OTLP collector `--otlp-endpoint` names, else a
/// non-empty `OTEL_EXPORTER_OTLP_ENDPOINT` (none: no export). Called before the async
/// runtime starts (the exporters' HTTP client is a blocking one); the guard, dropped
/// last, sends what is still buffered.
fn export(flag: Option<String>) -> Result<Option<dsh_otel::Guard>, ExitCode> {
    let url = flag
        .or_else(|| std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT").ok())
        .filter(|url| !url.is_empty());
    let Some(url) = url else {
        return Ok(None);
    };
    dsh_otel::init(&url, "dsh-tools").map(Some).map_err(|e| {
        eprintln!("error: {e}");
        ExitCode::from(USAGE)
    })
}

/// Exit status for requests that are wrong in themselves.
const USAGE: u8 = 2;

fn main() -> ExitCode {
    let mut cli = Cli::parse();
    let host = match prepare(&mut cli) {
        Ok(host) => host,
        Err(code) => return code,
    };
    let _otel = match export(cli.otlp_endpoint.take()) {
        Ok(guard) => guard,
        Err(code) => return code,
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(serve(host, cli));
    // A read of standard input may still be blocked in a thread of the runtime's pool:
    // do not wait for it.
    runtime.shutdown_background();
    code
}

/// Before any thread exists: refuse import flags that cannot take effect, anchor the
/// CLI's own file arguments where the command was run, change to the root, make the host, and read `call NAME -`'s arguments from
/// standard input. `Err`: the exit status to stop with (the error printed).
fn prepare(cli: &mut Cli) -> Result<Host, ExitCode> {
    if let Err(e) = cli.imports.check() {
        eprintln!("error: {e}");
        return Err(ExitCode::from(USAGE));
    }
    // File arguments of the CLI itself (not of tool calls), the files of server options
    // among them, are relative to where the command was run, not to the root.
    match std::env::current_dir() {
        Ok(here) => {
            cli.command.anchor_files(&here);
            for path in cli.imports.files_mut() {
                *path = here.join(&*path).components().collect();
            }
        }
        Err(e) => {
            if let Some(path) = cli
                .command
                .files_mut()
                .into_iter()
                .chain(cli.imports.files_mut())
                .find(|p| p.is_relative())
            {
                eprintln!(
                    "error: cannot resolve {}: the working directory is unknown ({e}); give \
                     an absolute path",
                    path.display()
                );
                return Err(ExitCode::from(USAGE));
            }
        }
    }
    // Changing directory before any thread exists: from here on, relative paths in tool
    // arguments resolve against the root, for the tools and the guard alike.
    if let Err(e) = std::env::set_current_dir(&cli.root) {
        eprintln!("error: cannot use root {}: {e}", cli.root.display());
        return Err(ExitCode::from(USAGE));
    }
    let options = HostOptions::new().trace_content(cli.otel_record_content);
    let host = match Host::with_options(".", &options) {
        Ok(host) => host,
        Err(e) => {
            eprintln!("error: {e}");
            return Err(ExitCode::FAILURE);
        }
    };
    // `call NAME -`: the arguments come from standard input.
    if let Command::Call { args, .. } = &mut cli.command
        && args == "-"
    {
        let mut text = String::new();
        if let Err(e) = std::io::stdin().read_to_string(&mut text) {
            eprintln!("error: cannot read the arguments from standard input: {e}");
            return Err(ExitCode::from(USAGE));
        }
        *args = text;
    }
    Ok(host)
}

/// Import the MCP servers, run the command until it ends or a signal stops it, then
/// close the imports and stop the background jobs; the exit status.
async fn serve(host: Host, cli: Cli) -> ExitCode {
    let mut signals = match Signals::new() {
        Ok(signals) => signals,
        Err(e) => {
            eprintln!("error: cannot handle signals: {e}");
            return ExitCode::FAILURE;
        }
    };
    let imports = match import::import_all(&host, &cli.imports).await {
        Ok(imports) => imports,
        Err(e) => {
            eprintln!("error: {e}");
            host.shutdown().await;
            return ExitCode::FAILURE;
        }
    };
    let cancel = CancellationToken::new();
    let work = run(&host, cli.command, cancel.clone());
    tokio::pin!(work);
    // `biased`, signals first: a command that stops on the signal itself (the MCP
    // server shuts down gracefully) still exits with 128 + the signal, as documented.
    let code = tokio::select! {
        biased;
        signal = signals.next() => {
            // Cancel the running call (which stops what it started), and give it a
            // moment to report; a second signal stops waiting.
            cancel.cancel();
            tokio::select! {
                _ = tokio::time::timeout(Duration::from_secs(15), &mut work) => {}
                _ = signals.next() => {}
            }
            ExitCode::from(128 + signal)
        }
        code = &mut work => code,
    };
    imports.close().await;
    // Stop every background job and wait for them, unless another signal insists.
    tokio::select! {
        () = host.jobs().shutdown() => {}
        _ = signals.next() => {}
    }
    code
}

/// The signals that stop the host: `SIGINT`, `SIGTERM`, `SIGHUP`.
struct Signals {
    #[cfg(unix)]
    streams: Vec<(u8, tokio::signal::unix::Signal)>,
}

impl Signals {
    fn new() -> std::io::Result<Signals> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let mut streams = Vec::new();
            for (number, kind) in [
                (2, SignalKind::interrupt()),
                (15, SignalKind::terminate()),
                (1, SignalKind::hangup()),
            ] {
                streams.push((number, signal(kind)?));
            }
            Ok(Signals { streams })
        }
        #[cfg(not(unix))]
        Ok(Signals {})
    }

    /// The number of the next signal.
    async fn next(&mut self) -> u8 {
        #[cfg(unix)]
        {
            let waits = self.streams.iter_mut().map(|(number, stream)| {
                let number = *number;
                Box::pin(async move {
                    stream.recv().await;
                    number
                })
            });
            futures_select_all(waits).await
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            2
        }
    }
}

/// The first of several futures to finish.
#[cfg(unix)]
async fn futures_select_all<F: std::future::Future<Output = u8> + Unpin>(
    futures: impl Iterator<Item = F>,
) -> u8 {
    let mut futures: Vec<F> = futures.collect();
    std::future::poll_fn(move |cx| {
        for future in &mut futures {
            if let std::task::Poll::Ready(number) = std::pin::Pin::new(future).poll(cx) {
                return std::task::Poll::Ready(number);
            }
        }
        std::task::Poll::Pending
    })
    .await
}

async fn run(host: &Host, command: Command, cancel: CancellationToken) -> ExitCode {
    match command {
        Command::List {
            tokens: true,
            json,
            target,
        } => export_cmd::list_tokens(host.registry(), json, &target),
        Command::List { json, .. } => list(host, json),
        Command::Export { provider } => {
            export_cmd::print(export_cmd::export(host.registry(), &provider))
        }
        Command::Sdk { lang } => export_cmd::print(export_cmd::sdk(host.registry(), &lang)),
        Command::Call {
            name,
            args,
            json,
            content_only,
            log,
            html,
        } => {
            let output = if json {
                Output::Json
            } else if content_only {
                Output::Content
            } else {
                Output::Human
            };
            // The result may point at spill files: they outlive this one call.
            host.keep_spill_files();
            call(host, &name, &args, output, (log, html), cancel).await
        }
        Command::Session => session(host, cancel).await,
        Command::Docs { out } => write_docs(host, out),
        Command::Replay { file, json, html } => replay_log(host, &file, json, html.as_deref()),
        Command::Code { program, json } => code::command(host, &program, json).await,
        Command::Mcp(args) => match mcp::run(host, &args).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        },
    }
}

fn list(host: &Host, as_json: bool) -> ExitCode {
    let schemas = host.registry().view().schemas();
    if as_json {
        outln!("{}", pretty(&schemas));
        return ExitCode::SUCCESS;
    }
    let width = schemas.iter().map(|s| s.name.len()).max().unwrap_or(0);
    for s in &schemas {
        let summary = s.description.lines().next().unwrap_or("");
        let params = s
            .parameters
            .as_object()
            .map(|rules| {
                rules
                    .properties
                    .iter()
                    .map(|p| {
                        let mark = if p.required { "*" } else { "" };
                        format!(
                            "{}{mark}: {}",
                            p.name,
                            type_name(&p.schema.to_json_schema())
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default();
        outln!("{:width$}  {summary}", s.name);
        outln!("{:width$}  ({params})", "");
    }
    outln!("(* required)");
    ExitCode::SUCCESS
}

/// A short name for a parameter's type: `string`, `integer`, `string[]`, `"a" | "b"`,
/// `string | null`, `any`.
fn type_name(schema: &Value) -> String {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return values
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(" | ");
    }
    match schema.get("type") {
        Some(Value::String(name)) if &**name == "array" => {
            let items = schema
                .get("items")
                .map_or_else(|| "any".to_string(), type_name);
            if items.contains(' ') {
                format!("({items})[]")
            } else {
                format!("{items}[]")
            }
        }
        Some(Value::String(name)) => name.to_string(),
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" | "),
        _ => ["oneOf", "anyOf"]
            .iter()
            .find_map(|key| schema.get(key).and_then(Value::as_array))
            .map_or_else(
                || "any".to_string(),
                |options| {
                    options
                        .iter()
                        .map(type_name)
                        .collect::<Vec<_>>()
                        .join(" | ")
                },
            ),
    }
}

/// What `call` prints.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Output {
    /// Content, then the result card.
    Human,
    /// One JSON document.
    Json,
    /// Content only.
    Content,
}

/// A close tool name for an unknown one.
fn did_you_mean(host: &Host, name: &str) -> Option<String> {
    host.registry()
        .view()
        .schemas()
        .into_iter()
        .map(|s| (strsim::jaro_winkler(name, &s.name), s.name))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, name)| name.to_string())
}

/// One call through the full pipeline, cancelled with `cancel`.
async fn execute(
    host: &Host,
    call_id: &str,
    name: &str,
    arguments: &str,
    cancel: &CancellationToken,
) -> ToolResult {
    host.registry()
        .execute(ToolCall::new(call_id, name, arguments).with_cancellation(cancel.child_token()))
        .await
}

async fn call(
    host: &Host,
    name: &str,
    args_text: &str,
    output: Output,
    files: (Option<PathBuf>, Option<PathBuf>),
    cancel: CancellationToken,
) -> ExitCode {
    let arguments = match json::parse(args_text) {
        Ok(value) => value,
        Err(e) => {
            eprintln!("error: ARGS is not valid JSON: {e}");
            return ExitCode::from(USAGE);
        }
    };
    let call_id = format!("call_{}", std::process::id());
    let result = execute(host, &call_id, name, args_text, &cancel).await;
    let summary = result.summary();
    let card = host.registry().present_result(name, &arguments, &summary);

    match output {
        Output::Json => {
            let mut doc = json::Object::new();
            let mut call = json::Object::new();
            call.insert("id", Value::from(call_id.as_str()));
            call.insert("name", Value::from(name));
            call.insert("arguments", arguments.clone());
            doc.insert("call", Value::Object(call));
            doc.insert("result", result.to_json());
            doc.insert(
                "callCard",
                to_json(&host.registry().present_call(name, &arguments)),
            );
            doc.insert("resultCard", to_json(&card));
            outln!("{}", pretty(&Value::Object(doc)));
        }
        Output::Content => {
            let text = content_text(result.content());
            if text.ends_with('\n') {
                emit(&text);
            } else {
                outln!("{text}");
            }
        }
        Output::Human if result.is_success() => {
            outln!("{}", content_text(result.content()));
            outln!("\n--- result card ---\n{}", pretty(&card));
        }
        Output::Human => {}
    }

    if let Err(code) = write_outputs(host, &call_id, name, &arguments, &result, card, files) {
        return code;
    }
    let running = host
        .jobs()
        .list(None)
        .into_iter()
        .filter(|job| !job.status.is_terminal())
        .count();
    if running > 0 {
        eprintln!(
            "note: {running} background job(s) stop when dsh-tools exits; \
             `dsh-tools session` keeps them running across calls"
        );
    }
    // An unknown tool's message already names the closest tools (the registry's).
    failure_status(&result)
}

/// `session`: calls from stdin, one JSON line out per line in.
async fn session(host: &Host, cancel: CancellationToken) -> ExitCode {
    let mut input = tokio::io::BufReader::new(tokio::io::stdin());
    let mut raw = Vec::new();
    let mut number = 0usize;
    let mut malformed = false;
    loop {
        raw.clear();
        let read = tokio::select! {
            read = input.read_until(b'\n', &mut raw) => read,
            () = cancel.cancelled() => return ExitCode::from(USAGE),
        };
        match read {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                eprintln!("error: cannot read standard input: {e}");
                return ExitCode::FAILURE;
            }
        }
        number += 1;
        let bytes = raw.strip_suffix(b"\n").unwrap_or(&raw);
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        // A line that is not UTF-8 is answered like any other malformed line; the session
        // (and its jobs) go on.
        let parsed = match std::str::from_utf8(bytes) {
            Ok(line) if line.trim().is_empty() => continue,
            Ok(line) => session_request(line),
            Err(e) => Err(format!(
                "not UTF-8: invalid byte at offset {}",
                e.valid_up_to()
            )),
        };
        let out = match parsed {
            Ok(request) => session_call(host, request, number, &cancel).await,
            Err(error) => {
                malformed = true;
                let mut o = json::Object::new();
                o.insert("line", Value::from(number as u64));
                o.insert("error", Value::from(error.as_str()));
                Value::Object(o)
            }
        };
        emit_line(&out.to_string());
    }
    if malformed {
        ExitCode::from(USAGE)
    } else {
        ExitCode::SUCCESS
    }
}

/// One session line: id (optional), name, arguments as JSON text.
struct SessionRequest {
    id: Option<String>,
    name: String,
    arguments: String,
}

fn session_request(line: &str) -> Result<SessionRequest, String> {
    let value = json::parse(line).map_err(|e| format!("not JSON: {e}"))?;
    let Some(object) = value.as_object() else {
        return Err("expected an object {\"id\", \"name\", \"arguments\"}".to_string());
    };
    let name = match object.get("name") {
        Some(Value::String(name)) => name.to_string(),
        Some(_) => return Err("\"name\" must be a string".to_string()),
        None => return Err("missing \"name\"".to_string()),
    };
    let id = match object.get("id") {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) => Some(id.to_string()),
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(_) => return Err("\"id\" must be a string or a number".to_string()),
    };
    let arguments = match object.get("arguments") {
        None => "{}".to_string(),
        // JSON text, sent as it is (duplicate keys, -0 and all).
        Some(Value::String(text)) => text.to_string(),
        Some(value) => value.to_string(),
    };
    Ok(SessionRequest {
        id,
        name,
        arguments,
    })
}

async fn session_call(
    host: &Host,
    request: SessionRequest,
    number: usize,
    cancel: &CancellationToken,
) -> Value {
    let id = request.id.unwrap_or_else(|| format!("call_{number}"));
    let name = request.name.as_str();
    let result = execute(host, &id, name, &request.arguments, cancel).await;
    // Cards from the arguments as the model sent them; unparsable text is nothing.
    let arguments = json::parse(&request.arguments).unwrap_or(Value::Null);
    let summary = result.summary();
    let mut o = json::Object::new();
    o.insert("id", Value::from(id.as_str()));
    o.insert("name", Value::from(name));
    o.insert("result", result.to_json());
    o.insert(
        "callCard",
        to_json(&host.registry().present_call(name, &arguments)),
    );
    o.insert(
        "resultCard",
        to_json(&host.registry().present_result(name, &arguments, &summary)),
    );
    if result.error_code() == Some(PipelineCode::UnknownTool)
        && let Some(close) = did_you_mean(host, name)
    {
        o.insert("didYouMean", Value::from(close.as_str()));
    }
    Value::Object(o)
}

/// Writes one line to stdout and flushes it (a session's reader waits for it).
fn emit_line(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

/// Report a failed call on stderr; the exit status for the result.
fn failure_status(result: &ToolResult) -> ExitCode {
    let Some(message) = result.message() else {
        return ExitCode::SUCCESS;
    };
    match result.code_str() {
        Some(code) => eprintln!("error[{code}]: {message}"),
        None => eprintln!("error: {message}"),
    }
    match result.error_code() {
        Some(PipelineCode::InvalidArgs | PipelineCode::UnknownTool) => ExitCode::from(USAGE),
        _ => ExitCode::FAILURE,
    }
}

fn write_docs(host: &Host, out: Option<PathBuf>) -> ExitCode {
    let text = catalog::markdown(host.registry(), Some(REGENERATE_CATALOG));
    match out {
        None => {
            emit(&text);
            ExitCode::SUCCESS
        }
        Some(path) => match std::fs::write(&path, text) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: cannot write {}: {e}", path.display());
                ExitCode::FAILURE
            }
        },
    }
}

/// What `call` writes besides its output: `--html` (the call's cards as one page), then
/// `--log` (the call's record).
fn write_outputs(
    host: &Host,
    call_id: &str,
    name: &str,
    arguments: &Value,
    result: &ToolResult,
    card: dsh_runtime::cards::ResultView,
    (log, html): (Option<PathBuf>, Option<PathBuf>),
) -> Result<(), ExitCode> {
    if let Some(path) = html {
        let page = replay::call_page(&replay::ReplayedCall {
            line: 0,
            id: call_id.to_string(),
            name: name.to_string(),
            arguments: arguments.clone(),
            is_error: Some(result.is_error()),
            call_card: host.registry().present_call(name, arguments),
            result_card: Some(card),
        });
        if let Err(e) = std::fs::write(&path, page) {
            eprintln!("error: cannot write {}: {e}", path.display());
            return Err(ExitCode::FAILURE);
        }
    }
    if let Some(path) = log {
        let line = serde_json::to_string(&replay::record(call_id, name, arguments, result))
            .unwrap_or_default();
        if let Err(e) = append_line(&path, &line) {
            eprintln!("error: cannot append to {}: {e}", path.display());
            return Err(ExitCode::FAILURE);
        }
    }
    Ok(())
}

fn replay_log(host: &Host, file: &PathBuf, as_json: bool, html: Option<&Path>) -> ExitCode {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", file.display());
            return ExitCode::FAILURE;
        }
    };
    let report = replay::replay(host.registry(), None, &text);
    if let Some(out) = html {
        let page = replay::html_page(&report, &file.display().to_string());
        if let Err(e) = std::fs::write(out, page) {
            eprintln!("error: cannot write {}: {e}", out.display());
            return ExitCode::FAILURE;
        }
    }
    for call in report.calls.iter().filter(|_| html.is_none()) {
        if as_json {
            let mut o = json::Object::new();
            o.insert("line", Value::from(call.line as u64));
            o.insert("id", Value::from(call.id.as_str()));
            o.insert("name", Value::from(call.name.as_str()));
            o.insert("callCard", to_json(&call.call_card));
            if let Some(card) = &call.result_card {
                o.insert("resultCard", to_json(card));
            }
            outln!("{}", Value::Object(o));
        } else {
            outln!("[line {}] {} ({})", call.line, call.name, call.id);
            outln!("  call:   {}", compact(&call.call_card));
            match &call.result_card {
                Some(card) => outln!("  result: {}", compact(card)),
                None => outln!("  result: (not logged)"),
            }
        }
    }
    for (line, error) in &report.errors {
        eprintln!("error: {}:{line}: {error}", file.display());
    }
    if report.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn content_text(content: &[ContentBlock]) -> String {
    content
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text, .. } => text.clone(),
            ContentBlock::Image { media_type, .. } => format!("[image: {media_type}]"),
            _ => "[content block]".to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn append_line(path: &PathBuf, line: &str) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    writeln!(file, "{line}")
}

fn to_json<T: Serialize>(value: &T) -> Value {
    json::to_value(value).unwrap_or(Value::Null)
}

fn pretty<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|e| format!("(unprintable: {e})"))
}

fn compact<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|e| format!("(unprintable: {e})"))
}
