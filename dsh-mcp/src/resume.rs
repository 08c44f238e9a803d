//! Approval on protocol revisions without server-to-client requests (2026-07-28): the
//! call answers `InputRequiredResult`, and the retried call resumes it.
//!
//! The first `tools/call` runs the pipeline on a task of its own. When its `ask` reaches
//! this route, the call waits there, suspended, and the request is answered with an
//! `InputRequiredResult`: the approval form as an `elicitation/create` input request
//! (key `approval`), and a `requestState` sealed with rmcp's `RequestStateCodec` under a
//! key drawn at random for this server, with a TTL, whose associated data binds it to
//! the session (for a stateless request, the server's stateless context and a hash of
//! the request's `Authorization` header), the tool's name and the arguments' text. The client
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
//! The suspended call lives in this server process: the retry must reach the same
//! process (one stdio connection, or one HTTP server).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dsh_runtime::hooks::{Approval, ApprovalHandler, ApprovalRequest, HookFuture};
use dsh_runtime::{AgentScopeId, Registry, ToolError, ToolResult};
use rmcp::ErrorData as McpError;
use rmcp::model::{
    ElicitResult, InputRequest, InputRequests, InputRequiredResult, InputResponses, Request,
    RequestStateCodec, SealOptions,
};
use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::approval::{approval_form, approval_message, quoted, summary};
use crate::keys::StateKeys;
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
struct Suspended {
    answer: oneshot::Sender<Approval>,
    /// The call's result, once the request that suspended it handed it over.
    result: Option<oneshot::Receiver<ToolResult>>,
    /// The suspended call's cancellation token.
    cancel: CancellationToken,
    /// The call's question slot, refilled by the retry before it answers.
    slot: AskSlot,
}

/// What a retry answers: the call's result, or the next question of the same call (a
/// code-mode program whose next tool call needs approval too).
pub(crate) enum Resumed {
    /// The call ended.
    Complete(ToolResult),
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

    /// Resume the call `state` suspended with `responses`: its result (awaited, the
    /// retry's `cancel` reaching the call) or its next question, or why the state is
    /// refused.
    pub(crate) async fn resume(
        &self,
        store: &dyn Store,
        state: &str,
        responses: Option<&InputResponses>,
        binding: &[u8],
        tool: &str,
        cancel: &CancellationToken,
    ) -> Result<Resumed, McpError> {
        let refused = |why: String| {
            McpError::invalid_params(
                format!("tools/call {}: requestState refused: {why}", quoted(tool)),
                None,
            )
        };
        let (nonce, answer) = self.open(state, responses, binding).map_err(refused)?;
        // The store makes the state single-use, whichever instance the retry reaches.
        let used = "it was already used, or its call has ended (a state is single-use)";
        let taken = store
            .take_approval(&nonce)
            .await
            .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        let suspended = self.lock().remove(&nonce);
        let (Some(_), Some(suspended)) = (taken, suspended) else {
            return Err(refused(used.to_string()));
        };
        let Suspended {
            answer: to_call,
            result,
            cancel: call_cancel,
            slot,
        } = suspended;
        let Some(mut result) = result else {
            return Err(refused("its call was not suspended yet".to_string()));
        };
        // This retry takes the call's next question, if it asks one.
        let (next_tx, mut next_rx) = oneshot::channel();
        *lock(&slot) = Some(next_tx);
        let _ = to_call.send(crate::approval::approval_of(&answer));
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
        out.map(Resumed::Complete).map_err(|_| {
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
            },
        );
        let expires = now_ms().saturating_add(crate::util::millis(self.resumes.ttl));
        let kept = self
            .store
            .put_approval(ApprovalRecord::new(
                nonce.clone(),
                self.owner.clone(),
                expires,
            ))
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
