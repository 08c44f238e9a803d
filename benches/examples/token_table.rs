//! The token table of BENCHMARKS.md: o200k tokens of the reference tools' definitions as
//! our export publishes them per target, against the same tools as rmcp (schemars) and
//! FastMCP (pydantic) publish them, all read from the files `benches/tokens/run.sh`
//! wrote in one run and counted with the same tokenizer
//! (`dsh_providers::export::tokens::count`).
//!
//! `cargo run -p dsh-benches --features peers --example token_table -- DIR` reads
//! `DIR/ours-<target>.json` (the output of `dsh-tools export --provider <target>`),
//! `DIR/rmcp.json` and `DIR/fastmcp.json` (`tools/list` results), checks that the three
//! define the same tools (names, descriptions, parameter names, required parameters) and
//! prints a Markdown table. Every text is counted as compact JSON in the key order it was
//! published in.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use dsh_providers::export::tokens::count;
use dsh_runtime::json::{self, Object, Value};

/// Our targets in the table, by `dsh-tools export --provider` name.
const OURS: [&str; 8] = [
    "openai",
    "openai-strict",
    "anthropic",
    "anthropic-strict",
    "gemini",
    "gemini-openapi",
    "mcp",
    "mcp-2026-07-28",
];

/// One published tool list: the whole document and its entries by name.
struct List {
    label: String,
    whole: Value,
    entries: Vec<(String, Value)>,
}

fn load(dir: &Path, file: &str, label: &str) -> Result<List, String> {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let whole = json::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let list = if let Some(tools) = whole.get("tools") {
        tools
    } else if let Some(decls) = whole
        .get_index(0)
        .and_then(|d| d.get("functionDeclarations"))
    {
        decls
    } else {
        &whole
    };
    let array = list
        .as_array()
        .ok_or_else(|| format!("{}: no list of tools", path.display()))?;
    let mut entries = Vec::new();
    for (i, entry) in array.iter().enumerate() {
        let name = entry
            .get("name")
            .or_else(|| entry.get("function").and_then(|f| f.get("name")))
            .and_then(Value::as_str)
            .ok_or_else(|| format!("{}: tools[{i}]: no name", path.display()))?;
        entries.push((name.to_string(), entry.clone()));
    }
    Ok(List {
        label: label.to_string(),
        whole,
        entries,
    })
}

impl List {
    fn get(&self, name: &str) -> Option<&Value> {
        self.entries.iter().find(|(n, _)| n == name).map(|(_, e)| e)
    }
}

/// The entry without its `outputSchema`: the input side every library derives from the
/// same parameters.
fn input_side(entry: &Value) -> Value {
    match entry {
        Value::Object(o) => {
            let mut o = o.clone();
            o.remove("outputSchema");
            Value::Object(o)
        }
        other => other.clone(),
    }
}

/// What the three must agree on for a tool: its description, its parameters with their
/// descriptions, and which parameters are required. (The JSON types are spelt
/// differently by each library, e.g. an optional integer as `["integer","null"]`.)
type Shape = (
    Option<String>,
    BTreeMap<String, Option<String>>,
    BTreeSet<String>,
);

fn shape(entry: &Value) -> Shape {
    let schema = entry.get("inputSchema");
    let params = match schema.and_then(|s| s.get("properties")) {
        Some(Value::Object(o)) => o
            .iter()
            .map(|(k, v)| {
                let description = v.get("description").and_then(Value::as_str);
                (k.to_string(), description.map(str::to_string))
            })
            .collect(),
        _ => BTreeMap::new(),
    };
    let required = match schema.and_then(|s| s.get("required")) {
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => BTreeSet::new(),
    };
    (
        entry
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_string),
        params,
        required,
    )
}

/// A transform of one published entry, for the breakdown of where tokens go.
type Strip = fn(&Value) -> Value;

/// Apply `f` to every parameter schema of an entry (`inputSchema.properties.*`).
fn map_params(entry: &Value, f: impl Fn(&Object) -> Object) -> Value {
    let mut e = match entry {
        Value::Object(o) => o.clone(),
        other => return other.clone(),
    };
    if let Some(Value::Object(schema)) = e.get_mut("inputSchema")
        && let Some(Value::Object(props)) = schema.get_mut("properties")
    {
        let mapped: Object = props
            .iter()
            .map(|(k, v)| match v {
                Value::Object(p) => (k.to_string(), Value::Object(f(p))),
                other => (k.to_string(), other.clone()),
            })
            .collect();
        *props = mapped;
    }
    Value::Object(e)
}

fn remove_key(entry: &Value, key: &str) -> Value {
    match entry {
        Value::Object(o) => {
            let mut o = o.clone();
            o.remove(key);
            Value::Object(o)
        }
        other => other.clone(),
    }
}

fn remove_schema_key(entry: &Value, key: &str) -> Value {
    let mut e = match entry {
        Value::Object(o) => o.clone(),
        other => return other.clone(),
    };
    if let Some(Value::Object(schema)) = e.get_mut("inputSchema") {
        schema.remove(key);
    }
    Value::Object(e)
}

fn is_null_type(v: &Value) -> bool {
    v.as_str() == Some("null")
}

/// rmcp: `"$schema"` on every input schema.
fn no_dollar_schema(e: &Value) -> Value {
    remove_schema_key(e, "$schema")
}

/// rmcp: schemars' `"format"` (`uint64`, `double`) on numbers.
fn no_format(e: &Value) -> Value {
    map_params(e, |p| {
        let mut p = p.clone();
        p.remove("format");
        p
    })
}

/// rmcp: an `Option<T>` as `"type": [T, "null"]`; read as `T` alone.
fn no_null_type(e: &Value) -> Value {
    map_params(e, |p| {
        let mut p = p.clone();
        if let Some(Value::Array(types)) = p.get("type") {
            let kept: Vec<Value> = types.iter().filter(|t| !is_null_type(t)).cloned().collect();
            if kept.len() == 1 {
                p.insert("type", kept[0].clone());
            }
        }
        p
    })
}

/// FastMCP: `"_meta": {"fastmcp": {"tags": []}}` on every tool.
fn no_meta(e: &Value) -> Value {
    remove_key(e, "_meta")
}

/// FastMCP: a `"title"` made from the function name.
fn no_title(e: &Value) -> Value {
    remove_key(e, "title")
}

/// FastMCP: `"additionalProperties": false` on every input schema.
fn no_closed_root(e: &Value) -> Value {
    remove_schema_key(e, "additionalProperties")
}

/// FastMCP: an optional parameter as `"anyOf": [T, {"type": "null"}], "default": null`;
/// read as `T` alone.
fn no_null_branch(e: &Value) -> Value {
    map_params(e, |p| {
        let mut out = Object::new();
        for (k, v) in p.iter() {
            match (k, v) {
                ("anyOf", Value::Array(branches)) => {
                    let kept: Vec<&Value> = branches
                        .iter()
                        .filter(|b| !b.get("type").is_some_and(is_null_type))
                        .collect();
                    match kept.as_slice() {
                        [Value::Object(only)] => {
                            for (bk, bv) in only.iter() {
                                out.insert(bk, bv.clone());
                            }
                        }
                        _ => {
                            out.insert(k, v.clone());
                        }
                    }
                }
                ("default", Value::Null) => {}
                _ => {
                    out.insert(k, v.clone());
                }
            }
        }
        out
    })
}

/// FastMCP: the `{"result": …}` outputSchema of a text result.
fn no_output(e: &Value) -> Value {
    remove_key(e, "outputSchema")
}

/// A peer's sum over its entries as published, what each step removed, and the sum left.
type Breakdown = (usize, Vec<(String, usize)>, usize);

/// The sum over `list`'s entries after each of `steps` in turn, with what each step
/// removed.
fn breakdown(list: &List, steps: &[(&str, Strip)]) -> Breakdown {
    let mut entries: Vec<Value> = list.entries.iter().map(|(_, e)| e.clone()).collect();
    let sum = |es: &[Value]| es.iter().map(|e| count(&e.to_string())).sum::<usize>();
    let start = sum(&entries);
    let mut last = start;
    let mut parts = Vec::new();
    for (what, step) in steps {
        entries = entries.iter().map(step).collect();
        let now = sum(&entries);
        parts.push((what.to_string(), last.saturating_sub(now)));
        last = now;
    }
    (start, parts, last)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `--count FILE...`: the o200k tokens of each file's text as it is (for looking at
    // what one part of a definition costs).
    if args.first().map(String::as_str) == Some("--count") {
        return count_files(&args[1..]);
    }
    let Some(dir) = args.first() else {
        eprintln!("usage: token_table DIR | token_table --count FILE...");
        return ExitCode::from(2);
    };
    match report(Path::new(&dir)) {
        Ok(out) => {
            print!("{out}");
            ExitCode::SUCCESS
        }
        Err(errors) => {
            for e in &errors {
                eprintln!("error: {e}");
            }
            ExitCode::FAILURE
        }
    }
}

/// `--count FILE...`: prints each file's o200k tokens; fails on the first unreadable file.
fn count_files(files: &[String]) -> ExitCode {
    for file in files {
        match std::fs::read_to_string(file) {
            Ok(text) => println!("{}\t{file}", count(text.trim_end_matches('\n'))),
            Err(e) => {
                eprintln!("error: {file}: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}

/// The whole Markdown report for the files in `dir`, or the errors to print.
fn report(dir: &Path) -> Result<String, Vec<String>> {
    let (ours, rmcp, fastmcp) = load_all(dir).map_err(|e| vec![e])?;
    let Some(mcp) = ours.iter().find(|l| l.label == "mcp") else {
        return Err(vec!["no MCP export of ours".to_string()]);
    };
    // The peers must define the very same tools.
    let mismatches = mismatches(mcp, &rmcp, &fastmcp);
    if !mismatches.is_empty() {
        return Err(mismatches);
    }
    let rmcp_breakdown = breakdown(&rmcp, &RMCP_STEPS);
    let fast_breakdown = breakdown(&fastmcp, &FAST_STEPS);
    let ours_input: usize = stripped(mcp)
        .entries
        .iter()
        .map(|(_, e)| count(&e.to_string()))
        .sum();
    let rmcp_has_output = rmcp
        .entries
        .iter()
        .any(|(_, e)| e.get("outputSchema").is_some());
    let names: Vec<String> = mcp.entries.iter().map(|(n, _)| n.clone()).collect();
    let columns = columns(&ours, mcp, rmcp, fastmcp);
    let mut out = grid(&names, &columns);
    out.push_str(&steps_table(
        [("rmcp", &rmcp_breakdown), ("FastMCP", &fast_breakdown)],
        ours_input,
    ));
    if rmcp_has_output {
        out.push_str("\n(rmcp published an outputSchema for some tools.)\n");
    }
    Ok(out)
}

/// Our lists (in `OURS` order), rmcp's and FastMCP's, or the first that fails to load.
fn load_all(dir: &Path) -> Result<(Vec<List>, List, List), String> {
    let ours = OURS
        .iter()
        .map(|target| load(dir, &format!("ours-{target}.json"), target))
        .collect::<Result<Vec<_>, _>>()?;
    let rmcp = load(dir, "rmcp.json", "rmcp");
    let fastmcp = load(dir, "fastmcp.json", "FastMCP");
    Ok((ours, rmcp?, fastmcp?))
}

/// How the peers' tools differ from our MCP export's: missing, different or extra tools.
fn mismatches(mcp: &List, rmcp: &List, fastmcp: &List) -> Vec<String> {
    let mut mismatches = Vec::new();
    for (name, entry) in &mcp.entries {
        for peer in [rmcp, fastmcp] {
            match peer.get(name) {
                None => mismatches.push(format!("{}: no tool {name}", peer.label)),
                Some(theirs) if shape(theirs) != shape(entry) => mismatches.push(format!(
                    "{}: {name} differs: ours {:?}, theirs {:?}",
                    peer.label,
                    shape(entry),
                    shape(theirs)
                )),
                Some(_) => {}
            }
        }
    }
    for peer in [rmcp, fastmcp] {
        for (name, _) in &peer.entries {
            if mcp.get(name).is_none() {
                mismatches.push(format!("{}: extra tool {name}", peer.label));
            }
        }
    }
    mismatches
}

/// The steps that take rmcp's entries to the input side ours publish.
const RMCP_STEPS: [(&str, Strip); 3] = [
    ("`$schema` on each input schema", no_dollar_schema),
    ("`format` (`uint64`, `double`)", no_format),
    ("`Option<T>` as `[T, \"null\"]`", no_null_type),
];

/// The steps that take FastMCP's entries to the input side ours publish.
const FAST_STEPS: [(&str, Strip); 5] = [
    (
        "`outputSchema` `{\"result\": string}` of a text result",
        no_output,
    ),
    ("`_meta.fastmcp.tags`", no_meta),
    ("a `title` from the function name", no_title),
    ("`additionalProperties: false` on the root", no_closed_root),
    (
        "optional as `anyOf [T, null]` + `default: null`",
        no_null_branch,
    ),
];

/// A column of the table: its label, its count for a tool by name, the whole list's count.
type Column = (String, Box<dyn Fn(&str) -> Option<usize>>, Option<usize>);

/// The tokens of the entry named `name` in `list`, if it has one.
fn entry_count(list: &List, name: &str) -> Option<usize> {
    list.get(name).map(|e| count(&e.to_string()))
}

/// `list` with each entry's `outputSchema` removed.
fn stripped(list: &List) -> List {
    List {
        label: list.label.clone(),
        whole: list.whole.clone(),
        entries: list
            .entries
            .iter()
            .map(|(n, e)| (n.clone(), input_side(e)))
            .collect(),
    }
}

/// A column counting `list`'s entries, with the whole list's count if `whole`.
fn column(label: String, list: List, whole: bool) -> Column {
    let whole = whole.then(|| count(&list.whole.to_string()));
    (label, Box::new(move |n| entry_count(&list, n)), whole)
}

/// Columns: ours per target, ours MCP without outputSchema, rmcp, FastMCP as published
/// and without its outputSchema.
fn columns(ours: &[List], mcp: &List, rmcp: List, fastmcp: List) -> Vec<Column> {
    let mut columns: Vec<Column> = ours
        .iter()
        .map(|list| {
            let label = format!("ours {}", list.label);
            let l = List {
                label: label.clone(),
                whole: list.whole.clone(),
                entries: list.entries.clone(),
            };
            column(label, l, true)
        })
        .collect();
    columns.push(column(
        "ours mcp, no outputSchema".to_string(),
        stripped(mcp),
        false,
    ));
    let fast_in = stripped(&fastmcp);
    columns.push(column("rmcp".to_string(), rmcp, true));
    columns.push(column("FastMCP".to_string(), fastmcp, true));
    columns.push(column(
        "FastMCP, no outputSchema".to_string(),
        fast_in,
        false,
    ));
    columns
}

/// The table of tokens per tool (`names`, in order) and column, with the sums of the
/// entries and the whole lists' counts.
fn grid(names: &[String], columns: &[Column]) -> String {
    let mut out = String::new();
    let _ = write!(out, "| tool |");
    for (label, _, _) in columns {
        let _ = write!(out, " {label} |");
    }
    let _ = write!(out, "\n| --- |");
    for _ in columns {
        let _ = write!(out, " ---: |");
    }
    out.push('\n');
    let mut sums = vec![0usize; columns.len()];
    for name in names {
        let _ = write!(out, "| {name} |");
        for (i, (_, cell, _)) in columns.iter().enumerate() {
            match cell(name) {
                Some(n) => {
                    sums[i] += n;
                    let _ = write!(out, " {n} |");
                }
                None => {
                    let _ = write!(out, " - |");
                }
            }
        }
        out.push('\n');
    }
    let _ = write!(out, "| **sum of the entries** |");
    for s in &sums {
        let _ = write!(out, " **{s}** |");
    }
    let _ = write!(out, "\n| whole list as sent |");
    for (_, _, whole) in columns {
        match whole {
            Some(n) => {
                let _ = write!(out, " {n} |");
            }
            None => {
                let _ = write!(out, " |");
            }
        }
    }
    out.push('\n');
    out
}

/// The table of where each peer's extra tokens go, step by step, down to ours.
fn steps_table(peers: [(&str, &Breakdown); 2], ours_input: usize) -> String {
    let mut out = String::from(
        "\nWhere the peers' extra tokens go (sums over the entries; each step removes one thing from the previous):\n\n| | tokens |\n| --- | ---: |\n",
    );
    for (label, (start, parts, end)) in peers {
        let _ = writeln!(out, "| **{label}** as published | {start} |");
        for (what, n) in parts {
            let _ = writeln!(out, "| less {what} | -{n} |");
        }
        let _ = writeln!(out, "| = {label}, those removed | {end} |");
    }
    let _ = writeln!(out, "| ours mcp, no outputSchema | {ours_input} |");
    out
}
