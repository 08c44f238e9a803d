//! `dsh-tools code`: run a TypeScript program against the reference tools through
//! `run_code` (see the `dsh-code` crate).
//!
//! The program runs in an agent scope presented in code mode, so it reaches every tool
//! of the host, through the full pipeline and the root guard. Its content (logs, then
//! the result) is printed on standard output; a failed run is reported on standard
//! error.

use std::io::Read as _;
use std::process::ExitCode;

use dsh_code::{CodeConfig, CodeMode, Mode, PresentAsError};
use dsh_runtime::json::{Object, Value};
use dsh_runtime::{ToolCall, ToolResult};

use dsh_tools::host::Host;

/// The program text: `-` reads standard input, anything else is the program itself.
pub(crate) fn read_program(arg: &str) -> std::io::Result<String> {
    if arg == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text)?;
        Ok(text)
    } else {
        Ok(arg.to_string())
    }
}

/// Run `program` through `run_code` from a fresh code-mode scope of `host`.
pub(crate) async fn run(
    host: &Host,
    call_id: &str,
    program: &str,
) -> Result<ToolResult, PresentAsError> {
    let scope = host.registry().scope();
    let _presentation =
        CodeMode::with_config(CodeConfig::default()).present_as(&scope, Mode::Code)?;
    let mut args = Object::new();
    args.insert("code", Value::from(program));
    args.insert("description", Value::from("Program from the command line"));
    let call =
        ToolCall::new(call_id, dsh_runtime::RUN_CODE, Value::Object(args)).with_agent(scope.id());
    Ok(host.registry().execute(call).await)
}

/// The `code` command: run the program given (or `-` for standard input), print the
/// content (or, with `json`, the result envelope). Exit status 0 on success, 1 when the
/// run failed, 2 when the program could not be read.
pub(crate) async fn command(host: &Host, program: &str, json: bool) -> ExitCode {
    let program = match read_program(program) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: cannot read the program from standard input: {e}");
            return ExitCode::from(2);
        }
    };
    let call_id = format!("code_{}", std::process::id());
    let result = match run(host, &call_id, &program).await {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&result).unwrap_or_default()
        );
    } else if result.is_success() {
        println!("{}", result.text());
    }
    match result.message() {
        None => ExitCode::SUCCESS,
        Some(message) => {
            match result.code_str() {
                Some(code) => eprintln!("error[{code}]: {message}"),
                None => eprintln!("error: {message}"),
            }
            ExitCode::FAILURE
        }
    }
}
