//! `job_output`, `job_list` and `job_kill`: the model's handle on background jobs.
//!
//! The three tools are methods of [`Jobs`], a `#[toolbox]` value holding the
//! [`JobRuntime`] that `bash` (with `run_in_background`) starts jobs on. A `Jobs` acts for
//! one owner, or for none: it sees that owner's jobs and the unowned ones, and an id it
//! cannot see fails with `JOB_NOT_FOUND`, exactly like an unknown one.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! use dsh_runtime::jobs::JobRuntime;
//! use dsh_runtime::{Registry, ToolCall};
//!
//! let registry = Registry::new();
//! let jobs = JobRuntime::new();
//! let _tools = dsh_runtime::jobs::tools::register(&registry, &jobs).unwrap();
//! let result = registry
//!     .execute(ToolCall::new("call_1", "job_kill", r#"{"job_id":"bash-9"}"#))
//!     .await;
//! assert_eq!(result.code(), Some("JOB_NOT_FOUND"));
//! assert_eq!(result.text(), "Error: unknown job id: bash-9");
//! # }
//! ```

use std::sync::Arc;
use std::time::Duration;

use crate::jobs::{JobError, JobOutput, JobRuntime, JobSnapshot, KillOutcome, OwnerId};
use crate::{
    ContentBlock, ErrorCode, RegisterError, Registration, Registry, ToolContext, ToolError,
    ToolSchema, tool, toolbox,
};
use serde::{Deserialize, Serialize};

/// How long `job_output` waits when `wait` is set without `timeout_ms`: 30 seconds.
pub const DEFAULT_WAIT_MS: u64 = 30_000;
/// The longest wait `job_output` accepts: 10 minutes.
pub const MAX_WAIT_MS: u64 = 600_000;

/// Registers `job_output`, `job_list` and `job_kill` over `jobs`, acting for no owner
/// (they see the unowned jobs, which is what `dsh_tools::bash::register` starts).
///
/// # Errors
///
/// The registry's, e.g. when one of the names is already registered (then none is).
pub fn register(
    registry: &Registry,
    jobs: &JobRuntime,
) -> Result<Vec<Registration>, RegisterError> {
    Ok(vec![
        registry.register_toolbox(Arc::new(Jobs::new(jobs.clone())))?,
    ])
}

/// The job control tools over one [`JobRuntime`], acting for one owner or none.
#[derive(Debug)]
pub struct Jobs {
    runtime: JobRuntime,
    owner: Option<OwnerId>,
}

impl Jobs {
    /// Tools acting for no owner: they see only unowned jobs.
    pub fn new(runtime: JobRuntime) -> Self {
        Jobs {
            runtime,
            owner: None,
        }
    }

    /// Tools acting for `owner`: they see its jobs and the unowned ones.
    pub fn for_owner(runtime: JobRuntime, owner: OwnerId) -> Self {
        Jobs {
            runtime,
            owner: Some(owner),
        }
    }
}

/// The arguments of `job_output`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
#[schema(description = "")]
pub struct JobOutputArgs {
    /// The job's id, as `bash` returned it.
    pub job_id: String,
    /// Wait for the job to finish first (up to `timeout_ms`).
    #[serde(default)]
    pub wait: bool,
    /// How long to wait, in milliseconds (default 30000, at most 600000).
    #[schema(range(min = 1, max = 600_000))]
    pub timeout_ms: Option<u64>,
}

/// What `job_kill` did, and the job afterwards.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
pub struct KillResult {
    /// `requested`: the job is stopping; `already-finished`: it had ended, nothing was done.
    pub outcome: KillOutcome,
    /// The job after the request.
    pub job: JobSnapshot,
}

#[toolbox]
impl Jobs {
    /// Read the output of a background job since the last read, and its status.
    ///
    /// Each read returns only what is new; once the job has finished, every read returns
    /// its remaining output. With `wait`, waits for the job to finish first (up to
    /// `timeout_ms`); a job still running then is reported as such.
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
        if args.wait {
            let timeout = Duration::from_millis(args.timeout_ms.unwrap_or(DEFAULT_WAIT_MS));
            tokio::select! {
                waited = self.runtime.wait(&args.job_id, timeout, self.owner) => {
                    waited.map_err(job_error)?;
                }
                // Give up waiting without consuming output nobody would receive.
                () = cx.cancellation().cancelled() => {
                    return Err(ToolError::with_code(ErrorCode::Aborted, "tool call aborted"));
                }
            }
        }
        self.runtime
            .read(&args.job_id, self.owner)
            .map_err(job_error)
    }

    /// List the background jobs: id, kind, label and status of each, oldest first.
    #[tool(
        name = "job_list",
        read_only,
        idempotent,
        concurrency_safe,
        render = Self::render_list
    )]
    pub async fn list(&self) -> Vec<JobSnapshot> {
        self.runtime.list(self.owner)
    }

    /// Stop a background job (its whole process group is killed).
    ///
    /// Returns at once: `requested` when the job is now stopping, `already-finished` when
    /// it had ended. Read its final status with `job_output`.
    #[tool(name = "job_kill", destructive, idempotent, render = Self::render_kill)]
    pub async fn kill(
        &self,
        /// The job's id, as `bash` returned it.
        job_id: String,
        /// Why it is stopped (kept with the job).
        reason: Option<String>,
    ) -> Result<KillResult, ToolError> {
        let outcome = self
            .runtime
            .kill(&job_id, reason.as_deref(), self.owner)
            .map_err(job_error)?;
        let job = self
            .runtime
            .snapshot(&job_id, self.owner)
            .map_err(job_error)?;
        Ok(KillResult { outcome, job })
    }

    /// The output, then `[status: <s>]` or `[status: <s>, <detail>]`.
    fn render_output(_args: &JobOutputArgs, out: &JobOutput) -> Vec<ContentBlock> {
        let status = status_line(&out.job);
        let text = out.text.strip_suffix('\n').unwrap_or(&out.text);
        if text.is_empty() {
            vec![ContentBlock::text(status)]
        } else {
            vec![ContentBlock::text(format!("{text}\n{status}"))]
        }
    }

    /// One line per job: `<id> [status: <s>] <label>`.
    #[allow(clippy::ptr_arg)] // the hook receives `&Output`
    fn render_list(_args: &JobsListArgs, jobs: &Vec<JobSnapshot>) -> Vec<ContentBlock> {
        if jobs.is_empty() {
            return vec![ContentBlock::text("no background jobs")];
        }
        let lines: Vec<String> = jobs
            .iter()
            .map(|job| format!("{} {} {}", job.id, status_line(job), job.label))
            .collect();
        vec![ContentBlock::text(lines.join("\n"))]
    }

    fn render_kill(_args: &JobsKillArgs, result: &KillResult) -> Vec<ContentBlock> {
        let what = match result.outcome {
            KillOutcome::Requested => format!("stop requested for job {}", result.job.id),
            KillOutcome::AlreadyFinished => format!("job {} had already finished", result.job.id),
        };
        vec![ContentBlock::text(format!(
            "{what} {}",
            status_line(&result.job)
        ))]
    }
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
