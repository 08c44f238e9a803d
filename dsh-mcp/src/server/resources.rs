//! Resources, prompts and completion from the handler's side: the
//! `dsh_runtime::resources` and `dsh_runtime::prompts` collections a server was given
//! ([`McpServer::with_resources`](crate::McpServer::with_resources),
//! [`McpServer::with_prompts`](crate::McpServer::with_prompts)) on MCP's wire.
//!
//! - `resources/list` and `resources/templates/list` list every resource and template
//!   in one page; `resources/read` of a URI nothing answers, or whose placeholder does
//!   not parse, is `-32602` with the URI in `data` (SEP-2164); a read that fails
//!   otherwise is `-32603`.
//! - `resources/subscribe` and `unsubscribe` (revision 2025-11-25 sessions): the
//!   session's client gets `notifications/resources/updated` for each subscribed URI the
//!   server announces with `Resources::notify_updated`.
//! - `prompts/list`, `prompts/get` (a missing or invalid argument: `-32602` naming it).
//!   A prompt may ask its caller (`dsh_runtime::caller::Caller::current`): on 2025-11-25
//!   sessions with requests to the client; on 2026-07-28 the prompt's questions come back
//!   as an `InputRequiredResult`, and the retry runs the prompt again from the start with
//!   the answers (so a prompt does nothing it must not do twice before it asks).
//! - `completion/complete` of a prompt argument or a template placeholder.
//! - Sessions with `initialize` hear `notifications/resources/list_changed` and
//!   `notifications/prompts/list_changed` when the collections change.

#![allow(deprecated)] // resources/subscribe is legacy-only (2025-11-25), and served there

use std::sync::Arc;

use dsh_runtime::complete::{Completion, CompletionRequest};
use dsh_runtime::prompts::{GotPrompt, PromptError, PromptInfo};
use dsh_runtime::resources::{ResourceError, ResourceInfo};
use rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResponse,
    GetPromptResult, InputRequiredResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, Prompt, ReadResourceRequestParams, ReadResourceResult, Reference,
    Resource, ResourceTemplate, ResourceUpdatedNotificationParam, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, Peer, RoleServer};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::context::Session;
use super::handler::Handler;
use crate::caller::logs::LogSink;
use crate::caller::rounds::Rounds;
use crate::caller::session::SessionCaller;
use crate::util::lock;

/// A list result that carries cache hints.
trait Hinted {
    fn hinted(self, ttl: u64, scope: rmcp::model::CacheScope) -> Self;
}

macro_rules! hinted {
    ($($t:ty),*) => {$(
        impl Hinted for $t {
            fn hinted(self, ttl: u64, scope: rmcp::model::CacheScope) -> Self {
                self.with_ttl_ms(ttl).with_cache_scope(scope)
            }
        }
    )*};
}

hinted!(
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListPromptsResult
);

/// The refusal of what needs a scope the request's token lacks.
fn insufficient(what: &str, scope: &str) -> McpError {
    McpError::new(
        super::admission::INSUFFICIENT_SCOPE,
        format!(
            "insufficient_scope: {what} needs the scope `{scope}`, which the access token does not grant"
        ),
        Some(json!({ "scope": scope })),
    )
}

fn not_served(what: &str) -> McpError {
    McpError::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        format!("this server serves no {what}"),
        None,
    )
}

/// A value of ours as one of rmcp's, through JSON.
fn convert<T: serde::de::DeserializeOwned>(value: Value, what: &str) -> Result<T, McpError> {
    serde_json::from_value(value)
        .map_err(|e| McpError::internal_error(format!("{what} is not MCP's: {e}"), None))
}

fn resource_json(info: &ResourceInfo, template: bool) -> Value {
    let mut out = serde_json::Map::new();
    out.insert(
        if template { "uriTemplate" } else { "uri" }.into(),
        json!(info.uri),
    );
    out.insert("name".into(), json!(info.name));
    let optional = [
        ("title", info.title.as_ref()),
        ("description", info.description.as_ref()),
        ("mimeType", info.mime_type.as_ref()),
    ];
    for (key, value) in optional {
        if let Some(value) = value {
            out.insert(key.into(), json!(value));
        }
    }
    if let (Some(size), false) = (info.size, template) {
        out.insert("size".into(), json!(size));
    }
    if let Some(annotations) = &info.annotations {
        out.insert(
            "annotations".into(),
            serde_json::to_value(annotations).unwrap_or(Value::Null),
        );
    }
    Value::Object(out)
}

fn resource_error(uri: &str, error: ResourceError) -> McpError {
    match error {
        ResourceError::NotFound(_) => McpError::invalid_params(
            format!("resources/read: no resource {uri}"),
            Some(json!({ "uri": uri })),
        ),
        ResourceError::InvalidParams { .. } => McpError::invalid_params(
            format!("resources/read {uri}: {error}"),
            Some(json!({ "uri": uri })),
        ),
        other => McpError::internal_error(format!("resources/read {uri}: {other}"), None),
    }
}

fn prompt_error(error: PromptError) -> McpError {
    match error {
        PromptError::Failed(why) => McpError::internal_error(format!("prompts/get: {why}"), None),
        other => McpError::invalid_params(format!("prompts/get: {other}"), None),
    }
}

fn prompt_json(info: &PromptInfo) -> Value {
    let arguments: Vec<Value> = info
        .arguments
        .iter()
        .map(|a| {
            let mut out = json!({ "name": a.name, "required": a.required });
            if let Some(title) = &a.title {
                out["title"] = json!(title);
            }
            if let Some(description) = &a.description {
                out["description"] = json!(description);
            }
            out
        })
        .collect();
    let mut out = json!({ "name": info.name, "arguments": arguments });
    if let Some(title) = &info.title {
        out["title"] = json!(title);
    }
    if let Some(description) = &info.description {
        out["description"] = json!(description);
    }
    out
}

fn got_prompt_json(got: &GotPrompt) -> Value {
    let messages: Vec<Value> = got
        .messages
        .iter()
        .map(|m| {
            json!({
                "role": serde_json::to_value(m.role).unwrap_or(Value::Null),
                "content": serde_json::to_value(&m.content).unwrap_or(Value::Null),
            })
        })
        .collect();
    let mut out = json!({ "messages": messages });
    if let Some(description) = &got.description {
        out["description"] = json!(description);
    }
    out
}

fn completion_result(completion: Completion) -> Result<CompleteResult, McpError> {
    let mut info = json!({ "values": completion.values, "hasMore": completion.has_more });
    if let Some(total) = completion.total {
        info["total"] = json!(total.min(u64::from(u32::MAX)));
    }
    let mut result: CompleteResult = convert(json!({ "completion": info }), "a completion")?;
    result.result_type = Some(rmcp::model::ResultType::COMPLETE);
    Ok(result)
}

impl Handler {
    /// The scope the request lacks of `scope` (`None`: it has it, or the request has
    /// no identity: scopes come only with validated tokens).
    fn lacks<'a>(
        &self,
        scope: Option<&'a str>,
        context: &RequestContext<RoleServer>,
    ) -> Option<&'a str> {
        let identity = super::extension::<crate::identity::Identity>(&context.extensions)?;
        scope.filter(|s| !identity.has_scope(s))
    }

    /// Refuse what the request may not see of the resource published as `uri`.
    fn check_resource(
        &self,
        uri: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let scopes = &self.shared.tool_scopes;
        match self.lacks(scopes.resource_scope(uri), context) {
            Some(scope) => Err(insufficient(&format!("resource {uri}"), scope)),
            None => Ok(()),
        }
    }

    /// Refuse what the request may not see of the prompt `name`.
    fn check_prompt(
        &self,
        name: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let scopes = &self.shared.tool_scopes;
        match self.lacks(scopes.prompt_scope(name), context) {
            Some(scope) => Err(insufficient(&format!("prompt {name:?}"), scope)),
            None => Ok(()),
        }
    }

    /// The resources served, or the error of a server that serves none.
    fn served_resources(&self) -> Result<&dsh_runtime::resources::Resources, McpError> {
        self.shared
            .resources
            .as_ref()
            .ok_or_else(|| not_served("resources"))
    }

    /// The prompts served, or the error of a server that serves none.
    fn served_prompts(&self) -> Result<&dsh_runtime::prompts::Prompts, McpError> {
        self.shared
            .prompts
            .as_ref()
            .ok_or_else(|| not_served("prompts"))
    }

    /// `infos` (resources, or templates when `template`) as MCP's, those the request
    /// may see.
    fn visible<T: serde::de::DeserializeOwned>(
        &self,
        infos: &[ResourceInfo],
        template: bool,
        context: &RequestContext<RoleServer>,
    ) -> Result<Vec<T>, McpError> {
        infos
            .iter()
            .filter(|info| self.check_resource(&info.uri, context).is_ok())
            .map(|info| convert(resource_json(info, template), "a resource"))
            .collect()
    }

    pub(super) fn list_resources_of(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let items: Vec<Resource> =
            self.visible(&self.served_resources()?.list(), false, context)?;
        Ok(self.cached(ListResourcesResult::with_all_items(items)))
    }

    pub(super) fn list_templates_of(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let templates = self.served_resources()?.templates();
        let items: Vec<ResourceTemplate> = self.visible(&templates, true, context)?;
        Ok(self.cached(ListResourceTemplatesResult::with_all_items(items)))
    }

    pub(super) async fn read_resource_of(
        &self,
        request: ReadResourceRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<ReadResourceResult, McpError> {
        let resources = self.served_resources()?;
        let uri = request.uri.as_str();
        if let Some(info) = resources.resolve(uri) {
            self.check_resource(&info.uri, context)?;
        }
        let contents = resources
            .read(uri)
            .await
            .map_err(|e| resource_error(uri, e))?;
        let contents = serde_json::to_value(&contents)
            .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        let mut result: ReadResourceResult =
            convert(json!({ "contents": contents }), "a resource's contents")?;
        result.result_type = Some(rmcp::model::ResultType::COMPLETE);
        if let Some((ttl, scope)) = self.shared.cache {
            result.ttl_ms = Some(ttl);
            result.cache_scope = Some(scope);
        }
        Ok(result)
    }

    /// `list` with the server's cache hints, when it has some.
    fn cached<T: Hinted>(&self, list: T) -> T {
        match self.shared.cache {
            Some((ttl, scope)) => list.hinted(ttl, scope),
            None => list,
        }
    }

    pub(super) fn subscribe_of(
        &self,
        request: SubscribeRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let resources = self.served_resources()?;
        let session = self.session().ok_or_else(|| {
            McpError::invalid_request("resources/subscribe needs a session", None)
        })?;
        let Some(info) = resources.resolve(&request.uri) else {
            return Err(McpError::invalid_params(
                format!("resources/subscribe: no resource {}", request.uri),
                Some(json!({ "uri": request.uri })),
            ));
        };
        self.check_resource(&info.uri, context)?;
        lock(&session.subscriptions.uris).insert(request.uri.clone());
        let mut forwarding = lock(&session.subscriptions.forwarding);
        if !*forwarding {
            *forwarding = true;
            let shared = self.shared.clone();
            let resources = resources.clone();
            let (peer, session) = (context.peer.clone(), session.clone());
            tokio::spawn(async move {
                let updates = shared
                    .updates
                    .subscribe(
                        &resources,
                        &shared.store,
                        shared.instance.id(),
                        shared.instance.lease().stopped(),
                    )
                    .await;
                let stop = session.stop.clone();
                forward_updates(updates, peer, session, stop).await;
            });
        }
        Ok(())
    }

    pub(super) fn unsubscribe_of(&self, request: UnsubscribeRequestParams) -> Result<(), McpError> {
        self.served_resources()?;
        if let Some(session) = self.session() {
            lock(&session.subscriptions.uris).remove(&request.uri);
        }
        Ok(())
    }

    pub(super) fn list_prompts_of(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let prompts = self.served_prompts()?;
        let items: Vec<Prompt> = prompts
            .list()
            .iter()
            .filter(|info| self.check_prompt(&info.name, context).is_ok())
            .map(|info| convert(prompt_json(info), "a prompt"))
            .collect::<Result<_, _>>()?;
        Ok(self.cached(ListPromptsResult::with_all_items(items)))
    }

    pub(super) async fn get_prompt_of(
        &self,
        request: GetPromptRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let prompts = self.served_prompts()?;
        self.check_prompt(&request.name, context)?;
        let args: Vec<(String, String)> = request
            .arguments
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| {
                let text = match v {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                (k, text)
            })
            .collect();
        let get = prompts.get(&request.name, args);
        let resumable = context
            .protocol_version()
            .is_some_and(|v| !v.has_initialize());
        let got = if resumable {
            // 2026-07-28: what the prompt asks is answered from this request's
            // `inputResponses`, or asked with an `InputRequiredResult` (the retry runs the
            // prompt again with the answers).
            let level = context
                .meta
                .0
                .get(crate::caller::logs::LOG_LEVEL_META)
                .and_then(Value::as_str)
                .and_then(dsh_runtime::caller::LogLevel::parse);
            let rounds = Arc::new(Rounds::new(
                context.client_capabilities(),
                request.input_responses.unwrap_or_default(),
                LogSink::new(context.peer.clone(), level),
            ));
            let run = dsh_runtime::caller::with_caller(rounds.clone(), get);
            let got = tokio::select! {
                got = run => Some(got),
                () = rounds.unanswered().cancelled() => None,
            };
            rounds.logs().finish().await;
            match got {
                Some(got) => got,
                None => {
                    let asked = rounds.take_missing();
                    return Ok(GetPromptResponse::InputRequired(InputRequiredResult::new(
                        Some(asked),
                        None,
                    )));
                }
            }
        } else {
            let level = self.session().map(|s| *lock(&s.log_level));
            let logs = Arc::new(LogSink::new(context.peer.clone(), level));
            let caller = SessionCaller::new(
                context.peer.clone(),
                context.client_capabilities(),
                self.session().is_some(),
                logs.clone(),
            );
            let got = dsh_runtime::caller::with_caller(caller, get).await;
            logs.finish().await;
            got
        };
        let got = got.map_err(prompt_error)?;
        let mut result: GetPromptResult = convert(got_prompt_json(&got), "a prompt's messages")?;
        result.result_type = Some(rmcp::model::ResultType::COMPLETE);
        Ok(GetPromptResponse::Complete(result))
    }

    pub(super) async fn complete_of(
        &self,
        request: CompleteRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        match &request.r#ref {
            Reference::Prompt(prompt) => self.check_prompt(&prompt.name, context)?,
            Reference::Resource(template) => self.check_resource(&template.uri, context)?,
            _ => {}
        }
        let context: Vec<(String, String)> = request
            .context
            .and_then(|c| c.arguments)
            .map(|a| a.into_iter().collect())
            .unwrap_or_default();
        let asked = CompletionRequest::new(request.argument.name, request.argument.value)
            .with_context(context);
        let completion = match &request.r#ref {
            Reference::Prompt(prompt) => {
                let prompts = self.served_prompts()?;
                prompts.complete(&prompt.name, asked).await.ok_or_else(|| {
                    McpError::invalid_params(
                        format!("completion: unknown prompt {:?}", prompt.name),
                        None,
                    )
                })?
            }
            Reference::Resource(template) => {
                let resources = self.served_resources()?;
                resources
                    .complete(&template.uri, asked)
                    .await
                    .ok_or_else(|| {
                        McpError::invalid_params(
                            format!("completion: unknown resource template {:?}", template.uri),
                            Some(json!({ "uri": template.uri })),
                        )
                    })?
            }
            _ => {
                return Err(McpError::invalid_params(
                    "completion: an unknown kind of reference",
                    None,
                ));
            }
        };
        completion_result(completion)
    }

    /// Tell a listen stream (2026-07-28) when the resources or prompts change, as it
    /// asked.
    pub(super) fn listen_context_lists(&self, context: &rmcp::service::SubscriptionContext) {
        let accepted = context.accepted();
        let until = context.request_context().ct.clone();
        if let (Some(resources), Some(true)) =
            (&self.shared.resources, accepted.resources_list_changed)
        {
            let sink = context.sink().clone();
            spawn_watch(resources.changes(), until.clone(), move || {
                let sink = sink.clone();
                async move { sink.notify_resource_list_changed().await.is_ok() }
            });
        }
        // The updates of the resources the request's token may read.
        let uris: Option<Vec<String>> = accepted.resource_subscriptions.clone().map(|uris| {
            let resources = self.shared.resources.as_ref();
            uris.into_iter()
                .filter(|uri| {
                    let published = resources.and_then(|r| r.resolve(uri));
                    published.is_some_and(|info| {
                        self.check_resource(&info.uri, context.request_context())
                            .is_ok()
                    })
                })
                .collect()
        });
        if let (Some(resources), Some(uris)) = (&self.shared.resources, uris)
            && !uris.is_empty()
        {
            let sink = context.sink().clone();
            let (shared, resources) = (self.shared.clone(), resources.clone());
            let stop = until.clone();
            tokio::spawn(async move {
                let mut updates = shared
                    .updates
                    .subscribe(
                        &resources,
                        &shared.store,
                        shared.instance.id(),
                        shared.instance.lease().stopped(),
                    )
                    .await;
                loop {
                    let uri = tokio::select! {
                        () = stop.cancelled() => break,
                        uri = updates.recv() => uri,
                    };
                    match uri {
                        Ok(uri) if uris.contains(&uri) => {
                            if sink.notify_resource_updated(uri).await.is_err() {
                                break;
                            }
                        }
                        Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                    }
                }
            });
        }
        if let (Some(prompts), Some(true)) = (&self.shared.prompts, accepted.prompts_list_changed) {
            let sink = context.sink().clone();
            spawn_watch(prompts.changes(), until, move || {
                let sink = sink.clone();
                async move { sink.notify_prompt_list_changed().await.is_ok() }
            });
        }
    }

    /// Tell a session's client when the resources or prompts change (sessions with
    /// `initialize`).
    pub(super) fn watch_context_lists(&self, session: &Arc<Session>, peer: Peer<RoleServer>) {
        if let Some(resources) = &self.shared.resources {
            let peer = peer.clone();
            spawn_watch(resources.changes(), session.stop.clone(), move || {
                let peer = peer.clone();
                async move { peer.notify_resource_list_changed().await.is_ok() }
            });
        }
        if let Some(prompts) = &self.shared.prompts {
            spawn_watch(prompts.changes(), session.stop.clone(), move || {
                let peer = peer.clone();
                async move { peer.notify_prompt_list_changed().await.is_ok() }
            });
        }
    }
}

/// Call `send` at each change of `changes` (from now on) until `stop`, or until `send`
/// fails.
fn spawn_watch<F, Fut>(
    mut changes: tokio::sync::watch::Receiver<u64>,
    stop: CancellationToken,
    send: F,
) where
    F: Fn() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = bool> + Send,
{
    changes.mark_unchanged();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = stop.cancelled() => break,
                changed = changes.changed() => {
                    if changed.is_err() || !send().await {
                        break;
                    }
                }
            }
        }
    });
}

/// Send `peer` the updates of the URIs `session` subscribed to, until `stop`.
async fn forward_updates(
    mut updates: tokio::sync::broadcast::Receiver<String>,
    peer: Peer<RoleServer>,
    session: Arc<Session>,
    stop: CancellationToken,
) {
    loop {
        let uri = tokio::select! {
            () = stop.cancelled() => break,
            uri = updates.recv() => uri,
        };
        match uri {
            Ok(uri) => {
                if !lock(&session.subscriptions.uris).contains(&uri) {
                    continue;
                }
                let param = ResourceUpdatedNotificationParam::new(uri);
                if peer.notify_resource_updated(param).await.is_err() {
                    break;
                }
            }
            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
            Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
        }
    }
}
