//! Replaying a call log against the current registry, with a diff of outcomes.

use std::fmt;

use dsh_runtime::cards::ResultSummary;
use dsh_runtime::content::ContentBlock;
use dsh_runtime::json::{self, Value};
use dsh_runtime::log::LogRecord;
use dsh_runtime::{AgentScope, Registry, ToolCall};

/// What replaying one logged call gave, compared with what was logged.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Outcome {
    /// The same `isError`, content and presentation meta.
    Same,
    /// Still a success (or still a failure), with these fields differing.
    Changed(Vec<FieldChange>),
    /// Logged as a success, now a failure (with these fields differing).
    NowFailing(Vec<FieldChange>),
    /// Logged as a failure, now a success (with these fields differing).
    NowSucceeding(Vec<FieldChange>),
    /// The registry has no tool of that name (for the replaying caller).
    UnknownTool,
    /// The log holds no result for the call: it was run, with nothing to compare.
    NotLogged,
}

impl Outcome {
    /// Whether this is a difference a regression test reports (anything but
    /// [`Outcome::Same`] and [`Outcome::NotLogged`]).
    pub fn is_difference(&self) -> bool {
        !matches!(self, Outcome::Same | Outcome::NotLogged)
    }
}

/// One differing field of a replayed result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldChange {
    /// `isError`, `content` or `meta`.
    pub field: &'static str,
    /// The logged value (content as its text, others as JSON).
    pub logged: String,
    /// The value now.
    pub now: String,
}

/// The replay of one log record.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayedRecord {
    /// 1-based line number in the log.
    pub line: usize,
    /// The call id.
    pub id: String,
    /// The tool name.
    pub name: String,
    /// How the result compares with the logged one.
    pub outcome: Outcome,
}

/// What [`replay_log`] found: one entry per record, and the lines that are not records.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReplayDiff {
    /// Every record, in log order.
    pub records: Vec<ReplayedRecord>,
    /// Malformed lines: 1-based line number and why.
    pub malformed: Vec<(usize, String)>,
}

impl ReplayDiff {
    /// The records whose outcome differs from the log.
    pub fn differences(&self) -> impl Iterator<Item = &ReplayedRecord> {
        self.records.iter().filter(|r| r.outcome.is_difference())
    }

    /// Whether every record replayed as logged and every line was a record.
    pub fn is_empty(&self) -> bool {
        self.malformed.is_empty() && self.differences().next().is_none()
    }
}

impl fmt::Display for ReplayDiff {
    /// One paragraph per difference and malformed line; `no differences` when empty.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return write!(f, "no differences in {} records", self.records.len());
        }
        for r in self.differences() {
            let what = match &r.outcome {
                Outcome::Changed(_) => "changed",
                Outcome::NowFailing(_) => "now failing",
                Outcome::NowSucceeding(_) => "now succeeding",
                Outcome::UnknownTool => "unknown tool",
                _ => "",
            };
            writeln!(
                f,
                "line {} (call {:?}, tool {:?}): {what}",
                r.line, r.id, r.name
            )?;
            if let Outcome::Changed(c) | Outcome::NowFailing(c) | Outcome::NowSucceeding(c) =
                &r.outcome
            {
                for change in c {
                    writeln!(f, "  {}: logged {}", change.field, change.logged)?;
                    writeln!(f, "  {}: now    {}", change.field, change.now)?;
                }
            }
        }
        for (line, why) in &self.malformed {
            writeln!(f, "line {line}: not a log record: {why}")?;
        }
        Ok(())
    }
}

/// Run every call of `log` (JSON Lines in the host's `--log` format, see
/// [`dsh_runtime::log`]) against `registry`, as a caller in `scope` (or the global view), and
/// compare each result with the logged one: `isError`, the content and the presentation
/// meta. Calls run one after another, in log order.
///
/// ```
/// use dsh_testing::replay_log;
/// use dsh_runtime::{tool, Registry};
///
/// /// Add two numbers.
/// #[tool]
/// async fn add(a: i64, b: i64) -> i64 { a + b }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let registry = Registry::new();
/// let _add = registry.register(Add).unwrap();
/// let log = r#"{"call":{"id":"c1","name":"add","arguments":{"a":2,"b":3}},"result":{"content":[{"type":"text","text":"5"}],"isError":false}}"#;
/// let diff = replay_log(&registry, None, log).await;
/// assert!(diff.is_empty(), "{diff}");
/// # });
/// ```
pub async fn replay_log(registry: &Registry, scope: Option<&AgentScope>, log: &str) -> ReplayDiff {
    let mut diff = ReplayDiff::default();
    for (index, line) in log.lines().enumerate() {
        let number = index + 1;
        if line.trim().is_empty() {
            continue;
        }
        let record = match parse(line) {
            Ok(r) => r,
            Err(e) => {
                diff.malformed.push((number, e));
                continue;
            }
        };
        let known = match scope {
            Some(s) => s.view().get(&record.call.name).is_some(),
            None => registry.view().get(&record.call.name).is_some(),
        };
        let outcome = if known {
            let arguments: dsh_runtime::Arguments = match &record.call.arguments {
                Value::String(text) => text.to_string().into(),
                other => other.clone().into(),
            };
            let mut call = ToolCall::new(
                record.call.id.as_str(),
                record.call.name.as_str(),
                arguments,
            );
            if let Some(s) = scope {
                call = call.with_agent(s.id());
            }
            let now = registry.execute(call).await.summary();
            match &record.result {
                Some(logged) => compare(logged, &now),
                None => Outcome::NotLogged,
            }
        } else {
            Outcome::UnknownTool
        };
        diff.records.push(ReplayedRecord {
            line: number,
            id: record.call.id,
            name: record.call.name,
            outcome,
        });
    }
    diff
}

fn parse(line: &str) -> Result<LogRecord, String> {
    let value = json::parse(line).map_err(|e| e.to_string())?;
    json::from_value(&value).map_err(|e| e.to_string())
}

fn compare(logged: &ResultSummary, now: &ResultSummary) -> Outcome {
    let mut changes = Vec::new();
    if logged.is_error != now.is_error {
        changes.push(FieldChange {
            field: "isError",
            logged: logged.is_error.to_string(),
            now: now.is_error.to_string(),
        });
    }
    if logged.content != now.content {
        changes.push(FieldChange {
            field: "content",
            logged: content_text(&logged.content),
            now: content_text(&now.content),
        });
    }
    if logged.meta != now.meta {
        let show = |m: &Option<Value>| m.as_ref().map_or("(none)".to_string(), Value::to_string);
        changes.push(FieldChange {
            field: "meta",
            logged: show(&logged.meta),
            now: show(&now.meta),
        });
    }
    match (logged.is_error, now.is_error) {
        _ if changes.is_empty() => Outcome::Same,
        (false, true) => Outcome::NowFailing(changes),
        (true, false) => Outcome::NowSucceeding(changes),
        _ => Outcome::Changed(changes),
    }
}

/// Content as one JSON string of its text blocks (other blocks named by their type).
fn content_text(content: &[ContentBlock]) -> String {
    let text: Vec<String> = content
        .iter()
        .map(|b| match b.as_text() {
            Some(t) => t.to_string(),
            None => "[image]".to_string(),
        })
        .collect();
    crate::json_quote(&text.join("\n"))
}
