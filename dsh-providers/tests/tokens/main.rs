//! `export::tokens`: o200k counts of exactly what each target's request carries.
//!
//! The expected figures are the tokenizer's count of the text rebuilt here from the
//! exported entries in each provider's shape, never numbers written down, except the
//! sanity check of the tokenizer itself.

use std::collections::HashMap;
use std::sync::Arc;

use dsh_providers::export::tokens::{self, Accuracy, TargetTokens};
use dsh_providers::export::{self, Target};
use dsh_runtime::schema::{Additional, Property, Schema};
use dsh_runtime::{Registry, Tool, ToolDefinition, tool};

/// Look up the weather of a city.
#[tool(read_only, defer_loading)]
async fn weather(
    /// The city, e.g. `Lyon`.
    city: String,
) -> String {
    city
}

/// Add two numbers.
#[tool(read_only)]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Search the notes.
#[tool(read_only)]
async fn search_notes(
    /// Words to look for.
    query: String,
    /// How many notes to return at most.
    limit: Option<u32>,
    /// Only notes with all of these tags.
    tags: Vec<String>,
) -> Vec<String> {
    let _ = (limit, tags);
    vec![query]
}

fn defs() -> Vec<ToolDefinition> {
    vec![
        Add.definition().clone(),
        SearchNotes.definition().clone(),
        Weather.definition().clone(),
    ]
}

/// A tool strict targets refuse (a map parameter).
fn env_tool() -> ToolDefinition {
    let map = Schema::object(vec![], Additional::Schema(Arc::new(Schema::string())));
    ToolDefinition::new(
        "set_env".to_string(),
        "Set environment variables.",
        Arc::new(Schema::closed_object(vec![Property::new("env", map, true)])),
        Arc::new(Schema::null()),
    )
}

/// The request fragment rebuilt from the entries, in the target's documented shape.
fn wrap(target: Target, entries: &[String]) -> String {
    let list = format!("[{}]", entries.join(","));
    match target {
        Target::GeminiJsonSchema | Target::GeminiOpenApi => {
            format!("[{{\"functionDeclarations\":{list}}}]")
        }
        Target::Mcp2025_11_25 => format!("{{\"tools\":{list}}}"),
        Target::Mcp2026_07_28 => format!(
            "{{\"resultType\":\"complete\",\"ttlMs\":0,\"cacheScope\":\"private\",\"tools\":{list}}}"
        ),
        _ => list,
    }
}

fn entries(e: &export::Export) -> Vec<String> {
    e.tools.iter().map(|t| t.definition.to_string()).collect()
}

/// The entries of the request: the tools', then the provider's tool search when a tool
/// is deferred (it is sent in every request).
fn sent_entries(e: &export::Export) -> Vec<String> {
    let mut list = entries(e);
    list.extend(e.search.as_ref().map(ToString::to_string));
    list
}

#[test]
fn the_tokenizer_is_o200k() {
    assert_eq!(tokens::ENCODING, "o200k_base");
    assert_eq!(tokens::count(""), 0);
    // o200k: "hello" and " world".
    assert_eq!(tokens::count("hello world"), 2);
    // Special-token markers in a description are ordinary text, several tokens.
    assert!(tokens::count("<|endoftext|>") > 1);
}

#[test]
fn each_tool_counts_its_entry_and_the_request_counts_the_fragment_as_sent() {
    let defs = defs();
    let report = tokens::token_report(&defs, &Target::ALL);
    assert_eq!(report.targets.len(), Target::ALL.len());
    for (t, target) in report.targets.iter().zip(Target::ALL) {
        assert_eq!(t.target, target);
        let e = export::export(&defs, target);
        let texts = entries(&e);
        assert_eq!(t.tools.len(), texts.len(), "{target}");
        for (tool, text) in t.tools.iter().zip(&texts) {
            assert_eq!(tool.tokens, tokens::count(text), "{target} {}", tool.name);
            assert_eq!(tool.bytes, text.len(), "{target} {}", tool.name);
        }
        let sent = wrap(target, &sent_entries(&e));
        assert_eq!(
            sent,
            e.fragment().to_string(),
            "{target}: the shape rebuilt"
        );
        assert_eq!(t.request, tokens::count(&sent), "{target}");
        assert_eq!(
            t.sum(),
            texts.iter().map(|s| tokens::count(s)).sum::<usize>()
        );
    }
}

#[test]
fn totals_add_up() {
    let defs = defs();
    for t in tokens::token_report(&defs, &Target::ALL).targets {
        let n = t.tools.len();
        assert_eq!(n, 3, "{}", t.target);
        // The fragment is the entries plus brackets, separators and (Gemini, MCP) the
        // wrapper: at least the entries less a merge at each join, at most a few
        // tokens more per entry.
        assert!(t.request + n >= t.sum(), "{}: {t:?}", t.target);
        assert!(t.request <= t.sum() + 2 * n + 20, "{}: {t:?}", t.target);
        let upfront: usize = t.tools.iter().map(|tool| tool.upfront()).sum();
        assert!(t.upfront + n >= upfront, "{}: {t:?}", t.target);
    }
}

#[test]
fn a_deferred_tool_is_out_of_what_every_request_pays_where_the_provider_defers_it() {
    let defs = defs();
    for target in Target::ALL {
        let t = TargetTokens::of(&export::export(&defs, target));
        let weather = t.tool("weather").expect("weather is exported everywhere");
        assert_eq!(weather.deferred, target.can_defer(), "{target}");
        // The entry is counted either way: it is what loading the tool costs.
        assert!(weather.tokens > 0);
        if target.can_defer() {
            assert_eq!(weather.upfront(), 0);
            let loaded = export::export(&defs[..2], target);
            let mut upfront = entries(&loaded);
            upfront.extend(
                export::provider_search_entry(target, export::ProviderSearch::Bm25)
                    .map(|v| v.to_string()),
            );
            assert_eq!(
                t.upfront,
                tokens::count(&wrap(target, &upfront)),
                "{target}: the fragment without the deferred entry"
            );
            assert!(t.upfront < t.request, "{target}");
        } else {
            assert_eq!(weather.upfront(), weather.tokens);
            assert_eq!(t.upfront, t.request, "{target}");
        }
    }
}

#[test]
fn openai_is_exact_and_the_others_are_labelled_approximations() {
    let report = tokens::token_report(&defs(), &Target::ALL);
    let labels: HashMap<Target, Accuracy> = report
        .targets
        .iter()
        .map(|t| (t.target, t.accuracy))
        .collect();
    for target in Target::ALL {
        let expected = if target.name().starts_with("openai") {
            Accuracy::Exact
        } else {
            Accuracy::O200kApproximation
        };
        assert_eq!(labels[&target], expected, "{target}");
    }
    assert_eq!(
        Accuracy::O200kApproximation.to_string(),
        "o200k approximation"
    );
}

#[test]
fn a_refused_tool_is_reported_and_not_counted() {
    let mut defs = defs();
    defs.push(env_tool());
    let report = tokens::token_report(&defs, &[Target::OpenAiResponsesStrict, Target::Anthropic]);
    let strict = &report.targets[0];
    assert!(strict.tool("set_env").is_none());
    assert_eq!(strict.errors.len(), 1);
    assert_eq!(strict.errors[0].tool.as_deref(), Some("set_env"));
    let anthropic = &report.targets[1];
    assert!(anthropic.tool("set_env").is_some());
    assert!(anthropic.errors.is_empty());

    let table = report.to_string();
    let row = table
        .lines()
        .find(|l| l.starts_with("set_env "))
        .expect("a row for set_env");
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells[1], "-", "{table}");
    assert_eq!(
        cells[2],
        anthropic
            .tool("set_env")
            .map(|t| t.tokens.to_string())
            .unwrap_or_default()
    );
    assert!(
        table.contains("\n- openai-strict: set_env: parameters.properties.env: is a map"),
        "{table}"
    );
}

#[test]
fn the_table_shows_every_tool_the_request_and_deferral() {
    let report = tokens::token_report(&defs(), &[Target::Anthropic, Target::GeminiJsonSchema]);
    let table = report.to_string();
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(
        lines[0].split_whitespace().collect::<Vec<_>>(),
        ["tool", "anthropic", "gemini"]
    );
    let row = |name: &str| -> Vec<String> {
        lines
            .iter()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no row {name} in\n{table}"))
            .split_whitespace()
            .skip(1)
            .map(str::to_string)
            .collect()
    };
    let a = &report.targets[0];
    let g = &report.targets[1];
    assert_eq!(
        row("add"),
        [
            a.tool("add").map(|t| t.tokens),
            g.tool("add").map(|t| t.tokens)
        ]
        .map(|n| n.unwrap_or_default().to_string())
    );
    // Deferred on Anthropic (starred), loaded on Gemini.
    let w = row("weather");
    assert_eq!(
        w[0],
        format!("{}*", a.tool("weather").map_or(0, |t| t.tokens))
    );
    assert_eq!(w[1], g.tool("weather").map_or(0, |t| t.tokens).to_string());
    assert_eq!(
        row("request"),
        [a.request.to_string(), g.request.to_string()]
    );
    let up: Vec<String> = lines
        .iter()
        .find(|l| l.starts_with("up front"))
        .expect("an up-front row when a tool is deferred")
        .split_whitespace()
        .skip(2)
        .map(str::to_string)
        .collect();
    assert_eq!(up, [a.upfront.to_string(), g.upfront.to_string()]);
    assert_eq!(row("accuracy"), ["approx.", "approx."]);
    assert!(table.contains("* deferred (defer_loading)"), "{table}");
}

#[test]
fn the_json_form_carries_every_figure() {
    let registry = Registry::new();
    let _a = registry.register(Add).expect("register");
    let _w = registry.register(Weather).expect("register");
    let report = tokens::token_report_view(&registry.view(), &[Target::OpenAiResponses]);
    let v = dsh_runtime::json::to_serde(&report.to_json());
    assert_eq!(v["encoding"], "o200k_base");
    let t = &v["targets"][0];
    assert_eq!(t["target"], "openai");
    assert_eq!(t["accuracy"], "exact");
    let r = &report.targets[0];
    assert_eq!(t["request"].as_u64(), Some(r.request as u64));
    assert_eq!(t["upfront"].as_u64(), Some(r.upfront as u64));
    assert_eq!(t["tools"][1]["name"], "weather");
    assert_eq!(t["tools"][1]["deferred"], true);
    assert_eq!(
        t["tools"][1]["tokens"].as_u64(),
        r.tool("weather").map(|x| x.tokens as u64)
    );
    assert_eq!(t["errors"], serde_json::json!([]));
}
