//! A job producer for an operating-system process.
//!
//! [`spawn_command`] runs a [`Command`] as a job: its stdout and stderr go, interleaved in
//! arrival order, to the job's output buffer; stdin is closed. On Unix the process leads a
//! new process group of its own ([`new_process_group`]), so a stop request kills it *and
//! every process it started* that is still in that group ([`kill_process_group`]); so does
//! dropping the job's future. The job settles once the process has been reaped:
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
//! A process that exits on its own leaves its descendants alone (a command may start a
//! daemon on purpose); only a stop kills the group. Once the process has exited, output
//! still buffered in the pipes is read for up to [`ProcessLimits::drain_grace`]; a
//! descendant that keeps the pipes open does not hold the job open past that. A
//! descendant that moves itself to another process group (`setsid`) escapes the kill.
//!
//! Elsewhere than Unix only the process itself is killed.

use std::io;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, Command};
use tokio_util::sync::CancellationToken;

use dsh_runtime::jobs::{BoxError, JobContext, JobProducer, JobSettlement, OutputSink, RunningJob};

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
/// use dsh_runtime::jobs::{JobRuntime, JobSpec};
/// use dsh_tools::process;
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
        new_process_group(&mut self.command);
        let mut child = self
            .command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
        let group = GroupKiller::new(child.id());
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let run = ProcessRun {
            child,
            group,
            output: ctx.output().clone(),
            stop: ctx.stop_token().clone(),
            drain_grace: self.limits.drain_grace,
        };
        Ok(RunningJob::new(run.run(stdout, stderr)))
    }
}

struct ProcessRun {
    child: Child,
    group: GroupKiller,
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
                        self.group.kill();
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
        // Reaped: a stop has killed the group already, and what a process that exited on
        // its own started is not ours to kill.
        self.group.disarm();
        if !drained {
            let _ = tokio::time::timeout(self.drain_grace, pumps).await;
        }
        settlement(exit, kill_requested)
    }
}

/// Kills a process group when dropped, so a job dropped before its process was reaped
/// leaves no stragglers; disarmed once the process is reaped.
struct GroupKiller {
    leader: Option<u32>,
}

impl GroupKiller {
    fn new(leader: Option<u32>) -> Self {
        GroupKiller { leader }
    }

    fn kill(&self) {
        if let Some(leader) = self.leader {
            // An error means the group is gone already.
            let _ = kill_process_group(leader);
        }
    }

    fn disarm(&mut self) {
        self.leader = None;
    }
}

impl Drop for GroupKiller {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Makes `command`'s process the leader of a new process group whose id is its pid, so
/// that [`kill_process_group`] reaches it and everything it starts (unless a descendant
/// moves to another group). Does nothing elsewhere than Unix.
///
/// The process no longer belongs to the caller's group, so a terminal's Ctrl-C does not
/// reach it: whoever starts it owns stopping it.
pub fn new_process_group(command: &mut Command) -> &mut Command {
    #[cfg(unix)]
    command.process_group(0);
    command
}

/// Sends `SIGKILL` to every process of the process group led by `leader` (a pid from a
/// command prepared with [`new_process_group`]).
///
/// # Errors
///
/// The operating system's error: `ESRCH` when no process of the group is left, `EPERM`
/// when one may not be signalled; [`io::ErrorKind::Unsupported`] elsewhere than Unix, and
/// [`io::ErrorKind::InvalidInput`] for a pid that is not a valid group id.
pub fn kill_process_group(leader: u32) -> io::Result<()> {
    #[cfg(unix)]
    {
        let pgid = libc::pid_t::try_from(leader)
            .ok()
            .filter(|pgid| *pgid > 1)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a process group id"))?;
        // SAFETY: `killpg` takes two integers and touches no memory of ours.
        #[allow(unsafe_code)]
        let rc = unsafe { libc::killpg(pgid, libc::SIGKILL) };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
    #[cfg(not(unix))]
    {
        let _ = leader;
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "process groups are a Unix feature",
        ))
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

/// The signal that terminated a process, by name where POSIX fixes its number
/// (`SIGKILL`, `SIGTERM`...), else by number; `None` when it exited (or elsewhere than
/// Unix).
#[cfg(unix)]
pub fn terminating_signal(status: ExitStatus) -> Option<String> {
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

/// The signal that terminated a process: never known elsewhere than Unix.
#[cfg(not(unix))]
pub fn terminating_signal(_status: ExitStatus) -> Option<String> {
    None
}
