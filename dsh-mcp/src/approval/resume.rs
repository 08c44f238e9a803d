//! Approval on protocol revisions without server-to-client requests (2026-07-28): the
//! call answers `InputRequiredResult`, and the retried call resumes it.
//!
//! The first `tools/call` runs the pipeline on a task of its own. When its `ask` reaches
//! this route, the call waits there, suspended, and the request is answered with an
//! `InputRequiredResult`: the approval form as an `elicitation/create` input request
//! (key `approval`), and a `requestState` sealed with rmcp's `RequestStateCodec` under a
//! key drawn at random for this server, with a TTL, whose associated data binds it to
//! the session (for a stateless request, a keyed hash of its credentials, the same on
//! every instance sharing the keys), the tool's name and the arguments' text. The client
//! retries the call with the same arguments, the state and its answer; the retry opens
//! the state, takes the suspended call (once: a state is single-use) and gives it the
//! answer, so the call goes on from where it stopped (policy is not run again), and the
//! retry is answered with its result, or, when the call asks again (a code-mode
//! program's next tool call needing approval), with the next `InputRequiredResult`,
//! whose own state the next retry redeems. A state that was altered, sealed for another
//! session, tool or arguments, or has expired, or was already used, is refused with a
//! JSON-RPC invalid-params error naming why. A suspended call whose state is not
//! redeemed within the TTL ends as `APPROVAL_CANCELLED`.
//!
//! Several instances sharing a store (see [`crate::store`]) share the keys too, so a
//! retry may reach another instance than the one holding the suspended call. That
//! instance takes the state from the store (once, whichever instance tries), then: when
//! the question was the call's own policy, before any of the call ran, it runs the call
//! again from the start with the approval given (the holder's suspended call is let
//! go); when the question came in the middle of the call (a code-mode program's tool
//! call), it forwards the answer to the holder and relays its reply (see
//! the `instance` module), so nothing the call did before asking runs twice.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dsh_runtime::caller::{
    AskingCall, CallerAnswer, CallerError, CallerFuture, CallerHandler, CallerRequest, LogLevel,
    LogMessage, Question, RequestKind,
};
use dsh_runtime::hooks::{Approval, ApprovalHandler, ApprovalRequest, HookFuture};
use dsh_runtime::{AgentScopeId, Registry, ToolError, ToolResult};
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolResult, ClientCapabilities, CreateTaskResult, ElicitResult, InputRequest,
    InputRequests, InputRequiredResult, InputResponses, Request, RequestStateCodec, SealOptions,
};
use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::approval::keys::StateKeys;
use crate::approval::{approval_form, approval_message, quoted, summary};
use crate::caller::logs::LogSink;
use crate::definition::{McpTool, to_mcp_result};
use crate::store::{ApprovalRecord, Owner, Store};
use crate::util::{lock, now_ms, random_hex};

/// The key of the approval form among an `InputRequiredResult`'s input requests.
pub(crate) const INPUT_KEY: &str = "approval";

/// How long a suspended call waits for its retry, by default.
pub(crate) const DEFAULT_TTL: Duration = Duration::from_secs(600);

/// The server's suspended calls and the codec sealing their states.
pub(crate) struct Resumes {
    /// `None` when no random key could be drawn: such a server cannot ask.
    codec: Option<RequestStateCodec>,
    ttl: Duration,
    pending: Mutex<HashMap<String, Suspended>>,
}

/// What a suspended call tells the request waiting for it, besides its result.
pub(crate) enum Next {
    /// It asks: answer with this `InputRequiredResult` (the nonce of its state).
    Input(String, InputRequiredResult),
    /// It goes on as a task: answer with this, and hand the call's result over to the
    /// task through the sender.
    Task(
        CreateTaskResult,
        oneshot::Sender<oneshot::Receiver<ToolResult>>,
    ),
}

/// Where a suspended call's next question goes: to the request that will answer with
/// its `InputRequiredResult` (with the nonce of its state), or with its task.
pub(crate) type Asked = oneshot::Sender<Next>;

/// The question slot of one call: filled by the request that waits for the call (the
/// first, then each retry), taken by the call's next `ask`.
pub(crate) type AskSlot = Arc<Mutex<Option<Asked>>>;

/// A call waiting for its approval.
pub(crate) struct Suspended {
    /// Where the retry's input responses go.
    answer: oneshot::Sender<InputResponses>,
    /// The questions the call waits for (a retry missing one is asked it again).
    requests: InputRequests,
    /// The call's result, once the request that suspended it handed it over.
    result: Option<oneshot::Receiver<ToolResult>>,
    /// The suspended call's cancellation token.
    cancel: CancellationToken,
    /// The call's question slot, refilled by the retry before it answers.
    slot: AskSlot,
    /// The tool's published definition (how its result is wrapped).
    tool: Option<Arc<McpTool>>,
    /// The call's cards for the MCP Apps view, when its client shows them.
    cards: Option<AddCards>,
}

/// What adds a call's cards to its answer (for the MCP Apps view, `crate::server`'s
/// `apps`), given the result.
pub(crate) type AddCards = Arc<dyn Fn(&mut CallToolResult, &ToolResult) + Send + Sync>;

/// `result` as the client gets it: `tool`'s wrapping, with the call's cards if any.
fn answered(
    tool: Option<&McpTool>,
    cards: Option<&AddCards>,
    result: &ToolResult,
) -> CallToolResult {
    let mut answer = to_mcp_result(result, tool);
    if let Some(cards) = cards {
        cards(&mut answer, result);
    }
    answer
}

/// A state taken by a retry (see [`Resumes::take`]).
pub(crate) struct Taken {
    /// The suspended call's id.
    pub(crate) nonce: String,
    /// The retry's answers (`inputResponses`), by key.
    pub(crate) answer: InputResponses,
    /// The state's record: who holds the call, whether it may run again.
    pub(crate) record: ApprovalRecord,
    /// The suspended call, when this instance holds it.
    pub(crate) local: Option<Suspended>,
}

/// A refusal of a retry's `requestState`.
fn refused(tool: &str, why: &str) -> McpError {
    McpError::invalid_params(
        format!("tools/call {}: requestState refused: {why}", quoted(tool)),
        None,
    )
}

/// What a retry answers: the call's result, or the next question of the same call (a
/// code-mode program whose next tool call needs approval too).
pub(crate) enum Resumed {
    /// The call ended with this result.
    Complete(CallToolResult),
    /// The call asked again: answer with this, the call suspended under a new state.
    InputRequired(InputRequiredResult),
    /// The call went on as a task: answer with this.
    Task(CreateTaskResult),
}

/// What a state carries: the suspended call's id.
#[derive(Serialize, Deserialize)]
struct State {
    nonce: String,
}

/// What the call's identity binds a state to.
///
/// `principal` names who sent a request served statelessly (its `Authorization`
/// header's hash): there the session is the context every such request shares.
pub(crate) fn binding(
    session: Option<AgentScopeId>,
    principal: Option<&str>,
    tool: &str,
    arguments: &str,
) -> Vec<u8> {
    let session = session.map_or_else(|| "none".to_string(), |s| s.get().to_string());
    let principal = principal.unwrap_or("-");
    // Lengths first: no two bindings share a text.
    format!(
        "dsh-mcp approval\nsession {session}\nprincipal {principal}\ntool {}:{tool}\narguments {}:{arguments}",
        tool.len(),
        arguments.len()
    )
    .into_bytes()
}

impl Resumes {
    /// Suspended calls waiting `ttl` at most, their states sealed with `keys` (`None`:
    /// no key could be drawn, and calls cannot ask).
    pub(crate) fn new(ttl: Duration, keys: Option<&StateKeys>) -> Resumes {
        let codec = match keys.map(StateKeys::codec) {
            Some(Ok(codec)) => Some(codec),
            Some(Err(e)) => {
                tracing::warn!(
                    "dsh-mcp: no key for approval states ({e}): calls on protocol 2026-07-28 cannot ask"
                );
                None
            }
            None => {
                tracing::warn!(
                    "dsh-mcp: no key for approval states: calls on protocol 2026-07-28 cannot ask"
                );
                None
            }
        };
        Resumes {
            codec,
            ttl,
            pending: Mutex::default(),
        }
    }

    /// How long a suspended call waits.
    pub(crate) fn ttl(&self) -> Duration {
        self.ttl
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Suspended>> {
        lock(&self.pending)
    }

    /// Hand the suspended call `nonce`'s result over to its future retry.
    pub(crate) fn park_result(&self, nonce: &str, result: oneshot::Receiver<ToolResult>) {
        if let Some(s) = self.lock().get_mut(nonce) {
            s.result = Some(result);
        }
    }

    /// Take the state `state` for a retry sent by `owner` with `responses`: its record
    /// (taken from the store: a state is single-use, whichever instance the retry
    /// reaches), the answer, and the suspended call when this instance holds it; or why
    /// the state is refused.
    pub(crate) async fn take(
        &self,
        store: &dyn Store,
        state: &str,
        responses: Option<&InputResponses>,
        binding: &[u8],
        owner: &Owner,
        tool: &str,
    ) -> Result<Taken, McpError> {
        let refused = |why: &str| refused(tool, why);
        let (nonce, answer) = self
            .open(state, responses, binding)
            .map_err(|why| refused(&why))?;
        let used = "it was already used, or its call has ended (a state is single-use)";
        let record = store
            .take_approval(&nonce)
            .await
            .map_err(|e| McpError::internal_error(e.to_string(), None))?
            .ok_or_else(|| refused(used))?;
        if record.owner != *owner {
            return Err(refused("it was issued to other credentials"));
        }
        let local = self.take_local(&nonce);
        Ok(Taken {
            nonce,
            answer,
            record,
            local,
        })
    }

    /// The suspended call `nonce`, when this instance holds it (taken: it is resumed
    /// once).
    pub(crate) fn take_local(&self, nonce: &str) -> Option<Suspended> {
        self.lock().remove(nonce)
    }

    /// The question a retry must be asked again: when the state names a call this
    /// instance holds and `responses` lack an answer it waits for, the same state with the
    /// missing requests (the state is not used up: the retry that answers them redeems
    /// it). `None` when nothing is missing, or the state is not one of a call held here
    /// (its retry is then judged by [`Resumes::take`]).
    pub(crate) fn ask_again(
        &self,
        state: &str,
        responses: Option<&InputResponses>,
        binding: &[u8],
    ) -> Option<InputRequiredResult> {
        let (nonce, answers) = self.open(state, responses, binding).ok()?;
        let pending = self.lock();
        let suspended = pending.get(&nonce)?;
        let missing: InputRequests = suspended
            .requests
            .iter()
            .filter(|(key, _)| !answers.contains_key(*key))
            .map(|(key, request)| (key.clone(), request.clone()))
            .collect();
        (!missing.is_empty())
            .then(|| InputRequiredResult::new(Some(missing), Some(state.to_string())))
    }

    /// Let the suspended call `nonce` go (its retry ran the call again elsewhere): it
    /// ends as cancelled, before its body ran.
    pub(crate) fn release_local(&self, nonce: &str) {
        // Dropped unanswered: the call's question ends as cancelled.
        drop(self.take_local(nonce));
    }

    /// Give the suspended call `answer` and wait for its result (the retry's `cancel`
    /// reaching the call) or its next question.
    pub(crate) async fn continue_call(
        &self,
        suspended: Suspended,
        answer: &InputResponses,
        cancel: &CancellationToken,
        tool: &str,
    ) -> Result<Resumed, McpError> {
        let Suspended {
            answer: to_call,
            requests: _,
            result,
            cancel: call_cancel,
            slot,
            tool: definition,
            cards,
        } = suspended;
        let Some(mut result) = result else {
            return Err(refused(tool, "its call was not suspended yet"));
        };
        // This retry takes the call's next question, if it asks one.
        let (next_tx, mut next_rx) = oneshot::channel();
        *lock(&slot) = Some(next_tx);
        let _ = to_call.send(answer.clone());
        let ended = relay_cancellation(cancel.clone(), call_cancel);
        let out = tokio::select! {
            // What the call tells first (a question, its task) comes before its result,
            // which may follow at once.
            biased;
            asked = &mut next_rx => match asked {
                Ok(Next::Input(nonce, input)) => {
                    ended.cancel();
                    self.park_result(&nonce, result);
                    return Ok(Resumed::InputRequired(input));
                }
                Ok(Next::Task(created, handoff)) => {
                    ended.cancel();
                    let _ = handoff.send(result);
                    return Ok(Resumed::Task(created));
                }
                // The call can no longer ask (it is ending).
                Err(_) => result.await,
            },
            out = &mut result => out,
        };
        ended.cancel();
        out.map(|r| Resumed::Complete(answered(definition.as_deref(), cards.as_ref(), &r)))
            .map_err(|_| {
                McpError::internal_error(
                    format!(
                        "tools/call {}: the resumed call ended without a result",
                        quoted(tool)
                    ),
                    None,
                )
            })
    }

    /// Open `state` for `binding` and read the answer in `responses`: the suspended
    /// call's nonce and the answer, or why the state is refused.
    fn open(
        &self,
        state: &str,
        responses: Option<&InputResponses>,
        binding: &[u8],
    ) -> Result<(String, InputResponses), String> {
        let codec = self
            .codec
            .as_ref()
            .ok_or_else(|| "this server seals no states".to_string())?;
        let State { nonce } = codec.open_json_with(state, binding).map_err(|e| {
            format!(
                "{e} (a state is valid only for the session, tool and arguments of the call that received it, until it expires)"
            )
        })?;
        Ok((nonce, responses.cloned().unwrap_or_default()))
    }
}

/// Make the retry's cancellation (`relay`) the suspended call's (`call`) until the
/// returned token is cancelled (the retry has answered).
fn relay_cancellation(relay: CancellationToken, call: CancellationToken) -> CancellationToken {
    let ended = CancellationToken::new();
    let until = ended.clone();
    tokio::spawn(async move {
        // `until` first: once this retry has answered (its own token may be cancelled
        // then), the relay stops without cancelling the call, which may be suspended
        // again on its next question.
        tokio::select! {
            biased;
            () = until.cancelled() => {}
            () = relay.cancelled() => call.cancel(),
        }
    });
    ended
}

/// The first round's route for what the call asks (its approval, and the requests of
/// its body to its caller): suspends the call and tells the request handler what to
/// answer.
pub(crate) struct Suspend {
    pub(crate) resumes: Arc<Resumes>,
    pub(crate) registry: Registry,
    pub(crate) scope: Option<dsh_runtime::AgentScope>,
    pub(crate) binding: Vec<u8>,
    /// The suspended call's token (cancelled when its state expires).
    pub(crate) cancel: CancellationToken,
    /// Where the next `InputRequiredResult` (and the nonce) go: filled by the request
    /// waiting for the call, taken by an `ask`.
    pub(crate) asked: AskSlot,
    /// Where the single-use states are kept, and whose they are.
    pub(crate) store: Arc<dyn Store>,
    pub(crate) owner: Owner,
    /// The tool's name and published definition.
    pub(crate) name: String,
    pub(crate) tool: Option<Arc<McpTool>>,
    /// What adds the call's cards to its answer, when its client shows them.
    pub(crate) cards: Option<AddCards>,
    /// The id of this server instance (which holds the suspended call).
    pub(crate) holder: String,
    /// The answer a retry that runs the call again gives its own question (the call's
    /// policy asking again, see `crate::store::ApprovalRecord::rerun`).
    pub(crate) preanswer: Mutex<Option<Approval>>,
    /// What the request declared it can answer.
    pub(crate) capabilities: Option<ClientCapabilities>,
    /// Where the call's logs go (the first request's response stream).
    pub(crate) logs: Arc<LogSink>,
    /// The keys handed out to requests without one (`form-1`, `sample-1`, ...).
    pub(crate) keys: AtomicU64,
    /// How the call may go on as a task (`task_after_input` tools from clients with
    /// tasks), if it may.
    pub(crate) escalation: Option<Escalation>,
    /// Answers the first request carried (`inputResponses` without a `requestState`: a
    /// client answering ahead, as a stateless server's retry would). They answer the
    /// body's questions under the same keys, once; never an approval, which only a
    /// sealed state can carry.
    pub(crate) ahead: Mutex<InputResponses>,
}

/// Why a call could not be suspended on its questions.
enum NotAsked {
    /// Nobody waits for a question now, or no state can be sealed.
    Unavailable(&'static str),
    /// The questions were out, and no answer came (expired, cancelled).
    Unanswered,
    /// Sealing or storing the state failed.
    Failed(String),
}

impl Suspend {
    /// The approval form of `request`'s call, as the input requests of an
    /// `InputRequiredResult`.
    fn form(&self, request: &ApprovalRequest<'_>) -> Result<InputRequests, ToolError> {
        let name = request.call.name();
        let arguments = request.call.arguments();
        let card = match &self.scope {
            Some(scope) => scope.present_call(name, arguments),
            None => self.registry.present_call(name, arguments),
        };
        let message = approval_message(
            name,
            &summary(card, name, arguments),
            request.via,
            request.reason,
        );
        let form = approval_form(name, message)?;
        let mut requests = InputRequests::new();
        requests.insert(
            INPUT_KEY.to_string(),
            InputRequest::Elicitation(Request::new(form)),
        );
        Ok(requests)
    }

    /// Suspend the call on `requests` and wait for the retry's answers. `name` is the
    /// asking call's tool; `before_the_call`: nothing of the call ran yet (a retry
    /// reaching another instance may run it again there); `asking`: the asking call's
    /// own token.
    async fn park(
        &self,
        name: &str,
        requests: InputRequests,
        before_the_call: bool,
        asking: &CancellationToken,
    ) -> Result<InputResponses, NotAsked> {
        let Some(sender) = lock(&self.asked).take() else {
            // One round trip at a time: while questions are out, no other can be put.
            return Err(NotAsked::Unavailable(
                "another question of this call is waiting for its answer",
            ));
        };
        let Some(codec) = &self.resumes.codec else {
            return Err(NotAsked::Unavailable("this server seals no request states"));
        };
        let nonce = random_hex(16)
            .ok_or_else(|| NotAsked::Failed("request state: no random nonce available".into()))?;
        let state = codec
            .seal_json_with(
                &State {
                    nonce: nonce.clone(),
                },
                &SealOptions::new()
                    .associated_data(&self.binding)
                    .ttl(self.resumes.ttl),
            )
            .map_err(|e| {
                NotAsked::Failed(format!("request state for tool {}: {e}", quoted(name)))
            })?;
        let (answer_tx, answer_rx) = oneshot::channel();
        self.resumes.lock().insert(
            nonce.clone(),
            Suspended {
                answer: answer_tx,
                requests: requests.clone(),
                result: None,
                cancel: self.cancel.clone(),
                slot: self.asked.clone(),
                tool: self.tool.clone(),
                cards: self.cards.clone(),
            },
        );
        let expires = now_ms().saturating_add(crate::util::millis(self.resumes.ttl));
        let kept = self
            .store
            .put_approval(
                ApprovalRecord::new(nonce.clone(), self.owner.clone(), expires).held_by(
                    name,
                    self.holder.clone(),
                    before_the_call,
                ),
            )
            .await;
        if let Err(e) = kept {
            self.resumes.lock().remove(&nonce);
            return Err(NotAsked::Failed(format!(
                "request state for tool {}: {e}",
                quoted(name)
            )));
        }
        let input = InputRequiredResult::new(Some(requests), Some(state));
        if sender.send(Next::Input(nonce.clone(), input)).is_err() {
            self.resumes.lock().remove(&nonce);
            return Err(NotAsked::Unanswered);
        }
        // The asking call's own token too: a code-mode program's tool call is cancelled
        // when its run ends (its deadline, say) while the outer call waits here.
        let answer = tokio::select! {
            answer = answer_rx => answer.ok(),
            () = tokio::time::sleep(self.resumes.ttl) => None,
            () = self.cancel.cancelled() => None,
            () = asking.cancelled() => None,
        };
        answer.ok_or_else(|| {
            self.resumes.lock().remove(&nonce);
            NotAsked::Unanswered
        })
    }

    async fn ask(&self, request: ApprovalRequest<'_>) -> Result<Approval, ToolError> {
        // Asked by the call's own policy: nothing of the call has run yet.
        let before_the_call = request.via.is_none();
        if before_the_call && let Some(answer) = lock(&self.preanswer).take() {
            return Ok(answer);
        }
        if !crate::caller::can_answer(self.capabilities.as_ref(), RequestKind::Form) {
            return Ok(Approval::UnavailableBecause(
                "the MCP client cannot ask its user for approval: it did not declare the elicitation capability",
            ));
        }
        let requests = self.form(&request)?;
        match self
            .park(
                request.call.name(),
                requests,
                before_the_call,
                request.call.cancellation(),
            )
            .await
        {
            Ok(answers) => Ok(approval_of_responses(&answers)),
            Err(NotAsked::Unavailable(_)) => Ok(Approval::Unavailable),
            Err(NotAsked::Unanswered) => Ok(Approval::Cancelled),
            Err(NotAsked::Failed(e)) => Err(ToolError::new(e)),
        }
    }

    /// Ask the body's questions in one round (those the client can answer).
    async fn ask_all(&self, questions: Vec<Question>) -> Vec<Result<CallerAnswer, CallerError>> {
        let mut out: Vec<Result<CallerAnswer, CallerError>> = Vec::with_capacity(questions.len());
        let mut asked: Vec<(usize, String, RequestKind)> = Vec::new();
        let mut requests = InputRequests::new();
        for (i, question) in questions.into_iter().enumerate() {
            let kind = question.request.kind();
            if !crate::caller::can_answer(self.capabilities.as_ref(), kind) {
                out.push(Err(CallerError::Unsupported {
                    capability: kind.capability(),
                }));
                continue;
            }
            let key = match question.key {
                Some(key) if !requests.contains_key(&key) && key != INPUT_KEY => key,
                _ => {
                    let n = self.keys.fetch_add(1, Ordering::Relaxed) + 1;
                    format!("{}-{n}", kind_key(kind))
                }
            };
            match crate::caller::input_request(&question.request) {
                Ok(request) => {
                    requests.insert(key.clone(), request);
                    asked.push((i, key, kind));
                    out.push(Err(CallerError::Cancelled));
                }
                Err(e) => out.push(Err(e)),
            }
        }
        let mut answers = InputResponses::new();
        {
            let mut ahead = lock(&self.ahead);
            // An answer sent ahead that is not one of its request is ignored: the
            // question is asked.
            let kinds: HashMap<&str, RequestKind> = asked
                .iter()
                .map(|(_, key, kind)| (key.as_str(), *kind))
                .collect();
            requests.retain(|key, _| match ahead.remove(key) {
                Some(answer)
                    if kinds
                        .get(key.as_str())
                        .is_some_and(|kind| crate::caller::read_answer(*kind, &answer).is_ok()) =>
                {
                    answers.insert(key.clone(), answer);
                    false
                }
                _ => true,
            });
        }
        let parked = if requests.is_empty() {
            Ok(InputResponses::new())
        } else {
            self.park(&self.name, requests, false, &self.cancel).await
        };
        match parked {
            Ok(parked) => answers.extend(parked),
            Err(why) => {
                let error = match why {
                    NotAsked::Unavailable(why) => CallerError::Failed(why.to_string()),
                    NotAsked::Failed(why) => CallerError::Failed(why),
                    NotAsked::Unanswered => CallerError::Cancelled,
                };
                for (i, _, _) in &asked {
                    out[*i] = Err(error.clone());
                }
                return out;
            }
        }
        for (i, key, kind) in asked {
            out[i] = match answers.get(&key) {
                Some(answer) => crate::caller::read_answer(kind, answer),
                None => Err(CallerError::InvalidAnswer(format!(
                    "the retry has no answer under key `{key}`"
                ))),
            };
        }
        out
    }
}

/// The prefix of the keys of requests of `kind` the body did not name.
fn kind_key(kind: RequestKind) -> &'static str {
    match kind {
        RequestKind::Form => "form",
        RequestKind::Url => "url",
        RequestKind::Sample => "sample",
        _ => "roots",
    }
}

/// The approval a retry's answers give (no answer under [`INPUT_KEY`], or one that is
/// not an elicitation result: not a yes).
pub(crate) fn approval_of_responses(answers: &InputResponses) -> Approval {
    match answers
        .get(INPUT_KEY)
        .and_then(|a| serde_json::from_value::<ElicitResult>(a.clone()).ok())
    {
        Some(answer) => crate::approval::approval_of(&answer),
        None => Approval::Cancelled,
    }
}

impl ApprovalHandler for Suspend {
    fn request<'a>(
        &'a self,
        request: ApprovalRequest<'a>,
    ) -> HookFuture<'a, Result<Approval, ToolError>> {
        HookFuture::new(self.ask(request))
    }
}

impl CallerHandler for Suspend {
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

    fn continue_as_task<'a>(&'a self, _call: AskingCall<'a>) -> CallerFuture<'a, bool> {
        Box::pin(self.escalate())
    }
}

/// What a suspended call needs to go on as a task of the extension.
pub(crate) struct Escalation {
    /// The context's tasks.
    pub(crate) tasks: Arc<crate::tasks::SessionTasks>,
    /// Whose the task is.
    pub(crate) owner: Owner,
    /// The stateless context's places and ids (`None`: a session's task).
    pub(crate) stateless: Option<Arc<crate::tasks::stateless::PublicIds>>,
}

impl Suspend {
    /// Go on as a task (see [`Escalation`]): the request waiting for the call is answered
    /// with the task, which gets the call's result.
    async fn escalate(&self) -> bool {
        let Some(escalation) = &self.escalation else {
            return false;
        };
        let Some(sender) = lock(&self.asked).take() else {
            return false;
        };
        let reservation = match escalation.stateless.as_ref().map(|ids| ids.reserve()) {
            Some(None) => {
                *lock(&self.asked) = Some(sender);
                return false;
            }
            reservation => reservation.flatten(),
        };
        let (id, ttl) = match &escalation.stateless {
            Some(ids) => (crate::tasks::stateless::random_id(), Some(ids.ttl())),
            None => (None, None),
        };
        let (handoff, handed) = oneshot::channel::<oneshot::Receiver<ToolResult>>();
        let (cancel, tool) = (self.cancel.clone(), self.tool.clone());
        let cards = self.cards.clone();
        let start = crate::tasks::TaskStart {
            id,
            owner: escalation.owner.clone(),
            model: crate::store::TaskModel::Extension,
            ttl,
            spec: dsh_runtime::jobs::JobSpec::new(&self.name, format!("tools/call {}", self.name)),
        };
        let run = move |job: dsh_runtime::jobs::JobContext, _task: crate::tasks::TaskHandle| async move {
            // Stopping the task's job (`tasks/cancel`) cancels the call.
            let stop = job.stop_token().clone();
            let relay = tokio::spawn(async move {
                stop.cancelled().await;
                cancel.cancel();
            });
            let result = match handed.await {
                Ok(result) => result.await.ok(),
                Err(_) => None,
            };
            relay.abort();
            match result {
                Some(result) => (
                    crate::tasks::TaskEnd::Result(answered(
                        tool.as_deref(),
                        cards.as_ref(),
                        &result,
                    )),
                    result.text().to_string(),
                ),
                None => (
                    crate::tasks::TaskEnd::Failed("the call ended without a result".into()),
                    String::new(),
                ),
            }
        };
        let record = match escalation.tasks.start(start, run).await {
            Ok(record) => record,
            Err(_) => {
                *lock(&self.asked) = Some(sender);
                return false;
            }
        };
        if let (Some(ids), Some(reservation)) = (&escalation.stateless, reservation) {
            ids.issue(
                reservation,
                record.id.clone(),
                escalation.owner.clone(),
                &escalation.tasks,
            );
        }
        let created = CreateTaskResult::new(crate::tasks::wire::detailed(&record).task);
        sender.send(Next::Task(created, handoff)).is_ok()
    }
}
