//! A job producer for an operating-system process.
//!
//! [`spawn_command`] runs a [`Command`] as a job: its stdout and stderr go, interleaved in
//! arrival order, to the job's output buffer; stdin is closed. A stop request kills the
//! process, and so does dropping the job's future (the child is spawned with
//! `kill_on_drop`). The job settles once the process has been reaped:
//!
//! | how the process ended | status | detail |
//! |---|---|---|
//! | exited with code `n` | `completed` | `exit code: n` |
//! | terminated by a signal | `killed` | `signal: SIGKILL` (the signal's name, or its number) |
//! | killed, no exit status known | `killed` | `killed before exit` |
//! | waiting for it failed | `failed` | the I/O error |
//!
//! A non-zero exit is `completed`: the process ran to its end, and the code says how.
//!
//! Only the process itself is killed, not processes it started. Once it has exited, output
//! still buffered in the pipes is read for up to [`ProcessLimits::drain_grace`]; a
//! descendant that keeps the pipes open does not hold the job open past that.

use std::io;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, Command};
use tokio_util::sync::CancellationToken;

use super::{BoxError, JobContext, JobProducer, JobSettlement, OutputSink, RunningJob};

/// Bounds on a process job beyond its output limit (which is the job spec's).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProcessLimits {
    /// How long to keep reading the pipes after the process exited. Default: 500 ms.
    pub drain_grace: Duration,
}

impl Default for ProcessLimits {
    fn default() -> Self {
        ProcessLimits {
            drain_grace: Duration::from_millis(500),
        }
    }
}

impl ProcessLimits {
    /// The same limits with another drain grace.
    #[must_use]
    pub fn with_drain_grace(mut self, grace: Duration) -> Self {
        self.drain_grace = grace;
        self
    }
}

/// A producer that spawns `command` when the job starts. A spawn failure (say, no such
/// program) fails the start, and no job is registered.
///
/// ```no_run
/// use dsh_runtime::jobs::{JobRuntime, JobSpec, process};
///
/// # async fn demo(jobs: JobRuntime) -> Result<(), dsh_runtime::jobs::JobError> {
/// let mut command = tokio::process::Command::new("sh");
/// command.arg("-c").arg("cargo build 2>&1");
/// let id = jobs.start(
///     JobSpec::new("bash", "cargo build"),
///     process::spawn_command(command, process::ProcessLimits::default()),
/// )?;
/// # Ok(()) }
/// ```
pub fn spawn_command(command: Command, limits: ProcessLimits) -> CommandProducer {
    CommandProducer { command, limits }
}

/// The producer [`spawn_command`] returns.
#[derive(Debug)]
pub struct CommandProducer {
    command: Command,
    limits: ProcessLimits,
}

impl JobProducer for CommandProducer {
    fn start(mut self, ctx: JobContext) -> Result<RunningJob, BoxError> {
        let mut child = self
            .command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let run = ProcessRun {
            child,
            output: ctx.output().clone(),
            stop: ctx.stop_token().clone(),
            drain_grace: self.limits.drain_grace,
        };
        Ok(RunningJob::new(run.run(stdout, stderr)))
    }
}

struct ProcessRun {
    child: Child,
    output: OutputSink,
    stop: CancellationToken,
    drain_grace: Duration,
}

impl ProcessRun {
    async fn run(
        mut self,
        stdout: Option<impl AsyncRead + Unpin>,
        stderr: Option<impl AsyncRead + Unpin>,
    ) -> JobSettlement {
        let pumps = async {
            tokio::join!(
                pump(stdout, self.output.clone()),
                pump(stderr, self.output.clone())
            )
        };
        tokio::pin!(pumps);
        let mut drained = false;
        let mut kill_requested = false;
        let exit = {
            // The pipes are read while waiting: a process blocked on a full pipe would
            // never exit.
            let exit = async {
                tokio::select! {
                    status = self.child.wait() => status,
                    () = self.stop.cancelled() => {
                        kill_requested = true;
                        // An error means it is gone already; `wait` reports how it ended.
                        let _ = self.child.start_kill();
                        self.child.wait().await
                    }
                }
            };
            tokio::pin!(exit);
            loop {
                tokio::select! {
                    ((), ()) = &mut pumps, if !drained => drained = true,
                    status = &mut exit => break status,
                }
            }
        };
        if !drained {
            let _ = tokio::time::timeout(self.drain_grace, pumps).await;
        }
        settlement(exit, kill_requested)
    }
}

/// Copies `reader` into `output` until end of file or a read error.
async fn pump(reader: Option<impl AsyncRead + Unpin>, output: OutputSink) {
    let Some(mut reader) = reader else { return };
    let mut chunk = vec![0u8; 8 * 1024];
    loop {
        match reader.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => output.write(&chunk[..n]),
        }
    }
}

fn settlement(exit: io::Result<ExitStatus>, kill_requested: bool) -> JobSettlement {
    match exit {
        Ok(status) => {
            if let Some(code) = status.code() {
                JobSettlement::completed().with_detail(format!("exit code: {code}"))
            } else if let Some(signal) = terminating_signal(status) {
                JobSettlement::killed().with_detail(format!("signal: {signal}"))
            } else {
                JobSettlement::killed().with_detail("killed before exit")
            }
        }
        Err(_) if kill_requested => JobSettlement::killed().with_detail("killed before exit"),
        Err(err) => {
            JobSettlement::failed().with_detail(format!("waiting for the process failed: {err}"))
        }
    }
}

/// The signal that terminated the process, by name where POSIX fixes its number.
#[cfg(unix)]
fn terminating_signal(status: ExitStatus) -> Option<String> {
    use std::os::unix::process::ExitStatusExt;
    let signal = status.signal()?;
    let name = match signal {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        5 => "SIGTRAP",
        6 => "SIGABRT",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        other => return Some(other.to_string()),
    };
    Some(name.to_owned())
}

#[cfg(not(unix))]
fn terminating_signal(_status: ExitStatus) -> Option<String> {
    None
}
