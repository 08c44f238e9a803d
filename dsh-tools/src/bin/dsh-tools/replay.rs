//! Call logs and their replay.
//!
//! # Log format
//!
//! A log is JSON Lines: one record per line, blank lines ignored.
//!
//! ```json
//! {"call":{"id":"call_1","name":"read","arguments":{"file_path":"README.md","limit":5}},"result":{"content":[{"type":"text","text":"..."}],"isError":false,"meta":{"path":"README.md","offset":1,"lines":[],"totalLines":0}}}
//! ```
//!
//! - `call.id`: the call id (optional; `""` when absent);
//! - `call.name`: the tool name as called;
//! - `call.arguments`: the arguments as a JSON value, or as a string holding JSON (the
//!   way model APIs transport them); a string that is not JSON is kept as a string;
//! - `result` (optional, e.g. for a call still running when the log was cut): the
//!   persisted part of the result, [`ResultSummary`](dsh_runtime::cards::ResultSummary): final `content`, `isError`, and the
//!   presentation `meta` when the tool produced one. The canonical value is never
//!   logged: cards are rebuilt from meta.
//!
//! Unknown keys are ignored, so a log may carry more (timestamps, usage). Lines are
//! parsed with the lossless JSON parser: duplicate keys or numbers that cannot be held
//! exactly make a line malformed rather than silently changed.
//!
//! `dsh-tools call --log FILE` appends such a record; [`record`] builds one.
//!
//! `replay --html OUT` writes the cards as one self-contained page ([`html_page`]), and
//! `call --html OUT` the cards of one call ([`call_page`]): the renderer of `dsh-cards`,
//! the same one MCP hosts show.

use dsh_cards::{CardPage, PageCall};
use dsh_runtime::cards::{CallView, ResultView};
use dsh_runtime::json::{self, Value};
pub(crate) use dsh_runtime::log::{LogRecord, LoggedCall};
use dsh_runtime::{AgentScope, Registry, ToolResult};

/// The log record of a finished call: the call and the persisted part of its result.
pub(crate) fn record(
    call_id: &str,
    name: &str,
    arguments: &Value,
    result: &ToolResult,
) -> LogRecord {
    LogRecord {
        call: LoggedCall {
            id: call_id.to_string(),
            name: name.to_string(),
            arguments: arguments.clone(),
        },
        result: Some(result.summary()),
    }
}

/// Parse one log line.
pub(crate) fn parse_record(line: &str) -> Result<LogRecord, String> {
    let value = json::parse(line).map_err(|e| e.to_string())?;
    json::from_value(&value).map_err(|e| format!("not a log record: {e}"))
}

/// The cards of one logged call.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ReplayedCall {
    /// 1-based line number in the log.
    pub line: usize,
    /// The call id.
    pub id: String,
    /// The tool name.
    pub name: String,
    /// The arguments as logged.
    pub arguments: Value,
    /// Whether the logged result is a failure (`None`: no result logged).
    pub is_error: Option<bool>,
    /// The pending card.
    pub call_card: CallView,
    /// The completed card, when the result was logged.
    pub result_card: Option<ResultView>,
}

/// What replaying a log produced.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ReplayReport {
    /// Every well-formed record, in log order.
    pub calls: Vec<ReplayedCall>,
    /// Malformed lines: 1-based line number and why.
    pub errors: Vec<(usize, String)>,
}

/// Rebuild the cards of every call in `log` with `registry`'s presenters, as a caller in
/// `scope` sees them. Stale arguments, unknown tools and presenters that fail give the
/// generic cards ([`Registry::present_call`]); only lines that are not records are
/// errors, and they do not stop the replay.
pub(crate) fn replay(registry: &Registry, scope: Option<&AgentScope>, log: &str) -> ReplayReport {
    let mut report = ReplayReport::default();
    for (index, line) in log.lines().enumerate() {
        let number = index + 1;
        if line.trim().is_empty() {
            continue;
        }
        match parse_record(line) {
            Ok(record) => {
                let args = record.call.arguments_value();
                let name = &record.call.name;
                let call_card = match scope {
                    Some(s) => s.present_call(name, &args),
                    None => registry.present_call(name, &args),
                };
                let result_card = record.result.as_ref().map(|r| match scope {
                    Some(s) => s.present_result(name, &args, r),
                    None => registry.present_result(name, &args, r),
                });
                report.calls.push(ReplayedCall {
                    line: number,
                    id: record.call.id,
                    name: record.call.name,
                    arguments: args,
                    is_error: record.result.as_ref().map(|r| r.is_error),
                    call_card,
                    result_card,
                });
            }
            Err(e) => report.errors.push((number, e)),
        }
    }
    report
}

/// The page of a replayed log: its calls and its malformed lines, in log order.
pub(crate) fn html_page(report: &ReplayReport, title: &str) -> String {
    let mut page = CardPage::new(title);
    let mut errors = report.errors.iter().peekable();
    for call in &report.calls {
        while let Some((line, error)) = errors.next_if(|(line, _)| *line < call.line) {
            page.push_malformed(*line as u64, error);
        }
        page.push_call(page_call(call));
    }
    for (line, error) in errors {
        page.push_malformed(*line as u64, error);
    }
    page.render()
}

/// The page of one call that has just run.
pub(crate) fn call_page(call: &ReplayedCall) -> String {
    let mut page = CardPage::new(format!("{} ({})", call.name, call.id));
    page.push_call(page_call(call));
    page.render()
}

fn page_call(call: &ReplayedCall) -> PageCall {
    let mut entry = PageCall::new(call.name.as_str())
        .with_id(call.id.as_str())
        .with_arguments(call.arguments.clone())
        .with_call_card(&call.call_card)
        .with_error(call.is_error == Some(true));
    if call.line > 0 {
        entry = entry.with_line(call.line as u64);
    }
    if let Some(card) = &call.result_card {
        entry = entry.with_result_card(card);
    }
    entry
}
