//! A built-in `tool_search` tool: ranked search over the deferred tools of the calling
//! scope, for providers and hosts without server-side tool search.
//!
//! A tool marked `#[tool(defer_loading)]` (or [`ToolDefinition::with_defer_loading`]) is
//! meant to stay out of a model's initial context. Where the provider searches deferred
//! tools itself (Anthropic, OpenAI Responses), the export marks them and the provider's
//! tool search finds them. Elsewhere, register this tool ([`register`]), export only the
//! loaded tools ([`export_loaded`](crate::export::export_loaded)) and add what the model
//! found to the next request:
//!
//! ```
//! # use dsh_runtime::{Registry, ToolCall, tool};
//! # use dsh_providers::{tool_search, export::{self, Target}};
//! /// Get the current weather for a city.
//! #[tool(read_only, defer_loading)]
//! async fn get_weather(
//!     /// The city name.
//!     city: String,
//! ) -> String { format!("sunny in {city}") }
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let registry = Registry::new();
//! let _weather = registry.register(GetWeather).unwrap();
//! let _search = tool_search::register(&registry).unwrap();
//! let defs = registry.view().definitions();
//! // The first request: `tool_search` only (the weather tool is deferred).
//! let first = export::export_loaded(&defs, &[] as &[&str], Target::OpenAiChat);
//! assert_eq!(first.tools.len(), 1);
//! // The model searches ...
//! let call = ToolCall::new("c1", tool_search::NAME, r#"{"query":"weather in a city"}"#);
//! let result = registry.execute(call).await;
//! let found = result.value().map(tool_search::found_names).unwrap_or_default();
//! assert_eq!(found, ["get_weather"]);
//! // ... and the next request includes what it found.
//! let next = export::export_loaded(&defs, &found, Target::OpenAiChat);
//! assert_eq!(next.tools.len(), 2);
//! # });
//! ```
//!
//! # Ranking
//!
//! `bm25` (the default) ranks the deferred tools by Okapi BM25 (k1 = 1.2, b = 0.75) of the
//! query's terms over each tool's name (counted twice), description, and parameter names
//! and descriptions (nested ones included). Text is split into lower-case terms at
//! anything that is not a letter or digit and at camelCase boundaries (`getWeather`,
//! `get_weather` and `get weather` give the same terms), and a final `s` is dropped from
//! terms longer than three characters (`files` finds `file`). `regex` matches a regular
//! expression (Rust `regex` syntax, unanchored, case-sensitive unless it starts with
//! `(?i)`, at most 200 characters as Anthropic's regex search) against the same fields;
//! a match in the name ranks first, then in the description, then in a parameter. Equal
//! scores are ordered by name, so the ranking is deterministic.
//!
//! The index of a view is built once per registry change (the
//! [`changes`](dsh_runtime::Registry::changes) counter) and scope, not per query.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use dsh_runtime::json::{Object, Value};
use dsh_runtime::schema::{Kind, Schema};
use dsh_runtime::{AgentScopeId, ToolDefinition, ToolError};
use dsh_runtime::{PipelineCode, Registry};
use dsh_runtime::{RawTool, RegisterError, RegistrationHandle, ToolDescriptor, WeakRegistry};

/// The name of the built-in search tool.
pub const NAME: &str = "tool_search";

/// The most results one search returns.
pub const MAX_LIMIT: usize = 50;

/// The results a search returns when the call names no `limit`.
pub const DEFAULT_LIMIT: usize = 5;

/// The longest regular expression `regex` mode takes (Anthropic's regex search limit).
pub const MAX_REGEX_LEN: usize = 200;

const K1: f64 = 1.2;
const B: f64 = 0.75;
/// How many times a name's terms count (a name says more about a tool than a sentence of
/// its description).
const NAME_WEIGHT: u32 = 2;
/// The compiled size limit of a `regex` query.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// How a query is matched.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Mode {
    /// Natural-language terms, ranked by BM25.
    #[default]
    Bm25,
    /// A regular expression.
    Regex,
}

impl Mode {
    /// The mode's name in the tool's `mode` argument.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Bm25 => "bm25",
            Mode::Regex => "regex",
        }
    }
}

/// Why a search could not run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SearchError {
    /// `regex` mode: the query is not a valid regular expression (or is too long or too
    /// large once compiled); the reason.
    #[error("`query` is not a valid regular expression: {0}")]
    InvalidRegex(String),
}

/// One search result.
#[derive(Clone, Copy, Debug)]
pub struct Match<'a> {
    /// The found tool's definition.
    pub definition: &'a ToolDefinition,
    /// Its score (BM25, or 3/2/1 for a regex match in the name/description/a parameter).
    pub score: f64,
}

/// One indexed tool.
#[derive(Debug)]
struct Doc {
    definition: ToolDefinition,
    /// The parameter names and descriptions, one per line (for `regex`).
    params_text: String,
    /// The weighted number of terms.
    len: f64,
}

/// A search index over the deferred tools of a set of definitions.
#[derive(Debug)]
pub struct ToolIndex {
    docs: Vec<Doc>,
    /// Term to `(doc, weighted term frequency)`, docs ascending.
    postings: rustc_hash::FxHashMap<String, Vec<(u32, u32)>>,
    avg_len: f64,
}

impl ToolIndex {
    /// Index the deferred tools among `definitions` (the others are not searchable: the
    /// model has them already).
    pub fn new<'a, I>(definitions: I) -> ToolIndex
    where
        I: IntoIterator<Item = &'a ToolDefinition>,
    {
        let mut docs = Vec::new();
        let mut postings: rustc_hash::FxHashMap<String, Vec<(u32, u32)>> = Default::default();
        let mut total = 0.0;
        for def in definitions.into_iter().filter(|d| d.defer_loading) {
            let Ok(id) = u32::try_from(docs.len()) else {
                break;
            };
            let mut params_text = String::new();
            match &def.verbatim_parameters {
                Some(schema) => verbatim_param_text(schema.as_value(), &mut params_text, 0),
                None => param_text(&def.parameters, &mut params_text),
            }
            let mut tf: rustc_hash::FxHashMap<String, u32> = Default::default();
            for t in terms(&def.name) {
                *tf.entry(t).or_default() += NAME_WEIGHT;
            }
            for t in terms(&def.description).chain(terms(&params_text)) {
                *tf.entry(t).or_default() += 1;
            }
            let len: u32 = tf.values().sum();
            for (term, n) in tf {
                postings.entry(term).or_default().push((id, n));
            }
            total += f64::from(len);
            docs.push(Doc {
                definition: def.clone(),
                params_text,
                len: f64::from(len),
            });
        }
        let avg_len = if docs.is_empty() {
            1.0
        } else {
            (total / docs.len() as f64).max(1.0)
        };
        // Documents were pushed in order, but the term maps were iterated in hash order:
        // keep every posting list ascending so the accumulation below is deterministic.
        for list in postings.values_mut() {
            list.sort_unstable_by_key(|&(d, _)| d);
        }
        ToolIndex {
            docs,
            postings,
            avg_len,
        }
    }

    /// How many tools are searchable.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// Whether no tool is searchable.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// The best `limit` matches of `query`, best first, equal scores by name. A `bm25`
    /// query without a known term finds nothing.
    pub fn search(
        &self,
        query: &str,
        mode: Mode,
        limit: usize,
    ) -> Result<Vec<Match<'_>>, SearchError> {
        let mut scored = match mode {
            Mode::Bm25 => self.bm25(query),
            Mode::Regex => self.regex(query)?,
        };
        scored.sort_by(|&(a, sa), &(b, sb)| {
            sb.total_cmp(&sa).then_with(|| {
                self.docs[a as usize]
                    .definition
                    .name
                    .cmp(&self.docs[b as usize].definition.name)
            })
        });
        scored.truncate(limit);
        Ok(scored
            .into_iter()
            .map(|(d, score)| Match {
                definition: &self.docs[d as usize].definition,
                score,
            })
            .collect())
    }

    fn bm25(&self, query: &str) -> Vec<(u32, f64)> {
        let mut seen = Vec::new();
        let mut scores = vec![0.0f64; self.docs.len()];
        let mut touched = Vec::new();
        let n = self.docs.len() as f64;
        for term in terms(query) {
            if seen.contains(&term) {
                continue;
            }
            let Some(list) = self.postings.get(&term) else {
                seen.push(term);
                continue;
            };
            seen.push(term);
            let df = list.len() as f64;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(d, tf) in list {
                let tf = f64::from(tf);
                let len = self.docs[d as usize].len;
                let s = idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len / self.avg_len));
                let slot = &mut scores[d as usize];
                if *slot == 0.0 {
                    touched.push(d);
                }
                *slot += s;
            }
        }
        touched
            .into_iter()
            .map(|d| (d, scores[d as usize]))
            .filter(|&(_, s)| s > 0.0)
            .collect()
    }

    fn regex(&self, query: &str) -> Result<Vec<(u32, f64)>, SearchError> {
        let chars = query.chars().count();
        if chars > MAX_REGEX_LEN {
            return Err(SearchError::InvalidRegex(format!(
                "{chars} characters, at most {MAX_REGEX_LEN} are allowed"
            )));
        }
        let re = regex::RegexBuilder::new(query)
            .size_limit(REGEX_SIZE_LIMIT)
            .build()
            .map_err(|e| SearchError::InvalidRegex(e.to_string()))?;
        Ok(self
            .docs
            .iter()
            .enumerate()
            .filter_map(|(i, doc)| {
                let def = &doc.definition;
                let score = if re.is_match(&def.name) {
                    3.0
                } else if re.is_match(&def.description) {
                    2.0
                } else if re.is_match(&doc.params_text) {
                    1.0
                } else {
                    return None;
                };
                Some((u32::try_from(i).ok()?, score))
            })
            .collect())
    }
}

/// The parameter names and descriptions of a schema, nested ones included, one per line.
/// [`param_text`] for a verbatim JSON Schema document: the names and descriptions of
/// the properties it declares, through `properties`, `items`, the unions and the `$defs`
/// its references name (to the schema nesting limit).
fn verbatim_param_text(schema: &dsh_runtime::json::Value, out: &mut String, depth: usize) {
    use dsh_runtime::json::Value;
    if depth > dsh_runtime::schema::MAX_SCHEMA_DEPTH {
        return;
    }
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, p) in props.iter() {
            out.push_str(name);
            out.push('\n');
            if let Some(d) = p.get("description").and_then(Value::as_str) {
                out.push_str(d);
                out.push('\n');
            }
            verbatim_param_text(p, out, depth + 1);
        }
    }
    if let Some(items) = schema.get("items") {
        verbatim_param_text(items, out, depth + 1);
    }
    for key in ["$defs", "definitions"] {
        for d in schema
            .get(key)
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|o| o.values())
        {
            verbatim_param_text(d, out, depth + 1);
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        for b in schema
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(d) = b.get("description").and_then(Value::as_str) {
                out.push_str(d);
                out.push('\n');
            }
            verbatim_param_text(b, out, depth + 1);
        }
    }
}

fn param_text(schema: &Schema, out: &mut String) {
    match &schema.kind {
        Kind::Object(o) => {
            for p in &o.properties {
                out.push_str(&p.name);
                out.push('\n');
                if let Some(d) = &p.schema.description {
                    out.push_str(d);
                    out.push('\n');
                }
                param_text(&p.schema, out);
            }
        }
        Kind::Array(a) => {
            if let Some(items) = &a.items {
                param_text(items, out);
            }
        }
        Kind::OneOf(branches) => {
            for b in branches {
                if let Some(d) = &b.description {
                    out.push_str(d);
                    out.push('\n');
                }
                param_text(b, out);
            }
        }
        _ => {}
    }
}

/// The lower-case terms of `text`: split at non-alphanumerics and camelCase boundaries, a
/// final `s` dropped from terms longer than three characters.
fn terms(text: &str) -> impl Iterator<Item = String> + '_ {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in text.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_numeric();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words.into_iter().map(|mut w| {
        if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") {
            w.pop();
        }
        w
    })
}

/// The names of the tools a `tool_search` result found, in rank order (empty for any
/// other value): what [`export_loaded`](crate::export::export_loaded) adds to the next
/// request.
pub fn found_names(result: &Value) -> Vec<String> {
    result
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| t.get("name").and_then(Value::as_str).map(str::to_string))
        .collect()
}

#[derive(Default)]
struct Cache {
    generation: u64,
    by_scope: HashMap<Option<AgentScopeId>, Arc<ToolIndex>>,
}

struct State {
    registry: WeakRegistry,
    changes: watch::Receiver<u64>,
    cache: Mutex<Cache>,
}

/// The search over one registry's views, with its indexes (one per scope, rebuilt after a
/// registry change). Cloning shares the indexes.
#[derive(Clone)]
pub struct ToolSearch {
    state: Arc<State>,
}

impl fmt::Debug for ToolSearch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolSearch").finish_non_exhaustive()
    }
}

impl ToolSearch {
    /// The search over `registry`'s views. It does not keep the registry alive (it may be
    /// registered in it).
    pub fn new(registry: &Registry) -> ToolSearch {
        ToolSearch {
            state: Arc::new(State {
                registry: registry.downgrade(),
                changes: registry.changes(),
                cache: Mutex::new(Cache::default()),
            }),
        }
    }

    /// The index of the deferred tools a call from `agent` sees (`None`: the global view),
    /// built on first use after each registry change; `None` once the registry is gone.
    pub fn index(&self, agent: Option<AgentScopeId>) -> Option<Arc<ToolIndex>> {
        // The generation is read before the view: a change in between makes the next
        // call rebuild, never keeps a stale index.
        if self.state.changes.has_changed().is_err() {
            return None; // the registry, which holds the sender, is gone
        }
        let generation = *self.state.changes.borrow();
        {
            let cache = self.lock();
            if cache.generation == generation
                && let Some(index) = cache.by_scope.get(&agent)
            {
                return Some(index.clone());
            }
        }
        let registry = self.state.registry.upgrade()?;
        let index = Arc::new(ToolIndex::new(&registry.view_of(agent).definitions()));
        let mut cache = self.lock();
        if cache.generation != generation {
            cache.generation = generation;
            cache.by_scope.clear();
        }
        cache.by_scope.insert(agent, index.clone());
        Some(index)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Cache> {
        // The cache holds no invariant a panic could break half-way.
        self.state
            .cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Run one call: `{"query", "mode"?, "limit"?}` from `agent`, answered with
    /// `{"tools": [{"name", "description", "parameters"}, …]}`.
    fn call(&self, args: &Value, agent: Option<AgentScopeId>) -> Result<Value, ToolError> {
        let query = args.get("query").and_then(Value::as_str).unwrap_or("");
        let mode = match args.get("mode").and_then(Value::as_str) {
            Some("regex") => Mode::Regex,
            _ => Mode::Bm25,
        };
        let limit = args
            .get("limit")
            .and_then(Value::as_u64)
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(DEFAULT_LIMIT)
            .clamp(1, MAX_LIMIT);
        let index = self
            .index(agent)
            .ok_or_else(|| ToolError::new("tool_search: the registry it searches was dropped"))?;
        let found = index.search(query, mode, limit).map_err(|e| {
            ToolError::with_code(
                PipelineCode::InvalidArgs.as_str(),
                format!("tool_search: {e} (mode `{}`)", mode.name()),
            )
        })?;
        let tools: Vec<Value> = found
            .iter()
            .map(|m| {
                let d = m.definition;
                ToolDescriptor::new(
                    d.name.as_ref(),
                    d.description.to_string(),
                    d.parameters.clone(),
                )
                .to_json()
            })
            .collect();
        let mut o = Object::new();
        o.insert("tools", Value::from(tools));
        Ok(Value::Object(o))
    }

    /// The `tool_search` tool over this search, to register where the model calls from
    /// (read-only, parallel-safe, not itself deferred).
    pub fn tool(&self) -> RawTool {
        let search = self.clone();
        RawTool::from_schemas(
            NAME,
            DESCRIPTION,
            parameters(),
            output(),
            move |args, cx| {
                let result = search.call(&args, cx.agent());
                async move { result }
            },
        )
        .with_annotations({
            let mut annotations = dsh_runtime::ToolAnnotations::default();
            annotations.read_only = true;
            annotations.idempotent = true;
            annotations
        })
        .with_concurrency_safe(true)
    }
}

const DESCRIPTION: &str = "Search the tools that are not loaded yet and load the ones you need: returns the best matches' names, descriptions and parameter schemas; the found tools can be called from the next turn. `mode` \"bm25\" (default) takes natural-language keywords; \"regex\" takes a regular expression matched against names, descriptions and parameters (case-sensitive unless it starts with (?i)).";

fn parameters() -> Schema {
    use dsh_runtime::schema::Property;
    let mut query = Schema::string();
    if let Kind::String(rules) = &mut query.kind {
        rules.min_length = Some(1);
        rules.max_length = Some(1000);
    }
    let query =
        query.with_description("What the tool should do (bm25), or a regular expression (regex).");
    let mode = Schema::string_enum(["bm25", "regex"])
        .with_description("How the query is matched (default: bm25).");
    let limit = Schema::integer_range(Some(1), Some(MAX_LIMIT as i128))
        .with_description("The most tools to return (default: 5).");
    Schema::closed_object(vec![
        Property::new("query", query, true),
        Property::new("mode", mode, false),
        Property::new("limit", limit, false),
    ])
}

fn output() -> Schema {
    use dsh_runtime::schema::Property;
    Schema::closed_object(vec![Property::new(
        "tools",
        Schema::array(Some(Arc::new(Schema::json()))),
        true,
    )])
}

/// Register the `tool_search` tool in `registry`'s global view: a call searches the
/// deferred tools of the view it is made from.
pub fn register(registry: &Registry) -> Result<RegistrationHandle, RegisterError> {
    registry.register(ToolSearch::new(registry).tool())
}
