//! `job_output`, `job_list` and `job_kill` through a registry, over jobs with controlled
//! producers (no processes): consuming reads, waits, the owner fence, errors, rendering.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use dsh_runtime::jobs::{
    JobContext, JobRuntime, JobSettlement, JobSpec, JobStatus, OwnerId, RunningJob,
};
use dsh_runtime::{ExecutionMode, RegistrationHandle, Registry, ToolCall, ToolResult};
use dsh_tools::jobs::{self as job_tools, Jobs};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

const LIVENESS: Duration = Duration::from_secs(20);

fn call(name: &str, args: serde_json::Value) -> ToolCall {
    ToolCall::new("call", name, args.to_string())
}

async fn run(registry: &Registry, name: &str, args: serde_json::Value) -> ToolResult {
    registry.execute(call(name, args)).await
}

/// A job that writes `first`, then waits to be released (writing `then` and completing
/// with `detail`) or stopped (settling `killed`).
struct Gate {
    id: String,
    release: oneshot::Sender<()>,
}

fn start_gated(jobs: &JobRuntime, spec: JobSpec, first: &str, then: &str) -> Gate {
    let (release, released) = oneshot::channel::<()>();
    let (first, then) = (first.to_string(), then.to_string());
    let id = jobs
        .start(spec, move |ctx: JobContext| {
            let out = ctx.output().clone();
            let stop = ctx.stop_token().clone();
            out.write_str(&first);
            Ok::<_, Infallible>(RunningJob::new(async move {
                tokio::select! {
                    _ = released => {
                        out.write_str(&then);
                        JobSettlement::completed().with_detail("exit code: 0")
                    }
                    () = stop.cancelled() => JobSettlement::killed().with_detail("signal: SIGKILL"),
                }
            }))
        })
        .unwrap();
    Gate {
        id: id.to_string(),
        release,
    }
}

fn setup() -> (Registry, JobRuntime, Vec<RegistrationHandle>) {
    let jobs = JobRuntime::new();
    let registry = Registry::builder().jobs(jobs.clone()).build();
    let tools = job_tools::register(&registry).unwrap();
    (registry, jobs, tools)
}

#[tokio::test]
async fn reads_consume_then_the_final_output_repeats() {
    let (registry, jobs, _tools) = setup();
    let gate = start_gated(&jobs, JobSpec::new("bash", "gated"), "one\n", "two\n");

    let first = run(
        &registry,
        "job_output",
        serde_json::json!({"job_id": gate.id}),
    )
    .await;
    assert!(first.is_success(), "{first:?}");
    assert_eq!(first.text(), "one\n[status: running]");
    let again = run(
        &registry,
        "job_output",
        serde_json::json!({"job_id": gate.id}),
    )
    .await;
    assert_eq!(again.text(), "(no new output)\n[status: running]");
    assert_eq!(again.value().unwrap()["text"].as_str(), Some(""));

    gate.release.send(()).unwrap();
    let done = run(
        &registry,
        "job_output",
        serde_json::json!({"job_id": gate.id, "wait": true, "timeout_ms": 20_000}),
    )
    .await;
    assert_eq!(done.text(), "two\n[status: completed, exit code: 0]");
    let repeat = run(
        &registry,
        "job_output",
        serde_json::json!({"job_id": gate.id}),
    )
    .await;
    assert_eq!(repeat.text(), done.text());
}

#[tokio::test]
async fn a_wait_that_times_out_reports_the_running_job() {
    let (registry, jobs, _tools) = setup();
    let gate = start_gated(&jobs, JobSpec::new("bash", "slow"), "", "");
    let out = run(
        &registry,
        "job_output",
        serde_json::json!({"job_id": gate.id, "wait": true, "timeout_ms": 20}),
    )
    .await;
    assert!(out.is_success(), "{out:?}");
    assert_eq!(out.text(), "(no new output)\n[status: running]");
    assert_eq!(
        out.value().unwrap()["job"]["status"].as_str(),
        Some("running")
    );
    drop(gate);
}

#[tokio::test]
async fn cancelling_a_wait_consumes_no_output() {
    let (registry, jobs, _tools) = setup();
    let gate = start_gated(&jobs, JobSpec::new("bash", "gated"), "unread\n", "");
    let token = CancellationToken::new();
    let waiting = {
        let registry = registry.clone();
        let call = call(
            "job_output",
            serde_json::json!({"job_id": gate.id, "wait": true, "timeout_ms": 600_000}),
        )
        .with_cancellation(token.clone());
        tokio::spawn(async move { registry.execute(call).await })
    };
    // On this single-threaded runtime, a few yields let the call run until it blocks in
    // its wait; then cancel it.
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    token.cancel();
    let result = tokio::time::timeout(LIVENESS, waiting)
        .await
        .expect("a cancelled wait returns")
        .unwrap();
    assert_eq!(result.code_str(), Some("ABORTED"), "{result:?}");
    let out = run(
        &registry,
        "job_output",
        serde_json::json!({"job_id": gate.id}),
    )
    .await;
    assert_eq!(out.text(), "unread\n[status: running]");
}

#[tokio::test]
async fn job_list_shows_visible_jobs_oldest_first() {
    let (registry, jobs, _tools) = setup();
    let empty = run(&registry, "job_list", serde_json::json!({})).await;
    assert_eq!(empty.text(), "(no background jobs)");
    assert_eq!(empty.value().unwrap().to_string(), "[]");

    let a = start_gated(&jobs, JobSpec::new("bash", "build"), "", "");
    let b = start_gated(&jobs, JobSpec::new("bash", "serve"), "", "");
    a.release.send(()).unwrap();
    jobs.wait(&a.id, LIVENESS, None).await.unwrap();
    // Owned by someone: not visible to the unowned tools.
    let owner = jobs.owner();
    let _hidden = start_gated(
        &jobs,
        JobSpec::new("bash", "private").owned_by(owner.id()),
        "",
        "",
    );

    let list = run(&registry, "job_list", serde_json::json!({})).await;
    assert!(list.is_success(), "{list:?}");
    assert_eq!(
        list.text(),
        "bash-1 [bash] completed \u{2014} build\nbash-2 [bash] running \u{2014} serve"
    );
    assert_eq!(
        strip_times(&list.value().unwrap().to_string()),
        r#"[{"id":"bash-1","kind":"bash","label":"build","status":"completed","detail":"exit code: 0"},{"id":"bash-2","kind":"bash","label":"serve","status":"running"}]"#
    );
    drop(b);
}

#[tokio::test]
async fn job_kill_requests_a_stop_once() {
    let (registry, jobs, _tools) = setup();
    let gate = start_gated(&jobs, JobSpec::new("bash", "gated"), "", "");
    let kill = run(
        &registry,
        "job_kill",
        serde_json::json!({"job_id": gate.id, "reason": "no longer needed"}),
    )
    .await;
    assert!(kill.is_success(), "{kill:?}");
    assert_eq!(
        kill.value().unwrap()["outcome"].as_str(),
        Some("cancellation-requested")
    );
    assert_eq!(kill.text(), "requested cancellation of job bash-1");
    let job = jobs.wait(&gate.id, LIVENESS, None).await.unwrap();
    assert_eq!(job.status, JobStatus::Killed);
    assert_eq!(job.stop_reason.as_deref(), Some("no longer needed"));

    let again = run(
        &registry,
        "job_kill",
        serde_json::json!({"job_id": gate.id}),
    )
    .await;
    assert_eq!(
        strip_times(&again.value().unwrap().to_string()),
        r#"{"outcome":"already-finished","job":{"id":"bash-1","kind":"bash","label":"gated","status":"killed","detail":"signal: SIGKILL"}}"#
    );
    assert_eq!(
        again.text(),
        "job bash-1 had already finished [status: killed, signal: SIGKILL]"
    );
}

#[tokio::test]
async fn unknown_and_foreign_ids_are_not_found() {
    let (registry, jobs, _tools) = setup();
    let owner = jobs.owner();
    let foreign = start_gated(
        &jobs,
        JobSpec::new("bash", "private").owned_by(owner.id()),
        "secret\n",
        "",
    );
    for id in ["bash-99", foreign.id.as_str()] {
        for (name, args) in [
            ("job_output", serde_json::json!({"job_id": id})),
            (
                "job_output",
                serde_json::json!({"job_id": id, "wait": true}),
            ),
            ("job_kill", serde_json::json!({"job_id": id})),
        ] {
            let result = run(&registry, name, args).await;
            assert_eq!(result.code_str(), Some("JOB_NOT_FOUND"), "{name} {id}");
            assert_eq!(result.text(), format!("Error: unknown job {id}"));
        }
    }
    // The foreign job was neither read nor stopped.
    let seen = jobs.read(&foreign.id, Some(owner.id())).unwrap();
    assert_eq!(seen.text, "secret\n");
    assert_eq!(seen.job.status, JobStatus::Running);
}

#[tokio::test]
async fn tools_for_an_owner_see_its_jobs() {
    let jobs = JobRuntime::new();
    let registry = Registry::builder().jobs(jobs.clone()).build();
    let owner = jobs.owner();
    let owner_id: OwnerId = owner.id();
    let _tools = registry
        .register_toolbox(Arc::new(Jobs::for_owner(owner_id)))
        .unwrap();
    let mine = start_gated(
        &jobs,
        JobSpec::new("bash", "mine").owned_by(owner_id),
        "hi\n",
        "",
    );
    let out = run(
        &registry,
        "job_output",
        serde_json::json!({"job_id": mine.id}),
    )
    .await;
    assert_eq!(out.text(), "hi\n[status: running]");
    let other = jobs.owner();
    // The other owner numbers its own jobs: its second is `bash-2`, which this owner lacks.
    let _first = start_gated(
        &jobs,
        JobSpec::new("bash", "theirs").owned_by(other.id()),
        "",
        "",
    );
    let theirs = start_gated(
        &jobs,
        JobSpec::new("bash", "theirs too").owned_by(other.id()),
        "",
        "",
    );
    assert_eq!(theirs.id.as_str(), "bash-2");
    let list = run(&registry, "job_list", serde_json::json!({})).await;
    assert_eq!(list.text(), "bash-1 [bash] running \u{2014} mine");
    let kill = run(
        &registry,
        "job_kill",
        serde_json::json!({"job_id": theirs.id}),
    )
    .await;
    assert_eq!(kill.code_str(), Some("JOB_NOT_FOUND"));
}

#[tokio::test]
async fn invalid_arguments_are_refused() {
    let (registry, _jobs, _tools) = setup();
    // Checks the schema cannot express: the reference's messages, without a code.
    // A huge id is not echoed whole.
    let huge = run(
        &registry,
        "job_kill",
        serde_json::json!({"job_id": "x".repeat(100_000)}),
    )
    .await;
    assert_eq!(huge.code_str(), Some("JOB_NOT_FOUND"));
    assert!(huge.text().len() < 200, "{}", huge.text());
    let cases = [
        (
            "job_output",
            serde_json::json!({"job_id": "bash-1", "wait": true, "timeout_ms": 0}),
            "invalid wait timeout: expected a positive number of milliseconds, got 0",
        ),
        (
            "job_output",
            serde_json::json!({"job_id": ""}),
            r#"invalid job_id: expected a non-empty string, got """#,
        ),
        (
            "job_kill",
            serde_json::json!({"job_id": "", "reason": "x"}),
            r#"invalid job_id: expected a non-empty string, got """#,
        ),
    ];
    for (name, args, message) in cases {
        let result = run(&registry, name, args).await;
        assert!(result.is_error(), "{name}");
        assert_eq!(result.code_str(), None, "{name}");
        assert_eq!(result.message(), Some(message), "{name}");
    }
    let cases = [
        (
            "job_output",
            serde_json::json!({}),
            r#"invalid arguments: missing required property "job_id""#,
        ),
        (
            "job_kill",
            serde_json::json!({"job_id": 7}),
            r#"invalid arguments: "job_id" must be a string"#,
        ),
    ];
    for (name, args, message) in cases {
        let result = run(&registry, name, args).await;
        assert_eq!(result.code_str(), Some("INVALID_ARGS"), "{name}");
        assert_eq!(result.message(), Some(message), "{name}");
    }
}

#[test]
fn reads_run_in_parallel_and_kills_alone() {
    let (registry, _jobs, _tools) = setup();
    let names: Vec<String> = registry
        .view()
        .names()
        .iter()
        .map(|n| n.to_string())
        .collect();
    assert_eq!(names, ["job_output", "job_list", "job_kill"]);
    let mode = |name: &str, args: serde_json::Value| registry.execution_mode(&call(name, args));
    assert_eq!(
        mode("job_output", serde_json::json!({"job_id": "bash-1"})),
        ExecutionMode::Parallel
    );
    assert_eq!(
        mode("job_list", serde_json::json!({})),
        ExecutionMode::Parallel
    );
    assert_eq!(
        mode("job_kill", serde_json::json!({"job_id": "bash-1"})),
        ExecutionMode::Exclusive
    );
    let kill = registry.view().get("job_kill").unwrap();
    assert!(kill.definition().annotations.destructive);
    let list = registry.view().get("job_list").unwrap();
    assert!(list.definition().annotations.read_only);
}

/// `json` without its `startedAt`/`finishedAt` members (clock times), which must be
/// integers where present.
fn strip_times(json: &str) -> String {
    let mut out = json.to_string();
    for key in [",\"startedAt\":", ",\"finishedAt\":"] {
        while let Some(at) = out.find(key) {
            let digits = out[at + key.len()..]
                .bytes()
                .take_while(u8::is_ascii_digit)
                .count();
            assert!(digits > 0, "{key} is not an integer in {json}");
            out.replace_range(at..at + key.len() + digits, "");
        }
    }
    out
}

#[tokio::test]
async fn a_registry_without_a_job_runtime_says_so() {
    let registry = Registry::new();
    let _tools = job_tools::register(&registry).unwrap();
    for (name, args) in [
        ("job_list", serde_json::json!({})),
        ("job_output", serde_json::json!({"job_id": "bash-1"})),
        ("job_kill", serde_json::json!({"job_id": "bash-1"})),
    ] {
        let r = run(&registry, name, args).await;
        assert_eq!(r.code_str(), Some("JOBS_UNAVAILABLE"), "{name}: {r:?}");
        assert_eq!(
            r.text(),
            format!(
                "Error: tool \"{name}\" cannot start background work: the registry has no job runtime (build it with `Registry::builder().jobs(JobRuntime::new())`)"
            ),
            "{name}"
        );
    }
}
