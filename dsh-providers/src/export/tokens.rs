//! What the exported definitions cost in tokens, counted with the o200k encoding
//! (feature `tokens`).
//!
//! [`token_report`] exports the tools for each [`Target`] and counts, with o200k
//! (`o200k_base`, the encoding of OpenAI's GPT-4o, GPT-4.1, GPT-5 and o-series models),
//! the compact JSON text of each tool's entry, exactly as the request carries it, and
//! of the whole fragment as sent ([`Export::fragment`]: the `tools` array, for Gemini its
//! `functionDeclarations` wrapper, for MCP the `tools/list` result), so brackets and the
//! commas between entries are counted too.
//!
//! # What the figures are, and are not
//!
//! - **OpenAI targets** are labelled [`Accuracy::Exact`]: o200k is the encoding their
//!   models read. The count is that of the JSON we send; OpenAI renders function
//!   definitions into its own prompt format before the model reads them, and adds
//!   framing per tool and per request that it does not publish, so an invoice differs
//!   from these figures by that framing.
//! - **Anthropic, Gemini and MCP** are labelled [`Accuracy::O200kApproximation`]: Claude
//!   and Gemini use tokenizers of their own that are not public, and an MCP tool list
//!   reaches whatever model the client uses. o200k gives a comparable figure, not the
//!   provider's; Anthropic also adds a fixed system prompt when tools are present, and
//!   every provider adds per-tool framing we do not know.
//! - **Deferred tools** (`defer_loading: true`, on the targets that can defer one) are
//!   in the request but not in the model's context: Anthropic's tool search guide says
//!   deferred tools are not loaded into context until a search returns them, and
//!   OpenAI's tool search works the same way. Each [`ToolTokens`] keeps the tokens of its
//!   entry (what loading it costs later) and says whether it is deferred; the report's
//!   [`TargetTokens::upfront`] is the fragment without the deferred entries, what every
//!   request pays, beside [`TargetTokens::request`], the fragment as sent.
//!
//! ```
//! # use dsh_runtime::{Registry, tool};
//! # use dsh_providers::export::{Target, tokens};
//! /// Add two numbers.
//! #[tool(read_only)]
//! async fn add(a: i64, b: i64) -> i64 { a + b }
//! let registry = Registry::new();
//! let _add = registry.register(Add).unwrap();
//! let report = tokens::token_report(&registry.view().definitions(), &[Target::OpenAiResponses, Target::Anthropic]);
//! let openai = report.target(Target::OpenAiResponses).unwrap();
//! assert_eq!(openai.accuracy, tokens::Accuracy::Exact);
//! let entry = dsh_providers::export::export_registry(&registry, Target::OpenAiResponses).tools[0].definition.to_string();
//! assert_eq!(openai.tools[0].tokens, tokens::count(&entry));
//! ```

use std::fmt;

use dsh_runtime::ToolDefinition;
use dsh_runtime::json::{Object, Value};

use super::{Export, ExportError, Target, export};

/// The name of the encoding every count here uses.
pub const ENCODING: &str = "o200k_base";

/// The number of o200k tokens of `text`, as ordinary text (special-token markers such as
/// `<|endoftext|>` in a description are counted as the characters they are, as a
/// provider treats text it is sent).
///
/// The vocabulary ships inside the binary; the first call in a process loads it (tens of
/// milliseconds in an optimized build).
///
/// ```
/// assert_eq!(dsh_providers::export::tokens::count(""), 0);
/// assert_eq!(dsh_providers::export::tokens::count("hello world"), 2);
/// ```
pub fn count(text: &str) -> usize {
    tiktoken_rs::o200k_base_singleton()
        .encode_ordinary(text)
        .len()
}

/// How close an o200k count is to what the target's provider counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Accuracy {
    /// The provider's models read o200k (OpenAI): the count of the JSON sent is exact,
    /// before the provider's own per-tool framing.
    Exact,
    /// The provider's tokenizer is another, unpublished one (Anthropic, Gemini) or
    /// unknown (MCP: the client's model): o200k stands in for it.
    O200kApproximation,
}

impl Accuracy {
    /// The accuracy of o200k counts for `target`.
    pub fn of(target: Target) -> Accuracy {
        match target {
            Target::OpenAiResponses
            | Target::OpenAiResponsesStrict
            | Target::OpenAiChat
            | Target::OpenAiChatStrict => Accuracy::Exact,
            Target::Anthropic
            | Target::AnthropicStrict
            | Target::GeminiJsonSchema
            | Target::GeminiOpenApi
            | Target::Mcp2025_11_25
            | Target::Mcp2026_07_28 => Accuracy::O200kApproximation,
        }
    }

    /// `exact` or `o200k approximation`.
    pub fn label(self) -> &'static str {
        match self {
            Accuracy::Exact => "exact",
            Accuracy::O200kApproximation => "o200k approximation",
        }
    }
}

impl fmt::Display for Accuracy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// One exported tool's cost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolTokens {
    /// The tool's name.
    pub name: String,
    /// o200k tokens of the compact JSON of the tool's entry, as the request carries it.
    pub tokens: usize,
    /// Bytes of that JSON text.
    pub bytes: usize,
    /// Whether the entry is sent deferred (`defer_loading: true`): the provider keeps it
    /// out of the model's context until its tool search loads it, so it costs
    /// [`ToolTokens::tokens`] only then.
    pub deferred: bool,
}

impl ToolTokens {
    /// What the tool costs in every request: 0 when deferred, else [`ToolTokens::tokens`].
    pub fn upfront(&self) -> usize {
        if self.deferred { 0 } else { self.tokens }
    }
}

/// The cost of one target's export.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetTokens {
    /// The target.
    pub target: Target,
    /// How close the counts are to the provider's.
    pub accuracy: Accuracy,
    /// The exported tools, in publication order.
    pub tools: Vec<ToolTokens>,
    /// o200k tokens of the whole fragment as sent ([`Export::fragment`], compact JSON):
    /// every entry, deferred ones included, with the brackets and separators between
    /// them.
    pub request: usize,
    /// o200k tokens of the fragment without the deferred entries: what the model reads
    /// in every request. Equal to [`TargetTokens::request`] when nothing is deferred.
    pub upfront: usize,
    /// Tools the target could not take (left out of the counts), with the reason.
    pub errors: Vec<ExportError>,
}

impl TargetTokens {
    /// Count an export as it is.
    pub fn of(export: &Export) -> TargetTokens {
        let tools: Vec<ToolTokens> = export
            .tools
            .iter()
            .map(|t| {
                let text = t.definition.to_string();
                ToolTokens {
                    name: t.name.clone(),
                    tokens: count(&text),
                    bytes: text.len(),
                    deferred: is_deferred(&t.definition),
                }
            })
            .collect();
        let request = count(&export.fragment().to_string());
        let upfront = if tools.iter().any(|t| t.deferred) {
            let loaded = Export {
                target: export.target,
                tools: export
                    .tools
                    .iter()
                    .filter(|t| !is_deferred(&t.definition))
                    .cloned()
                    .collect(),
                warnings: Vec::new(),
                errors: Vec::new(),
                // The provider's tool search is sent in every request.
                search: export.search.clone(),
            };
            count(&loaded.fragment().to_string())
        } else {
            request
        };
        TargetTokens {
            target: export.target,
            accuracy: Accuracy::of(export.target),
            tools,
            request,
            upfront,
            errors: export.errors.clone(),
        }
    }

    /// The counts of tool `name`.
    pub fn tool(&self, name: &str) -> Option<&ToolTokens> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// The sum of the tools' own counts (without the fragment's brackets and
    /// separators; deferred tools included).
    pub fn sum(&self) -> usize {
        self.tools.iter().map(|t| t.tokens).sum()
    }
}

fn is_deferred(entry: &Value) -> bool {
    entry
        .as_object()
        .and_then(|o| o.get("defer_loading"))
        .is_some_and(|v| *v == Value::Bool(true))
}

/// The cost of a tool set for several targets: see the [module docs](self).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenReport {
    /// One entry per target, in the order asked.
    pub targets: Vec<TargetTokens>,
}

/// Export `definitions` for each of `targets` and count what each request carries.
pub fn token_report(definitions: &[ToolDefinition], targets: &[Target]) -> TokenReport {
    TokenReport {
        targets: targets
            .iter()
            .map(|&t| TargetTokens::of(&export(definitions, t)))
            .collect(),
    }
}

/// [`token_report`] of what a view publishes.
pub fn token_report_view(view: &dsh_runtime::ToolView, targets: &[Target]) -> TokenReport {
    token_report(&view.definitions(), targets)
}

impl TokenReport {
    /// The counts for `target`, when it was asked for.
    pub fn target(&self, target: Target) -> Option<&TargetTokens> {
        self.targets.iter().find(|t| t.target == target)
    }

    /// The report as JSON: `{"encoding", "targets": [{"target", "accuracy", "tools":
    /// [{"name", "tokens", "bytes", "deferred"}], "request", "upfront", "errors"}]}`.
    pub fn to_json(&self) -> Value {
        let mut root = Object::new();
        root.insert("encoding", Value::from(ENCODING));
        let targets = self
            .targets
            .iter()
            .map(|t| {
                let mut o = Object::new();
                o.insert("target", Value::from(t.target.name()));
                o.insert("accuracy", Value::from(t.accuracy.label()));
                let tools = t
                    .tools
                    .iter()
                    .map(|tool| {
                        let mut e = Object::new();
                        e.insert("name", Value::from(tool.name.as_str()));
                        e.insert("tokens", Value::from(tool.tokens as u64));
                        e.insert("bytes", Value::from(tool.bytes as u64));
                        e.insert("deferred", Value::Bool(tool.deferred));
                        Value::Object(e)
                    })
                    .collect::<Vec<_>>();
                o.insert("tools", Value::from(tools));
                o.insert("request", Value::from(t.request as u64));
                o.insert("upfront", Value::from(t.upfront as u64));
                let errors = t
                    .errors
                    .iter()
                    .map(|e| Value::from(e.to_string()))
                    .collect::<Vec<_>>();
                o.insert("errors", Value::from(errors));
                Value::Object(o)
            })
            .collect::<Vec<_>>();
        root.insert("targets", Value::from(targets));
        Value::Object(root)
    }
}

impl fmt::Display for TokenReport {
    /// A plain-text table: one row per tool (in first-seen order across the targets),
    /// one column per target; `-` for a tool a target could not take, `*` after a
    /// deferred tool's count. Then the fragment as sent, what every request pays when
    /// something is deferred, each column's accuracy, and the reasons for every `-`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let any_deferred = self
            .targets
            .iter()
            .any(|t| t.tools.iter().any(|tool| tool.deferred));
        let rows = self.rows(any_deferred);
        self.write_table(f, &rows)?;
        if any_deferred {
            writeln!(
                f,
                "\n* deferred (defer_loading): sent, but kept out of the model's context until tool search loads it; \"up front\" leaves it out."
            )?;
        }
        for t in &self.targets {
            for e in &t.errors {
                writeln!(f, "\n- {}: {e}", t.target)?;
            }
        }
        Ok(())
    }
}

/// A row of the plain-text table: its name and one cell per target.
type Row = (String, Vec<String>);

impl TokenReport {
    /// Every tool's name, exported or refused, in first-seen order across the targets.
    fn tool_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for t in &self.targets {
            for tool in &t.tools {
                if !names.contains(&tool.name.as_str()) {
                    names.push(&tool.name);
                }
            }
            for e in &t.errors {
                if let Some(tool) = e.tool.as_deref()
                    && !names.contains(&tool)
                {
                    names.push(tool);
                }
            }
        }
        names
    }

    /// The plain-text table's rows: one per tool, then the request, what is paid up
    /// front (when something is deferred) and the accuracy.
    fn rows(&self, any_deferred: bool) -> Vec<Row> {
        let mut rows: Vec<Row> = self
            .tool_names()
            .iter()
            .map(|name| {
                let cells = self
                    .targets
                    .iter()
                    .map(|t| match t.tool(name) {
                        Some(tool) if tool.deferred => format!("{}*", tool.tokens),
                        Some(tool) => tool.tokens.to_string(),
                        None => "-".to_string(),
                    })
                    .collect();
                (name.to_string(), cells)
            })
            .collect();
        rows.push((
            "request".to_string(),
            self.targets.iter().map(|t| t.request.to_string()).collect(),
        ));
        if any_deferred {
            rows.push((
                "up front".to_string(),
                self.targets.iter().map(|t| t.upfront.to_string()).collect(),
            ));
        }
        rows.push((
            "accuracy".to_string(),
            self.targets
                .iter()
                .map(|t| match t.accuracy {
                    Accuracy::Exact => "exact".to_string(),
                    Accuracy::O200kApproximation => "approx.".to_string(),
                })
                .collect(),
        ));
        rows
    }

    /// The header and `rows`, each column as wide as its widest cell.
    fn write_table(&self, f: &mut fmt::Formatter<'_>, rows: &[Row]) -> fmt::Result {
        let first = rows
            .iter()
            .map(|(n, _)| n.len())
            .max()
            .unwrap_or(0)
            .max("tool".len());
        let widths: Vec<usize> = self
            .targets
            .iter()
            .enumerate()
            .map(|(i, t)| {
                rows.iter()
                    .map(|(_, cells)| cells[i].len())
                    .max()
                    .unwrap_or(0)
                    .max(t.target.name().len())
            })
            .collect();
        write!(f, "{:first$}", "tool")?;
        for (t, w) in self.targets.iter().zip(&widths) {
            write!(f, "  {:>w$}", t.target.name())?;
        }
        writeln!(f)?;
        for (name, cells) in rows {
            write!(f, "{name:first$}")?;
            for (cell, w) in cells.iter().zip(&widths) {
                write!(f, "  {cell:>w$}")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}
