//! The task state machine: a [`TaskRecord`] and the [`Change`]s that move it.
//!
//! Every store applies changes with [`TaskRecord::apply`], so the rules below hold
//! whatever keeps the records:
//!
//! - a task starts `working`;
//! - a question ([`Change::Ask`]) makes it `input_required` until every question is
//!   answered ([`Change::Answer`]) or withdrawn ([`Change::Withdraw`]), then it is
//!   `working` again;
//! - a cancellation request ([`Change::RequestCancel`]) leaves it `working` with the
//!   status message `cancelling` (its questions are withdrawn) until its call ends;
//! - it ends `completed` (with the call's result), `failed` (with the JSON-RPC error) or
//!   `cancelled`, and a terminal state never changes: every later change is refused
//!   with [`StoreError::Terminal`] and leaves the record as it was;
//! - a record with a time to live is gone once `created_ms + ttl_ms` has passed.
//!
//! Records serialize as JSON (serde) with a [`TaskRecord::version`], so a store outside
//! the process can keep them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::StoreError;

/// The version of the record format this crate writes.
pub const RECORD_VERSION: u32 = 1;

/// The prefix of a task's question keys (`approval-1`, `approval-2`, …).
pub const QUESTION_KEY_PREFIX: &str = "approval-";

/// Who a task or an approval state belongs to: a session, or the credentials of a
/// request served statelessly. Only the same owner sees it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Owner(String);

impl Owner {
    /// The owner named `name` (an opaque text; equal texts are the same owner).
    pub fn new(name: impl Into<String>) -> Self {
        Owner(name.into())
    }

    /// The owner's name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The protocol model a task was created through: which wire format its client reads.
/// The state machine is the same for both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TaskModel {
    /// The tasks extension (`io.modelcontextprotocol/tasks`, 2026-07-28 and sessions
    /// that declared it): questions are answered with `tasks/update`.
    Extension,
    /// Protocol revision 2025-11-25's own tasks: questions go to the client as
    /// `elicitation/create` requests of their own. Stored as `core2025`, its name before
    /// it was named by its revision, so records written then still read.
    #[serde(rename = "core2025")]
    Rev2025_11_25,
}

impl TaskModel {
    /// The former name of [`TaskModel::Rev2025_11_25`].
    #[deprecated(note = "renamed to `TaskModel::Rev2025_11_25`")]
    #[allow(non_upper_case_globals)]
    pub const Core2025: TaskModel = TaskModel::Rev2025_11_25;
}

/// Where a task is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    /// The call runs.
    Working,
    /// The call waits for the answer to a question.
    InputRequired,
    /// The call returned (its result may be a tool error).
    Completed,
    /// The call failed without a result.
    Failed,
    /// The call was stopped.
    Cancelled,
}

impl TaskState {
    /// `completed`, `failed` and `cancelled`, which never change.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskState::Completed | TaskState::Failed | TaskState::Cancelled
        )
    }
}

/// A question a task's call waits on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Question {
    /// The input request as the client is shown it (an `elicitation/create` request).
    pub request: Value,
    /// Answered through the task (`tasks/update`): `true`; asked as a request of its own
    /// to the client, and answered there: `false`.
    pub in_band: bool,
}

/// What a task ended with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The call's result (a `CallToolResult`, as JSON).
    Result(Value),
    /// The JSON-RPC error the task failed with.
    Error(Value),
}

/// A task as a store keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskRecord {
    /// The record format's version ([`RECORD_VERSION`] when written by this crate).
    pub version: u32,
    /// The task id clients know.
    pub id: String,
    /// Who may see it.
    pub owner: Owner,
    /// The model it was created through.
    pub model: TaskModel,
    /// Where it is.
    pub state: TaskState,
    /// The latest status message.
    pub status_message: Option<String>,
    /// Created at, in milliseconds since the Unix epoch.
    pub created_ms: u64,
    /// Last changed at, in milliseconds since the Unix epoch.
    pub updated_ms: u64,
    /// Kept this long from its creation (`None`: until deleted).
    pub ttl_ms: Option<u64>,
    /// The questions its call waits on, by key.
    pub questions: BTreeMap<String, Question>,
    /// How many questions it asked so far (the last key's number).
    pub asked: u64,
    /// Why it is being cancelled, once a cancellation was requested.
    pub cancel_requested: Option<String>,
    /// What it ended with (a `cancelled` task has none).
    pub outcome: Option<Outcome>,
    /// The server instance running its call (see [`super::Store::renew_instance`]):
    /// when its lease has run out while the task is not terminal, the task is failed.
    #[serde(default)]
    pub runner: Option<String>,
}

/// A change of a task, applied atomically by a store ([`super::Store::update_task`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Change {
    /// Put a question (its key is in [`Applied::key`]).
    Ask {
        /// The input request shown.
        request: Value,
        /// Answered through the task (see [`Question::in_band`]).
        in_band: bool,
    },
    /// The question `key` is over (answered elsewhere, or its call stopped waiting).
    Withdraw {
        /// Its key.
        key: String,
    },
    /// Answer outstanding in-band questions: each response under an outstanding in-band
    /// key is taken (and sent to the call as [`Wake::Answered`]); others are ignored.
    Answer {
        /// Responses by key.
        responses: BTreeMap<String, Value>,
    },
    /// A progress report: the new status message.
    Progress {
        /// The message.
        message: String,
    },
    /// Ask the task's call to stop (sent to it as [`Wake::Cancel`]).
    RequestCancel {
        /// Why.
        reason: String,
    },
    /// The call returned this result: `completed`.
    Complete {
        /// The `CallToolResult`, as JSON.
        result: Value,
    },
    /// The call failed: `failed`.
    Fail {
        /// The JSON-RPC error.
        error: Value,
        /// The status message.
        message: String,
    },
    /// The call was stopped: `cancelled`.
    Cancelled {
        /// The status message.
        reason: String,
    },
}

/// A wake-up for whoever follows a task ([`super::Store::subscribe`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Wake {
    /// The record changed; it is now in this state.
    Changed(TaskState),
    /// The question `key` was answered with `answer`.
    Answered {
        /// The question's key.
        key: String,
        /// The response, as the client sent it.
        answer: Value,
    },
    /// A cancellation was requested.
    Cancel {
        /// Why.
        reason: String,
    },
}

/// What applying a change did.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Applied {
    /// The record after the change.
    pub record: TaskRecord,
    /// The key of the question a [`Change::Ask`] put.
    pub key: Option<String>,
    /// The wake-ups to publish, in order.
    pub wakes: Vec<Wake>,
}

impl TaskRecord {
    /// A new `working` task created at `now_ms`.
    pub fn new(
        id: impl Into<String>,
        owner: Owner,
        model: TaskModel,
        now_ms: u64,
        ttl_ms: Option<u64>,
    ) -> Self {
        TaskRecord {
            version: RECORD_VERSION,
            id: id.into(),
            owner,
            model,
            state: TaskState::Working,
            status_message: None,
            created_ms: now_ms,
            updated_ms: now_ms,
            ttl_ms,
            questions: BTreeMap::new(),
            asked: 0,
            cancel_requested: None,
            outcome: None,
            runner: None,
        }
    }

    /// The same record, run by the server instance `instance`.
    #[must_use]
    pub fn run_by(mut self, instance: impl Into<String>) -> Self {
        self.runner = Some(instance.into());
        self
    }

    /// Check that this crate reads the record's format version.
    ///
    /// # Errors
    ///
    /// [`StoreError::Malformed`] naming `key` for another version.
    pub fn check_version(&self, key: &str) -> Result<(), StoreError> {
        check_version_of(u64::from(self.version), key)
    }

    /// Whether the record's time to live has passed at `now_ms`.
    pub fn expired(&self, now_ms: u64) -> bool {
        self.ttl_ms
            .is_some_and(|ttl| now_ms >= self.created_ms.saturating_add(ttl))
    }

    /// Apply `change` at `now_ms` (see the module docs); on a refusal the record is
    /// left as it was.
    ///
    /// # Errors
    ///
    /// [`StoreError::Terminal`] when the task is already terminal.
    pub fn apply(&mut self, change: Change, now_ms: u64) -> Result<Applied, StoreError> {
        if self.state.is_terminal() {
            return Err(StoreError::Terminal {
                id: self.id.clone(),
                state: self.state,
            });
        }
        let mut key = None;
        let mut wakes = Vec::new();
        let changed = match change {
            Change::Ask { request, in_band } => {
                self.asked += 1;
                let k = format!("{QUESTION_KEY_PREFIX}{}", self.asked);
                self.questions
                    .insert(k.clone(), Question { request, in_band });
                key = Some(k);
                true
            }
            Change::Withdraw { key } => self.questions.remove(&key).is_some(),
            Change::Answer { responses } => {
                for (k, answer) in responses {
                    if self.questions.get(&k).is_some_and(|q| q.in_band) {
                        self.questions.remove(&k);
                        wakes.push(Wake::Answered { key: k, answer });
                    }
                }
                !wakes.is_empty()
            }
            Change::Progress { message } => {
                self.status_message = Some(message);
                true
            }
            Change::RequestCancel { reason } => {
                if self.cancel_requested.is_some() {
                    false
                } else {
                    self.questions.clear();
                    self.status_message = Some("cancelling".to_string());
                    self.cancel_requested = Some(reason.clone());
                    wakes.push(Wake::Cancel { reason });
                    true
                }
            }
            Change::Complete { result } => {
                self.settle(TaskState::Completed, Some(Outcome::Result(result)));
                true
            }
            Change::Fail { error, message } => {
                self.status_message = Some(message);
                self.settle(TaskState::Failed, Some(Outcome::Error(error)));
                true
            }
            Change::Cancelled { reason } => {
                self.status_message = Some(reason);
                self.settle(TaskState::Cancelled, None);
                true
            }
        };
        if changed {
            if !self.state.is_terminal() {
                self.state = if self.questions.is_empty() || self.cancel_requested.is_some() {
                    TaskState::Working
                } else {
                    TaskState::InputRequired
                };
            }
            self.updated_ms = now_ms.max(self.updated_ms);
            wakes.push(Wake::Changed(self.state));
        }
        Ok(Applied {
            record: self.clone(),
            key,
            wakes,
        })
    }

    fn settle(&mut self, state: TaskState, outcome: Option<Outcome>) {
        self.questions.clear();
        self.state = state;
        self.outcome = outcome;
    }
}

/// A single-use approval state (a `requestState` of protocol 2026-07-28): taken at most
/// once ([`super::Store::take_approval`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ApprovalRecord {
    /// The record format's version.
    pub version: u32,
    /// The state's nonce (what the sealed state names).
    pub nonce: String,
    /// Who the suspended call belongs to.
    pub owner: Owner,
    /// Valid until, in milliseconds since the Unix epoch.
    pub expires_ms: u64,
    /// The tool of the suspended call.
    #[serde(default)]
    pub tool: String,
    /// The server instance holding the suspended call.
    #[serde(default)]
    pub holder: Option<String>,
    /// Whether another instance may answer the retry by running the call again from
    /// the start with the approval given: nothing of the call has run yet (the question
    /// is the call's own policy). `false` for a question asked mid-run (a code-mode
    /// program's tool call): only the holder can go on.
    #[serde(default)]
    pub rerun: bool,
}

impl ApprovalRecord {
    /// An approval state `nonce` of `owner`, valid until `expires_ms`.
    pub fn new(nonce: impl Into<String>, owner: Owner, expires_ms: u64) -> Self {
        ApprovalRecord {
            version: RECORD_VERSION,
            nonce: nonce.into(),
            owner,
            expires_ms,
            tool: String::new(),
            holder: None,
            rerun: false,
        }
    }

    /// The same state, of a call of `tool` held by the server instance `holder`, which
    /// another instance may run again (`rerun`, see [`ApprovalRecord::rerun`]).
    #[must_use]
    pub fn held_by(
        mut self,
        tool: impl Into<String>,
        holder: impl Into<String>,
        rerun: bool,
    ) -> Self {
        self.tool = tool.into();
        self.holder = Some(holder.into());
        self.rerun = rerun;
        self
    }

    /// Check that this crate reads the record's format version.
    ///
    /// # Errors
    ///
    /// [`StoreError::Malformed`] naming `key` for another version.
    pub fn check_version(&self, key: &str) -> Result<(), StoreError> {
        check_version_of(u64::from(self.version), key)
    }
}

/// Check that this crate reads records of format `version` (`key`: where it is kept).
pub(crate) fn check_version_of(version: u64, key: &str) -> Result<(), StoreError> {
    if version == u64::from(RECORD_VERSION) {
        Ok(())
    } else {
        Err(StoreError::Malformed {
            key: key.to_string(),
            reason: format!(
                "it is in record format version {version}; this server reads version {RECORD_VERSION}"
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> TaskRecord {
        TaskRecord::new("t", Owner::new("o"), TaskModel::Extension, 10, None)
    }

    #[test]
    fn questions_make_a_task_input_required_until_answered() {
        let mut r = record();
        let asked = r
            .apply(
                Change::Ask {
                    request: Value::Null,
                    in_band: true,
                },
                11,
            )
            .unwrap();
        assert_eq!(asked.key.as_deref(), Some("approval-1"));
        assert_eq!(r.state, TaskState::InputRequired);
        let answered = r
            .apply(
                Change::Answer {
                    responses: [("approval-1".to_string(), Value::from(1))].into(),
                },
                12,
            )
            .unwrap();
        assert_eq!(
            answered.wakes,
            vec![
                Wake::Answered {
                    key: "approval-1".into(),
                    answer: Value::from(1)
                },
                Wake::Changed(TaskState::Working)
            ]
        );
        assert_eq!(r.updated_ms, 12);
    }

    /// The model keeps its stored name: a record written before the variant was named by
    /// its revision reads as it, and a record written now is the same text.
    #[test]
    fn a_2025_11_25_record_keeps_its_stored_model_name() {
        let stored = r#"{"version":1,"id":"t","owner":"o","model":"core2025","state":"working","status_message":null,"created_ms":10,"updated_ms":10,"ttl_ms":null,"questions":{},"asked":0,"cancel_requested":null,"outcome":null}"#;
        let read: TaskRecord = serde_json::from_str(stored).unwrap();
        assert_eq!(read.model, TaskModel::Rev2025_11_25);
        let written = TaskRecord::new("t", Owner::new("o"), TaskModel::Rev2025_11_25, 10, None);
        assert_eq!(read, written);
        assert_eq!(
            serde_json::to_value(&written).unwrap()["model"],
            serde_json::json!("core2025")
        );
        #[allow(deprecated)]
        let former = TaskModel::Core2025;
        assert_eq!(former, TaskModel::Rev2025_11_25);
    }

    #[test]
    fn a_terminal_state_never_changes() {
        let mut r = record();
        r.apply(
            Change::Complete {
                result: Value::Null,
            },
            11,
        )
        .unwrap();
        let before = r.clone();
        for change in [
            Change::Progress {
                message: "x".into(),
            },
            Change::Cancelled { reason: "x".into() },
            Change::RequestCancel { reason: "x".into() },
        ] {
            assert!(matches!(
                r.apply(change, 12),
                Err(StoreError::Terminal { .. })
            ));
        }
        assert_eq!(r, before);
    }
}
