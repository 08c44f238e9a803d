//! The rmcp handler: one per connection (or per stateless HTTP request), serving the
//! session's (or the stateless context's) tools, tasks and list changes.

use std::future::Future;
use std::sync::{Arc, Mutex};

use dsh_runtime::Arguments;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CustomRequest, CustomResult,
    GetTaskParams, GetTaskResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig, SubscriptionFilter, Tool, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, Peer, RoleServer, ServerHandler};
use tokio_util::sync::CancellationToken;

use super::context::{Session, SessionCell, StatelessContext};
use super::tool_list::{Fingerprint, ToolList};
use super::trace::{self, Target};
use super::{Shared, extension};
use crate::definition::McpTool;
use crate::store::{Owner, TaskModel};
use crate::tasks::SessionTasks;
use crate::tasks::rev_2025_11_25::{self, NotServed};
use crate::util::lock;
use crate::wire::listen::ListenTasks;
use crate::wire::rev_2025_11_25::{
    Rev2025_11_25Route, TaskAsked, VERSION, is_rev_2025_11_25_method,
};

/// The rmcp handler for one connection (or one stateless HTTP request).
pub(crate) struct Handler {
    pub(crate) shared: Arc<Shared>,
    pub(crate) cell: Arc<SessionCell>,
    /// The HTTP server's stateless context, for requests without a session.
    pub(crate) stateless: Option<Arc<StatelessContext>>,
    pub(crate) open_on_initialize: bool,
    /// The session's published list when a listen stream was accepted, before the
    /// client was told so: changes from then on are notified on that stream.
    pub(crate) listen_baseline: Mutex<Option<Fingerprint>>,
}

impl Handler {
    /// The request's session: its connection (stdio), or the HTTP session it belongs to.
    pub(crate) fn session(&self) -> Option<Arc<Session>> {
        self.cell.get()
    }

    /// Where the request runs: its session, or (a request without one, over HTTP) the
    /// server's stateless context.
    pub(crate) fn context(&self) -> Option<Arc<Session>> {
        self.cell.get().or_else(|| {
            self.stateless
                .as_ref()
                .map(|context| context.0.open(&self.shared, true))
        })
    }

    pub(crate) fn tool_list(&self, session: Option<&Session>) -> Arc<ToolList> {
        match session {
            Some(s) => s.tools.get(&self.shared, Some(s.scope.id())),
            None => self.shared.global.get(&self.shared, None),
        }
    }

    /// Send `notifications/tools/list_changed` through `send` whenever the session's
    /// published list differs from the last one seen (at first `baseline`, or the list
    /// now), until the session (or `until`) ends.
    pub(crate) fn watch_list<F, Fut>(
        &self,
        session: Arc<Session>,
        baseline: Option<Fingerprint>,
        until: CancellationToken,
        send: F,
    ) where
        F: Fn() -> Fut + Send + 'static,
        Fut: Future<Output = bool> + Send,
    {
        let shared = self.shared.clone();
        let mut changes = shared.registry.changes();
        let mut last =
            baseline.unwrap_or_else(|| self.tool_list(Some(&session)).fingerprint.clone());
        let stop = session.stop.clone();
        let weak = Arc::downgrade(&session);
        drop(session);
        tokio::spawn(async move {
            // The first round compares at once: a change between the baseline and this
            // task's start is not missed.
            let mut first = true;
            loop {
                if !first {
                    tokio::select! {
                        _ = stop.cancelled() => break,
                        _ = until.cancelled() => break,
                        changed = changes.changed() => if changed.is_err() { break },
                    }
                }
                first = false;
                let Some(session) = weak.upgrade() else { break };
                let list = session.tools.get(&shared, Some(session.scope.id()));
                drop(session);
                if list.fingerprint != last {
                    last = list.fingerprint.clone();
                    if !send().await {
                        break;
                    }
                }
            }
        });
    }

    /// The session a listen stream belongs to: the request's context (a session of its
    /// own, opened now, where there is no stateless context).
    pub(crate) fn listen_session(&self) -> Arc<Session> {
        match self.context() {
            Some(session) => session,
            None => self.cell.open(&self.shared, false),
        }
    }
}

impl ServerHandler for Handler {
    // `logging` is deprecated by revision 2026-07-28 (SEP-2577), and served on both.
    #[allow(deprecated)]
    fn get_info(&self) -> ServerConfig {
        let builder = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_logging();
        // Tool calls may become tasks only where there is a job runtime to run them.
        let capabilities = if self.shared.registry.jobs().is_some() {
            builder.enable_tasks().build()
        } else {
            builder.build()
        };
        let capabilities = add_capabilities(
            capabilities,
            self.shared.resources.is_some(),
            self.shared.prompts.is_some(),
        );
        let mut config = ServerConfig::new(capabilities).with_server_info(self.shared.info.clone());
        if let Some(text) = &self.shared.instructions {
            config = config.with_instructions(text.clone());
        }
        config
    }

    async fn initialize(
        &self,
        request: rmcp::model::InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::InitializeResult, McpError> {
        let span = trace::server_span("initialize", Target::None, &context);
        let work = async {
            context.peer.set_peer_info(request.clone());
            if self.open_on_initialize {
                self.cell.open(&self.shared, false);
            }
            self.negotiate_initialize(&request)
                .map(|result| super::apps::on_initialize(result, &request.capabilities))
        };
        trace::traced(span, "initialize", work, |_| false).await
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::DiscoverResult, McpError> {
        let span = trace::server_span("server/discover", Target::None, &context);
        let work = async {
            let result = rmcp::model::DiscoverResult::from_server_info(
                self.supported_protocol_versions().into_owned(),
                self.get_info(),
            );
            // The UI extension, for a request whose capabilities declare it.
            Ok(super::apps::on_discover(
                result,
                context.client_capabilities().as_ref(),
            ))
        };
        trace::traced(span, "server/discover", work, |_| false).await
    }

    async fn ping(&self, context: RequestContext<RoleServer>) -> Result<(), McpError> {
        let span = trace::server_span("ping", Target::None, &context);
        trace::traced(span, "ping", std::future::ready(Ok(())), |_| false).await
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // Sessions on revisions with `initialize` get list changes as plain notifications.
        if let Some(session) = self.session() {
            let peer: Peer<RoleServer> = context.peer.clone();
            self.watch_context_lists(&session, context.peer.clone());
            self.watch_list(session, None, CancellationToken::new(), move || {
                let peer = peer.clone();
                async move { peer.notify_tool_list_changed().await.is_ok() }
            });
        }
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        if requested.tools_list_changed == Some(true) {
            // Called before the client is told the stream is open: what it sees from
            // here on is what the stream reports changes against.
            let session = self.listen_session();
            let baseline = self.tool_list(Some(&session)).fingerprint.clone();
            *lock(&self.listen_baseline) = Some(baseline);
        }
        let mut filter = SubscriptionFilter::builder().tools_list_changed();
        if self.shared.prompts.is_some() {
            filter = filter.prompts_list_changed();
        }
        if let Some(resources) = &self.shared.resources {
            filter = filter.resources_list_changed();
            // Updates of the requested resources this server has.
            let known: Vec<String> = requested
                .resource_subscriptions
                .iter()
                .flatten()
                .filter(|uri| resources.knows(uri))
                .cloned()
                .collect();
            if !known.is_empty() {
                filter = filter.resource_subscriptions(known);
            }
        }
        Some(filter.build())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        // Revisions without `initialize` ask for list changes on a listen stream.
        if context.accepted().tools_list_changed == Some(true) {
            let session = self.listen_session();
            let baseline = lock(&self.listen_baseline).take();
            let sink = context.sink().clone();
            let until = context.request_context().ct.clone();
            self.watch_list(session, baseline, until, move || {
                let sink = sink.clone();
                async move { sink.notify_tool_list_changed().await.is_ok() }
            });
        }
        self.listen_context_lists(&context);
        // The tasks extension's `taskIds`, read by the transport (see
        // `crate::tasks::listen`): each task of this context is followed.
        let request = context.request_context();
        let listen = extension::<ListenTasks>(&request.extensions).cloned();
        if let Some(ListenTasks(ids)) = listen {
            for id in ids.iter() {
                let Ok(found) = self.task_of(id, request) else {
                    continue;
                };
                let task = crate::tasks::listen::Followed {
                    tasks: found.tasks,
                    owner: found.owner,
                    id: found.id,
                };
                tokio::spawn(crate::tasks::listen::follow(
                    task,
                    request.peer.clone(),
                    request.id.clone(),
                    request.ct.clone(),
                ));
            }
        }
        context.cancelled().await;
        Ok(())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let span = trace::server_span("tools/list", Target::None, &context);
        let work = async { self.list_tools_of(request, &context) };
        trace::traced(span, "tools/list", work, |_| false).await
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let session = self.context();
        let list = self.tool_list(session.as_deref());
        let index = *list.by_name.get(name)?;
        Some(list.tools[index].as_ref()?.tool.clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let span = trace::server_span("tools/call", Target::Tool(&request.name), &context);
        // Boxed: rmcp moves this future into a task of its own (several copies of its
        // whole size under tokio's boxing threshold), and `traced` holds the call beside
        // its own state; a box is moved as a pointer.
        trace::traced(
            span,
            "tools/call",
            Box::pin(self.call_tool_traced(request, context)),
            trace::is_tool_error,
        )
        .await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, McpError> {
        let span = trace::server_span("resources/list", Target::None, &context);
        let work = async { self.list_resources_of(&context) };
        trace::traced(span, "resources/list", work, |_| false).await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourceTemplatesResult, McpError> {
        let span = trace::server_span("resources/templates/list", Target::None, &context);
        let work = async { self.list_templates_of(&context) };
        trace::traced(span, "resources/templates/list", work, |_| false).await
    }

    async fn read_resource(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, McpError> {
        let span = trace::server_span("resources/read", Target::Resource(&request.uri), &context);
        let ui = super::apps::declared(context.client_capabilities().as_ref());
        if let Some(view) = super::apps::read(&request.uri, ui) {
            return Ok(view.into());
        }
        let work = async {
            self.read_resource_of(request, &context)
                .await
                .map(Into::into)
        };
        trace::traced(span, "resources/read", Box::pin(work), |_| false).await
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: rmcp::model::SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let span = trace::server_span(
            "resources/subscribe",
            Target::Resource(&request.uri),
            &context,
        );
        let work = async { self.subscribe_of(request, &context) };
        trace::traced(span, "resources/subscribe", work, |_| false).await
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: rmcp::model::UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let span = trace::server_span(
            "resources/unsubscribe",
            Target::Resource(&request.uri),
            &context,
        );
        let work = async { self.unsubscribe_of(request) };
        trace::traced(span, "resources/unsubscribe", work, |_| false).await
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListPromptsResult, McpError> {
        let span = trace::server_span("prompts/list", Target::None, &context);
        let work = async { self.list_prompts_of(&context) };
        trace::traced(span, "prompts/list", work, |_| false).await
    }

    async fn get_prompt(
        &self,
        request: rmcp::model::GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, McpError> {
        let span = trace::server_span("prompts/get", Target::Prompt(&request.name), &context);
        // Boxed, as every handler whose future is larger than a few hundred bytes: rmcp
        // spawns one task per request holding the future of the dispatch over all of them,
        // so the largest arm sets what every request (a `tools/call` too) copies.
        let work = Box::pin(self.get_prompt_of(request, &context));
        trace::traced(span, "prompts/get", work, |_| false).await
    }

    async fn complete(
        &self,
        request: rmcp::model::CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CompleteResult, McpError> {
        let span = trace::server_span("completion/complete", Target::None, &context);
        let work = Box::pin(self.complete_of(request, &context));
        trace::traced(span, "completion/complete", work, |_| false).await
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let span = trace::server_span("logging/setLevel", Target::None, &context);
        let work = async { self.set_level_of(request, &context) };
        trace::traced(span, "logging/setLevel", work, |_| false).await
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        let routed = extension::<Rev2025_11_25Route>(&context.extensions).is_some();
        if !routed || !is_rev_2025_11_25_method(&request.method) {
            return Err(McpError::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                format!("method not found: {}", request.method),
                None,
            ));
        }
        // The rerouted method's own name (`tasks/get`, …) and its tool, if a call.
        let method = routed_method(&request.method);
        let tool = request
            .params
            .as_ref()
            .filter(|_| method == "tools/call")
            .and_then(|p| p.get("name"))
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned);
        let target = tool.as_deref().map_or(Target::None, Target::Tool);
        let span = trace::server_span(method, target, &context);
        let work = Box::pin(self.rev_2025_11_25_request(request, context));
        trace::traced(span, method, work, |v| {
            v.get("isError") == Some(&serde_json::Value::Bool(true))
        })
        .await
        .map(CustomResult::new)
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        let span = trace::server_span("tasks/get", Target::None, &context);
        let work = async {
            let found = self.task_of(&request.task_id, &context)?;
            let record = found.tasks.get(&found.owner, &found.id).await?;
            Ok(GetTaskResult::new(crate::tasks::wire::detailed(&record)))
        };
        trace::traced(span, "tasks/get", Box::pin(work), |_| false).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let span = trace::server_span("tasks/update", Target::None, &context);
        let work = async {
            let found = self.task_of(&request.task_id, &context)?;
            found
                .tasks
                .update(&found.owner, &found.id, &request.input_responses)
                .await
        };
        trace::traced(span, "tasks/update", Box::pin(work), |_| false).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let span = trace::server_span("tasks/cancel", Target::None, &context);
        let work = async {
            let found = self.task_of(&request.task_id, &context)?;
            found
                .tasks
                .cancel(&found.owner, &found.id)
                .await
                .map(|_| ())
        };
        trace::traced(span, "tasks/cancel", Box::pin(work), |_| false).await
    }
}

impl Handler {
    /// `tools/list`, in its server span (also the body of 2025-11-25's rerouted one).
    pub(super) fn list_tools_of(
        &self,
        request: Option<PaginatedRequestParams>,
        context: &RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        if let Some(cursor) = request.and_then(|r| r.cursor) {
            return Err(McpError::invalid_params(
                format!("invalid cursor {cursor:?}: this server lists every tool in one page"),
                None,
            ));
        }
        let session = self.context();
        let list = self.tool_list(session.as_deref());
        let listing = super::apps::Listing::new(
            &self.shared.registry,
            session.as_deref().map(|s| &s.scope),
            context.client_capabilities().as_ref(),
        );
        // A token's identity sees only the tools its scopes allow.
        let mut result = ListToolsResult::with_all_items(
            list.tools
                .iter()
                .flatten()
                .filter(|t| self.may_see(&t.tool, context))
                .map(|t| listing.tool(&t.tool))
                .collect(),
        );
        if let Some((ttl, scope)) = self.shared.cache {
            result = result.with_ttl_ms(ttl).with_cache_scope(scope);
        }
        Ok(result)
    }

    /// `logging/setLevel`, in its server span.
    #[allow(deprecated)]
    fn set_level_of(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        // Revision 2026-07-28 has no `logging/setLevel`: a request sets its own level.
        let session = self.session().filter(|_| {
            context
                .protocol_version()
                .is_none_or(|v| v.has_initialize())
        });
        let Some(session) = session else {
            return Err(McpError::method_not_found::<
                rmcp::model::SetLevelRequestMethod,
            >());
        };
        *lock(&session.log_level) = crate::caller::logs::level_of(request.level);
        Ok(())
    }

    /// `tools/call`, in its server span.
    pub(super) async fn call_tool_traced(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // A 2025-11-25 call asking for a task the transport did not reroute: that
        // revision's tasks are not served to this client (see `crate::tasks::rev_2025_11_25`).
        if extension::<TaskAsked>(&context.extensions).is_some()
            && context
                .protocol_version()
                .is_some_and(|v| v.as_str() == VERSION)
        {
            let why = if self.shared.registry.jobs().is_none() {
                NotServed::NoJobs
            } else {
                NotServed::NoSession
            };
            return Err(rev_2025_11_25::not_served(request.name.as_ref(), why));
        }
        self.tool_call(request, context).await
    }
}

/// The MCP method a 2025-11-25 request rerouted by the transport was sent as.
fn routed_method(routed: &str) -> &'static str {
    use crate::wire::rev_2025_11_25 as wire;
    match routed {
        wire::CALL => "tools/call",
        wire::LIST_TOOLS => "tools/list",
        wire::GET => "tasks/get",
        wire::RESULT => "tasks/result",
        wire::LIST => "tasks/list",
        wire::CANCEL => "tasks/cancel",
        // Answered "method not found" by `rev_2025_11_25_request`.
        _ => "_OTHER",
    }
}

/// The note a denied call's message ends with when the client could not ask its user:
/// the fact, then why.
macro_rules! cannot_ask_because {
    ($why:literal) => {
        concat!("the MCP client cannot ask its user for approval: ", $why)
    };
}

/// Why a call's `ask` cannot go to the client's user, if it cannot (the note its denial
/// carries, through [`dsh_runtime::hooks::Approval::UnavailableBecause`]).
pub(crate) fn cannot_ask(capable: bool, resumable: bool, in_session: bool) -> Option<&'static str> {
    if !capable {
        Some(cannot_ask_because!(
            "it did not declare the elicitation capability"
        ))
    } else if resumable {
        // Capable clients on these revisions suspend ordinary calls instead.
        Some(cannot_ask_because!(
            "this protocol revision has no server-to-client requests"
        ))
    } else if !in_session {
        Some(cannot_ask_because!(
            "a request without a session cannot be asked back"
        ))
    } else {
        None
    }
}

/// What starting a task needs from its `tools/call`.
pub(crate) struct TaskStart<'a> {
    pub(crate) session: &'a Arc<Session>,
    pub(crate) tasks: Arc<SessionTasks>,
    pub(crate) name: &'a str,
    pub(crate) arguments: Arguments,
    pub(crate) tool: Option<Arc<McpTool>>,
    pub(crate) context: &'a RequestContext<RoleServer>,
    /// The revision has no `initialize` (and no server-to-client requests).
    pub(crate) resumable: bool,
    pub(crate) cannot_ask: Option<&'static str>,
    /// The model the task is created through.
    pub(crate) model: TaskModel,
    /// The task's place among the stateless context's tasks (a task of that context).
    pub(crate) reservation: Option<crate::tasks::stateless::Reservation>,
}

/// A task a `tasks/*` request named: the tasks it is one of, its id and owner.
pub(crate) struct FoundTask {
    pub(crate) tasks: Arc<SessionTasks>,
    pub(crate) owner: Owner,
    pub(crate) id: String,
}

/// Add the capabilities of what the server serves besides tools.
fn add_capabilities(
    capabilities: ServerCapabilities,
    resources: bool,
    prompts: bool,
) -> ServerCapabilities {
    if !resources && !prompts {
        return capabilities;
    }
    let mut value = serde_json::to_value(&capabilities).unwrap_or_else(|_| serde_json::json!({}));
    if let Some(object) = value.as_object_mut() {
        if resources {
            object.insert(
                "resources".into(),
                serde_json::json!({"subscribe": true, "listChanged": true}),
            );
        }
        if prompts {
            object.insert("prompts".into(), serde_json::json!({"listChanged": true}));
        }
        object.insert("completions".into(), serde_json::json!({}));
    }
    serde_json::from_value(value).unwrap_or(capabilities)
}
