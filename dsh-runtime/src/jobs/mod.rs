//! Background jobs: work that outlives the tool call that started it.
//!
//! A registry holds one [`JobRuntime`] ([`RegistryBuilder::jobs`](crate::RegistryBuilder::jobs)),
//! and a tool reaches it through its context: [`ToolContext::jobs`](crate::ToolContext::jobs)
//! gives the call's [`CallJobs`] handle. The tool (bash's `run_in_background`, say) hands a
//! [`JobProducer`] to [`CallJobs::start`] and returns the [`JobId`] at once; the job then
//! runs on its own until it settles, and is observed and controlled by id:
//! [`read`](JobRuntime::read) its output, [`wait`](JobRuntime::wait) for it,
//! [`kill`](JobRuntime::kill) it, [`list`](JobRuntime::list) them. The model's job
//! controls (`job_output`, `job_list`, `job_kill`) are tools of the `dsh-tools` crate,
//! generic over job kinds.
//!
//! # Lifecycle
//!
//! A job is `running`, may become `stopping` once a stop was requested, and ends in
//! exactly one terminal status: `completed`, `killed` or `failed`. Only the producer's
//! `done` future settles a job (a panic in it settles `failed`); the first settlement
//! is final, and nothing later (a kill, an owner closing, a shutdown) changes it.
//!
//! # Ids
//!
//! Ids are `<kind>-<N>`, where `N` counts the jobs of that kind started on this runtime,
//! from 1 (`bash-1`, `bash-2`, `fetch-1`). A start whose producer fails registers
//! nothing, and its number is not reused. Each owner counts on its own, so a session's
//! ids say nothing of how many jobs other sessions started (two owners can each hold a
//! `bash-1`): an id is looked up among the caller's own jobs and the unowned ones, and
//! those never share an id (an owner's count skips the numbers unowned jobs hold, and
//! the unowned count skips every owner's).
//!
//! # Owners
//!
//! An owner is a session that jobs belong to: [`JobRuntime::owner`] returns an
//! [`OwnerGuard`], and a job started with that owner's [`OwnerId`] lives no longer than
//! the owner. Dropping the guard stops the owner's jobs; [`OwnerGuard::close`] (or
//! [`JobRuntime::close`]) stops them and waits until they have settled. A job that
//! settles after its owner closed still records its settlement.
//!
//! Every control call names its caller's owner. A caller sees the jobs of its owner and
//! the unowned jobs; a caller with no owner (`None`) sees only unowned jobs. An id owned
//! by someone else fails exactly like an unknown id ([`JobError::NotFound`]), so one
//! session cannot learn which ids another session holds.
//!
//! # Output
//!
//! While a job runs, [`read`](JobRuntime::read) is a single consuming cursor: each call
//! returns what arrived since the previous one. Once the job settled, every read returns
//! the same final output: the settlement's own `output` when it gave one, else whatever
//! was still unread at settlement. Unread output is bounded by the job's output limit
//! (see [`OutputSink`]).
//!
//! ```
//! use std::time::Duration;
//! use dsh_runtime::jobs::{JobContext, JobRuntime, JobSettlement, JobSpec, JobStatus, RunningJob};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let jobs = JobRuntime::new();
//! let session = jobs.owner();
//! let spec = JobSpec::new("count", "count to three").owned_by(session.id());
//! let id = jobs
//!     .start(spec, |ctx: JobContext| {
//!         let out = ctx.output().clone();
//!         Ok::<_, std::io::Error>(RunningJob::new(async move {
//!             out.write_str("1 2 3\n");
//!             JobSettlement::completed().with_detail("counted")
//!         }))
//!     })
//!     .unwrap();
//! assert_eq!(id.as_str(), "count-1");
//!
//! let me = Some(session.id());
//! let job = jobs.wait(&id, Duration::from_secs(10), me).await.unwrap();
//! assert_eq!(job.status, JobStatus::Completed);
//! assert_eq!(jobs.read(&id, me).unwrap().text, "1 2 3\n");
//! assert_eq!(jobs.read(&id, None).unwrap_err().to_string(), "unknown job count-1");
//! session.close().await;
//! # }
//! ```

use std::borrow::Borrow;
use std::collections::{HashMap, HashSet};
use std::error::Error;
use std::fmt;
use std::future::Future;
use std::num::NonZeroU64;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::ToolSchema;
use crate::panic::{CatchUnwind, panic_message};
use crate::schema::Schema;

mod output;

pub use output::{OutputSink, incomplete_utf8_tail, is_utf8_continuation};

/// The output limit of a job whose spec sets none: 1 MiB of unread output.
pub const DEFAULT_OUTPUT_LIMIT_BYTES: usize = 1024 * 1024;

/// The error type producers and cancel hooks may return.
pub type BoxError = Box<dyn Error + Send + Sync + 'static>;

// ---- identities -------------------------------------------------------------------------

/// A job's id, `<kind>-<N>`.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JobId(Arc<str>);

impl JobId {
    /// The id as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl AsRef<str> for JobId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for JobId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for JobId {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for JobId {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl Serialize for JobId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

/// Reads an id back from its string, e.g. from a logged tool result. Any string is
/// accepted: whether it names a job is the runtime's to say.
impl<'de> Deserialize<'de> for JobId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(|id| JobId(id.into()))
    }
}

/// A string.
impl ToolSchema for JobId {
    fn build_schema() -> Schema {
        Schema::string()
    }
}

/// The identity of a job owner (a session). Unique for the life of the process, so an id
/// from one runtime never names a live owner of another.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct OwnerId(NonZeroU64);

impl fmt::Display for OwnerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "owner-{}", self.0)
    }
}

static NEXT_OWNER: AtomicU64 = AtomicU64::new(1);

impl OwnerId {
    fn fresh() -> Self {
        let n = NEXT_OWNER.fetch_add(1, Ordering::Relaxed);
        // `n` starts at 1 and a u64 counter does not wrap in practice; saturate anyway.
        OwnerId(NonZeroU64::new(n).unwrap_or(NonZeroU64::MAX))
    }
}

// ---- what a caller passes in ----------------------------------------------------------

/// What to start: the job's kind (the id prefix), a human label, its owner and its output
/// limit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobSpec {
    /// The kind of job, e.g. `bash`; the prefix of its id. Must not be empty.
    pub kind: String,
    /// A human-readable label, e.g. the command line.
    pub label: String,
    /// The owner the job belongs to; `None` for a job open to every caller.
    pub owner: Option<OwnerId>,
    /// The most unread output kept; [`DEFAULT_OUTPUT_LIMIT_BYTES`] when `None`.
    pub output_limit_bytes: Option<usize>,
}

impl JobSpec {
    /// An unowned job with the default output limit.
    pub fn new(kind: impl Into<String>, label: impl Into<String>) -> Self {
        JobSpec {
            kind: kind.into(),
            label: label.into(),
            owner: None,
            output_limit_bytes: None,
        }
    }

    /// The same spec, owned by `owner`.
    #[must_use]
    pub fn owned_by(mut self, owner: OwnerId) -> Self {
        self.owner = Some(owner);
        self
    }

    /// The same spec with an output limit.
    #[must_use]
    pub fn with_output_limit(mut self, bytes: usize) -> Self {
        self.output_limit_bytes = Some(bytes);
        self
    }
}

/// What a producer receives when its job starts.
#[derive(Debug)]
pub struct JobContext {
    id: JobId,
    stop: CancellationToken,
    output: OutputSink,
}

impl JobContext {
    /// The id the job will have.
    pub fn id(&self) -> &JobId {
        &self.id
    }

    /// Cancelled when a stop is requested (kill, owner closing, shutdown). The job's
    /// `done` future should watch it, stop its work, release its resources and settle.
    ///
    /// This is the job's own signal: it is not tied to the tool call that started the
    /// job, whose cancellation must not kill published work.
    pub fn stop_token(&self) -> &CancellationToken {
        &self.stop
    }

    /// The job's output buffer, read by [`JobRuntime::read`] unless the job has its own
    /// reader ([`RunningJob::with_output_reader`]).
    pub fn output(&self) -> &OutputSink {
        &self.output
    }
}

type DoneFuture = Pin<Box<dyn Future<Output = JobSettlement> + Send + 'static>>;
type CancelHook = Box<dyn FnMut(Option<&str>) -> Result<(), BoxError> + Send + 'static>;
type OutputReader = Box<dyn FnMut() -> String + Send + 'static>;

/// A started job, as its producer returns it.
///
/// `done` is polled on the runtime until it yields the job's [`JobSettlement`]; it should
/// settle only after the job's resources are released. A stop request first calls the
/// optional cancel hook, then cancels [`JobContext::stop_token`].
pub struct RunningJob {
    done: DoneFuture,
    cancel: Option<CancelHook>,
    reader: Option<OutputReader>,
}

impl RunningJob {
    /// A job that settles when `done` completes.
    pub fn new(done: impl Future<Output = JobSettlement> + Send + 'static) -> Self {
        RunningJob {
            done: Box::pin(done),
            cancel: None,
            reader: None,
        }
    }

    /// A hook called with the stop reason before the stop token is cancelled, for work
    /// the token cannot reach. When it fails (returns an error or panics) on a
    /// [`JobRuntime::kill`], the kill fails and the job keeps running; the next stop
    /// request calls it again. When an owner closes or the runtime shuts down, the failure
    /// is logged and the token is cancelled anyway.
    ///
    /// The hook runs on the caller's thread and must not call back into the runtime for
    /// the same job.
    #[must_use]
    pub fn with_cancel<F, E>(mut self, mut hook: F) -> Self
    where
        F: FnMut(Option<&str>) -> Result<(), E> + Send + 'static,
        E: Into<BoxError>,
    {
        self.cancel = Some(Box::new(move |reason| hook(reason).map_err(Into::into)));
        self
    }

    /// A reader used instead of the [`OutputSink`]: each call returns the output produced
    /// since the previous call. It is called once more at settlement (unless the
    /// settlement carries its own output) to form the final output.
    ///
    /// The reader runs on the caller's thread and must not call back into the runtime for
    /// the same job.
    #[must_use]
    pub fn with_output_reader(mut self, reader: impl FnMut() -> String + Send + 'static) -> Self {
        self.reader = Some(Box::new(reader));
        self
    }
}

impl fmt::Debug for RunningJob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunningJob")
            .field("cancel", &self.cancel.is_some())
            .field("reader", &self.reader.is_some())
            .finish_non_exhaustive()
    }
}

/// Starts a job's work. Called once, synchronously, after the runtime's preflight
/// (runtime open, owner live); an error or a panic registers nothing.
///
/// Any `FnOnce(JobContext) -> Result<RunningJob, E>` is a producer;
/// `dsh_tools::process::spawn_command` makes one from an operating-system command.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a job producer",
    label = "expected a job producer",
    note = "a producer is `FnOnce(JobContext) -> Result<RunningJob, E>` where `E: Into<Box<dyn Error + Send + Sync>>`, or a type implementing `dsh_runtime::jobs::JobProducer`"
)]
pub trait JobProducer {
    /// Starts the work and returns the running job.
    fn start(self, ctx: JobContext) -> Result<RunningJob, BoxError>;
}

#[diagnostic::do_not_recommend]
impl<F, E> JobProducer for F
where
    F: FnOnce(JobContext) -> Result<RunningJob, E>,
    E: Into<BoxError>,
{
    fn start(self, ctx: JobContext) -> Result<RunningJob, BoxError> {
        self(ctx).map_err(Into::into)
    }
}

// ---- what comes out ---------------------------------------------------------------------

/// Where a job is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "lowercase")]
#[schema(crate = crate)]
#[non_exhaustive]
pub enum JobStatus {
    /// Working.
    Running,
    /// A stop was requested; not settled yet.
    Stopping,
    /// Settled: finished on its own.
    Completed,
    /// Settled: stopped before finishing.
    Killed,
    /// Settled: could not finish.
    Failed,
}

impl JobStatus {
    /// Whether the job has settled.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            JobStatus::Completed | JobStatus::Killed | JobStatus::Failed
        )
    }

    /// The wire name: `running`, `stopping`, `completed`, `killed` or `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Running => "running",
            JobStatus::Stopping => "stopping",
            JobStatus::Completed => "completed",
            JobStatus::Killed => "killed",
            JobStatus::Failed => "failed",
        }
    }
}

impl fmt::Display for JobStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a job ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FinalStatus {
    /// Finished on its own.
    Completed,
    /// Stopped before finishing.
    Killed,
    /// Could not finish.
    Failed,
}

impl From<FinalStatus> for JobStatus {
    fn from(status: FinalStatus) -> Self {
        match status {
            FinalStatus::Completed => JobStatus::Completed,
            FinalStatus::Killed => JobStatus::Killed,
            FinalStatus::Failed => JobStatus::Failed,
        }
    }
}

/// What a job's `done` future yields: its final status, an optional one-line detail
/// (e.g. `exit code: 0`) and an optional final output that replaces whatever is unread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobSettlement {
    /// The final status.
    pub status: FinalStatus,
    /// A short detail, e.g. `exit code: 0` or `signal: SIGKILL`.
    pub detail: Option<String>,
    /// The final output; `None` keeps the unread output.
    pub output: Option<String>,
}

impl JobSettlement {
    /// A settlement with this status and nothing else.
    pub fn new(status: FinalStatus) -> Self {
        JobSettlement {
            status,
            detail: None,
            output: None,
        }
    }

    /// `completed`.
    pub fn completed() -> Self {
        Self::new(FinalStatus::Completed)
    }

    /// `killed`.
    pub fn killed() -> Self {
        Self::new(FinalStatus::Killed)
    }

    /// `failed`.
    pub fn failed() -> Self {
        Self::new(FinalStatus::Failed)
    }

    /// The same settlement with a detail.
    #[must_use]
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    /// The same settlement with a final output.
    #[must_use]
    pub fn with_output(mut self, output: impl Into<String>) -> Self {
        self.output = Some(output.into());
        self
    }
}

/// A job as it is at one moment.
///
/// It serializes as the job control tools publish it (`{id, kind, label, status, detail?,
/// startedAt, finishedAt?}`, times in milliseconds since the Unix epoch), and reads back
/// from that form (without the owner and the stop reason, which are not published).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "camelCase")]
#[schema(crate = crate, description = "A background job as it is at one moment.")]
pub struct JobSnapshot {
    /// The job's id, `<kind>-<N>`.
    pub id: JobId,
    /// The kind of job, e.g. `bash`.
    pub kind: String,
    /// What the job is, in a few words.
    pub label: String,
    /// Where the job is in its life.
    pub status: JobStatus,
    /// How it ended, once settled, e.g. `exit code: 0` or `signal: SIGKILL`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// When the job started, in milliseconds since the Unix epoch.
    #[serde(default)]
    pub started_at: u64,
    /// When the job settled, in milliseconds since the Unix epoch; absent while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<u64>,
    /// Why a stop was requested, once one was (not serialized: the caller gave it).
    #[serde(skip)]
    pub stop_reason: Option<String>,
    /// The owner (not serialized: owner ids are the host's business; `None` when read
    /// back).
    #[serde(skip)]
    pub owner: Option<OwnerId>,
}

/// What one [`JobRuntime::read`] returns: the text and the job as it was then.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
#[schema(
    crate = crate,
    description = "A background job's output and the job as it was when the output was read."
)]
pub struct JobOutput {
    /// Output since the previous read, or the final output once settled.
    pub text: String,
    /// The job.
    pub job: JobSnapshot,
}

/// What [`JobRuntime::kill`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "kebab-case")]
#[schema(crate = crate, description = "What a kill request did.")]
pub enum KillOutcome {
    /// The job is stopping (now, or already was).
    Requested,
    /// The job had already settled; nothing was done.
    AlreadyFinished,
}

/// Why a job operation failed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum JobError {
    /// No job with this id is visible to the caller: unknown, or owned by another owner
    /// (deliberately indistinguishable).
    NotFound {
        /// The id asked for.
        id: String,
    },
    /// The spec names an owner that is closed or was never opened on this runtime.
    OwnerNotLive {
        /// The owner.
        owner: OwnerId,
    },
    /// The runtime was shut down; it starts nothing more.
    ShutDown,
    /// `start` was called outside a Tokio runtime.
    NoTokioRuntime,
    /// The spec is unusable.
    InvalidSpec {
        /// What is wrong.
        message: String,
    },
    /// The producer failed or panicked; nothing was registered.
    Producer {
        /// The job kind.
        kind: String,
        /// The producer's error.
        message: String,
    },
    /// The job's cancel hook failed or panicked; the job is still running.
    Cancel {
        /// The job.
        id: JobId,
        /// The hook's error.
        message: String,
    },
    /// The tool call starting the job was cancelled before the job started: nothing ran
    /// and nothing was registered, so no call returns the id of work nobody will read.
    CallAborted,
    /// The job's output reader panicked.
    Output {
        /// The job.
        id: JobId,
        /// The panic message.
        message: String,
    },
}

impl fmt::Display for JobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JobError::NotFound { id } => write!(f, "unknown job {id}"),
            JobError::OwnerNotLive { owner } => write!(f, "job owner {owner} is not live"),
            JobError::ShutDown => f.write_str("the job runtime is shut down"),
            JobError::NoTokioRuntime => f.write_str("starting a job needs a Tokio runtime"),
            JobError::InvalidSpec { message } => write!(f, "invalid job spec: {message}"),
            JobError::Producer { kind, message } => {
                write!(f, "failed to start {kind} job: {message}")
            }
            JobError::Cancel { id, message } => {
                write!(f, "failed to cancel job {id} (still running): {message}")
            }
            JobError::Output { id, message } => {
                write!(f, "failed to read the output of job {id}: {message}")
            }
            JobError::CallAborted => {
                f.write_str("tool call aborted before the background job started")
            }
        }
    }
}

impl Error for JobError {}

// ---- the runtime ----------------------------------------------------------------------

/// The job table. Cheap to clone: clones share the same jobs.
///
/// When the last handle (and every [`OwnerGuard`]) is dropped, every unsettled job is
/// asked to stop; prefer [`shutdown`](JobRuntime::shutdown), which also waits.
#[derive(Clone, Default)]
pub struct JobRuntime {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    table: Mutex<JobTable>,
}

/// Every job of a runtime, and what decides whether another may start.
#[derive(Default)]
struct JobTable {
    shut_down: bool,
    /// Jobs started per owner (`None`: unowned) and kind, for ids.
    counters: HashMap<(Option<OwnerId>, String), u64>,
    /// Every id handed out (started or not), with its owner: no number is reused.
    issued: HashSet<(Option<OwnerId>, JobId)>,
    /// The ids handed out to any owner (the unowned count skips them).
    owned_ids: HashSet<JobId>,
    /// Every registered job, in start order.
    jobs: Vec<Arc<Job>>,
    /// Registered jobs by owner and id.
    by_id: HashMap<(Option<OwnerId>, JobId), Arc<Job>>,
    live_owners: HashSet<OwnerId>,
}

impl JobTable {
    /// The next id of `kind` for `owner`, reserved for good.
    fn issue(&mut self, owner: Option<OwnerId>, kind: &str) -> JobId {
        loop {
            let n = self.counters.entry((owner, kind.to_string())).or_insert(0);
            // A u64 counter does not wrap in practice; saturate anyway.
            *n = n.saturating_add(1);
            let id = JobId(format!("{kind}-{n}").into());
            let clash = match owner {
                Some(_) => self.issued.contains(&(None, id.clone())),
                None => self.owned_ids.contains(&id),
            };
            if !clash && self.issued.insert((owner, id.clone())) {
                if owner.is_some() {
                    self.owned_ids.insert(id.clone());
                }
                return id;
            }
        }
    }

    fn preflight(&self, owner: Option<OwnerId>) -> Result<(), JobError> {
        if self.shut_down {
            return Err(JobError::ShutDown);
        }
        match owner {
            Some(owner) if !self.live_owners.contains(&owner) => {
                Err(JobError::OwnerNotLive { owner })
            }
            _ => Ok(()),
        }
    }
}

impl JobRuntime {
    /// An empty runtime.
    pub fn new() -> Self {
        Self::default()
    }

    /// Opens an owner. Jobs started with its id are stopped when the guard is dropped or
    /// closed.
    pub fn owner(&self) -> OwnerGuard {
        let id = OwnerId::fresh();
        let mut table = lock(&self.inner.table);
        if !table.shut_down {
            table.live_owners.insert(id);
        }
        OwnerGuard {
            runtime: self.clone(),
            id,
            open: true,
        }
    }

    /// Whether `owner` is open on this runtime.
    pub fn is_live(&self, owner: OwnerId) -> bool {
        lock(&self.inner.table).live_owners.contains(&owner)
    }

    /// Starts a job: checks the runtime is open and the owner live, runs the producer
    /// once, registers the job and drives its `done` future on the current Tokio runtime.
    ///
    /// # Errors
    ///
    /// [`JobError::InvalidSpec`] for an empty kind, [`JobError::NoTokioRuntime`],
    /// [`JobError::ShutDown`], [`JobError::OwnerNotLive`] (the producer does not run),
    /// and [`JobError::Producer`] when the producer fails or panics. If the owner closes
    /// while the producer runs, the job is stopped at once, not registered, and the
    /// start fails with [`JobError::OwnerNotLive`].
    pub fn start(&self, spec: JobSpec, producer: impl JobProducer) -> Result<JobId, JobError> {
        if spec.kind.is_empty() {
            return Err(JobError::InvalidSpec {
                message: "kind must be a non-empty string".into(),
            });
        }
        let handle = tokio::runtime::Handle::try_current().map_err(|_| JobError::NoTokioRuntime)?;
        let owner = spec.owner;
        let id = {
            let mut table = lock(&self.inner.table);
            table.preflight(owner)?;
            table.issue(owner, &spec.kind)
        };

        let stop = CancellationToken::new();
        let limit = spec
            .output_limit_bytes
            .unwrap_or(DEFAULT_OUTPUT_LIMIT_BYTES);
        let sink = OutputSink::new(limit);
        let ctx = JobContext {
            id: id.clone(),
            stop: stop.clone(),
            output: sink.clone(),
        };
        let running = run_producer(producer, ctx, &spec.kind)?;
        let (job, done) = Job::running(id.clone(), spec, stop, sink, running);
        // The preflight again: the owner may have closed, or the runtime shut down, while
        // the producer ran. Such a job is not registered, but it is still stopped and
        // driven to settlement so its resources are released.
        let registered = {
            let mut table = lock(&self.inner.table);
            table.preflight(owner).map(|()| {
                table.jobs.push(job.clone());
                table.by_id.insert((owner, id.clone()), job.clone());
            })
        };
        // The job's lifetime: a trace root of its own, linked to the call that started it.
        let lifetime = tracing::info_span!(parent: None, "background_job", dsh.job.id = %id);
        lifetime.follows_from(tracing::Span::current());
        handle.spawn(tracing::Instrument::instrument(
            drive(job.clone(), done),
            lifetime,
        ));
        match registered {
            Ok(()) => Ok(id),
            Err(err) => {
                job.request_stop(Some("owner closed"), Force::Yes).ok();
                Err(err)
            }
        }
    }

    /// The job as it is now.
    ///
    /// # Errors
    ///
    /// [`JobError::NotFound`] when the id is unknown or not visible to `caller`.
    pub fn snapshot(
        &self,
        id: impl AsRef<str>,
        caller: Option<OwnerId>,
    ) -> Result<JobSnapshot, JobError> {
        Ok(self.lookup(id.as_ref(), caller)?.snapshot())
    }

    /// The jobs visible to `caller` (its own and the unowned ones), in start order.
    pub fn list(&self, caller: Option<OwnerId>) -> Vec<JobSnapshot> {
        let table = lock(&self.inner.table);
        table
            .jobs
            .iter()
            .filter(|job| job.visible_to(caller))
            .map(|job| job.snapshot())
            .collect()
    }

    /// Reads the job's output: what arrived since the previous read while it runs, the
    /// same final output on every read once it settled.
    ///
    /// # Errors
    ///
    /// [`JobError::NotFound`]; [`JobError::Output`] when a custom reader panics.
    pub fn read(
        &self,
        id: impl AsRef<str>,
        caller: Option<OwnerId>,
    ) -> Result<JobOutput, JobError> {
        let job = self.lookup(id.as_ref(), caller)?;
        // Lock order everywhere: reader, then state.
        let mut reader = lock(&job.reader);
        let text = match &mut *reader {
            Reader::Settled => {
                let state = lock(&job.state);
                state.final_output.clone().unwrap_or_default()
            }
            Reader::Sink(sink) => sink.take(false),
            Reader::Custom(read) => {
                catch_unwind(AssertUnwindSafe(read)).map_err(|panic| JobError::Output {
                    id: job.id.clone(),
                    message: format!("reader panicked: {}", panic_message(&*panic)),
                })?
            }
        };
        let snapshot = job.snapshot();
        Ok(JobOutput {
            text,
            job: snapshot,
        })
    }

    /// Asks the job to stop: calls its cancel hook, then marks it `stopping` and cancels
    /// its stop token. The job settles when its `done` future says so.
    ///
    /// # Errors
    ///
    /// [`JobError::NotFound`]; [`JobError::Cancel`] when the cancel hook fails or
    /// panics, in which case the job keeps running.
    pub fn kill(
        &self,
        id: impl AsRef<str>,
        reason: Option<&str>,
        caller: Option<OwnerId>,
    ) -> Result<KillOutcome, JobError> {
        self.lookup(id.as_ref(), caller)?
            .request_stop(reason, Force::No)
    }

    /// Waits up to `timeout` for the job to settle and returns it: settled, or as it is
    /// when the time is up.
    ///
    /// # Errors
    ///
    /// [`JobError::NotFound`].
    pub async fn wait(
        &self,
        id: impl AsRef<str>,
        timeout: Duration,
        caller: Option<OwnerId>,
    ) -> Result<JobSnapshot, JobError> {
        let job = self.lookup(id.as_ref(), caller)?;
        // Timing out is an answer here, not an error: the live snapshot.
        let _ = tokio::time::timeout(timeout, job.settled()).await;
        Ok(job.snapshot())
    }

    /// Closes `owner`: no job can be started for it any more, its unsettled jobs are asked
    /// to stop (a failing cancel hook is logged and the stop token cancelled anyway), and
    /// this waits until all of them settled.
    pub async fn close(&self, owner: OwnerId) {
        let jobs = self.release(owner);
        for job in jobs {
            job.settled().await;
        }
    }

    /// Shuts the runtime down: nothing more starts, every owner closes, every unsettled
    /// job (owned or not) is asked to stop, and this waits until all of them settled.
    pub async fn shutdown(&self) {
        let jobs = {
            let mut table = lock(&self.inner.table);
            table.shut_down = true;
            table.live_owners.clear();
            table.jobs.clone()
        };
        for job in &jobs {
            job.request_stop(Some("job runtime shut down"), Force::Yes)
                .ok();
        }
        for job in jobs {
            job.settled().await;
        }
    }

    /// Closes `owner` and asks its jobs to stop, without waiting.
    fn release(&self, owner: OwnerId) -> Vec<Arc<Job>> {
        let jobs: Vec<Arc<Job>> = {
            let mut table = lock(&self.inner.table);
            table.live_owners.remove(&owner);
            table
                .jobs
                .iter()
                .filter(|job| job.owner == Some(owner))
                .cloned()
                .collect()
        };
        for job in &jobs {
            job.request_stop(Some("owner closed"), Force::Yes).ok();
        }
        jobs
    }

    fn lookup(&self, id: &str, caller: Option<OwnerId>) -> Result<Arc<Job>, JobError> {
        let table = lock(&self.inner.table);
        let key = JobId(id.into());
        // The caller's own jobs, then the unowned ones (they never share an id).
        let found = match caller {
            Some(owner) => table
                .by_id
                .get(&(Some(owner), key.clone()))
                .or_else(|| table.by_id.get(&(None, key))),
            None => table.by_id.get(&(None, key)),
        };
        match found {
            Some(job) if job.visible_to(caller) => Ok(job.clone()),
            _ => Err(JobError::NotFound { id: id.to_string() }),
        }
    }
}

impl fmt::Debug for JobRuntime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let table = lock(&self.inner.table);
        f.debug_struct("JobRuntime")
            .field("jobs", &table.jobs.len())
            .field("live_owners", &table.live_owners.len())
            .field("shut_down", &table.shut_down)
            .finish()
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // No handle is left to control these jobs: stop them rather than leak them. Their
        // tasks keep running until they settle.
        let table = self
            .table
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for job in &table.jobs {
            job.request_stop(Some("job runtime dropped"), Force::Yes)
                .ok();
        }
    }
}

/// An open owner. Dropping it closes the owner and asks its jobs to stop;
/// [`close`](OwnerGuard::close) also waits for them to settle.
#[must_use = "dropping the guard closes the owner and stops its jobs"]
pub struct OwnerGuard {
    runtime: JobRuntime,
    id: OwnerId,
    open: bool,
}

impl OwnerGuard {
    /// The owner's id, for [`JobSpec::owned_by`] and the control calls. It stays valid
    /// for reading the owner's settled jobs after the owner closed.
    pub fn id(&self) -> OwnerId {
        self.id
    }

    /// Closes the owner and waits until its jobs settled.
    pub async fn close(mut self) {
        self.open = false;
        self.runtime.close(self.id).await;
    }
}

impl Drop for OwnerGuard {
    fn drop(&mut self) {
        if self.open {
            self.runtime.release(self.id);
        }
    }
}

impl fmt::Debug for OwnerGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnerGuard")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

// ---- one call's handle --------------------------------------------------------------------

/// The job runtime as one tool call reaches it, through
/// [`ToolContext::jobs`](crate::ToolContext::jobs): the one place a tool publishes work
/// that outlives the call.
///
/// It acts for one owner or none ([`for_owner`](CallJobs::for_owner)): a job started
/// through it belongs to that owner unless its spec names one, and reads, waits, kills and
/// lists see that owner's jobs and the unowned ones. [`start`](CallJobs::start) refuses to
/// run the producer once the call is cancelled ([`JobError::CallAborted`]); the runtime's
/// own rules (owner cleanup, bounded output, first settlement final) apply as for
/// [`JobRuntime::start`].
///
/// ```
/// use dsh_runtime::jobs::{JobContext, JobRuntime, JobSettlement, JobSpec, RunningJob};
/// use dsh_runtime::{Registry, ToolCall, ToolContext, ToolError, tool};
///
/// /// Count in the background; answer with the job's id.
/// #[tool]
/// async fn count(cx: ToolContext) -> Result<String, ToolError> {
///     let jobs = cx.jobs()?;
///     let id = jobs
///         .start(JobSpec::new("count", "count to three"), |ctx: JobContext| {
///             let out = ctx.output().clone();
///             Ok::<_, std::io::Error>(RunningJob::new(async move {
///                 out.write_str("1 2 3");
///                 JobSettlement::completed()
///             }))
///         })
///         .map_err(|e| ToolError::with_code("JOB_START_FAILED", e.to_string()))?;
///     Ok(id.to_string())
/// }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let jobs = JobRuntime::new();
/// let registry = Registry::builder().jobs(jobs.clone()).build();
/// let _count = registry.register(Count).unwrap();
/// let result = registry.execute(ToolCall::new("1", "count", "{}")).await;
/// assert_eq!(result.text(), "count-1");
///
/// // Without a job runtime, the tool says what is missing.
/// let bare = Registry::new();
/// let _count = bare.register(Count).unwrap();
/// let result = bare.execute(ToolCall::new("1", "count", "{}")).await;
/// assert_eq!(result.code_str(), Some("JOBS_UNAVAILABLE"));
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct CallJobs {
    runtime: JobRuntime,
    call: CancellationToken,
    owner: Option<OwnerId>,
}

impl CallJobs {
    /// The handle of a call whose cancellation token is `call`, acting for no owner.
    pub fn new(runtime: JobRuntime, call: CancellationToken) -> Self {
        CallJobs {
            runtime,
            call,
            owner: None,
        }
    }

    /// The same handle acting for `owner` (`None`: for no owner).
    #[must_use]
    pub fn for_owner(mut self, owner: Option<OwnerId>) -> Self {
        self.owner = owner;
        self
    }

    /// The owner this handle acts for.
    pub fn owner(&self) -> Option<OwnerId> {
        self.owner
    }

    /// The runtime behind the handle.
    pub fn runtime(&self) -> &JobRuntime {
        &self.runtime
    }

    /// Starts a job, owned by the spec's owner or else the handle's (see
    /// [`JobRuntime::start`]).
    ///
    /// # Errors
    ///
    /// [`JobError::CallAborted`] when the call is cancelled (the producer does not run),
    /// and every error of [`JobRuntime::start`].
    pub fn start(&self, mut spec: JobSpec, producer: impl JobProducer) -> Result<JobId, JobError> {
        if self.call.is_cancelled() {
            return Err(JobError::CallAborted);
        }
        if spec.owner.is_none() {
            spec.owner = self.owner;
        }
        self.runtime.start(spec, producer)
    }

    /// [`JobRuntime::snapshot`] for the handle's owner.
    ///
    /// # Errors
    ///
    /// [`JobError::NotFound`].
    pub fn snapshot(&self, id: impl AsRef<str>) -> Result<JobSnapshot, JobError> {
        self.runtime.snapshot(id, self.owner)
    }

    /// [`JobRuntime::list`] for the handle's owner.
    pub fn list(&self) -> Vec<JobSnapshot> {
        self.runtime.list(self.owner)
    }

    /// [`JobRuntime::read`] for the handle's owner.
    ///
    /// # Errors
    ///
    /// As [`JobRuntime::read`].
    pub fn read(&self, id: impl AsRef<str>) -> Result<JobOutput, JobError> {
        self.runtime.read(id, self.owner)
    }

    /// [`JobRuntime::kill`] for the handle's owner.
    ///
    /// # Errors
    ///
    /// As [`JobRuntime::kill`].
    pub fn kill(&self, id: impl AsRef<str>, reason: Option<&str>) -> Result<KillOutcome, JobError> {
        self.runtime.kill(id, reason, self.owner)
    }

    /// [`JobRuntime::wait`] for the handle's owner.
    ///
    /// # Errors
    ///
    /// [`JobError::NotFound`].
    pub async fn wait(
        &self,
        id: impl AsRef<str>,
        timeout: Duration,
    ) -> Result<JobSnapshot, JobError> {
        self.runtime.wait(id, timeout, self.owner).await
    }
}

// ---- one job ----------------------------------------------------------------------------

struct Job {
    id: JobId,
    kind: String,
    label: String,
    owner: Option<OwnerId>,
    started_at: u64,
    stop: CancellationToken,
    /// `true` once settled.
    settled: watch::Sender<bool>,
    /// Serializes stop requests; taken away at settlement.
    cancel_hook: Mutex<Option<CancelHook>>,
    /// Where reads come from until settlement.
    reader: Mutex<Reader>,
    state: Mutex<JobState>,
}

enum Reader {
    Sink(OutputSink),
    Custom(OutputReader),
    /// The final output is in the state.
    Settled,
}

struct JobState {
    status: JobStatus,
    detail: Option<String>,
    stop_reason: Option<String>,
    final_output: Option<String>,
    finished_at: Option<u64>,
}

/// Whether a failing cancel hook blocks the stop (a kill) or not (closing, shutdown).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Force {
    Yes,
    No,
}

impl Job {
    /// A job that has just started running, and the future that settles it.
    fn running(
        id: JobId,
        spec: JobSpec,
        stop: CancellationToken,
        sink: OutputSink,
        running: RunningJob,
    ) -> (Arc<Job>, DoneFuture) {
        let JobSpec {
            kind, label, owner, ..
        } = spec;
        let RunningJob {
            done,
            cancel,
            reader,
        } = running;
        let (settled, _) = watch::channel(false);
        let job = Arc::new(Job {
            id,
            kind,
            label,
            owner,
            started_at: now_ms(),
            stop,
            settled,
            cancel_hook: Mutex::new(cancel),
            reader: Mutex::new(match reader {
                Some(reader) => Reader::Custom(reader),
                None => Reader::Sink(sink),
            }),
            state: Mutex::new(JobState {
                status: JobStatus::Running,
                detail: None,
                stop_reason: None,
                final_output: None,
                finished_at: None,
            }),
        });
        (job, done)
    }

    fn visible_to(&self, caller: Option<OwnerId>) -> bool {
        self.owner.is_none() || self.owner == caller
    }

    fn snapshot(&self) -> JobSnapshot {
        let state = lock(&self.state);
        JobSnapshot {
            id: self.id.clone(),
            kind: self.kind.clone(),
            label: self.label.clone(),
            status: state.status,
            detail: state.detail.clone(),
            started_at: self.started_at,
            finished_at: state.finished_at,
            stop_reason: state.stop_reason.clone(),
            owner: self.owner,
        }
    }

    async fn settled(&self) {
        let mut settled = self.settled.subscribe();
        // The sender lives as long as `self`, so this only returns once settled.
        let _ = settled.wait_for(|settled| *settled).await;
    }

    fn request_stop(&self, reason: Option<&str>, force: Force) -> Result<KillOutcome, JobError> {
        let mut hook = lock(&self.cancel_hook);
        match lock(&self.state).status {
            JobStatus::Running => {}
            JobStatus::Stopping => return Ok(KillOutcome::Requested),
            _ => return Ok(KillOutcome::AlreadyFinished),
        }
        if let Some(cancel) = hook.as_mut() {
            let failure = match catch_unwind(AssertUnwindSafe(|| cancel(reason))) {
                Ok(Ok(())) => None,
                Ok(Err(err)) => Some(err.to_string()),
                Err(panic) => Some(format!("cancel panicked: {}", panic_message(&*panic))),
            };
            if let Some(message) = failure {
                if force == Force::No {
                    return Err(JobError::Cancel {
                        id: self.id.clone(),
                        message,
                    });
                }
                tracing::warn!(job = %self.id, %message, "cancel hook failed; stopping the job anyway");
            }
        }
        {
            let mut state = lock(&self.state);
            if state.status.is_terminal() {
                // It settled while the hook ran.
                return Ok(KillOutcome::AlreadyFinished);
            }
            state.status = JobStatus::Stopping;
            state.stop_reason = reason.map(str::to_owned);
        }
        self.stop.cancel();
        Ok(KillOutcome::Requested)
    }

    /// Records the settlement unless one was recorded already.
    fn settle(&self, settlement: JobSettlement) {
        let mut reader = lock(&self.reader);
        if matches!(*reader, Reader::Settled) {
            return;
        }
        let JobSettlement {
            status,
            detail,
            output,
        } = settlement;
        let final_output = match (output, std::mem::replace(&mut *reader, Reader::Settled)) {
            (Some(output), _) => output,
            (None, Reader::Sink(sink)) => sink.take(true),
            (None, Reader::Custom(mut read)) => catch_unwind(AssertUnwindSafe(&mut read))
                .unwrap_or_else(|panic| {
                    tracing::warn!(job = %self.id, panic = panic_message(&*panic), "output reader panicked at settlement");
                    String::new()
                }),
            (None, Reader::Settled) => String::new(),
        };
        {
            let mut state = lock(&self.state);
            state.status = status.into();
            state.detail = detail;
            state.final_output = Some(final_output);
            state.finished_at = Some(now_ms());
        }
        drop(reader);
        // The hook may hold resources; a stop request running right now keeps it until
        // the job is dropped.
        if let Ok(mut hook) = self.cancel_hook.try_lock() {
            hook.take();
        }
        self.settled.send_replace(true);
    }
}

/// Runs a job's producer once, its error or panic as [`JobError::Producer`].
fn run_producer(
    producer: impl JobProducer,
    ctx: JobContext,
    kind: &str,
) -> Result<RunningJob, JobError> {
    match catch_unwind(AssertUnwindSafe(|| producer.start(ctx))) {
        Ok(Ok(running)) => Ok(running),
        Ok(Err(err)) => Err(JobError::Producer {
            kind: kind.to_owned(),
            message: err.to_string(),
        }),
        Err(panic) => Err(JobError::Producer {
            kind: kind.to_owned(),
            message: format!("producer panicked: {}", panic_message(&*panic)),
        }),
    }
}

/// Drives `done` to its settlement; a panic settles `failed`.
async fn drive(job: Arc<Job>, done: DoneFuture) {
    let settlement = match CatchUnwind::new(done).await {
        Ok(settlement) => settlement,
        Err(panic) => JobSettlement::failed().with_detail(format!("job panicked: {panic}")),
    };
    job.settle(settlement);
}

/// Milliseconds since the Unix epoch (0 if the clock is before it).
fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Locks a mutex, ignoring poison: every critical section here leaves its data
/// consistent, and user code runs only under `catch_unwind`.
fn lock<T: ?Sized>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
