//! The stages of one call, in order (see the module docs of [`crate::pipeline`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::batch::Gates;
use super::hooks::{
    Accept, Approval, ApprovalRequest, Block, CallInfo, Next, PostDecision, PostNext, PreDecision,
    PreNext, Wrapper,
};
use super::panic::{self, CatchUnwind};
use super::result::{DispatchOutcome, ErrorCode, Kind, ResultData, ToolResult};
use super::timeout::TimeoutWrapper;
use super::{ToolCall, lossless};
use crate::json::Value;
use crate::registry::state::{Entry, Snapshot, View};
use crate::registry::{Inner, Registry};
use crate::schema::json_quote;
use crate::tool::{BodyOutcome, ContentBlock, DynTool, Execution, SideChannel, ToolContext};
use crate::validate::{validate_arguments, validate_labeled};

impl Registry {
    /// Run one call through the whole pipeline. Never panics; every outcome is one
    /// immutable [`ToolResult`].
    ///
    /// Cancel a call with its [`ToolCall::cancel`] token rather than by dropping this
    /// future: a started body is always awaited to completion, which a dropped future
    /// cannot do.
    pub async fn execute(&self, call: ToolCall) -> ToolResult {
        self.inner.execute(call, None).await
    }
}

/// Which stages a result still passes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Path {
    /// Post-execute, then finalize and observers.
    Post,
    /// Only finalize and observers.
    Final,
}

enum Verdict {
    Allow,
    Deny(String),
    Throw(ResultData),
}

fn q(name: &str) -> String {
    json_quote(name)
}

fn aborted(invoked: bool) -> ResultData {
    if invoked {
        ResultData::code(ErrorCode::Aborted, "tool call aborted".to_string())
    } else {
        ResultData::code(
            ErrorCode::AbortedBeforeDispatch,
            "tool call aborted before dispatch".to_string(),
        )
    }
}

/// The cancellation result, keeping the contexts of the result it replaces.
fn abort_replacing(data: ResultData, invoked: bool) -> ResultData {
    let mut out = aborted(invoked);
    out.contexts = data.contexts;
    out
}

fn invalid_output(name: &str, violation: &str) -> ResultData {
    ResultData::code(
        ErrorCode::InvalidToolOutput,
        format!("tool {} returned invalid output: {violation}", q(name)),
    )
}

/// The canonical success for a value: lossless check, output validation (all violations,
/// root label `value`), freeze, render, and presentation meta for top-level calls.
pub(crate) fn make_success(tool: &DynTool, exec: &Execution, value: Value) -> ResultData {
    let name = &exec.name;
    if let Err(e) = lossless::check(&value, "value") {
        return invalid_output(name, &format!("value is not lossless JSON: {e}"));
    }
    let def = tool.definition();
    if let Err(violations) = validate_labeled(&def.output, &value, "value", true) {
        return invalid_output(name, violations.joined());
    }
    let value = Arc::new(value);
    let content = match panic::contain(|| tool.erased().render(&exec.arguments, &value)) {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => {
            return invalid_output(name, &format!("output.render failed: {}", e.message()));
        }
        Err(p) => return invalid_output(name, &format!("output.render failed: {p}")),
    };
    let meta = if exec.parent.is_none() {
        match panic::contain(|| tool.erased().presentation_meta(&exec.arguments, &value)) {
            Ok(Ok(None)) => None,
            Ok(Ok(Some(m))) => {
                if lossless::check(&m, "meta").is_err() {
                    return invalid_output(
                        name,
                        "output.presentation_meta returned non-lossless JSON",
                    );
                }
                Some(Arc::new(m))
            }
            Ok(Err(e)) => {
                return invalid_output(
                    name,
                    &format!("output.presentation_meta failed: {}", e.message()),
                );
            }
            Err(p) => {
                return invalid_output(name, &format!("output.presentation_meta failed: {p}"));
            }
        }
    } else {
        None
    };
    ResultData::success(value, content, meta)
}

/// The body thunk and everything it needs; shared by every run of [`Next`].
pub(crate) struct Dispatcher<'a> {
    pub(crate) inner: &'a Inner,
    pub(crate) info: &'a CallInfo<'a>,
    exec: &'a Arc<Execution>,
    entry: &'a Arc<Entry>,
    body_args: &'a Value,
    caller: &'a CancellationToken,
    side: &'a Arc<SideChannel>,
    invoked: AtomicBool,
}

impl Dispatcher<'_> {
    /// One dispatch: re-check cancellation, re-resolve, run the body, build the
    /// canonical outcome. `current` is the token the wrappers chose; when it was
    /// replaced, it is fused with the caller's for the body.
    pub(crate) async fn body(&self, current: CancellationToken, replaced: bool) -> DispatchOutcome {
        let origin = Some(self.exec.token);
        let canonical = |data| DispatchOutcome { data, origin };
        if self.caller.is_cancelled() || (replaced && current.is_cancelled()) {
            return canonical(aborted(false));
        }

        // The tool may have been unregistered or replaced while policy ran.
        let snap = self.inner.snapshot();
        let Some(entry) = snap.view(self.exec.agent).get(&self.exec.name) else {
            return canonical(ResultData::code(
                ErrorCode::UnknownTool,
                format!("unknown tool {}", q(&self.exec.name)),
            ));
        };
        let mut revalidated = None;
        if !Arc::ptr_eq(entry, self.entry) {
            let params = &entry.tool.definition().parameters;
            match validate_arguments(params, &self.exec.arguments) {
                Ok(v) => {
                    revalidated = Some(v.normalized(params, &self.exec.arguments).into_owned());
                }
                Err(e) => {
                    return canonical(ResultData::code(ErrorCode::InvalidArgs, e.to_string()));
                }
            }
        }
        let args = revalidated.as_ref().unwrap_or(self.body_args);
        let tool = &entry.tool;

        // The body gets a child of the caller's token: the caller's cancellation reaches
        // it, and the body cannot cancel the caller.
        let fused = self.caller.child_token();
        self.invoked.store(true, Ordering::Release);
        let cx = ToolContext::new(self.exec.clone(), fused.clone(), self.side.clone());
        let outcome = match panic::contain(|| tool.erased().call_json(args, cx)) {
            Err(p) => Err(p),
            Ok(fut) if replaced => {
                Fused {
                    body: panic::guard(fut),
                    watch: Some(Box::pin(current.cancelled_owned())),
                    fused: &fused,
                }
                .await
            }
            Ok(fut) => panic::guard(fut).await,
        };
        let name = &self.exec.name;
        let data = match outcome {
            Err(p) => ResultData::failure(None, format!("tool {} panicked: {p}", q(name))),
            Ok(BodyOutcome::Value(v)) => make_success(tool, self.exec, v),
            Ok(BodyOutcome::Failed(e)) => ResultData::from_error(e),
            Ok(BodyOutcome::ArgsRejected(m)) => {
                ResultData::code(ErrorCode::InvalidArgs, format!("invalid arguments: {m}"))
            }
            Ok(BodyOutcome::NotLossless(m)) => {
                invalid_output(name, &format!("value is not lossless JSON: {m}"))
            }
        };
        if data.is_success() && fused.is_cancelled() {
            return canonical(aborted(true));
        }
        canonical(data)
    }

    fn invoked(&self) -> bool {
        self.invoked.load(Ordering::Acquire)
    }
}

/// Polls the body while watching a wrapper's replacement token; when that fires, the
/// body's token is cancelled too. The body itself is never dropped early.
struct Fused<'t, F> {
    body: CatchUnwind<F>,
    watch: Option<std::pin::Pin<Box<tokio_util::sync::WaitForCancellationFutureOwned>>>,
    fused: &'t CancellationToken,
}

impl<F: std::future::Future + Unpin> std::future::Future for Fused<'_, F> {
    type Output = Result<F::Output, String>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        if let Some(w) = self.watch.as_mut()
            && w.as_mut().poll(cx).is_ready()
        {
            self.fused.cancel();
            self.watch = None;
        }
        std::pin::Pin::new(&mut self.body).poll(cx)
    }
}

impl Inner {
    pub(crate) async fn execute(&self, call: ToolCall, gates: Option<&Gates>) -> ToolResult {
        let span = tracing::info_span!(
            "tool_call",
            tool = %call.name,
            call_id = %call.call_id,
            outcome = tracing::field::Empty,
            duration_us = tracing::field::Empty,
        );
        if span.is_disabled() {
            return self.run(call, gates).await;
        }
        let start = Instant::now();
        let result = self.run(call, gates).instrument(span.clone()).await;
        span.record(
            "outcome",
            if result.is_success() {
                "ok"
            } else {
                result.code().unwrap_or("error")
            },
        );
        span.record(
            "duration_us",
            u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX),
        );
        result
    }

    async fn run(&self, call: ToolCall, gates: Option<&Gates>) -> ToolResult {
        if let Some(g) = gates {
            g.enter_policy().await;
        }
        let ToolCall {
            call_id,
            name,
            arguments,
            cancel,
            agent,
            parent,
            root_call_id,
        } = call;
        let root = root_call_id.unwrap_or_else(|| call_id.clone());

        // Create: resolve (capturing the finalizer), snapshot and freeze the arguments.
        let snap = self.snapshot();
        let view = snap.view(agent);
        let entry = view.get(&name);
        let tool = entry.map(|e| &e.tool);
        let args = match arguments.snapshot(&self.parse) {
            Ok(a) => a,
            Err(detail) => {
                let exec = Arc::new(Execution::without_arguments(
                    call_id, root, name, agent, parent,
                ));
                let info = CallInfo {
                    exec: &exec,
                    tool,
                    cancel: &cancel,
                };
                let data = ResultData::failure(
                    None,
                    format!(
                        "tool execution arguments must be losslessly JSON-serializable: {detail}"
                    ),
                );
                return self
                    .complete(view, &info, data, Path::Final, false, gates)
                    .await;
            }
        };
        let exec = Arc::new(Execution::new(call_id, root, name, args, agent, parent));
        let info = CallInfo {
            exec: &exec,
            tool,
            cancel: &cancel,
        };

        let Some(entry) = entry else {
            let data = ResultData::code(
                ErrorCode::UnknownTool,
                format!("unknown tool {}", q(&exec.name)),
            );
            return self
                .complete(view, &info, data, Path::Post, false, gates)
                .await;
        };

        // Validate: policy only ever sees conforming arguments.
        let def = entry.tool.definition();
        let validated = match validate_arguments(&def.parameters, &exec.arguments) {
            Ok(v) => v,
            Err(e) => {
                let data = ResultData::code(ErrorCode::InvalidArgs, e.to_string());
                return self
                    .complete(view, &info, data, Path::Post, false, gates)
                    .await;
            }
        };
        let body_args = validated.normalized(&def.parameters, &exec.arguments);

        if cancel.is_cancelled() {
            return self
                .complete(view, &info, aborted(false), Path::Final, false, gates)
                .await;
        }

        match self.policy(&snap, view, &info).await {
            Verdict::Allow => {}
            Verdict::Deny(reason) => {
                let data = if cancel.is_cancelled() {
                    aborted(false)
                } else {
                    ResultData::failure(None, reason)
                };
                return self
                    .complete(view, &info, data, Path::Post, false, gates)
                    .await;
            }
            Verdict::Throw(data) => {
                return self
                    .complete(view, &info, data, Path::Final, false, gates)
                    .await;
            }
        }
        if let Some(g) = gates {
            g.exit_policy();
        }

        // Dispatch through the wrappers (the built-in timeout wrapper outermost).
        let side = Arc::new(SideChannel::default());
        let dispatcher = Dispatcher {
            inner: self,
            info: &info,
            exec: &exec,
            entry,
            body_args: &body_args,
            caller: &cancel,
            side: &side,
            invoked: AtomicBool::new(false),
        };
        let timeout = self.timeouts && def.timeout_ms.is_some();
        let outcome = if view.wrappers.is_empty() && !timeout {
            Ok(Ok(dispatcher.body(cancel.clone(), false).await))
        } else {
            let next = Next {
                wrappers: &view.wrappers,
                dispatch: &dispatcher,
                cancel: cancel.clone(),
                replaced: false,
            };
            panic::contained(|| {
                if timeout {
                    TimeoutWrapper.around(&info, next)
                } else {
                    next.run()
                }
            })
            .await
        };
        let invoked = dispatcher.invoked();
        let mut data = match outcome {
            Err(p) => {
                let data = ResultData::failure(None, format!("dispatch wrapper panicked: {p}"));
                return self
                    .complete(view, &info, data, Path::Final, invoked, gates)
                    .await;
            }
            Ok(Err(e)) => {
                let data = ResultData::from_error(e);
                return self
                    .complete(view, &info, data, Path::Final, invoked, gates)
                    .await;
            }
            Ok(Ok(o)) if o.origin == Some(exec.token) => o.data,
            Ok(Ok(o)) => match o.data.kind {
                // A wrapper-authored (or another call's) success: revalidate, re-render.
                Kind::Success { value, .. } => {
                    let value = Arc::try_unwrap(value).unwrap_or_else(|v| (*v).clone());
                    let data = make_success(&entry.tool, &exec, value);
                    if !data.is_success() {
                        return self
                            .complete(view, &info, data, Path::Final, invoked, gates)
                            .await;
                    }
                    data
                }
                Kind::Failure { .. } => o.data,
            },
        };

        let deferred = side.take_deferred();
        if !deferred.is_empty() {
            data.contexts.splice(0..0, deferred);
        }
        if let Kind::Success { concludes_turn, .. } = &mut data.kind {
            *concludes_turn = side.concludes_turn();
        }
        if data.is_success() && cancel.is_cancelled() {
            data = abort_replacing(data, invoked);
        }
        self.complete(view, &info, data, Path::Post, invoked, gates)
            .await
    }

    /// Pre-execute waterfall, approval, guards.
    async fn policy(&self, snap: &Snapshot, view: &View, info: &CallInfo<'_>) -> Verdict {
        let decision = if view.pre.is_empty() {
            PreDecision::Allow
        } else {
            let next = PreNext {
                hooks: &view.pre,
                call: info,
            };
            match panic::contained(|| next.run()).await {
                Ok(Ok(d)) => d,
                Ok(Err(e)) => return Verdict::Throw(ResultData::from_error(e)),
                Err(p) => {
                    return Verdict::Throw(ResultData::failure(
                        None,
                        format!("pre-execute hook panicked: {p}"),
                    ));
                }
            }
        };
        match decision {
            PreDecision::Allow => {}
            PreDecision::Deny { reason } => return Verdict::Deny(reason),
            PreDecision::Ask { reason } => {
                // Quoted only here: the messages of `ask` outcomes are its only use.
                let name = q(info.name());
                let Some(handler) = &snap.approval else {
                    return Verdict::Deny(reason.unwrap_or_else(|| {
                        format!("tool {name} requires approval (not yet supported)")
                    }));
                };
                let Some(agent) = info.agent() else {
                    return Verdict::Deny(format!(
                        "tool {name} requires approval, but the call has no agent to route it through"
                    ));
                };
                let request = ApprovalRequest {
                    call: info,
                    reason: reason.as_deref(),
                    agent,
                };
                match panic::contained(|| handler.request(request)).await {
                    Ok(Ok(Approval::AllowedOnce)) => {}
                    Ok(Ok(Approval::Rejected)) => {
                        return Verdict::Deny(format!("the user rejected tool {name}"));
                    }
                    Ok(Ok(Approval::Cancelled)) => {
                        return Verdict::Deny(format!("approval for tool {name} was cancelled"));
                    }
                    Ok(Ok(Approval::Unavailable)) => {
                        return Verdict::Deny(format!(
                            "tool {name} requires approval, but no approval channel is available"
                        ));
                    }
                    Ok(Err(e)) => return Verdict::Throw(ResultData::from_error(e)),
                    Err(p) => {
                        return Verdict::Throw(ResultData::failure(
                            None,
                            format!("approval handler panicked: {p}"),
                        ));
                    }
                }
            }
        }
        for guard in &view.guards {
            match panic::contained(|| guard.check(info)).await {
                Ok(Ok(None)) => {}
                Ok(Ok(Some(reason))) => return Verdict::Deny(reason),
                Ok(Err(e)) => return Verdict::Throw(ResultData::from_error(e)),
                Err(p) => {
                    return Verdict::Throw(ResultData::failure(
                        None,
                        format!("guard panicked: {p}"),
                    ));
                }
            }
        }
        Verdict::Allow
    }

    /// Post-execute (path P), the final cancellation check, finalize, observers.
    async fn complete(
        &self,
        view: &View,
        info: &CallInfo<'_>,
        mut data: ResultData,
        path: Path,
        invoked: bool,
        gates: Option<&Gates>,
    ) -> ToolResult {
        if let Some(g) = gates {
            g.exit_policy();
            g.enter_post().await;
        }
        if path == Path::Post {
            if !view.post.is_empty() {
                data = post_execute(view, info, data).await;
            }
            if data.is_success() && info.cancel.is_cancelled() {
                data = abort_replacing(data, invoked);
            }
        }
        finish(view, info, data)
    }
}

async fn post_execute(view: &View, info: &CallInfo<'_>, data: ResultData) -> ResultData {
    let current = data.freeze();
    let decision = {
        let next = PostNext {
            hooks: &view.post,
            call: info,
            result: &current,
        };
        panic::contained(|| next.run()).await
    };
    let data = Arc::try_unwrap(current.0).unwrap_or_else(|shared| (*shared).clone());
    match decision {
        Err(p) => ResultData::failure(None, format!("post-execute hook panicked: {p}")),
        Ok(Err(e)) => ResultData::from_error(e),
        Ok(Ok(PostDecision::Accept(a))) => accept(info, data, a),
        Ok(Ok(PostDecision::Block(b))) => block(b),
    }
}

fn accept(info: &CallInfo<'_>, mut data: ResultData, a: Accept) -> ResultData {
    match (a.content, a.value) {
        (Some(_), Some(_)) => {
            return ResultData::failure(
                None,
                "tools/post-execute accept decision cannot replace both value and content"
                    .to_string(),
            );
        }
        (None, Some(value)) => {
            let (Kind::Success { concludes_turn, .. }, Some(tool)) = (&data.kind, info.tool) else {
                return ResultData::failure(
                    None,
                    "tools/post-execute cannot replace the value of a failed result".to_string(),
                );
            };
            let concludes = *concludes_turn;
            let mut replaced = make_success(tool, info.exec, value);
            if !replaced.is_success() {
                return replaced;
            }
            if let Kind::Success { concludes_turn, .. } = &mut replaced.kind {
                *concludes_turn = concludes;
            }
            replaced.contexts = std::mem::take(&mut data.contexts);
            data = replaced;
        }
        (Some(content), None) => data.content = content,
        (None, None) => {}
    }
    data.contexts.extend(a.contexts);
    data
}

fn block(b: Block) -> ResultData {
    let parts: Vec<String> = b
        .feedback
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => text.clone(),
            ContentBlock::Image { .. } => "[image content]".to_string(),
        })
        .collect();
    let message = if parts.is_empty() {
        "tool result blocked by post-execute policy".to_string()
    } else {
        parts.join("\n")
    };
    let mut data = ResultData::failure(None, message);
    if !b.feedback.is_empty() {
        data.content = b.feedback;
    }
    data.contexts = b.contexts;
    data
}

/// Finalize content once (with the finalizer captured at entry), freeze, observe.
fn finish(view: &View, info: &CallInfo<'_>, mut data: ResultData) -> ToolResult {
    if let Some(tool) = info.tool {
        match panic::contain(|| {
            tool.erased()
                .finalize_content(info.arguments(), &data.content)
        }) {
            Ok(Some(content)) => data.content = content,
            Ok(None) => {}
            Err(p) => data = ResultData::failure(None, format!("finalize_content panicked: {p}")),
        }
    }
    let result = data.freeze();
    for observer in &view.observers {
        if let Err(p) = panic::contain(|| observer.observe(info, &result)) {
            tracing::warn!(
                tool = info.name(),
                call_id = info.call_id(),
                "result observer panicked: {p}"
            );
        }
    }
    result
}
