//! The caller of a request answered by running it again (a prompt on revision
//! 2026-07-28): what it asks is answered from the request's `inputResponses`, and a
//! question without an answer there ends the run, so that the request is answered with
//! an `InputRequiredResult` asking it. The retry runs the request again from the start
//! with the answers: such a request must not have side effects before it asks.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use dsh_runtime::caller::{
    AskingCall, CallerAnswer, CallerError, CallerFuture, CallerHandler, CallerRequest, LogLevel,
    LogMessage, Question,
};
use rmcp::model::{ClientCapabilities, InputRequests, InputResponses};
use tokio_util::sync::CancellationToken;

use super::logs::LogSink;
use super::{can_answer, input_request, read_answer};
use crate::util::lock;

/// One run of a request answered from its `inputResponses`.
pub(crate) struct Rounds {
    capabilities: Option<ClientCapabilities>,
    answers: InputResponses,
    /// The questions the run asked that have no answer yet.
    missing: Mutex<InputRequests>,
    /// Cancelled when a question has no answer: the run is over.
    unanswered: CancellationToken,
    keys: AtomicU64,
    logs: LogSink,
}

impl Rounds {
    /// A run of a request that declared `capabilities` and carried `answers`.
    pub(crate) fn new(
        capabilities: Option<ClientCapabilities>,
        answers: InputResponses,
        logs: LogSink,
    ) -> Rounds {
        Rounds {
            capabilities,
            answers,
            missing: Mutex::default(),
            unanswered: CancellationToken::new(),
            keys: AtomicU64::new(0),
            logs,
        }
    }

    /// Cancelled once the run asked what the request does not answer.
    pub(crate) fn unanswered(&self) -> &CancellationToken {
        &self.unanswered
    }

    /// The questions to ask (taken).
    pub(crate) fn take_missing(&self) -> InputRequests {
        std::mem::take(&mut *lock(&self.missing))
    }

    /// Where the run's logs go.
    pub(crate) fn logs(&self) -> &LogSink {
        &self.logs
    }

    async fn ask_all(&self, questions: Vec<Question>) -> Vec<Result<CallerAnswer, CallerError>> {
        let mut out = Vec::with_capacity(questions.len());
        let mut missing = InputRequests::new();
        for question in questions {
            let kind = question.request.kind();
            if !can_answer(self.capabilities.as_ref(), kind) {
                out.push(Err(CallerError::Unsupported {
                    capability: kind.capability(),
                }));
                continue;
            }
            let key = question.key.unwrap_or_else(|| {
                let n = self.keys.fetch_add(1, Ordering::Relaxed) + 1;
                format!("{}-{n}", kind.capability())
            });
            // An answer that is not one of its request is asked again.
            match self.answers.get(&key).map(|a| read_answer(kind, a)) {
                Some(Ok(answer)) => out.push(Ok(answer)),
                _ => {
                    match input_request(&question.request) {
                        Ok(request) => {
                            missing.insert(key, request);
                        }
                        Err(e) => {
                            out.push(Err(e));
                            continue;
                        }
                    }
                    out.push(Err(CallerError::Cancelled));
                }
            }
        }
        if missing.is_empty() {
            return out;
        }
        lock(&self.missing).extend(missing);
        self.unanswered.cancel();
        // The run ends here: the request is answered with the questions.
        std::future::pending().await
    }
}

impl CallerHandler for Rounds {
    fn request<'a>(
        &'a self,
        _call: AskingCall<'a>,
        request: CallerRequest,
    ) -> CallerFuture<'a, Result<CallerAnswer, CallerError>> {
        Box::pin(async move {
            let mut answers = self.ask_all(vec![Question::new(request)]).await;
            answers.pop().unwrap_or(Err(CallerError::Cancelled))
        })
    }

    fn request_all<'a>(
        &'a self,
        _call: AskingCall<'a>,
        questions: Vec<Question>,
    ) -> CallerFuture<'a, Vec<Result<CallerAnswer, CallerError>>> {
        Box::pin(self.ask_all(questions))
    }

    fn log(&self, _call: AskingCall<'_>, message: LogMessage) {
        self.logs.log(message);
    }

    fn logs_at(&self, level: LogLevel) -> bool {
        self.logs.accepts(level)
    }
}
