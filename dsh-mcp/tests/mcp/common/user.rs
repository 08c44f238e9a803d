//! The scripted user behind rmcp's client: one `ClientHandler` whose capabilities
//! (elicitation, the tasks extension) and whose answer to every question are
//! configuration, and which records what its client hears (questions, progress, task
//! statuses, list changes) for the test to read.

use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    Implementation, ProgressNotificationParam, TaskStatusNotificationParams,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, ErrorData as McpError, RoleClient};
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// What the user answers to every elicitation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Answer {
    /// Accept, with `{"approve": true}`.
    Approve,
    /// Accept, with `{"approve": false}`.
    AcceptNo,
    /// Decline (what rmcp's client answers when its handler does not say).
    Decline,
    /// Cancel.
    Cancel,
}

/// A client's user: what its client declares, how it answers, and where what it hears
/// goes (see [`User::listening`]).
#[derive(Clone)]
pub(crate) struct User {
    elicitation: bool,
    tasks: bool,
    answer: Answer,
    ears: Option<Ears>,
}

#[derive(Clone)]
struct Ears {
    asked: Arc<Mutex<Vec<Value>>>,
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    statuses: mpsc::UnboundedSender<TaskStatusNotificationParams>,
    list_changed: mpsc::UnboundedSender<()>,
}

/// What a [`User`]'s client heard.
pub(crate) struct Heard {
    /// Each elicitation request's params, with (under `requestMeta`) the `_meta` rmcp read
    /// from them.
    pub asked: Arc<Mutex<Vec<Value>>>,
    /// The progress notifications, in the order the client's handlers ran.
    pub progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    /// The task status notifications.
    pub statuses: mpsc::UnboundedReceiver<TaskStatusNotificationParams>,
    /// One `()` per `notifications/tools/list_changed`.
    pub list_changed: mpsc::UnboundedReceiver<()>,
}

impl User {
    /// A user whose client declares no capability and who declines every question.
    pub(crate) fn new() -> User {
        User {
            elicitation: false,
            tasks: false,
            answer: Answer::Decline,
            ears: None,
        }
    }

    /// Declare the elicitation capability (form mode), or not.
    pub(crate) fn elicitation(mut self, declared: bool) -> User {
        self.elicitation = declared;
        self
    }

    /// Declare the tasks capability, or not.
    pub(crate) fn tasks(mut self, declared: bool) -> User {
        self.tasks = declared;
        self
    }

    /// Answer every elicitation with `answer`.
    pub(crate) fn answering(mut self, answer: Answer) -> User {
        self.answer = answer;
        self
    }

    /// This user recording what its client hears into the [`Heard`] returned.
    pub(crate) fn listening(mut self) -> (User, Heard) {
        let (statuses, statuses_rx) = mpsc::unbounded_channel();
        let (list_changed, list_changed_rx) = mpsc::unbounded_channel();
        let ears = Ears {
            asked: Arc::default(),
            progress: Arc::default(),
            statuses,
            list_changed,
        };
        let heard = Heard {
            asked: ears.asked.clone(),
            progress: ears.progress.clone(),
            statuses: statuses_rx,
            list_changed: list_changed_rx,
        };
        self.ears = Some(ears);
        (self, heard)
    }
}

impl ClientHandler for User {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = if self.tasks {
            ClientCapabilities::builder().enable_tasks().build()
        } else {
            ClientCapabilities::default()
        };
        if self.elicitation {
            capabilities.elicitation = ClientCapabilities::builder()
                .enable_elicitation()
                .build()
                .elicitation;
        }
        ClientConfig::new(capabilities, Implementation::new("test-user", "0"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, McpError> {
        if let Some(ears) = &self.ears {
            let mut recorded = serde_json::to_value(&request).unwrap();
            recorded["requestMeta"] = serde_json::to_value(&context.meta).unwrap();
            ears.asked.lock().unwrap().push(recorded);
        }
        Ok(match self.answer {
            Answer::Approve => {
                ElicitResult::new(ElicitationAction::Accept).with_content(json!({"approve": true}))
            }
            Answer::AcceptNo => {
                ElicitResult::new(ElicitationAction::Accept).with_content(json!({"approve": false}))
            }
            Answer::Decline => ElicitResult::new(ElicitationAction::Decline),
            Answer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        })
    }

    async fn on_task_status(
        &self,
        params: TaskStatusNotificationParams,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(ears) = &self.ears {
            let _ = ears.statuses.send(params);
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if let Some(ears) = &self.ears {
            let _ = ears.list_changed.send(());
        }
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(ears) = &self.ears {
            ears.progress.lock().unwrap().push(params);
        }
    }
}
