//! The sequence of stages (see the table in [`crate::pipeline`]) and stages 1 to 5.
//!
//! A stage returns `Stage<T>`: `Ok` to go on, or `Err(Outcome)`, the result so far and
//! which closing stages it still passes. `run` is the whole pipeline; adding a stage is
//! adding a function and one line there.

use std::borrow::Cow;
use std::sync::Arc;

use tracing::Instrument;

use super::ToolCall;
use super::batch::Gates;
use super::dispatch::dispatch;
use super::output::settle;
use super::post::{finalize, ignored_arguments, post_execute};
use super::stage::{Call, Outcome, Stage};
use super::validation::validate_call;
use crate::error_code::PipelineCode;
use crate::hooks::{Approval, ApprovalRequest, CallInfo, PreDecision, PreNext};
use crate::json::Value;
use crate::panic;
use crate::registry::Registry;
use crate::result::{ResultData, ToolResult};
use crate::schema::json_quote;
use crate::tool::{CallIdentity, DynTool};
use crate::validate::ToolArgsError;

impl Registry {
    /// Run one call through the whole pipeline. Never panics; every outcome is one
    /// immutable [`ToolResult`].
    ///
    /// Cancel a call with its [`ToolCall::cancel_token`] token rather than by dropping this
    /// future: a started body is awaited to completion, which a dropped future cannot do
    /// (except a cancelled body that does not return within the grace period: it is
    /// detached, see [`crate::RegistryBuilder::max_detached`]). Dropping the future of a
    /// call whose body runs on a task of its own (a call with a deadline or a caller's
    /// token) cancels the body's token and leaves it to finish there, counted as
    /// detached; any other body is dropped with the future.
    pub fn execute(&self, call: ToolCall) -> impl Future<Output = ToolResult> + '_ {
        // Not an `async fn`: its future would hold the one below, moved into it on the
        // first poll (a copy of the whole pipeline's state).
        self.execute_gated(call, None)
    }

    /// [`Registry::execute`] inside a batch, whose gates order the policy and closing
    /// stages across calls.
    pub(crate) async fn execute_gated(&self, call: ToolCall, gates: Option<&Gates>) -> ToolResult {
        // The OpenTelemetry GenAI `execute_tool` span, in the fields `tracing-opentelemetry`
        // reads (`otel.*`). With no subscriber the span is disabled: nothing is formatted,
        // and the stages run as they would without tracing (no span of theirs either).
        let span = tracing::info_span!(
            "execute_tool",
            otel.name = %format_args!("execute_tool {}", call.name),
            otel.kind = "internal",
            otel.status_code = tracing::field::Empty,
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = %call.name,
            gen_ai.tool.call.id = %call.call_id,
            gen_ai.tool.type = "function",
            gen_ai.tool.description = tracing::field::Empty,
            gen_ai.tool.call.arguments = tracing::field::Empty,
            gen_ai.tool.call.result = tracing::field::Empty,
            // Recorded by an MCP client forwarding this call (see `CallIdentity::span`).
            mcp.method.name = tracing::field::Empty,
            mcp.protocol.version = tracing::field::Empty,
            error.type = tracing::field::Empty,
        );
        if span.is_disabled() {
            return self.run(call, gates, None).await;
        }
        let result = self
            .run(call, gates, Some(&span))
            .instrument(span.clone())
            .await;
        if !result.is_success() {
            span.record("error.type", result.code_str().unwrap_or("error"));
            span.record("otel.status_code", "error");
        } else if self.traces_content()
            && let Some(value) = result.value()
        {
            span.record("gen_ai.tool.call.result", value.to_string().as_str());
        }
        result
    }

    /// The stages, in order; `span`: the call's span when it is traced.
    async fn run(
        &self,
        call: ToolCall,
        gates: Option<&Gates>,
        span: Option<&tracing::Span>,
    ) -> ToolResult {
        if let Some(g) = gates {
            g.enter_policy().await;
        }
        let call = enter(self, call, span); // 1-2
        let (outcome, note) = self.through_output(&call, gates).await; // 3-8
        if let Some(g) = gates {
            g.exit_policy();
            g.enter_post().await;
        }
        let data = post_execute(&call, outcome).await; // 9
        finalize(&call, data, note) // 10
    }

    /// Stages 3 to 8: everything that may end the call early; also the note naming the
    /// arguments validation ignored, for stage 10.
    async fn through_output(
        &self,
        call: &Call,
        gates: Option<&Gates>,
    ) -> (Outcome, Option<String>) {
        let mut note = None;
        let run = async {
            let tool = call.admitted()?; // the failures of stages 1-2
            let validated = validate(call, tool); // 3
            // Only a failure or a normalized copy can involve unknown keys.
            if !matches!(validated, Ok(Cow::Borrowed(_))) {
                note = ignored_arguments(call, tool);
            }
            let args = validated?;
            // A stage's span only where the call's is enabled: otherwise not even the
            // `Instrumented` wrapper of a disabled span.
            if call.traced() {
                let span = tracing::info_span!("policy");
                policy(call).instrument(span).await?; // 4-5
            } else {
                policy(call).await?;
            }
            if let Some(g) = gates {
                g.exit_policy();
            }
            let dispatched = if call.traced() {
                let body = tracing::info_span!("dispatch");
                dispatch(self, call, tool, &args).instrument(body).await? // 6-7
            } else {
                dispatch(self, call, tool, &args).await?
            };
            Ok(settle(call, tool, dispatched)) // 8
        };
        let (Ok(outcome) | Err(outcome)) = run.await;
        (outcome, note)
    }
}

/// Stages 1 and 2: resolve the name in the caller's view, snapshot and freeze the
/// arguments, mint the token; on the call's `span` (when traced), the tool's description
/// and (opted in) the arguments.
fn enter(registry: &Registry, call: ToolCall, span: Option<&tracing::Span>) -> Call {
    let ToolCall {
        call_id,
        name,
        arguments,
        cancel,
        agent,
        parent,
        root_call_id,
        parent_call,
    } = call;
    let root = root_call_id.unwrap_or_else(|| call_id.clone());
    let snap = registry.snapshot(agent);
    let tool = snap.view().get(&name).map(|e| e.tool().clone());
    let (args, unsnapshotted) = match arguments.snapshot(registry.parse_options()) {
        Ok(args) => (Some(args), None),
        Err(message) => (None, Some(message)),
    };
    let mut exec = CallIdentity::for_call(call_id, root, name, args, agent, parent, cancel);
    exec.jobs = registry.jobs().cloned();
    exec.parent_call = parent_call;
    if let Some(span) = span {
        if let Some(tool) = &tool {
            span.record(
                "gen_ai.tool.description",
                tool.definition().description.as_ref(),
            );
        }
        if registry.traces_content() && exec.has_arguments() {
            span.record(
                "gen_ai.tool.call.arguments",
                exec.arguments.to_string().as_str(),
            );
        }
        exec.span = Some(Box::new(span.clone()));
    }
    Call {
        snap,
        tool,
        exec: Arc::new(exec),
        unsnapshotted,
    }
}

/// Stage 3: validate the arguments; what the body reads (nulls meaning "omitted" and
/// ignored undeclared keys removed). Policy only ever sees conforming arguments.
fn validate<'c>(call: &'c Call, tool: &DynTool) -> Stage<Cow<'c, Value>> {
    match validate_call(tool.definition(), &call.exec.arguments) {
        Ok(args) => Ok(args),
        Err(e) => Err(Outcome::post(ResultData::code_parts(
            PipelineCode::InvalidArgs,
            &[ToolArgsError::PREFIX, e.violations().joined()],
        ))),
    }
}

/// Stages 4 and 5: a caller token already cancelled, the pre-execute waterfall with
/// approval, then the guards.
async fn policy(call: &Call) -> Stage<()> {
    if call.cancelled() {
        return Err(Outcome::last(ResultData::aborted(false)));
    }
    let info = call.info();
    pre_execute(call, &info).await?;
    guards(call, &info).await
}

/// A policy denial with its code, through post-execute, or `ABORTED_BEFORE_DISPATCH`
/// when the caller aborted meanwhile.
fn deny(call: &Call, code: PipelineCode, reason: String) -> Outcome {
    Outcome::post(if call.cancelled() {
        ResultData::aborted(false)
    } else {
        ResultData::code(code, reason)
    })
}

/// A hook's own failure or panic: straight to finalize.
fn thrown<T>(what: &str, outcome: Result<Result<T, crate::tool::ToolError>, String>) -> Stage<T> {
    match outcome {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(Outcome::last(ResultData::from_error(e))),
        Err(p) => Err(Outcome::last(ResultData::panicked(format!(
            "{what} panicked: {p}"
        )))),
    }
}

/// Stage 4: the pre-execute waterfall; `ask` goes to the approval handler.
async fn pre_execute(call: &Call, info: &CallInfo<'_>) -> Stage<()> {
    let hooks = &call.snap.view().pre;
    let decision = if hooks.is_empty() {
        // Without hooks, only the tool's own `ask` can stop the call.
        crate::hooks::declared(info)
    } else {
        let next = PreNext { hooks, call: info };
        thrown("pre-execute hook", panic::contained(|| next.run()).await)?
    };
    let reason = match decision {
        PreDecision::Allow => return Ok(()),
        PreDecision::Deny { reason } => return Err(deny(call, PipelineCode::PolicyDenied, reason)),
        PreDecision::Ask { reason } => reason,
    };
    ask(call, info, reason).await
}

/// A pre-execute `ask`: the registry's approval handler, then the fallback one when the
/// registry's could not ask; without either, the call is denied.
async fn ask(call: &Call, info: &CallInfo<'_>, reason: Option<String>) -> Stage<()> {
    // Quoted only here: the messages of `ask` outcomes are its only use.
    let name = json_quote(info.name());
    let registry_handler = call.snap.approval().cloned();
    let fallback = crate::hooks::fallback_approval();
    let no_handler = |reason: Option<String>, why: Option<&str>| {
        let reason =
            reason.unwrap_or_else(|| format!("tool {name} requires approval (not yet supported)"));
        let reason = match why {
            Some(why) => format!("{reason} ({why})"),
            None => reason,
        };
        deny(call, PipelineCode::PolicyDenied, reason)
    };
    if registry_handler.is_none() && fallback.is_none() {
        return Err(no_handler(reason, None));
    }
    let request = ApprovalRequest {
        call: info,
        reason: reason.as_deref(),
        agent: info.agent(),
        via: info.parent_call(),
    };
    let mut answer = None;
    if let Some(handler) = &registry_handler {
        let asked = panic::contained(|| handler.request(request));
        let asked = awaited_approval(call, asked).await;
        answer = Some(thrown("approval handler", asked)?);
    }
    if matches!(
        answer,
        None | Some(Approval::Unavailable | Approval::UnavailableBecause(_))
    ) && let Some(handler) = &fallback
    {
        let asked = panic::contained(|| handler.request(request));
        let asked = awaited_approval(call, asked).await;
        match thrown("approval handler", asked)? {
            // Nobody could ask: the denial of a call with no handler.
            Approval::Unavailable if registry_handler.is_none() => {
                return Err(no_handler(reason, None));
            }
            Approval::UnavailableBecause(why) if registry_handler.is_none() => {
                return Err(no_handler(reason, Some(why)));
            }
            other => answer = Some(other),
        }
    }
    let Some(answer) = answer else {
        return Err(no_handler(reason, None));
    };
    answered(call, &name, answer)
}

/// An approval handler's answer, awaited in span `await_approval` when the call is traced.
async fn awaited_approval<T>(call: &Call, asked: impl Future<Output = T>) -> T {
    if call.traced() {
        asked
            .instrument(tracing::info_span!("await_approval"))
            .await
    } else {
        asked.await
    }
}

/// The denial an approval's answer makes, if any.
fn answered(call: &Call, name: &str, answer: Approval) -> Stage<()> {
    let (code, refusal) = match answer {
        Approval::AllowedOnce => return Ok(()),
        Approval::Rejected => (
            PipelineCode::ApprovalRejected,
            format!("the user rejected tool {name}"),
        ),
        Approval::Cancelled => (
            PipelineCode::ApprovalCancelled,
            format!("approval for tool {name} was cancelled"),
        ),
        Approval::Unavailable => (
            PipelineCode::PolicyDenied,
            format!("tool {name} requires approval, but no approval channel is available"),
        ),
        Approval::UnavailableBecause(why) => (
            PipelineCode::PolicyDenied,
            format!("tool {name} requires approval, but no approval channel is available ({why})"),
        ),
    };
    Err(deny(call, code, refusal))
}

/// Stage 5: the guards, in order; the first denial wins.
async fn guards(call: &Call, info: &CallInfo<'_>) -> Stage<()> {
    for guard in &call.snap.view().guards {
        let verdict = thrown("guard", panic::contained(|| guard.check(info)).await)?;
        if let Some(reason) = verdict {
            return Err(deny(call, PipelineCode::GuardDenied, reason));
        }
    }
    Ok(())
}
