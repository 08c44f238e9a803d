//! Code mode per scope: `native`, `code` or `both`, the collapse of direct calls in
//! `code`, and what a model in a scope is shown.
//!
//! # Departures from the reference
//!
//! - **Collapse is a pre-execute hook** registered on the code-mode scope, not a check
//!   when the call is created. So invalid arguments to a collapsed tool report
//!   `INVALID_ARGS` first (arguments are validated before policy everywhere in dsh-rs),
//!   global pre-execute hooks registered before [`CodeMode::present_as`] run before it, and
//!   the tool's `finalize_content` still runs on the `UNKNOWN_TOOL` result. Guards,
//!   wrappers and the body never run, and calls with a `parent` (from a program) are
//!   exempt, as in the reference.
//! - **Start and settle events** go to a [`SubCallObserver`] set on the [`CodeMode`]
//!   rather than to a session log (the runtime has none).
//! - **Image-bearing content** of sub-call results is appended to the outer result's
//!   content rather than attached as a separate message: contexts are text here.
//! - The `run_code` tool holds a clone of its registry: drop the [`Presentation`] to
//!   release it (its registrations are guards that unregister with it).

use std::collections::HashSet;
use std::fmt;
use std::sync::{Arc, Mutex};

use dsh_runtime::RUN_CODE;
use dsh_runtime::hooks::{CallInfo, HookFuture, PreDecision, PreExecute, PreNext};
use dsh_runtime::{
    AgentScope, AgentScopeId, DynTool, PipelineCode, RegisterError, RegistrationGuard, Registry,
    ToolDescriptor, ToolError,
};

use crate::config::{CodeConfig, Mode};
use crate::events::SubCallObserver;
use crate::sdk::{self, SdkWarning};
use crate::tool::RunCode;

/// Installs code mode in agent scopes.
///
/// ```
/// # use dsh_code::{CodeMode, Mode};
/// # use dsh_runtime::Registry;
/// let registry = Registry::new();
/// let scope = registry.scope();
/// let code_mode = CodeMode::new();
/// let _presentation = code_mode.present_as(&scope, Mode::Code).unwrap();
/// assert_eq!(dsh_code::effective_mode(&registry, Some(scope.id())), Mode::Code);
/// // The model in this scope sees only run_code.
/// let prompt = dsh_code::prompt(&registry, Some(scope.id()));
/// assert_eq!(prompt.tools.len(), 1);
/// assert_eq!(&*prompt.tools[0].name, "run_code");
/// ```
#[derive(Default)]
pub struct CodeMode {
    config: Arc<CodeConfig>,
    presented: Arc<Mutex<HashSet<AgentScopeId>>>,
    sdk_in_description: bool,
    observer: Option<Arc<dyn SubCallObserver>>,
}

impl fmt::Debug for CodeMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CodeMode")
            .field("config", &self.config)
            .field("sdk_in_description", &self.sdk_in_description)
            .field("observed", &self.observer.is_some())
            .finish_non_exhaustive()
    }
}

impl CodeMode {
    /// Code mode with the default limits.
    pub fn new() -> CodeMode {
        CodeMode::default()
    }

    /// Code mode with these limits for every run.
    pub fn with_config(config: CodeConfig) -> CodeMode {
        CodeMode {
            config: Arc::new(config),
            presented: Arc::default(),
            sdk_in_description: false,
            observer: None,
        }
    }

    /// Tell `observer` when the tool calls of programs run in scopes presented from
    /// now on start and settle (see [`SubCallObserver`]).
    #[must_use]
    pub fn observe_sub_calls(mut self, observer: impl SubCallObserver) -> CodeMode {
        self.observer = Some(Arc::new(observer));
        self
    }

    /// Put the scope's code-mode instructions (in `code` the code-only rule, then the
    /// SDK of the tools the scope sees) after `run_code`'s own description, for hosts
    /// whose clients read tool descriptions but take no system prompt from them (an MCP
    /// server). The text is what [`prompt`] would return as `instructions`, computed
    /// when [`CodeMode::present_as`] runs: register the scope's own tools first, and
    /// present again after the scope's tool set changes.
    ///
    /// ```
    /// # use dsh_code::{CodeMode, Mode};
    /// # use dsh_runtime::Registry;
    /// let registry = Registry::new();
    /// let scope = registry.scope();
    /// let _p = CodeMode::new().sdk_in_description().present_as(&scope, Mode::Code).unwrap();
    /// let run_code = registry.view_of(Some(scope.id())).get("run_code").unwrap();
    /// let description = &run_code.definition().description;
    /// assert!(description.starts_with(dsh_code::DESCRIPTION));
    /// assert!(description.contains(dsh_code::sdk::CODE_ONLY_RULE));
    /// assert!(description.contains("declare const tools"));
    /// ```
    #[must_use]
    pub fn sdk_in_description(mut self) -> CodeMode {
        self.sdk_in_description = true;
        self
    }

    /// The limits runs use.
    pub fn config(&self) -> &CodeConfig {
        &self.config
    }

    /// Set how `scope` (and its descendants, unless one of them sets its own) presents
    /// its tools. Once per scope; the nearest scope on a chain wins.
    ///
    /// - `code` and `both` register `run_code` in the scope; `code` also makes a direct
    ///   call (no `parent`) to any other visible tool from the scope or below fail with
    ///   `UNKNOWN_TOOL`, naming `run_code` as the way to reach it. Calls a program makes
    ///   carry a `parent` and may use any visible tool.
    /// - `native` below a scope in code mode registers a `run_code` that reports the
    ///   scope as native (so neither collapse nor runs happen there); [`prompt`] leaves
    ///   it out.
    ///
    /// Dropping the returned [`Presentation`] undoes all of it.
    pub fn present_as(
        &self,
        scope: &AgentScope,
        mode: Mode,
    ) -> Result<Presentation, PresentAsError> {
        let id = scope.id();
        {
            let mut presented = self.presented.lock().unwrap_or_else(|e| e.into_inner());
            if !presented.insert(id) {
                return Err(PresentAsError::AlreadyPresented);
            }
        }
        let mut presentation = Presentation {
            registrations: Vec::new(),
            presented: self.presented.clone(),
            scope: id,
        };
        let registry = scope.registry();
        let inherited = effective_mode(registry, Some(id));
        if mode != Mode::Native || inherited != Mode::Native {
            let description = if self.sdk_in_description {
                let tools: Vec<DynTool> = visible_tools(registry, Some(id));
                instructions(mode, &tools)
                    .map(|(text, _)| format!("{}\n\n{text}", crate::DESCRIPTION))
            } else {
                None
            };
            let tool = RunCode::new(
                registry.clone(),
                self.config.clone(),
                mode,
                description,
                self.observer.clone(),
            );
            let registration = scope
                .register_run_code(DynTool::new(tool))
                .map_err(PresentAsError::Register)?;
            presentation
                .registrations
                .push(registration.unregister_on_drop());
        }
        if mode == Mode::Code {
            presentation.registrations.push(
                scope
                    .add_pre_execute(Collapse {
                        registry: registry.clone(),
                    })
                    .unregister_on_drop(),
            );
        }
        Ok(presentation)
    }
}

/// Keeps a scope's presentation; dropping it restores the inherited one.
#[must_use = "dropping a `Presentation` undoes it at once"]
pub struct Presentation {
    registrations: Vec<RegistrationGuard>,
    presented: Arc<Mutex<HashSet<AgentScopeId>>>,
    scope: AgentScopeId,
}

impl fmt::Debug for Presentation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Presentation")
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

impl Drop for Presentation {
    fn drop(&mut self) {
        self.registrations.clear();
        self.presented
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.scope);
    }
}

/// Why [`CodeMode::present_as`] refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PresentAsError {
    /// The scope already has a presentation.
    #[error(
        "this scope already has a presentation (present_as is allowed once per scope; drop the previous `Presentation` first)"
    )]
    AlreadyPresented,
    /// The registry refused `run_code` (e.g. the scope is gone).
    #[error("cannot register run_code: {0}")]
    Register(#[source] RegisterError),
}

/// The mode in effect for callers in `scope`: that of the nearest scope on its chain
/// that set one, else native.
pub fn effective_mode(registry: &Registry, scope: Option<AgentScopeId>) -> Mode {
    registry
        .view_of(scope)
        .get(RUN_CODE)
        .and_then(|tool| run_code_of(&tool).map(RunCode::mode))
        .unwrap_or(Mode::Native)
}

fn run_code_of(tool: &DynTool) -> Option<&RunCode> {
    let any: &dyn std::any::Any = tool.erased();
    any.downcast_ref::<RunCode>()
}

/// The message of a collapsed direct call.
pub fn collapse_message(name: &str) -> String {
    let quoted = dsh_runtime::json::Value::from(name).to_string();
    format!(
        "unknown tool {quoted}: this agent calls tools from programs only; call run_code with a program that uses `await tools[{quoted}](args)`"
    )
}

/// The pre-execute hook that makes direct calls fail in `code` mode.
struct Collapse {
    registry: Registry,
}

impl PreExecute for Collapse {
    fn pre_execute<'a>(
        &'a self,
        call: &'a CallInfo<'a>,
        next: PreNext<'a>,
    ) -> HookFuture<'a, Result<PreDecision, ToolError>> {
        if call.parent().is_none()
            && call.name() != RUN_CODE
            && call.tool().is_some()
            && effective_mode(&self.registry, call.agent()) == Mode::Code
        {
            return HookFuture::ready(Err(ToolError::with_code(
                PipelineCode::UnknownTool,
                collapse_message(call.name()),
            )));
        }
        next.run()
    }
}

/// What a model in a scope is shown.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct CodePrompt {
    /// The mode in effect.
    pub mode: Mode,
    /// The tools to offer for direct calls, in publication order (`run_code` last).
    pub tools: Vec<ToolDescriptor>,
    /// The system-prompt text for code mode: in `code`, the rule that only `run_code`
    /// may be called directly, then the SDK; in `both`, the SDK; `None` in `native`.
    pub instructions: Option<String>,
    /// What the SDK states less precisely than the tools' schemas (empty in `native`):
    /// worth logging when a tool set is assembled, since the model reads the looser type.
    pub warnings: Vec<SdkWarning>,
}

/// The tools `scope` sees, in publication order, `run_code` left out.
fn visible_tools(registry: &Registry, scope: Option<AgentScopeId>) -> Vec<DynTool> {
    let mut tools = registry.view_of(scope).tools();
    tools.retain(|t| t.definition().name != RUN_CODE);
    tools
}

/// The system-prompt text of a mode over these tools, and the SDK's warnings.
fn instructions(mode: Mode, tools: &[DynTool]) -> Option<(String, Vec<SdkWarning>)> {
    let sdk = match mode {
        Mode::Native => return None,
        Mode::Code | Mode::Both => sdk::sdk_text(tools),
    };
    let text = match mode {
        Mode::Code => format!("{}\n\n{}", sdk::CODE_ONLY_RULE, sdk.prompt_section()),
        _ => sdk.prompt_section(),
    };
    Some((text, sdk.warnings))
}

/// Which of `visible` (the tools `scope` sees, in publication order) to offer a model
/// for direct calls: the tools of [`prompt`], in the same order. In `code` only
/// `run_code`; in `both` all of them; in `native` all but a `run_code` (one registered
/// by a native scope below a scope in code mode). For hosts that publish tools
/// themselves, such as an MCP server's tool list.
///
/// ```
/// # use dsh_code::{CodeMode, Mode};
/// # use dsh_runtime::{Registry, tool};
/// /// Add two numbers.
/// #[tool(read_only)]
/// async fn add(a: i64, b: i64) -> i64 { a + b }
///
/// let registry = Registry::new();
/// let _add = registry.register(Add).unwrap();
/// let scope = registry.scope();
/// let _p = CodeMode::new().present_as(&scope, Mode::Code).unwrap();
/// let visible = registry.view_of(Some(scope.id())).tools();
/// let offered = dsh_code::offered_tools(&registry, Some(scope.id()), visible);
/// assert_eq!(offered.len(), 1);
/// assert_eq!(&*offered[0].definition().name, "run_code");
/// ```
pub fn offered_tools(
    registry: &Registry,
    scope: Option<AgentScopeId>,
    visible: Vec<DynTool>,
) -> Vec<DynTool> {
    let mode = effective_mode(registry, scope);
    visible
        .into_iter()
        .filter(|t| {
            let is_run_code = &*t.definition().name == RUN_CODE;
            match mode {
                Mode::Code => is_run_code,
                Mode::Both => true,
                Mode::Native => !is_run_code,
            }
        })
        .collect()
}

/// Assemble what a model in `scope` is shown (see [`CodePrompt`]). The SDK text comes
/// from [`crate::sdk::sdk_text`], over the visible tools except `run_code`.
pub fn prompt(registry: &Registry, scope: Option<AgentScopeId>) -> CodePrompt {
    let mode = effective_mode(registry, scope);
    let mut tools = registry.view_of(scope).schemas();
    let run_code = tools
        .iter()
        .position(|t| &*t.name == RUN_CODE)
        .map(|i| tools.remove(i));
    let (mode_tools, text) = match (mode, run_code) {
        (Mode::Code, Some(rc)) => (vec![rc], true),
        (Mode::Both, Some(rc)) => {
            tools.push(rc);
            (tools, true)
        }
        (_, _) => (tools, false),
    };
    let (instructions, warnings) = if text {
        match instructions(mode, &visible_tools(registry, scope)) {
            Some((text, warnings)) => (Some(text), warnings),
            None => (None, Vec::new()),
        }
    } else {
        (None, Vec::new())
    };
    CodePrompt {
        mode,
        tools: mode_tools,
        instructions,
        warnings,
    }
}
