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
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dsh_runtime::hooks::{Approval, ApprovalHandler, ApprovalRequest, HookFuture};
use dsh_runtime::{AgentScopeId, Registry, ToolError, ToolResult};
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolResult, ElicitResult, InputRequest, InputRequests, InputRequiredResult, InputResponses,
    Request, RequestStateCodec, SealOptions,
};
use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::approval::keys::StateKeys;
use crate::approval::{approval_form, approval_message, quoted, summary};
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

/// Where a suspended call's next question goes: to the request that will answer with
/// its `InputRequiredResult` (with the nonce of its state).
pub(crate) type Asked = oneshot::Sender<(String, InputRequiredResult)>;

/// The question slot of one call: filled by the request that waits for the call (the
/// first, then each retry), taken by the call's next `ask`.
pub(crate) type AskSlot = Arc<Mutex<Option<Asked>>>;

/// A call waiting for its approval.
pub(crate) struct Suspended {
    answer: oneshot::Sender<Approval>,
    /// The call's result, once the request that suspended it handed it over.
    result: Option<oneshot::Receiver<ToolResult>>,
    /// The suspended call's cancellation token.
    cancel: CancellationToken,
    /// The call's question slot, refilled by the retry before it answers.
    slot: AskSlot,
    /// The tool's published definition (how its result is wrapped).
    tool: Option<Arc<McpTool>>,
}

/// A state taken by a retry (see [`Resumes::take`]).
pub(crate) struct Taken {
    /// The suspended call's id.
    pub(crate) nonce: String,
    /// The retry's answer.
    pub(crate) answer: ElicitResult,
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

    /// Let the suspended call `nonce` go (its retry ran the call again elsewhere): it
    /// ends as cancelled, before its body ran.
    pub(crate) fn release_local(&self, nonce: &str) {
        if let Some(suspended) = self.take_local(nonce) {
            let _ = suspended.answer.send(Approval::Cancelled);
        }
    }

    /// Give the suspended call `answer` and wait for its result (the retry's `cancel`
    /// reaching the call) or its next question.
    pub(crate) async fn continue_call(
        &self,
        suspended: Suspended,
        answer: &ElicitResult,
        cancel: &CancellationToken,
        tool: &str,
    ) -> Result<Resumed, McpError> {
        let Suspended {
            answer: to_call,
            result,
            cancel: call_cancel,
            slot,
            tool: definition,
        } = suspended;
        let Some(mut result) = result else {
            return Err(refused(tool, "its call was not suspended yet"));
        };
        // This retry takes the call's next question, if it asks one.
        let (next_tx, mut next_rx) = oneshot::channel();
        *lock(&slot) = Some(next_tx);
        let _ = to_call.send(crate::approval::approval_of(answer));
        let ended = relay_cancellation(cancel.clone(), call_cancel);
        let out = tokio::select! {
            out = &mut result => out,
            asked = &mut next_rx => match asked {
                Ok((nonce, input)) => {
                    ended.cancel();
                    self.park_result(&nonce, result);
                    return Ok(Resumed::InputRequired(input));
                }
                // The call can no longer ask (it is ending).
                Err(_) => result.await,
            },
        };
        ended.cancel();
        out.map(|r| Resumed::Complete(to_mcp_result(&r, definition.as_deref())))
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
    ) -> Result<(String, ElicitResult), String> {
        let codec = self
            .codec
            .as_ref()
            .ok_or_else(|| "this server seals no states".to_string())?;
        let State { nonce } = codec.open_json_with(state, binding).map_err(|e| {
            format!(
                "{e} (a state is valid only for the session, tool and arguments of the call that received it, until it expires)"
            )
        })?;
        let answer = responses
            .and_then(|r| r.get(INPUT_KEY))
            .ok_or_else(|| format!("inputResponses.{INPUT_KEY} is missing"))?;
        let answer: ElicitResult = serde_json::from_value(answer.clone())
            .map_err(|e| format!("inputResponses.{INPUT_KEY} is not an elicitation result: {e}"))?;
        Ok((nonce, answer))
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

/// The first round's approval route: suspends the call and tells the request handler
/// what to answer.
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
    /// The tool's published definition.
    pub(crate) tool: Option<Arc<McpTool>>,
    /// The id of this server instance (which holds the suspended call).
    pub(crate) holder: String,
    /// The answer a retry that runs the call again gives its own question (the call's
    /// policy asking again, see `crate::store::ApprovalRecord::rerun`).
    pub(crate) preanswer: Mutex<Option<Approval>>,
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

    async fn ask(&self, request: ApprovalRequest<'_>) -> Result<Approval, ToolError> {
        let name = request.call.name();
        // Asked by the call's own policy: nothing of the call has run yet.
        let before_the_call = request.via.is_none();
        if before_the_call && let Some(answer) = lock(&self.preanswer).take() {
            return Ok(answer);
        }
        let Some(sender) = lock(&self.asked).take() else {
            // One question per round trip: while one is out, no other can be put.
            return Ok(Approval::Unavailable);
        };
        let Some(codec) = &self.resumes.codec else {
            return Ok(Approval::Unavailable);
        };
        let nonce = random_hex(16)
            .ok_or_else(|| ToolError::new("approval state: no random nonce available"))?;
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
                ToolError::new(format!("approval state for tool {}: {e}", quoted(name)))
            })?;
        let requests = self.form(&request)?;
        let (answer_tx, answer_rx) = oneshot::channel();
        self.resumes.lock().insert(
            nonce.clone(),
            Suspended {
                answer: answer_tx,
                result: None,
                cancel: self.cancel.clone(),
                slot: self.asked.clone(),
                tool: self.tool.clone(),
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
            return Err(ToolError::new(format!(
                "approval state for tool {}: {e}",
                quoted(name)
            )));
        }
        let input = InputRequiredResult::new(Some(requests), Some(state));
        if sender.send((nonce.clone(), input)).is_err() {
            self.resumes.lock().remove(&nonce);
            return Ok(Approval::Cancelled);
        }
        // The asking call's own token too: a code-mode program's tool call is cancelled
        // when its run ends (its deadline, say) while the outer call waits here.
        let answer = tokio::select! {
            answer = answer_rx => answer.ok(),
            () = tokio::time::sleep(self.resumes.ttl) => None,
            () = self.cancel.cancelled() => None,
            () = request.call.cancellation().cancelled() => None,
        };
        match answer {
            Some(answer) => Ok(answer),
            None => {
                self.resumes.lock().remove(&nonce);
                Ok(Approval::Cancelled)
            }
        }
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
