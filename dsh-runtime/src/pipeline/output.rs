//! Stage 8: the output. A value becomes the canonical success (lossless check, output
//! validation, freeze, render, presentation meta), and what the dispatch returned becomes
//! the result post-execute sees.

use std::sync::Arc;

use super::stage::{Call, Dispatched, Outcome};
use super::validation::validate_definition_output;
use crate::__private::tool_hooks as overrides;
use crate::content::{ContentBlock, default_block};
use crate::error_code::{FailureCode, PipelineCode};
use crate::json::Value;
use crate::panic;
use crate::result::{Kind, ResultData};
use crate::schema::json_quote;
use crate::snapshot;
use crate::tool::{CallIdentity, DynTool, ToolError};

fn invalid_output(name: &str, violation: &str) -> ResultData {
    ResultData::code_fmt(
        PipelineCode::InvalidToolOutput,
        format_args!(
            "tool {} returned invalid output: {violation}",
            json_quote(name)
        ),
    )
}

/// A projector (`render`, `presentation_meta`) that failed: its panic is `TOOL_PANICKED`
/// (whether the pipeline caught it or a `#[tool]` projector reported it with that code),
/// anything else an invalid output.
fn projector_failed(name: &str, projector: &str, failure: Result<ToolError, String>) -> ResultData {
    let panicked = |message: &str| {
        ResultData::panicked(format!("tool {}: output.{message}", json_quote(name)))
    };
    match failure {
        Err(p) => panicked(&format!("{projector} panicked: {p}")),
        Ok(e) if e.code() == Some(FailureCode::Pipeline(PipelineCode::ToolPanicked)) => {
            panicked(e.message())
        }
        Ok(e) => invalid_output(name, &format!("output.{projector} failed: {}", e.message())),
    }
}

/// The canonical success for a value: lossless check, output validation (all violations,
/// root label `value`) with the nulls of omitted optional properties left out, freeze, render, and presentation meta for top-level calls.
pub(crate) fn success(tool: &DynTool, exec: &CallIdentity, value: Value) -> ResultData {
    if let Err(e) = snapshot::check(&value, "value") {
        return invalid_output(&exec.name, &format!("value is not lossless JSON: {e}"));
    }
    checked_success(tool, exec, value, None)
}

/// [`success`] for a body's string output (a string is always lossless). Its default
/// content block is the text itself, so the text is kept for it and the value made from
/// a copy (held inline when short); a tool that renders its own content gets the value
/// made from the text without a copy.
pub(super) fn text_success(tool: &DynTool, exec: &CallIdentity, text: String) -> ResultData {
    if tool.erased().overridden_hooks() & overrides::RENDER != 0 {
        return checked_success(tool, exec, Value::String(text.into()), None);
    }
    let value = Value::String(crate::json::Str::from(text.as_str()));
    checked_success(tool, exec, value, Some(text))
}

/// [`success`] after the lossless check; `text`: the default content block's text, when
/// the caller has it.
fn checked_success(
    tool: &DynTool,
    exec: &CallIdentity,
    value: Value,
    text: Option<String>,
) -> ResultData {
    let name = &exec.name;
    let def = tool.definition();
    // The value sent is the one published: a `null` the validator reads as an omitted
    // optional property is left out (see `validate_output`).
    let validating = exec
        .span
        .is_some()
        .then(|| tracing::info_span!("validate_output").entered());
    let value = match validate_definition_output(def, value) {
        Ok(v) => v,
        Err(violations) => return invalid_output(name, violations.joined()),
    };
    drop(validating);
    // A hook the tool does not override runs its default here, unguarded (it cannot
    // panic).
    let own = tool.erased().overridden_hooks();
    let content = if own & overrides::RENDER == 0 {
        smallvec::smallvec![match text {
            // Validation leaves a string as it is: the text is still the value's.
            Some(text) => ContentBlock::text(text),
            None => default_block(&value),
        }]
    } else {
        match panic::contain(|| tool.erased().render(&exec.arguments, &value)) {
            Ok(Ok(c)) => c.into(),
            Ok(Err(e)) => return projector_failed(name, "render", Ok(e)),
            Err(p) => return projector_failed(name, "render", Err(p)),
        }
    };
    let meta = if exec.parent.is_none() && own & overrides::PRESENTATION_META != 0 {
        match panic::contain(|| tool.erased().presentation_meta(&exec.arguments, &value)) {
            Ok(Ok(None)) => None,
            Ok(Ok(Some(m))) => {
                if snapshot::check(&m, "meta").is_err() {
                    return invalid_output(
                        name,
                        "output.presentation_meta returned non-lossless JSON",
                    );
                }
                Some(Arc::new(m))
            }
            Ok(Err(e)) => return projector_failed(name, "presentation_meta", Ok(e)),
            Err(p) => return projector_failed(name, "presentation_meta", Err(p)),
        }
    } else {
        None
    };
    ResultData::success(value, content, meta)
}

/// What the dispatch returned, as the result post-execute sees: this call's canonical
/// outcome passes; a wrapper-authored (or another call's) success is validated and
/// rendered again (failing that ends the call); the body's deferred contexts are
/// prepended and, on success, its attached content appended; a success after the caller aborted becomes the cancellation result.
pub(super) fn settle(call: &Call, tool: &DynTool, dispatched: Dispatched) -> Outcome {
    let Dispatched { outcome, invoked } = dispatched;
    let side = call.exec.side();
    let foreign = outcome.origin != Some(call.exec.token);
    let mut data = outcome.data;
    if foreign && let Kind::Success { value, .. } = &mut data.kind {
        let value = std::mem::take(value);
        let rendered = success(tool, &call.exec, value);
        if !rendered.is_success() {
            return Outcome {
                data: rendered,
                post: false,
                invoked,
            };
        }
        data = rendered;
    }
    let deferred = side.take_deferred();
    if !deferred.is_empty() {
        data.contexts.splice(0..0, deferred);
    }
    let attached = side.take_attached();
    if !attached.is_empty() {
        data.append_content(attached);
    }
    if let Kind::Success { concludes_turn, .. } = &mut data.kind {
        *concludes_turn = side.concludes_turn();
    }
    if data.is_success() && call.cancelled() {
        data = data.into_aborted(invoked);
    }
    Outcome {
        data,
        post: true,
        invoked,
    }
}
