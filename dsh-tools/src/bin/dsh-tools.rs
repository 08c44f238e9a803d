//! `dsh-tools`: list, call, document and replay the reference tools.
//!
//! ```text
//! dsh-tools [--root DIR] list [--json]
//! dsh-tools [--root DIR] call NAME [ARGS] [--json] [--log FILE]
//! dsh-tools [--root DIR] docs [--out FILE]
//! dsh-tools [--root DIR] replay FILE [--json]
//! dsh-tools [--root DIR] mcp [--http ADDR [--stateless] [--bearer-token-env VAR]]
//! ```
//!
//! `--mcp 'CMD ARGS'` (repeatable, any command) adds an external MCP server's tools.
//!
//! Exit status: 0 on success; 2 when the request itself is wrong (usage errors, ARGS that
//! are not JSON, an unknown tool, arguments that fail the schema: `UNKNOWN_TOOL`,
//! `INVALID_ARGS`); 1 for every other failure (the tool failed, a guard denied the call,
//! a file could not be read or written, a replayed log has malformed lines).

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use dsh_runtime::codegen::markdown;
use dsh_runtime::json::{self, Value};
use dsh_runtime::{ContentBlock, ErrorCode, ToolResult};
use dsh_tools::REGENERATE_CATALOG;
use dsh_tools::host::{Host, mcp, replay};
use serde::Serialize;

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
(result optional; `call --log FILE` writes them)."
)]
struct Cli {
    /// Work in this directory: relative paths resolve against it, and the file tools
    /// cannot reach outside it.
    #[arg(long, global = true, value_name = "DIR", default_value = ".")]
    root: PathBuf,
    /// Add the tools of an external MCP server, started from this command line
    /// (repeatable).
    #[arg(long = "mcp", global = true, value_name = "CMD ARGS")]
    mcp: Vec<String>,
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
    },
    /// Call one tool; print its content and its result card.
    Call {
        /// The tool name.
        name: String,
        /// The arguments, a JSON object.
        #[arg(default_value = "{}")]
        args: String,
        /// Print one JSON document: the call, the result envelope and both cards.
        #[arg(long)]
        json: bool,
        /// Append the call and the persisted part of its result to this JSON Lines log.
        #[arg(long, value_name = "FILE")]
        log: Option<PathBuf>,
    },
    /// Write a Markdown catalog of the tools.
    Docs {
        /// Write to this file instead of standard output.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Serve the tools over MCP (stdio, or Streamable HTTP with --http).
    Mcp(mcp::McpArgs),
    /// Print the cards of every call in a JSON Lines log.
    Replay {
        /// The log.
        file: PathBuf,
        /// Print one JSON object per call.
        #[arg(long)]
        json: bool,
    },
}

impl Command {
    /// Make the command's own file paths absolute, relative to `dir`.
    fn anchor_files(&mut self, dir: &std::path::Path) {
        let path = match self {
            Command::Call { log: Some(p), .. } | Command::Docs { out: Some(p) } => p,
            Command::Replay { file, .. } => file,
            _ => return,
        };
        *path = dir.join(&*path);
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

/// Exit status for requests that are wrong in themselves.
const USAGE: u8 = 2;

fn main() -> ExitCode {
    let mut cli = Cli::parse();
    // File arguments of the CLI itself (not of tool calls) are relative to where the
    // command was run.
    if let Ok(here) = std::env::current_dir() {
        cli.command.anchor_files(&here);
    }
    // Changing directory before any thread exists: from here on, relative paths in tool
    // arguments resolve against the root, for the tools and the guard alike.
    if let Err(e) = std::env::set_current_dir(&cli.root) {
        eprintln!("error: cannot use root {}: {e}", cli.root.display());
        return ExitCode::from(USAGE);
    }
    let host = match Host::new(".") {
        Ok(host) => host,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
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
    runtime.block_on(async move {
        let code = match mcp::import_all(&host, &cli.mcp).await {
            Ok(imports) => {
                let code = run(&host, cli.command).await;
                imports.close().await;
                code
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        };
        host.shutdown().await;
        code
    })
}

async fn run(host: &Host, command: Command) -> ExitCode {
    match command {
        Command::List { json } => list(host, json),
        Command::Call {
            name,
            args,
            json,
            log,
        } => call(host, &name, &args, json, log).await,
        Command::Docs { out } => write_docs(host, out),
        Command::Replay { file, json } => replay_log(host, &file, json),
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
    let schemas = host.registry().schemas(None);
    if as_json {
        outln!("{}", pretty(&schemas));
        return ExitCode::SUCCESS;
    }
    let width = schemas.iter().map(|s| s.name.len()).max().unwrap_or(0);
    for s in &schemas {
        let summary = s.description.lines().next().unwrap_or("");
        let params = s
            .parameters
            .get("properties")
            .and_then(Value::as_object)
            .map(|props| props.keys().collect::<Vec<_>>().join(", "))
            .unwrap_or_default();
        outln!("{:width$}  {summary}", s.name);
        outln!("{:width$}  ({params})", "");
    }
    ExitCode::SUCCESS
}

async fn call(
    host: &Host,
    name: &str,
    args_text: &str,
    as_json: bool,
    log: Option<PathBuf>,
) -> ExitCode {
    let arguments = match json::parse(args_text) {
        Ok(value) => value,
        Err(e) => {
            eprintln!("error: ARGS is not valid JSON: {e}");
            return ExitCode::from(USAGE);
        }
    };
    let call_id = format!("call_{}", std::process::id());
    let result = host.call(&call_id, name, args_text).await;
    let summary = result.summary();
    let card = host
        .registry()
        .present_result(None, name, &arguments, &summary);

    if as_json {
        let mut doc = json::Object::new();
        let mut call = json::Object::new();
        call.insert("id", Value::from(call_id.as_str()));
        call.insert("name", Value::from(name));
        call.insert("arguments", arguments.clone());
        doc.insert("call", Value::Object(call));
        doc.insert("result", result.to_json());
        doc.insert(
            "callCard",
            to_json(&host.registry().present_call(None, name, &arguments)),
        );
        doc.insert("resultCard", to_json(&card));
        outln!("{}", pretty(&Value::Object(doc)));
    } else if result.is_success() {
        outln!("{}", content_text(result.content()));
        outln!("\n--- result card ---\n{}", pretty(&card));
    }

    if let Some(path) = log {
        let line = serde_json::to_string(&replay::record(&call_id, name, &arguments, &result))
            .unwrap_or_default();
        if let Err(e) = append_line(&path, &line) {
            eprintln!("error: cannot append to {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    }
    failure_status(&result)
}

/// Report a failed call on stderr; the exit status for the result.
fn failure_status(result: &ToolResult) -> ExitCode {
    let Some(message) = result.message() else {
        return ExitCode::SUCCESS;
    };
    match result.code() {
        Some(code) => eprintln!("error[{code}]: {message}"),
        None => eprintln!("error: {message}"),
    }
    match result.error_code() {
        Some(ErrorCode::InvalidArgs | ErrorCode::UnknownTool) => ExitCode::from(USAGE),
        _ => ExitCode::FAILURE,
    }
}

fn write_docs(host: &Host, out: Option<PathBuf>) -> ExitCode {
    let text = markdown::catalog(host.registry(), Some(REGENERATE_CATALOG));
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

fn replay_log(host: &Host, file: &PathBuf, as_json: bool) -> ExitCode {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", file.display());
            return ExitCode::FAILURE;
        }
    };
    let report = replay::replay(host.registry(), None, &text);
    for call in &report.calls {
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
            ContentBlock::Text { text } => text.clone(),
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
