//! Tool calls as MCP tasks (the tasks extension, `io.modelcontextprotocol/tasks`, and
//! revision 2025-11-25's own tasks, [`crate::tasks::rev_2025_11_25`]).
//!
//! A task is a job of the registry's [`JobRuntime`] plus a record in the server's store
//! ([`crate::store`]): the server starts the whole pipeline call (policy, validation,
//! body, output validation) as the job's work, with the job's stop token as the call's
//! cancellation, creates the task's record, and only then answers the `tools/call`.
//! The job belongs to the session's job owner, so its job tools (`job_list`, `job_kill`)
//! see it, and closing the session stops it. The record is what every `tasks/*` request
//! reads; the job (and the call's future) is what only this instance holds, kept in
//! [`SessionTasks`]'s runtime map by task id.
//!
//! The record follows the one state machine ([`crate::store::TaskRecord::apply`]): the
//! call's progress reports set its status message, its questions make it
//! `input_required`, and its end makes it `completed` (tool errors stay tool results,
//! `isError: true`), `cancelled` (its job was stopped) or `failed` (the call's future
//! panicked: an internal JSON-RPC error). A watcher per task, on the instance running
//! it, stops the job when a cancellation is requested (`tasks/cancel` on any instance:
//! the store's [`Wake::Cancel`]) or the record is gone, and records how the job ended.
//!
//! Approval inside a task: when the task's call (or a call it makes) reaches `ask` and no
//! approval handler of the registry answered, and the request that created the task
//! declared form elicitation, the task goes `input_required`. `tasks/get` (and, on
//! sessions with plain notifications, a `notifications/tasks` pushed when the wait
//! starts) carries the approval form (see [`crate::approval`]) as an `elicitation/create`
//! input request under a key unique over the task's life (`approval-1`, `approval-2`, …).
//! `tasks/update` with an `ElicitResult` under that key answers it (the store delivers
//! it to the waiting call as [`Wake::Answered`]), and the task is `working` again. As
//! the extension has it, responses under keys that are not outstanding (never issued,
//! already answered, withdrawn) are ignored; a response under an outstanding key that
//! is not the result of its request is an invalid-params error, and the question stays
//! outstanding. What the task's body asks of its caller (`dsh_runtime::caller`: a
//! form, sampling, roots) is asked the same way, each under a key of its own, answered
//! by an `ElicitResult`, a `CreateMessageResult` or a `ListRootsResult`. `tasks/cancel` while waiting stops the job: the approval is cancelled
//! and the task ends `cancelled` without the call's body having run.
//!
//! A 2025-11-25 task asks with an `elicitation/create` request to the client instead,
//! carrying the related-task `_meta`; while it is outstanding, the task's status is
//! `input_required`.

pub(crate) mod listen;
pub(crate) mod rev_2025_11_25;
pub(crate) mod stateless;
pub(crate) mod wire;

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dsh_runtime::jobs::{
    JobContext, JobId, JobRuntime, JobSettlement, JobSnapshot, JobSpec, JobStatus, OwnerGuard,
    OwnerId, RunningJob,
};
use futures_util::StreamExt as _;
use rmcp::model::{CallToolResult, ElicitResult, InputResponses};
use rmcp::{ErrorData as McpError, Peer, RoleServer};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::store::lease::Lease;
use crate::store::{Applied, Change, Owner, Store, StoreError, TaskModel, TaskRecord, Wake, Wakes};
use crate::tasks::wire::{internal_error, status_notification};
use crate::util::{lock, now_ms};

/// The least time between two status notifications of one task: a client that handles
/// notifications concurrently (rmcp's does) then sees them in the order they were sent.
const NOTIFICATION_SPACING: Duration = Duration::from_millis(20);

/// How often the instance running a task reads its record (see `watch`).
const RECORD_POLL: Duration = Duration::from_secs(2);

/// When each task last had its state pushed to the client, by task id.
type Pushed = Arc<Mutex<HashMap<String, std::time::Instant>>>;

/// Wait until the last status notification of task `id` is [`NOTIFICATION_SPACING`]
/// old, then count one more as sent now.
async fn space_notification(pushed: &Pushed, id: &str) {
    let last = lock(pushed).get(id).copied();
    if let Some(last) = last {
        let wait = NOTIFICATION_SPACING.saturating_sub(last.elapsed());
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }
    lock(pushed).insert(id.to_string(), std::time::Instant::now());
}

/// The tasks of one session (or of the stateless context): the store their records are
/// in, the job owner they run as, and the instance's runtime map.
pub(crate) struct SessionTasks {
    store: Arc<dyn Store>,
    /// This instance: it runs the tasks started here.
    lease: Arc<Lease>,
    jobs: JobRuntime,
    owner: OwnerId,
    /// The owner, when the server opened it for the session (the session's setup named
    /// none): closed with the session.
    opened: Mutex<Option<OwnerGuard>>,
    /// The tasks running on this instance, by task id.
    running: Arc<Mutex<HashMap<String, Local>>>,
    /// When each task last had its state pushed.
    pushed: Pushed,
}

/// What only this instance holds of a running task.
struct Local {
    /// Its job.
    job: JobId,
    /// Applies the call's progress reports to the record, in order.
    progress: mpsc::UnboundedSender<ProgressOp>,
}

enum ProgressOp {
    Report(String),
    /// Answered once every report before it was applied.
    Flush(oneshot::Sender<()>),
}

/// How a task starts (see [`SessionTasks::start`]).
pub(crate) struct TaskStart {
    /// The task's id, or `None` for its job's id.
    pub(crate) id: Option<String>,
    pub(crate) owner: Owner,
    pub(crate) model: TaskModel,
    pub(crate) ttl: Option<Duration>,
    pub(crate) spec: JobSpec,
}

/// What a task's call may do to its task.
#[derive(Clone)]
pub(crate) struct TaskHandle {
    store: Arc<dyn Store>,
    owner: Owner,
    id: String,
    model: TaskModel,
    progress: mpsc::UnboundedSender<ProgressOp>,
    pushed: Pushed,
}

impl TaskHandle {
    /// The task id.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// The model the task was created through.
    pub(crate) fn model(&self) -> TaskModel {
        self.model
    }

    /// A progress report of the call: its message (or `progress/total`) becomes the
    /// task's status message.
    pub(crate) fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let text = match (message, total) {
            (Some(message), _) => message.to_string(),
            (None, Some(total)) => format!("{progress}/{total}"),
            (None, None) => format!("{progress}"),
        };
        let _ = self.progress.send(ProgressOp::Report(text));
    }

    /// Apply `change` to the task.
    pub(crate) async fn change(&self, change: Change) -> Result<Applied, StoreError> {
        self.store.update_task(&self.owner, &self.id, change).await
    }

    /// The task's wake-ups from now on.
    pub(crate) async fn subscribe(&self) -> Result<Wakes, StoreError> {
        self.store.subscribe(&self.id).await
    }

    /// Send the task's state to `peer` in its model's format, if it is still known.
    pub(crate) async fn notify(&self, peer: &Peer<RoleServer>) {
        if let Ok(Some(record)) = self.store.task(&self.owner, &self.id).await {
            space_notification(&self.pushed, &self.id).await;
            let _ = peer.send_notification(status_notification(&record)).await;
        }
    }
}

pub(crate) fn not_found(id: &str) -> McpError {
    McpError::invalid_params(
        format!("Failed to retrieve task: unknown task {id:?}"),
        None,
    )
}

/// A store failure as the JSON-RPC error answering the request.
pub(crate) fn store_error(id: &str, e: StoreError) -> McpError {
    match e {
        StoreError::NotFound { .. } => not_found(id),
        other => McpError::internal_error(other.to_string(), None),
    }
}

impl SessionTasks {
    /// The tasks of a session whose jobs belong to `owner`, or to an owner opened now,
    /// run by the instance `lease`, whose records are kept in its store.
    pub(crate) fn new(lease: Arc<Lease>, jobs: JobRuntime, owner: Option<OwnerId>) -> Self {
        let (owner, opened) = match owner {
            Some(owner) => (owner, None),
            None => {
                let guard = jobs.owner();
                (guard.id(), Some(guard))
            }
        };
        SessionTasks {
            store: lease.store().clone(),
            lease,
            jobs,
            owner,
            opened: Mutex::new(opened),
            running: Arc::default(),
            pushed: Arc::default(),
        }
    }

    /// The store the records are in.
    pub(crate) fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// Close the owner the server opened (its tasks stop; this waits until they settled)
    /// and forget the records of `records` (the session's owner). An owner named by the
    /// session's setup is the setup's to close.
    pub(crate) async fn close(&self, records: Option<&Owner>) {
        let opened = lock(&self.opened).take();
        if let Some(guard) = opened {
            guard.close().await;
        }
        if let Some(owner) = records
            && let Ok(listed) = self.store.tasks(owner).await
        {
            for record in listed {
                let _ = self.store.delete_task(owner, &record.id).await;
            }
        }
    }

    /// The task `id` of `owner` (after the progress this instance has of it was
    /// applied).
    pub(crate) async fn get(&self, owner: &Owner, id: &str) -> Result<TaskRecord, McpError> {
        self.flush(id).await;
        let record = self
            .store
            .task(owner, id)
            .await
            .map_err(|e| store_error(id, e))?
            .ok_or_else(|| not_found(id))?;
        Ok(self.unless_abandoned(owner, record).await)
    }

    /// `record`, failed first when the instance running it has stopped (its lease ran
    /// out, see `crate::store::lease`): its call can never end.
    async fn unless_abandoned(&self, owner: &Owner, record: TaskRecord) -> TaskRecord {
        if record.state.is_terminal() {
            return record;
        }
        let Some(runner) = record.runner.as_deref() else {
            return record;
        };
        if self.lease.alive(runner).await != Some(false) {
            return record;
        }
        let message = "the server instance running this task stopped before it ended";
        let change = Change::Fail {
            error: Value::Object(internal_error(message)),
            message: message.to_string(),
        };
        match self.store.update_task(owner, &record.id, change).await {
            Ok(applied) => applied.record,
            // Ended meanwhile (or gone): what the store has now.
            Err(_) => match self.store.task(owner, &record.id).await {
                Ok(Some(now)) => now,
                _ => record,
            },
        }
    }

    /// Wait until the progress reports of the task `id` running here were applied.
    async fn flush(&self, id: &str) {
        let sender = lock(&self.running).get(id).map(|l| l.progress.clone());
        if let Some(sender) = sender {
            let (tx, rx) = oneshot::channel();
            if sender.send(ProgressOp::Flush(tx)).is_ok() {
                let _ = rx.await;
            }
        }
    }

    /// The tasks of `owner`, oldest first.
    pub(crate) async fn list(&self, owner: &Owner) -> Result<Vec<TaskRecord>, McpError> {
        let listed = self
            .store
            .tasks(owner)
            .await
            .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        let mut checked = Vec::with_capacity(listed.len());
        for record in listed {
            checked.push(self.unless_abandoned(owner, record).await);
        }
        Ok(checked)
    }

    /// Ask the task's call to stop (`tasks/cancel`): the record as it is then. A
    /// terminal task is left as it is.
    pub(crate) async fn cancel(&self, owner: &Owner, id: &str) -> Result<TaskRecord, McpError> {
        let change = Change::RequestCancel {
            reason: "cancelled by the client".to_string(),
        };
        match self.store.update_task(owner, id, change).await {
            Ok(applied) => Ok(applied.record),
            Err(StoreError::Terminal { .. }) => self.get(owner, id).await,
            Err(e) => Err(store_error(id, e)),
        }
    }

    /// Forget the task `id` of `owner` (an expired stateless task): its call is stopped
    /// if it still runs, and the task is unknown from now on.
    pub(crate) async fn forget(&self, owner: &Owner, id: &str) {
        let _ = self.store.delete_task(owner, id).await;
    }

    /// `tasks/update`: give the task's outstanding questions the responses under their
    /// keys (see the module docs). Responses under other keys are ignored.
    pub(crate) async fn update(
        &self,
        owner: &Owner,
        id: &str,
        responses: &InputResponses,
    ) -> Result<(), McpError> {
        let record = self.get(owner, id).await?;
        let mut taken = BTreeMap::new();
        for (key, value) in responses {
            let Some(question) = record.questions.get(key).filter(|q| q.in_band) else {
                continue;
            };
            check_response(id, key, &question.request, value)?;
            taken.insert(key.clone(), value.clone());
        }
        if taken.is_empty() {
            return Ok(());
        }
        match self
            .store
            .update_task(owner, id, Change::Answer { responses: taken })
            .await
        {
            // Ended meanwhile: nothing waits for the answers.
            Ok(_) | Err(StoreError::Terminal { .. }) => Ok(()),
            Err(e) => Err(store_error(id, e)),
        }
    }

    /// Wait until the job of the task `id`, if it runs here, has settled too (a few
    /// seconds at most): what the task's call did after recording its end is done.
    async fn settled_here(&self, id: &str) {
        let job = lock(&self.running).get(id).map(|l| l.job.clone());
        if let Some(job) = job {
            let _ = self
                .jobs
                .wait(&job, Duration::from_secs(5), Some(self.owner))
                .await;
        }
    }

    /// Wait until the task `id` of `owner` is terminal (or `until` ends first: `None`).
    pub(crate) async fn terminal(
        &self,
        owner: &Owner,
        id: &str,
        until: impl Future<Output = ()>,
    ) -> Result<Option<TaskRecord>, McpError> {
        let wait = async {
            loop {
                let mut wakes = self
                    .store
                    .subscribe(id)
                    .await
                    .map_err(|e| store_error(id, e))?;
                let record = self.get(owner, id).await?;
                if record.state.is_terminal() {
                    return Ok(Some(record));
                }
                while let Some(wake) = wakes.next().await {
                    if matches!(wake, Wake::Changed(state) if state.is_terminal()) {
                        break;
                    }
                }
            }
        };
        tokio::select! {
            out = wait => out,
            () = until => Ok(None),
        }
    }

    /// Start a task: its job (running `call` once the record exists), its record, and
    /// its watcher; the record as created.
    pub(crate) async fn start<F, Fut>(
        &self,
        start: TaskStart,
        call: F,
    ) -> Result<TaskRecord, McpError>
    where
        F: FnOnce(JobContext, TaskHandle) -> Fut + Send + 'static,
        Fut: Future<Output = (TaskEnd, String)> + Send + 'static,
    {
        let TaskStart {
            id,
            owner,
            model,
            ttl,
            spec,
        } = start;
        let (gate_tx, gate_rx) = oneshot::channel::<TaskHandle>();
        let jobs = self.jobs.clone();
        let producer = move |job: JobContext| {
            Ok::<_, std::convert::Infallible>(RunningJob::new(run_task(job, jobs, gate_rx, call)))
        };
        let job = self
            .jobs
            .start(spec.owned_by(self.owner), producer)
            .map_err(|e| McpError::internal_error(format!("no task started: {e}"), None))?;
        let id = id.unwrap_or_else(|| job.as_str().to_string());
        let record = self.create_record(&job, &id, &owner, model, ttl).await?;
        let handle = self.hold_locally(&job, &id, owner, model);
        let wakes = match self.store.subscribe(&id).await {
            Ok(wakes) => wakes,
            Err(e) => {
                // The gate closes: the job ends without running the call.
                lock(&self.running).remove(&id);
                let _ = self.store.delete_task(&handle.owner, &id).await;
                return Err(store_error(&id, e));
            }
        };
        tokio::spawn(watch(
            handle.clone(),
            wakes,
            self.jobs.clone(),
            self.owner,
            job,
            self.running.clone(),
        ));
        // The call runs from here on.
        let _ = gate_tx.send(handle);
        Ok(record)
    }

    /// Create the record of the task `id`, run by this instance under its lease: the
    /// record as created. When it cannot be, the job is killed before its call ran.
    async fn create_record(
        &self,
        job: &JobId,
        id: &str,
        owner: &Owner,
        model: TaskModel,
        ttl: Option<Duration>,
    ) -> Result<TaskRecord, McpError> {
        let ttl_ms = ttl.map(crate::util::millis);
        let record =
            TaskRecord::new(id, owner.clone(), model, now_ms(), ttl_ms).run_by(self.lease.id());
        // The lease first: no instance may take the task for abandoned.
        let created = match self.lease.renew().await {
            Ok(()) => self.store.create_task(record.clone()).await,
            Err(e) => Err(e),
        };
        if let Err(e) = created {
            let _ = self
                .jobs
                .kill(job, Some("no task record"), Some(self.owner));
            return Err(McpError::internal_error(
                format!("no task started: {e}"),
                None,
            ));
        }
        Ok(record)
    }

    /// What this instance holds of the task `id` while its call runs here (its job, and
    /// the progress reports applied in order): the handle its call gets.
    fn hold_locally(&self, job: &JobId, id: &str, owner: Owner, model: TaskModel) -> TaskHandle {
        let (progress, reports) = mpsc::unbounded_channel();
        let handle = TaskHandle {
            store: self.store.clone(),
            owner,
            id: id.to_string(),
            model,
            progress: progress.clone(),
            pushed: self.pushed.clone(),
        };
        tokio::spawn(apply_progress(handle.clone(), reports));
        lock(&self.running).insert(
            id.to_string(),
            Local {
                job: job.clone(),
                progress,
            },
        );
        handle
    }
}

/// How a task's call ended.
#[derive(Debug)]
pub(crate) enum TaskEnd {
    /// The call's result, an error of the tool's included (`isError`): the task is
    /// `completed` with it.
    Result(CallToolResult),
    /// The call failed inside the server (a panic contained by the pipeline): the task
    /// is `failed` with an internal JSON-RPC error (`-32603`) carrying this message, and
    /// no result, as a request that failed the same way is answered with an error.
    Failed(String),
}

/// A task's job: wait until its record exists, run the call, record its end.
async fn run_task<F, Fut>(
    job: JobContext,
    jobs: JobRuntime,
    gate: oneshot::Receiver<TaskHandle>,
    call: F,
) -> JobSettlement
where
    F: FnOnce(JobContext, TaskHandle) -> Fut + Send + 'static,
    Fut: Future<Output = (TaskEnd, String)> + Send + 'static,
{
    let Ok(handle) = gate.await else {
        return JobSettlement::killed().with_detail("the task was not created");
    };
    let stop = job.stop_token().clone();
    let id = job.id().clone();
    let (result, text) = call(job, handle.clone()).await;
    flush_progress(&handle).await;
    let change = if stop.is_cancelled() {
        Change::Cancelled {
            reason: stop_reason(jobs.snapshot(&id, None).ok().as_ref()),
        }
    } else {
        match result {
            TaskEnd::Result(result) => match serde_json::to_value(&result) {
                Ok(result) => Change::Complete { result },
                Err(e) => Change::Fail {
                    error: Value::Object(internal_error(&e.to_string())),
                    message: e.to_string(),
                },
            },
            TaskEnd::Failed(message) => Change::Fail {
                error: Value::Object(internal_error(&message)),
                message,
            },
        }
    };
    let _ = handle.change(change).await;
    let settlement = if stop.is_cancelled() {
        JobSettlement::killed().with_detail("cancelled")
    } else {
        JobSettlement::completed()
    };
    settlement.with_output(text)
}

fn stop_reason(snapshot: Option<&JobSnapshot>) -> String {
    snapshot
        .and_then(|s| s.stop_reason.clone())
        .unwrap_or_else(|| "cancelled".to_string())
}

async fn flush_progress(handle: &TaskHandle) {
    let (tx, rx) = oneshot::channel();
    if handle.progress.send(ProgressOp::Flush(tx)).is_ok() {
        let _ = rx.await;
    }
}

/// Apply a task's progress reports to its record, in order, until the task ends.
async fn apply_progress(handle: TaskHandle, mut reports: mpsc::UnboundedReceiver<ProgressOp>) {
    while let Some(op) = reports.recv().await {
        match op {
            ProgressOp::Report(message) => {
                if let Err(StoreError::Terminal { .. } | StoreError::NotFound { .. }) =
                    handle.change(Change::Progress { message }).await
                {
                    // Later reports have nothing to change either.
                }
            }
            ProgressOp::Flush(done) => {
                let _ = done.send(());
            }
        }
    }
}

/// The instance's watcher of a task it runs: stops the job when a cancellation is
/// requested or the record is gone, and records how the job ended.
async fn watch(
    handle: TaskHandle,
    mut wakes: Wakes,
    jobs: JobRuntime,
    owner: OwnerId,
    job: JobId,
    running: Arc<Mutex<HashMap<String, Local>>>,
) {
    // Wake-ups published while the store's connection was down are lost: the record
    // is read now and then as well.
    let mut poll = tokio::time::interval(RECORD_POLL);
    poll.tick().await;
    let settled = loop {
        tokio::select! {
            _ = poll.tick() => match handle.store.task(&handle.owner, handle.id()).await {
                Ok(Some(record)) => {
                    if let Some(reason) = record.cancel_requested.filter(|_| !record.state.is_terminal()) {
                        let _ = jobs.kill(&job, Some(&reason), Some(owner));
                    }
                }
                Ok(None) => {
                    let _ = jobs.kill(&job, Some("the task is gone"), Some(owner));
                }
                Err(_) => {}
            },
            wake = wakes.next() => match wake {
                Some(Wake::Cancel { reason }) => {
                    let _ = jobs.kill(&job, Some(&reason), Some(owner));
                }
                Some(Wake::Changed(state)) if state.is_terminal() => {
                    // Forgotten here once its job settled too.
                    let _ = jobs.wait(&job, Duration::from_secs(5), Some(owner)).await;
                    break None;
                }
                Some(_) => {}
                None => {
                    // Terminal, deleted or expired: a call still running stops.
                    let _ = jobs.kill(&job, Some("the task is gone"), Some(owner));
                    break None;
                }
            },
            snapshot = jobs.wait(&job, Duration::from_secs(3600), Some(owner)) => match snapshot {
                Ok(s) if s.status.is_terminal() => break Some(s),
                Ok(_) => {}
                Err(_) => break None,
            },
        }
    };
    if let Some(snapshot) = settled {
        // The call records its own end; a job that ended otherwise (its future
        // panicked) is recorded here. A terminal record refuses this.
        let change = match snapshot.status {
            JobStatus::Failed => {
                let detail = snapshot.detail.as_deref().unwrap_or("the task failed");
                Change::Fail {
                    error: Value::Object(internal_error(detail)),
                    message: detail.to_string(),
                }
            }
            JobStatus::Killed => Change::Cancelled {
                reason: stop_reason(Some(&snapshot)),
            },
            _ => Change::Fail {
                error: Value::Object(internal_error("the call ended without a result")),
                message: "the call ended without a result".to_string(),
            },
        };
        let _ = handle.change(change).await;
    }
    lock(&running).remove(handle.id());
}

/// Send the task's final state (in its model's format) once it is terminal, unless the
/// session ends first (`until`).
pub(crate) fn notify_when_settled(
    peer: Peer<RoleServer>,
    tasks: Arc<SessionTasks>,
    owner: Owner,
    id: String,
    until: CancellationToken,
) {
    tokio::spawn(async move {
        if let Ok(Some(record)) = tasks.terminal(&owner, &id, until.cancelled()).await {
            // After the call's own last notifications (its job settles after them),
            // spaced from the last one (see `NOTIFICATION_SPACING`).
            tasks.settled_here(&id).await;
            space_notification(&tasks.pushed, &id).await;
            lock(&tasks.pushed).remove(&id);
            let _ = peer.send_notification(status_notification(&record)).await;
        }
    });
}

/// Refuse a response that is not the result of its question's request: an
/// `ElicitResult` for `elicitation/create`, a `CreateMessageResult` for
/// `sampling/createMessage`, a `ListRootsResult` for `roots/list`.
fn check_response(id: &str, key: &str, request: &Value, value: &Value) -> Result<(), McpError> {
    let method = request
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let (what, checked) = match method {
        "sampling/createMessage" => (
            "sampling result (CreateMessageResult)",
            crate::caller::read_answer(dsh_runtime::caller::RequestKind::Sample, value)
                .map(drop)
                .map_err(|e| e.to_string()),
        ),
        "roots/list" => (
            "roots result (ListRootsResult)",
            crate::caller::read_answer(dsh_runtime::caller::RequestKind::Roots, value)
                .map(drop)
                .map_err(|e| e.to_string()),
        ),
        _ => (
            "elicitation result (ElicitResult)",
            serde_json::from_value::<ElicitResult>(value.clone())
                .map(drop)
                .map_err(|e| e.to_string()),
        ),
    };
    checked.map_err(|e| {
        McpError::invalid_params(
            format!("tasks/update of task {id:?}: inputResponses.{key} is not a {what}: {e}"),
            None,
        )
    })
}
