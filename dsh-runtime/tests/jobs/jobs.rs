//! The background job runtime, with controllable fake producers (process jobs are tested in `dsh-tools`).
//!
//! Durations here only bound liveness (a broken runtime fails instead of hanging); no
//! test asserts how long anything took.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use dsh_runtime::jobs::{
    DEFAULT_OUTPUT_LIMIT_BYTES, JobContext, JobError, JobId, JobRuntime, JobSettlement, JobSpec,
    JobStatus, KillOutcome, OutputSink, OwnerId, RunningJob,
};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// Long enough that only a hang exceeds it.
const LIVENESS: Duration = Duration::from_secs(30);

/// What the test holds of a fake job.
struct Fake {
    id: JobId,
    settle: oneshot::Sender<JobSettlement>,
    output: OutputSink,
    stop: CancellationToken,
}

/// Starts a job that settles when the test says so. If `stoppable`, a stop request
/// settles it `killed` with detail `stopped`.
fn start_fake(jobs: &JobRuntime, spec: JobSpec, stoppable: bool) -> Fake {
    let (settle, settled) = oneshot::channel::<JobSettlement>();
    let mut handles = None;
    let id = jobs
        .start(spec, |ctx: JobContext| {
            let stop = ctx.stop_token().clone();
            handles = Some((ctx.output().clone(), stop.clone()));
            Ok::<_, Infallible>(RunningJob::new(async move {
                let stopped = async {
                    if stoppable {
                        stop.cancelled().await
                    } else {
                        std::future::pending().await
                    }
                };
                tokio::select! {
                    settlement = settled => settlement
                        .unwrap_or_else(|_| JobSettlement::failed().with_detail("test dropped")),
                    () = stopped => JobSettlement::killed().with_detail("stopped"),
                }
            }))
        })
        .expect("a fake job starts");
    let (output, stop) = handles.expect("the producer ran");
    Fake {
        id,
        settle,
        output,
        stop,
    }
}

async fn settled(
    jobs: &JobRuntime,
    id: &JobId,
    caller: Option<OwnerId>,
) -> dsh_runtime::jobs::JobSnapshot {
    let job = jobs
        .wait(id, LIVENESS, caller)
        .await
        .expect("job is visible");
    assert!(job.status.is_terminal(), "job did not settle: {job:?}");
    job
}

/// Reads until the accumulated output contains `needle`, returning it.
#[allow(dead_code)]
async fn read_until(
    jobs: &JobRuntime,
    id: &JobId,
    caller: Option<OwnerId>,
    needle: &str,
) -> String {
    let mut seen = String::new();
    tokio::time::timeout(LIVENESS, async {
        loop {
            let out = jobs.read(id, caller).expect("job is visible");
            seen.push_str(&out.text);
            if seen.contains(needle) {
                return;
            }
            assert!(
                !out.job.status.is_terminal(),
                "job settled before printing {needle:?}: {seen:?}"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no {needle:?} in output: {seen:?}"));
    seen
}

// ---- ids and starting -------------------------------------------------------------------

#[tokio::test]
async fn ids_count_per_kind_from_one() {
    let jobs = JobRuntime::new();
    let a = start_fake(&jobs, JobSpec::new("bash", "a"), true);
    let b = start_fake(&jobs, JobSpec::new("bash", "b"), true);
    let c = start_fake(&jobs, JobSpec::new("fetch", "c"), true);
    assert_eq!(a.id, "bash-1");
    assert_eq!(b.id, "bash-2");
    assert_eq!(c.id, "fetch-1");
    let listed: Vec<_> = jobs.list(None).into_iter().map(|job| job.id).collect();
    assert_eq!(listed, [a.id, b.id, c.id]);
    jobs.shutdown().await;
}

#[tokio::test]
async fn the_producer_sees_its_id_and_limit() {
    let jobs = JobRuntime::new();
    let mut seen = None;
    jobs.start(
        JobSpec::new("k", "l").with_output_limit(7),
        |ctx: JobContext| {
            seen = Some((ctx.id().clone(), ctx.output().limit()));
            Ok::<_, Infallible>(RunningJob::new(async { JobSettlement::completed() }))
        },
    )
    .unwrap();
    assert_eq!(seen, Some((JobId::clone(&jobs.list(None)[0].id), 7)));
    let mut limit = None;
    jobs.start(JobSpec::new("k", "l"), |ctx: JobContext| {
        limit = Some(ctx.output().limit());
        Ok::<_, Infallible>(RunningJob::new(async { JobSettlement::completed() }))
    })
    .unwrap();
    assert_eq!(limit, Some(DEFAULT_OUTPUT_LIMIT_BYTES));
}

#[tokio::test]
async fn a_failing_producer_registers_nothing() {
    let jobs = JobRuntime::new();
    let err = jobs
        .start(JobSpec::new("bash", "x"), |_: JobContext| {
            Err::<RunningJob, _>(std::io::Error::other("no shell"))
        })
        .unwrap_err();
    assert_eq!(
        err,
        JobError::Producer {
            kind: "bash".into(),
            message: "no shell".into()
        }
    );
    assert_eq!(err.to_string(), "failed to start bash job: no shell");

    let err = jobs
        .start(
            JobSpec::new("bash", "x"),
            |_: JobContext| -> Result<RunningJob, Infallible> { panic!("producer blew up") },
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "failed to start bash job: producer panicked: producer blew up"
    );
    assert!(jobs.list(None).is_empty());
    assert!(matches!(
        jobs.read("bash-1", None),
        Err(JobError::NotFound { .. })
    ));
    // Numbers are not reused.
    let next = start_fake(&jobs, JobSpec::new("bash", "y"), true);
    assert_eq!(next.id, "bash-3");
}

#[tokio::test]
async fn an_empty_kind_is_refused() {
    let jobs = JobRuntime::new();
    let ran = AtomicBool::new(false);
    let err = jobs
        .start(JobSpec::new("", "x"), |_: JobContext| {
            ran.store(true, Ordering::SeqCst);
            Ok::<_, Infallible>(RunningJob::new(async { JobSettlement::completed() }))
        })
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid job spec: kind must be a non-empty string"
    );
    assert!(!ran.load(Ordering::SeqCst));
}

#[test]
fn starting_outside_tokio_fails_before_the_producer() {
    let jobs = JobRuntime::new();
    let ran = AtomicBool::new(false);
    let err = jobs
        .start(JobSpec::new("k", "x"), |_: JobContext| {
            ran.store(true, Ordering::SeqCst);
            Ok::<_, Infallible>(RunningJob::new(async { JobSettlement::completed() }))
        })
        .unwrap_err();
    assert_eq!(err, JobError::NoTokioRuntime);
    assert!(!ran.load(Ordering::SeqCst));
}

// ---- lifecycle ------------------------------------------------------------------------

#[tokio::test]
async fn kill_marks_stopping_and_the_settlement_decides() {
    let jobs = JobRuntime::new();
    // This job ignores its stop token, so it stays `stopping` until the test settles it.
    let fake = start_fake(&jobs, JobSpec::new("w", "work"), false);
    assert_eq!(
        jobs.snapshot(&fake.id, None).unwrap().status,
        JobStatus::Running
    );

    assert_eq!(
        jobs.kill(&fake.id, Some("enough"), None).unwrap(),
        KillOutcome::Requested
    );
    assert!(fake.stop.is_cancelled());
    let job = jobs.snapshot(&fake.id, None).unwrap();
    assert_eq!(job.status, JobStatus::Stopping);
    assert_eq!(job.stop_reason.as_deref(), Some("enough"));
    // A second kill while stopping is still "requested".
    assert_eq!(
        jobs.kill(&fake.id, None, None).unwrap(),
        KillOutcome::Requested
    );

    // It finished on its own after all: completed wins, not the kill.
    fake.settle
        .send(JobSettlement::completed().with_detail("exit code: 0"))
        .unwrap();
    let job = settled(&jobs, &fake.id, None).await;
    assert_eq!(job.status, JobStatus::Completed);
    assert_eq!(job.detail.as_deref(), Some("exit code: 0"));
}

#[tokio::test]
async fn the_first_settlement_is_final() {
    let jobs = JobRuntime::new();
    let owner = jobs.owner();
    let fake = start_fake(&jobs, JobSpec::new("w", "work").owned_by(owner.id()), true);
    fake.output.write_str("tail");
    fake.settle
        .send(JobSettlement::failed().with_detail("boom"))
        .unwrap();
    let first = settled(&jobs, &fake.id, Some(owner.id())).await;
    assert_eq!(first.status, JobStatus::Failed);

    // Nothing afterwards changes it: a kill, closing the owner, shutting down.
    assert_eq!(
        jobs.kill(&fake.id, Some("late"), Some(owner.id())).unwrap(),
        KillOutcome::AlreadyFinished
    );
    let id = owner.id();
    owner.close().await;
    jobs.shutdown().await;
    let after = jobs.snapshot(&fake.id, Some(id)).unwrap();
    assert_eq!(after, first);
    assert_eq!(after.stop_reason, None);
    assert_eq!(jobs.read(&fake.id, Some(id)).unwrap().text, "tail");
}

#[tokio::test]
async fn a_panicking_job_settles_failed() {
    let jobs = JobRuntime::new();
    let id = jobs
        .start(JobSpec::new("p", "panics"), |_: JobContext| {
            Ok::<_, Infallible>(RunningJob::new(async {
                tokio::task::yield_now().await;
                panic!("job exploded")
            }))
        })
        .unwrap();
    let job = settled(&jobs, &id, None).await;
    assert_eq!(job.status, JobStatus::Failed);
    assert_eq!(job.detail.as_deref(), Some("job panicked: job exploded"));
}

#[tokio::test]
async fn a_failing_cancel_leaves_the_job_running() {
    let jobs = JobRuntime::new();
    let calls = Arc::new(AtomicUsize::new(0));
    let hook_calls = calls.clone();
    let (_keep, never) = oneshot::channel::<()>();
    let id = jobs
        .start(JobSpec::new("c", "stubborn"), move |ctx: JobContext| {
            let stop = ctx.stop_token().clone();
            Ok::<_, Infallible>(
                RunningJob::new(async move {
                    tokio::select! {
                        _ = never => JobSettlement::completed(),
                        () = stop.cancelled() => JobSettlement::killed().with_detail("stopped"),
                    }
                })
                .with_cancel(move |reason: Option<&str>| {
                    match hook_calls.fetch_add(1, Ordering::SeqCst) {
                        0 => Err(format!("cannot stop for {reason:?}")),
                        1 => panic!("cancel exploded"),
                        _ => Ok(()),
                    }
                }),
            )
        })
        .unwrap();

    let err = jobs.kill(&id, Some("r"), None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "failed to cancel job c-1 (still running): cannot stop for Some(\"r\")"
    );
    assert_eq!(jobs.snapshot(&id, None).unwrap().status, JobStatus::Running);

    let err = jobs.kill(&id, None, None).unwrap_err();
    assert!(
        matches!(&err, JobError::Cancel { message, .. } if message == "cancel panicked: cancel exploded"),
        "{err:?}"
    );
    assert_eq!(jobs.snapshot(&id, None).unwrap().status, JobStatus::Running);

    // The hook is retried, and once it succeeds the stop goes through.
    assert_eq!(jobs.kill(&id, None, None).unwrap(), KillOutcome::Requested);
    let job = settled(&jobs, &id, None).await;
    assert_eq!(job.status, JobStatus::Killed);
    assert_eq!(calls.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn closing_an_owner_stops_jobs_even_when_cancel_fails() {
    let jobs = JobRuntime::new();
    let owner = jobs.owner();
    let id = jobs
        .start(
            JobSpec::new("c", "stubborn").owned_by(owner.id()),
            |ctx: JobContext| {
                let stop = ctx.stop_token().clone();
                Ok::<_, Infallible>(
                    RunningJob::new(async move {
                        stop.cancelled().await;
                        JobSettlement::killed().with_detail("stopped")
                    })
                    .with_cancel(|_: Option<&str>| Err("nope")),
                )
            },
        )
        .unwrap();
    let owner_id = owner.id();
    tokio::time::timeout(LIVENESS, owner.close())
        .await
        .expect("close returns once the job settled");
    let job = jobs.snapshot(&id, Some(owner_id)).unwrap();
    assert_eq!(job.status, JobStatus::Killed);
    assert_eq!(job.stop_reason.as_deref(), Some("owner closed"));
}

#[tokio::test]
async fn wait_returns_a_live_snapshot_on_timeout() {
    let jobs = JobRuntime::new();
    let fake = start_fake(&jobs, JobSpec::new("w", "slow"), true);
    let job = jobs
        .wait(&fake.id, Duration::from_millis(20), None)
        .await
        .unwrap();
    assert_eq!(job.status, JobStatus::Running);
    assert_eq!(job.label, "slow");

    fake.settle.send(JobSettlement::completed()).unwrap();
    assert_eq!(
        settled(&jobs, &fake.id, None).await.status,
        JobStatus::Completed
    );
    // Waiting on a settled job answers at once, whatever the timeout.
    let job = jobs.wait(&fake.id, Duration::ZERO, None).await.unwrap();
    assert_eq!(job.status, JobStatus::Completed);
}

// ---- output ---------------------------------------------------------------------------

#[tokio::test]
async fn reads_consume_then_the_final_output_repeats() {
    let jobs = JobRuntime::new();
    let fake = start_fake(&jobs, JobSpec::new("o", "out"), true);
    assert_eq!(jobs.read(&fake.id, None).unwrap().text, "");
    fake.output.write_str("one\n");
    fake.output.write_str("two\n");
    let out = jobs.read(&fake.id, None).unwrap();
    assert_eq!(out.text, "one\ntwo\n");
    assert_eq!(out.job.status, JobStatus::Running);
    assert_eq!(jobs.read(&fake.id, None).unwrap().text, "");
    fake.output.write_str("three\n");
    fake.settle.send(JobSettlement::completed()).unwrap();
    settled(&jobs, &fake.id, None).await;

    // The unread rest becomes the final output, returned on every read.
    for _ in 0..3 {
        let out = jobs.read(&fake.id, None).unwrap();
        assert_eq!(out.text, "three\n");
        assert_eq!(out.job.status, JobStatus::Completed);
    }
}

#[tokio::test]
async fn a_settlement_output_replaces_the_unread_output() {
    let jobs = JobRuntime::new();
    let fake = start_fake(&jobs, JobSpec::new("o", "out"), true);
    fake.output.write_str("raw");
    fake.settle
        .send(JobSettlement::completed().with_output("summary"))
        .unwrap();
    settled(&jobs, &fake.id, None).await;
    assert_eq!(jobs.read(&fake.id, None).unwrap().text, "summary");
    assert_eq!(jobs.read(&fake.id, None).unwrap().text, "summary");
}

#[tokio::test]
async fn a_custom_reader_is_used_and_drained_at_settlement() {
    let jobs = JobRuntime::new();
    let reads = Arc::new(AtomicUsize::new(0));
    let counter = reads.clone();
    let (settle, settled_rx) = oneshot::channel::<()>();
    let id = jobs
        .start(JobSpec::new("r", "reader"), move |_: JobContext| {
            Ok::<_, Infallible>(
                RunningJob::new(async move {
                    let _ = settled_rx.await;
                    JobSettlement::completed()
                })
                .with_output_reader(move || {
                    format!("chunk {}", counter.fetch_add(1, Ordering::SeqCst))
                }),
            )
        })
        .unwrap();
    assert_eq!(jobs.read(&id, None).unwrap().text, "chunk 0");
    assert_eq!(jobs.read(&id, None).unwrap().text, "chunk 1");
    settle.send(()).unwrap();
    settled(&jobs, &id, None).await;
    assert_eq!(jobs.read(&id, None).unwrap().text, "chunk 2");
    assert_eq!(jobs.read(&id, None).unwrap().text, "chunk 2");
    assert_eq!(reads.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_panicking_reader_is_an_error_not_a_crash() {
    let jobs = JobRuntime::new();
    let id = jobs
        .start(JobSpec::new("r", "reader"), |ctx: JobContext| {
            let stop = ctx.stop_token().clone();
            Ok::<_, Infallible>(
                RunningJob::new(async move {
                    stop.cancelled().await;
                    JobSettlement::killed()
                })
                .with_output_reader(|| panic!("reader exploded")),
            )
        })
        .unwrap();
    let err = jobs.read(&id, None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "failed to read the output of job r-1: reader panicked: reader exploded"
    );
    jobs.kill(&id, None, None).unwrap();
    let job = settled(&jobs, &id, None).await;
    assert_eq!(job.status, JobStatus::Killed);
    assert_eq!(jobs.read(&id, None).unwrap().text, "");
}

#[tokio::test]
async fn output_over_the_limit_is_dropped_and_marked() {
    let jobs = JobRuntime::new();
    let fake = start_fake(&jobs, JobSpec::new("o", "noisy").with_output_limit(4), true);
    fake.output.write_str("abcdef");
    fake.output.write_str("gh");
    assert_eq!(
        jobs.read(&fake.id, None).unwrap().text,
        "[output truncated: 4 earlier bytes dropped]\nefgh"
    );
    // The marker is per read: within the limit, nothing is marked.
    fake.output.write_str("ijk");
    assert_eq!(jobs.read(&fake.id, None).unwrap().text, "ijk");
    fake.output.write_str("0123456789");
    fake.settle.send(JobSettlement::completed()).unwrap();
    settled(&jobs, &fake.id, None).await;
    assert_eq!(
        jobs.read(&fake.id, None).unwrap().text,
        "[output truncated: 6 earlier bytes dropped]\n6789"
    );
}

// ---- owners -----------------------------------------------------------------------------

#[tokio::test]
async fn the_owner_fence_hides_foreign_jobs_like_unknown_ones() {
    let jobs = JobRuntime::new();
    let alice = jobs.owner();
    let bob = jobs.owner();
    let hers = start_fake(
        &jobs,
        JobSpec::new("w", "alice's").owned_by(alice.id()),
        true,
    );
    let open = start_fake(&jobs, JobSpec::new("w", "anyone's"), true);

    for caller in [Some(bob.id()), None] {
        let foreign = jobs.read(&hers.id, caller).unwrap_err();
        let unknown = jobs.read("w-99", caller).unwrap_err();
        assert_eq!(foreign.to_string(), "unknown job w-1");
        assert_eq!(unknown.to_string(), "unknown job w-99");
        assert!(matches!(
            jobs.kill(&hers.id, None, caller),
            Err(JobError::NotFound { .. })
        ));
        assert!(matches!(
            jobs.wait(&hers.id, Duration::ZERO, caller).await,
            Err(JobError::NotFound { .. })
        ));
        assert!(matches!(
            jobs.snapshot(&hers.id, caller),
            Err(JobError::NotFound { .. })
        ));
    }
    assert!(
        !hers.stop.is_cancelled(),
        "a fenced kill must not reach the job"
    );

    // Unowned jobs are open to everyone.
    for caller in [Some(alice.id()), Some(bob.id()), None] {
        assert_eq!(jobs.snapshot(&open.id, caller).unwrap().label, "anyone's");
    }
    let ids = |caller| -> Vec<JobId> { jobs.list(caller).into_iter().map(|j| j.id).collect() };
    assert_eq!(ids(Some(alice.id())), ["w-1", "w-2"]);
    assert_eq!(ids(Some(bob.id())), ["w-2"]);
    assert_eq!(ids(None), ["w-2"]);
    assert_eq!(
        jobs.snapshot(&hers.id, Some(alice.id())).unwrap().owner,
        Some(alice.id())
    );
    jobs.shutdown().await;
}

#[tokio::test]
async fn each_owner_counts_its_own_ids_and_never_shares_one_with_unowned_jobs() {
    let jobs = JobRuntime::new();
    let alice = jobs.owner();
    let bob = jobs.owner();
    let start = |owner: Option<OwnerId>, label: &str| {
        let spec = JobSpec::new("w", label);
        let spec = match owner {
            Some(owner) => spec.owned_by(owner),
            None => spec,
        };
        start_fake(&jobs, spec, true)
    };
    // Bob's first id does not show that Alice started a job before him.
    let a1 = start(Some(alice.id()), "alice 1");
    let b1 = start(Some(bob.id()), "bob 1");
    assert_eq!((a1.id.as_str(), b1.id.as_str()), ("w-1", "w-1"));
    let a2 = start(Some(alice.id()), "alice 2");
    assert_eq!(a2.id.as_str(), "w-2");
    // An unowned job is visible to every owner: it skips every number an owner holds.
    let open = start(None, "anyone's");
    assert_eq!(open.id.as_str(), "w-3");
    // ... and an owner skips the numbers unowned jobs hold.
    let b2 = start(Some(bob.id()), "bob 2");
    let b3 = start(Some(bob.id()), "bob 3");
    assert_eq!((b2.id.as_str(), b3.id.as_str()), ("w-2", "w-4"));

    let label = |id: &str, caller| jobs.snapshot(id, caller).map(|j| j.label);
    assert_eq!(label("w-1", Some(alice.id())).unwrap(), "alice 1");
    assert_eq!(label("w-1", Some(bob.id())).unwrap(), "bob 1");
    assert_eq!(label("w-2", Some(alice.id())).unwrap(), "alice 2");
    assert_eq!(label("w-2", Some(bob.id())).unwrap(), "bob 2");
    assert_eq!(label("w-3", Some(bob.id())).unwrap(), "anyone's");
    assert_eq!(label("w-3", None).unwrap(), "anyone's");
    assert!(matches!(label("w-1", None), Err(JobError::NotFound { .. })));
    assert!(matches!(
        label("w-4", Some(alice.id())),
        Err(JobError::NotFound { .. })
    ));
    // A kill reaches the caller's own job of that id, not the other owner's.
    jobs.kill("w-1", None, Some(bob.id())).unwrap();
    assert!(b1.stop.is_cancelled());
    assert!(!a1.stop.is_cancelled());
    jobs.shutdown().await;
}

#[tokio::test]
async fn a_closed_or_foreign_owner_fails_preflight_before_the_producer() {
    let jobs = JobRuntime::new();
    let other = JobRuntime::new();
    let closed = jobs.owner();
    let closed_id = closed.id();
    drop(closed);
    let elsewhere = other.owner();
    for owner in [closed_id, elsewhere.id()] {
        let ran = AtomicBool::new(false);
        let err = jobs
            .start(JobSpec::new("w", "x").owned_by(owner), |_: JobContext| {
                ran.store(true, Ordering::SeqCst);
                Ok::<_, Infallible>(RunningJob::new(async { JobSettlement::completed() }))
            })
            .unwrap_err();
        assert_eq!(err, JobError::OwnerNotLive { owner });
        assert_eq!(err.to_string(), format!("job owner {owner} is not live"));
        assert!(
            !ran.load(Ordering::SeqCst),
            "the producer ran despite preflight"
        );
    }
    assert!(!jobs.is_live(closed_id));
    assert!(other.is_live(elsewhere.id()));
}

#[tokio::test]
async fn an_owner_closing_during_start_leaves_no_job_behind() {
    let jobs = JobRuntime::new();
    let owner = jobs.owner();
    let owner_id = owner.id();
    let mut owner = Some(owner);
    let (stopped_tx, stopped_rx) = oneshot::channel::<()>();
    let err = jobs
        .start(
            JobSpec::new("w", "x").owned_by(owner_id),
            |ctx: JobContext| {
                // The owner goes away while the producer is running.
                drop(owner.take());
                let stop = ctx.stop_token().clone();
                Ok::<_, Infallible>(RunningJob::new(async move {
                    stop.cancelled().await;
                    let _ = stopped_tx.send(());
                    JobSettlement::killed()
                }))
            },
        )
        .unwrap_err();
    assert_eq!(err, JobError::OwnerNotLive { owner: owner_id });
    assert!(jobs.list(Some(owner_id)).is_empty());
    tokio::time::timeout(LIVENESS, stopped_rx)
        .await
        .expect("the unregistered job was stopped")
        .expect("the job ran to settlement");
}

#[tokio::test]
async fn shutdown_stops_everything_and_refuses_new_jobs() {
    let jobs = JobRuntime::new();
    let owner = jobs.owner();
    let owned = start_fake(&jobs, JobSpec::new("w", "owned").owned_by(owner.id()), true);
    let open = start_fake(&jobs, JobSpec::new("w", "open"), true);
    tokio::time::timeout(LIVENESS, jobs.shutdown())
        .await
        .expect("shutdown returns once the jobs settled");
    for (fake, caller) in [(&owned, Some(owner.id())), (&open, None)] {
        let job = jobs.snapshot(&fake.id, caller).unwrap();
        assert_eq!(job.status, JobStatus::Killed);
        assert_eq!(job.stop_reason.as_deref(), Some("job runtime shut down"));
    }
    assert!(!jobs.is_live(owner.id()));
    let err = jobs
        .start(JobSpec::new("w", "late"), |_: JobContext| {
            Ok::<_, Infallible>(RunningJob::new(async { JobSettlement::completed() }))
        })
        .unwrap_err();
    assert_eq!(err, JobError::ShutDown);
}

#[tokio::test]
async fn dropping_the_last_handle_stops_running_jobs() {
    let jobs = JobRuntime::new();
    let fake = start_fake(&jobs, JobSpec::new("w", "orphan"), true);
    drop(jobs);
    tokio::time::timeout(LIVENESS, fake.stop.cancelled())
        .await
        .expect("the job was asked to stop");
}

// ---- wire shapes ------------------------------------------------------------------------

#[tokio::test]
async fn snapshots_and_outcomes_serialize_for_tools() {
    let jobs = JobRuntime::new();
    let owner = jobs.owner();
    let fake = start_fake(
        &jobs,
        JobSpec::new("bash", "sleep 9").owned_by(owner.id()),
        false,
    );
    let json = serde_json::to_string(&jobs.snapshot(&fake.id, Some(owner.id())).unwrap()).unwrap();
    assert!(json.contains(r#""startedAt":"#) && !json.contains("finishedAt"));
    assert_eq!(
        strip_times(&json),
        r#"{"id":"bash-1","kind":"bash","label":"sleep 9","status":"running"}"#
    );
    jobs.kill(&fake.id, Some("user"), Some(owner.id())).unwrap();
    fake.settle
        .send(JobSettlement::killed().with_detail("signal: SIGKILL"))
        .unwrap();
    let job = settled(&jobs, &fake.id, Some(owner.id())).await;
    let json = serde_json::to_string(&job).unwrap();
    assert!(json.contains(r#""finishedAt":"#), "{json}");
    assert!(job.finished_at >= Some(job.started_at));
    // The stop reason stays with the job, but is not published.
    assert_eq!(job.stop_reason.as_deref(), Some("user"));
    assert_eq!(
        strip_times(&json),
        r#"{"id":"bash-1","kind":"bash","label":"sleep 9","status":"killed","detail":"signal: SIGKILL"}"#
    );
    assert_eq!(
        serde_json::to_string(&KillOutcome::AlreadyFinished).unwrap(),
        r#""already-finished""#
    );
    assert_eq!(
        serde_json::to_string(&KillOutcome::Requested).unwrap(),
        r#""requested""#
    );
    let out = jobs.read(&fake.id, Some(owner.id())).unwrap();
    assert_eq!(
        strip_times(&serde_json::to_string(&out).unwrap()),
        r#"{"text":"","job":{"id":"bash-1","kind":"bash","label":"sleep 9","status":"killed","detail":"signal: SIGKILL"}}"#
    );
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
async fn snapshots_read_back_and_match_their_schema() {
    use dsh_runtime::ToolSchema;
    use dsh_runtime::jobs::{JobOutput, JobSnapshot};
    use dsh_runtime::json::{from_value, to_value};
    use dsh_runtime::validate::is_valid;

    let jobs = JobRuntime::new();
    let fake = start_fake(&jobs, JobSpec::new("bash", "sleep 9"), true);
    jobs.kill(&fake.id, Some("user"), None).unwrap();
    let job = settled(&jobs, &fake.id, None).await;
    let out = jobs.read(&fake.id, None).unwrap();

    let job_json = to_value(&job).unwrap();
    let out_json = to_value(&out).unwrap();
    assert!(is_valid(&JobSnapshot::schema(), &job_json), "{job_json}");
    assert!(is_valid(&JobOutput::schema(), &out_json), "{out_json}");
    for outcome in [KillOutcome::Requested, KillOutcome::AlreadyFinished] {
        assert!(is_valid(
            &KillOutcome::schema(),
            &to_value(&outcome).unwrap()
        ));
    }
    assert!(!is_valid(&JobSnapshot::schema(), &out_json));

    // Everything but the owner and the stop reason (not published) reads back.
    let unpublished = |mut job: JobSnapshot| {
        job.stop_reason = None;
        job.owner = None;
        job
    };
    let back: JobSnapshot = from_value(&job_json).unwrap();
    assert_eq!(back, unpublished(job));
    let back: JobOutput = from_value(&out_json).unwrap();
    assert_eq!(back.text, out.text);
    assert_eq!(back.job, unpublished(out.job));
}

// ---- real processes ---------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_reads_lose_and_repeat_nothing() {
    let jobs = JobRuntime::new();
    let id = jobs
        .start(JobSpec::new("w", "writer"), |ctx: JobContext| {
            let out = ctx.output().clone();
            Ok::<_, Infallible>(RunningJob::new(async move {
                for i in 0..2000 {
                    out.write_str(&format!("{i}\n"));
                    if i % 50 == 0 {
                        tokio::task::yield_now().await;
                    }
                }
                JobSettlement::completed()
            }))
        })
        .unwrap();
    let mut seen = String::new();
    tokio::time::timeout(LIVENESS, async {
        loop {
            let out = jobs.read(&id, None).unwrap();
            seen.push_str(&out.text);
            if out.job.status.is_terminal() {
                return;
            }
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the writer finishes");
    // The last read after settlement returned the final output (the unread rest), so
    // cursor reads plus that rest are the whole stream exactly once.
    let expected: String = (0..2000).map(|i| format!("{i}\n")).collect();
    assert_eq!(seen, expected);
}

// ---- the handle a call reaches the runtime through ---------------------------------------

#[tokio::test]
async fn a_cancelled_call_starts_nothing_through_its_handle() {
    let jobs = JobRuntime::new();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let handle = dsh_runtime::jobs::CallJobs::new(jobs.clone(), cancel);
    let ran = Arc::new(AtomicBool::new(false));
    let flag = ran.clone();
    let err = handle
        .start(JobSpec::new("fake", "never"), move |_ctx: JobContext| {
            flag.store(true, Ordering::SeqCst);
            Ok::<_, Infallible>(RunningJob::new(async { JobSettlement::completed() }))
        })
        .unwrap_err();
    assert_eq!(err, JobError::CallAborted);
    assert_eq!(
        err.to_string(),
        "tool call aborted before the background job started"
    );
    assert!(!ran.load(Ordering::SeqCst), "the producer ran");
    assert!(jobs.list(None).is_empty());
    // The number was not taken either: the next job of the kind is the first.
    let id = jobs
        .start(JobSpec::new("fake", "now"), |_ctx: JobContext| {
            Ok::<_, Infallible>(RunningJob::new(async { JobSettlement::completed() }))
        })
        .unwrap();
    assert_eq!(id.as_str(), "fake-1");
}

#[tokio::test]
async fn a_handle_for_an_owner_starts_and_sees_that_owners_jobs() {
    let jobs = JobRuntime::new();
    let session = jobs.owner();
    let other = jobs.owner();
    let handle = dsh_runtime::jobs::CallJobs::new(jobs.clone(), CancellationToken::new())
        .for_owner(Some(session.id()));
    assert_eq!(handle.owner(), Some(session.id()));
    let mine = handle
        .start(JobSpec::new("fake", "mine"), |ctx: JobContext| {
            let stop = ctx.stop_token().clone();
            Ok::<_, Infallible>(RunningJob::new(async move {
                stop.cancelled().await;
                JobSettlement::killed()
            }))
        })
        .unwrap();
    // Owned by the handle's owner: invisible to others and to unowned callers.
    assert_eq!(handle.snapshot(&mine).unwrap().owner, Some(session.id()));
    assert_eq!(
        jobs.read(&mine, Some(other.id())).unwrap_err(),
        JobError::NotFound {
            id: mine.to_string()
        }
    );
    assert!(jobs.list(None).is_empty());
    assert_eq!(handle.list().len(), 1);
    // A spec naming its own owner keeps it.
    let theirs = handle
        .start(
            JobSpec::new("fake", "theirs").owned_by(other.id()),
            |_ctx: JobContext| {
                Ok::<_, Infallible>(RunningJob::new(async { JobSettlement::completed() }))
            },
        )
        .unwrap();
    // The other owner counts on its own: its job has the same id as ours, and the handle
    // still reaches only its owner's job of that id.
    assert_eq!(theirs, mine);
    assert_eq!(
        jobs.snapshot(&theirs, Some(other.id())).unwrap().label,
        "theirs"
    );
    assert_eq!(handle.snapshot(&theirs).unwrap().label, "mine");
    // Closing the owner stops its jobs (and waits until they settled).
    tokio::time::timeout(LIVENESS, session.close())
        .await
        .unwrap();
    let settled = handle.wait(&mine, LIVENESS).await.unwrap();
    assert_eq!(settled.status, JobStatus::Killed);
    drop(other);
}

#[tokio::test]
async fn a_tool_reaches_the_registrys_job_runtime_through_its_context() {
    use dsh_runtime::{Registry, ToolCall, ToolContext, ToolError, tool};

    /// Start a job that prints its kind.
    #[tool]
    async fn start_echo(cx: ToolContext) -> Result<String, ToolError> {
        let jobs = cx.jobs()?;
        let id = jobs
            .start(JobSpec::new("echo", "echo"), |ctx: JobContext| {
                ctx.output().write_str("echo\n");
                Ok::<_, Infallible>(RunningJob::new(async { JobSettlement::completed() }))
            })
            .map_err(|e| ToolError::with_code("JOB_START_FAILED", e.to_string()))?;
        Ok(id.to_string())
    }

    let jobs = JobRuntime::new();
    let registry = Registry::builder().jobs(jobs.clone()).build();
    assert!(registry.jobs().is_some());
    let _tool = registry.register(StartEcho).unwrap();
    let r = registry
        .execute(ToolCall::new("1", "start_echo", "{}"))
        .await;
    assert_eq!(r.text(), "echo-1");
    let done = jobs.wait("echo-1", LIVENESS, None).await.unwrap();
    assert_eq!(done.status, JobStatus::Completed);
    assert_eq!(jobs.read("echo-1", None).unwrap().text, "echo\n");

    // A registry without one: the tool's error names what is missing.
    let bare = Registry::new();
    assert!(bare.jobs().is_none());
    let _tool = bare.register(StartEcho).unwrap();
    let r = bare.execute(ToolCall::new("1", "start_echo", "{}")).await;
    assert_eq!(r.code_str(), Some("JOBS_UNAVAILABLE"));
    assert_eq!(
        r.text(),
        "Error: tool \"start_echo\" cannot start background work: the registry has no job runtime (build it with `Registry::builder().jobs(JobRuntime::new())`)"
    );
}
