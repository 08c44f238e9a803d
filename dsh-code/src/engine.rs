//! One run: a fresh QuickJS runtime and context, on an engine thread reused across runs.
//!
//! The run's thread drives three things in one task: the engine (the program and the
//! promises of its tool calls), the [`Bridge`] (the tool calls themselves, polled here,
//! outside the engine), and the run's deadline and cancellation. The engine's interrupt
//! handler stops code that never yields (a loop, a regular expression) when the deadline
//! passes, the outer call is cancelled, or the program printed too much; a program that
//! is stuck awaiting a tool is stopped by the same deadline and cancellation from
//! outside. Either way the bridge then settles: queued calls are abandoned, running ones
//! are cancelled through the run's token and awaited, and only then does the run report.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::pin::pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::Poll;
use std::time::Instant;

use dsh_providers::tool_search::ToolIndex;
use dsh_runtime::ApprovalRoute;
use dsh_runtime::ParentCall;
use dsh_runtime::caller::CallerRoute;
use dsh_runtime::json::{self, Value};
use dsh_runtime::{AgentScopeId, ExecutionId, Registry};
use rquickjs::context::EvalOptions;
use rquickjs::{AsyncContext, AsyncRuntime, Ctx, Function, IntoJs, Promise};
use tokio_util::sync::CancellationToken;

use crate::args;
use crate::bridge::{Bridge, Forwarded, Outbox, Outer, Reply};
use crate::config::CodeConfig;
use crate::events::SubCallObserver;
use crate::strip;

const PRELUDE: &str = include_str!("prelude.js");

/// The prelude as a module whose default export is the prelude's function, callable
/// once (so a program reaching the module through `import("prelude")` gets nothing it
/// can use).
fn prelude_module() -> String {
    format!(
        "let used = false;\nconst prelude = {PRELUDE};\nexport default function (submit, submitText, log, names, prefix, search) {{\n  if (used) throw new TypeError('not available');\n  used = true;\n  return prelude(submit, submitText, log, names, prefix, search);\n}}\n"
    )
}

/// The prelude module compiled to bytecode once per process (parsing it was the
/// largest part of a short run); `None` when that failed, and runs parse it instead.
fn prelude_bytecode() -> Option<&'static [u8]> {
    static BYTECODE: std::sync::OnceLock<Option<Vec<u8>>> = std::sync::OnceLock::new();
    BYTECODE
        .get_or_init(|| {
            let rt = rquickjs::Runtime::new().ok()?;
            let ctx = rquickjs::Context::full(&rt).ok()?;
            ctx.with(|ctx| {
                rquickjs::Module::declare(ctx, "prelude", prelude_module())
                    .and_then(|m| m.write(rquickjs::WriteOptions::default()))
                    .ok()
            })
        })
        .as_deref()
}

/// Instantiate the prelude in `ctx` and return its function.
fn load_prelude<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<Function<'js>> {
    let module = match prelude_bytecode() {
        // SAFETY: the bytes are what `Module::write` produced for our own prelude in
        // this process (same engine build), and they live for the rest of the process,
        // as reading with ROM data requires.
        #[allow(unsafe_code)]
        Some(bytes) => unsafe { rquickjs::Module::load(ctx.clone(), bytes)? },
        None => rquickjs::Module::declare(ctx.clone(), "prelude", prelude_module())?,
    };
    let (module, _evaluated) = module.eval()?;
    module.get("default")
}

/// Bytes allocated before the engine's first garbage collection.
const GC_THRESHOLD: usize = 4 << 20;

/// Native stack the run's thread has beyond the engine's own limit (the host functions,
/// the bridge and the tool futures it polls).
const THREAD_STACK_MARGIN: usize = 2 << 20;

/// Why a run failed: the kind (`exception`, `timeout`, `abort`, `worker-exit`,
/// `invalid-output`, `output-limit`) and a message for the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunFailure {
    /// The failure class.
    pub kind: &'static str,
    /// What happened, in words a model can act on.
    pub message: String,
}

/// What a run produced.
#[derive(Debug)]
pub(crate) struct Report {
    pub(crate) logs: Vec<String>,
    pub(crate) outcome: Result<Option<Value>, RunFailure>,
    pub(crate) forwarded: Forwarded,
}

impl Report {
    fn failed(kind: &'static str, message: impl Into<String>) -> Report {
        Report {
            logs: Vec::new(),
            outcome: Err(RunFailure {
                kind,
                message: message.into(),
            }),
            forwarded: Forwarded::default(),
        }
    }
}

/// Everything a run needs (all `Send`, moved to the run's thread).
pub(crate) struct Job {
    pub(crate) program: String,
    pub(crate) names: Vec<String>,
    /// The index behind `tools.search` (`None`: the SDK declares no search, because no
    /// deferred tool is visible or a tool is named `search`).
    pub(crate) search: Option<Arc<ToolIndex>>,
    pub(crate) registry: Registry,
    pub(crate) call_id: Arc<str>,
    pub(crate) root_call_id: Arc<str>,
    pub(crate) agent: Option<AgentScopeId>,
    pub(crate) token: ExecutionId,
    /// The outer call's tool name, as called.
    pub(crate) name: Arc<str>,
    /// The fallback approval handler around the outer call, for its sub-calls.
    pub(crate) approval: Option<ApprovalRoute>,
    /// The caller handler around the outer call, for its sub-calls.
    pub(crate) caller: Option<CallerRoute>,
    /// The outer call's token (as its body sees it).
    pub(crate) cancel: CancellationToken,
    pub(crate) config: CodeConfig,
    pub(crate) observer: Option<Arc<dyn SubCallObserver>>,
}

/// Run a program on an engine thread and wait for its report.
pub(crate) async fn run(job: Job) -> Report {
    let started = Instant::now();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let handle = tokio::runtime::Handle::try_current().ok();
    let stack = job.config.stack_limit.saturating_add(THREAD_STACK_MARGIN);
    // The run's spans (its sub-calls' among them) are children of `run_code`'s.
    let span = tracing::Span::current();
    let task: Task = Box::new(move || {
        let here = tracing::Instrument::instrument(run_here(job, started), span);
        let report = match handle {
            Some(handle) => handle.block_on(here),
            None => match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt.block_on(here),
                Err(e) => Report::failed(
                    "worker-exit",
                    format!("cannot start the engine's async runtime: {e}"),
                ),
            },
        };
        let _ = tx.send(report);
    });
    if let Err(e) = pool::submit(stack, task) {
        return Report::failed(
            "worker-exit",
            format!("cannot start the engine's thread: {e}"),
        );
    }
    rx.await.unwrap_or_else(|_| {
        Report::failed(
            "worker-exit",
            "the engine's thread stopped without a report",
        )
    })
}

type Task = Box<dyn FnOnce() + Send>;

/// Engine threads, reused across runs: starting a thread (and its stack) per run is a
/// large part of a short run's cost. A thread runs one run at a time; an idle one waits
/// for the next run with the same stack size and exits after [`pool::IDLE_FOR`].
/// Nothing of a run survives on its thread but the thread itself.
mod pool {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::mpsc::{self, RecvTimeoutError, Sender};
    use std::time::Duration;

    use super::Task;

    /// How long an idle engine thread waits for another run.
    pub(super) const IDLE_FOR: Duration = Duration::from_secs(10);

    struct Idle {
        id: u64,
        stack: usize,
        tx: Sender<Task>,
    }

    static IDLE: Mutex<Vec<Idle>> = Mutex::new(Vec::new());
    static NEXT_ID: AtomicU64 = AtomicU64::new(0);

    fn idle() -> std::sync::MutexGuard<'static, Vec<Idle>> {
        IDLE.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Run `task` on an idle thread with this stack size, or on a new one.
    pub(super) fn submit(stack: usize, mut task: Task) -> std::io::Result<()> {
        loop {
            let taken = {
                let mut idle = idle();
                let i = idle.iter().rposition(|w| w.stack == stack);
                i.map(|i| idle.swap_remove(i))
            };
            let Some(worker) = taken else { break };
            // A thread taken from the list waits for its task (it leaves the list
            // itself before exiting), so the send fails only if it died.
            match worker.tx.send(task) {
                Ok(()) => return Ok(()),
                Err(mpsc::SendError(t)) => task = t,
            }
        }
        let (tx, rx) = mpsc::channel::<Task>();
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let own = tx.clone();
        std::thread::Builder::new()
            .name("dsh-code-run".to_string())
            .stack_size(stack)
            .spawn(move || {
                let mut next = Some(task);
                loop {
                    if let Some(task) = next.take() {
                        task();
                        idle().push(Idle {
                            id,
                            stack,
                            tx: own.clone(),
                        });
                    }
                    match rx.recv_timeout(IDLE_FOR) {
                        Ok(task) => next = Some(task),
                        Err(RecvTimeoutError::Disconnected) => return,
                        Err(RecvTimeoutError::Timeout) => {
                            let mut idle = idle();
                            if let Some(i) = idle.iter().position(|w| w.id == id) {
                                idle.swap_remove(i);
                                return;
                            }
                            // Taken just now: its task is on the way.
                        }
                    }
                }
            })?;
        drop(tx);
        Ok(())
    }
}

/// Captured `console` output, capped in bytes (lines joined with `\n`).
struct Logs {
    lines: Vec<String>,
    bytes: usize,
    cap: usize,
    over: Rc<Cell<bool>>,
}

impl Logs {
    fn push(&mut self, line: String) {
        if self.over.get() {
            return;
        }
        let added = line.len() + usize::from(!self.lines.is_empty());
        if self.bytes + added > self.cap {
            self.over.set(true);
            return;
        }
        self.bytes += added;
        self.lines.push(line);
    }
}

/// How the engine side ended.
enum JsEnd {
    /// The prelude's `finish` settled: `[tag, text]`.
    Settled(Vec<String>),
    /// Interrupted (deadline, cancellation, output limit): uncatchable.
    Interrupted,
    /// An exception escaped the engine (out of memory, a syntax error).
    Threw(String),
}

enum End {
    Js(JsEnd),
    Deadline,
    Cancelled,
}

async fn run_here(job: Job, started: Instant) -> Report {
    let config = job.config.clone();
    let deadline = started + config.deadline;
    let script = match strip::strip(&job.program) {
        Ok(s) => s,
        Err(m) => {
            return Report::failed("exception", format!("TypeScript: {m}"));
        }
    };
    let over = Rc::new(Cell::new(false));
    let (rt, ctx) = match engine(&config, &job.cancel, &over, deadline).await {
        Ok(engine) => engine,
        Err(e) => return Report::failed("worker-exit", format!("cannot create the engine: {e}")),
    };
    let logs = Rc::new(RefCell::new(Logs {
        lines: Vec::new(),
        bytes: 0,
        cap: config.max_output_bytes,
        over: over.clone(),
    }));
    let bridge = Rc::new(Bridge::new(
        job.registry.clone(),
        Outer {
            call_id: job.call_id.clone(),
            root_call_id: job.root_call_id.clone(),
            agent: job.agent,
            token: job.token,
            parent: Arc::new(ParentCall::new(job.name.clone(), job.call_id.clone())),
            approval: job.approval.clone(),
            caller: job.caller.clone(),
            observer: job.observer.clone(),
        },
        job.cancel.child_token(),
        config.max_parallel(),
    ));

    let end = {
        let js = ctx.async_with({
            let bridge = bridge.clone();
            let logs = logs.clone();
            let names = job.names.clone();
            let search = job.search.clone();
            async move |ctx| evaluate(ctx, script, names, search, bridge, logs).await
        });
        race(js, &bridge, deadline, &job.cancel).await
    };

    let reason = reason(&end, over.get(), job.cancel.is_cancelled());
    if let End::Js(JsEnd::Settled(_)) = end {
        // Calls the program made before it finished were submitted while it ran: let
        // the scheduler start what it may before the rest is abandoned.
        std::future::poll_fn(|cx| {
            bridge.poll(cx);
            Poll::Ready(())
        })
        .await;
    }
    bridge.settle(reason);
    bridge.drain().await;
    drop(ctx);
    drop(rt);

    let forwarded = bridge.take_forwarded();
    let logs = std::mem::take(&mut logs.borrow_mut().lines);
    let outcome = outcome(end, &config, &job.cancel, over.get(), &logs);
    Report {
        logs,
        outcome,
        forwarded,
    }
}

/// The engine's runtime (with the run's limits, and interrupted once the output is over
/// its limit, the run cancelled or the deadline passed) and its context.
async fn engine(
    config: &CodeConfig,
    cancel: &CancellationToken,
    over: &Rc<Cell<bool>>,
    deadline: Instant,
) -> rquickjs::Result<(AsyncRuntime, AsyncContext)> {
    let rt = AsyncRuntime::new()?;
    rt.set_memory_limit(config.memory_limit).await;
    rt.set_max_stack_size(config.stack_limit).await;
    // No collection while the context and the prelude are set up (the default
    // threshold, 256 KiB, is passed before the program starts); the memory limit still
    // applies, and the collector runs as usual once the threshold is reached.
    rt.set_gc_threshold(GC_THRESHOLD).await;
    {
        let cancel = cancel.clone();
        let over = over.clone();
        rt.set_interrupt_handler(Some(Box::new(move || {
            over.get() || cancel.is_cancelled() || Instant::now() >= deadline
        })))
        .await;
    }
    let ctx = AsyncContext::full(&rt).await?;
    Ok((rt, ctx))
}

/// Drive the program (`js`) and the bridge's tool calls until the program ends, the run
/// is cancelled or the deadline passes.
async fn race(
    js: impl Future<Output = JsEnd>,
    bridge: &Bridge,
    deadline: Instant,
    cancel: &CancellationToken,
) -> End {
    let mut js = pin!(js);
    let mut sleep = pin!(tokio::time::sleep_until(deadline.into()));
    let mut cancelled = pin!(cancel.cancelled());
    std::future::poll_fn(|cx| {
        loop {
            // Cancellation first: tool calls (which see it too and may fail because
            // of it) only make progress inside `bridge.poll`, after this check.
            if cancelled.as_mut().poll(cx).is_ready() {
                return Poll::Ready(End::Cancelled);
            }
            bridge.poll(cx);
            let before = bridge.submitted();
            if let Poll::Ready(end) = js.as_mut().poll(cx) {
                return Poll::Ready(End::Js(end));
            }
            if sleep.as_mut().poll(cx).is_ready() {
                return Poll::Ready(End::Deadline);
            }
            if bridge.submitted() == before {
                return Poll::Pending;
            }
        }
    })
    .await
}

/// Why the calls still open are settled: from how the run ended and, for an
/// interruption, whether the output went over its limit or the run was cancelled.
fn reason(end: &End, over: bool, cancelled: bool) -> &'static str {
    match end {
        End::Js(JsEnd::Settled(_) | JsEnd::Threw(_)) => "run_code settled",
        End::Cancelled => "cancelled",
        End::Deadline => "deadline exceeded",
        End::Js(JsEnd::Interrupted) => {
            if over {
                "output limit exceeded"
            } else if cancelled {
                "cancelled"
            } else {
                "deadline exceeded"
            }
        }
    }
}

fn outcome(
    end: End,
    config: &CodeConfig,
    cancel: &CancellationToken,
    log_over: bool,
    logs: &[String],
) -> Result<Option<Value>, RunFailure> {
    let fail = |kind, message: String| Err(RunFailure { kind, message });
    let output_limit = || {
        fail(
            "output-limit",
            format!(
                "the program printed more than {} bytes",
                config.max_output_bytes
            ),
        )
    };
    let stopped = || {
        if log_over {
            output_limit()
        } else if cancel.is_cancelled() {
            fail("abort", "the run was cancelled".to_string())
        } else {
            fail(
                "timeout",
                format!("the run exceeded its deadline of {:?}", config.deadline),
            )
        }
    };
    let parts = match end {
        End::Cancelled | End::Deadline | End::Js(JsEnd::Interrupted) => return stopped(),
        End::Js(JsEnd::Threw(message)) => return threw(message, config),
        End::Js(JsEnd::Settled(parts)) => parts,
    };
    if log_over {
        return output_limit();
    }
    let tag = parts.first().map(String::as_str).unwrap_or("");
    let text = parts.get(1).cloned().unwrap_or_default();
    match tag {
        "u" => Ok(None),
        "r" => {
            let log_bytes: usize =
                logs.iter().map(String::len).sum::<usize>() + logs.len().saturating_sub(1);
            if log_bytes + text.len() > config.max_output_bytes {
                return fail(
                    "output-limit",
                    format!(
                        "the program's output (logs and result) is {} bytes, over the limit of {} bytes",
                        log_bytes + text.len(),
                        config.max_output_bytes
                    ),
                );
            }
            match json::parse(&text) {
                Ok(v) => Ok(Some(v)),
                Err(e) => fail(
                    "invalid-output",
                    format!("the result is not lossless JSON: {e}"),
                ),
            }
        }
        "i" => fail(
            "invalid-output",
            format!("the result is not lossless JSON: {text}"),
        ),
        "e" => threw(text, config),
        _ => fail(
            "worker-exit",
            "the engine returned an unexpected settlement".to_string(),
        ),
    }
}

fn threw(message: String, config: &CodeConfig) -> Result<Option<Value>, RunFailure> {
    if message.starts_with("InternalError: out of memory") {
        return Err(RunFailure {
            kind: "worker-exit",
            message: format!(
                "the program ran out of memory (limit {} bytes)",
                config.memory_limit
            ),
        });
    }
    Err(RunFailure {
        kind: "exception",
        message,
    })
}

fn eval_options(filename: &str) -> EvalOptions {
    let mut o = EvalOptions::default();
    o.filename = Some(filename.to_string());
    o
}

/// A call the program awaits: the tool's index in the names and its promise's resolving
/// functions.
type Waiting<'js> = (usize, Function<'js>, Function<'js>);

/// The calls the program awaits, by id, in the order they were made (replies come in
/// that order, so the one looked for is almost always the first).
type Pending<'js> = VecDeque<(i32, Waiting<'js>)>;

/// Empties the pending calls when dropped: the closure of the submit function shares
/// the table, and engine values left in it would outlive their context.
struct ClearOnDrop<'js>(Rc<RefCell<Pending<'js>>>);

impl Drop for ClearOnDrop<'_> {
    fn drop(&mut self) {
        let pending: Vec<_> = self.0.borrow_mut().drain(..).collect();
        drop(pending);
    }
}

/// Settle a call's promise with its reply: a success resolves to its value (a scalar
/// made directly, anything else parsed from its JSON by the engine); a failure (or a
/// value too deep for the engine) rejects through the prelude's `refuse`, with a
/// `ToolCallError`.
fn settle_call<'js>(
    ctx: &Ctx<'js>,
    refuse: &Function<'js>,
    name: &str,
    (resolve, reject): (Function<'js>, Function<'js>),
    reply: Reply,
) -> rquickjs::Result<()> {
    let result = match reply {
        Err(message) => return refuse.call((reject, name, message)),
        Ok(result) => result,
    };
    let value = result.value().unwrap_or(&Value::Null);
    let scalar = match value {
        Value::Null => Some(rquickjs::Value::new_null(ctx.clone())),
        Value::Bool(b) => Some(rquickjs::Value::new_bool(ctx.clone(), *b)),
        Value::Number(n) => Some(match n.as_i64().and_then(|i| i32::try_from(i).ok()) {
            Some(i) => rquickjs::Value::new_int(ctx.clone(), i),
            None => rquickjs::Value::new_number(ctx.clone(), n.as_f64().unwrap_or_default()),
        }),
        Value::String(s) => Some(s.as_ref().into_js(ctx)?),
        Value::Array(_) | Value::Object(_) => None,
    };
    if let Some(scalar) = scalar {
        return resolve.call((scalar,));
    }
    match ctx.json_parse(value.to_string()) {
        Ok(value) => resolve.call((value,)),
        Err(rquickjs::Error::Exception) => {
            let caught = ctx.catch();
            if caught.is_uncatchable_error() {
                // Interrupted: let the engine stop.
                return Err(ctx.throw(caught));
            }
            let message = match caught.as_exception() {
                Some(e) if e.get::<_, String>("name").is_ok_and(|n| n == "RangeError") => {
                    "the tool result is nested too deeply".to_string()
                }
                Some(e) => e.message().unwrap_or_default(),
                None => "the tool result could not be read".to_string(),
            };
            refuse.call((reject, name, message))
        }
        Err(e) => refuse.call((reject, name, e.to_string())),
    }
}

/// Install the prelude, evaluate the program, and wait for `finish` to settle it,
/// settling each tool call's promise as the bridge produces its reply.
async fn evaluate<'js>(
    ctx: Ctx<'js>,
    script: String,
    names: Vec<String>,
    search: Option<Arc<ToolIndex>>,
    bridge: Rc<Bridge>,
    logs: Rc<RefCell<Logs>>,
) -> JsEnd {
    let outbox: Rc<Outbox> = Rc::default();
    // The program's pending calls: id -> (tool, resolve, reject). Emptied before this
    // returns, so no engine value outlives the run's scope here.
    let waiting: Rc<RefCell<Pending<'js>>> = Rc::default();
    // Also when this future is dropped unfinished (deadline, cancellation).
    let _clear = ClearOnDrop(waiting.clone());
    let names: Rc<[Arc<str>]> = names.iter().map(|n| Arc::from(n.as_str())).collect();
    let result: rquickjs::Result<Vec<String>> = async {
        let prelude = load_prelude(&ctx)?;
        let enqueue = enqueuer(outbox.clone(), waiting.clone(), bridge);
        let (submit, submit_text) = submitters(&ctx, &names, enqueue)?;
        let log = Function::new(ctx.clone(), move |line: String| {
            logs.borrow_mut().push(line);
        })?;
        let prefix = i32::try_from(strip::PREFIX.chars().count()).unwrap_or(0);
        let name_list: Vec<&str> = names.iter().map(|n| &**n).collect();
        let search = search_function(&ctx, search)?;
        let parts: rquickjs::Array =
            prelude.call((submit, submit_text, log, name_list, prefix, search))?;
        let finish: Function = parts.get(0)?;
        let refuse: Function = parts.get(1)?;
        let program: Promise = ctx.eval_with_options(script, eval_options("program"))?;
        let settled: Promise = finish.call((program,))?;
        deliver(&ctx, &refuse, &outbox, &waiting, &names, settled).await
    }
    .await;
    js_end(&ctx, result)
}

/// The function both submit functions share: it numbers the call, hands it to the bridge
/// and returns its promise, or the reason it was refused at once.
fn enqueuer<'js>(
    outbox: Rc<Outbox>,
    waiting: Rc<RefCell<Pending<'js>>>,
    bridge: Rc<Bridge>,
) -> impl Fn(&Ctx<'js>, usize, &Arc<str>, Value) -> rquickjs::Result<rquickjs::Value<'js>> + 'js {
    let next_id = Rc::new(Cell::new(0i32));
    move |ctx: &Ctx<'js>, index: usize, name: &Arc<str>, value: Value| {
        let id = next_id.get();
        next_id.set(id.wrapping_add(1));
        match bridge.submit(name, value).route(&outbox, id) {
            None => {
                let (promise, resolve, reject) = Promise::new(ctx)?;
                waiting
                    .borrow_mut()
                    .push_back((id, (index, resolve, reject)));
                Ok(promise.into_value())
            }
            Some(Err(message)) => message.into_js(ctx),
            Some(Ok(_)) => "the call was answered before it was made".into_js(ctx),
        }
    }
}

/// The prelude's two submit functions: the tool's index with its arguments as an engine
/// value, or as lossless JSON text.
fn submitters<'js, E>(
    ctx: &Ctx<'js>,
    names: &Rc<[Arc<str>]>,
    enqueue: E,
) -> rquickjs::Result<(Function<'js>, Function<'js>)>
where
    E: Fn(&Ctx<'js>, usize, &Arc<str>, Value) -> rquickjs::Result<rquickjs::Value<'js>> + 'js,
{
    let enqueue = Rc::new(enqueue);
    let protos = args::Protos::of(ctx)?;
    let submit = Function::new(ctx.clone(), {
        let enqueue = enqueue.clone();
        let names = names.clone();
        move |ctx: Ctx<'js>,
              index: usize,
              args: rquickjs::Value<'js>|
              -> rquickjs::Result<rquickjs::Value<'js>> {
            let Some(name) = names.get(index) else {
                return "no such tool".into_js(&ctx);
            };
            match args::plain(&ctx, &protos, &args) {
                Some(value) => enqueue(&ctx, index, name, value),
                None => Ok(rquickjs::Value::new_undefined(ctx.clone())),
            }
        }
    })?;
    let submit_text = Function::new(ctx.clone(), {
        let names = names.clone();
        move |ctx: Ctx<'js>,
              index: usize,
              text: rquickjs::String<'js>|
              -> rquickjs::Result<rquickjs::Value<'js>> {
            let Some(name) = names.get(index) else {
                return "no such tool".into_js(&ctx);
            };
            match json::parse(&text.to_string()?) {
                Ok(value) => enqueue(&ctx, index, name, value),
                Err(e) => format!("tool arguments must be lossless JSON: {e}").into_js(&ctx),
            }
        }
    })?;
    Ok((submit, submit_text))
}

/// `tools.search` when the run has an index: `["ok", matches JSON]` or `["err", why]`,
/// at once.
fn search_function<'js>(
    ctx: &Ctx<'js>,
    search: Option<Arc<ToolIndex>>,
) -> rquickjs::Result<Option<Function<'js>>> {
    let Some(index) = search else {
        return Ok(None);
    };
    let search = Function::new(
        ctx.clone(),
        move |text: String| match crate::search::answer(&index, &text) {
            Ok(json) => vec!["ok".to_string(), json],
            Err(why) => vec!["err".to_string(), why],
        },
    )?;
    Ok(Some(search))
}

/// Wait for `settled` (the program's promise through `finish`), settling each waiting
/// call's promise as its reply arrives in the outbox.
async fn deliver<'js>(
    ctx: &Ctx<'js>,
    refuse: &Function<'js>,
    outbox: &Outbox,
    waiting: &RefCell<Pending<'js>>,
    names: &[Arc<str>],
    settled: Promise<'js>,
) -> rquickjs::Result<Vec<String>> {
    let mut settled = pin!(settled.into_future::<Vec<String>>());
    std::future::poll_fn(|cx| {
        loop {
            let next = outbox.borrow_mut().pop_front();
            let Some((id, reply)) = next else { break };
            let found = {
                let mut waiting = waiting.borrow_mut();
                let at = waiting.iter().position(|(w, _)| *w == id);
                at.and_then(|at| waiting.remove(at)).map(|(_, w)| w)
            };
            let Some((index, resolve, reject)) = found else {
                continue;
            };
            let name = names.get(index).map(|n| &**n).unwrap_or_default();
            if let Err(e) = settle_call(ctx, refuse, name, (resolve, reject), reply) {
                return Poll::Ready(Err(e));
            }
        }
        settled.as_mut().poll(cx)
    })
    .await
}

/// How the engine side ended, from the program's settled result or the error that
/// stopped it.
fn js_end(ctx: &Ctx<'_>, result: rquickjs::Result<Vec<String>>) -> JsEnd {
    match result {
        Ok(parts) => JsEnd::Settled(parts),
        Err(rquickjs::Error::Exception) => {
            let caught = ctx.catch();
            if caught.is_uncatchable_error() {
                return JsEnd::Interrupted;
            }
            let message = match caught.as_exception() {
                Some(e) => {
                    let msg = e.message().unwrap_or_default();
                    let name = e
                        .get::<_, String>("name")
                        .unwrap_or_else(|_| "Error".to_string());
                    format!("{name}: {msg}")
                }
                None => format!("uncaught {caught:?}"),
            };
            JsEnd::Threw(message)
        }
        Err(e) => JsEnd::Threw(format!("engine error: {e}")),
    }
}
