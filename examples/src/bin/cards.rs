//! # Cards: showing calls and results in a UI, live and replayed
//!
//! What this teaches: a tool can describe itself to a human as well as to a model.
//! `present_call` turns the arguments into the card of a pending call, `presentation_meta`
//! saves durable data with a successful result (it travels in the result's `meta`), and
//! `present_result` turns a result's persisted summary (content, error flag, meta; never
//! the value) into the card of a completed call. Presenters are pure functions of what was
//! logged, so a UI replaying a log asks the registry for the same cards with
//! `registry.present_call(name, &args)` and `registry.present_result(name, &args, &summary)`.
//! Display never fails: a logged call whose arguments no longer fit the tool (written by an
//! older version), or whose tool is gone, gets the generic card.
//!
//! Run it with `cargo run -p examples --bin cards`.
//!
//! Read first: `policy`. This is the last example; the crate docs (`cargo doc -p
//! dsh-runtime --open`) and `dsh-runtime/PIPELINE.md` go further.

use dsh_runtime::cards::{
    CallView, FileLocation, ReadLine, ReadView, ResultSummary, ResultView, ToolCallKind,
};
use dsh_runtime::json::{self, Value};
use dsh_runtime::{Registry, ToolCall, ToolSchema, tool};
use serde::{Deserialize, Serialize};

/// Lines of a (built-in) text file.
#[derive(Serialize, Deserialize, ToolSchema)]
struct Lines {
    /// The file's path.
    path: String,
    /// The 1-based number of the first line returned.
    first: u64,
    /// The lines' text.
    lines: Vec<String>,
    /// How many lines the file has.
    total: u64,
}

const FILE: [&str; 5] = ["alpha", "beta", "gamma", "delta", "epsilon"];

/// The pending card: what a UI shows while the call runs.
fn read_lines_card(args: &ReadLinesArgs) -> CallView {
    let first = args.first.unwrap_or(1);
    CallView::Generic {
        title: format!("Read {} from line {first}", args.path),
        kind: Some(ToolCallKind::Read),
        raw_input: None,
        content: None,
        locations: Some(vec![FileLocation::new(&args.path).at_line(first)]),
    }
}

/// Durable card data, stored in the result's `meta` (the value itself is not logged).
fn read_lines_meta(_args: &ReadLinesArgs, out: &Lines) -> ReadView {
    let lines = (out.first..)
        .zip(&out.lines)
        .map(|(n, text)| ReadLine::new(n, text.as_str()))
        .collect();
    ReadView::new(&out.path, out.first, lines, out.total)
}

/// The completed card, rebuilt from the persisted summary alone.
fn read_lines_result(_args: &ReadLinesArgs, result: &ResultSummary) -> Option<ResultView> {
    // `None` (here: a failed call, which has no meta) means "use the generic card".
    let meta = result.meta.as_ref()?;
    let view: ReadView = json::from_value(meta).ok()?;
    Some(view.into())
}

/// Read a few lines of a text file.
#[tool(
    read_only,
    present_call = read_lines_card,
    presentation_meta = read_lines_meta,
    present_result = read_lines_result
)]
async fn read_lines(
    /// The file's path.
    path: String,
    /// The 1-based first line (default 1).
    first: Option<u64>,
    /// How many lines (default 2).
    count: Option<u64>,
) -> Lines {
    let first = first.unwrap_or(1).max(1);
    let count = count.unwrap_or(2);
    let lines = FILE
        .iter()
        .skip(usize::try_from(first - 1).unwrap_or(usize::MAX))
        .take(usize::try_from(count).unwrap_or(usize::MAX))
        .map(|s| s.to_string())
        .collect();
    Lines {
        path,
        first,
        lines,
        total: FILE.len() as u64,
    }
}

/// One line of a call log: what a host persists per call.
fn log_line(name: &str, args: &str, summary: &ResultSummary) -> Result<String, String> {
    let arguments = json::parse(args).map_err(|e| e.to_string())?;
    let result = json::to_value(summary).map_err(|e| e.to_string())?;
    let mut entry = json::Object::new();
    entry.insert("name", Value::from(name));
    entry.insert("arguments", arguments);
    entry.insert("result", result);
    Ok(Value::from(entry).to_string())
}

fn card_json<T: Serialize>(card: &T) -> String {
    match json::to_value(card) {
        Ok(v) => v.to_string(),
        Err(e) => format!("<card not printable: {e}>"),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = Registry::new();
    let _read = registry.register(ReadLines)?;

    println!("== live");
    let args = r#"{"path":"greek.txt","first":2,"count":3}"#;
    let pending = registry.present_call("read_lines", &json::parse(args)?);
    println!("call card: {}", card_json(&pending));
    let result = registry
        .execute(ToolCall::new("c1", "read_lines", args))
        .await;
    println!("content: {}", result.text());
    match result.meta() {
        Some(meta) => println!("meta: {}", &**meta),
        None => println!("meta: none"),
    }
    let summary = result.summary();
    let done = registry.present_result("read_lines", &json::parse(args)?, &summary);
    println!("result card: {}", card_json(&done));

    // What a host writes to its log: name, raw arguments, the result's summary.
    let mut log = vec![log_line("read_lines", args, &summary)?];
    // An entry written by an older version of the tool (`file`/`from` were renamed since).
    log.push(log_line(
        "read_lines",
        r#"{"file":"greek.txt","from":4}"#,
        &ResultSummary {
            content: vec![dsh_runtime::content::ContentBlock::text("delta\nepsilon")],
            is_error: false,
            meta: None,
        },
    )?);
    // An entry for a tool this host no longer has.
    log.push(log_line(
        "grep",
        r#"{"pattern":"beta"}"#,
        &ResultSummary {
            content: vec![dsh_runtime::content::ContentBlock::text("greek.txt:2:beta")],
            is_error: false,
            meta: None,
        },
    )?);

    println!("== replay");
    for line in &log {
        println!("log: {line}");
        let entry = json::parse(line)?;
        let fields = entry.as_object().ok_or("a log entry is an object")?;
        let name = fields
            .get("name")
            .and_then(|n| n.as_str())
            .ok_or("a log entry has a name")?;
        let args = fields.get("arguments").ok_or("a log entry has arguments")?;
        let summary: ResultSummary =
            json::from_value(fields.get("result").ok_or("a log entry has a result")?)?;
        let call_card = registry.present_call(name, args);
        let result_card = registry.present_result(name, args, &summary);
        let generic = call_card == CallView::generic(name, Some(args.clone()));
        println!(
            "replayed call card ({}): {}",
            if generic { "generic" } else { "tool's own" },
            card_json(&call_card)
        );
        println!("replayed result card: {}", card_json(&result_card));
    }
    Ok(())
}
