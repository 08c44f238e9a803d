//! Where a request runs: its session (one connection, or one HTTP session), or the
//! HTTP server's stateless context, which every request without a session shares.

use std::sync::{Arc, Mutex};

use dsh_runtime::AgentScope;
use rmcp::RoleServer;
use rmcp::service::RequestContext;
use tokio_util::sync::CancellationToken;

use super::tool_list::ListCache;
use super::{SessionGuard, Shared};
use crate::identity::Identity;
use crate::store::Owner;
use crate::tasks::SessionTasks;
use crate::tasks::stateless::{Principal, PublicIds};
use crate::util::lock;

/// The stateless context of one HTTP server: the session its requests without one
/// share (see [`McpServer::on_session`]), opened on first use.
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

/// Closes a session opened by [`McpServer::session_handler`].
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
            Context::Stateless(PublicIds::new(
                shared.stateless_tasks,
                shared.keys.clone(),
                stop.clone(),
            ))
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
}

/// What a [`Session`] is.
pub(crate) enum Context {
    /// A session (one connection, or one HTTP session): its tasks belong to it, and are
    /// known by their job ids.
    Session(Owner),
    /// The stateless context of an HTTP server: its tasks belong to the credentials of
    /// the request that created them, and get public ids and a time to live (see
    /// `crate::tasks::stateless`).
    Stateless(Arc<PublicIds>),
}

impl Session {
    /// The places and limits of the stateless context's tasks (`None`: a session).
    pub(crate) fn stateless(&self) -> Option<&Arc<PublicIds>> {
        match &self.kind {
            Context::Stateless(ids) => Some(ids),
            Context::Session(_) => None,
        }
    }

    /// Who the request's tasks and approval states belong to: the session, or the
    /// request's credentials in the stateless context.
    pub(crate) fn owner(&self, context: &RequestContext<RoleServer>) -> Owner {
        match &self.kind {
            Context::Session(owner) => owner.clone(),
            Context::Stateless(ids) => principal(ids, context).owner(),
        }
    }
}

impl Session {
    pub(crate) async fn close(&self) {
        self.stop.cancel();
        if let Some(tasks) = &self.tasks {
            let records = match &self.kind {
                Context::Session(owner) => Some(owner),
                Context::Stateless(_) => None,
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
        let guard = self
            .guard
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
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

/// The principal of the request, as `ids` records it: its token's identity (see
/// [`Identity::principal`]), else its `Authorization` header.
pub(crate) fn principal(ids: &PublicIds, context: &RequestContext<RoleServer>) -> Principal {
    if let Some(identity) = super::extension::<Identity>(&context.extensions) {
        return ids.principal(Some(identity.principal().as_bytes()));
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
    ids.principal(header)
}
