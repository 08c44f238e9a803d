//! The `export`, `sdk` and `list --tokens` subcommands of the `dsh-tools` binary: the
//! host's tools as each model API takes them, as a code-mode SDK, and what they cost.

use std::fmt::Write as _;

use dsh_code::sdk::{python, typescript};
use dsh_runtime::Registry;
use dsh_runtime::export::{self, Target};
use dsh_runtime::json::{Object, Value};

/// What a subcommand prints, and whether it succeeded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output {
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
pub fn export(registry: &Registry, provider: &str) -> Output {
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
pub fn sdk(registry: &Registry, lang: &str) -> Output {
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

/// The size of each tool's definition as a model receives it: the compact JSON of the
/// provider's entry for the tool (`provider` `None`: the registry's own
/// `{name, description, parameters}`). Rows `(name, bytes)`, in publication order.
pub fn sizes(registry: &Registry, provider: Option<Target>) -> Vec<(String, usize)> {
    match provider {
        None => registry
            .view()
            .schemas()
            .iter()
            .map(|d| (d.name.to_string(), d.to_json().to_string().len()))
            .collect(),
        Some(t) => export::export_registry(registry, t)
            .tools
            .iter()
            .map(|tool| (tool.name.clone(), tool.definition.to_string().len()))
            .collect(),
    }
}

/// `dsh-tools list --tokens`: a table of bytes per tool definition and an estimate of
/// tokens (bytes / 4, rounded up, labelled as an estimate: no tokenizer is shipped).
pub fn token_table(registry: &Registry, provider: Option<Target>) -> String {
    let rows = sizes(registry, provider);
    let width = rows.iter().map(|(n, _)| n.len()).max().unwrap_or(4).max(5);
    let mut out = String::new();
    let form = provider.map_or("registry schemas".to_string(), |t| format!("{t} export"));
    let _ = writeln!(
        out,
        "Definition sizes ({form}, compact JSON); tokens are estimated as bytes/4."
    );
    let _ = writeln!(out, "{:width$}  {:>8}  {:>8}", "tool", "bytes", "~tokens");
    let mut total = 0;
    for (name, bytes) in &rows {
        total += bytes;
        let _ = writeln!(out, "{name:width$}  {bytes:>8}  {:>8}", bytes.div_ceil(4));
    }
    let _ = writeln!(
        out,
        "{:width$}  {total:>8}  {:>8}",
        "total",
        total.div_ceil(4)
    );
    out
}

/// [`sizes`] as JSON: `[{"name", "bytes", "estimatedTokens"}]`.
pub fn token_json(registry: &Registry, provider: Option<Target>) -> Value {
    Value::from(
        sizes(registry, provider)
            .into_iter()
            .map(|(name, bytes)| {
                let mut o = Object::new();
                o.insert("name", Value::from(name.as_str()));
                o.insert("bytes", Value::from(bytes as u64));
                o.insert("estimatedTokens", Value::from(bytes.div_ceil(4) as u64));
                Value::Object(o)
            })
            .collect::<Vec<_>>(),
    )
}

/// Write an [`Output`] (ignoring a closed stdout) and turn its status into an exit code.
pub fn print(output: Output) -> std::process::ExitCode {
    use std::io::Write as _;
    let _ = std::io::stdout().lock().write_all(output.stdout.as_bytes());
    for line in &output.stderr {
        eprintln!("{line}");
    }
    std::process::ExitCode::from(output.status)
}

/// `dsh-tools list --tokens [--json] [--provider NAME]`.
pub fn list_tokens(
    registry: &Registry,
    as_json: bool,
    provider: Option<&str>,
) -> std::process::ExitCode {
    let target = match provider.map(str::parse::<Target>).transpose() {
        Ok(t) => t,
        Err(e) => {
            return print(Output {
                stdout: String::new(),
                stderr: vec![format!("error: {e}")],
                status: 2,
            });
        }
    };
    let stdout = if as_json {
        let mut text =
            serde_json::to_string_pretty(&token_json(registry, target)).unwrap_or_default();
        text.push('\n');
        text
    } else {
        token_table(registry, target)
    };
    print(Output {
        stdout,
        stderr: Vec::new(),
        status: 0,
    })
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
