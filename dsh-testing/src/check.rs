//! `check_tool` and [`ToolCheck`]: generated calls through a registry, checked against
//! the invariants every tool keeps.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::{Arc, Once};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};
use serde::de::DeserializeOwned;

use super::args::{ArgStrategy, InvalidArgs};
use super::registry_api::{self, CANCEL_DURING};
use dsh_runtime::json::{self, Value};
use dsh_runtime::validate::validate_arguments;
use dsh_runtime::{CancellationToken, ToolCall, ToolResult};
use dsh_runtime::{DynTool, Tool, Toolbox};

/// The invariants [`ToolCheck`] asserts, by the names its failure messages use.
pub mod invariant {
    /// No call ends in `TOOL_PANICKED` (a panic in the body, `render` or
    /// `presentation_meta`, contained by the registry, is still a defect).
    pub const NO_PANIC: &str = "no panic";
    /// A call with valid arguments reaches the body and is never `INVALID_ARGS`.
    pub const VALID_REACHES_BODY: &str = "valid arguments reach the body";
    /// A call with invalid arguments is `INVALID_ARGS`, naming the offending path, and
    /// the body does not run.
    pub const INVALID_REJECTED: &str = "invalid arguments are rejected before the body";
    /// A success's value passes the published output schema (standard JSON Schema,
    /// draft 2020-12), and the registry never reports `INVALID_TOOL_OUTPUT`.
    pub const OUTPUT_SCHEMA: &str = "output matches the output schema";
    /// `render`, `present_call` and `present_result` never panic.
    pub const PRESENTERS: &str = "render and presenters never panic";
    /// A call whose token is cancelled before the body never runs the body.
    pub const CANCELLED_BEFORE_BODY: &str = "cancelled before the body means no body";
    /// A body whose call is cancelled stops within the grace period (it is not detached).
    pub const CANCELLATION_STOPS_BODY: &str = "cancellation stops the body";
    /// Every call ends within the call timeout.
    pub const BOUNDED_TIME: &str = "calls finish in bounded time";
    /// The validated arguments deserialize into the typed arguments.
    pub const TYPED_ARGS: &str = "valid arguments deserialize into the typed arguments";
    /// The author's own property ([`super::ToolCheck::property`]).
    pub const PROPERTY: &str = "author property";
}

/// Call ids of the three runs of a valid case.
const PLAIN_ID: &str = "check-call";
const PRE_CANCELLED_ID: &str = "check-pre-cancelled";

type Make = Arc<dyn Fn(Option<&Path>) -> DynTool + Send + Sync>;
type Property<A> = Box<dyn Fn(&A, &ToolResult) -> Result<(), String>>;
type Predicate = Box<dyn Fn(&Value) -> bool>;

/// A property check of one tool: generated valid and invalid arguments, each run through
/// a fresh [`Registry`](dsh_runtime::Registry) holding the tool, checked against the [`invariant`]s and the
/// author's own properties.
///
/// `A` is the type the author's properties see the arguments as: the tool's `Args` for
/// [`ToolCheck::new`] and [`ToolCheck::sandboxed`], JSON for [`ToolCheck::erased`].
///
/// Each valid case runs three calls: a plain one (checked for panics, `INVALID_ARGS`,
/// the output schema, render and presenters, the author's properties), one whose token
/// is cancelled before it starts (the body must not run) and one cancelled while its
/// body runs (the body must stop within [`ToolCheck::cancel_grace`]). Each invalid case
/// runs one call, which must be `INVALID_ARGS` naming the expected path without the body
/// running.
///
/// A failing case is shrunk and [`ToolCheck::run`] panics with the invariant's name and
/// the JSON arguments that reproduce it ([`CheckFailure`]). Call it from a plain
/// `#[test]` (it runs its own Tokio runtime).
pub struct ToolCheck<A = Value> {
    make: Make,
    sandboxed: bool,
    name: String,
    cases: u32,
    arguments: ArgStrategy,
    properties: Vec<Property<A>>,
    body_rejects: Option<Predicate>,
    call_timeout: Duration,
    cancel_grace: Duration,
    cancel_after: Duration,
    max_shrink_time: Duration,
    _args: PhantomData<fn() -> A>,
}

impl<A> fmt::Debug for ToolCheck<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolCheck")
            .field("tool", &self.name)
            .field("cases", &self.cases)
            .field("sandboxed", &self.sandboxed)
            .field("properties", &self.properties.len())
            .finish_non_exhaustive()
    }
}

/// Check `tool` with the default settings ([`ToolCheck::new`]), panicking with a
/// shrunk reproduction when an invariant breaks.
///
/// ```
/// use dsh_runtime::{tool, ToolError};
///
/// /// Add two small numbers.
/// #[tool]
/// async fn add(a: u8, b: u8) -> Result<u16, ToolError> {
///     Ok(u16::from(a) + u16::from(b))
/// }
///
/// dsh_testing::check_tool(Add);
/// ```
pub fn check_tool<T: Tool>(tool: T) {
    ToolCheck::new(tool).run();
}

impl<A: DeserializeOwned + 'static> ToolCheck<A> {
    /// A check of `tool` (one instance, shared by every case).
    pub fn new<T: Tool<Args = A>>(tool: T) -> Self {
        let tool = DynTool::new(tool);
        let shared = tool.clone();
        Self::with_factory(Arc::new(move |_| shared.clone()), false, &tool)
    }

    /// A check of the tool `make` builds for each case in a fresh temporary directory
    /// (removed after the case): file tools confined to it, commands run in it.
    pub fn sandboxed<T: Tool<Args = A>>(make: impl Fn(&Path) -> T + Send + Sync + 'static) -> Self {
        let probe_dir = tempfile::tempdir().ok();
        let sample = match &probe_dir {
            Some(d) => DynTool::new(make(d.path())),
            None => DynTool::new(make(Path::new("."))),
        };
        let make: Make = Arc::new(move |dir| DynTool::new(make(dir.unwrap_or(Path::new(".")))));
        Self::with_factory(make, true, &sample)
    }
}

impl ToolCheck<Value> {
    /// A check of an erased tool (one from a [`Toolbox`] or a [`dsh_runtime::RawTool`]), built
    /// by `make` for each case; with `sandboxed`, in a fresh temporary directory.
    /// Properties see the arguments as JSON.
    pub fn erased(
        sandboxed: bool,
        make: impl Fn(&Path) -> DynTool + Send + Sync + 'static,
    ) -> Self {
        let probe_dir = tempfile::tempdir().ok();
        let sample = match &probe_dir {
            Some(d) => make(d.path()),
            None => make(Path::new(".")),
        };
        let make: Make = Arc::new(move |dir| make(dir.unwrap_or(Path::new("."))));
        Self::with_factory(make, sandboxed, &sample)
    }
}

/// The tool named `name` among `toolbox`'s tools (for [`ToolCheck::erased`]).
pub fn toolbox_tool<B: Toolbox>(toolbox: Arc<B>, name: &str) -> Option<DynTool> {
    toolbox
        .tools()
        .into_iter()
        .find(|t| t.definition().name == name)
}

impl<A: DeserializeOwned + 'static> ToolCheck<A> {
    fn with_factory(make: Make, sandboxed: bool, sample: &DynTool) -> Self {
        let def = sample.definition();
        ToolCheck {
            make,
            sandboxed,
            name: def.name.to_string(),
            cases: default_cases(),
            arguments: ArgStrategy::new(&def.parameters),
            properties: Vec::new(),
            body_rejects: None,
            call_timeout: Duration::from_secs(10),
            cancel_grace: Duration::from_millis(500),
            cancel_after: Duration::from_millis(5),
            max_shrink_time: Duration::from_secs(20),
            _args: PhantomData,
        }
    }

    /// Generated cases (default 64, or `PROPTEST_CASES`). Each valid case makes three
    /// calls, each invalid one one. The boundary cases of [`ArgStrategy::edges`] run
    /// before them and are not counted.
    pub fn cases(mut self, n: u32) -> Self {
        self.cases = n;
        self
    }

    /// Generate the parameter at `path` (`command`, `opts.mode`) from `strategy` in
    /// valid arguments, e.g. a safe set of commands for a shell tool:
    /// `.argument("command", proptest::sample::select(vec!["echo hi", "true"]).prop_map(Value::from).boxed())`.
    pub fn argument(mut self, path: &str, strategy: BoxedStrategy<Value>) -> Self {
        self.arguments = self.arguments.with_override(path, strategy);
        self
    }

    /// An invariant of your own over the typed arguments and the result of every plain
    /// call with valid arguments; an `Err` is a failure of [`invariant::PROPERTY`] with
    /// that message.
    pub fn property(
        mut self,
        property: impl Fn(&A, &ToolResult) -> Result<(), String> + 'static,
    ) -> Self {
        self.properties.push(Box::new(property));
        self
    }

    /// Arguments the schema accepts but the body rejects with `INVALID_ARGS` on purpose
    /// (a rule the schema cannot state, such as two fields that must differ): for those,
    /// [`invariant::VALID_REACHES_BODY`] accepts an `INVALID_ARGS` from the body.
    pub fn body_rejects(mut self, rejects: impl Fn(&Value) -> bool + 'static) -> Self {
        self.body_rejects = Some(Box::new(rejects));
        self
    }

    /// The longest a call may take (default 10 s); a slower one fails
    /// [`invariant::BOUNDED_TIME`].
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// How long a cancelled body may keep running before it counts as ignoring
    /// cancellation (default 500 ms).
    pub fn cancel_grace(mut self, grace: Duration) -> Self {
        self.cancel_grace = grace;
        self
    }

    /// How long the body of the cancelled call runs before its token is cancelled
    /// (default 5 ms).
    pub fn cancel_after(mut self, delay: Duration) -> Self {
        self.cancel_after = delay;
        self
    }

    /// Run the check; panics with the [`CheckFailure`] (shrunk case, invariant,
    /// arguments) when an invariant breaks.
    pub fn run(self) {
        if let Err(failure) = self.try_run() {
            panic!("{failure}");
        }
    }

    /// Run the check and return the shrunk failure, if any.
    ///
    /// Panics of the tool's code while the check runs on this thread are counted and kept
    /// for the report, not printed: the report is what tells what broke (the panic's
    /// message is in it), so it is not buried under each case's raw panic output.
    pub fn try_run(self) -> Result<(), CheckFailure> {
        count_panics();
        let _quiet = Quiet::enter();
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(rt) => rt,
            Err(e) => {
                return Err(self.failure(
                    "setup",
                    Value::Null,
                    format!("cannot start a Tokio runtime: {e}"),
                ));
            }
        };
        // The boundaries first, deterministically, so a failure at a range's end is found
        // on every run rather than when the generator happens to draw it.
        for edge in self.arguments.edge_cases() {
            if let Err(first) = runtime.block_on(self.run_case(&Case::Valid(edge.value.clone()))) {
                let (arguments, f) = edge.shrink(first, |candidate| {
                    runtime
                        .block_on(self.run_case(&Case::Valid(candidate.clone())))
                        .err()
                });
                return Err(self.failure(f.invariant, arguments, f.detail));
            }
        }
        let valid = self.arguments.valid().prop_map(Case::Valid).boxed();
        let cases = match self.arguments.invalid() {
            Some(invalid) => prop_oneof![valid, invalid.prop_map(Case::Invalid)].boxed(),
            None => valid,
        };
        let config = Config {
            cases: self.cases,
            failure_persistence: None,
            max_shrink_time: u32::try_from(self.max_shrink_time.as_millis()).unwrap_or(u32::MAX),
            max_local_rejects: 100_000,
            max_global_rejects: self.cases.saturating_mul(64).max(1024),
            ..Config::default()
        };
        let mut runner = TestRunner::new(config);
        let outcome = runner.run(&cases, |case| {
            runtime
                .block_on(self.run_case(&case))
                .map_err(|f| TestCaseError::fail(format!("{}\n{}", f.invariant, f.detail)))
        });
        match outcome {
            Ok(()) => Ok(()),
            Err(TestError::Fail(reason, case)) => {
                let text = reason.message().to_string();
                let (invariant, detail) = text.split_once('\n').unwrap_or((&text, ""));
                Err(self.failure(invariant, case.into_arguments(), detail.to_string()))
            }
            Err(TestError::Abort(reason)) => Err(self.failure(
                "setup",
                Value::Null,
                format!(
                    "argument generation gave up ({}); supply a strategy for the parameter with `ToolCheck::argument`",
                    reason.message()
                ),
            )),
        }
    }

    fn failure(&self, invariant: &str, arguments: Value, detail: String) -> CheckFailure {
        CheckFailure {
            tool: self.name.clone(),
            invariant: invariant.to_string(),
            arguments,
            detail,
        }
    }

    async fn run_case(&self, case: &Case) -> Result<(), Broken> {
        let dir = if self.sandboxed {
            match tempfile::tempdir() {
                Ok(d) => Some(d),
                Err(e) => {
                    return Err(Broken::new(
                        "setup",
                        format!("cannot create a sandbox directory: {e}"),
                    ));
                }
            }
        } else {
            None
        };
        let tool = (self.make)(dir.as_ref().map(|d| d.path()));
        let harness =
            registry_api::Harness::new(tool.clone(), self.cancel_grace, self.cancel_after)
                .map_err(|e| Broken::new("setup", format!("the tool does not register: {e}")))?;
        match case {
            Case::Valid(args) => self.valid_case(&harness, &tool, args).await,
            Case::Invalid(invalid) => self.invalid_case(&harness, invalid).await,
        }
    }

    async fn call(
        &self,
        harness: &registry_api::Harness,
        id: &str,
        args: &Value,
        token: Option<CancellationToken>,
    ) -> Result<ToolResult, Broken> {
        let mut call = ToolCall::new(id, self.name.as_str(), args.to_string());
        if let Some(token) = token {
            call = call.with_cancellation(token);
        }
        let started = Instant::now();
        match tokio::time::timeout(self.call_timeout, harness.registry.execute(call)).await {
            Ok(result) => {
                if registry_api::code(&result) == Some("TOOL_PANICKED") {
                    return Err(Broken::new(
                        invariant::NO_PANIC,
                        format!("call {id:?}: {}", result.text()),
                    ));
                }
                Ok(result)
            }
            Err(_) => Err(Broken::new(
                invariant::BOUNDED_TIME,
                format!(
                    "call {id:?} still running after {:?} (the limit set by `call_timeout`)",
                    started.elapsed()
                ),
            )),
        }
    }

    async fn valid_case(
        &self,
        harness: &registry_api::Harness,
        tool: &DynTool,
        args: &Value,
    ) -> Result<(), Broken> {
        // 1. The plain call.
        let result = self.call(harness, PLAIN_ID, args, None).await?;
        let reached = harness.reached(PLAIN_ID);
        let code = registry_api::code(&result);
        if !reached {
            return Err(Broken::new(
                invariant::VALID_REACHES_BODY,
                format!("the body did not run; the result: {}", result.text()),
            ));
        }
        if code == Some("INVALID_ARGS") && !self.body_rejects.as_ref().is_some_and(|f| f(args)) {
            return Err(Broken::new(
                invariant::VALID_REACHES_BODY,
                format!(
                    "arguments the schema accepts ended in INVALID_ARGS after reaching the body: {}",
                    result.text()
                ),
            ));
        }
        if code == Some("INVALID_TOOL_OUTPUT") {
            return Err(Broken::new(invariant::OUTPUT_SCHEMA, result.text()));
        }
        self.plain_result(tool, args, &result)?;
        // 2. Cancelled before it starts: the body must not run.
        let token = CancellationToken::new();
        token.cancel();
        let result = self
            .call(harness, PRE_CANCELLED_ID, args, Some(token))
            .await?;
        if harness.reached(PRE_CANCELLED_ID) {
            return Err(Broken::new(
                invariant::CANCELLED_BEFORE_BODY,
                format!(
                    "the body ran although the call was cancelled before it started; the result: {}",
                    result.text()
                ),
            ));
        }
        // 3. Cancelled while the body runs: the body must stop.
        let result = self
            .call(harness, CANCEL_DURING, args, Some(CancellationToken::new()))
            .await?;
        if harness.detached() > 0 {
            return Err(Broken::new(
                invariant::CANCELLATION_STOPS_BODY,
                format!(
                    "the body kept running more than {:?} after its call was cancelled (it was detached); the result: {}",
                    self.cancel_grace,
                    result.text()
                ),
            ));
        }
        Ok(())
    }

    /// The plain call's result: its output against the output schema, the presenters on
    /// it (none may panic), and the user's properties.
    fn plain_result(
        &self,
        tool: &DynTool,
        args: &Value,
        result: &ToolResult,
    ) -> Result<(), Broken> {
        let def = tool.definition();
        if let Some(value) = result.value() {
            check_output(&def.output, value)?;
            presenter(invariant::PRESENTERS, "render", || {
                let _ = tool.erased().render(args, value);
            })?;
        }
        presenter(invariant::PRESENTERS, "present_call", || {
            let _ = tool.erased().present_call(args);
        })?;
        let summary = result.summary();
        presenter(invariant::PRESENTERS, "present_result", || {
            let _ = tool.erased().present_result(args, &summary);
        })?;
        if !self.properties.is_empty() {
            let typed = self.typed(&def.parameters, args)?;
            for property in &self.properties {
                let verdict = catch_unwind(AssertUnwindSafe(|| property(&typed, result)))
                    .unwrap_or_else(|p| Err(format!("the property panicked: {}", panic_text(&p))));
                if let Err(message) = verdict {
                    return Err(Broken::new(
                        invariant::PROPERTY,
                        format!("{message}\nresult: {}", result.text()),
                    ));
                }
            }
        }
        Ok(())
    }

    async fn invalid_case(
        &self,
        harness: &registry_api::Harness,
        invalid: &InvalidArgs,
    ) -> Result<(), Broken> {
        let result = self.call(harness, PLAIN_ID, &invalid.value, None).await?;
        let expected = &invalid.violation;
        if harness.reached(PLAIN_ID) {
            return Err(Broken::new(
                invariant::INVALID_REJECTED,
                format!(
                    "the body ran with arguments that break the schema ({expected}); the result: {}",
                    result.text()
                ),
            ));
        }
        let message = result.message().unwrap_or_default();
        if registry_api::code(&result) != Some("INVALID_ARGS") || !expected.is_reported_by(message)
        {
            return Err(Broken::new(
                invariant::INVALID_REJECTED,
                format!(
                    "expected INVALID_ARGS reporting {expected}; got {:?}: {}",
                    registry_api::code(&result),
                    result.text()
                ),
            ));
        }
        Ok(())
    }

    fn typed(&self, params: &dsh_runtime::schema::Schema, args: &Value) -> Result<A, Broken> {
        let normalized = match validate_arguments(params, args) {
            Ok(v) => v.normalized(params, args).into_owned(),
            Err(e) => return Err(Broken::new(invariant::VALID_REACHES_BODY, e.to_string())),
        };
        json::from_value::<A>(&normalized)
            .map_err(|e| Broken::new(invariant::TYPED_ARGS, e.to_string()))
    }
}

fn default_cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(64)
}

/// Validate `value` against `output`'s published JSON Schema (draft 2020-12).
fn check_output(output: &dsh_runtime::schema::Schema, value: &Value) -> Result<(), Broken> {
    let schema = json::to_serde(&output.to_json_schema());
    let validator = jsonschema::draft202012::new(&schema).map_err(|e| {
        Broken::new(
            invariant::OUTPUT_SCHEMA,
            format!("the published output schema does not compile: {e}"),
        )
    })?;
    let instance = json::to_serde(value);
    let errors: Vec<String> = validator
        .iter_errors(&instance)
        .map(|e| format!("at {:?}: {e}", e.instance_path().to_string()))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(Broken::new(
            invariant::OUTPUT_SCHEMA,
            format!(
                "the value {value} breaks the published output schema: {}",
                errors.join("; ")
            ),
        ))
    }
}

fn presenter(invariant: &'static str, what: &str, f: impl FnOnce()) -> Result<(), Broken> {
    let before = panics_on_this_thread();
    catch_unwind(AssertUnwindSafe(f))
        .map_err(|p| Broken::new(invariant, format!("{what} panicked: {}", panic_text(&p))))?;
    // `#[tool]` presenters contain their own panics (a panic means the generic card):
    // the panic hook still saw it.
    if panics_on_this_thread() != before {
        let message = LAST_PANIC.with(|m| m.borrow().clone());
        return Err(Broken::new(
            invariant,
            format!("{what} panicked: {message} (contained: the generic card was shown)"),
        ));
    }
    Ok(())
}

thread_local! {
    static PANICS: Cell<u64> = const { Cell::new(0) };
    static LAST_PANIC: RefCell<String> = const { RefCell::new(String::new()) };
    /// A check is running on this thread: its panics are not printed.
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// While alive, panics on this thread are counted but not printed (see
/// [`ToolCheck::try_run`]); restores the previous state when dropped (checks may nest).
struct Quiet(bool);

impl Quiet {
    fn enter() -> Quiet {
        Quiet(QUIET.with(|q| q.replace(true)))
    }
}

impl Drop for Quiet {
    fn drop(&mut self) {
        QUIET.with(|q| q.set(self.0));
    }
}

/// Installs (once per process) a panic hook that counts the panics of each thread and
/// keeps the last message, then runs the hook that was installed before, unless a check
/// is running on the thread.
fn count_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICS.with(|c| c.set(c.get() + 1));
            let message = info.payload_as_str().unwrap_or("a non-string payload");
            LAST_PANIC.with(|m| *m.borrow_mut() = message.to_string());
            if !QUIET.with(Cell::get) {
                previous(info);
            }
        }));
    });
}

fn panics_on_this_thread() -> u64 {
    PANICS.with(Cell::get)
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "a non-string payload".to_string()
    }
}

/// One generated case.
#[derive(Clone, Debug)]
enum Case {
    Valid(Value),
    Invalid(InvalidArgs),
}

impl Case {
    fn into_arguments(self) -> Value {
        match self {
            Case::Valid(v) => v,
            Case::Invalid(i) => i.value,
        }
    }
}

/// A broken invariant in one case.
struct Broken {
    invariant: &'static str,
    detail: String,
}

impl Broken {
    fn new(invariant: &'static str, detail: String) -> Self {
        Broken { invariant, detail }
    }
}

/// A shrunk failing case of a [`ToolCheck`].
///
/// Displays as
///
/// ```text
/// tool "add" breaks the invariant `no panic` (shrunk case)
///   arguments: {"a":0,"b":3}
///   call "check-call": Error: tool "add" panicked: ...
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct CheckFailure {
    /// The tool's name.
    pub tool: String,
    /// The name of the broken invariant (one of [`invariant`], or `setup`).
    pub invariant: String,
    /// The arguments that reproduce the failure, after shrinking.
    pub arguments: Value,
    /// What went wrong.
    pub detail: String,
}

impl fmt::Display for CheckFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "tool {} breaks the invariant `{}` (shrunk case)\n  arguments: {}\n  {}",
            crate::json_quote(&self.tool),
            self.invariant,
            self.arguments,
            self.detail.replace('\n', "\n  ")
        )
    }
}

impl std::error::Error for CheckFailure {}
