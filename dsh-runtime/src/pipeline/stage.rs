//! The types every stage shares: the call as stages 1 and 2 fixed it, a stage's result,
//! and what the dispatch produced. A leaf of the pipeline: the stages (`output`,
//! `dispatch`, `post`, then `exec`, which runs them in order) import it and nothing here
//! imports a stage.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::error_code::PipelineCode;
use crate::hooks::CallInfo;
use crate::registry::CallSnapshot;
use crate::result::{DispatchOutcome, ResultData};
use crate::schema::json_quote;
use crate::tool::{CallIdentity, DynTool};

/// A stage's result: go on with `T`, or end the call with an [`Outcome`].
pub(super) type Stage<T> = Result<T, Outcome>;

/// A result on its way out, and which closing stages it still passes.
pub(super) struct Outcome {
    pub(super) data: ResultData,
    /// Whether post-execute (stage 9) runs; finalize and observers (stage 10) always do.
    pub(super) post: bool,
    /// Whether a body was started (a cancelled success is then `ABORTED`, not
    /// `ABORTED_BEFORE_DISPATCH`).
    pub(super) invoked: bool,
}

impl Outcome {
    /// Through post-execute, then finalize.
    pub(super) fn post(data: ResultData) -> Outcome {
        Outcome {
            data,
            post: true,
            invoked: false,
        }
    }

    /// Straight to finalize.
    pub(super) fn last(data: ResultData) -> Outcome {
        Outcome {
            data,
            post: false,
            invoked: false,
        }
    }
}

/// What every stage knows about the call, fixed by stages 1 and 2.
pub(super) struct Call {
    /// The registry's state for this call (its view, the approval handler).
    pub(super) snap: CallSnapshot,
    /// The tool the name resolved to at entry (its finalizer runs at the end).
    pub(super) tool: Option<DynTool>,
    /// The identity, which also holds the caller's token.
    pub(super) exec: Arc<CallIdentity>,
    /// Why the arguments could not be snapshotted.
    pub(super) unsnapshotted: Option<String>,
}

impl Call {
    /// What hooks see of the call.
    pub(super) fn info(&self) -> CallInfo<'_> {
        CallInfo {
            exec: &self.exec,
            tool: self.tool.as_ref(),
        }
    }

    /// Whether a subscriber traces the call (its `execute_tool` span is enabled): the
    /// stages open spans of their own only then.
    pub(super) fn traced(&self) -> bool {
        self.exec.span.is_some()
    }

    /// The caller's token (made now if the caller gave none).
    pub(super) fn cancel(&self) -> &CancellationToken {
        self.exec.caller_token()
    }

    /// Whether the caller cancelled the call (never makes a token).
    pub(super) fn cancelled(&self) -> bool {
        self.exec.caller_cancelled()
    }

    /// The resolved tool, or the outcome of a failed stage 1 or 2 (a snapshot failure
    /// outranks an unknown name).
    pub(super) fn admitted(&self) -> Stage<&DynTool> {
        if let Some(message) = &self.unsnapshotted {
            return Err(Outcome::last(ResultData::code(
                PipelineCode::InvalidArgs,
                message.clone(),
            )));
        }
        self.tool.as_ref().ok_or_else(|| {
            Outcome::post(ResultData::code(
                PipelineCode::UnknownTool,
                unknown_tool(&self.exec.name, self.snap.view().tools()),
            ))
        })
    }
}

/// At most this many visible tools are listed in an unknown tool's message.
const LISTED_TOOLS: usize = 16;

/// `unknown tool "<n>"`, then the closest visible names (`; did you mean "a" or "b"?`)
/// and, for a short list, every visible tool (`; available tools: "a", "b"`), so a model
/// can correct the name in one step.
fn unknown_tool(name: &str, visible: &[Arc<crate::registry::state::Entry>]) -> String {
    let mut m = format!("unknown tool {}", json_quote(name));
    let close = crate::suggest::closest(name, visible.iter().map(|e| &**e.name()), 3);
    if !close.is_empty() {
        let quoted: Vec<String> = close.iter().map(|n| json_quote(n)).collect();
        m.push_str("; did you mean ");
        m.push_str(&quoted.join(" or "));
        m.push('?');
    }
    if visible.is_empty() {
        m.push_str("; no tool is available");
    } else if visible.len() <= LISTED_TOOLS {
        let quoted: Vec<String> = visible.iter().map(|e| json_quote(e.name())).collect();
        m.push_str("; available tools: ");
        m.push_str(&quoted.join(", "));
    }
    m
}

/// What stages 6 and 7 produced: the outcome the outermost wrapper returned, and what the
/// body sent on the side.
pub(super) struct Dispatched {
    pub(super) outcome: DispatchOutcome,
    pub(super) invoked: bool,
}
