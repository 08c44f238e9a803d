//! The reference tools of `dsh-tools` written the way an rmcp server defines them:
//! `#[tool_router]` methods with `#[tool]` taking `Parameters<T>`, the argument structs
//! deriving schemars' `JsonSchema`. Same names, parameter names, JSON types, required
//! sets, descriptions, bounds and MCP annotations as ours; the bodies are stand-ins
//! returning text (rmcp publishes an `outputSchema` only for a `Json<T>` result, and the
//! comparison in BENCHMARKS.md is of the input side).
//!
//! Prints the `tools/list` result (protocol 2025-11-25: `{"tools": […]}`) as rmcp's
//! server serializes it. Run by `benches/tokens/run.sh`:
//! `cargo run -p dsh-benches --features peers --example rmcp_tool_list`.

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
struct ReadArgs {
    #[schemars(
        description = "Path of the file to read, absolute or relative to the working directory.",
        length(min = 1)
    )]
    file_path: String,
    #[schemars(
        description = "1-based number of the first line to return (default: 1).",
        range(min = 1)
    )]
    offset: Option<u64>,
    #[schemars(
        description = "How many lines to return (default and maximum: 2000).",
        range(min = 1, max = 2000)
    )]
    limit: Option<u64>,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct WriteArgs {
    #[schemars(
        description = "Path of the file to write, absolute or relative to the working directory. Missing\nparent directories are created.",
        length(min = 1)
    )]
    file_path: String,
    #[schemars(description = "The file's complete new content.")]
    content: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct EditArgs {
    #[schemars(
        description = "Path of the file to edit, absolute or relative to the working directory.",
        length(min = 1)
    )]
    file_path: String,
    #[schemars(
        description = "The exact text to replace, including whitespace and indentation.",
        length(min = 1)
    )]
    old_string: String,
    #[schemars(
        description = "The text to put in its place (must differ from `old_string`; empty deletes it)."
    )]
    new_string: String,
    #[schemars(
        description = "Replace every occurrence of `old_string` (default: false; `old_string` must then\noccur exactly once)."
    )]
    replace_all: Option<bool>,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct GrepArgs {
    #[schemars(
        description = "Regular expression to search for (ripgrep's syntax, e.g. `fn\\s+main`).",
        length(min = 1)
    )]
    pattern: String,
    #[schemars(
        description = "File or directory to search (default: the working directory; relative paths resolve\nagainst it)."
    )]
    path: Option<String>,
    #[schemars(
        description = "Search only files matching this single glob, e.g. `*.rs` or `*.{ts,tsx}` (no\ncomma-separated lists, no `!` negation)."
    )]
    include: Option<String>,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct GlobArgs {
    #[schemars(
        description = "The glob, e.g. `**/*.rs` or `src/*/mod.rs`. Without a `/` it is tried against file\nnames anywhere below `path` (`*.md` finds every Markdown file); with one, against the\npath from the working directory.",
        length(min = 1)
    )]
    pattern: String,
    #[schemars(
        description = "Directory to search in (default: the working directory; relative paths resolve\nagainst it)."
    )]
    path: Option<String>,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct BashArgs {
    #[schemars(description = "The command line, run with `bash -c`.")]
    command: String,
    #[schemars(
        description = "What the command does, in a few words in the active voice (shown to the user), e.g.\n\"Show working tree status\" for `git status`."
    )]
    description: String,
    #[serde(rename = "timeoutMs")]
    #[schemars(
        description = "Stop the command after this many milliseconds (default 120000, at most 600000).\nNot used in the background."
    )]
    timeout_ms: Option<f64>,
    #[schemars(
        description = "The directory to run in, instead of the workspace; a relative path starts from\nthe workspace."
    )]
    workdir: Option<String>,
    #[serde(default)]
    #[schemars(
        description = "Start the command as a background job and answer with its id at once; read what it\nprints with `job_output`, stop it with `job_kill`. No timeout applies."
    )]
    run_in_background: bool,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct JobOutputArgs {
    #[schemars(description = "The id the starting tool returned (e.g. `bash-1`).")]
    job_id: String,
    #[serde(default)]
    #[schemars(
        description = "First wait until the job ends or `timeout_ms` passes; a job still running then is\nreported as running and keeps running."
    )]
    wait: bool,
    #[schemars(
        description = "How long `wait` may take, in milliseconds (default 30000; longer waits are cut to\n600000)."
    )]
    timeout_ms: Option<f64>,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct JobKillArgs {
    #[schemars(description = "The id the starting tool returned (e.g. `bash-1`).")]
    job_id: String,
    #[schemars(description = "A few words on why, kept with the job and handed to it.")]
    reason: Option<String>,
}

#[derive(Clone)]
struct Tools {
    tool_router: ToolRouter<Tools>,
}

#[tool_router]
impl Tools {
    #[tool(
        description = "Read a UTF-8 text file as numbered lines.\n\nReturns up to 2000 lines (and 50 KiB) at a time, numbered from 1; use `offset` and\n`limit` to continue reading long files. Binary files and directories are refused.",
        annotations(
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true
        )
    )]
    async fn read(&self, Parameters(args): Parameters<ReadArgs>) -> String {
        let _ = (args.offset, args.limit);
        args.file_path
    }

    #[tool(
        description = "Create a UTF-8 text file, or replace its whole content.\n\nWrites `content` as the file's whole content, creating missing parent directories.\nPrefer `edit` for changing part of an existing file.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true
        )
    )]
    async fn write(&self, Parameters(args): Parameters<WriteArgs>) -> String {
        let _ = args.content;
        args.file_path
    }

    #[tool(
        description = "Change an existing UTF-8 text file by replacing exact text.\n\n`old_string` must occur exactly once unless `replace_all` is set; include enough\nsurrounding text to make it unique. Matching is literal (no regular expressions), and\nan LF `old_string` also matches CRLF text; the file keeps its line endings.",
        annotations(read_only_hint = false, destructive_hint = true)
    )]
    async fn edit(&self, Parameters(args): Parameters<EditArgs>) -> String {
        let _ = (args.old_string, args.new_string, args.replace_all);
        args.file_path
    }

    #[tool(
        description = "Search file contents with a regular expression.\n\nReturns matching lines with line numbers, grouped by file; the first 250 matches are\nshown. Hidden files, files ignored by `.gitignore`/`.ignore` and binary files are\nskipped when searching a directory. Use `read` on a matched file for context.",
        annotations(
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true
        )
    )]
    async fn grep(&self, Parameters(args): Parameters<GrepArgs>) -> String {
        let _ = (args.path, args.include);
        args.pattern
    }

    #[tool(
        description = "List the files whose paths match a glob.\n\nReturns matching file paths (never directories), hidden and ignored files included\n(version-control metadata directories excluded), oldest modification first; the first\n100 are shown.",
        annotations(
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true
        )
    )]
    async fn glob(&self, Parameters(args): Parameters<GlobArgs>) -> String {
        let _ = args.path;
        args.pattern
    }

    #[tool(
        description = "Run a command with `bash -c` and return what it printed and how it ended.\n\nEvery call starts a new shell: nothing (working directory, variables) carries over\nto the next call, so use `workdir` rather than `cd`. A non-zero exit shows as\n`[exit code: N]` and is not a failure of the call. Output past the size kept is cut\nfrom the front; the notice names a file holding all of it. Put long-running\ncommands (servers, watchers) in the background with `run_in_background`, then use\n`job_output` to read them and `job_kill` to stop them.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = true
        )
    )]
    async fn bash(&self, Parameters(args): Parameters<BashArgs>) -> String {
        let _ = (
            args.description,
            args.timeout_ms,
            args.workdir,
            args.run_in_background,
        );
        args.command
    }

    #[tool(
        description = "Get what a background job printed since the previous read, and its status.\n\nWhile the job runs, each read returns only new output; after it ended, a read\nreturns what was left unread. The answer always ends with a `[status: ...]` line.\nReading does not block unless `wait` is set.",
        annotations(read_only_hint = true, destructive_hint = false)
    )]
    async fn job_output(&self, Parameters(args): Parameters<JobOutputArgs>) -> String {
        let _ = (args.wait, args.timeout_ms);
        args.job_id
    }

    #[tool(
        description = "List the background jobs you can reach, running or ended, oldest first.\n\nOne line per job: its id, kind, status and what it runs.",
        annotations(
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true
        )
    )]
    async fn job_list(&self) -> String {
        String::new()
    }

    #[tool(
        description = "Ask a running background job to stop, by id.\n\nAnswers at once without waiting for the job to end; the job then settles as\n`killed` when everything it started is gone. `job_output` shows the final status.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true
        )
    )]
    async fn job_kill(&self, Parameters(args): Parameters<JobKillArgs>) -> String {
        let _ = args.reason;
        args.job_id
    }
}

fn main() {
    let tools = Tools {
        tool_router: Tools::tool_router(),
    };
    // `list_all` sorts by name; the table matches tools by name.
    let entries: Vec<String> = tools
        .tool_router
        .list_all()
        .iter()
        .map(|t| serde_json::to_string(t).unwrap_or_else(|e| panic!("{}: {e}", t.name)))
        .collect();
    println!("{{\"tools\":[{}]}}", entries.join(","));
}
