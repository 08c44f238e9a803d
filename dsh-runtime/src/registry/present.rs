//! Cards for calls and results, resolved through the registry.
//!
//! A UI (live, or replaying a log) asks the registry for the card of a call by tool name;
//! the registry finds the tool the caller's scope sees and runs its presenter. Display must
//! never fail, so every way a presenter can be unavailable or misbehave ends in the generic
//! card instead of an error:
//!
//! - no visible tool of that name (unregistered since the log was written, or hidden from
//!   the scope);
//! - arguments that no longer validate against the tool's parameter schema (a log written
//!   by an older version of the tool);
//! - a tool with no presenter, or one that declines (`None`);
//! - a presenter that panics (the panic is contained; the process's panic hook still
//!   reports it).

use crate::cards::{CallView, ResultSummary, ResultView};
use crate::json::Value;
use crate::panic;
use crate::tool::{AgentScopeId, DynTool};
use crate::validate::is_valid;

use super::{AgentScope, Registry};

impl Registry {
    /// The pending card of a call to the global tool `name` with `raw_args` (see
    /// [`AgentScope::present_call`] for a scope's view).
    ///
    /// The tool's [`present_call`](crate::Tool::present_call) runs only on arguments that
    /// validate against its parameter schema; otherwise, and whenever the presenter is
    /// missing, declines or panics, the result is the generic card
    /// ([`CallView::generic`]: the tool name as title, the raw arguments as input).
    ///
    /// ```
    /// # use dsh_runtime::{Registry, json};
    /// # use dsh_runtime::cards::CallView;
    /// let registry = Registry::new();
    /// let args = json::parse(r#"{"file_path":"README.md"}"#).unwrap();
    /// // No such tool: still a card, never an error.
    /// assert_eq!(
    ///     registry.present_call("read", &args),
    ///     CallView::generic("read", Some(args.clone()))
    /// );
    /// ```
    pub fn present_call(&self, name: &str, raw_args: &Value) -> CallView {
        self.present_call_in(None, name, raw_args)
    }

    /// The completed card of a result of the global tool `name` called with `raw_args`
    /// (see [`AgentScope::present_result`] for a scope's view).
    ///
    /// `result` is the persisted part of a result ([`crate::ToolResult::summary`]: content,
    /// error flag and presentation meta, never the value), so the same call serves a live
    /// result and a replayed log. Fallbacks are as for [`Registry::present_call`]; the
    /// generic card is [`ResultView::generic`] (the result's content).
    pub fn present_result(
        &self,
        name: &str,
        raw_args: &Value,
        result: &ResultSummary,
    ) -> ResultView {
        self.present_result_in(None, name, raw_args, result)
    }

    fn present_call_in(
        &self,
        scope: Option<AgentScopeId>,
        name: &str,
        raw_args: &Value,
    ) -> CallView {
        panic::contain(|| {
            self.presentable(scope, name, raw_args)?
                .erased()
                .present_call(raw_args)
        })
        .ok()
        .flatten()
        .unwrap_or_else(|| CallView::generic(name, Some(raw_args.clone())))
    }

    fn present_result_in(
        &self,
        scope: Option<AgentScopeId>,
        name: &str,
        raw_args: &Value,
        result: &ResultSummary,
    ) -> ResultView {
        panic::contain(|| {
            self.presentable(scope, name, raw_args)?
                .erased()
                .present_result(raw_args, result)
        })
        .ok()
        .flatten()
        .unwrap_or_else(|| ResultView::generic(result))
    }

    /// The visible tool `name`, when `raw_args` still validate against its parameters.
    /// Runs inside the caller's panic guard (a hand-written tool's `definition` is user
    /// code too).
    fn presentable(
        &self,
        scope: Option<AgentScopeId>,
        name: &str,
        raw_args: &Value,
    ) -> Option<DynTool> {
        let tool = self.get_in(scope, name)?;
        is_valid(&tool.definition().parameters, raw_args).then_some(tool)
    }
}

impl AgentScope {
    /// The pending card of a call to `name` with `raw_args`, as calls from this scope see
    /// the tool. Fallbacks are as for [`Registry::present_call`].
    pub fn present_call(&self, name: &str, raw_args: &Value) -> CallView {
        self.registry()
            .present_call_in(Some(self.id()), name, raw_args)
    }

    /// The completed card of a result of `name` called with `raw_args`, as calls from
    /// this scope see the tool. Fallbacks are as for [`Registry::present_result`].
    pub fn present_result(
        &self,
        name: &str,
        raw_args: &Value,
        result: &ResultSummary,
    ) -> ResultView {
        self.registry()
            .present_result_in(Some(self.id()), name, raw_args, result)
    }
}
