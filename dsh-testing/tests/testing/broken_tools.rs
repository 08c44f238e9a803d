//! One deliberately broken tool per invariant: `check_tool` catches each with a shrunk
//! case, and names the invariant and the minimal arguments. A correct tool passes.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use dsh_runtime::cards::CallView;
use dsh_runtime::schema::{Additional, Property, Schema};
use dsh_runtime::{Tool, ToolContext, ToolDefinition, ToolError, ToolSchema, tool};
use dsh_testing::{CheckFailure, ToolCheck, check_tool, invariant};
use serde::{Deserialize, Serialize};

/// The failure of a check that must fail.
fn failure<A: serde::de::DeserializeOwned + 'static>(check: ToolCheck<A>) -> CheckFailure {
    match check.cases(64).try_run() {
        Err(f) => f,
        Ok(()) => panic!("the check passed, but the tool is broken"),
    }
}

/// Asserts the failure names `invariant` and reproduces with exactly `arguments`.
fn assert_caught(f: &CheckFailure, invariant: &str, arguments: &str) {
    assert_eq!(f.invariant, invariant, "{f}");
    assert_eq!(f.arguments.to_string(), arguments, "{f}");
    let text = f.to_string();
    assert!(text.contains(&format!("`{invariant}`")), "{text}");
    assert!(text.contains(&format!("arguments: {arguments}")), "{text}");
}

// ---------------------------------------------------------------------------------------

/// Arguments of `halve`.
#[derive(Clone, Debug, Serialize, Deserialize, ToolSchema)]
pub(crate) struct HalveArgs {
    /// The input.
    #[schema(range(min = 0, max = 1000))]
    pub n: u32,
}

/// Halve a number (panics on large ones).
#[tool(args)]
async fn halve(args: HalveArgs) -> u32 {
    let n = args.n;
    if n >= 500 {
        panic!("{n} is too big");
    }
    n / 2
}

#[test]
fn a_panicking_body_is_caught_with_the_smallest_panicking_input() {
    let f = failure(ToolCheck::new(Halve));
    assert_caught(&f, invariant::NO_PANIC, r#"{"n":500}"#);
    assert!(f.detail.contains("500 is too big"), "{f}");
}

/// Arguments of `pick`.
#[derive(Clone, Debug, Serialize, Deserialize, ToolSchema)]
pub(crate) struct PickArgs {
    /// The input.
    #[schema(range(min = 0, max = 100))]
    pub n: u32,
}

/// Pick a number (its body rejects valid ones as if they were invalid).
#[tool(args)]
async fn pick(args: PickArgs) -> Result<u32, ToolError> {
    let n = args.n;
    if n > 10 {
        return Err(ToolError::with_code(
            "INVALID_ARGS",
            "invalid arguments: n is too big",
        ));
    }
    Ok(n)
}

#[test]
fn a_body_rejecting_valid_arguments_is_caught() {
    let f = failure(ToolCheck::new(Pick));
    assert_caught(&f, invariant::VALID_REACHES_BODY, r#"{"n":11}"#);
    assert!(f.detail.contains("n is too big"), "{f}");
}

#[test]
fn a_declared_body_rejection_is_accepted() {
    ToolCheck::new(Pick)
        .cases(32)
        .body_rejects(|args| args["n"].as_u64().is_some_and(|n| n > 10))
        .run();
}

/// A small count.
#[derive(Serialize, Deserialize, ToolSchema)]
pub(crate) struct Small {
    /// At most 10.
    #[schema(range(max = 10))]
    pub count: u32,
}

/// Arguments of `count`.
#[derive(Clone, Debug, Serialize, Deserialize, ToolSchema)]
pub(crate) struct CountArgs {
    /// The input.
    #[schema(range(min = 0, max = 100))]
    pub n: u32,
}

/// Count up to a number (returns counts beyond its own output schema).
#[tool(args)]
async fn count(args: CountArgs) -> Small {
    Small { count: args.n }
}

#[test]
fn an_output_off_its_schema_is_caught() {
    let f = failure(ToolCheck::new(Count));
    assert_caught(&f, invariant::OUTPUT_SCHEMA, r#"{"n":11}"#);
    assert!(f.detail.contains("must be at most 10"), "{f}");
}

fn shout_card(args: &ShoutArgs) -> CallView {
    assert!(args.times <= 7, "cannot show {} times", args.times);
    CallView::generic("shout", None)
}

/// Arguments of `shout`.
#[derive(Clone, Debug, Serialize, Deserialize, ToolSchema)]
pub(crate) struct ShoutArgs {
    /// The input.
    #[schema(range(min = 1, max = 20))]
    pub times: u8,
}

/// Shout (its pending card panics on many repetitions).
#[tool(args, present_call = shout_card)]
async fn shout(args: ShoutArgs) -> String {
    "A".repeat(args.times as usize)
}

#[test]
fn a_panicking_presenter_is_caught() {
    let f = failure(ToolCheck::new(Shout));
    assert_caught(&f, invariant::PRESENTERS, r#"{"times":8}"#);
    assert!(
        f.detail
            .contains("present_call panicked: cannot show 8 times"),
        "{f}"
    );
}

/// Arguments of `nap`.
#[derive(Clone, Debug, Serialize, Deserialize, ToolSchema)]
pub(crate) struct NapArgs {
    /// The input.
    #[schema(range(min = 0, max = 10))]
    pub tenths: u8,
}

/// Wait a little (without watching for cancellation when asked for long waits).
#[tool(args)]
async fn nap(args: NapArgs, cx: ToolContext) -> u8 {
    let tenths = args.tenths;
    if tenths >= 3 {
        // Ignores `cx.cancellation()`.
        tokio::time::sleep(Duration::from_millis(300)).await;
    } else {
        tokio::select! {
            _ = cx.cancellation().cancelled() => {}
            _ = tokio::time::sleep(Duration::from_millis(u64::from(tenths) * 10)) => {}
        }
    }
    tenths
}

#[test]
fn a_body_ignoring_cancellation_is_caught() {
    let f = failure(
        ToolCheck::new(Nap)
            .cancel_grace(Duration::from_millis(50))
            .cancel_after(Duration::from_millis(1)),
    );
    assert_caught(&f, invariant::CANCELLATION_STOPS_BODY, r#"{"tenths":3}"#);
}

/// Arguments of `page`.
#[derive(Clone, Debug, Serialize, Deserialize, ToolSchema)]
pub(crate) struct PageArgs {
    /// The input.
    #[schema(range(min = 1, max = 50))]
    pub lines: usize,
}

/// The first lines of a 49-line page (an off-by-one at the upper bound).
#[tool(args)]
async fn page(args: PageArgs) -> Result<String, ToolError> {
    let lines = args.lines;
    let page: Vec<String> = (1..=49).map(|i| format!("line {i}")).collect();
    let last = &page[lines - 1];
    Ok(last.clone())
}

#[test]
fn a_range_bug_at_the_boundary_is_caught() {
    let f = failure(ToolCheck::new(Page));
    assert_caught(&f, invariant::NO_PANIC, r#"{"lines":50}"#);
    assert!(f.detail.contains("index out of bounds"), "{f}");
}

#[test]
fn boundaries_are_tried_on_every_run_whatever_the_case_count() {
    // One generated case rarely draws the upper bound; the boundary pass always does.
    for _ in 0..5 {
        let f = ToolCheck::new(Page).cases(1).try_run().unwrap_err();
        assert_caught(&f, invariant::NO_PANIC, r#"{"lines":50}"#);
    }
}

#[test]
fn a_failure_found_at_a_boundary_is_shrunk_too() {
    // With one generated case the failure comes from the boundary pass (n = 1000), and
    // is searched down to the first failing value.
    let f = ToolCheck::new(Halve).cases(1).try_run().unwrap_err();
    assert_caught(&f, invariant::NO_PANIC, r#"{"n":500}"#);
    assert!(f.detail.contains("500 is too big"), "{f}");
}

#[test]
fn a_failing_author_property_is_caught_with_typed_arguments() {
    let f = failure(ToolCheck::new(Halve).property(|args: &HalveArgs, result| {
        if args.n >= 500 || result.value().and_then(|v| v.as_u64()) == Some(u64::from(args.n / 2)) {
            Ok(())
        } else {
            Err(format!("{} halved is not {}", args.n, result.text()))
        }
    }));
    // The panic is the first failure for large n; below it the property holds.
    assert_eq!(f.invariant, invariant::NO_PANIC, "{f}");
    let f = failure(
        ToolCheck::new(Pick)
            .body_rejects(|_| true)
            .property(|args: &PickArgs, _| {
                (args.n < 5)
                    .then_some(())
                    .ok_or_else(|| format!("{} is not below 5", args.n))
            }),
    );
    assert_caught(&f, invariant::PROPERTY, r#"{"n":5}"#);
    assert!(f.detail.contains("5 is not below 5"), "{f}");
}

// ---------------------------------------------------------------------------------------

/// How to greet.
#[derive(Clone, Debug, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Style {
    /// Plain.
    Plain,
    /// Loud.
    Loud,
}

/// Options.
#[derive(Clone, Debug, Serialize, Deserialize, ToolSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Options {
    /// Style.
    pub style: Style,
    /// Extra punctuation.
    #[schema(length(max = 3), pattern = "^[!?]*$")]
    pub punctuation: Option<String>,
}

/// A greeting.
#[derive(Clone, Debug, Serialize, Deserialize, ToolSchema)]
pub(crate) struct Greeting {
    /// The text.
    pub text: String,
    /// Its length.
    pub chars: usize,
}

/// Arguments of `greet`.
#[derive(Clone, Debug, Serialize, Deserialize, ToolSchema)]
pub(crate) struct GreetArgs {
    /// Names.
    #[schema(length(min = 1, max = 4))]
    pub names: Vec<String>,
    /// Options.
    pub options: Option<Options>,
    /// A ratio.
    #[schema(range(min = 0.0, max = 1.0))]
    pub ratio: Option<f64>,
}

/// Greet people (a correct tool).
#[tool(read_only, args)]
async fn greet(args: GreetArgs, cx: ToolContext) -> Result<Greeting, ToolError> {
    if cx.is_cancelled() {
        return Err(ToolError::new("cancelled"));
    }
    let GreetArgs { names, options, .. } = args;
    let mut text = format!("Hello, {}", names.join(" and "));
    if let Some(o) = options {
        if matches!(o.style, Style::Loud) {
            text = text.to_uppercase();
        }
        text.push_str(o.punctuation.as_deref().unwrap_or(""));
    }
    Ok(Greeting {
        chars: text.chars().count(),
        text,
    })
}

#[test]
fn a_correct_tool_passes() {
    check_tool(Greet);
    ToolCheck::new(Greet)
        .cases(48)
        .property(|args: &GreetArgs, result| {
            let text = result
                .value()
                .and_then(|v| v.get("text"))
                .and_then(|t| t.as_str());
            match text {
                Some(t)
                    if args
                        .names
                        .iter()
                        .all(|n| t.contains(n.as_str()) || t.contains(&n.to_uppercase())) =>
                {
                    Ok(())
                }
                _ => Err(format!("the greeting misses a name: {}", result.text())),
            }
        })
        .run();
}

#[test]
fn the_failure_message_shows_the_invariant_and_the_arguments() {
    let f = failure(ToolCheck::new(Halve));
    assert_eq!(
        f.to_string().lines().take(2).collect::<Vec<_>>(),
        [
            r#"tool "halve" breaks the invariant `no panic` (shrunk case)"#,
            r#"  arguments: {"n":500}"#
        ]
    );
    let _ = Halve.definition();
}

// ---------------------------------------------------------------------------------------

/// The typed arguments of [`Loose`]: a `u8`.
#[derive(Debug, Deserialize)]
pub(crate) struct LooseArgs {
    /// Up to 255.
    pub n: u8,
}

/// A hand-written tool whose published schema is looser than its typed arguments
/// (`0..=1000` for a `u8`).
struct Loose;

static LOOSE: std::sync::LazyLock<ToolDefinition> = std::sync::LazyLock::new(|| {
    let params = Schema::object(
        vec![Property::new(
            "n",
            Schema::integer_range(Some(0), Some(1000)),
            true,
        )],
        Additional::Ignored,
    );
    ToolDefinition::new(
        "loose",
        "Echo a number.",
        Arc::new(params),
        <u8 as ToolSchema>::schema(),
    )
});

impl Tool for Loose {
    type Args = LooseArgs;
    type Output = u8;

    fn definition(&self) -> &ToolDefinition {
        &LOOSE
    }

    async fn call(&self, args: LooseArgs, _cx: ToolContext) -> Result<u8, ToolError> {
        Ok(args.n)
    }
}

#[test]
fn a_schema_looser_than_the_typed_arguments_is_caught() {
    let f = failure(ToolCheck::new(Loose));
    assert_caught(&f, invariant::VALID_REACHES_BODY, r#"{"n":256}"#);
    assert!(
        f.detail.contains("INVALID_ARGS after reaching the body"),
        "{f}"
    );
}

/// Notes kept as files in a directory.
pub(crate) struct Notes {
    dir: PathBuf,
}

#[dsh_runtime::toolbox]
impl Notes {
    /// Save a note and return how many notes there are.
    #[tool]
    async fn save(
        &self,
        /// The note's name.
        name: String,
        /// The text.
        text: String,
    ) -> Result<u64, ToolError> {
        if name.is_empty() || name.contains(['/', '\0']) || name == "." || name == ".." {
            return Err(ToolError::with_code("BAD_NAME", "not a file name"));
        }
        std::fs::write(self.dir.join(&name), text)?;
        Ok(std::fs::read_dir(&self.dir)?.count() as u64)
    }
}

#[test]
fn each_case_gets_a_fresh_sandbox() {
    let dirs = Arc::new(std::sync::Mutex::new(std::collections::HashSet::new()));
    let seen = dirs.clone();
    ToolCheck::sandboxed(move |dir| {
        seen.lock().expect("lock").insert(dir.to_path_buf());
        NotesSave(Arc::new(Notes {
            dir: dir.to_path_buf(),
        }))
    })
    .cases(16)
    // In a fresh directory, a saved note is the only one.
    .property(|_args: &NotesSaveArgs, result| match result.value() {
        Some(v) if v.as_u64() != Some(1) => Err(format!("{} notes in a fresh sandbox", v)),
        _ => Ok(()),
    })
    .run();
    let dirs = dirs.lock().expect("lock");
    assert!(dirs.len() > 16, "{} sandboxes", dirs.len());
    assert!(dirs.iter().all(|d| !d.exists()), "sandboxes are removed");
}

/// Run by `the_report_is_all_a_failing_check_prints` in a child process: a check that
/// fails on a panicking body.
#[test]
#[ignore = "run in a child process by the_report_is_all_a_failing_check_prints"]
fn child_check_of_a_panicking_body() {
    ToolCheck::new(Halve).cases(64).run();
}

#[test]
fn the_report_is_all_a_failing_check_prints() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "broken_tools::child_check_of_a_panicking_body",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    // One panic is printed: the check's report, with the body's message inside it, and
    // the one backtrace is the report's (the body's frames are in none).
    let report = stderr
        .find("breaks the invariant `no panic`")
        .unwrap_or_else(|| panic!("no report in:\n{stderr}"));
    let backtrace = stderr.find("stack backtrace").unwrap_or(usize::MAX);
    assert!(
        report < backtrace,
        "a backtrace came before the report:\n{stderr}"
    );
    assert_eq!(stderr.matches("panicked at").count(), 1, "{stderr}");
    assert_eq!(stderr.matches("stack backtrace").count(), 1, "{stderr}");
    assert!(stderr.contains("panicked: 500 is too big"), "{stderr}");
    assert!(
        !stderr.contains("broken_tools::halve"),
        "a backtrace of the body was printed:\n{stderr}"
    );
}
