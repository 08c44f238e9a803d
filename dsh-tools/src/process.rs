//! Operating-system processes for the tools: spawning a command in a process tree of its
//! own, capturing its output without losing any, and stopping the whole tree.
//!
//! # The process tree
//!
//! [`isolate`] prepares a [`Command`] so that its process starts a new session (and
//! process group) whose id is its pid, carries a tag unique to the tree in its
//! environment ([`TREE_ENV`], inherited by everything it starts), and, on Linux,
//! receives `SIGKILL` when the host goes away (a parent-death signal). On Linux it also
//! makes the host a child subreaper, so that orphaned descendants are re-parented to the
//! host rather than to init while the host lives.
//!
//! A [`ProcessTree`] names everything that process started. On Linux, a scan of `/proc`
//! finds: every process of its session or process group; every process seen as a member
//! by an earlier scan (by pid and start time, so a member that left the session and
//! lost its parent stays a member); every orphan adopted by the host that carries the
//! tree's tag; and the descendants of all of those (so neither `set -m` job control,
//! which moves jobs to groups of their own, nor a `setsid` child escapes). Elsewhere on
//! Unix, a tree is its process group.
//!
//! [`ProcessTree::terminate`] stops a tree the way a terminal would, but without races:
//! the members are collected *before* any is signalled, then `SIGTERM` goes to each of
//! them, and the tree gets up to a grace period to go. Then every member is stopped with
//! `SIGSTOP`, and the tree re-scanned, until a scan finds no new member (a stopped process
//! cannot fork, and its children keep it as their parent); then each is sent `SIGKILL`,
//! and up to the grace period again, every scan kills what it finds. It reports success
//! only once no member is left (zombies count as gone; adopted members that died are
//! reaped).
//!
//! While the host lives, a small watchdog process (one per host process, a `/bin/sh`
//! script) holds the list of trees still running; if the host dies without stopping them
//! (a crash, `SIGKILL`), the watchdog sees its pipe close and stops, then kills, each
//! tree's group, the members of its session and group, and every process carrying its
//! tag. The host in turn watches the watchdog: if the watchdog dies while the host lives
//! (a job can find it and kill it, as it runs as the same user), or is stopped (checked
//! every 100 ms on Linux; it is then killed), the host at once kills every tree it
//! guarded, after starting a new watchdog for them. So a tree is left unguarded only
//! between the watchdog's death and the host noticing it (milliseconds; up to 100 ms for
//! a stop), at the price that a job killing the watchdog ends every running job.
//!
//! ## What still escapes
//!
//! - While the host lives (a stop, a job kill, a timeout): a process the tree started
//!   that both left the session and group and lost its parent before any scan saw it,
//!   *and* removed or changed [`TREE_ENV`] in its environment (e.g. `env -i`), *or*
//!   whose orphaning went to another subreaper than the host (one it set up itself) or to
//!   init (when `PR_SET_CHILD_SUBREAPER` failed). A process that changed its user (a
//!   set-uid program) cannot be signalled at all; one that entered another pid namespace
//!   is found only as long as it stays a descendant.
//! - When the host dies: the shell (the tree's leader) is killed by the kernel at once,
//!   and the watchdog finds the rest by group, session and tag only, so a process that
//!   left the session and group and changed its environment escapes; so does everything
//!   if the watchdog died at the same moment as the host (a job killing the watchdog and
//!   the host together, or stopping the watchdog less than 100 ms before the host dies),
//!   or if `/bin/sh` is missing (no watchdog: only the leader dies).
//! - Elsewhere than Linux, only the process group is signalled; elsewhere than Unix, only
//!   the spawned process itself is killed.
//!
//! # Output
//!
//! Each output stream goes to a [`Collector`]: the latest [`ProcessLimits::max_output_bytes`]
//! bytes stay in memory, and as soon as a stream outgrows that, all of it (from its first
//! byte) is also written to a spill file in a private directory (mode `0700`, file mode
//! `0600`), whose path the results carry, so the part left out of a result is still
//! there to read. A spill file holds at most [`ProcessLimits::max_spill_bytes`]; a stream
//! longer than that keeps its first part in the file and says so. A [`SpillBudget`]
//! ([`ProcessLimits::spill_budget`]) caps the spill bytes of every stream sharing it (the
//! `dsh-tools` host gives each session one): a stream that reaches it keeps its first
//! part in its file and says so in the same way (`spillTruncated`), and a stream that
//! outgrows memory once the budget is spent gets no spill file.
//!
//! # Jobs
//!
//! [`spawn_command`] runs a command as a background job on a `JobRuntime`. A read returns
//! what arrived since the previous one: new stdout, then `[stderr]` and new stderr when
//! there is any; when the memory window moved past unread bytes, a notice names the spill
//! files. The job settles once the process has been reaped:
//!
//! | how the process ended | status | detail |
//! |---|---|---|
//! | exited with code `n` | `completed` | `exit code: n` |
//! | terminated by a signal | `killed` | `signal: SIGTERM` (the signal's name, or its number) |
//! | stopped by a kill request, no signal seen | `killed` | `killed before exit` |
//! | a kill left processes running | `failed` | `the kill left processes running: <pids>` |
//! | waiting for it failed | `failed` | the I/O error |
//!
//! A non-zero exit is `completed`: the process ran to its end, and the code says how. A
//! job stopped by a kill request settles only after its whole tree is gone.
//!
//! A process that exits on its own leaves its descendants alone (a command may start a
//! daemon on purpose); only a stop kills the tree. Once the process has exited, output
//! still buffered in the pipes is read for up to [`ProcessLimits::drain_grace`]; a
//! descendant that keeps the pipes open does not hold the job open past that.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, Command};
use tokio_util::sync::CancellationToken;

use crate::lock;
use dsh_runtime::ToolSchema;
use dsh_runtime::jobs::{
    BoxError, JobContext, JobProducer, JobSettlement, RunningJob, incomplete_utf8_tail,
    is_utf8_continuation,
};

/// The default in-memory window per stream: 64 000 bytes.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 64_000;
/// The default spill file cap per stream: 256 MiB.
pub const DEFAULT_MAX_SPILL_BYTES: u64 = 256 * 1024 * 1024;

/// Bounds on a spawned process.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProcessLimits {
    /// How long to keep reading the pipes after the process exited. Default: 500 ms.
    pub drain_grace: Duration,
    /// How long a stop waits after `SIGTERM` before `SIGKILL`, and after `SIGKILL` before
    /// giving up on survivors. Default: 3 s.
    pub kill_grace: Duration,
    /// The latest bytes of each stream kept in memory. Default:
    /// [`DEFAULT_MAX_OUTPUT_BYTES`].
    pub max_output_bytes: usize,
    /// The most bytes of each stream a spill file holds. Default:
    /// [`DEFAULT_MAX_SPILL_BYTES`]; 0 disables spilling.
    pub max_spill_bytes: u64,
    /// Where spill files go; `None`: a private directory made under the system temporary
    /// directory on first use.
    pub spill_dir: Option<PathBuf>,
    /// A total cap on spill bytes shared with other processes (e.g. every command of one
    /// session); `None`: only the per-stream cap.
    pub spill_budget: Option<SpillBudget>,
}

/// A cap on the spill bytes written by every stream that shares it (a clone shares it).
/// A stream that reaches it keeps the first part of its output in its spill file and says
/// so (`spillTruncated`), as at the per-stream cap.
#[derive(Clone, Debug)]
pub struct SpillBudget {
    total: u64,
    left: Arc<std::sync::atomic::AtomicU64>,
}

/// Two budgets are equal when they are the same shared budget.
impl PartialEq for SpillBudget {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.left, &other.left)
    }
}

impl Eq for SpillBudget {}

impl SpillBudget {
    /// A budget of `total` bytes.
    pub fn new(total: u64) -> SpillBudget {
        SpillBudget {
            total,
            left: Arc::new(std::sync::atomic::AtomicU64::new(total)),
        }
    }

    /// The bytes the budget started with.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The bytes still unspent.
    pub fn remaining(&self) -> u64 {
        self.left.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Spend up to `want` bytes; how many were granted.
    fn take(&self, want: u64) -> u64 {
        use std::sync::atomic::Ordering;
        let mut granted = 0;
        let _ = self
            .left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                granted = left.min(want);
                Some(left - granted)
            });
        granted
    }
}

impl Default for ProcessLimits {
    fn default() -> Self {
        ProcessLimits {
            drain_grace: Duration::from_millis(500),
            kill_grace: Duration::from_secs(3),
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
            max_spill_bytes: DEFAULT_MAX_SPILL_BYTES,
            spill_dir: None,
            spill_budget: None,
        }
    }
}

impl ProcessLimits {
    /// The same limits with spill bytes counted against `budget` too.
    #[must_use]
    pub fn with_spill_budget(mut self, budget: SpillBudget) -> Self {
        self.spill_budget = Some(budget);
        self
    }

    /// The same limits with another drain grace.
    #[must_use]
    pub fn with_drain_grace(mut self, grace: Duration) -> Self {
        self.drain_grace = grace;
        self
    }

    /// The same limits with another kill grace.
    #[must_use]
    pub fn with_kill_grace(mut self, grace: Duration) -> Self {
        self.kill_grace = grace;
        self
    }

    /// The same limits with another in-memory window per stream.
    #[must_use]
    pub fn with_max_output_bytes(mut self, bytes: usize) -> Self {
        self.max_output_bytes = bytes;
        self
    }

    /// The same limits with another spill cap per stream (0: no spill files).
    #[must_use]
    pub fn with_max_spill_bytes(mut self, bytes: u64) -> Self {
        self.max_spill_bytes = bytes;
        self
    }

    /// The same limits with spill files in `dir`.
    #[must_use]
    pub fn with_spill_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.spill_dir = Some(dir.into());
        self
    }

    fn collector(&self, label: &'static str) -> Arc<Mutex<Collector>> {
        Arc::new(Mutex::new(
            Collector::new(
                label,
                self.max_output_bytes,
                self.max_spill_bytes,
                self.spill_dir.clone(),
            )
            .with_spill_budget(self.spill_budget.clone()),
        ))
    }
}

// ---- the tree ---------------------------------------------------------------------------

/// The environment variable [`isolate`] sets in a tree's leader, which every process of
/// the tree inherits unless it changes its environment: a tag unique to the tree
/// (`<host pid>.<sequence number>`), by which members that left the session and lost
/// their parent are still found.
pub const TREE_ENV: &str = "DSH_PROCESS_TREE";

/// Prepares `command` to lead a process tree of its own: a new session and process group
/// (ids equal to its pid), the tree's tag in [`TREE_ENV`] and, on Linux, `SIGKILL` when
/// the thread that spawned it ends (with Tokio, a runtime worker: the host process).
/// Spawn it from a long-lived thread; not from a `spawn_blocking` thread, which may end
/// first.
///
/// On Linux, the first call also makes the host process a child subreaper
/// (`PR_SET_CHILD_SUBREAPER`): an orphaned descendant of any process the host started
/// is re-parented to the host instead of to init, so that a tree's members stay
/// findable while the host lives. The host then inherits such orphans: the ones that
/// belong to a tree are reaped when the tree is stopped; one left running on purpose (a
/// daemon a job started, outliving the job) stays a zombie of the host once it exits,
/// until the host exits.
///
/// The process no longer belongs to the caller's terminal session, so a terminal's
/// Ctrl-C does not reach it: whoever starts it owns stopping it.
pub fn isolate(command: &mut Command) -> &mut Command {
    isolate_tagged(command);
    command
}

/// [`isolate`], returning the tree's tag.
fn isolate_tagged(command: &mut Command) -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let tag = format!(
        "{}.{}",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    command.env(TREE_ENV, &tag);
    #[cfg(target_os = "linux")]
    members::become_subreaper();
    #[cfg(unix)]
    {
        #[cfg(target_os = "linux")]
        let parent = libc::pid_t::try_from(std::process::id()).unwrap_or(0);
        // SAFETY: the hook runs in the forked child before `exec`, where only
        // async-signal-safe calls are allowed: `setsid`, `prctl` and `getppid` are plain
        // system calls, and building an `io::Error` from an OS error code allocates
        // nothing. The closure captures a plain integer.
        #[allow(unsafe_code)]
        unsafe {
            command.pre_exec(move || {
                if libc::setsid() == -1 {
                    return Err(io::Error::last_os_error());
                }
                #[cfg(target_os = "linux")]
                {
                    let signal = libc::c_ulong::try_from(libc::SIGKILL).unwrap_or(9);
                    if libc::prctl(libc::PR_SET_PDEATHSIG, signal, 0, 0, 0) == -1 {
                        return Err(io::Error::last_os_error());
                    }
                    // The host died between fork and prctl: nobody is left to own this.
                    if libc::getppid() != parent {
                        return Err(io::Error::from_raw_os_error(libc::ESRCH));
                    }
                }
                Ok(())
            });
        }
    }
    tag
}

/// The process tree a process prepared with [`isolate`] leads (see the module docs).
#[derive(Debug)]
pub struct ProcessTree {
    leader: Option<u32>,
    /// What scans learnt: the tag, and every member seen so far.
    known: Arc<Mutex<members::Known>>,
    watched: bool,
}

/// A signal [`ProcessTree::signal`] can send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TreeSignal {
    /// Ask to terminate.
    Term,
    /// Kill.
    Kill,
}

impl ProcessTree {
    /// The tree led by the process `leader` (`None`: a process whose pid is unknown, a
    /// tree with no members). On Linux its tag is read from the leader's environment.
    /// The watchdog learns about it until [`release`](ProcessTree::release) or drop.
    pub fn new(leader: Option<u32>) -> Self {
        let tag = leader.and_then(members::tag_of);
        ProcessTree::tagged(leader, tag)
    }

    fn tagged(leader: Option<u32>, tag: Option<String>) -> Self {
        let known = Arc::new(Mutex::new(members::Known::new(tag)));
        let watched = leader.is_some_and(|l| watchdog::register(l, &known));
        ProcessTree {
            leader,
            known,
            watched,
        }
    }

    /// The leader's pid, which is also the session and process group id.
    pub fn leader(&self) -> Option<u32> {
        self.leader
    }

    /// Sends `signal` to every member; returns how many were signalled. The members are
    /// collected before any is signalled; `Kill` first stops every member with
    /// `SIGSTOP` until no new one appears (a stopped process cannot fork), then kills
    /// them all.
    pub fn signal(&self, signal: TreeSignal) -> usize {
        let Some(leader) = self.leader else { return 0 };
        let mut known = lock(&self.known);
        match signal {
            TreeSignal::Term => members::signal(leader, &mut known, signal),
            TreeSignal::Kill => members::kill_frozen(leader, &mut known),
        }
    }

    /// The members that are still running (zombies excluded).
    pub fn survivors(&self) -> Vec<u32> {
        let Some(leader) = self.leader else {
            return Vec::new();
        };
        members::live(leader, &mut lock(&self.known))
    }

    /// Whether any member is still running.
    pub fn is_alive(&self) -> bool {
        !self.survivors().is_empty()
    }

    /// Stops the tree: `SIGTERM`, up to `grace` for the members to go, `SIGKILL` (after
    /// stopping every member), up to `grace` again, killing whatever is found meanwhile.
    /// Members seen once stay members (by pid and start time) even after they left the
    /// session and their parent died, so a member that ignores `SIGTERM` is still killed.
    ///
    /// # Errors
    ///
    /// The pids still running after all that.
    pub async fn terminate(&self, grace: Duration) -> Result<(), Vec<u32>> {
        if self.leader.is_none() {
            return Ok(());
        }
        for signal in [TreeSignal::Term, TreeSignal::Kill] {
            self.signal(signal);
            if self.wait_gone(grace, signal == TreeSignal::Kill).await {
                return Ok(());
            }
        }
        let survivors = self.survivors();
        if survivors.is_empty() {
            Ok(())
        } else {
            Err(survivors)
        }
    }

    /// Waits up to `grace` for the tree to be gone; `sweep`: killing every member found
    /// meanwhile.
    async fn wait_gone(&self, grace: Duration, sweep: bool) -> bool {
        let until = Instant::now() + grace;
        loop {
            if !self.is_alive() {
                return true;
            }
            if Instant::now() >= until {
                return false;
            }
            if sweep {
                self.signal(TreeSignal::Kill);
            }
            tokio::time::sleep(Duration::from_millis(15)).await;
        }
    }

    /// Stops watching the tree: its processes are no longer killed should the host die.
    /// Done once the tree is gone, or left running on purpose.
    pub fn release(&mut self) {
        if std::mem::take(&mut self.watched)
            && let Some(leader) = self.leader
        {
            watchdog::unregister(leader, &self.known);
        }
    }
}

impl Drop for ProcessTree {
    fn drop(&mut self) {
        self.release();
    }
}

/// Kills a tree when dropped unless disarmed: a run dropped before its process was
/// reaped leaves nothing behind.
struct KillOnDrop<'a>(Option<&'a ProcessTree>);

impl Drop for KillOnDrop<'_> {
    fn drop(&mut self) {
        if let Some(tree) = self.0 {
            tree.signal(TreeSignal::Kill);
        }
    }
}

mod members {
    //! Finding and signalling a tree's members.
    use super::TreeSignal;

    /// What a tree learnt about itself: its tag, and the members seen so far (pid and
    /// start time, so that a reused pid is not taken for a member).
    #[derive(Debug, Default)]
    pub(crate) struct Known {
        pub(super) tag: Option<String>,
        #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
        seen: std::collections::HashMap<u32, u64>,
    }

    impl Known {
        pub(super) fn new(tag: Option<String>) -> Known {
            Known {
                tag,
                seen: std::collections::HashMap::new(),
            }
        }
    }

    #[cfg(unix)]
    fn raw(signal: TreeSignal) -> libc::c_int {
        match signal {
            TreeSignal::Term => libc::SIGTERM,
            TreeSignal::Kill => libc::SIGKILL,
        }
    }

    #[cfg(unix)]
    fn send(pid: libc::pid_t, signal: libc::c_int) -> bool {
        // SAFETY: `kill` takes two integers and touches no memory of ours.
        #[allow(unsafe_code)]
        let rc = unsafe { libc::kill(pid, signal) };
        rc == 0
    }

    #[cfg(unix)]
    fn send_u32(pid: u32, signal: libc::c_int) -> bool {
        libc::pid_t::try_from(pid).is_ok_and(|pid| pid > 1 && send(pid, signal))
    }

    /// Makes the host a child subreaper (once; a failure leaves orphans to init).
    #[cfg(target_os = "linux")]
    pub(super) fn become_subreaper() {
        static DONE: std::sync::Once = std::sync::Once::new();
        DONE.call_once(|| {
            // SAFETY: `prctl` with integer arguments touches no memory of ours.
            #[allow(unsafe_code)]
            let rc = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
            if rc == -1 {
                tracing::warn!(
                    error = %std::io::Error::last_os_error(),
                    "PR_SET_CHILD_SUBREAPER failed: orphaned tree members go to init"
                );
            }
        });
    }

    /// The tag in the environment of `pid`.
    #[cfg(target_os = "linux")]
    pub(super) fn tag_of(pid: u32) -> Option<String> {
        let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
        let prefix = [super::TREE_ENV.as_bytes(), b"="].concat();
        environ
            .split(|b| *b == 0)
            .find_map(|var| var.strip_prefix(prefix.as_slice()))
            .and_then(|tag| std::str::from_utf8(tag).ok())
            .map(str::to_string)
    }

    #[cfg(not(target_os = "linux"))]
    pub(super) fn tag_of(_pid: u32) -> Option<String> {
        None
    }

    #[cfg(target_os = "linux")]
    pub(super) fn signal(leader: u32, known: &mut Known, signal: TreeSignal) -> usize {
        // Collect first: signalling a parent first could orphan a child that left the
        // session before it is found.
        let found = scan(leader, known);
        let sig = raw(signal);
        let mut count = usize::from(group(leader, sig));
        for m in &found {
            if send_u32(m.pid, sig) {
                count += 1;
            }
        }
        count
    }

    #[cfg(target_os = "linux")]
    fn group(leader: u32, sig: libc::c_int) -> bool {
        libc::pid_t::try_from(leader).is_ok_and(|g| g > 1 && send(-g, sig))
    }

    /// Stops every member until no new one appears (bounded), then kills them all.
    #[cfg(target_os = "linux")]
    pub(super) fn kill_frozen(leader: u32, known: &mut Known) -> usize {
        let mut stopped = std::collections::HashSet::new();
        group(leader, libc::SIGSTOP);
        for _ in 0..64 {
            let mut grew = false;
            for m in scan(leader, known) {
                if stopped.insert(m.pid) {
                    grew = true;
                    send_u32(m.pid, libc::SIGSTOP);
                }
            }
            if !grew {
                break;
            }
        }
        group(leader, libc::SIGKILL);
        let mut count = 0;
        for pid in &stopped {
            if send_u32(*pid, libc::SIGKILL) {
                count += 1;
            }
        }
        count
    }

    #[cfg(target_os = "linux")]
    pub(super) fn live(leader: u32, known: &mut Known) -> Vec<u32> {
        scan(leader, known)
            .into_iter()
            .filter(|m| !matches!(m.state, 'Z' | 'X' | 'x'))
            .map(|m| m.pid)
            .collect()
    }

    #[cfg(target_os = "linux")]
    pub(super) struct Stat {
        pub(super) pid: u32,
        state: char,
        ppid: u32,
        pgrp: u32,
        session: u32,
        start: u64,
    }

    /// Every process in `/proc`.
    #[cfg(target_os = "linux")]
    fn all() -> Vec<Stat> {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        let mut all = Vec::new();
        for entry in dir.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|name| name.parse::<u32>().ok())
            else {
                continue;
            };
            let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            // `pid (comm) state ppid pgrp session ...`; comm may hold anything, so the
            // fields are counted from its closing parenthesis.
            let Some((_, rest)) = text.rsplit_once(')') else {
                continue;
            };
            let fields: Vec<&str> = rest.split_ascii_whitespace().collect();
            let state = fields.first().and_then(|s| s.chars().next()).unwrap_or('?');
            let number = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
            let (Some(ppid), Some(pgrp), Some(session), Some(start)) =
                (number(1), number(2), number(3), number(19))
            else {
                continue;
            };
            let (Ok(ppid), Ok(pgrp), Ok(session)) = (
                u32::try_from(ppid),
                u32::try_from(pgrp),
                u32::try_from(session),
            ) else {
                continue;
            };
            all.push(Stat {
                pid,
                state,
                ppid,
                pgrp,
                session,
                start,
            });
        }
        all
    }

    /// The members of the tree led by `leader`: processes of its session or group,
    /// members seen before, orphans adopted by the host that carry the tree's tag, and
    /// the descendants of all of those. Remembers them, and reaps the adopted ones that
    /// are zombies.
    #[cfg(target_os = "linux")]
    fn scan(leader: u32, known: &mut Known) -> Vec<Stat> {
        let host = std::process::id();
        let all = all();
        let mut member: Vec<bool> = all
            .iter()
            .map(|s| {
                s.session == leader
                    || s.pgrp == leader
                    || known.seen.get(&s.pid) == Some(&s.start)
                    || (s.ppid == host
                        && s.pid != leader
                        && known.tag.is_some()
                        && tag_of(s.pid) == known.tag)
            })
            .collect();
        // Descendants of members, to a fixed point (parents may be listed after children).
        let mut pids: std::collections::HashSet<u32> = all
            .iter()
            .zip(&member)
            .filter(|(_, m)| **m)
            .map(|(s, _)| s.pid)
            .collect();
        loop {
            let mut grew = false;
            for (s, m) in all.iter().zip(member.iter_mut()) {
                if !*m && pids.contains(&s.ppid) {
                    *m = true;
                    pids.insert(s.pid);
                    grew = true;
                }
            }
            if !grew {
                break;
            }
        }
        let found: Vec<Stat> = all
            .into_iter()
            .zip(member)
            .filter(|(_, m)| *m)
            .map(|(s, _)| s)
            .collect();
        for s in &found {
            known.seen.insert(s.pid, s.start);
            // An adopted member that died is ours to reap (the leader is its spawner's).
            if s.state == 'Z'
                && s.ppid == host
                && s.pid != leader
                && let Ok(pid) = libc::pid_t::try_from(s.pid)
            {
                // SAFETY: `waitpid` on one pid, with no status pointer.
                #[allow(unsafe_code)]
                unsafe {
                    libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG);
                }
            }
        }
        found
    }

    #[cfg(all(unix, not(target_os = "linux")))]
    pub(super) fn signal(leader: u32, _known: &mut Known, signal: TreeSignal) -> usize {
        match libc::pid_t::try_from(leader) {
            Ok(group) if group > 1 => usize::from(send(-group, raw(signal))),
            _ => 0,
        }
    }

    #[cfg(all(unix, not(target_os = "linux")))]
    pub(super) fn kill_frozen(leader: u32, known: &mut Known) -> usize {
        signal(leader, known, TreeSignal::Kill)
    }

    #[cfg(all(unix, not(target_os = "linux")))]
    pub(super) fn live(leader: u32, _known: &mut Known) -> Vec<u32> {
        match libc::pid_t::try_from(leader) {
            Ok(group) if group > 1 && send(-group, 0) => vec![leader],
            _ => Vec::new(),
        }
    }

    #[cfg(not(unix))]
    pub(super) fn signal(_leader: u32, _known: &mut Known, _signal: TreeSignal) -> usize {
        0
    }

    #[cfg(not(unix))]
    pub(super) fn kill_frozen(_leader: u32, _known: &mut Known) -> usize {
        0
    }

    #[cfg(not(unix))]
    pub(super) fn live(_leader: u32, _known: &mut Known) -> Vec<u32> {
        Vec::new()
    }
}

mod watchdog {
    //! One `/bin/sh` per host process that kills the registered trees when the host's
    //! end of its pipe closes without a goodbye: the host died. The host in turn watches
    //! the watchdog: should it die while the host lives (a job may kill it), the host
    //! kills every tree it guarded at once, so no tree is left unguarded.

    use super::*;

    /// The watchdog script: `+ID/TAG` registers a tree, `-ID/TAG` forgets it; at end of
    /// input it stops, then kills, each tree left: its group, and (with /proc) the
    /// members of its session and group and every process carrying its tag.
    const SCRIPT: &str = r#"trap '' INT HUP TERM PIPE
ids=' '
while IFS= read -r line; do
  case $line in
    +*) ids="$ids${line#+} " ;;
    -*) id=${line#-}
        case $ids in *" $id "*) ids="${ids%%" $id "*} ${ids#*" $id "}" ;; esac ;;
  esac
done
for round in 1 2 3 4 5 6; do
  sig=STOP; [ "$round" -gt 3 ] && sig=KILL
  for e in $ids; do
    id=${e%%/*}; tag=${e#*/}
    kill -$sig -"$id" 2>/dev/null
    [ -d /proc ] || continue
    for f in $(grep -lxzF "DSH_PROCESS_TREE=$tag" /proc/[0-9]*/environ 2>/dev/null); do
      p=${f#/proc/}; kill -$sig "${p%/environ}" 2>/dev/null
    done
    for f in /proc/[0-9]*/stat; do
      IFS= read -r s < "$f" 2>/dev/null || continue
      set -- ${s##*") "}
      if [ "$3" = "$id" ] || [ "$4" = "$id" ]; then
        p=${f#/proc/}; kill -$sig "${p%/stat}" 2>/dev/null
      fi
    done
  done
done
"#;

    /// The pipe to the watchdog, and the trees it guards.
    struct State {
        pipe: Option<std::process::ChildStdin>,
        /// Bumped for each watchdog started, so a stale death notice is ignored.
        generation: u64,
        trees: Vec<(u32, Arc<Mutex<members::Known>>)>,
    }

    static STATE: Mutex<State> = Mutex::new(State {
        pipe: None,
        generation: 0,
        trees: Vec::new(),
    });

    fn start(generation: u64) -> Option<std::process::ChildStdin> {
        if !cfg!(unix) || !Path::new("/bin/sh").exists() {
            return None;
        }
        let mut command = std::process::Command::new("/bin/sh");
        command
            .arg("-c")
            .arg(SCRIPT)
            .env_remove(TREE_ENV)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        // The child handle is dropped: the watchdog lives until the host's end of the
        // pipe closes, which is when the host exits.
        let mut child = command.spawn().ok()?;
        let stdout = child.stdout.take();
        let pid = child.id();
        // Its stdout closes when it dies: while the host lives, that means it was killed.
        if let Some(stdout) = stdout {
            let spawned = std::thread::Builder::new()
                .name("dsh-watchdog-monitor".into())
                .spawn(move || {
                    monitor(stdout, pid);
                    died(generation);
                });
            if spawned.is_err() {
                return None;
            }
        }
        child.stdin.take()
    }

    /// Returns once the watchdog `pid` is dead, or stopped (`SIGSTOP`, a tracer), which
    /// would keep it from acting: it is then killed. A stop is noticed within 100 ms.
    #[cfg(target_os = "linux")]
    fn monitor(mut stdout: std::process::ChildStdout, pid: u32) {
        use std::io::Read as _;
        use std::os::fd::AsRawFd as _;
        let mut buf = [0_u8; 64];
        loop {
            let mut pfd = libc::pollfd {
                fd: stdout.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid `pollfd` we own, for the duration of the call.
            #[allow(unsafe_code)]
            let rc = unsafe { libc::poll(&raw mut pfd, 1, 100) };
            if rc > 0 {
                match stdout.read(&mut buf) {
                    Ok(0) => return,
                    Ok(_) => continue,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(_) => return,
                }
            }
            if rc < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                return;
            }
            let stopped = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| {
                    let (_, rest) = stat.rsplit_once(')')?;
                    rest.trim_start().chars().next()
                })
                .is_some_and(|state| matches!(state, 'T' | 't'));
            if stopped {
                if let Ok(pid) = libc::pid_t::try_from(pid) {
                    // SAFETY: `kill` takes two integers and touches no memory of ours.
                    #[allow(unsafe_code)]
                    unsafe {
                        libc::kill(pid, libc::SIGKILL);
                    }
                }
                return;
            }
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn monitor(mut stdout: std::process::ChildStdout, _pid: u32) {
        let _ = io::copy(&mut stdout, &mut io::sink());
    }

    /// The watchdog of `generation` died: kill every tree it guarded.
    fn died(generation: u64) {
        let trees = {
            let mut state = lock(&STATE);
            if state.generation != generation {
                return;
            }
            // First a new watchdog for the trees, so that none is unguarded should the
            // host die while they are killed.
            state.pipe = None;
            send(&mut state, "");
            state.trees.clone()
        };
        if trees.is_empty() {
            return;
        }
        tracing::warn!(
            trees = trees.len(),
            "the process watchdog died while the host lives: killing the trees it guarded"
        );
        for (leader, known) in trees {
            let mut known = lock(&known);
            for _ in 0..3 {
                members::kill_frozen(leader, &mut known);
                if members::live(leader, &mut known).is_empty() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }

    fn send(state: &mut State, line: &str) -> bool {
        for _ in 0..2 {
            if state.pipe.is_none() {
                state.generation += 1;
                state.pipe = start(state.generation);
                if state.pipe.is_some() {
                    // A new watchdog knows nothing yet: tell it every tree still guarded.
                    let lines: String = state
                        .trees
                        .iter()
                        .map(|(leader, known)| entry('+', *leader, known))
                        .collect();
                    if let Some(stdin) = state.pipe.as_mut()
                        && (stdin.write_all(lines.as_bytes()).is_err() || stdin.flush().is_err())
                    {
                        state.pipe = None;
                        continue;
                    }
                }
            }
            let Some(stdin) = state.pipe.as_mut() else {
                return false;
            };
            if stdin.write_all(line.as_bytes()).is_ok() && stdin.flush().is_ok() {
                return true;
            }
            // The watchdog is gone: start another.
            state.pipe = None;
        }
        false
    }

    fn entry(sign: char, leader: u32, known: &Mutex<members::Known>) -> String {
        let tag = lock(known).tag.clone().unwrap_or_else(|| "-".to_string());
        format!("{sign}{leader}/{tag}\n")
    }

    pub(super) fn register(leader: u32, known: &Arc<Mutex<members::Known>>) -> bool {
        let mut state = lock(&STATE);
        let line = entry('+', leader, known);
        if send(&mut state, &line) {
            state.trees.push((leader, Arc::clone(known)));
            true
        } else {
            false
        }
    }

    pub(super) fn unregister(leader: u32, known: &Arc<Mutex<members::Known>>) {
        let mut state = lock(&STATE);
        state.trees.retain(|(_, k)| !Arc::ptr_eq(k, known));
        let line = entry('-', leader, known);
        send(&mut state, &line);
    }
}

// ---- output -----------------------------------------------------------------------------

/// Captured text of one output stream, as results carry it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "camelCase")]
pub struct StreamText {
    /// The text (invalid UTF-8 replaced); when truncated, its latest part.
    pub text: String,
    /// Whether earlier bytes were left out of `text`.
    pub truncated: bool,
    /// The file holding the whole stream, when it outgrew the in-memory window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spill_path: Option<String>,
    /// Present (`true`) when the stream outgrew the spill file's cap too: the file holds
    /// only its first part.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub spill_truncated: bool,
}

impl StreamText {
    /// The text, then a line saying where the whole stream is when it was truncated.
    pub fn with_notice(&self) -> String {
        if !self.truncated {
            return self.text.clone();
        }
        let notice = match (&self.spill_path, self.spill_truncated) {
            (Some(path), false) => format!("[output truncated; full output: {path}]"),
            (Some(path), true) => format!("[output truncated; the first part is in: {path}]"),
            (None, _) => "[output truncated; full output: (unavailable)]".to_string(),
        };
        format!("{}\n{notice}", self.text)
    }
}

/// One read of a [`Collector`] from an offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamRead {
    /// The text since the offset (or the whole window, when the offset slid out of it).
    pub text: String,
    /// The offset of the next read.
    pub next_offset: u64,
    /// Whether bytes after the offset were no longer in memory.
    pub lossy: bool,
    /// The spill file, when there is one.
    pub spill_path: Option<String>,
}

enum Spill {
    /// Not needed (yet).
    None,
    Open {
        file: File,
        path: PathBuf,
        written: u64,
    },
    /// Complete, or cut at the cap (`full == false`).
    Closed { path: PathBuf, full: bool },
    /// Could not be written; nothing to point at.
    Failed,
}

/// One stream's bytes: the latest ones in memory, all of them in a spill file once they
/// outgrow that (see the module docs).
pub struct Collector {
    label: &'static str,
    max_bytes: usize,
    max_spill: u64,
    spill_dir: Option<PathBuf>,
    window: VecDeque<u8>,
    total: u64,
    spill: Spill,
    budget: Option<SpillBudget>,
}

impl std::fmt::Debug for Collector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Collector")
            .field("label", &self.label)
            .field("total", &self.total)
            .finish_non_exhaustive()
    }
}

impl Collector {
    /// A collector keeping `max_bytes` in memory and spilling up to `max_spill` bytes to
    /// a file named after `label` in `spill_dir` (`None`: a private temporary directory).
    pub fn new(
        label: &'static str,
        max_bytes: usize,
        max_spill: u64,
        spill_dir: Option<PathBuf>,
    ) -> Self {
        Collector {
            label,
            max_bytes,
            max_spill,
            spill_dir,
            window: VecDeque::new(),
            total: 0,
            spill: Spill::None,
            budget: None,
        }
    }

    /// The same collector with its spill bytes counted against `budget` too.
    #[must_use]
    pub fn with_spill_budget(mut self, budget: Option<SpillBudget>) -> Self {
        self.budget = budget;
        self
    }

    /// How many of `want` more spill bytes the shared budget grants.
    fn granted(&self, want: u64) -> u64 {
        match &self.budget {
            Some(budget) => budget.take(want),
            None => want,
        }
    }

    /// Takes in one chunk.
    pub fn push(&mut self, bytes: &[u8]) {
        let overflows = self.window.len() + bytes.len() > self.max_bytes;
        if overflows && matches!(self.spill, Spill::None) {
            self.open_spill();
        }
        self.write_spill(bytes);
        self.total += bytes.len() as u64;
        self.window.extend(bytes);
        let excess = self.window.len().saturating_sub(self.max_bytes);
        self.window.drain(..excess);
    }

    fn open_spill(&mut self) {
        if self.max_spill == 0 || self.budget.as_ref().is_some_and(|b| b.remaining() == 0) {
            self.spill = Spill::Failed;
            return;
        }
        self.spill = match spill_file(self.spill_dir.as_deref(), self.label) {
            Ok((mut file, path)) => {
                // Nothing was dropped yet: the window still holds every earlier byte.
                let (a, b) = self.window.as_slices();
                let earlier = a.len() as u64 + b.len() as u64;
                if earlier <= self.max_spill
                    && self.granted(earlier) == earlier
                    && file.write_all(a).is_ok()
                    && file.write_all(b).is_ok()
                {
                    Spill::Open {
                        file,
                        path,
                        written: earlier,
                    }
                } else {
                    Spill::Closed { path, full: false }
                }
            }
            Err(err) => {
                tracing::warn!(%err, "cannot create a spill file; the head of the output is lost");
                Spill::Failed
            }
        };
    }

    fn write_spill(&mut self, bytes: &[u8]) {
        let Spill::Open {
            file,
            path,
            written,
        } = &mut self.spill
        else {
            return;
        };
        let room = self.max_spill.saturating_sub(*written);
        let want = usize::try_from(room).unwrap_or(usize::MAX).min(bytes.len());
        let granted = match &self.budget {
            Some(budget) => budget.take(want as u64),
            None => want as u64,
        };
        let take = usize::try_from(granted).unwrap_or(want).min(want);
        let ok = file.write_all(&bytes[..take]).is_ok();
        *written += take as u64;
        if !ok || take < bytes.len() {
            self.spill = Spill::Closed {
                path: std::mem::take(path),
                full: false,
            };
        }
    }

    /// Closes the spill file (the stream ended).
    pub fn seal(&mut self) {
        if let Spill::Open { path, .. } = &mut self.spill {
            self.spill = Spill::Closed {
                path: std::mem::take(path),
                full: true,
            };
        }
    }

    fn spill_path(&self) -> Option<String> {
        match &self.spill {
            Spill::Open { path, .. } | Spill::Closed { path, .. } => {
                Some(path.display().to_string())
            }
            Spill::None | Spill::Failed => None,
        }
    }

    /// Every byte since `offset` (a previous read's `next_offset`; 0 at first): whole
    /// characters only, unless `last`, when the stream has ended.
    pub fn read_from(&self, offset: u64, last: bool) -> StreamRead {
        let start = self.total - self.window.len() as u64;
        let lossy = offset < start;
        let skip = usize::try_from(offset.saturating_sub(start)).unwrap_or(usize::MAX);
        let bytes: Vec<u8> = self.window.iter().skip(skip).copied().collect();
        // A window that starts in the middle of a character starts at the next one.
        let from = if lossy {
            bytes
                .iter()
                .take(3)
                .take_while(|b| is_utf8_continuation(**b))
                .count()
        } else {
            0
        };
        let to = if last {
            bytes.len()
        } else {
            bytes.len() - incomplete_utf8_tail(&bytes)
        };
        let to = to.max(from);
        StreamRead {
            text: String::from_utf8_lossy(&bytes[from..to]).into_owned(),
            next_offset: self.total - (bytes.len() - to) as u64,
            lossy,
            spill_path: self.spill_path(),
        }
    }

    /// The stream as a result carries it (call [`seal`](Collector::seal) first).
    pub fn finish(&self) -> StreamText {
        let read = self.read_from(0, true);
        StreamText {
            text: read.text,
            truncated: read.lossy,
            spill_path: read.spill_path,
            spill_truncated: matches!(self.spill, Spill::Closed { full: false, .. }),
        }
    }
}

/// A new spill file for a `label` stream, in `dir` or the private directory.
fn spill_file(dir: Option<&Path>, label: &str) -> io::Result<(File, PathBuf)> {
    static PRIVATE: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let dir = match dir {
        Some(dir) => dir.to_path_buf(),
        None => PRIVATE
            .get_or_init(|| {
                // Kept after the host exits: results point at these files.
                tempfile::Builder::new()
                    .prefix("dsh-tools-")
                    .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
                    .tempdir()
                    .map(tempfile::TempDir::keep)
                    .map_err(|e| e.to_string())
            })
            .clone()
            .map_err(io::Error::other)?,
    };
    let file = tempfile::Builder::new()
        .prefix(&format!("{label}-"))
        .suffix(".log")
        .tempfile_in(&dir)?;
    // Mode 0600 (tempfile's default); the path stays after the handle is dropped.
    file.keep().map_err(|e| e.error)
}

/// Copies a pipe into a collector until end of file or a read error, then seals it.
async fn pump(reader: Option<impl AsyncRead + Unpin>, collector: Arc<Mutex<Collector>>) {
    if let Some(mut reader) = reader {
        let mut chunk = vec![0u8; 16 * 1024];
        loop {
            match reader.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => lock(&collector).push(&chunk[..n]),
            }
        }
    }
    lock(&collector).seal();
}

// ---- running ----------------------------------------------------------------------------

/// A process spawned with [`spawn`]: the child, its tree and its two collectors.
#[derive(Debug)]
pub struct Spawned {
    child: Child,
    tree: ProcessTree,
    /// What it wrote to stdout.
    pub stdout: Arc<Mutex<Collector>>,
    /// What it wrote to stderr.
    pub stderr: Arc<Mutex<Collector>>,
    pipes: (
        Option<tokio::process::ChildStdout>,
        Option<tokio::process::ChildStderr>,
    ),
    limits: ProcessLimits,
}

/// How a [`Spawned::run`] ended.
#[derive(Debug)]
pub struct RunEnd {
    /// The process's exit status.
    pub status: io::Result<ExitStatus>,
    /// Whether the stop future fired (and the tree was terminated).
    pub stopped: bool,
    /// After a stop: the pids that survived it (empty: the whole tree is gone).
    pub survivors: Vec<u32>,
}

/// Spawns `command` isolated ([`isolate`]) with stdin closed and both output streams
/// captured.
///
/// # Errors
///
/// The spawn's.
pub fn spawn(mut command: Command, limits: ProcessLimits) -> io::Result<Spawned> {
    let tag = isolate_tagged(&mut command);
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn()?;
    let tree = ProcessTree::tagged(child.id(), Some(tag));
    let pipes = (child.stdout.take(), child.stderr.take());
    Ok(Spawned {
        child,
        tree,
        stdout: limits.collector("stdout"),
        stderr: limits.collector("stderr"),
        pipes,
        limits,
    })
}

impl Spawned {
    /// The process tree.
    pub fn tree(&self) -> &ProcessTree {
        &self.tree
    }

    /// Runs the process to its end, reading its output. When `stop` completes first, the
    /// whole tree is terminated ([`ProcessTree::terminate`]) and the run ends once it is
    /// gone (or the kill grace ran out twice). After the process exited, the pipes are
    /// drained for up to the drain grace. Dropping the future kills the tree.
    pub async fn run(mut self, stop: impl Future<Output = ()>) -> RunEnd {
        let pumps = {
            let (out, err) = std::mem::take(&mut self.pipes);
            let (a, b) = (self.stdout.clone(), self.stderr.clone());
            async move { tokio::join!(pump(out, a), pump(err, b)) }
        };
        tokio::pin!(pumps);
        let mut guard = KillOnDrop(Some(&self.tree));
        let mut drained = false;
        let mut stopped = false;
        let mut survivors = Vec::new();
        let status = {
            let child = &mut self.child;
            let tree = &self.tree;
            let grace = self.limits.kill_grace;
            let exit = async {
                tokio::select! {
                    status = child.wait() => status,
                    () = stop => {
                        stopped = true;
                        // Reap the shell while the tree goes, so it does not linger as a
                        // member.
                        let (status, gone) = tokio::join!(child.wait(), tree.terminate(grace));
                        if let Err(left) = gone {
                            survivors = left;
                        }
                        status
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
        // Reaped: a stop has stopped the tree already, and what a process that exited on
        // its own left running is not ours to kill.
        guard.0 = None;
        drop(guard);
        if !drained {
            // Something the process left running may hold the pipes open.
            let _ = tokio::time::timeout(self.limits.drain_grace, &mut pumps).await;
        }
        // Whatever is left now was left on purpose (or survived a kill, reported).
        self.tree.release();
        lock(&self.stdout).seal();
        lock(&self.stderr).seal();
        RunEnd {
            status,
            stopped,
            survivors,
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

// ---- as a job ---------------------------------------------------------------------------

/// A producer that spawns `command` when the job starts (see the module docs). A spawn
/// failure (say, no such program) fails the start, and no job is registered.
///
/// ```no_run
/// use dsh_runtime::jobs::{JobRuntime, JobSpec};
/// use dsh_tools::process;
///
/// # async fn demo(jobs: JobRuntime) -> Result<(), dsh_runtime::jobs::JobError> {
/// let mut command = tokio::process::Command::new("sh");
/// command.arg("-c").arg("cargo build");
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
    fn start(self, ctx: JobContext) -> Result<RunningJob, BoxError> {
        let spawned = spawn(self.command, self.limits)?;
        let reader = DeltaReader {
            stdout: spawned.stdout.clone(),
            stderr: spawned.stderr.clone(),
            offsets: (0, 0),
        };
        let stop: CancellationToken = ctx.stop_token().clone();
        let done = async move {
            let end = spawned.run(stop.cancelled_owned()).await;
            settlement(end)
        };
        let mut reader = reader;
        Ok(RunningJob::new(done).with_output_reader(move || reader.read()))
    }
}

/// Incremental reads of a job's two streams.
struct DeltaReader {
    stdout: Arc<Mutex<Collector>>,
    stderr: Arc<Mutex<Collector>>,
    offsets: (u64, u64),
}

impl DeltaReader {
    fn read(&mut self) -> String {
        let out = {
            let c = lock(&self.stdout);
            c.read_from(self.offsets.0, false)
        };
        let err = {
            let c = lock(&self.stderr);
            c.read_from(self.offsets.1, false)
        };
        self.offsets = (out.next_offset, err.next_offset);
        let mut text = out.text;
        if !err.text.is_empty() {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str("[stderr]\n");
            text.push_str(&err.text);
        }
        if out.lossy || err.lossy {
            let paths: Vec<String> = [out.spill_path, err.spill_path]
                .into_iter()
                .flatten()
                .collect();
            let paths = if paths.is_empty() {
                "(unavailable)".to_string()
            } else {
                paths.join(", ")
            };
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!(
                "[some output was dropped from memory; full output: {paths}]"
            ));
        }
        text
    }
}

fn settlement(end: RunEnd) -> JobSettlement {
    if !end.survivors.is_empty() {
        let pids: Vec<String> = end.survivors.iter().map(u32::to_string).collect();
        return JobSettlement::failed().with_detail(format!(
            "the kill left processes running: {}",
            pids.join(", ")
        ));
    }
    match end.status {
        Ok(status) => match terminating_signal(status) {
            Some(signal) => JobSettlement::killed().with_detail(format!("signal: {signal}")),
            None if end.stopped => JobSettlement::killed().with_detail("killed before exit"),
            None => match status.code() {
                Some(code) => JobSettlement::completed().with_detail(format!("exit code: {code}")),
                None => JobSettlement::killed().with_detail("killed before exit"),
            },
        },
        Err(_) if end.stopped => JobSettlement::killed().with_detail("killed before exit"),
        Err(err) => {
            JobSettlement::failed().with_detail(format!("waiting for the process failed: {err}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collector(max: usize) -> Collector {
        Collector::new("test", max, 1 << 20, Some(std::env::temp_dir()))
    }

    #[test]
    fn a_collector_under_its_cap_keeps_everything_and_spills_nothing() {
        let mut c = collector(10);
        c.push(b"hello");
        c.push(b" you");
        c.seal();
        let out = c.finish();
        assert_eq!(out.text, "hello you");
        assert!(!out.truncated);
        assert_eq!(out.spill_path, None);
    }

    #[test]
    fn a_collector_over_its_cap_keeps_the_tail_and_spills_everything() {
        let mut c = collector(4);
        for chunk in [&b"abc"[..], b"defgh", b"ijk"] {
            c.push(chunk);
        }
        c.seal();
        let out = c.finish();
        assert!(out.truncated);
        assert_eq!(out.text, "hijk");
        let path = out.spill_path.expect("a spill file");
        assert_eq!(std::fs::read(&path).unwrap(), b"abcdefghijk");
        assert!(!out.spill_truncated);
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn a_spill_over_its_cap_keeps_the_head_and_says_so() {
        let mut c = Collector::new("test", 2, 5, Some(std::env::temp_dir()));
        c.push(b"abc");
        c.push(b"defgh");
        c.seal();
        let out = c.finish();
        assert_eq!(out.text, "gh");
        assert!(out.spill_truncated);
        let path = out.spill_path.clone().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"abcde");
        assert!(out.with_notice().ends_with(&format!(
            "gh\n[output truncated; the first part is in: {path}]"
        )));
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn reads_are_incremental_and_keep_characters_whole() {
        let mut c = collector(100);
        c.push("a\u{e9}".as_bytes());
        c.push(&"\u{e9}".as_bytes()[..1]);
        let first = c.read_from(0, false);
        assert_eq!(first.text, "a\u{e9}");
        assert!(!first.lossy);
        c.push(&"\u{e9}".as_bytes()[1..]);
        let second = c.read_from(first.next_offset, false);
        assert_eq!(second.text, "\u{e9}");
        assert_eq!(c.read_from(second.next_offset, false).text, "");
    }

    #[test]
    fn a_read_behind_the_window_is_lossy_and_starts_on_a_character() {
        let mut c = collector(3);
        c.push("xx\u{e9}\u{e9}".as_bytes()); // 6 bytes; the window keeps the last 3
        let read = c.read_from(0, true);
        assert!(read.lossy);
        assert_eq!(read.text, "\u{e9}");
        assert!(read.spill_path.is_some());
        c.seal();
        std::fs::remove_file(read.spill_path.unwrap()).unwrap();
    }
}
