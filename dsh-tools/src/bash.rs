//! `bash`: run a shell command in the foreground, with a timeout, or in the background as
//! a job.
//!
//! The tool is a method of a [`Shell`], a `#[toolbox]` value holding the job runtime and a
//! [`BashConfig`]; its tool struct is [`ShellBash`].
//!
//! **What the model sees** (pinned by `tests/tools/bash_tool.rs`): parameters `command`,
//! `description`, `timeoutMs`, `workdir`, `run_in_background`; the text is stdout, then
//! `[stderr]` and stderr, or `(no output)`, then marker lines: a truncation notice naming
//! the file with the whole stream, `[timed out after <ms>ms]`, and `[killed by signal:
//! <s>]` or (non-zero) `[exit code: <n>]`. A blank `command` or `description` is refused
//! with `invalid command: expected a non-empty string` (resp. `description`), a
//! `timeoutMs` that is not positive with `invalid timeoutMs: expected a positive number,
//! got <json>`; a longer timeout than [`MAX_TIMEOUT_MS`] is cut to it. Two departures are
//! recorded: a `workdir` that is not a usable directory fails with `BASH_BAD_WORKDIR`
//! naming it (the reference reports the spawn error `spawn bash ENOENT`); and a foreground
//! value leaves out `signal` when the shell exited and `exitCode` when a signal killed it,
//! where the reference sends `null`, which the published output schema does not admit (a
//! validating MCP client rejects it).
//!
//! **Environment.** Commands get the host's environment without credential-like
//! variables (names containing `KEY`, `PASSWORD`, `SECRET` or `TOKEN`, any case) and
//! without `DSH_*` ones, plus `NO_COLOR=1`, `TERM=dumb`, `PAGER=cat`, `GIT_PAGER=cat` and
//! `DSH_SHELL=1` ([`BashConfig::env`], [`BashConfig::scrub_env`]), and the tree's tag
//! ([`process::TREE_ENV`]).
//!
//! **Foreground.** The command runs as `<shell> -c <command>` (`/bin/bash` when present,
//! else `/bin/sh`) with stdin closed, leading a process tree of its own
//! ([`process::isolate`]). Each stream keeps its latest
//! [`BashConfig::max_output_bytes`] in the result; a longer stream is written whole to a
//! spill file whose path the value carries (`spillPath`), so nothing is lost. When the
//! timeout fires or the call is cancelled, the whole tree is stopped: `SIGTERM`, then
//! `SIGKILL` after [`BashConfig::kill_grace`]. The tree includes children that left the
//! session (`setsid`), ignore `SIGTERM`, or were orphaned; it dies with the host, even a
//! host killed with `SIGKILL`, and even when a job killed the host's watchdog. What can
//! still escape (a process that leaves the session, loses its parent before it is seen
//! *and* clears its environment; one that changes its user) is listed under "What still
//! escapes" in [`process`]. A non-zero exit is a *successful* call:
//! the value reports the exit code, the model decides what it means. A cancelled call
//! returns after the kill and the pipeline reports it as `ABORTED`; when the kill takes
//! longer than the registry's detach grace (`dsh_runtime::RegistryBuilder::detach_grace`,
//! e.g. a child that ignores `SIGTERM`), the pipeline answers `ABORTED` at the end of the
//! grace and the kill completes on the body's own task.
//!
//! **Background.** With `run_in_background`, the command is started as a `bash` job on
//! the calling registry's job runtime (`RegistryBuilder::jobs`, reached through
//! [`ToolContext::jobs`]), labelled with the command and owned by the shell's owner
//! ([`Shell::for_owner`]; unowned by default), and the call returns its id at once;
//! `job_output`, `job_list` and `job_kill` ([`crate::jobs`]) take it from there (see
//! [`process`] for what a read returns and how a job settles). A call cancelled before
//! the job starts starts nothing (`ABORTED_BEFORE_DISPATCH`); once the job is published,
//! the call's cancellation no longer reaches it. A registry without a job runtime
//! answers `JOBS_UNAVAILABLE`.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! use dsh_runtime::jobs::JobRuntime;
//! use dsh_runtime::{Registry, ToolCall};
//!
//! let registry = Registry::builder().jobs(JobRuntime::new()).build();
//! let _bash = dsh_tools::bash::register(&registry).unwrap();
//! let result = registry
//!     .execute(ToolCall::new(
//!         "call_1",
//!         "bash",
//!         r#"{"command":"echo hi; exit 3","description":"Say hi"}"#,
//!     ))
//!     .await;
//! assert!(result.is_success());
//! assert_eq!(result.text(), "hi\n[exit code: 3]");
//! # }
//! ```

use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use crate::process::{self, ProcessLimits, StreamText};
use dsh_runtime::cards::{CallView, ResultSummary, ResultView, TerminalExit, ToolCallKind};
use dsh_runtime::jobs::{JobError, JobSpec, OwnerId};
use dsh_runtime::json::Value;
use dsh_runtime::{
    PipelineCode, RegisterError, RegistrationHandle, Registry, ToolContext, ToolError, ToolSchema,
    content::ContentBlock, tool, toolbox,
};
use serde::{Deserialize, Serialize};
use tokio::process::Command;

/// The timeout of a foreground command that sets none: 2 minutes.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// The longest timeout a call gets (longer ones are cut to it): 10 minutes.
pub const MAX_TIMEOUT_MS: u64 = 600_000;
/// The most characters of a command kept as a background job's label.
pub const MAX_LABEL_CHARS: usize = 1_000;

/// The variables every command gets on top of the host's environment.
pub const ENV_OVERRIDES: &[(&str, &str)] = &[
    ("NO_COLOR", "1"),
    ("TERM", "dumb"),
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("DSH_SHELL", "1"),
];

/// How [`Shell`] runs commands.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BashConfig {
    /// The shell, run as `<shell> -c <command>`.
    pub shell: PathBuf,
    /// The working directory of commands without `workdir`, and the base of a relative
    /// `workdir`; `None` for the host process's own.
    pub cwd: Option<PathBuf>,
    /// The latest bytes of each of stdout and stderr a result keeps (the rest is in the
    /// spill file).
    pub max_output_bytes: usize,
    /// The most bytes of each stream a spill file holds.
    pub max_spill_bytes: u64,
    /// Where spill files go; `None`: a private temporary directory.
    pub spill_dir: Option<PathBuf>,
    /// A total cap on the spill bytes of every command run with this config (shared by
    /// its clones); `None`: only the per-stream cap.
    pub spill_budget: Option<process::SpillBudget>,
    /// Whether `run_in_background` is allowed.
    pub background: bool,
    /// How long to keep reading the pipes after the shell exited, when something it left
    /// running still holds them open.
    pub drain_grace: Duration,
    /// How long a stop waits after `SIGTERM` before `SIGKILL`.
    pub kill_grace: Duration,
    /// Variables set for every command (after the scrub).
    pub env: Vec<(String, String)>,
    /// Whether to leave out credential-like and `DSH_*` variables of the host.
    pub scrub_env: bool,
}

impl Default for BashConfig {
    /// `/bin/bash` (or `/bin/sh`), the host's working directory, 64 000 bytes per stream
    /// in results and up to 256 MiB in spill files, background jobs allowed, 500 ms drain
    /// grace, 3 s kill grace, [`ENV_OVERRIDES`], scrubbed environment.
    fn default() -> Self {
        let bash = Path::new("/bin/bash");
        BashConfig {
            shell: if bash.is_file() {
                bash.to_path_buf()
            } else {
                PathBuf::from("/bin/sh")
            },
            cwd: None,
            max_output_bytes: process::DEFAULT_MAX_OUTPUT_BYTES,
            max_spill_bytes: process::DEFAULT_MAX_SPILL_BYTES,
            spill_dir: None,
            spill_budget: None,
            background: true,
            drain_grace: Duration::from_millis(500),
            kill_grace: Duration::from_secs(3),
            env: ENV_OVERRIDES
                .iter()
                .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
                .collect(),
            scrub_env: true,
        }
    }
}

impl BashConfig {
    /// The same config with another shell.
    #[must_use]
    pub fn with_shell(mut self, shell: impl Into<PathBuf>) -> Self {
        self.shell = shell.into();
        self
    }

    /// The same config with a default working directory.
    #[must_use]
    pub fn with_cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    /// The same config with another per-stream result size.
    #[must_use]
    pub fn with_max_output_bytes(mut self, bytes: usize) -> Self {
        self.max_output_bytes = bytes;
        self
    }

    /// The same config with spill files in `dir`.
    #[must_use]
    pub fn with_spill_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.spill_dir = Some(dir.into());
        self
    }

    /// The same config with the spill bytes of all its commands counted against `budget`.
    #[must_use]
    pub fn with_spill_budget(mut self, budget: process::SpillBudget) -> Self {
        self.spill_budget = Some(budget);
        self
    }

    /// The same config with background jobs allowed or not.
    #[must_use]
    pub fn with_background(mut self, allowed: bool) -> Self {
        self.background = allowed;
        self
    }

    /// The same config with another kill grace.
    #[must_use]
    pub fn with_kill_grace(mut self, grace: Duration) -> Self {
        self.kill_grace = grace;
        self
    }

    fn limits(&self) -> ProcessLimits {
        let mut limits = ProcessLimits::default()
            .with_drain_grace(self.drain_grace)
            .with_kill_grace(self.kill_grace)
            .with_max_output_bytes(self.max_output_bytes)
            .with_max_spill_bytes(self.max_spill_bytes);
        if let Some(dir) = &self.spill_dir {
            limits = limits.with_spill_dir(dir);
        }
        if let Some(budget) = &self.spill_budget {
            limits = limits.with_spill_budget(budget.clone());
        }
        limits
    }
}

/// Whether a host variable is left out of commands' environment: credential-like names
/// and `DSH_*`.
pub fn scrubbed(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    upper.starts_with("DSH_")
        || ["KEY", "PASSWORD", "SECRET", "TOKEN"]
            .iter()
            .any(|word| upper.contains(word))
}

/// Registers `bash` with the default [`BashConfig`], its background jobs going to the
/// registry's job runtime, unowned.
///
/// # Errors
///
/// The registry's, e.g. when a tool named `bash` is already registered.
pub fn register(registry: &Registry) -> Result<Vec<RegistrationHandle>, RegisterError> {
    register_with(registry, BashConfig::default())
}

/// Registers `bash` with `config`.
///
/// # Errors
///
/// The registry's, e.g. when a tool named `bash` is already registered.
pub fn register_with(
    registry: &Registry,
    config: BashConfig,
) -> Result<Vec<RegistrationHandle>, RegisterError> {
    let shell = Arc::new(Shell::new(config));
    Ok(vec![registry.register(ShellBash(shell))?])
}

/// The arguments of `bash`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToolSchema)]
// The parameter root carries no description: the tool's own description says it all.
#[schema(description = "")]
pub struct BashArgs {
    /// The command line, run with `bash -c`.
    pub command: String,
    /// What the command does, in a few words in the active voice (shown to the user), e.g.
    /// "Show working tree status" for `git status`.
    pub description: String,
    /// Stop the command after this many milliseconds (default 120000, at most 600000).
    /// Not used in the background.
    #[serde(rename = "timeoutMs")]
    pub timeout_ms: Option<f64>,
    /// The directory to run in, instead of the workspace; a relative path starts from
    /// the workspace.
    pub workdir: Option<String>,
    /// Start the command as a background job and answer with its id at once; read what it
    /// prints with `job_output`, stop it with `job_kill`. No timeout applies.
    #[serde(default)]
    pub run_in_background: bool,
}

/// The canonical value of `bash`: a started background job, or how a foreground command
/// ended and what it printed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum BashOutput {
    /// The command was started as a background job.
    Background(BackgroundJob),
    /// The command ran to its end (or was killed).
    Foreground(Foreground),
}

/// A started background job.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "camelCase")]
pub struct BackgroundJob {
    /// The job's id, for `job_output` and `job_kill`.
    pub job_id: String,
}

/// How a foreground command ended, and what it printed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "camelCase")]
pub struct Foreground {
    /// The exit code; absent when the shell was killed by a signal.
    pub exit_code: Option<i32>,
    /// The signal that killed the shell, e.g. `SIGTERM`; absent when it exited.
    pub signal: Option<String>,
    /// Whether the timeout stopped it.
    pub timed_out: bool,
    /// Whether the call was cancelled (and the command stopped).
    pub aborted: bool,
    /// The timeout in force, in milliseconds.
    pub timeout_ms: u64,
    /// What it wrote to stdout.
    pub stdout: StreamText,
    /// What it wrote to stderr.
    pub stderr: StreamText,
}

/// Runs shell commands; the value behind the `bash` tool.
#[derive(Debug)]
pub struct Shell {
    config: BashConfig,
    owner: Option<OwnerId>,
}

impl Shell {
    /// A shell whose background jobs are unowned.
    pub fn new(config: BashConfig) -> Self {
        Shell {
            config,
            owner: None,
        }
    }

    /// A shell whose background jobs belong to `owner` (e.g. a session: they stop when
    /// it closes, and only its job tools see them).
    pub fn for_owner(owner: OwnerId, config: BashConfig) -> Self {
        Shell {
            config,
            owner: Some(owner),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &BashConfig {
        &self.config
    }
}

#[toolbox]
impl Shell {
    /// Run a command with `bash -c` and return what it printed and how it ended.
    ///
    /// Every call starts a new shell: nothing (working directory, variables) carries over
    /// to the next call, so use `workdir` rather than `cd`. A non-zero exit shows as
    /// `[exit code: N]` and is not a failure of the call. Output past the size kept is cut
    /// from the front; the notice names a file holding all of it. Put long-running
    /// commands (servers, watchers) in the background with `run_in_background`, then use
    /// `job_output` to read them and `job_kill` to stop them.
    #[tool(
        name = "bash",
        args,
        destructive,
        open_world,
        task = "optional",
        render = Self::render,
        present_call = Self::present_call,
        present_result = Self::present_result
    )]
    pub async fn bash(&self, args: BashArgs, cx: ToolContext) -> Result<BashOutput, ToolError> {
        let timeout_ms = check(&args, &cx)?;
        let cwd = self.workdir(args.workdir.as_deref()).await?;
        if args.run_in_background {
            return self
                .start_background(&args, cwd, &cx)
                .map(BashOutput::Background);
        }
        self.run_foreground(&args.command, cwd, timeout_ms, &cx)
            .await
            .map(BashOutput::Foreground)
    }

    /// Model-facing text: stdout, then stderr under a `[stderr]` line (`(no output)` when
    /// both are empty), then one marker line per notable fact.
    fn render(_args: &BashArgs, value: &BashOutput) -> Vec<ContentBlock> {
        let run = match value {
            BashOutput::Background(job) => {
                return vec![ContentBlock::text(format!(
                    "started background job {}",
                    job.job_id
                ))];
            }
            BashOutput::Foreground(run) => run,
        };
        let mut body = run.stdout.with_notice();
        let err = run.stderr.with_notice();
        if !err.is_empty() {
            if !body.is_empty() && !body.ends_with('\n') {
                body.push('\n');
            }
            body.push_str("[stderr]\n");
            body.push_str(&err);
        }
        if body.is_empty() {
            body.push_str("(no output)");
        }
        let mut markers = Vec::new();
        if run.timed_out {
            markers.push(format!("[timed out after {}ms]", run.timeout_ms));
        }
        if let Some(signal) = &run.signal {
            markers.push(format!("[killed by signal: {signal}]"));
        } else if let Some(code) = run.exit_code.filter(|code| *code != 0) {
            markers.push(format!("[exit code: {code}]"));
        }
        if !markers.is_empty() {
            if !body.ends_with('\n') {
                body.push('\n');
            }
            body.push_str(&markers.join("\n"));
        }
        vec![ContentBlock::text(body)]
    }

    /// The pending card: a terminal titled with the command; for a background start, a
    /// generic card with the command and its description.
    fn present_call(args: &BashArgs) -> CallView {
        if args.run_in_background {
            return CallView::Generic {
                title: args.command.clone(),
                kind: Some(ToolCallKind::Execute),
                raw_input: Some(Value::from(args.command.as_str())),
                content: Some(vec![ContentBlock::text(args.description.clone())]),
                locations: None,
            };
        }
        CallView::Terminal {
            title: args.command.clone(),
            description: Some(args.description.clone()),
            cwd: args.workdir.clone(),
        }
    }

    /// The completed card of a foreground run: the content as terminal output, with the
    /// final `[exit code: n]` / `[killed by signal: s]` line turned into the card's exit
    /// (none: exit code 0). Failures and background starts get the generic card.
    fn present_result(args: &BashArgs, result: &ResultSummary) -> Option<ResultView> {
        if result.is_error || args.run_in_background {
            return None;
        }
        let [ContentBlock::Text { text, .. }] = result.content.as_slice() else {
            return None;
        };
        let (output, exit) = split_exit_marker(text);
        Some(ResultView::terminal(output, Some(exit)))
    }
}

/// The reference's argument checks, in its order; the timeout in force.
fn check(args: &BashArgs, cx: &ToolContext) -> Result<u64, ToolError> {
    if args.command.trim().is_empty() {
        return Err(ToolError::new(
            "invalid command: expected a non-empty string",
        ));
    }
    if args.description.trim().is_empty() {
        return Err(ToolError::new(
            "invalid description: expected a non-empty string",
        ));
    }
    let Some(ms) = args.timeout_ms else {
        return Ok(DEFAULT_TIMEOUT_MS);
    };
    if !ms.is_finite() || ms <= 0.0 {
        let sent = cx
            .arguments()
            .get("timeoutMs")
            .map_or_else(|| ms.to_string(), ToString::to_string);
        let sent = cut(&sent, MAX_ECHO_CHARS);
        return Err(ToolError::new(format!(
            "invalid timeoutMs: expected a positive number, got {sent}"
        )));
    }
    // Clamped first, so the conversion is exact; a fraction of a millisecond rounds up.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let ms = ms.min(MAX_TIMEOUT_MS as f64).ceil() as u64;
    Ok(ms)
}

impl Shell {
    /// The directory a command runs in: `workdir` (resolved against the configured one),
    /// else the configured one, else the host's (`None`).
    async fn workdir(&self, workdir: Option<&str>) -> Result<Option<PathBuf>, ToolError> {
        let Some(workdir) = workdir else {
            return Ok(self.config.cwd.clone());
        };
        let path = match &self.config.cwd {
            Some(base) => base.join(workdir),
            None => PathBuf::from(workdir),
        };
        match tokio::fs::metadata(&path).await {
            Ok(meta) if meta.is_dir() => Ok(Some(path)),
            Ok(_) => Err(ToolError::with_code(
                "BASH_BAD_WORKDIR",
                format!(
                    "workdir is not a directory: {}",
                    cut(&path.display().to_string(), MAX_ECHO_CHARS)
                ),
            )),
            Err(err) => Err(ToolError::with_code(
                "BASH_BAD_WORKDIR",
                format!(
                    "workdir {} is not usable: {err}",
                    cut(&path.display().to_string(), MAX_ECHO_CHARS)
                ),
            )),
        }
    }

    fn command(&self, command: &str, cwd: Option<PathBuf>) -> Command {
        let mut cmd = Command::new(&self.config.shell);
        cmd.arg("-c").arg(command);
        if let Some(cwd) = cwd {
            cmd.current_dir(cwd);
        }
        if self.config.scrub_env {
            for (name, _) in std::env::vars_os() {
                if name.to_str().is_none_or(scrubbed) {
                    cmd.env_remove(name);
                }
            }
        }
        for (name, value) in &self.config.env {
            cmd.env(name, value);
        }
        cmd
    }

    fn start_background(
        &self,
        args: &BashArgs,
        cwd: Option<PathBuf>,
        cx: &ToolContext,
    ) -> Result<BackgroundJob, ToolError> {
        if !self.config.background {
            return Err(ToolError::with_code(
                "BASH_BACKGROUND_DISABLED",
                "run_in_background is not available here; run the command in the foreground",
            ));
        }
        let jobs = cx.jobs()?.for_owner(self.owner);
        let spec = JobSpec::new("bash", label(&args.command));
        let producer =
            process::spawn_command(self.command(&args.command, cwd), self.config.limits());
        // A call cancelled by now starts nothing: no job exists whose id it could return.
        let id = jobs.start(spec, producer).map_err(|err| match err {
            JobError::CallAborted => {
                ToolError::with_code(PipelineCode::AbortedBeforeDispatch, err.to_string())
            }
            err => ToolError::with_code("JOB_START_FAILED", err.to_string()),
        })?;
        Ok(BackgroundJob {
            job_id: id.to_string(),
        })
    }

    async fn run_foreground(
        &self,
        command: &str,
        cwd: Option<PathBuf>,
        timeout_ms: u64,
        cx: &ToolContext,
    ) -> Result<Foreground, ToolError> {
        if cx.is_cancelled() {
            return Ok(Foreground::aborted_before_start(timeout_ms));
        }
        let spawned =
            process::spawn(self.command(command, cwd), self.config.limits()).map_err(|err| {
                ToolError::with_code(
                    "BASH_SPAWN_FAILED",
                    format!("failed to start {}: {err}", self.config.shell.display()),
                )
            })?;
        let (stdout, stderr) = (spawned.stdout.clone(), spawned.stderr.clone());
        let mut ending = Ending::Exited;
        let stop = async {
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(timeout_ms)) => ending = Ending::TimedOut,
                () = cx.cancellation().cancelled() => ending = Ending::Aborted,
            }
        };
        let end = spawned.run(stop).await;
        let status = end.status.map_err(|err| {
            ToolError::with_code(
                "BASH_WAIT_FAILED",
                format!("waiting for the command failed: {err}"),
            )
        })?;
        let (exit_code, signal) = exit_parts(status);
        let finish = |c: &std::sync::Mutex<process::Collector>| crate::lock(c).finish();
        Ok(Foreground {
            exit_code,
            signal,
            timed_out: ending == Ending::TimedOut,
            aborted: ending == Ending::Aborted,
            timeout_ms,
            stdout: finish(&stdout),
            stderr: finish(&stderr),
        })
    }
}

/// The most characters of an argument an error message repeats.
const MAX_ECHO_CHARS: usize = 200;

/// A background job's label: the command, cut to [`MAX_LABEL_CHARS`].
fn label(command: &str) -> String {
    cut(command, MAX_LABEL_CHARS)
}

/// `text` cut to `max` characters, `…` marking a cut.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((at, _)) => format!("{}\u{2026}", &text[..at]),
    }
}

impl Foreground {
    fn aborted_before_start(timeout_ms: u64) -> Self {
        let empty = StreamText {
            text: String::new(),
            truncated: false,
            spill_path: None,
            spill_truncated: false,
        };
        Foreground {
            exit_code: None,
            signal: None,
            timed_out: false,
            aborted: true,
            timeout_ms,
            stdout: empty.clone(),
            stderr: empty,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ending {
    Exited,
    TimedOut,
    Aborted,
}

fn exit_parts(status: ExitStatus) -> (Option<i32>, Option<String>) {
    match status.code() {
        Some(code) => (Some(code), None),
        None => (None, process::terminating_signal(status)),
    }
}

/// Splits the final `[exit code: n]` / `[killed by signal: s]` line off rendered content;
/// no such line means exit code 0.
fn split_exit_marker(text: &str) -> (&str, TerminalExit) {
    let (rest, last) = match text.rfind('\n') {
        Some(at) => (&text[..at], &text[at + 1..]),
        None => ("", text),
    };
    let marker = last.strip_prefix('[').and_then(|m| m.strip_suffix(']'));
    if let Some(code) = marker
        .and_then(|m| m.strip_prefix("exit code: "))
        .and_then(|code| code.parse::<i64>().ok())
    {
        return (rest, TerminalExit::Code(code));
    }
    if let Some(signal) = marker.and_then(|m| m.strip_prefix("killed by signal: ")) {
        return (rest, TerminalExit::Signal(signal.to_string()));
    }
    (text, TerminalExit::Code(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_markers_are_parsed_off_the_last_line() {
        assert_eq!(
            split_exit_marker("hi\n[exit code: 3]"),
            ("hi", TerminalExit::Code(3))
        );
        assert_eq!(
            split_exit_marker("[timed out after 5ms]\n[killed by signal: SIGKILL]"),
            (
                "[timed out after 5ms]",
                TerminalExit::Signal("SIGKILL".into())
            )
        );
        assert_eq!(split_exit_marker("hi\n"), ("hi\n", TerminalExit::Code(0)));
        assert_eq!(
            split_exit_marker("[exit code: x]"),
            ("[exit code: x]", TerminalExit::Code(0))
        );
        assert_eq!(
            split_exit_marker("[exit code: 1]"),
            ("", TerminalExit::Code(1))
        );
    }

    #[test]
    fn credential_like_and_dsh_variables_are_scrubbed() {
        for name in [
            "OPENAI_API_KEY",
            "db_password",
            "GITHUB_TOKEN",
            "MY_SECRET",
            "DSH_HOME",
        ] {
            assert!(scrubbed(name), "{name}");
        }
        for name in ["PATH", "HOME", "LANG", "TERM"] {
            assert!(!scrubbed(name), "{name}");
        }
    }

    #[test]
    fn echoes_are_cut() {
        assert_eq!(cut("abc", 3), "abc");
        assert_eq!(cut("abcd", 3), "abc\u{2026}");
        assert_eq!(cut("\u{e9}\u{e9}\u{e9}\u{e9}", 2), "\u{e9}\u{e9}\u{2026}");
    }

    #[test]
    fn long_labels_are_cut() {
        assert_eq!(label("ls"), "ls");
        let long = "x".repeat(MAX_LABEL_CHARS + 5);
        assert_eq!(label(&long).chars().count(), MAX_LABEL_CHARS + 1);
    }
}
