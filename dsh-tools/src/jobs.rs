//! `job_output`, `job_list` and `job_kill`: the model's handle on background jobs.
//!
//! The three tools are methods of [`Jobs`], a `#[toolbox]` value naming the owner the
//! tools act for. They control the jobs of the calling registry's job runtime
//! ([`ToolContext::jobs`], set with `RegistryBuilder::jobs`), which `bash` (with
//! `run_in_background`) starts jobs on, and stay generic over job kinds. A `Jobs` acts for
//! one owner, or for none: it sees that owner's jobs and the unowned ones, and an id it
//! cannot see fails with `JOB_NOT_FOUND`, exactly like an unknown one. A registry without
//! a job runtime answers `JOBS_UNAVAILABLE`.
//!
//! What the model sees: `job_output` ends with
//! `[status: <s>]` (or `[status: <s>, <detail>]`) and says `(no new output)` when there is
//! none; `job_list` prints `<id> [<kind>] <status> — <label>` per job; `job_kill` answers
//! `cancellation-requested` or `already-finished`. A blank `job_id` is refused with
//! `invalid job_id: expected a non-empty string, got ""` (no code); unknown ids carry the
//! code `JOB_NOT_FOUND`.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! use dsh_runtime::jobs::JobRuntime;
//! use dsh_runtime::{Registry, ToolCall};
//!
//! let registry = Registry::builder().jobs(JobRuntime::new()).build();
//! let _tools = dsh_tools::jobs::register(&registry).unwrap();
//! let result = registry
//!     .execute(ToolCall::new("call_1", "job_kill", r#"{"job_id":"bash-9"}"#))
//!     .await;
//! assert_eq!(result.code_str(), Some("JOB_NOT_FOUND"));
//! assert_eq!(result.text(), "Error: unknown job bash-9");
//! # }
//! ```

use std::time::Duration;

use dsh_runtime::jobs::{CallJobs, JobError, JobOutput, JobSnapshot, KillOutcome, OwnerId};
use dsh_runtime::{
    PipelineCode, RegisterError, RegistrationHandle, Registry, ToolContext, ToolError, ToolSchema,
    content::ContentBlock, tool, toolbox,
};
use serde::{Deserialize, Serialize};

/// How long `job_output` waits when `wait` is set without `timeout_ms`: 30 seconds.
pub const DEFAULT_WAIT_MS: u64 = 30_000;
/// The longest wait `job_output` accepts: 10 minutes.
pub const MAX_WAIT_MS: u64 = 600_000;

/// Registers `job_output`, `job_list` and `job_kill`, acting for no owner (they see the
/// unowned jobs, which is what [`crate::bash::register`] starts).
///
/// # Errors
///
/// The registry's, e.g. when one of the names is already registered (then none is).
pub fn register(registry: &Registry) -> Result<Vec<RegistrationHandle>, RegisterError> {
    crate::register_toolbox(registry, Jobs::new())
}

/// The job control tools, acting for one owner or none, over the calling registry's job
/// runtime.
#[derive(Debug, Default)]
pub struct Jobs {
    owner: Option<OwnerId>,
}

impl Jobs {
    /// Tools acting for no owner: they see only unowned jobs.
    pub fn new() -> Self {
        Jobs { owner: None }
    }

    /// Tools acting for `owner`: they see its jobs and the unowned ones.
    pub fn for_owner(owner: OwnerId) -> Self {
        Jobs { owner: Some(owner) }
    }

    /// The call's job handle, acting for this value's owner.
    fn jobs(&self, cx: &ToolContext) -> Result<CallJobs, ToolError> {
        Ok(cx.jobs()?.for_owner(self.owner))
    }
}

/// The arguments of `job_output`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToolSchema)]
#[schema(description = "")]
pub struct JobOutputArgs {
    /// The id the starting tool returned (e.g. `bash-1`).
    pub job_id: String,
    /// First wait until the job ends or `timeout_ms` passes; a job still running then is
    /// reported as running and keeps running.
    #[serde(default)]
    pub wait: bool,
    /// How long `wait` may take, in milliseconds (default 30000; longer waits are cut to
    /// 600000).
    pub timeout_ms: Option<f64>,
}

/// What `job_kill` did, as the tool reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "kebab-case")]
pub enum KillReport {
    /// The job was asked to stop (now, or earlier); it settles as `killed` once its
    /// work is gone.
    CancellationRequested,
    /// The job had already ended; nothing was done.
    AlreadyFinished,
}

impl From<KillOutcome> for KillReport {
    fn from(outcome: KillOutcome) -> Self {
        match outcome {
            KillOutcome::Requested => KillReport::CancellationRequested,
            KillOutcome::AlreadyFinished => KillReport::AlreadyFinished,
        }
    }
}

/// What `job_kill` did, and the job afterwards.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
pub struct KillResult {
    /// `cancellation-requested`: the job is stopping; `already-finished`: it had ended,
    /// nothing was done.
    pub outcome: KillReport,
    /// The job after the request.
    pub job: JobSnapshot,
}

/// A `job_id` argument: non-empty.
fn checked_id(job_id: &str) -> Result<&str, ToolError> {
    if job_id.is_empty() {
        return Err(ToolError::new(format!(
            "invalid job_id: expected a non-empty string, got {}",
            quoted(job_id)
        )));
    }
    if job_id.len() > MAX_ID_BYTES {
        // No id is this long; echoing it would only fill the model's context.
        return Err(job_error(JobError::NotFound {
            id: cut(job_id, 64).into_owned(),
        }));
    }
    Ok(job_id)
}

/// `text` as a JSON string literal.
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| format!("{text:?}"))
}

#[toolbox]
impl Jobs {
    /// Get what a background job printed since the previous read, and its status.
    ///
    /// While the job runs, each read returns only new output; after it ended, a read
    /// returns what was left unread. The answer always ends with a `[status: ...]` line.
    /// Reading does not block unless `wait` is set.
    #[tool(
        name = "job_output",
        args,
        read_only,
        concurrency_safe,
        render = Self::render_output
    )]
    pub async fn output(
        &self,
        args: JobOutputArgs,
        cx: ToolContext,
    ) -> Result<JobOutput, ToolError> {
        let id = checked_id(&args.job_id)?;
        let jobs = self.jobs(&cx)?;
        if args.wait {
            let timeout = wait_timeout(args.timeout_ms, cx.arguments().get("timeout_ms"))?;
            tokio::select! {
                waited = jobs.wait(id, timeout) => {
                    waited.map_err(job_error)?;
                }
                // Give up waiting without consuming output nobody would receive.
                () = cx.cancellation().cancelled() => {
                    return Err(ToolError::with_code(PipelineCode::Aborted, "tool call aborted"));
                }
            }
        }
        jobs.read(id).map_err(job_error)
    }

    /// List the background jobs you can reach, running or ended, oldest first.
    ///
    /// One line per job: its id, kind, status and what it runs.
    #[tool(
        name = "job_list",
        read_only,
        idempotent,
        concurrency_safe,
        render = Self::render_list
    )]
    pub async fn list(&self, cx: ToolContext) -> Result<Vec<JobSnapshot>, ToolError> {
        Ok(self.jobs(&cx)?.list())
    }

    /// Ask a running background job to stop, by id.
    ///
    /// Answers at once without waiting for the job to end; the job then settles as
    /// `killed` when everything it started is gone. `job_output` shows the final status.
    #[tool(name = "job_kill", destructive, idempotent, render = Self::render_kill)]
    pub async fn kill(
        &self,
        /// The id the starting tool returned (e.g. `bash-1`).
        job_id: String,
        /// A few words on why, kept with the job and handed to it.
        reason: Option<String>,
        cx: ToolContext,
    ) -> Result<KillResult, ToolError> {
        let id = checked_id(&job_id)?;
        let jobs = self.jobs(&cx)?;
        let outcome = jobs.kill(id, reason.as_deref()).map_err(job_error)?;
        let job = jobs.snapshot(id).map_err(job_error)?;
        Ok(KillResult {
            outcome: outcome.into(),
            job,
        })
    }

    /// The output (`(no new output)` when there is none), then `[status: <s>]` or
    /// `[status: <s>, <detail>]` on a line of its own.
    fn render_output(_args: &JobOutputArgs, out: &JobOutput) -> Vec<ContentBlock> {
        let body = if out.text.is_empty() {
            "(no new output)"
        } else {
            out.text.as_str()
        };
        let newline = if body.ends_with('\n') { "" } else { "\n" };
        vec![ContentBlock::text(format!(
            "{body}{newline}{}",
            status_line(&out.job)
        ))]
    }

    /// One line per job: `<id> [<kind>] <status> — <label>` (long labels cut), or
    /// `(no background jobs)`.
    #[allow(clippy::ptr_arg)] // the hook receives `&Output`
    fn render_list(_args: &JobsListArgs, jobs: &Vec<JobSnapshot>) -> Vec<ContentBlock> {
        if jobs.is_empty() {
            return vec![ContentBlock::text("(no background jobs)")];
        }
        let lines: Vec<String> = jobs
            .iter()
            .map(|job| {
                format!(
                    "{} [{}] {} \u{2014} {}",
                    job.id,
                    job.kind,
                    job.status,
                    cut(&job.label, MAX_LABEL_CHARS)
                )
            })
            .collect();
        vec![ContentBlock::text(lines.join("\n"))]
    }

    fn render_kill(_args: &JobsKillArgs, result: &KillResult) -> Vec<ContentBlock> {
        let text = match result.outcome {
            KillReport::CancellationRequested => {
                format!("requested cancellation of job {}", result.job.id)
            }
            KillReport::AlreadyFinished => format!(
                "job {} had already finished {}",
                result.job.id,
                status_line(&result.job)
            ),
        };
        vec![ContentBlock::text(text)]
    }
}

/// The longest id looked up; longer ones are unknown.
const MAX_ID_BYTES: usize = 256;

/// The most characters of a label `job_list` prints per job.
const MAX_LABEL_CHARS: usize = 200;

/// `text` cut to `max` characters, with `…` marking a cut.
fn cut(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => text.into(),
        Some((at, _)) => format!("{}\u{2026}", &text[..at]).into(),
    }
}

/// The wait `job_output` does: `timeout_ms` (default [`DEFAULT_WAIT_MS`], at most
/// [`MAX_WAIT_MS`]), which must be a positive number; `literal` is the argument as sent,
/// for the message.
fn wait_timeout(
    timeout_ms: Option<f64>,
    literal: Option<&dsh_runtime::json::Value>,
) -> Result<Duration, ToolError> {
    let ms = match timeout_ms {
        None => return Ok(Duration::from_millis(DEFAULT_WAIT_MS)),
        Some(ms) => ms,
    };
    if !ms.is_finite() || ms <= 0.0 {
        return Err(ToolError::new(format!(
            "invalid wait timeout: expected a positive number of milliseconds, got {}",
            cut(
                &literal.map_or_else(|| ms.to_string(), ToString::to_string),
                MAX_LABEL_CHARS
            )
        )));
    }
    // Clamped first, so the conversion cannot overflow.
    Ok(Duration::from_secs_f64(ms.min(MAX_WAIT_MS as f64) / 1000.0))
}

/// `[status: <s>]` or `[status: <s>, <detail>]`.
fn status_line(job: &JobSnapshot) -> String {
    match &job.detail {
        Some(detail) => format!("[status: {}, {detail}]", job.status),
        None => format!("[status: {}]", job.status),
    }
}

fn job_error(err: JobError) -> ToolError {
    let code = match &err {
        JobError::NotFound { .. } => "JOB_NOT_FOUND",
        JobError::Cancel { .. } => "JOB_KILL_FAILED",
        JobError::Output { .. } => "JOB_OUTPUT_FAILED",
        _ => "JOB_ERROR",
    };
    ToolError::with_code(code, err.to_string())
}
