//! `bash` through a real registry and real processes: output, exit codes, timeouts and
//! cancellation killing the whole process group, caps, workdir, argument validation,
//! background jobs with the job tools, and the cards.

#![cfg(unix)]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use dsh_runtime::cards::{CallView, ResultSummary, ResultView, TerminalExit};
use dsh_runtime::jobs::JobRuntime;
use dsh_runtime::json::{self, Value};
use dsh_runtime::{
    ExecutionMode, RegistrationHandle, Registry, Tool, ToolCall, ToolContext, ToolResult,
    content::ContentBlock,
};
use dsh_tools::bash::{self, BashArgs, BashConfig, BashOutput, Foreground, Shell, ShellBash};
use tokio_util::sync::CancellationToken;

/// How long anything expected to happen soon may take before the test fails.
const LIVENESS: Duration = Duration::from_secs(20);

struct Host {
    registry: Registry,
    jobs: JobRuntime,
    _tools: Vec<RegistrationHandle>,
}

fn host_with(config: BashConfig) -> Host {
    let jobs = JobRuntime::new();
    let registry = Registry::builder().jobs(jobs.clone()).build();
    let mut tools = bash::register_with(&registry, config).unwrap();
    tools.extend(dsh_tools::jobs::register(&registry).unwrap());
    Host {
        registry,
        jobs,
        _tools: tools,
    }
}

fn host() -> Host {
    host_with(BashConfig::default())
}

impl Host {
    async fn call(&self, name: &str, args: serde_json::Value) -> ToolResult {
        self.registry
            .execute(ToolCall::new("call", name, args.to_string()))
            .await
    }

    async fn bash(&self, args: serde_json::Value) -> ToolResult {
        self.call("bash", args).await
    }

    /// Runs a foreground command that must succeed, and returns its value.
    async fn run(&self, args: serde_json::Value) -> (Foreground, ToolResult) {
        let result = self.bash(args).await;
        assert!(result.is_success(), "{result:?}");
        match output(&result) {
            BashOutput::Foreground(run) => (run, result),
            other => panic!("expected a foreground value, got {other:?}"),
        }
    }
}

fn output(result: &ToolResult) -> BashOutput {
    json::from_value(result.value().expect("a success has a value")).unwrap()
}

fn v(value: serde_json::Value) -> Value {
    json::from_serde(&value).unwrap()
}

/// Whether a process is gone: no such pid, or a zombie waiting to be reaped (it runs no
/// more; who reaps orphans depends on the machine's init).
fn process_gone(pid: &str) -> bool {
    let alive = std::process::Command::new("kill")
        .args(["-0", pid])
        .stderr(std::process::Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !alive {
        return true;
    }
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let after_name = stat.rsplit_once(')')?.1.trim_start().to_string();
            after_name.chars().next()
        })
        .is_some_and(|state| state == 'Z' || state == 'X')
}

async fn assert_gone(pid: &str) {
    let gone = tokio::time::timeout(LIVENESS, async {
        while !process_gone(pid) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    if gone.is_err() {
        let _ = std::process::Command::new("kill")
            .args(["-9", pid])
            .status();
        panic!("process {pid} is still running");
    }
}

async fn read_pid(path: &Path) -> String {
    tokio::time::timeout(LIVENESS, async {
        loop {
            if let Ok(text) = std::fs::read_to_string(path)
                && text.ends_with('\n')
            {
                return text.trim().to_string();
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the command writes its pid file")
}

// ---- foreground --------------------------------------------------------------------------

#[tokio::test]
async fn stdout_and_stderr_are_captured_separately() {
    let host = host();
    let (run, result) = host
        .run(serde_json::json!({
            "command": "echo out; echo err >&2",
            "description": "Print to both streams",
        }))
        .await;
    assert_eq!(run.exit_code, Some(0));
    assert_eq!(run.signal, None);
    assert!(!run.timed_out && !run.aborted);
    assert_eq!(run.timeout_ms, bash::DEFAULT_TIMEOUT_MS);
    assert_eq!(run.stdout.text, "out\n");
    assert_eq!(run.stderr.text, "err\n");
    assert!(!run.stdout.truncated && !run.stderr.truncated);
    assert_eq!(result.text(), "out\n[stderr]\nerr\n");
}

#[tokio::test]
async fn a_silent_command_says_so() {
    let host = host();
    let (run, result) = host
        .run(serde_json::json!({"command": "true", "description": "Nothing"}))
        .await;
    assert_eq!(run.exit_code, Some(0));
    assert_eq!(result.text(), "(no output)");
}

#[tokio::test]
async fn a_non_zero_exit_is_a_successful_call() {
    let host = host();
    let (run, result) = host
        .run(serde_json::json!({
            "command": "echo hi; echo bad >&2; exit 3",
            "description": "Fail on purpose",
        }))
        .await;
    assert_eq!(run.exit_code, Some(3));
    assert_eq!(result.text(), "hi\n[stderr]\nbad\n[exit code: 3]");
    // The value is the canonical JSON shape.
    let value = result.value().unwrap().to_string();
    assert_eq!(
        value,
        r#"{"kind":"foreground","exitCode":3,"timedOut":false,"aborted":false,"timeoutMs":120000,"stdout":{"text":"hi\n","truncated":false},"stderr":{"text":"bad\n","truncated":false}}"#
    );
}

#[tokio::test]
async fn a_signal_is_reported_instead_of_an_exit_code() {
    let host = host();
    let (run, result) = host
        .run(serde_json::json!({"command": "kill -TERM $$", "description": "Die"}))
        .await;
    assert_eq!(run.exit_code, None);
    assert_eq!(run.signal.as_deref(), Some("SIGTERM"));
    assert_eq!(result.text(), "(no output)\n[killed by signal: SIGTERM]");
}

#[tokio::test]
async fn the_timeout_kills_the_whole_process_group() {
    let host = host();
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("sleep.pid");
    let (run, result) = host
        .run(serde_json::json!({
            "command": format!("echo started; sleep 30 & echo $! > '{}'; wait", pid_file.display()),
            "description": "Hang",
            "timeoutMs": 500,
        }))
        .await;
    let sleeper = read_pid(&pid_file).await;
    assert!(run.timed_out);
    assert!(!run.aborted);
    assert_eq!(run.timeout_ms, 500);
    assert_eq!(run.exit_code, None);
    // The tree got SIGTERM first, which the shell does not survive.
    assert_eq!(run.signal.as_deref(), Some("SIGTERM"));
    assert_eq!(run.stdout.text, "started\n");
    assert_eq!(
        result.text(),
        "started\n[timed out after 500ms]\n[killed by signal: SIGTERM]"
    );
    assert_gone(&sleeper).await;
}

#[tokio::test]
async fn cancelling_the_call_kills_the_command_and_reports_aborted() {
    let host = host();
    let dir = tempfile::tempdir().unwrap();
    let shell_pid = dir.path().join("shell.pid");
    let sleep_pid = dir.path().join("sleep.pid");
    let token = CancellationToken::new();
    let call = ToolCall::new(
        "call",
        "bash",
        serde_json::json!({
            "command": format!(
                "sleep 30 & echo $! > '{}'; echo $$ > '{}'; wait",
                sleep_pid.display(),
                shell_pid.display()
            ),
            "description": "Hang until cancelled",
        })
        .to_string(),
    )
    .with_cancellation(token.clone());
    let registry = host.registry.clone();
    let running = tokio::spawn(async move { registry.execute(call).await });
    let shell = read_pid(&shell_pid).await;
    let sleeper = read_pid(&sleep_pid).await;
    token.cancel();
    let result = tokio::time::timeout(LIVENESS, running)
        .await
        .expect("the call returns after cancellation")
        .unwrap();
    assert_eq!(result.code_str(), Some("ABORTED"));
    assert_eq!(result.text(), "Error: tool call aborted");
    assert_gone(&shell).await;
    assert_gone(&sleeper).await;
}

#[tokio::test]
async fn a_call_cancelled_before_dispatch_runs_nothing() {
    let host = host();
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let token = CancellationToken::new();
    token.cancel();
    let result = host
        .registry
        .execute(
            ToolCall::new(
                "call",
                "bash",
                serde_json::json!({
                    "command": format!("touch '{}'", marker.display()),
                    "description": "Never",
                })
                .to_string(),
            )
            .with_cancellation(token),
        )
        .await;
    assert_eq!(result.code_str(), Some("ABORTED_BEFORE_DISPATCH"));
    assert!(!marker.exists());
}

#[tokio::test]
async fn output_over_the_cap_keeps_the_tail_and_spills_everything() {
    let spill = tempfile::tempdir().unwrap();
    let host = host_with(
        BashConfig::default()
            .with_max_output_bytes(100)
            .with_spill_dir(spill.path()),
    );
    let (run, result) = host
        .run(serde_json::json!({
            "command": "i=0; while [ $i -lt 200 ]; do echo line$i; i=$((i+1)); done; echo small >&2",
            "description": "Print a lot",
        }))
        .await;
    assert!(run.stdout.truncated);
    assert!(!run.stderr.truncated);
    assert_eq!(run.stderr.spill_path, None);
    // The result keeps the latest 100 bytes...
    assert_eq!(run.stdout.text.len(), 100);
    assert!(run.stdout.text.ends_with("line198\nline199\n"));
    // ...and the spill file has every byte, from the first.
    let path = run.stdout.spill_path.clone().expect("a spill file");
    assert!(Path::new(&path).starts_with(spill.path()), "{path}");
    let expected: String = (0..200).map(|i| format!("line{i}\n")).collect();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), expected);
    assert!(!run.stdout.spill_truncated);
    assert_eq!(
        result.text(),
        format!(
            "{}\n[output truncated; full output: {path}]\n[stderr]\nsmall\n",
            run.stdout.text
        )
    );
    let value = result.value().unwrap();
    assert_eq!(value["stdout"]["spillPath"].as_str(), Some(path.as_str()));
    assert!(value["stderr"].get("spillPath").is_none());
}

#[tokio::test]
async fn a_large_output_does_not_block_the_command() {
    // Far more than a pipe buffer on both streams: the command must still finish.
    let spill = tempfile::tempdir().unwrap();
    let host = host_with(
        BashConfig::default()
            .with_max_output_bytes(1000)
            .with_spill_dir(spill.path()),
    );
    let (run, _) = host
        .run(serde_json::json!({
            "command": "head -c 300000 /dev/zero | tr '\\0' a; head -c 300000 /dev/zero | tr '\\0' b >&2; echo done",
            "description": "Flood",
        }))
        .await;
    assert_eq!(run.exit_code, Some(0));
    assert!(run.stdout.truncated && run.stderr.truncated);
    assert!(run.stdout.text.ends_with("aaadone\n"));
    assert_eq!(run.stdout.text.len(), 1000);
    for (stream, len) in [(&run.stdout, 300_005), (&run.stderr, 300_000)] {
        let path = stream.spill_path.as_ref().expect("a spill file");
        assert_eq!(std::fs::metadata(path).unwrap().len(), len);
    }
}

#[tokio::test]
async fn commands_get_a_plain_terminal_environment() {
    let host = host();
    let (run, _) = host
        .run(serde_json::json!({
            "command": "echo \"$TERM $NO_COLOR $PAGER $GIT_PAGER $DSH_SHELL\"",
            "description": "Show the environment",
        }))
        .await;
    assert_eq!(run.stdout.text, "dumb 1 cat cat 1\n");
}

#[tokio::test]
async fn workdir_sets_the_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let canonical = dir.path().canonicalize().unwrap();

    let host = host();
    let (run, _) = host
        .run(serde_json::json!({
            "command": "pwd -P",
            "description": "Where am I",
            "workdir": dir.path().to_str().unwrap(),
        }))
        .await;
    assert_eq!(run.stdout.text.trim_end(), canonical.to_str().unwrap());

    // A relative workdir is resolved against the configured directory.
    let host = host_with(BashConfig::default().with_cwd(dir.path()));
    let (run, _) = host
        .run(serde_json::json!({"command": "pwd -P", "description": "Here", "workdir": "sub"}))
        .await;
    assert_eq!(
        run.stdout.text.trim_end(),
        canonical.join("sub").to_str().unwrap()
    );
    let (run, _) = host
        .run(serde_json::json!({"command": "pwd -P", "description": "Default"}))
        .await;
    assert_eq!(run.stdout.text.trim_end(), canonical.to_str().unwrap());

    let missing = host
        .bash(serde_json::json!({"command": "pwd", "description": "Nowhere", "workdir": "nope"}))
        .await;
    assert_eq!(missing.code_str(), Some("BASH_BAD_WORKDIR"));
    assert!(
        missing.message().unwrap().starts_with(&format!(
            "workdir {} is not usable: ",
            dir.path().join("nope").display()
        )),
        "{missing:?}"
    );
}

#[tokio::test]
async fn invalid_arguments_are_refused_with_the_reference_messages() {
    let host = host();
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let touch = format!("touch '{}'", marker.display());
    // Checks the schema does not express, in the reference's words and without a code.
    let cases = [
        (
            serde_json::json!({"command": "", "description": "Nothing"}),
            "invalid command: expected a non-empty string",
        ),
        (
            serde_json::json!({"command": " \n ", "description": "Blank"}),
            "invalid command: expected a non-empty string",
        ),
        (
            serde_json::json!({"command": touch, "description": "  "}),
            "invalid description: expected a non-empty string",
        ),
        (
            serde_json::json!({"command": touch, "description": "x", "timeoutMs": 0}),
            "invalid timeoutMs: expected a positive number, got 0",
        ),
        (
            serde_json::json!({"command": touch, "description": "x", "timeoutMs": -2.5}),
            "invalid timeoutMs: expected a positive number, got -2.5",
        ),
    ];
    for (args, message) in cases {
        let result = host.bash(args).await;
        assert!(result.is_error());
        assert_eq!(result.code_str(), None, "{message}");
        assert_eq!(result.message(), Some(message));
    }
    let missing = host.bash(serde_json::json!({"command": touch})).await;
    assert_eq!(missing.code_str(), Some("INVALID_ARGS"));
    assert_eq!(
        missing.message(),
        Some(r#"invalid arguments: missing required property "description""#)
    );
    assert!(!marker.exists(), "an invalid call ran its command");
}

#[tokio::test]
async fn error_messages_repeat_only_the_start_of_huge_arguments() {
    let host = host();
    // Long, and still exactly -1.
    let literal = format!("-1.{}", "0".repeat(100_000));
    let result = host
        .registry
        .execute(ToolCall::new(
            "call",
            "bash",
            format!(r#"{{"command":"true","description":"x","timeoutMs":{literal}}}"#),
        ))
        .await;
    // The number as parsed, not the text as sent.
    assert_eq!(
        result.message(),
        Some("invalid timeoutMs: expected a positive number, got -1")
    );
    let workdir = "w".repeat(100_000);
    let result = host
        .bash(serde_json::json!({"command": "true", "description": "x", "workdir": workdir}))
        .await;
    assert_eq!(result.code_str(), Some("BASH_BAD_WORKDIR"));
    assert!(result.message().unwrap().len() < 1000);
}

#[tokio::test]
async fn a_timeout_above_the_cap_is_cut_to_it() {
    let host = host();
    let (run, _) = host
        .run(serde_json::json!({"command": "true", "description": "x", "timeoutMs": 700_000}))
        .await;
    assert_eq!(run.timeout_ms, bash::MAX_TIMEOUT_MS);
    let (run, _) = host
        .run(serde_json::json!({"command": "true", "description": "x", "timeoutMs": 1.5}))
        .await;
    assert_eq!(run.timeout_ms, 2);
}

// ---- background ------------------------------------------------------------------------

#[tokio::test]
async fn a_background_job_runs_to_completion_and_is_read_with_job_output() {
    let host = host();
    let result = host
        .bash(serde_json::json!({
            "command": "echo from-the-job; exit 4",
            "description": "Background echo",
            "run_in_background": true,
        }))
        .await;
    assert!(result.is_success(), "{result:?}");
    assert_eq!(
        result.value().unwrap().to_string(),
        r#"{"kind":"background","jobId":"bash-1"}"#
    );
    assert_eq!(result.text(), "started background job bash-1");

    let out = host
        .call(
            "job_output",
            serde_json::json!({"job_id": "bash-1", "wait": true, "timeout_ms": 20_000}),
        )
        .await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(
        out.text(),
        "from-the-job\n[status: completed, exit code: 4]"
    );
    let value = out.value().unwrap();
    assert_eq!(value["text"].as_str(), Some("from-the-job\n"));
    // The label is the command; the times are milliseconds since the epoch.
    assert_eq!(
        value["job"]["label"].as_str(),
        Some("echo from-the-job; exit 4")
    );
    let (started, finished) = (
        value["job"]["startedAt"].as_u64().unwrap(),
        value["job"]["finishedAt"].as_u64().unwrap(),
    );
    assert!(started > 1_600_000_000_000 && finished >= started);

    let kill = host
        .call("job_kill", serde_json::json!({"job_id": "bash-1"}))
        .await;
    assert!(kill.is_success(), "{kill:?}");
    assert_eq!(
        kill.value().unwrap()["outcome"].as_str(),
        Some("already-finished")
    );
    assert_eq!(
        kill.text(),
        "job bash-1 had already finished [status: completed, exit code: 4]"
    );
}

#[tokio::test]
async fn job_kill_stops_a_running_job_and_its_children() {
    let host = host();
    let result = host
        .bash(serde_json::json!({
            "command": "sleep 30 & echo $!; wait",
            "description": "Sleep in the background",
            "run_in_background": true,
        }))
        .await;
    assert!(result.is_success(), "{result:?}");
    let BashOutput::Background(job) = output(&result) else {
        panic!("expected a background value");
    };

    // The first read that has the pid.
    let sleeper = tokio::time::timeout(LIVENESS, async {
        loop {
            let out = host
                .call("job_output", serde_json::json!({"job_id": job.job_id}))
                .await;
            assert!(out.is_success(), "{out:?}");
            let text = out.value().unwrap()["text"].as_str().unwrap().to_string();
            if !text.is_empty() {
                assert_eq!(
                    out.value().unwrap()["job"]["status"].as_str(),
                    Some("running")
                );
                return text.trim().to_string();
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the job prints its child's pid");
    assert!(!process_gone(&sleeper));

    let kill = host
        .call(
            "job_kill",
            serde_json::json!({"job_id": job.job_id, "reason": "test"}),
        )
        .await;
    assert!(kill.is_success(), "{kill:?}");
    assert_eq!(
        kill.value().unwrap()["outcome"].as_str(),
        Some("cancellation-requested")
    );
    assert_eq!(
        kill.text(),
        format!("requested cancellation of job {}", job.job_id)
    );

    let done = host
        .call(
            "job_output",
            serde_json::json!({"job_id": job.job_id, "wait": true, "timeout_ms": 20_000}),
        )
        .await;
    assert_eq!(
        done.text(),
        "(no new output)\n[status: killed, signal: SIGTERM]"
    );
    // Settled only once the whole tree is gone.
    assert!(process_gone(&sleeper), "{sleeper} outlived the job");
}

#[tokio::test]
async fn a_cancelled_background_start_fails_and_starts_nothing() {
    // The pipeline refuses a pre-cancelled call before the body; the body refuses too,
    // for direct callers: no job exists whose id it could return.
    let jobs = JobRuntime::new();
    let tool = ShellBash(Arc::new(Shell::new(BashConfig::default())));
    let cancel = CancellationToken::new();
    cancel.cancel();
    let detached = ToolContext::detached("bash");
    let cx = ToolContext::new(detached.execution().clone(), cancel, Arc::default())
        .with_jobs(jobs.clone());
    let args = BashArgs {
        command: "true".into(),
        description: "never".into(),
        timeout_ms: None,
        workdir: None,
        run_in_background: true,
    };
    let err = tool.call(args, cx).await.unwrap_err();
    assert_eq!(err.code_str(), Some("ABORTED_BEFORE_DISPATCH"));
    assert!(jobs.list(None).is_empty());
}

#[tokio::test]
async fn background_jobs_can_be_disabled() {
    let host = host_with(BashConfig::default().with_background(false));
    let result = host
        .bash(serde_json::json!({
            "command": "true",
            "description": "x",
            "run_in_background": true,
        }))
        .await;
    assert_eq!(result.code_str(), Some("BASH_BACKGROUND_DISABLED"));
    assert!(host.jobs.list(None).is_empty());
}

// ---- definition and cards ----------------------------------------------------------------

#[test]
fn the_definition_is_what_the_model_sees() {
    let host = host();
    let tool = host.registry.view().get("bash").unwrap();
    let def = tool.definition();
    assert!(def.annotations.destructive && def.annotations.open_world);
    assert!(!def.annotations.read_only);
    assert_eq!(def.timeout_ms, None, "bash enforces its own timeout");
    // The reference's parameter names and types (the root's openness is the registry's), and
    // the published serde default of `run_in_background`.
    let parameters = json::parse(&def.parameters.to_json_string()).unwrap();
    assert_eq!(
        parameters["properties"].to_string(),
        concat!(
            r#"{"command":{"type":"string","description":"The command line, run with `bash -c`."},"#,
            r#""description":{"type":"string","description":"What the command does, in a few words in the active voice (shown to the user), e.g.\n\"Show working tree status\" for `git status`."},"#,
            r#""timeoutMs":{"type":"number","description":"Stop the command after this many milliseconds (default 120000, at most 600000).\nNot used in the background."},"#,
            r#""workdir":{"type":"string","description":"The directory to run in, instead of the workspace; a relative path starts from\nthe workspace."},"#,
            r#""run_in_background":{"type":"boolean","description":"Start the command as a background job and answer with its id at once; read what it\nprints with `job_output`, stop it with `job_kill`. No timeout applies.","default":false}}"#
        )
    );
    assert_eq!(
        parameters["required"].to_string(),
        r#"["command","description"]"#
    );
    let call = ToolCall::new("c", "bash", r#"{"command":"ls","description":"List"}"#);
    assert_eq!(
        host.registry.execution_mode(&call),
        ExecutionMode::Exclusive
    );
}

#[test]
fn the_call_card_is_a_terminal() {
    let host = host();
    let tool = host.registry.view().get("bash").unwrap();
    let card = tool.erased().present_call(&v(serde_json::json!({
        "command": "cargo test",
        "description": "Run the tests",
        "workdir": "crates/core",
    })));
    assert_eq!(
        card,
        Some(CallView::Terminal {
            title: "cargo test".into(),
            description: Some("Run the tests".into()),
            cwd: Some("crates/core".into()),
        })
    );
    // A background start is not a terminal session: the generic card.
    let card = tool.erased().present_call(&v(serde_json::json!({
        "command": "npm run dev",
        "description": "Start the dev server",
        "run_in_background": true,
    })));
    assert_eq!(
        serde_json::to_value(&card).unwrap(),
        serde_json::json!({
            "card": "generic",
            "title": "npm run dev",
            "kind": "execute",
            "rawInput": "npm run dev",
            "content": [{"type": "text", "text": "Start the dev server"}],
        })
    );
    // Stale or malformed logged arguments fall back to the generic card.
    assert_eq!(
        tool.erased()
            .present_call(&v(serde_json::json!({"cmd": "ls"}))),
        None
    );
}

#[tokio::test]
async fn the_result_card_carries_the_exit_marker_as_exit_metadata() {
    let host = host();
    let tool = host.registry.view().get("bash").unwrap();
    let card_for = |args: serde_json::Value, result: &ToolResult| {
        tool.erased().present_result(&v(args), &result.summary())
    };

    let args = serde_json::json!({"command": "echo hi; exit 3", "description": "Fail"});
    let failed = host.bash(args.clone()).await;
    assert_eq!(
        card_for(args, &failed),
        Some(ResultView::terminal("hi", Some(TerminalExit::Code(3))))
    );

    let args = serde_json::json!({"command": "echo ok", "description": "Pass"});
    let passed = host.bash(args.clone()).await;
    assert_eq!(
        card_for(args, &passed),
        Some(ResultView::terminal("ok\n", Some(TerminalExit::Code(0))))
    );

    let args = serde_json::json!({"command": "sleep 30", "description": "Hang", "timeoutMs": 100});
    let timed_out = host.bash(args.clone()).await;
    assert_eq!(
        card_for(args, &timed_out),
        Some(ResultView::terminal(
            "(no output)\n[timed out after 100ms]",
            Some(TerminalExit::Signal("SIGTERM".into()))
        ))
    );

    // Errors and background starts use the generic card.
    let args =
        serde_json::json!({"command": "true", "description": "x", "workdir": "/nonexistent/dir"});
    let error = host.bash(args.clone()).await;
    assert!(error.is_error());
    assert_eq!(card_for(args, &error), None);
    let args =
        serde_json::json!({"command": "true", "description": "x", "run_in_background": true});
    let started = host.bash(args.clone()).await;
    assert!(started.is_success());
    assert_eq!(card_for(args, &started), None);

    // A replayed summary is enough: the card needs no value.
    let replayed = ResultSummary {
        content: vec![ContentBlock::text("boom\n[killed by signal: SIGSEGV]")],
        is_error: false,
        meta: None,
    };
    assert_eq!(
        tool.erased().present_result(
            &v(serde_json::json!({"command": "./crash", "description": "Crash"})),
            &replayed
        ),
        Some(ResultView::terminal(
            "boom",
            Some(TerminalExit::Signal("SIGSEGV".into()))
        ))
    );
}
