//! Tool calls as MCP tasks (the tasks extension, `io.modelcontextprotocol/tasks`).
//!
//! A task is a job of the registry's [`JobRuntime`]: the server starts the whole pipeline
//! call (policy, validation, body, output validation) as the job's work, with the job's
//! stop token as the call's cancellation, and answers the `tools/call` at once with the
//! job's id as the task id. The job belongs to the session's owner, so a session sees
//! only its own tasks, its job tools (`job_list`, `job_kill`) see them too, and closing
//! the session stops them. `tasks/get` reads the job's snapshot and, once it settled, the
//! call's stored `CallToolResult`; `tasks/cancel` kills the job.
//!
//! Status mapping: `running` is `working`, or `input_required` while the call waits for
//! its user's answer (see below); `stopping` is `working`; `completed` is `completed`
//! (tool errors stay tool results, `isError: true`), `killed` is `cancelled`, `failed`
//! (the call's future panicked) is `failed` with an internal JSON-RPC error.
//!
//! Status notifications: on sessions with `initialize`, a `notifications/tasks` with the
//! final state (and one when a wait for an answer starts, and when it is answered); on
//! 2026-07-28, on the
//! `subscriptions/listen` streams whose filter names the task (`crate::tasks_listen`).
//!
//! Approval inside a task: when the task's call (or a call it makes) reaches `ask` and no
//! approval handler of the registry answered, and the request that created the task
//! declared form elicitation, the task goes `input_required`. `tasks/get` (and, on
//! sessions with plain notifications, a `notifications/tasks` pushed when the wait
//! starts) carries the approval form (see [`crate::approval`]) as an `elicitation/create`
//! input request under a key unique over the task's life (`approval-1`, `approval-2`, …).
//! `tasks/update` with an `ElicitResult` under that key answers it, and the task is
//! `working` again. As the extension has it, responses under keys that are not
//! outstanding (never issued, already answered, withdrawn) are ignored; a response under
//! an outstanding key that is not an `ElicitResult` is an invalid-params error, and the
//! question stays outstanding. `tasks/cancel` while waiting stops the job: the approval
//! is cancelled and the task ends `cancelled` without the call's body having run. A
//! client that did not declare form elicitation cannot be asked: the call gets the
//! denial of a call with no approval handler, its text saying so.
//!
//! A 2025-11-25 task ([`crate::tasks_core`]) asks with an `elicitation/create` request to
//! the client instead, carrying the related-task `_meta`; while it is outstanding, the
//! task's status is `input_required`.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use dsh_runtime::jobs::{JobError, JobId, JobRuntime, JobSnapshot, JobStatus, OwnerGuard, OwnerId};
use rmcp::model::{
    CallToolResult, DetailedTask, ElicitResult, InputRequest, InputRequests, InputResponses,
    JsonObject, ServerNotification, Task, TaskPayload, TaskStatus, TaskStatusNotification,
    TaskStatusNotificationParams,
};
use rmcp::{ErrorData as McpError, Peer, RoleServer};
use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// The polling interval suggested to clients, in milliseconds.
pub(crate) const POLL_INTERVAL_MS: u64 = 500;

/// The tasks of one session: the job owner they run as, and what each task adds to its
/// job (the stored result, the latest status message).
pub(crate) struct SessionTasks {
    jobs: JobRuntime,
    owner: OwnerId,
    /// The owner, when the server opened it for the session (the session's setup named
    /// none): closed with the session.
    opened: Mutex<Option<OwnerGuard>>,
    entries: Mutex<HashMap<JobId, Arc<TaskEntry>>>,
}

impl SessionTasks {
    /// The tasks of a session whose jobs belong to `owner`, or to an owner opened now.
    pub(crate) fn new(jobs: JobRuntime, owner: Option<OwnerId>) -> Self {
        let (owner, opened) = match owner {
            Some(owner) => (owner, None),
            None => {
                let guard = jobs.owner();
                (guard.id(), Some(guard))
            }
        };
        SessionTasks {
            jobs,
            owner,
            opened: Mutex::new(opened),
            entries: Mutex::default(),
        }
    }

    pub(crate) fn jobs(&self) -> &JobRuntime {
        &self.jobs
    }

    pub(crate) fn owner(&self) -> OwnerId {
        self.owner
    }

    /// Close the owner the server opened (its tasks stop; this waits until they settled).
    /// An owner named by the session's setup is the setup's to close.
    pub(crate) async fn close(&self) {
        let opened = lock(&self.opened).take();
        if let Some(guard) = opened {
            guard.close().await;
        }
    }

    /// Remember the task `id` started with `entry`.
    pub(crate) fn insert(&self, id: JobId, entry: Arc<TaskEntry>) {
        lock(&self.entries).insert(id, entry);
    }

    /// Forget the task `id` (an expired stateless task): it is unknown from now on.
    pub(crate) fn forget(&self, id: &str) {
        lock(&self.entries).remove(id);
    }

    /// The task as `tasks/get` answers it.
    pub(crate) fn get(&self, id: &str) -> Result<DetailedTask, McpError> {
        let (snapshot, entry) = self.lookup(id)?;
        Ok(detailed(&snapshot, &entry))
    }

    /// Ask the task's job to stop (`tasks/cancel`). A settled task is left as it is.
    pub(crate) fn cancel(&self, id: &str) -> Result<(), McpError> {
        self.lookup(id)?;
        match self
            .jobs
            .kill(id, Some("cancelled by the client"), Some(self.owner))
        {
            Ok(_) => Ok(()),
            Err(JobError::NotFound { .. }) => Err(not_found(id)),
            Err(e) => Err(McpError::internal_error(e.to_string(), None)),
        }
    }

    /// The ids of the session's tasks, oldest first (job ids sort by start).
    pub(crate) fn ids(&self) -> Vec<JobId> {
        let mut ids: Vec<JobId> = lock(&self.entries).keys().cloned().collect();
        ids.sort_by_cached_key(|id| {
            let started = self
                .jobs
                .snapshot(id, Some(self.owner))
                .map_or(u64::MAX, |s| s.started_at);
            (started, id.as_str().to_string())
        });
        ids
    }

    /// `tasks/update`: give the task's outstanding questions the responses under their
    /// keys (see the module docs). Responses under other keys are ignored.
    pub(crate) fn update(&self, id: &str, responses: &InputResponses) -> Result<(), McpError> {
        let (_, entry) = self.lookup(id)?;
        entry.answer(id, responses)
    }

    /// The job's snapshot and the entry of the task `id`, when it is one of this
    /// session's.
    pub(crate) fn lookup(&self, id: &str) -> Result<(JobSnapshot, Arc<TaskEntry>), McpError> {
        let entry = lock(&self.entries).get(id).cloned();
        // The runtime decides visibility: another owner's id is unknown here.
        let snapshot = self.jobs.snapshot(id, Some(self.owner)).ok();
        match (snapshot, entry) {
            (Some(snapshot), Some(entry)) => Ok((snapshot, entry)),
            _ => Err(not_found(id)),
        }
    }
}

pub(crate) fn not_found(id: &str) -> McpError {
    McpError::invalid_params(
        format!("Failed to retrieve task: unknown task {id:?}"),
        None,
    )
}

/// What a task adds to its job: the call's result once it returned, its latest status
/// message (from the call's progress reports), and the questions its call waits on.
#[derive(Default)]
pub(crate) struct TaskEntry {
    state: Mutex<EntryState>,
    /// Created by a 2025-11-25 `tools/call` with `params.task` (see `crate::tasks_core`),
    /// not through the extension.
    pub(crate) core: bool,
    /// Told of each change of the entry's state (for listen streams following the task,
    /// see `crate::tasks_listen`).
    changes: Changes,
}

/// A change signal: receivers wake after each [`Changes::touch`].
struct Changes(tokio::sync::watch::Sender<()>);

impl Default for Changes {
    fn default() -> Self {
        Changes(tokio::sync::watch::channel(()).0)
    }
}

impl Changes {
    fn touch(&self) {
        self.0.send_replace(());
    }
}

#[derive(Default)]
struct EntryState {
    result: Option<CallToolResult>,
    status_message: Option<String>,
    /// When the status message last changed, in milliseconds since the Unix epoch.
    updated_ms: u64,
    /// The questions the call waits on, by key.
    input: BTreeMap<String, Outstanding>,
    /// How many questions the task asked so far (the last key's number).
    asked: u64,
}

/// A question the task's call waits on.
struct Outstanding {
    /// The `elicitation/create` request, as `tasks/get` shows it.
    request: InputRequest,
    /// Where `tasks/update` sends the answer; `None` for a 2025-11-25 task, whose
    /// question went to the client as a request and is answered there.
    answer: Option<oneshot::Sender<ElicitResult>>,
}

/// The prefix of a task's input request keys (`approval-1`, `approval-2`, …).
const INPUT_KEY_PREFIX: &str = "approval-";

impl TaskEntry {
    /// The entry of a new task (`core`: created by a 2025-11-25 `tools/call`).
    pub(crate) fn new(core: bool) -> Self {
        TaskEntry {
            core,
            ..TaskEntry::default()
        }
    }

    /// Store the call's result (before its job settles).
    pub(crate) fn finish(&self, result: CallToolResult) {
        let mut state = lock(&self.state);
        state.result = Some(result);
        state.updated_ms = now_ms();
        self.changes.touch();
    }

    /// Put a question to the client through the task (`tasks/get` shows it, until it is
    /// answered by `tasks/update` or withdrawn with [`TaskEntry::withdraw`]): its key and
    /// where its answer arrives.
    pub(crate) fn ask(&self, request: InputRequest) -> (String, oneshot::Receiver<ElicitResult>) {
        let (tx, rx) = oneshot::channel();
        (self.outstanding(request, Some(tx)), rx)
    }

    /// Mark a question sent to the client as a request of its own (a 2025-11-25 task's
    /// `elicitation/create`) as outstanding, until [`TaskEntry::withdraw`]: the task is
    /// `input_required` meanwhile. Its key.
    pub(crate) fn asked_elsewhere(&self, request: InputRequest) -> String {
        self.outstanding(request, None)
    }

    fn outstanding(
        &self,
        request: InputRequest,
        answer: Option<oneshot::Sender<ElicitResult>>,
    ) -> String {
        let mut state = lock(&self.state);
        state.asked += 1;
        let key = format!("{INPUT_KEY_PREFIX}{}", state.asked);
        state
            .input
            .insert(key.clone(), Outstanding { request, answer });
        state.updated_ms = now_ms();
        self.changes.touch();
        key
    }

    /// The question `key` is over (answered, or its call stopped waiting).
    pub(crate) fn withdraw(&self, key: &str) {
        let mut state = lock(&self.state);
        if state.input.remove(key).is_some() {
            state.updated_ms = now_ms();
            self.changes.touch();
        }
    }

    /// Answer the outstanding questions `responses` has keys of (`tasks/update` of task
    /// `id`). Every response under an outstanding key must be an `ElicitResult`, or none
    /// is taken (invalid params); responses under other keys are ignored.
    fn answer(&self, id: &str, responses: &InputResponses) -> Result<(), McpError> {
        let mut state = lock(&self.state);
        let mut answers = Vec::new();
        for (key, value) in responses {
            let Some(outstanding) = state.input.get(key) else {
                continue;
            };
            if outstanding.answer.is_none() {
                // Asked as a request of its own: its answer is that request's response.
                continue;
            }
            let answer = serde_json::from_value::<ElicitResult>(value.clone()).map_err(|e| {
                McpError::invalid_params(
                    format!(
                        "tasks/update of task {id:?}: inputResponses.{key} is not an \
                         elicitation result (ElicitResult): {e}"
                    ),
                    None,
                )
            })?;
            answers.push((key.clone(), answer));
        }
        if answers.is_empty() {
            return Ok(());
        }
        for (key, answer) in answers {
            if let Some(Outstanding {
                answer: Some(to_call),
                ..
            }) = state.input.remove(&key)
            {
                // The call may have stopped waiting meanwhile (cancelled): nothing to do.
                let _ = to_call.send(answer);
            }
        }
        state.updated_ms = now_ms();
        self.changes.touch();
        Ok(())
    }

    /// Wakes after each change of the entry (result, questions, status message).
    pub(crate) fn changes(&self) -> tokio::sync::watch::Receiver<()> {
        self.changes.0.subscribe()
    }

    /// A progress report of the call: its message (or `progress/total`) becomes the
    /// task's status message.
    pub(crate) fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let text = match (message, total) {
            (Some(message), _) => message.to_string(),
            (None, Some(total)) => format!("{progress}/{total}"),
            (None, None) => format!("{progress}"),
        };
        let mut state = lock(&self.state);
        state.status_message = Some(text);
        state.updated_ms = now_ms();
        self.changes.touch();
    }
}

/// The task `tasks/get` returns for a job and its entry.
pub(crate) fn detailed(snapshot: &JobSnapshot, entry: &TaskEntry) -> DetailedTask {
    let state = lock(&entry.state);
    let updated = snapshot
        .started_at
        .max(state.updated_ms)
        .max(snapshot.finished_at.unwrap_or(0));
    let mut task = Task::new(
        snapshot.id.as_str(),
        TaskStatus::Working,
        iso8601(snapshot.started_at),
        iso8601(updated),
    )
    .with_poll_interval_ms(POLL_INTERVAL_MS);
    // Tasks live as long as their session: no time-to-live.
    task.ttl_ms = None;
    task.status_message = state.status_message.clone();
    let payload = match snapshot.status {
        JobStatus::Completed => match &state.result {
            Some(result) => TaskPayload::Completed {
                result: json_object(result),
            },
            None => TaskPayload::Failed {
                error: internal_error("the call ended without a result"),
            },
        },
        JobStatus::Killed => {
            task.status_message = Some(
                snapshot
                    .stop_reason
                    .clone()
                    .unwrap_or_else(|| "cancelled".to_string()),
            );
            TaskPayload::Cancelled
        }
        JobStatus::Failed => {
            let detail = snapshot.detail.as_deref().unwrap_or("the task failed");
            task.status_message = Some(detail.to_string());
            TaskPayload::Failed {
                error: internal_error(detail),
            }
        }
        JobStatus::Stopping => {
            task.status_message = Some("cancelling".to_string());
            TaskPayload::Working
        }
        _ if !state.input.is_empty() => TaskPayload::InputRequired {
            input_requests: state
                .input
                .iter()
                .map(|(key, o)| (key.clone(), o.request.clone()))
                .collect::<InputRequests>(),
        },
        _ => TaskPayload::Working,
    };
    DetailedTask::new(task, payload)
}

fn json_object(result: &CallToolResult) -> JsonObject {
    match serde_json::to_value(result) {
        Ok(Value::Object(map)) => map,
        _ => internal_error("the call's result does not serialize as an object"),
    }
}

fn internal_error(message: &str) -> JsonObject {
    let error = McpError::internal_error(message.to_string(), None);
    match serde_json::to_value(error) {
        Ok(Value::Object(map)) => map,
        _ => JsonObject::new(),
    }
}

/// Send `notifications/tasks` (for a task of the extension) or
/// `notifications/tasks/status` (for a 2025-11-25 task) with the task's final state once
/// its job settled, unless the session ends first (`until`).
pub(crate) fn notify_when_settled(
    peer: Peer<RoleServer>,
    jobs: JobRuntime,
    owner: OwnerId,
    id: JobId,
    entry: Arc<TaskEntry>,
    until: CancellationToken,
) {
    tokio::spawn(async move {
        let settled = async {
            loop {
                match jobs.wait(&id, Duration::from_secs(3600), Some(owner)).await {
                    Ok(snapshot) if snapshot.status.is_terminal() => return Some(snapshot),
                    Ok(_) => {}
                    Err(_) => return None,
                }
            }
        };
        let snapshot = tokio::select! {
            snapshot = settled => snapshot,
            () = until.cancelled() => None,
        };
        if let Some(snapshot) = snapshot {
            let task = detailed(&snapshot, &entry);
            let _ = peer
                .send_notification(status_notification(&task, entry.core))
                .await;
        }
    });
}

/// Send the task's current state as `notifications/tasks` (a task of the extension) or
/// `notifications/tasks/status` (a 2025-11-25 task), if its job is still known.
pub(crate) async fn notify_status(
    peer: &Peer<RoleServer>,
    jobs: &JobRuntime,
    owner: OwnerId,
    id: &JobId,
    entry: &TaskEntry,
) {
    let Ok(snapshot) = jobs.snapshot(id, Some(owner)) else {
        return;
    };
    let task = detailed(&snapshot, entry);
    let _ = peer
        .send_notification(status_notification(&task, entry.core))
        .await;
}

/// The status notification of a task's state, in its model's format.
fn status_notification(task: &DetailedTask, core: bool) -> ServerNotification {
    if core {
        return crate::tasks_core::status_notification(task);
    }
    ServerNotification::TaskStatusNotification(TaskStatusNotification::new(
        TaskStatusNotificationParams::new(task.clone()),
    ))
}

/// Milliseconds since the Unix epoch (0 if the clock is before it).
fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `ms` since the Unix epoch as an ISO 8601 UTC timestamp, e.g.
/// `2026-07-28T10:30:00.250Z`.
pub(crate) fn iso8601(ms: u64) -> String {
    let secs = ms / 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX / 2);
    let rem = secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        ms % 1000
    )
}

/// The proleptic Gregorian date of a count of days since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (
        year,
        u32::try_from(month).unwrap_or(1),
        u32::try_from(day).unwrap_or(1),
    )
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::iso8601;

    #[test]
    fn timestamps_are_iso_8601_utc() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        // 2000-02-29 (a leap day in a century leap year) 12:34:56.789.
        assert_eq!(iso8601(951_827_696_789), "2000-02-29T12:34:56.789Z");
        assert_eq!(iso8601(1_785_234_600_000), "2026-07-28T10:30:00.000Z");
    }
}
