//! Stages 6 and 7: the wrappers around the dispatch, and the body.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use super::output::{success, text_success};
use super::stage::{Call, Dispatched, Outcome, Stage};
use super::timeout::TimeoutWrapper;
use super::validation::validate_call;
use crate::error_code::PipelineCode;
use crate::hooks::{CallInfo, Dispatch, HookFuture, Next, Wrapper};
use crate::json::Value;
use crate::panic::{self, CatchUnwind};
use crate::registry::Registry;
use crate::registry::detach::Isolated;
use crate::result::{DispatchOutcome, ResultData};
use crate::schema::json_quote;
use crate::tool::{BodyOutcome, CallIdentity, DynTool, ToolContext, ToolError};
use crate::validate::ToolArgsError;

/// Stage 6: run the wrappers (the built-in timeout wrapper outermost) around the body. A
/// wrapper's own error or panic ends the call, skipping post-execute.
pub(super) async fn dispatch(
    registry: &Registry,
    call: &Call,
    tool: &DynTool,
    args: &Value,
) -> Stage<Dispatched> {
    let info = call.info();
    let dispatcher = Dispatcher {
        registry,
        info: &info,
        call,
        tool,
        args,
        invoked: AtomicBool::new(false),
    };
    let wrappers = &call.snap.view().wrappers;
    let timeout = registry.timeouts() && tool.definition().timeout_ms.is_some();
    let outcome = if wrappers.is_empty() && !timeout {
        Ok(Ok(dispatcher.run_body(None, false, true).await))
    } else {
        let next = Next {
            wrappers,
            dispatch: &dispatcher,
            cancel: call.cancel().clone(),
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
    let invoked = dispatcher.invoked.load(Ordering::Acquire);
    let fail = |data| Outcome {
        data,
        post: false,
        invoked,
    };
    match outcome {
        Ok(Ok(outcome)) => Ok(Dispatched { outcome, invoked }),
        Ok(Err(e)) => Err(fail(ResultData::from_error(e))),
        Err(p) => Err(fail(ResultData::panicked(format!(
            "dispatch wrapper panicked: {p}"
        )))),
    }
}

/// The end of the wrapper chain; every run of [`Next`] comes here.
struct Dispatcher<'a> {
    registry: &'a Registry,
    info: &'a CallInfo<'a>,
    call: &'a Call,
    /// The tool resolved at entry.
    tool: &'a DynTool,
    /// The validated, normalized arguments.
    args: &'a Value,
    invoked: AtomicBool,
}

impl<'a> Dispatch<'a> for Dispatcher<'a> {
    fn info(&self) -> &'a CallInfo<'a> {
        self.info
    }

    fn body(
        &'a self,
        cancel: CancellationToken,
        replaced: bool,
    ) -> HookFuture<'a, Result<DispatchOutcome, ToolError>> {
        HookFuture::new(async move { Ok(self.run_body(Some(&cancel), replaced, false).await) })
    }
}

impl Dispatcher<'_> {
    /// Stage 7, one dispatch: re-check cancellation, re-resolve, run the body, build the
    /// canonical outcome. `current` is the token the wrappers chose (`None` without
    /// wrappers: the caller's); when it was replaced, it is fused with the caller's for
    /// the body. `only` says this is the one run of the body (no wrapper can run it
    /// again).
    async fn run_body(
        &self,
        current: Option<&CancellationToken>,
        replaced: bool,
        only: bool,
    ) -> DispatchOutcome {
        let exec = &self.call.exec;
        let canonical = |data| DispatchOutcome {
            data,
            origin: Some(exec.token),
        };
        let replaced_cancelled = replaced && current.is_some_and(CancellationToken::is_cancelled);
        if self.call.cancelled() || replaced_cancelled {
            return canonical(ResultData::aborted(false));
        }
        let again = match self.resolve_again() {
            Ok(found) => found,
            Err(data) => return canonical(data),
        };
        let (tool, args) = match &again {
            None => (self.tool, self.args),
            Some((tool, revalidated)) => (tool, revalidated.as_ref().unwrap_or(self.args)),
        };

        // The body gets a child of the caller's token: the caller's cancellation reaches
        // it, and the body cannot cancel the caller. On the only run of an unwrapped call
        // the child is made only if the body asks for its token.
        //
        // A body that someone can cancel (a wrapper's replacement token, such as the
        // timeout wrapper's deadline, or a caller's token) runs on a task of its own, so
        // that a body stuck where cancellation cannot reach it is detached instead of
        // holding the result (see `detach`).
        let detacher = self.registry.detacher();
        let isolate = (replaced || exec.has_caller_token()) && detacher.available();
        if isolate && let Some(refusal) = detacher.refusal(|| json_quote(&exec.name)) {
            return canonical(ResultData::code(PipelineCode::DetachedLimit, refusal));
        }
        let eager = (replaced || !only || isolate).then(|| self.call.cancel().child_token());
        self.invoked.store(true, Ordering::Release);
        let cx = match &eager {
            Some(fused) => ToolContext::for_run(exec.clone(), fused.clone()),
            None => ToolContext::for_only_run(exec.clone()),
        };
        let outcome = match (&eager, isolate) {
            (Some(fused), true) => {
                let watch = current.filter(|_| replaced);
                match self.run_isolated(tool, args, cx, fused, watch).await {
                    Isolated::Returned(outcome) => outcome,
                    Isolated::Detached => return canonical(ResultData::aborted(true)),
                }
            }
            _ => run_inline(tool, args, cx, eager.as_ref(), current.filter(|_| replaced)).await,
        };
        let data = body_data(tool, exec, outcome);
        let cancelled = match &eager {
            Some(fused) => fused.is_cancelled(),
            None => exec.lazy_child_cancelled(),
        };
        if data.is_success() && cancelled {
            return canonical(ResultData::aborted(true));
        }
        canonical(data)
    }

    /// The body on a task of its own, detached when it does not return within the grace
    /// period after `fused` is cancelled; `watch` is a wrapper's replacement token.
    async fn run_isolated(
        &self,
        tool: &DynTool,
        args: &Value,
        cx: ToolContext,
        fused: &CancellationToken,
        watch: Option<&CancellationToken>,
    ) -> Isolated {
        let exec = &self.call.exec;
        let tool = tool.clone();
        let args = if std::ptr::eq(args, &*exec.arguments) {
            exec.arguments.clone()
        } else {
            std::sync::Arc::new(args.clone())
        };
        let body: crate::tool::BoxFuture<'static, BodyOutcome> =
            Box::pin(async move { tool.erased().call_body(&args, cx).await });
        let caller = self.call.cancel();
        let detacher = self.registry.detacher();
        detacher.run(body, fused, caller, watch, &exec.name).await
    }

    /// The tool may have been unregistered or replaced while policy ran: resolve the name
    /// again, and validate the arguments again for a replaced tool. `None`: the caller's
    /// view is the one resolved at entry (nothing was published since), so is the tool.
    #[allow(clippy::type_complexity)]
    fn resolve_again(&self) -> Result<Option<(DynTool, Option<Value>)>, ResultData> {
        let exec = &self.call.exec;
        if self.registry.still_current(exec.agent, &self.call.snap) {
            return Ok(None);
        }
        let snap = self.registry.snapshot(exec.agent);
        let Some(entry) = snap.view().get(&exec.name) else {
            return Err(ResultData::code_fmt(
                PipelineCode::UnknownTool,
                format_args!("unknown tool {}", json_quote(&exec.name)),
            ));
        };
        let tool = entry.tool();
        if tool.same_as(self.tool) {
            return Ok(Some((tool.clone(), None)));
        }
        match validate_call(tool.definition(), &exec.arguments) {
            Ok(args) => Ok(Some((tool.clone(), Some(args.into_owned())))),
            Err(e) => Err(ResultData::code(PipelineCode::InvalidArgs, e.to_string())),
        }
    }
}

/// The body on the dispatching task, its panic contained. With a wrapper's replacement
/// token (`watch`) and a fused token, that token's cancellation reaches the body's.
async fn run_inline(
    tool: &DynTool,
    args: &Value,
    cx: ToolContext,
    fused: Option<&CancellationToken>,
    watch: Option<&CancellationToken>,
) -> Result<BodyOutcome, String> {
    match panic::contain(|| tool.erased().call_body(args, cx)) {
        Err(p) => Err(p),
        Ok(fut) => match (fused, watch) {
            (Some(fused), Some(current)) => {
                Fused {
                    body: CatchUnwind::new(fut),
                    watch: Some(Box::pin(current.clone().cancelled_owned())),
                    fused,
                }
                .await
            }
            _ => CatchUnwind::new(fut).await,
        },
    }
}

/// The result a body's outcome (or its panic's message) makes.
fn body_data(
    tool: &DynTool,
    exec: &CallIdentity,
    outcome: Result<BodyOutcome, String>,
) -> ResultData {
    // Quoted only on the failures that name the tool.
    let name = || json_quote(&exec.name);
    match outcome {
        Err(p) => ResultData::panicked(format!("tool {} panicked: {p}", name())),
        Ok(BodyOutcome::Value(v)) => success(tool, exec, v),
        Ok(BodyOutcome::Text(text)) => text_success(tool, exec, text),
        Ok(BodyOutcome::Failed(e)) => ResultData::from_error(e),
        Ok(BodyOutcome::ArgsRejected(m)) => {
            ResultData::code_parts(PipelineCode::InvalidArgs, &[ToolArgsError::PREFIX, &m])
        }
        Ok(BodyOutcome::NotLossless(m)) => ResultData::code_fmt(
            PipelineCode::InvalidToolOutput,
            format_args!(
                "tool {} returned invalid output: value is not lossless JSON: {m}",
                name()
            ),
        ),
    }
}

/// Polls the body while watching a wrapper's replacement token; when that fires, the
/// body's token is cancelled too. The body itself is never dropped early.
struct Fused<'t, F> {
    body: CatchUnwind<F>,
    watch: Option<Pin<Box<WaitForCancellationFutureOwned>>>,
    fused: &'t CancellationToken,
}

impl<F: Future + Unpin> Future for Fused<'_, F> {
    type Output = Result<F::Output, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(w) = self.watch.as_mut()
            && w.as_mut().poll(cx).is_ready()
        {
            self.fused.cancel();
            self.watch = None;
        }
        Pin::new(&mut self.body).poll(cx)
    }
}
