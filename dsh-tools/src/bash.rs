//! `bash`: run a shell command in the foreground, with a timeout and output caps, or in
//! the background as a job.
//!
//! The tool is a method of a [`Shell`], a `#[toolbox]` value holding the job runtime and a
//! [`BashConfig`]; its tool struct is [`ShellBash`].
//!
//! **Foreground.** The command runs as `<shell> -c <command>` (`/bin/bash` when present,
//! else `/bin/sh`), in a new process group of its own, with stdin closed and stdout and
//! stderr captured separately, each up to [`BashConfig::max_output_bytes`] (the first and
//! last halves are kept; the value says it was `truncated`). When the timeout fires or the
//! call is cancelled, the whole process group is killed: the shell and everything it
//! started that is still in its group. A non-zero exit is a *successful* call: the value
//! reports the exit code, the model decides what it means. A cancelled call returns after
//! the kill and the pipeline reports it as `ABORTED`.
//!
//! **Background.** With `run_in_background`, the command is started as a `bash` job on the
//! [`JobRuntime`] (unowned, labelled with the call's `description`) and the call returns
//! its id at once; `job_output`, `job_list` and `job_kill` (`dsh_runtime::jobs::tools`) take it
//! from there. Once the job is published, the call's cancellation no longer reaches it.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! use dsh_runtime::jobs::JobRuntime;
//! use dsh_runtime::{Registry, ToolCall};
//!
//! let registry = Registry::new();
//! let jobs = JobRuntime::new();
//! let _bash = dsh_tools::bash::register(&registry, &jobs).unwrap();
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

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use crate::process::{self, ProcessLimits};
use dsh_runtime::jobs::{JobRuntime, JobSpec};
use dsh_runtime::present::{CallView, ResultSummary, ResultView, TerminalExit};
use dsh_runtime::{
    ContentBlock, ErrorCode, RegisterError, Registration, Registry, ToolContext, ToolError,
    ToolSchema, tool, toolbox,
};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;

/// The timeout of a foreground command that sets none: 2 minutes.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// The longest timeout a call may ask for: 10 minutes.
pub const MAX_TIMEOUT_MS: u64 = 600_000;

/// How [`Shell`] runs commands.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BashConfig {
    /// The shell, run as `<shell> -c <command>`.
    pub shell: PathBuf,
    /// The working directory of commands without `workdir`, and the base of a relative
    /// `workdir`; `None` for the host process's own.
    pub cwd: Option<PathBuf>,
    /// The most bytes of each of stdout and stderr a foreground result keeps.
    pub max_output_bytes: usize,
    /// Whether `run_in_background` is allowed.
    pub background: bool,
    /// The most unread output a background job keeps.
    pub background_output_limit: usize,
    /// How long to keep reading the pipes after the shell exited, when something it left
    /// running still holds them open.
    pub drain_grace: Duration,
}

impl Default for BashConfig {
    /// `/bin/bash` (or `/bin/sh`), the host's working directory, 30 000 bytes per stream,
    /// background jobs allowed with 1 MiB of unread output, 500 ms drain grace.
    fn default() -> Self {
        let bash = Path::new("/bin/bash");
        BashConfig {
            shell: if bash.is_file() {
                bash.to_path_buf()
            } else {
                PathBuf::from("/bin/sh")
            },
            cwd: None,
            max_output_bytes: 30_000,
            background: true,
            background_output_limit: dsh_runtime::jobs::DEFAULT_OUTPUT_LIMIT_BYTES,
            drain_grace: Duration::from_millis(500),
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

    /// The same config with another per-stream output cap.
    #[must_use]
    pub fn with_max_output_bytes(mut self, bytes: usize) -> Self {
        self.max_output_bytes = bytes;
        self
    }

    /// The same config with background jobs allowed or not.
    #[must_use]
    pub fn with_background(mut self, allowed: bool) -> Self {
        self.background = allowed;
        self
    }
}

/// Registers `bash` with the default [`BashConfig`], its jobs going to `jobs`.
///
/// # Errors
///
/// The registry's, e.g. when a tool named `bash` is already registered.
pub fn register(
    registry: &Registry,
    jobs: &JobRuntime,
) -> Result<Vec<Registration>, RegisterError> {
    register_with(registry, jobs, BashConfig::default())
}

/// Registers `bash` with `config`.
///
/// # Errors
///
/// The registry's, e.g. when a tool named `bash` is already registered.
pub fn register_with(
    registry: &Registry,
    jobs: &JobRuntime,
    config: BashConfig,
) -> Result<Vec<Registration>, RegisterError> {
    let shell = Arc::new(Shell::new(jobs.clone(), config));
    Ok(vec![registry.register(ShellBash(shell))?])
}

/// The arguments of `bash`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
// The parameter root carries no description: the tool's own description says it all.
#[schema(description = "")]
pub struct BashArgs {
    /// The command line to run.
    #[schema(length(min = 1))]
    pub command: String,
    /// What the command does, in a few words (shown to the user).
    pub description: String,
    /// Kill the command after this many milliseconds (default 120000, at most 600000).
    /// Ignored in the background.
    #[schema(range(min = 1, max = 600_000))]
    pub timeout_ms: Option<u64>,
    /// The directory to run in; a relative path is resolved against the default one.
    pub workdir: Option<String>,
    /// Start the command as a background job and return its id at once; read its output
    /// with `job_output`, stop it with `job_kill`.
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
    /// The exit code; `null` when the shell was killed by a signal.
    pub exit_code: Option<i32>,
    /// The signal that killed the shell, e.g. `SIGKILL`; `null` when it exited.
    pub signal: Option<String>,
    /// Whether the timeout killed it.
    pub timed_out: bool,
    /// Whether the call was cancelled (and the command killed).
    pub aborted: bool,
    /// The timeout in force.
    pub timeout_ms: u64,
    /// What it wrote to stdout.
    pub stdout: StreamText,
    /// What it wrote to stderr.
    pub stderr: StreamText,
}

/// Captured text of one output stream.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
pub struct StreamText {
    /// The text (invalid UTF-8 replaced); when truncated, the start and the end with a
    /// marker line between them.
    pub text: String,
    /// Whether bytes were left out.
    pub truncated: bool,
}

/// Runs shell commands; the value behind the `bash` tool.
#[derive(Debug)]
pub struct Shell {
    jobs: JobRuntime,
    config: BashConfig,
}

impl Shell {
    /// A shell starting background jobs on `jobs`.
    pub fn new(jobs: JobRuntime, config: BashConfig) -> Self {
        Shell { jobs, config }
    }

    /// The configuration.
    pub fn config(&self) -> &BashConfig {
        &self.config
    }
}

#[toolbox]
impl Shell {
    /// Run a shell command and return its output and exit status.
    ///
    /// The command runs with `-c` in a non-interactive shell with stdin closed. Output is
    /// capped per stream (the start and the end are kept). A non-zero exit status is
    /// reported, not treated as a failure. Long-running commands (servers, watchers) belong
    /// in the background: set `run_in_background` and read the output later with
    /// `job_output`.
    #[tool(
        name = "bash",
        args,
        destructive,
        open_world,
        render = Self::render,
        present_call = Self::present_call,
        present_result = Self::present_result
    )]
    pub async fn bash(&self, args: BashArgs, cx: ToolContext) -> Result<BashOutput, ToolError> {
        let cwd = self.workdir(args.workdir.as_deref()).await?;
        if args.run_in_background {
            return self
                .start_background(&args, cwd, &cx)
                .map(BashOutput::Background);
        }
        let timeout_ms = args.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
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
        let mut parts: Vec<String> = Vec::new();
        if !run.stdout.text.is_empty() {
            parts.push(without_final_newline(&run.stdout.text).to_string());
        }
        if !run.stderr.text.is_empty() {
            parts.push(format!(
                "[stderr]\n{}",
                without_final_newline(&run.stderr.text)
            ));
        }
        if parts.is_empty() {
            parts.push("(no output)".to_string());
        }
        if run.stdout.truncated || run.stderr.truncated {
            parts.push("[output truncated]".to_string());
        }
        if run.timed_out {
            parts.push(format!("[timed out after {}ms]", run.timeout_ms));
        }
        if let Some(signal) = &run.signal {
            parts.push(format!("[killed by signal: {signal}]"));
        } else if let Some(code) = run.exit_code.filter(|code| *code != 0) {
            parts.push(format!("[exit code: {code}]"));
        }
        vec![ContentBlock::text(parts.join("\n"))]
    }

    /// The pending card: a terminal titled with the command.
    fn present_call(args: &BashArgs) -> CallView {
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
        let [ContentBlock::Text { text }] = result.content.as_slice() else {
            return None;
        };
        let (output, exit) = split_exit_marker(text);
        Some(ResultView::terminal(output, Some(exit)))
    }
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
                format!("workdir is not a directory: {}", path.display()),
            )),
            Err(err) => Err(ToolError::with_code(
                "BASH_BAD_WORKDIR",
                format!("workdir {} is not usable: {err}", path.display()),
            )),
        }
    }

    fn command(&self, command: &str, cwd: Option<PathBuf>) -> Command {
        let mut cmd = Command::new(&self.config.shell);
        cmd.arg("-c").arg(command);
        if let Some(cwd) = cwd {
            cmd.current_dir(cwd);
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
        // No job exists whose id a cancelled call could return.
        if cx.is_cancelled() {
            return Err(ToolError::with_code(
                ErrorCode::AbortedBeforeDispatch,
                "tool call aborted before the background job started",
            ));
        }
        let spec = JobSpec::new("bash", args.description.clone())
            .with_output_limit(self.config.background_output_limit);
        let producer = process::spawn_command(
            self.command(&args.command, cwd),
            ProcessLimits::default().with_drain_grace(self.config.drain_grace),
        );
        let id = self
            .jobs
            .start(spec, producer)
            .map_err(|err| ToolError::with_code("JOB_START_FAILED", err.to_string()))?;
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
        let cap = self.config.max_output_bytes;
        let mut stdout_capture = Capture::new(cap);
        let mut stderr_capture = Capture::new(cap);
        if cx.is_cancelled() {
            return Ok(Foreground::aborted_before_start(timeout_ms));
        }

        let mut cmd = self.command(command, cwd);
        process::new_process_group(&mut cmd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn().map_err(|err| {
            ToolError::with_code(
                "BASH_SPAWN_FAILED",
                format!("failed to start {}: {err}", self.config.shell.display()),
            )
        })?;
        let mut group = GroupGuard(child.id());
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();

        let mut ending = Ending::Exited;
        let status = {
            // Read both pipes while waiting: a child blocked on a full pipe never exits.
            let pumps = async {
                tokio::join!(
                    pump(stdout, &mut stdout_capture),
                    pump(stderr, &mut stderr_capture)
                )
            };
            tokio::pin!(pumps);
            let mut drained = false;
            let exit = async {
                tokio::select! {
                    status = child.wait() => status,
                    () = tokio::time::sleep(Duration::from_millis(timeout_ms)) => {
                        ending = Ending::TimedOut;
                        group.kill();
                        // The shell itself, should the group be out of reach.
                        let _ = child.start_kill();
                        child.wait().await
                    }
                    () = cx.cancellation().cancelled() => {
                        ending = Ending::Aborted;
                        group.kill();
                        let _ = child.start_kill();
                        child.wait().await
                    }
                }
            };
            tokio::pin!(exit);
            let status = loop {
                tokio::select! {
                    ((), ()) = &mut pumps, if !drained => drained = true,
                    status = &mut exit => break status,
                }
            };
            if !drained {
                // Something the shell left running may hold the pipes open.
                let _ = tokio::time::timeout(self.config.drain_grace, &mut pumps).await;
            }
            status
        };
        group.disarm();
        let status = status.map_err(|err| {
            ToolError::with_code(
                "BASH_WAIT_FAILED",
                format!("waiting for the command failed: {err}"),
            )
        })?;
        let (exit_code, signal) = exit_parts(status);
        Ok(Foreground {
            exit_code,
            signal,
            timed_out: ending == Ending::TimedOut,
            aborted: ending == Ending::Aborted,
            timeout_ms,
            stdout: stdout_capture.finish(),
            stderr: stderr_capture.finish(),
        })
    }
}

impl Foreground {
    fn aborted_before_start(timeout_ms: u64) -> Self {
        let empty = StreamText {
            text: String::new(),
            truncated: false,
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

/// Kills the command's process group if the run is dropped before the shell is reaped.
struct GroupGuard(Option<u32>);

impl GroupGuard {
    fn kill(&self) {
        if let Some(leader) = self.0 {
            // An error means the group is gone already.
            let _ = process::kill_process_group(leader);
        }
    }

    fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Copies a pipe into a capture until end of file or a read error.
async fn pump(reader: Option<impl AsyncRead + Unpin>, capture: &mut Capture) {
    let Some(mut reader) = reader else { return };
    let mut chunk = vec![0u8; 8 * 1024];
    loop {
        match reader.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => capture.write(&chunk[..n]),
        }
    }
}

/// One stream's bytes, bounded: the first half of the cap and the latest other half.
struct Capture {
    head_cap: usize,
    tail_cap: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
}

impl Capture {
    fn new(cap: usize) -> Self {
        let tail_cap = cap / 2;
        Capture {
            head_cap: cap - tail_cap,
            tail_cap,
            head: Vec::new(),
            tail: VecDeque::new(),
            total: 0,
        }
    }

    fn write(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = self.head_cap - self.head.len();
        let into_head = room.min(bytes.len());
        self.head.extend_from_slice(&bytes[..into_head]);
        bytes = &bytes[into_head..];
        if self.tail_cap == 0 {
            return;
        }
        let keep_from = bytes.len().saturating_sub(self.tail_cap);
        self.tail.extend(&bytes[keep_from..]);
        let excess = self.tail.len().saturating_sub(self.tail_cap);
        self.tail.drain(..excess);
    }

    fn finish(self) -> StreamText {
        let kept = (self.head.len() + self.tail.len()) as u64;
        let tail: Vec<u8> = self.tail.into_iter().collect();
        if kept == self.total {
            let mut all = self.head;
            all.extend_from_slice(&tail);
            return StreamText {
                text: String::from_utf8_lossy(&all).into_owned(),
                truncated: false,
            };
        }
        // Cut on character boundaries so no replacement character marks the cut.
        let head = &self.head[..self.head.len() - incomplete_tail(&self.head)];
        let tail_start = tail
            .iter()
            .take(3)
            .take_while(|b| is_continuation(**b))
            .count();
        let tail = &tail[tail_start..];
        let omitted = self.total - head.len() as u64 - tail.len() as u64;
        let mut text = String::from_utf8_lossy(head).into_owned();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!("[... {omitted} bytes omitted ...]\n"));
        text.push_str(&String::from_utf8_lossy(tail));
        StreamText {
            text,
            truncated: true,
        }
    }
}

fn is_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

/// How many bytes at the end of `bytes` begin a UTF-8 character that is cut off.
fn incomplete_tail(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(4) {
        let byte = bytes[bytes.len() - back];
        if is_continuation(byte) {
            continue;
        }
        let width = match byte {
            0xF0.. => 4,
            0xE0.. => 3,
            0xC0.. => 2,
            _ => 1,
        };
        return if width > back { back } else { 0 };
    }
    0
}

fn without_final_newline(text: &str) -> &str {
    text.strip_suffix('\n').unwrap_or(text)
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
    fn a_capture_under_its_cap_keeps_everything() {
        let mut capture = Capture::new(10);
        capture.write(b"hello");
        capture.write(b" you");
        assert_eq!(
            capture.finish(),
            StreamText {
                text: "hello you".into(),
                truncated: false
            }
        );
    }

    #[test]
    fn a_capture_over_its_cap_keeps_both_ends() {
        let mut capture = Capture::new(6);
        for chunk in [&b"abc"[..], b"defgh", b"ijk"] {
            capture.write(chunk);
        }
        let out = capture.finish();
        assert!(out.truncated);
        assert_eq!(out.text, "abc\n[... 5 bytes omitted ...]\nijk");
    }

    #[test]
    fn a_capture_cuts_on_character_boundaries() {
        let mut capture = Capture::new(4);
        capture.write("aé".as_bytes()); // 3 bytes: all in the head (2) and tail (1)
        capture.write("xxxxé".as_bytes());
        let out = capture.finish();
        assert!(out.truncated);
        assert!(!out.text.contains('\u{FFFD}'), "{:?}", out.text);
        // Head kept "a" + half of "é" (dropped); tail kept "é" whole.
        assert_eq!(out.text, "a\n[... 6 bytes omitted ...]\né");
    }

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
        assert_eq!(split_exit_marker("hi"), ("hi", TerminalExit::Code(0)));
        assert_eq!(
            split_exit_marker("[exit code: x]"),
            ("[exit code: x]", TerminalExit::Code(0))
        );
        assert_eq!(
            split_exit_marker("[exit code: 1]"),
            ("", TerminalExit::Code(1))
        );
    }
}
