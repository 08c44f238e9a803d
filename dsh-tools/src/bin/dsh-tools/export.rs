//! The `export`, `sdk` and `list --tokens` subcommands of the `dsh-tools` binary: the
//! host's tools as each model API takes them, as a code-mode SDK, and what they cost in
//! o200k tokens.

use dsh_code::sdk::{python, typescript};
use dsh_providers::export::{self, Target, tokens};
use dsh_runtime::Registry;

/// What a subcommand prints, and whether it succeeded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Output {
    /// Standard output.
    pub stdout: String,
    /// Lines for standard error (warnings, errors).
    pub stderr: Vec<String>,
    /// Whether the command succeeded (exit status 0; otherwise 1, or 2 for usage errors).
    pub status: u8,
}

/// `dsh-tools export --provider NAME`: the request fragment on stdout, one line per
/// warning on stderr; exit status 1 when a tool cannot be exported (the others are still
/// printed), 2 for an unknown provider.
pub(crate) fn export(registry: &Registry, provider: &str) -> Output {
    let target: Target = match provider.parse() {
        Ok(t) => t,
        Err(e) => {
            return Output {
                stdout: String::new(),
                stderr: vec![format!("error: {e}")],
                status: 2,
            };
        }
    };
    let e = export::export_registry(registry, target);
    let mut stderr: Vec<String> = e.warnings.iter().map(|w| format!("warning: {w}")).collect();
    stderr.extend(e.errors.iter().map(|err| format!("error: {err}")));
    Output {
        stdout: e.to_pretty_string(),
        stderr,
        status: if e.is_complete() { 0 } else { 1 },
    }
}

/// `dsh-tools sdk --lang ts|py`: the code-mode SDK prompt section on stdout, degradations
/// as warnings on stderr.
pub(crate) fn sdk(registry: &Registry, lang: &str) -> Output {
    let sdk = match lang {
        "ts" | "typescript" => typescript::render_registry(registry),
        "py" | "python" => python::render_registry(registry),
        other => {
            return Output {
                stdout: String::new(),
                stderr: vec![format!(
                    "error: unknown language {other:?}; expected ts or py"
                )],
                status: 2,
            };
        }
    };
    Output {
        stdout: format!("{}\n", sdk.prompt_section()),
        stderr: sdk
            .warnings
            .iter()
            .map(|w| format!("warning: {w}"))
            .collect(),
        status: 0,
    }
}

/// The heading of `dsh-tools list --tokens`: what the figures count, and what they do
/// not.
pub(crate) const TOKENS_HEADING: &str = "o200k tokens of each tool's entry as the target's request carries it (compact JSON), and of the request's whole `tools` fragment.\n\
Exact for OpenAI (before its own per-tool framing); for Anthropic, Gemini and MCP an o200k approximation of the provider's tokenizer.\n";

/// `dsh-tools list --tokens`: the heading and a table of o200k tokens per tool (rows) and
/// target (columns), with the request totals.
pub(crate) fn token_table(registry: &Registry, targets: &[Target]) -> String {
    let report = tokens::token_report_view(&registry.view(), targets);
    format!("{TOKENS_HEADING}\n{report}")
}

/// The targets named on the command line (all of them when none is).
pub(crate) fn parse_targets(names: &[String]) -> Result<Vec<Target>, export::UnknownTarget> {
    if names.is_empty() {
        return Ok(Target::ALL.to_vec());
    }
    let mut targets = Vec::new();
    for name in names {
        let t: Target = name.trim().parse()?;
        if !targets.contains(&t) {
            targets.push(t);
        }
    }
    Ok(targets)
}

/// Write an [`Output`] (ignoring a closed stdout) and turn its status into an exit code.
pub(crate) fn print(output: Output) -> std::process::ExitCode {
    use std::io::Write as _;
    let _ = std::io::stdout().lock().write_all(output.stdout.as_bytes());
    for line in &output.stderr {
        eprintln!("{line}");
    }
    std::process::ExitCode::from(output.status)
}

/// `dsh-tools list --tokens [--json] [--target NAME[,NAME...]]`: exit status 2 for an
/// unknown target.
pub(crate) fn list_tokens_output(registry: &Registry, as_json: bool, targets: &[String]) -> Output {
    let targets = match parse_targets(targets) {
        Ok(t) => t,
        Err(e) => {
            return Output {
                stdout: String::new(),
                stderr: vec![format!("error: {e}")],
                status: 2,
            };
        }
    };
    let stdout = if as_json {
        let report = tokens::token_report_view(&registry.view(), &targets);
        let mut text = serde_json::to_string_pretty(&report.to_json())
            .unwrap_or_else(|e| format!("(the report cannot be printed: {e})"));
        text.push('\n');
        text
    } else {
        token_table(registry, &targets)
    };
    Output {
        stdout,
        stderr: Vec::new(),
        status: 0,
    }
}

/// [`list_tokens_output`], printed.
pub(crate) fn list_tokens(
    registry: &Registry,
    as_json: bool,
    targets: &[String],
) -> std::process::ExitCode {
    print(list_tokens_output(registry, as_json, targets))
}

// The command's rendering of a refused tool, over a registry the binary cannot be given
// (the CLI runs on the reference tools, which every target exports).
#[cfg(test)]
mod tests {
    #[test]
    fn a_tool_that_cannot_be_exported_fails_the_command() {
        use std::sync::Arc;

        use dsh_runtime::schema::{Additional, Property, Schema};
        use dsh_runtime::{RawTool, Registry};

        let registry = Registry::new();
        let map = Schema::object(vec![], Additional::Schema(Arc::new(Schema::string())));
        let tool = RawTool::from_schemas(
            "env_tool",
            "Takes a map.",
            Schema::closed_object(vec![Property::new("env", map, true)]),
            Schema::null(),
            |_args, _cx| async { Ok(dsh_runtime::json::Value::Null) },
        );
        let _reg = registry.register(tool).expect("register");
        let out = super::export(&registry, "openai-strict");
        assert_eq!(out.status, 1);
        assert_eq!(
            out.stderr,
            [
                "error: env_tool: parameters.properties.env: is a map (additionalProperties with a schema), which strict mode cannot express (every object must be closed)"
            ]
        );
        assert_eq!(out.stdout, "[]\n");
        let ok = super::export(&registry, "openai");
        assert_eq!(ok.status, 0);
    }
}
