//! Letting a call in: its tool's scope against the request's [`Identity`] (see
//! [`super::scopes`]) and the limits per principal ([`PrincipalLimits`]), checked when a
//! `tools/call` (or a 2025-11-25 task call) reaches the handler, before anything runs.
//!
//! Over HTTP the verdict also goes back to the OAuth layer in front of rmcp, through the
//! [`VerdictSlot`] it put into the HTTP request's extensions: a call beyond its scope is
//! answered there with `403` and `WWW-Authenticate: Bearer error="insufficient_scope"`
//! instead of rmcp's response (whose JSON-RPC error nobody reads).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{ErrorCode, Tool};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::extension;
use super::handler::Handler;
use crate::identity::Identity;
use crate::store::Owner;
use crate::tasks::SessionTasks;
use crate::util::lock;

/// The JSON-RPC error code of a call refused for a limit per principal.
pub(crate) const LIMIT_EXCEEDED: ErrorCode = ErrorCode(-32029);

/// The JSON-RPC error code of a call beyond the token's scope (what a client that reads
/// the body sees; over HTTP the status is `403`).
pub(crate) const INSUFFICIENT_SCOPE: ErrorCode = ErrorCode(-32028);

/// How many calls and tasks each principal may have at once (see
/// [`McpServer::with_principal_limits`](crate::McpServer::with_principal_limits)).
///
/// The principal of a request is its token's identity (issuer, subject, client); every
/// request without one (stdio, a static bearer token) counts as one principal. A call
/// beyond a limit is refused with a JSON-RPC error (code `-32029`) naming the limit,
/// before it runs; the principal's other calls, and every other principal's, go on.
/// The counts are this server process's: instances behind one load balancer each count
/// their own.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PrincipalLimits {
    /// The most calls in progress at once per principal (`None`: no limit). A call
    /// answered in its request counts until it is answered; one suspended on its
    /// approval until its request is answered; a task does not (see `max_tasks`).
    pub max_calls: Option<usize>,
    /// The most tasks working at once per principal (`None`: no limit), counted from
    /// their start until they are completed, failed or cancelled.
    pub max_tasks: Option<usize>,
}

impl PrincipalLimits {
    /// No limits.
    pub fn new() -> Self {
        PrincipalLimits::default()
    }

    /// At most `max` calls in progress per principal.
    #[must_use]
    pub fn max_calls(mut self, max: usize) -> Self {
        self.max_calls = Some(max);
        self
    }

    /// At most `max` tasks working per principal.
    #[must_use]
    pub fn max_tasks(mut self, max: usize) -> Self {
        self.max_tasks = Some(max);
        self
    }
}

/// Why the handler did not let a call in, as it tells the OAuth layer waiting for its
/// verdict (through the [`VerdictSlot`]).
///
/// Not a [`crate::wire::Refusal`]: that is an answer, and this is a reason. The call is
/// refused in the handler with a JSON-RPC error like any other; over HTTP the OAuth layer
/// answers the request itself, with a challenge only it can write (it names the
/// protected-resource metadata), built as a refusal from this denial.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Denial {
    /// The token lacks `scope`, which the tool `tool` needs.
    InsufficientScope { tool: String, scope: String },
}

/// Where the handler puts its verdict on a call for the HTTP layer that waits for it
/// (`None`: let in; the answer is rmcp's).
#[derive(Clone, Debug)]
pub(crate) struct VerdictSlot(Arc<Mutex<Option<oneshot::Sender<Option<Denial>>>>>);

impl VerdictSlot {
    /// A slot, and where its verdict arrives (an error: the request never reached a
    /// call, and rmcp's answer stands).
    #[cfg_attr(not(feature = "oauth"), allow(dead_code))]
    pub(crate) fn new() -> (VerdictSlot, oneshot::Receiver<Option<Denial>>) {
        let (tx, rx) = oneshot::channel();
        (VerdictSlot(Arc::new(Mutex::new(Some(tx)))), rx)
    }

    /// Give the verdict (only the first counts).
    fn send(&self, verdict: Option<Denial>) {
        if let Some(tx) = lock(&self.0).take() {
            let _ = tx.send(verdict);
        }
    }
}

/// The calls and tasks in progress per principal.
#[derive(Default)]
pub(crate) struct Limiter {
    counts: Mutex<HashMap<String, Counts>>,
}

#[derive(Default)]
struct Counts {
    calls: usize,
    tasks: usize,
}

#[derive(Clone, Copy)]
enum Kind {
    Call,
    Task,
}

/// A place a call or task holds among its principal's; given back when dropped.
pub(crate) struct Permit {
    limiter: Arc<Limiter>,
    principal: String,
    kind: Kind,
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut counts = lock(&self.limiter.counts);
        if let Some(c) = counts.get_mut(&self.principal) {
            match self.kind {
                Kind::Call => c.calls = c.calls.saturating_sub(1),
                Kind::Task => c.tasks = c.tasks.saturating_sub(1),
            }
            if c.calls == 0 && c.tasks == 0 {
                counts.remove(&self.principal);
            }
        }
    }
}

impl Limiter {
    /// A place for one more of `kind` for `principal`, or `None` at `max`.
    fn take(self: &Arc<Self>, principal: &str, kind: Kind, max: usize) -> Option<Permit> {
        let mut counts = lock(&self.counts);
        let c = counts.entry(principal.to_string()).or_default();
        let count = match kind {
            Kind::Call => &mut c.calls,
            Kind::Task => &mut c.tasks,
        };
        if *count >= max {
            if c.calls == 0 && c.tasks == 0 {
                counts.remove(principal);
            }
            return None;
        }
        *count += 1;
        Some(Permit {
            limiter: self.clone(),
            principal: principal.to_string(),
            kind,
        })
    }
}

/// The principal limits count a request against: its identity's, or the one shared by
/// every request without one.
fn limit_key(identity: Option<&Identity>) -> String {
    identity.map_or_else(|| "anonymous".to_string(), Identity::principal)
}

/// Who a limit error names: the subject (and client), or "requests without a token".
fn who(identity: Option<&Identity>) -> String {
    match identity {
        Some(i) => match i.client_id() {
            Some(client) => format!("subject {:?} (client {client:?})", i.subject()),
            None => format!("subject {:?}", i.subject()),
        },
        None => "requests without an access token".to_string(),
    }
}

impl Handler {
    /// Let the call of `name` (published as `tool`) in: its scope, then the principal's
    /// calls in progress. The permit is held while the call runs in this request.
    ///
    /// # Errors
    ///
    /// The token lacks the tool's scope, or the principal has as many calls in progress
    /// as it may.
    pub(crate) fn admit(
        &self,
        name: &str,
        tool: Option<&Tool>,
        context: &RequestContext<RoleServer>,
    ) -> Result<Option<Permit>, McpError> {
        let slot = extension::<VerdictSlot>(&context.extensions);
        let identity = extension::<Identity>(&context.extensions);
        if let Some(identity) = identity
            && let Some(scope) = self.shared.tool_scopes.missing(identity, name, tool)
        {
            let denial = Denial::InsufficientScope {
                tool: name.to_string(),
                scope: scope.to_string(),
            };
            if let Some(slot) = slot {
                slot.send(Some(denial));
            }
            return Err(McpError::new(
                INSUFFICIENT_SCOPE,
                format!(
                    "insufficient_scope: tool `{name}` needs the scope `{scope}`, which the \
                     access token does not grant"
                ),
                Some(serde_json::json!({ "scope": scope })),
            ));
        }
        if let Some(slot) = slot {
            slot.send(None);
        }
        let Some(max) = self.shared.limits.max_calls else {
            return Ok(None);
        };
        let key = limit_key(identity);
        match self.shared.limiter.take(&key, Kind::Call, max) {
            Some(permit) => Ok(Some(permit)),
            None => Err(McpError::new(
                LIMIT_EXCEEDED,
                format!(
                    "too many calls: {} has {max} calls in progress, the most this server \
                     runs at once for one principal; try again when one has ended",
                    who(identity)
                ),
                Some(serde_json::json!({ "limit": "calls", "max": max })),
            )),
        }
    }

    /// A place for one more task of the request's principal, held until the task
    /// settles (`None`: no limit).
    ///
    /// # Errors
    ///
    /// The principal has as many tasks working as it may.
    pub(crate) fn admit_task(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<Option<Permit>, McpError> {
        let Some(max) = self.shared.limits.max_tasks else {
            return Ok(None);
        };
        let identity = extension::<Identity>(&context.extensions);
        let key = limit_key(identity);
        match self.shared.limiter.take(&key, Kind::Task, max) {
            Some(permit) => Ok(Some(permit)),
            None => Err(McpError::new(
                LIMIT_EXCEEDED,
                format!(
                    "too many tasks: {} has {max} tasks working, the most this server keeps \
                     for one principal; try again when one has ended",
                    who(identity)
                ),
                Some(serde_json::json!({ "limit": "tasks", "max": max })),
            )),
        }
    }

    /// Whether the request's identity may see the tool (`tools/list`).
    pub(crate) fn may_see(&self, tool: &Tool, context: &RequestContext<RoleServer>) -> bool {
        match extension::<Identity>(&context.extensions) {
            Some(identity) => self
                .shared
                .tool_scopes
                .missing(identity, &tool.name, Some(tool))
                .is_none(),
            None => true,
        }
    }
}

/// Hold `place` until the task `id` of `owner` settles (or is forgotten, or `until`
/// ends).
pub(crate) fn hold_until_settled(
    place: Permit,
    tasks: &Arc<SessionTasks>,
    owner: &Owner,
    id: &str,
    until: &CancellationToken,
) {
    let (tasks, owner, id, until) = (tasks.clone(), owner.clone(), id.to_string(), until.clone());
    tokio::spawn(async move {
        let _ = tasks.terminal(&owner, &id, until.cancelled()).await;
        drop(place);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permits_count_per_principal_until_dropped() {
        let limiter = Arc::new(Limiter::default());
        let a1 = limiter.take("a", Kind::Call, 2);
        let a2 = limiter.take("a", Kind::Call, 2);
        assert!(a1.is_some() && a2.is_some());
        assert!(limiter.take("a", Kind::Call, 2).is_none());
        // Another principal, and another kind, are counted apart.
        let b = limiter.take("b", Kind::Call, 2);
        assert!(b.is_some());
        let t = limiter.take("a", Kind::Task, 1);
        assert!(t.is_some());
        assert!(limiter.take("a", Kind::Task, 1).is_none());
        drop(a1);
        assert!(limiter.take("a", Kind::Call, 2).is_some());
        drop((a2, b, t));
        assert!(lock(&limiter.counts).is_empty());
    }
}
