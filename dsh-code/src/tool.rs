//! The `run_code` tool.

use std::sync::Arc;

use dsh_providers::tool_search::ToolSearch;
use dsh_runtime::RUN_CODE;
use dsh_runtime::cards::{CallView, ToolCallKind};
use dsh_runtime::json::{Object, Value};
use dsh_runtime::{
    PipelineCode, Registry, Tool, ToolContext, ToolDefinition, ToolError, ToolSchema,
    content::ContentBlock,
};
use serde::{Deserialize, Serialize};

use crate::config::CodeConfig;
use crate::config::Mode;
use crate::engine::{self, Job};
use crate::events::SubCallObserver;

/// The model-facing description of `run_code`.
pub const DESCRIPTION: &str = "Run a TypeScript program that calls the available tools. \
`code` is the body of an async function: use `await` and `return` at the top level, and \
call tools as `await tools.<name>(args)` following the declarations in the system prompt. \
Only erasable TypeScript works (no enum, namespace or parameter properties): types are \
removed, not checked. The run's output is what the program prints with console.log and \
what it returns, so keep both to what you need; a tool result holding an image is \
attached after that output, so you can look at it.";

/// Arguments of `run_code`.
#[derive(Clone, Debug, Serialize, Deserialize, ToolSchema)]
#[schema(open)]
pub struct RunCodeArgs {
    /// The program: the body of an async TypeScript function.
    pub code: String,
    /// What the program does, in a few words in the active voice (shown to the user),
    /// e.g. "Count TODO comments per crate".
    pub description: String,
}

/// The canonical value of a successful run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToolSchema)]
pub struct RunCodeOutput {
    /// What the program printed, one entry per `console` call.
    pub logs: Vec<String>,
    /// What the program returned (absent when it returned nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
}

/// The `run_code` tool of one scope, bound to its registry.
///
/// Registered by [`crate::CodeMode::present_as`]; it holds the registry it runs tool
/// calls through, so keep the [`crate::Presentation`] guard (dropping it unregisters
/// the tool and releases the registry).
pub struct RunCode {
    registry: Registry,
    config: Arc<CodeConfig>,
    mode: Mode,
    definition: ToolDefinition,
    observer: Option<Arc<dyn SubCallObserver>>,
    /// The deferred-tool indexes behind `tools.search` (rebuilt after registry changes).
    search: ToolSearch,
}

impl std::fmt::Debug for RunCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunCode")
            .field("mode", &self.mode)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl RunCode {
    pub(crate) fn new(
        registry: Registry,
        config: Arc<CodeConfig>,
        mode: Mode,
        description: Option<String>,
        observer: Option<Arc<dyn SubCallObserver>>,
    ) -> RunCode {
        RunCode {
            search: ToolSearch::new(&registry),
            registry,
            config,
            mode,
            observer,
            definition: ToolDefinition::new(
                RUN_CODE,
                description.unwrap_or_else(|| DESCRIPTION.to_string()),
                RunCodeArgs::schema(),
                RunCodeOutput::schema(),
            ),
        }
    }

    /// The mode of the scope that registered this tool.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The limits runs use.
    pub fn config(&self) -> &CodeConfig {
        &self.config
    }
}

impl Tool for RunCode {
    type Args = RunCodeArgs;
    type Output = RunCodeOutput;

    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    async fn call(&self, args: RunCodeArgs, cx: ToolContext) -> Result<RunCodeOutput, ToolError> {
        if self.mode == Mode::Native {
            return Err(ToolError::with_code(
                PipelineCode::UnknownTool,
                format!("unknown tool \"{RUN_CODE}\""),
            ));
        }
        if args.description.trim().is_empty() {
            return Err(ToolError::with_code(
                PipelineCode::InvalidArgs,
                "invalid description: expected a non-empty string",
            ));
        }
        let names: Vec<String> = self
            .registry
            .view_of(cx.agent())
            .names()
            .iter()
            .filter(|n| &***n != RUN_CODE)
            .map(|n| n.to_string())
            .collect();
        // As the SDK declares it: a search when a deferred tool is visible and no tool
        // takes its names.
        let taken =
            |n: &String| n == crate::sdk::typescript::SEARCH || n == crate::sdk::typescript::CALL;
        let search = if names.iter().any(taken) {
            None
        } else {
            self.search.index(cx.agent()).filter(|i| !i.is_empty())
        };
        let exec = cx.execution();
        let report = engine::run(Job {
            program: args.code,
            names,
            search,
            registry: self.registry.clone(),
            call_id: exec.call_id.clone(),
            root_call_id: exec.root_call_id.clone(),
            agent: exec.agent,
            token: exec.token,
            name: exec.name.clone(),
            approval: cx.approval_fallback().cloned(),
            caller: cx.caller().cloned(),
            cancel: cx.cancellation().clone(),
            config: (*self.config).clone(),
            observer: self.observer.clone(),
        })
        .await;
        for context in report.forwarded.contexts {
            cx.defer_context(context);
        }
        if report.forwarded.concludes_turn {
            cx.conclude_turn();
        }
        for block in report.forwarded.content {
            cx.attach_content(block);
        }
        match report.outcome {
            Ok(result) => Ok(RunCodeOutput {
                logs: report.logs,
                result,
            }),
            Err(failure) => {
                let mut message =
                    format!("code run failed ({}): {}", failure.kind, failure.message);
                if !report.logs.is_empty() {
                    message.push_str("\nCaptured output:\n");
                    message.push_str(&report.logs.join("\n"));
                }
                Err(ToolError::with_code(PipelineCode::CodeRunFailed, message))
            }
        }
    }

    fn render(&self, _args: &Value, value: &Value) -> Result<Vec<ContentBlock>, ToolError> {
        Ok(vec![ContentBlock::text(render_output(value))])
    }

    fn present_call(&self, args: &Value) -> Option<CallView> {
        let description = args.get("description")?.as_str()?;
        let code = args.get("code")?.clone();
        Some(CallView::Generic {
            title: description.to_string(),
            kind: Some(ToolCallKind::Execute),
            raw_input: Some(code),
            content: None,
            locations: None,
        })
    }
}

/// The model-facing text of a run's value `{logs, result?}`: the logs joined with
/// newlines, then the result (a string as it is, anything else as indented JSON),
/// joined with a newline; `(run_code completed with no output)` when both are empty.
pub fn render_output(value: &Value) -> String {
    let logs = value
        .get("logs")
        .and_then(Value::as_array)
        .map(|lines| {
            lines
                .iter()
                .map(|l| l.as_str().unwrap_or_default())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    let result = match value.get("result") {
        None => String::new(),
        Some(Value::String(s)) => s.to_string(),
        Some(v) => render_json(v),
    };
    let parts: Vec<&str> = [logs.as_str(), result.as_str()]
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect();
    if parts.is_empty() {
        "(run_code completed with no output)".to_string()
    } else {
        parts.join("\n")
    }
}

const INDENT: &str = "  ";
/// Indentation stops growing past this many characters: deeper containers print
/// compactly, so the text stays linear in the value's size.
const MAX_INDENT_CHARS: usize = 10;

/// Two-space indented JSON whose containers go compact (no spaces) once their children
/// would be indented past ten characters. Iterative: any depth is fine.
pub fn render_json(root: &Value) -> String {
    enum Task<'a> {
        Value(&'a Value, usize, bool),
        Text(String),
    }
    let mut out = String::new();
    let mut tasks = vec![Task::Value(root, 0, false)];
    while let Some(task) = tasks.pop() {
        let (value, depth, compact) = match task {
            Task::Text(t) => {
                out.push_str(&t);
                continue;
            }
            Task::Value(v, d, c) => (v, d, c),
        };
        let compact = compact || (depth + 1) * INDENT.len() > MAX_INDENT_CHARS;
        let child = depth + 1;
        match value {
            Value::Array(items) => {
                out.push('[');
                if items.is_empty() {
                    out.push(']');
                    continue;
                }
                tasks.push(Task::Text(if compact {
                    "]".to_string()
                } else {
                    format!("\n{}]", INDENT.repeat(depth))
                }));
                for (i, item) in items.iter().enumerate().rev() {
                    tasks.push(Task::Value(item, child, compact));
                    tasks.push(Task::Text(match (compact, i) {
                        (true, 0) => String::new(),
                        (true, _) => ",".to_string(),
                        (false, 0) => format!("\n{}", INDENT.repeat(child)),
                        (false, _) => format!(",\n{}", INDENT.repeat(child)),
                    }));
                }
            }
            Value::Object(map) => {
                let entries: Vec<(&str, &Value)> = map.iter().collect();
                out.push('{');
                if entries.is_empty() {
                    out.push('}');
                    continue;
                }
                tasks.push(Task::Text(if compact {
                    "}".to_string()
                } else {
                    format!("\n{}}}", INDENT.repeat(depth))
                }));
                for (i, (key, item)) in entries.into_iter().enumerate().rev() {
                    let key = Value::from(key).to_string();
                    tasks.push(Task::Value(item, child, compact));
                    tasks.push(Task::Text(match (compact, i) {
                        (true, 0) => format!("{key}:"),
                        (true, _) => format!(",{key}:"),
                        (false, 0) => format!("\n{}{key}: ", INDENT.repeat(child)),
                        (false, _) => format!(",\n{}{key}: ", INDENT.repeat(child)),
                    }));
                }
            }
            scalar => out.push_str(&scalar.to_string()),
        }
    }
    out
}

/// `{logs, result?}` as a value (for tests and hosts that build one by hand).
pub fn output_value(logs: &[&str], result: Option<Value>) -> Value {
    let mut o = Object::new();
    o.insert(
        "logs",
        Value::from(logs.iter().map(|l| Value::from(*l)).collect::<Vec<_>>()),
    );
    if let Some(r) = result {
        o.insert("result", r);
    }
    Value::Object(o)
}
