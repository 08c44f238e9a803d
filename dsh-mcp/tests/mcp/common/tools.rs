//! The tools the modules serve, defined once, and [`Toolset`], a registry of some of them
//! that keeps them registered.
//!
//! Tools with a side effect a test looks for record it under something the test chooses
//! (a tag, a note), or, for [`Counted`], in a value of each registry's own: the modules run
//! side by side in one process, and one test must not see another's runs.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dsh_mcp::McpServer;
use dsh_runtime::jobs::JobRuntime;
use dsh_runtime::{
    AgentScopeId, ErasedTool, RegistrationHandle, Registry, ToolContext, ToolError, tool, toolbox,
};
use tokio::sync::watch;

/// Greet someone.
#[tool(read_only, idempotent)]
pub(crate) async fn greet(
    /// Who to greet.
    name: String,
) -> Result<String, ToolError> {
    Ok(format!("Hello, {name}!"))
}

/// The agent scope of the call (0 outside any).
#[tool]
pub(crate) async fn whoami(cx: ToolContext) -> Result<u64, ToolError> {
    Ok(cx.agent().map_or(0, AgentScopeId::get))
}

/// Sleep `ms` milliseconds, then answer `slept MS`.
#[tool]
pub(crate) async fn nap(ms: u64) -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    Ok(format!("slept {ms}"))
}

/// Wait `ms` milliseconds (or until cancelled), then echo `text`.
#[tool(task = "optional")]
pub(crate) async fn slow_echo(cx: ToolContext, text: String, ms: u64) -> Result<String, ToolError> {
    tokio::select! {
        () = tokio::time::sleep(Duration::from_millis(ms)) => Ok(format!("echo: {text}")),
        () = cx.cancellation().cancelled() => Err(ToolError::new("cancelled")),
    }
}

/// Say it started, report progress, and wait until cancelled.
#[tool(task = "optional")]
pub(crate) async fn hang(cx: ToolContext, tag: String) -> Result<String, ToolError> {
    cx.report_progress(1.0, Some(2.0), Some(&format!("{tag} started")));
    HANG.send_modify(|s| s.started.push(tag.clone()));
    cx.cancellation().cancelled().await;
    HANG.send_modify(|s| s.stopped.push(tag.clone()));
    Err(ToolError::new("stopped"))
}

/// The tags of the `hang` calls that started and that stopped (each test uses tags of its
/// own).
#[derive(Default)]
pub(crate) struct HangLog {
    pub started: Vec<String>,
    pub stopped: Vec<String>,
}

pub(crate) static HANG: std::sync::LazyLock<watch::Sender<HangLog>> =
    std::sync::LazyLock::new(|| watch::Sender::new(HangLog::default()));

/// Wait until `check` holds for the hang log (at most 30 s).
pub(crate) async fn until_hang(what: &str, check: impl Fn(&HangLog) -> bool) {
    let mut rx = HANG.subscribe();
    tokio::time::timeout(Duration::from_secs(30), rx.wait_for(|log| check(log)))
        .await
        .unwrap_or_else(|_| panic!("timed out waiting until {what}"))
        .unwrap();
}

/// Whether the `hang` call tagged `tag` has stopped.
pub(crate) fn hang_stopped(tag: &str) -> bool {
    HANG.borrow().stopped.iter().any(|t| t == tag)
}

/// No task support: always answered directly.
#[tool]
pub(crate) async fn plain(text: String) -> Result<String, ToolError> {
    Ok(format!("plain: {text}"))
}

/// The notes of the `guarded` calls whose body ran (each test uses notes of its own).
static GUARDED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Whether the body of a `guarded` call with this note ran.
pub(crate) fn guarded_ran(note: &str) -> bool {
    GUARDED.lock().unwrap().iter().any(|n| n == note)
}

/// Record that the body ran (the tests set a pre-execute policy that asks before it).
#[tool(task = "optional")]
pub(crate) async fn guarded(note: String) -> Result<String, ToolError> {
    GUARDED.lock().unwrap().push(note.clone());
    Ok(format!("guarded: {note}"))
}

/// Tools that count their runs, in a value of each [`Toolset`]'s own.
#[derive(Default)]
pub(crate) struct Counted {
    touches: AtomicUsize,
    task_runs: AtomicUsize,
}

#[toolbox]
impl Counted {
    /// Record one run (the side effect the tests look for) and echo the note.
    #[tool]
    pub(crate) async fn touch(
        &self,
        /// What to echo.
        note: String,
    ) -> Result<String, ToolError> {
        self.touches.fetch_add(1, Ordering::SeqCst);
        Ok(format!("touched: {note}"))
    }

    /// Count runs; only ever a task.
    #[tool(task = "required")]
    pub(crate) async fn only_task(&self) -> Result<String, ToolError> {
        self.task_runs.fetch_add(1, Ordering::SeqCst);
        Ok("ran as a task".to_string())
    }
}

/// A registry of some of these tools (and of a module's own), with or without a job
/// runtime, keeping them and its hooks registered while it lives.
pub(crate) struct Toolset {
    pub registry: Registry,
    pub jobs: JobRuntime,
    counted: Arc<Counted>,
    regs: Vec<RegistrationHandle>,
}

impl Toolset {
    /// A registry without a job runtime: it offers no tasks.
    pub(crate) fn new() -> Toolset {
        Toolset::of(Registry::new(), JobRuntime::new())
    }

    /// A registry with a job runtime of its own: task-capable tools may run as tasks.
    pub(crate) fn with_jobs() -> Toolset {
        let jobs = JobRuntime::new();
        Toolset::of(Registry::builder().jobs(jobs.clone()).build(), jobs)
    }

    fn of(registry: Registry, jobs: JobRuntime) -> Toolset {
        Toolset {
            registry,
            jobs,
            counted: Arc::default(),
            regs: Vec::new(),
        }
    }

    /// Register `tool`.
    pub(crate) fn with<T: ErasedTool>(mut self, tool: T) -> Toolset {
        self.regs.push(self.registry.register(tool).unwrap());
        self
    }

    /// Register `touch`, counting its runs in [`Toolset::touches`].
    pub(crate) fn with_touch(self) -> Toolset {
        let touch = CountedTouch(self.counted.clone());
        self.with(touch)
    }

    /// Register `only_task`, counting its runs in [`Toolset::task_runs`].
    pub(crate) fn with_only_task(self) -> Toolset {
        let only_task = CountedOnlyTask(self.counted.clone());
        self.with(only_task)
    }

    /// Keep `handle` (a hook, a toolbox, a tool registered otherwise) while this lives.
    pub(crate) fn hold(&mut self, handle: RegistrationHandle) {
        self.regs.push(handle);
    }

    /// A server of this registry.
    pub(crate) fn server(&self) -> McpServer {
        McpServer::new(self.registry.clone())
    }

    /// How many times `touch` ran.
    pub(crate) fn touches(&self) -> usize {
        self.counted.touches.load(Ordering::SeqCst)
    }

    /// How many times `only_task` ran.
    pub(crate) fn task_runs(&self) -> usize {
        self.counted.task_runs.load(Ordering::SeqCst)
    }

    /// Stop the job runtime's jobs.
    pub(crate) async fn shutdown(self) {
        self.jobs.shutdown().await;
    }
}
