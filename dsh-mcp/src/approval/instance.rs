//! This server instance's inbox: answers forwarded between the instances sharing a
//! store.
//!
//! A call suspended on its approval in the middle of its run (a code-mode program's
//! tool call) can only go on in the instance holding it. When the retry that answers it
//! reaches another instance, that instance takes the state (single use, in the store),
//! sends the answer to the holder's inbox, and waits for the holder's reply: the call's
//! result, or its next question. Nothing of the call runs twice. When the holder is gone
//! (its lease ran out, or nobody listens on its inbox), the retry is answered with an
//! error saying so.
//!
//! Traced, the forwarded answer carries the retry's trace context (W3C `traceparent`,
//! `tracestate`, `baggage`, with feature `otel`): the holder applies it in span
//! `forwarded_answer {tool}` (kind CONSUMER), a child of the span the retry was
//! forwarded from, so the retry's trace shows the work its answer caused on the holder.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use futures_util::StreamExt as _;
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolResponse, CallToolResult, CreateTaskResult, InputRequiredResult, InputResponses,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::{OnceCell, oneshot};
use tokio_util::sync::CancellationToken;

use crate::approval::resume::{Resumed, Resumes};
use crate::store::lease::Lease;
use crate::store::{Store, StoreError};
use crate::util::{lock, random_hex};

/// How often a forwarded answer checks that the holder still lives.
const HOLDER_CHECK: Duration = Duration::from_secs(1);

/// One server instance (see the module docs).
pub(crate) struct Instance {
    lease: Arc<Lease>,
    store: Arc<dyn Store>,
    resumes: Arc<Resumes>,
    /// The inbox is listened on (from the first [`Instance::ready`]).
    started: OnceCell<()>,
    /// Forwarded answers waiting for their holder's reply, by tag.
    replies: Mutex<HashMap<String, oneshot::Sender<Outcome>>>,
    /// Calls this instance resumes for a forwarded answer, by tag: cancelled when the
    /// retry that forwarded it is.
    forwarded: Mutex<HashMap<String, CancellationToken>>,
}

/// A message between instances.
#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Message {
    /// Go on with the suspended call `nonce`: its answer is `answer`.
    Resume {
        tag: String,
        reply_to: String,
        nonce: String,
        tool: String,
        answer: Value,
        /// The forwarding request's trace context (empty when it was not traced).
        #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
        trace: serde_json::Map<String, Value>,
    },
    /// The retry that forwarded `tag` was cancelled.
    Cancel { tag: String },
    /// The holder's reply to `tag`.
    Reply { tag: String, outcome: Outcome },
    /// The suspended call `nonce` was run again elsewhere: let it go.
    Drop { nonce: String },
}

/// What a resumed call answered.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Outcome {
    Complete(CallToolResult),
    InputRequired(InputRequiredResult),
    Task(CreateTaskResult),
    Error(McpError),
}

impl Instance {
    /// The inbox of the instance `lease`, whose suspended calls are in `resumes`.
    pub(crate) fn new(lease: Arc<Lease>, resumes: Arc<Resumes>) -> Arc<Instance> {
        Arc::new(Instance {
            store: lease.store().clone(),
            lease,
            resumes,
            started: OnceCell::new(),
            replies: Mutex::default(),
            forwarded: Mutex::default(),
        })
    }

    /// The instance's lease.
    pub(crate) fn lease(&self) -> &Arc<Lease> {
        &self.lease
    }

    /// The instance's id (unique among the instances sharing the store).
    pub(crate) fn id(&self) -> &str {
        self.lease.id()
    }

    /// Renew the lease now, and (the first time) start listening on the inbox: before
    /// the instance hands out an approval state, or forwards an answer.
    pub(crate) async fn ready(self: &Arc<Self>) -> Result<(), StoreError> {
        self.lease.renew().await?;
        self.started
            .get_or_try_init(|| async {
                let inbox = self.store.inbox(self.lease.id()).await?;
                let stop = self.lease.stopped().clone();
                tokio::spawn(listen(Arc::downgrade(self), inbox, stop));
                Ok::<(), StoreError>(())
            })
            .await?;
        Ok(())
    }

    /// Tell `holder` that the suspended call `nonce` was run again here.
    pub(crate) async fn release(&self, holder: &str, nonce: &str) {
        if let Ok(message) = serde_json::to_value(Message::Drop {
            nonce: nonce.to_string(),
        }) {
            let _ = self.store.send(holder, message).await;
        }
    }

    /// Send `answer` to the suspended call `nonce` of tool `tool`, held by `holder`, and
    /// wait for its reply (the retry's `cancel` reaching the call).
    pub(crate) async fn forward(
        self: &Arc<Self>,
        holder: &str,
        nonce: &str,
        tool: &str,
        answer: &InputResponses,
        cancel: &CancellationToken,
    ) -> Result<CallToolResponse, McpError> {
        let failed = |why: String| {
            McpError::internal_error(
                format!(
                    "tools/call `{tool}`: the retry could not reach the call it answers: {why}"
                ),
                None,
            )
        };
        self.ready().await.map_err(|e| failed(e.to_string()))?;
        let tag = random_hex(16).ok_or_else(|| failed("no random tag available".into()))?;
        let (tx, mut rx) = oneshot::channel();
        lock(&self.replies).insert(tag.clone(), tx);
        let _cleanup = Forgets(self, tag.clone());
        let message = Message::Resume {
            tag: tag.clone(),
            reply_to: self.id().to_string(),
            nonce: nonce.to_string(),
            tool: tool.to_string(),
            answer: serde_json::to_value(answer).map_err(|e| failed(e.to_string()))?,
            trace: trace_context(),
        };
        let message = serde_json::to_value(message).map_err(|e| failed(e.to_string()))?;
        let gone = || {
            failed("the server instance holding it has stopped; call the tool again".to_string())
        };
        if !self
            .store
            .send(holder, message)
            .await
            .map_err(|e| failed(e.to_string()))?
        {
            return Err(gone());
        }
        let mut cancelled = false;
        let mut check = tokio::time::interval(HOLDER_CHECK);
        check.tick().await;
        loop {
            tokio::select! {
                outcome = &mut rx => {
                    return match outcome {
                        Ok(Outcome::Complete(result)) => Ok(CallToolResponse::Complete(result)),
                        Ok(Outcome::InputRequired(input)) => Ok(CallToolResponse::InputRequired(input)),
                        Ok(Outcome::Task(created)) => Ok(CallToolResponse::Task(created)),
                        Ok(Outcome::Error(e)) => Err(e),
                        Err(_) => Err(gone()),
                    };
                }
                () = cancel.cancelled(), if !cancelled => {
                    cancelled = true;
                    if let Ok(message) = serde_json::to_value(Message::Cancel { tag: tag.clone() }) {
                        let _ = self.store.send(holder, message).await;
                    }
                }
                _ = check.tick() => {
                    if self.lease.alive(holder).await == Some(false) {
                        return Err(gone());
                    }
                }
            }
        }
    }

    /// Go on with a call held here for an answer another instance forwarded, and reply.
    async fn resume_forwarded(
        self: Arc<Self>,
        tag: String,
        reply_to: String,
        nonce: String,
        tool: String,
        answer: Value,
    ) {
        let cancel = CancellationToken::new();
        lock(&self.forwarded).insert(tag.clone(), cancel.clone());
        let outcome = match serde_json::from_value::<InputResponses>(answer) {
            Err(e) => Outcome::Error(McpError::invalid_params(
                format!(
                    "tools/call `{tool}`: the forwarded answer is not a map of input responses: {e}"
                ),
                None,
            )),
            Ok(answer) => match self.resumes.take_local(&nonce) {
                None => Outcome::Error(McpError::invalid_params(
                    format!(
                        "tools/call `{tool}`: requestState refused: its call has ended \
                         (a state is single-use)"
                    ),
                    None,
                )),
                Some(suspended) => {
                    let resumed = self
                        .resumes
                        .continue_call(suspended, &answer, &cancel, &tool)
                        .await;
                    match resumed {
                        Ok(Resumed::Complete(result)) => Outcome::Complete(result),
                        Ok(Resumed::InputRequired(input)) => Outcome::InputRequired(input),
                        Ok(Resumed::Task(created)) => Outcome::Task(created),
                        Err(e) => Outcome::Error(e),
                    }
                }
            },
        };
        lock(&self.forwarded).remove(&tag);
        if let Ok(message) = serde_json::to_value(Message::Reply { tag, outcome }) {
            let _ = self.store.send(&reply_to, message).await;
        }
    }

    fn receive(self: &Arc<Self>, message: Message) {
        match message {
            Message::Resume {
                tag,
                reply_to,
                nonce,
                tool,
                answer,
                trace,
            } => {
                let span = forwarded_span(&tool, &trace);
                let resume = self
                    .clone()
                    .resume_forwarded(tag, reply_to, nonce, tool, answer);
                if span.is_disabled() {
                    tokio::spawn(resume);
                } else {
                    tokio::spawn(tracing::Instrument::instrument(resume, span));
                }
            }
            Message::Cancel { tag } => {
                if let Some(cancel) = lock(&self.forwarded).get(&tag) {
                    cancel.cancel();
                }
            }
            Message::Reply { tag, outcome } => {
                if let Some(waiting) = lock(&self.replies).remove(&tag) {
                    let _ = waiting.send(outcome);
                }
            }
            Message::Drop { nonce } => self.resumes.release_local(&nonce),
        }
    }
}

/// The current span's trace context, to travel with a forwarded answer (empty when
/// nothing traces it, or without feature `otel`).
fn trace_context() -> serde_json::Map<String, Value> {
    #[allow(unused_mut)]
    let mut carrier = serde_json::Map::new();
    #[cfg(feature = "otel")]
    if !tracing::Span::current().is_disabled() {
        crate::propagation::inject(&mut carrier);
    }
    carrier
}

/// The span of applying a forwarded answer to `tool`'s suspended call: a child of the
/// forwarding request's span, whose context `trace` carries (see the module docs).
fn forwarded_span(tool: &str, trace: &serde_json::Map<String, Value>) -> tracing::Span {
    let span = tracing::info_span!(
        parent: None,
        "forwarded_answer",
        otel.name = %format_args!("forwarded_answer {tool}"),
        otel.kind = "consumer",
        gen_ai.tool.name = tool,
    );
    #[cfg(feature = "otel")]
    if !span.is_disabled() {
        crate::propagation::set_parent(&span, trace);
    }
    let _ = trace;
    span
}

/// Forgets a forwarded answer's reply slot when its wait ends.
struct Forgets<'a>(&'a Instance, String);

impl Drop for Forgets<'_> {
    fn drop(&mut self) {
        lock(&self.0.replies).remove(&self.1);
    }
}

/// Handle the inbox's messages until the instance is dropped.
async fn listen(
    instance: Weak<Instance>,
    mut inbox: crate::store::Messages,
    stop: CancellationToken,
) {
    loop {
        let message = tokio::select! {
            message = inbox.next() => message,
            () = stop.cancelled() => return,
        };
        let Some(message) = message else { return };
        let Some(instance) = instance.upgrade() else {
            return;
        };
        match serde_json::from_value::<Message>(message) {
            Ok(message) => instance.receive(message),
            Err(e) => tracing::warn!("dsh-mcp: a message this instance cannot read: {e}"),
        }
    }
}
