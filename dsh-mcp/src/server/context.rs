//! Where a request runs: its session (one connection, or one HTTP session), or the
//! HTTP server's stateless context, which every request without a session shares.

use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, Mutex};

use dsh_runtime::AgentScope;
use rmcp::RoleServer;
use rmcp::service::RequestContext;
use tokio_util::sync::CancellationToken;

use super::tool_list::ListCache;
use super::{SessionGuard, Shared};
use crate::approval::keys::StateKeys;
use crate::identity::Identity;
use crate::store::Owner;
use crate::tasks::SessionTasks;
use crate::tasks::stateless::PublicIds;
use crate::util::{lock, unpoisoned};

/// The stateless context of one HTTP server: the session its requests without one
/// share (see [`McpServer::on_session`](crate::McpServer::on_session)), opened on first use.
#[derive(Default)]
pub(crate) struct StatelessContext(pub(crate) SessionCell);

impl StatelessContext {
    /// End the context: its tasks stop, its setup's close futures run.
    #[cfg(feature = "http")]
    pub(crate) async fn close(&self) {
        let session = self.0.take();
        if let Some(session) = session {
            session.close().await;
        }
    }
}

/// Closes a session opened by [`McpServer::session_handler`](crate::McpServer::session_handler).
pub(crate) struct SessionHandle(pub(crate) Arc<SessionCell>);

impl SessionHandle {
    pub(crate) async fn close(self) {
        let session = self.0.take();
        if let Some(session) = session {
            session.close().await;
        }
    }
}

#[derive(Default)]
pub(crate) struct SessionCell(Mutex<Option<Arc<Session>>>);

impl SessionCell {
    pub(crate) fn get(&self) -> Option<Arc<Session>> {
        lock(&self.0).clone()
    }

    pub(crate) fn take(&self) -> Option<Arc<Session>> {
        lock(&self.0).take()
    }

    /// The session, opened now if there is none (`stateless`: the stateless context of
    /// an HTTP server, whose tasks get public ids).
    pub(crate) fn open(&self, shared: &Shared, stateless: bool) -> Arc<Session> {
        let mut slot = lock(&self.0);
        if let Some(session) = &*slot {
            return session.clone();
        }
        let scope = shared.registry.scope();
        let guard = shared.on_session.as_ref().map(|setup| setup(&scope));
        let owner = guard.as_ref().and_then(|g| g.job_owner);
        let tasks = shared.registry.jobs().map(|jobs| {
            Arc::new(SessionTasks::new(
                shared.instance.lease().clone(),
                jobs.clone(),
                owner,
            ))
        });
        let stop = CancellationToken::new();
        let kind = if stateless {
            Context::Stateless {
                ids: PublicIds::new(shared.stateless_tasks, stop.clone()),
                principals: Principals::new(shared.keys.clone()),
            }
        } else {
            // Random: unique among every instance sharing the store.
            let name = crate::util::random_hex(16)
                .unwrap_or_else(|| format!("{}-{}", scope.id().get(), crate::util::now_ms()));
            Context::Session(Owner::new(format!("session:{name}")))
        };
        let session = Arc::new(Session {
            scope,
            guard: Mutex::new(guard),
            stop,
            tools: ListCache::default(),
            tasks,
            kind,
            log_level: Mutex::new(dsh_runtime::caller::LogLevel::Info),
            subscriptions: Default::default(),
            opened: std::time::Instant::now(),
        });
        *slot = Some(session.clone());
        session
    }
}

/// One MCP session: its agent scope, what its setup keeps, its tool list.
pub(crate) struct Session {
    pub(crate) scope: AgentScope,
    pub(crate) guard: Mutex<Option<SessionGuard>>,
    /// Cancelled when the session ends (stops the list-change watchers).
    pub(crate) stop: CancellationToken,
    pub(crate) tools: ListCache,
    /// The session's tasks, when the registry has a job runtime.
    pub(crate) tasks: Option<Arc<SessionTasks>>,
    /// A session of its own, or the stateless context every request without one shares.
    pub(crate) kind: Context,
    /// The least severe log level its client gets (`logging/setLevel`; `info` until it
    /// sets one).
    pub(crate) log_level: Mutex<dsh_runtime::caller::LogLevel>,
    /// The resources its client subscribed to.
    pub(crate) subscriptions: Subscriptions,
    /// When it opened: its end records `mcp.server.session.duration`.
    pub(crate) opened: std::time::Instant,
}

/// What a [`Session`] is.
pub(crate) enum Context {
    /// A session (one connection, or one HTTP session): its tasks belong to it, and are
    /// known by their job ids.
    Session(Owner),
    /// The stateless context of an HTTP server: its tasks belong to the credentials of
    /// the request that created them, and get public ids and a time to live (see
    /// `crate::tasks::stateless`).
    Stateless {
        /// The places and limits of its tasks.
        ids: Arc<PublicIds>,
        /// How its requests' credentials are told apart.
        principals: Principals,
    },
}

impl Session {
    /// The places and limits of the stateless context's tasks (`None`: a session).
    pub(crate) fn stateless(&self) -> Option<&Arc<PublicIds>> {
        match &self.kind {
            Context::Stateless { ids, .. } => Some(ids),
            Context::Session(_) => None,
        }
    }

    /// The principal of a request in the stateless context (`None`: a session).
    pub(crate) fn principal(&self, context: &RequestContext<RoleServer>) -> Option<Principal> {
        match &self.kind {
            Context::Stateless { principals, .. } => Some(principal(principals, context)),
            Context::Session(_) => None,
        }
    }

    /// Who the request's tasks and approval states belong to: the session, or the
    /// request's credentials in the stateless context.
    pub(crate) fn owner(&self, context: &RequestContext<RoleServer>) -> Owner {
        match &self.kind {
            Context::Session(owner) => owner.clone(),
            Context::Stateless { principals, .. } => principal(principals, context).owner(),
        }
    }
}

impl Session {
    pub(crate) async fn close(&self) {
        self.stop.cancel();
        if let Some(tasks) = &self.tasks {
            let records = match &self.kind {
                Context::Session(owner) => Some(owner),
                Context::Stateless { .. } => None,
            };
            tasks.close(records).await;
        }
        let guard = lock(&self.guard).take();
        if let Some(guard) = guard {
            guard.close().await;
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.stop.cancel();
        // A session's lifetime, as the histogram of the MCP conventions (seconds; the
        // stateless context is no session).
        if self.stateless().is_none() {
            tracing::info!(
                histogram.mcp.server.session.duration = self.opened.elapsed().as_secs_f64()
            );
        }
        let guard = unpoisoned(self.guard.get_mut()).take();
        if let Some(guard) = guard {
            match tokio::runtime::Handle::try_current() {
                Ok(handle) => {
                    handle.spawn(guard.close());
                }
                Err(_) => drop(guard),
            }
        }
    }
}

/// Who sent a request served statelessly: a keyed hash of its credentials (`None`
/// without any).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Principal(Option<String>);

impl Principal {
    /// A text naming the principal (the hash, or `anonymous`), for bindings.
    pub(crate) fn tag(&self) -> String {
        self.0.clone().unwrap_or_else(|| "anonymous".to_string())
    }

    /// The store owner of the tasks this principal starts statelessly.
    pub(crate) fn owner(&self) -> Owner {
        Owner::new(format!("credentials:{}", self.tag()))
    }
}

/// How the stateless context tells its requests' senders apart: a keyed hash of their
/// credentials, never the credentials.
pub(crate) struct Principals {
    /// The keys the hash is keyed with (shared by the instances that share them);
    /// without any, a random hasher of this process.
    keys: Option<StateKeys>,
    hasher: RandomState,
}

impl Principals {
    pub(crate) fn new(keys: Option<StateKeys>) -> Self {
        Principals {
            keys,
            hasher: RandomState::new(),
        }
    }

    /// The principal of a request with this `Authorization` header value.
    pub(crate) fn of(&self, authorization: Option<&[u8]>) -> Principal {
        Principal(authorization.map(|value| match &self.keys {
            Some(keys) => keys.digest("dsh-mcp principal", value),
            None => format!("{:016x}", self.hasher.hash_one(value)),
        }))
    }
}

/// The principal of the request: its token's identity (see [`Identity::principal`]),
/// else its `Authorization` header.
fn principal(principals: &Principals, context: &RequestContext<RoleServer>) -> Principal {
    if let Some(identity) = super::extension::<Identity>(&context.extensions) {
        return principals.of(Some(identity.principal().as_bytes()));
    }
    #[cfg(feature = "http")]
    let header = context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.headers.get(axum::http::header::AUTHORIZATION))
        .map(axum::http::HeaderValue::as_bytes);
    #[cfg(not(feature = "http"))]
    let header = {
        let _ = context;
        None
    };
    principals.of(header)
}

/// The URIs a session's client subscribed to.
#[derive(Default)]
pub(crate) struct Subscriptions {
    pub(crate) uris: Mutex<std::collections::BTreeSet<String>>,
    /// Whether the task forwarding updates runs.
    pub(crate) forwarding: Mutex<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn principals_differ_by_header_and_match_the_same_header() {
        let principals = Principals::new(StateKeys::random().ok());
        let of = |header: Option<&[u8]>| principals.of(header);
        assert_eq!(of(Some(b"Bearer a")), of(Some(b"Bearer a")));
        assert_ne!(of(Some(b"Bearer a")), of(Some(b"Bearer b")));
        assert_ne!(of(Some(b"Bearer a")), of(None));
        assert_eq!(of(None), of(None));
    }
}
