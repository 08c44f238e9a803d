//! A call's logs as `notifications/message`, in order, at or above a level.

use std::sync::Mutex;

use dsh_runtime::caller::{LogLevel, LogMessage};
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::{Peer, RoleServer};
use tokio::sync::mpsc;

use crate::util::lock;

/// The `_meta` key of a 2026-07-28 request's log level.
pub(crate) const LOG_LEVEL_META: &str = "io.modelcontextprotocol/logLevel";

/// Forwards one call's logs to the client at or above its level, in order; nothing runs
/// until the first log. [`LogSink::finish`] sends what was logged before it and drops
/// what comes after (the answer has left).
pub(crate) struct LogSink {
    level: Option<LogLevel>,
    state: Mutex<Sending>,
}

enum Sending {
    Idle(Peer<RoleServer>, tokio::runtime::Handle),
    Running(
        mpsc::UnboundedSender<LogMessage>,
        tokio::task::JoinHandle<()>,
    ),
    Finished,
}

impl LogSink {
    /// Logs at or above `level` go to `peer` (`None`: none go).
    pub(crate) fn new(peer: Peer<RoleServer>, level: Option<LogLevel>) -> Self {
        LogSink {
            level,
            state: Mutex::new(Sending::Idle(peer, tokio::runtime::Handle::current())),
        }
    }

    /// Whether a log at `level` is sent.
    pub(crate) fn accepts(&self, level: LogLevel) -> bool {
        self.level.is_some_and(|min| level >= min)
    }

    /// Queue a message (from any thread).
    pub(crate) fn log(&self, message: LogMessage) {
        if !self.accepts(message.level) {
            return;
        }
        let mut state = lock(&self.state);
        if let Sending::Idle(..) = &*state {
            let Sending::Idle(peer, runtime) = std::mem::replace(&mut *state, Sending::Finished)
            else {
                return;
            };
            let (tx, rx) = mpsc::unbounded_channel();
            let task = runtime.spawn(forward(peer, rx));
            *state = Sending::Running(tx, task);
        }
        if let Sending::Running(tx, _) = &*state {
            let _ = tx.send(message);
        }
    }

    /// Send what was logged so far; later logs are dropped.
    pub(crate) async fn finish(&self) {
        let state = std::mem::replace(&mut *lock(&self.state), Sending::Finished);
        if let Sending::Running(tx, task) = state {
            drop(tx);
            let _ = task.await;
        }
    }
}

async fn forward(peer: Peer<RoleServer>, mut rx: mpsc::UnboundedReceiver<LogMessage>) {
    while let Some(message) = rx.recv().await {
        let mut param = LoggingMessageNotificationParam::new(
            wire_level(message.level),
            dsh_runtime::json::to_serde(&message.data),
        );
        param.logger = message.logger;
        if peer.notify_logging_message(param).await.is_err() {
            break;
        }
    }
}

/// The level on rmcp's wire.
pub(crate) fn wire_level(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Notice => LoggingLevel::Notice,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
        LogLevel::Critical => LoggingLevel::Critical,
        LogLevel::Alert => LoggingLevel::Alert,
        LogLevel::Emergency => LoggingLevel::Emergency,
    }
}

/// The level of rmcp's wire.
pub(crate) fn level_of(level: LoggingLevel) -> LogLevel {
    match level {
        LoggingLevel::Debug => LogLevel::Debug,
        LoggingLevel::Info => LogLevel::Info,
        LoggingLevel::Notice => LogLevel::Notice,
        LoggingLevel::Warning => LogLevel::Warning,
        LoggingLevel::Error => LogLevel::Error,
        LoggingLevel::Critical => LogLevel::Critical,
        LoggingLevel::Alert => LogLevel::Alert,
        LoggingLevel::Emergency => LogLevel::Emergency,
    }
}
