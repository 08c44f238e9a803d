//! Process jobs: `dsh_tools::process` producers run by the runtime's job registry.
//!
//! Durations here only bound liveness (a broken runtime fails instead of hanging); no
//! test asserts how long anything took.

use std::time::Duration;

use dsh_runtime::jobs::{JobError, JobId, JobRuntime, JobSpec, JobStatus, KillOutcome, OwnerId};
use dsh_tools::process::{ProcessLimits, spawn_command};

/// Long enough that only a hang exceeds it.
const LIVENESS: Duration = Duration::from_secs(30);

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

fn sh(script: &str) -> dsh_tools::process::CommandProducer {
    let mut command = tokio::process::Command::new("sh");
    command.arg("-c").arg(script);
    spawn_command(command, ProcessLimits::default())
}

#[cfg(unix)]
fn process_exists(pid: &str) -> bool {
    std::process::Command::new("kill")
        .args(["-0", pid])
        .stderr(std::process::Stdio::null())
        .status()
        .expect("kill runs")
        .success()
}

#[tokio::test]
async fn a_spawn_failure_registers_nothing() {
    let jobs = JobRuntime::new();
    let command = tokio::process::Command::new("/definitely/not/a/program");
    let err = jobs
        .start(
            JobSpec::new("bash", "missing"),
            spawn_command(command, ProcessLimits::default()),
        )
        .unwrap_err();
    assert!(matches!(err, JobError::Producer { .. }), "{err:?}");
    assert!(jobs.list(None).is_empty());
}

#[tokio::test]
async fn a_process_completes_with_its_exit_code() {
    let jobs = JobRuntime::new();
    let id = jobs
        .start(
            JobSpec::new("bash", "echo"),
            sh("echo hi; echo oops >&2; exit 3"),
        )
        .unwrap();
    let job = settled(&jobs, &id, None).await;
    assert_eq!(job.status, JobStatus::Completed);
    assert_eq!(job.detail.as_deref(), Some("exit code: 3"));
    let text = jobs.read(&id, None).unwrap().text;
    // Stdout, then stderr under a marker line.
    assert_eq!(text, "hi\n[stderr]\noops\n");
    assert_eq!(jobs.read(&id, None).unwrap().text, text);
}

#[tokio::test]
async fn a_killed_process_reports_its_signal() {
    let jobs = JobRuntime::new();
    let id = jobs
        .start(
            JobSpec::new("bash", "sleeper"),
            sh("echo hi; exec sleep 30"),
        )
        .unwrap();
    assert_eq!(read_until(&jobs, &id, None, "hi\n").await, "hi\n");
    assert_eq!(
        jobs.kill(&id, Some("test"), None).unwrap(),
        KillOutcome::Requested
    );
    let job = settled(&jobs, &id, None).await;
    assert_eq!(job.status, JobStatus::Killed);
    assert_eq!(job.detail.as_deref(), Some("signal: SIGTERM"));
    assert_eq!(
        jobs.kill(&id, None, None).unwrap(),
        KillOutcome::AlreadyFinished
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_process_settles_even_when_a_descendant_holds_its_pipes() {
    let jobs = JobRuntime::new();
    let mut command = tokio::process::Command::new("sh");
    // The shell exits at once; the backgrounded sleep inherits stdout and keeps it open
    // far longer than the test waits.
    command.arg("-c").arg("sleep 600 & echo $!");
    let producer = spawn_command(
        command,
        ProcessLimits::default().with_drain_grace(Duration::from_millis(50)),
    );
    let id = jobs.start(JobSpec::new("bash", "bg"), producer).unwrap();
    let job = jobs.wait(&id, LIVENESS, None).await.unwrap();
    let descendant = jobs.read(&id, None).unwrap().text.trim().to_string();
    // Clean up before asserting, so a failure leaves nothing behind.
    if !descendant.is_empty() {
        let _ = std::process::Command::new("kill").arg(&descendant).status();
    }
    assert_eq!(
        job.status,
        JobStatus::Completed,
        "the open pipe held the job"
    );
    assert_eq!(job.detail.as_deref(), Some("exit code: 0"));
    assert!(descendant.parse::<u32>().is_ok(), "output: {descendant:?}");
}

/// Whether a process no longer runs: no such pid, or a zombie waiting for its reaper
/// (orphans are reaped by the machine's init, whenever it gets to it).
#[cfg(unix)]
fn process_stopped(pid: &str) -> bool {
    if !process_exists(pid) {
        return true;
    }
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| stat.rsplit_once(')')?.1.trim_start().chars().next())
        .is_some_and(|state| state == 'Z' || state == 'X')
}

#[cfg(unix)]
#[tokio::test]
async fn a_kill_reaches_what_the_process_started() {
    let jobs = JobRuntime::new();
    let id = jobs
        .start(JobSpec::new("bash", "tree"), sh("sleep 30 & echo $!; wait"))
        .unwrap();
    let descendant = read_until(&jobs, &id, None, "\n").await.trim().to_string();
    assert!(process_exists(&descendant), "the descendant runs first");
    jobs.kill(&id, None, None).unwrap();
    let job = settled(&jobs, &id, None).await;
    assert_eq!(job.status, JobStatus::Killed);
    let stopped = tokio::time::timeout(LIVENESS, async {
        while !process_stopped(&descendant) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    if stopped.is_err() {
        let _ = std::process::Command::new("kill").arg(&descendant).status();
        panic!("descendant {descendant} outlived the kill");
    }
}

#[cfg(unix)]
#[tokio::test]
async fn a_process_that_exits_on_its_own_leaves_its_descendants_alone() {
    let jobs = JobRuntime::new();
    let mut command = tokio::process::Command::new("sh");
    // The shell exits at once, leaving a daemon-like child (with its output elsewhere,
    // so the pipes close).
    command.arg("-c").arg("sleep 30 >/dev/null 2>&1 & echo $!");
    let id = jobs
        .start(
            JobSpec::new("bash", "daemon"),
            spawn_command(command, ProcessLimits::default()),
        )
        .unwrap();
    let job = settled(&jobs, &id, None).await;
    let descendant = jobs.read(&id, None).unwrap().text.trim().to_string();
    let alive = process_exists(&descendant) && !process_stopped(&descendant);
    let _ = std::process::Command::new("kill").arg(&descendant).status();
    assert_eq!(job.status, JobStatus::Completed);
    assert!(
        alive,
        "a completed job's descendant {descendant} was killed"
    );
}

#[tokio::test]
async fn output_past_the_window_is_in_the_spill_file_and_the_read_says_so() {
    let spill = tempfile::tempdir().unwrap();
    let jobs = JobRuntime::new();
    let mut command = tokio::process::Command::new("sh");
    command
        .arg("-c")
        .arg("i=0; while [ $i -lt 100 ]; do echo line$i; i=$((i+1)); done");
    let limits = ProcessLimits::default()
        .with_max_output_bytes(10)
        .with_spill_dir(spill.path());
    let id = jobs
        .start(
            JobSpec::new("bash", "noisy"),
            spawn_command(command, limits),
        )
        .unwrap();
    settled(&jobs, &id, None).await;
    let text = jobs.read(&id, None).unwrap().text;
    // The window's 10 bytes, then where the rest is.
    let (kept, notice) = text
        .split_once('\n')
        .map_or((text.as_str(), ""), |_| text.rsplit_once("\n[").unwrap());
    assert_eq!(kept, "98\nline99");
    let path = notice
        .strip_prefix("some output was dropped from memory; full output: ")
        .and_then(|rest| rest.strip_suffix(']'))
        .unwrap_or_else(|| panic!("no spill notice in {text:?}"));
    let expected: String = (0..100).map(|i| format!("line{i}\n")).collect();
    assert_eq!(std::fs::read_to_string(path).unwrap(), expected);
}

/// Reads `N` pids the script prints, one per line.
#[cfg(unix)]
async fn read_pids(jobs: &JobRuntime, id: &JobId, n: usize) -> Vec<String> {
    let mut seen = String::new();
    tokio::time::timeout(LIVENESS, async {
        while seen.lines().count() < n {
            seen.push_str(&jobs.read(id, None).expect("job is visible").text);
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("the job printed {seen:?}"));
    seen.lines().map(str::to_string).collect()
}

#[cfg(unix)]
fn kill_all(pids: &[String]) {
    for pid in pids {
        let _ = std::process::Command::new("kill")
            .args(["-9", pid])
            .stderr(std::process::Stdio::null())
            .status();
    }
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn job_control_inside_a_job_does_not_escape_the_kill() {
    // `set -m` puts each background job in a process group of its own: a kill of the
    // job's group alone would miss them.
    let jobs = JobRuntime::new();
    let mut command = tokio::process::Command::new("bash");
    command
        .arg("-c")
        .arg("set -m; sleep 300 & echo $!; sleep 300 & echo $!; wait");
    let id = jobs
        .start(
            JobSpec::new("bash", "job control"),
            spawn_command(command, ProcessLimits::default()),
        )
        .unwrap();
    let pids = read_pids(&jobs, &id, 2).await;
    for pid in &pids {
        assert!(process_exists(pid), "{pid} runs first");
    }
    jobs.kill(&id, None, None).unwrap();
    let job = settled(&jobs, &id, None).await;
    let left: Vec<&String> = pids.iter().filter(|pid| !process_stopped(pid)).collect();
    kill_all(&pids);
    assert_eq!(job.status, JobStatus::Killed);
    assert!(left.is_empty(), "{left:?} escaped the kill");
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_job_is_killed_only_once_its_whole_tree_is_gone() {
    // The child ignores SIGTERM; the shell does not. The job must stay `stopping` until
    // the SIGKILL that follows the grace period has taken the child too.
    let jobs = JobRuntime::new();
    let mut command = tokio::process::Command::new("sh");
    command
        .arg("-c")
        .arg("(trap '' TERM; exec sleep 300) & echo $!; wait");
    let limits = ProcessLimits::default().with_kill_grace(Duration::from_millis(700));
    let id = jobs
        .start(
            JobSpec::new("bash", "stubborn"),
            spawn_command(command, limits),
        )
        .unwrap();
    let pids = read_pids(&jobs, &id, 1).await;
    // The child has installed its ignore once it runs `sleep`.
    tokio::time::timeout(LIVENESS, async {
        while !std::fs::read_to_string(format!("/proc/{}/comm", pids[0]))
            .is_ok_and(|comm| comm.trim() == "sleep")
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the child execs sleep");
    jobs.kill(&id, None, None).unwrap();
    let mut states = Vec::new();
    let job = tokio::time::timeout(LIVENESS, async {
        loop {
            let job = jobs.snapshot(&id, None).unwrap();
            let child_alive = !process_stopped(&pids[0]);
            if job.status.is_terminal() {
                return (job, child_alive, states);
            }
            states.push(child_alive);
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    kill_all(&pids);
    let (job, alive_at_settlement, states) = job.expect("the job settles");
    assert!(!alive_at_settlement, "settled while the child still ran");
    assert_eq!(job.status, JobStatus::Killed);
    assert_eq!(job.detail.as_deref(), Some("signal: SIGTERM"));
    // It really was stopping while the child survived SIGTERM.
    assert!(
        states.iter().any(|alive| *alive),
        "the child never outlived SIGTERM"
    );
}

#[cfg(unix)]
#[tokio::test]
async fn dropping_the_owner_kills_the_process_and_records_it() {
    let jobs = JobRuntime::new();
    let owner = jobs.owner();
    let owner_id = owner.id();
    let id = jobs
        .start(
            JobSpec::new("bash", "sleeper").owned_by(owner_id),
            sh("echo pid=$$; exec sleep 30"),
        )
        .unwrap();
    let seen = read_until(&jobs, &id, Some(owner_id), "\n").await;
    let pid = seen
        .trim()
        .strip_prefix("pid=")
        .expect("the script prints its pid")
        .to_string();
    assert!(
        process_exists(&pid),
        "the process runs before the owner goes"
    );

    drop(owner);
    assert!(!jobs.is_live(owner_id));
    // The settlement is still recorded, and visible through the closed owner's id.
    let job = settled(&jobs, &id, Some(owner_id)).await;
    assert_eq!(job.status, JobStatus::Killed);
    assert_eq!(job.detail.as_deref(), Some("signal: SIGTERM"));
    assert_eq!(job.stop_reason.as_deref(), Some("owner closed"));
    assert!(!process_exists(&pid), "process {pid} outlived its owner");
}

#[cfg(unix)]
#[tokio::test]
async fn closing_the_owner_waits_for_the_process() {
    let jobs = JobRuntime::new();
    let owner = jobs.owner();
    let owner_id = owner.id();
    let id = jobs
        .start(
            JobSpec::new("bash", "sleeper").owned_by(owner_id),
            sh("echo pid=$$; exec sleep 30"),
        )
        .unwrap();
    let seen = read_until(&jobs, &id, Some(owner_id), "\n").await;
    let pid = seen.trim().trim_start_matches("pid=").to_string();
    tokio::time::timeout(LIVENESS, owner.close())
        .await
        .expect("close returns");
    // No wait needed: close returned only after the job settled.
    let job = jobs.snapshot(&id, Some(owner_id)).unwrap();
    assert_eq!(job.status, JobStatus::Killed);
    assert!(!process_exists(&pid), "process {pid} outlived close");
}

// ---- escapes ------------------------------------------------------------------------------
//
// Each escaping process is a `sleep` with a marker argument unique to the test run and
// trial (e.g. `sleep 7001.42`), found by its command line in `/proc`.

/// A marker argument for `sleep` no other process on the machine uses.
#[cfg(target_os = "linux")]
fn marker(trial: u32) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    // Seconds: long enough to outlive every test; the fraction makes it unique.
    format!(
        "{}.{}{:03}{:03}",
        7000 + trial,
        std::process::id(),
        n,
        trial
    )
}

/// The pids of running (not zombie) processes whose command line is `sleep <marker>`.
#[cfg(target_os = "linux")]
fn sleepers(marker: &str) -> Vec<u32> {
    let want = format!("sleep\0{marker}\0");
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc")
        .expect("/proc is readable")
        .flatten()
    {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        if cmdline.ends_with(want.as_bytes())
            && (cmdline.len() == want.len() || cmdline[cmdline.len() - want.len() - 1] == b'/')
            && !process_stopped(&pid.to_string())
        {
            found.push(pid);
        }
    }
    found
}

/// Polls (every 10 ms, at most `limit`) until `sleepers(marker)` is non-empty (`true`) or
/// empty (`false`); answers the last list.
#[cfg(target_os = "linux")]
async fn poll_sleepers(marker: &str, present: bool, limit: Duration) -> Vec<u32> {
    let start = std::time::Instant::now();
    loop {
        let found = sleepers(marker);
        if found.is_empty() != present || start.elapsed() >= limit {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Kills what a failed test left running.
#[cfg(target_os = "linux")]
fn kill_sleepers(marker: &str) {
    kill_all(
        &sleepers(marker)
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>(),
    );
}

/// The kinds of escaping child: one that leaves the session (`setsid`), and one that
/// also ignores every catchable signal first.
#[cfg(target_os = "linux")]
const ESCAPES: [&str; 2] = ["setsid", "trap+setsid"];

/// The job script of an escape kind whose child is `sleep <marker>`.
#[cfg(target_os = "linux")]
fn escaping(kind: &str, marker: &str) -> String {
    match kind {
        "setsid" => format!("setsid sleep {marker} & wait"),
        _ => format!("(trap '' TERM HUP INT; exec setsid sleep {marker}) & wait"),
    }
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_that_leaves_the_session_is_killed_with_its_job() {
    let jobs = JobRuntime::new();
    for trial in 0..5 {
        for kind in ESCAPES {
            let marker = marker(trial);
            let script = escaping(kind, &marker);
            let mut command = tokio::process::Command::new("sh");
            command.arg("-c").arg(&script);
            let limits = ProcessLimits::default().with_kill_grace(Duration::from_millis(300));
            let id = jobs
                .start(JobSpec::new("bash", kind), spawn_command(command, limits))
                .unwrap();
            let running = poll_sleepers(&marker, true, LIVENESS).await;
            assert!(!running.is_empty(), "{kind} trial {trial}: sleep never ran");
            jobs.kill(&id, None, None).unwrap();
            let job = settled(&jobs, &id, None).await;
            let left = poll_sleepers(&marker, false, Duration::from_secs(5)).await;
            kill_sleepers(&marker);
            assert!(
                left.is_empty(),
                "{kind} trial {trial}: {left:?} survived job_kill ({job:?})"
            );
            assert_eq!(job.status, JobStatus::Killed, "{kind} trial {trial}");
        }
    }
}

/// A running `dsh-tools session` host with a background job.
#[cfg(target_os = "linux")]
struct SessionHost {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
    root: std::path::PathBuf,
}

#[cfg(target_os = "linux")]
impl SessionHost {
    fn start() -> SessionHost {
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let root = std::env::temp_dir().join(format!(
            "dsh-tools-escape-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&root).expect("a temporary root");
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
            .current_dir(&root)
            .arg("--root")
            .arg(&root)
            .arg("session")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("dsh-tools session runs");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        SessionHost {
            child,
            stdin,
            stdout,
            root,
        }
    }

    fn call(&mut self, name: &str, arguments: serde_json::Value) -> serde_json::Value {
        use std::io::{BufRead as _, Write as _};
        let line = serde_json::json!({"id": "c", "name": name, "arguments": arguments});
        writeln!(self.stdin, "{line}").expect("the session reads");
        self.stdin.flush().expect("the session reads");
        let mut answer = String::new();
        self.stdout
            .read_line(&mut answer)
            .expect("the session answers");
        serde_json::from_str(&answer).unwrap_or_else(|e| panic!("{e}: {answer:?}"))
    }

    fn background(&mut self, command: &str) {
        let started = self.call(
            "bash",
            serde_json::json!({"command": command, "description": "escape", "run_in_background": true}),
        );
        assert_eq!(
            started["result"]["value"]["kind"].as_str(),
            Some("background"),
            "{started}"
        );
    }

    /// Sends `signal` to the host and waits (bounded) for it to exit.
    fn signal(&mut self, signal: &str) {
        let status = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -{signal} failed");
        let start = std::time::Instant::now();
        while self.child.try_wait().expect("wait").is_none() {
            assert!(start.elapsed() < LIVENESS, "the host outlived {signal}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

#[cfg(target_os = "linux")]
impl Drop for SessionHost {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn children_that_leave_the_session_die_with_a_signalled_host() {
    for signal in ["TERM", "KILL"] {
        for trial in 0..3 {
            for kind in ESCAPES {
                let marker = marker(trial);
                let script = escaping(kind, &marker);
                let mut host = SessionHost::start();
                host.background(&script);
                let running = poll_sleepers(&marker, true, LIVENESS).await;
                assert!(!running.is_empty(), "{kind}: sleep never ran");
                host.signal(signal);
                let left = poll_sleepers(&marker, false, Duration::from_secs(10)).await;
                kill_sleepers(&marker);
                assert!(
                    left.is_empty(),
                    "{kind} trial {trial}: {left:?} survived SIG{signal} of the host"
                );
            }
        }
    }
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_that_kills_its_watchdog_still_dies_with_a_killed_host() {
    watchdog_attack("-9").await;
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_that_stops_its_watchdog_still_dies_with_a_killed_host() {
    watchdog_attack("-STOP").await;
}

/// A job sends `signal` to its host's watchdog; then the host is killed with `SIGKILL`.
#[cfg(target_os = "linux")]
async fn watchdog_attack(signal: &str) {
    let marker = marker(0);
    // The job finds its host's watchdog by its command line (and its parent, the host)
    // and kills it; `$a` keeps the pattern out of the job's own command line.
    let script = format!(
        "setsid sleep {marker} & sleep 0.2; a=trap; \
         for p in /proc/[0-9]*; do \
           c=$(tr '\\0' ' ' < $p/cmdline 2>/dev/null); \
           case \"$c\" in *\"$a '' INT HUP TERM PIPE\"*) \
             read -r s < $p/stat; set -- ${{s##*\") \"}}; \
             [ \"$2\" = \"$PPID\" ] && echo watchdog-found && {{ kill {signal} ${{p#/proc/}} || echo kill-failed; }};; \
           esac; \
         done; wait"
    );
    let mut host = SessionHost::start();
    host.background(&script);
    let start = std::time::Instant::now();
    let mut text = String::new();
    let mut last = serde_json::Value::Null;
    // The job says so before it signals: a host that reacts to a dead watchdog kills the
    // job's tree at once, possibly before a line printed after the signal.
    while !text.contains("watchdog-found") {
        assert!(
            start.elapsed() < LIVENESS,
            "the job did not report finding the watchdog: {text:?} (last answer: {last})"
        );
        let out = host.call("job_output", serde_json::json!({"job_id": "bash-1"}));
        last = out.clone();
        text.push_str(out["result"]["value"]["text"].as_str().unwrap_or(""));
        std::thread::sleep(Duration::from_millis(20));
    }
    // The host notices a dead watchdog at once and a stopped one within 100 ms (a host
    // killed sooner than it reacts is the documented escape).
    std::thread::sleep(Duration::from_millis(500));
    let out = host.call("job_output", serde_json::json!({"job_id": "bash-1"}));
    text.push_str(out["result"]["value"]["text"].as_str().unwrap_or(""));
    assert!(
        !text.contains("kill-failed"),
        "the job could not signal its watchdog: {text:?}"
    );
    host.signal("KILL");
    let left = poll_sleepers(&marker, false, Duration::from_secs(10)).await;
    kill_sleepers(&marker);
    assert!(
        left.is_empty(),
        "{left:?} survived SIGKILL of a host whose watchdog the job had sent {signal}"
    );
}
