//! The built-in `tool_search` tool on a registry of 1,000 generated tools: queries find the
//! expected tool first, the ranking is deterministic, regex mode works and refuses a bad
//! pattern with `INVALID_ARGS`, only deferred tools of the calling view are returned, and
//! the index is rebuilt only after a registry change.

use std::sync::Arc;

use dsh_providers::tool_search::{self, Mode, SearchError, ToolIndex, ToolSearch};
use dsh_runtime::json::Value;
use dsh_runtime::schema::{Property, Schema};
use dsh_runtime::{PipelineCode, RawTool, Registry, Restriction, ToolCall, ToolDefinition};

use crate::generated_tools::{GENERATED, generated_tool};

/// Tool `i` of the generated set, every tenth not deferred.
fn generated(i: usize) -> ToolDefinition {
    generated_tool(i, i % 10 != 3)
}

/// A tool whose only mention of time zones is a parameter description.
fn clock() -> ToolDefinition {
    let params = Schema::closed_object(vec![Property::new(
        "tz",
        Schema::string().with_description("An IANA timezone name, e.g. Europe/Paris."),
        true,
    )]);
    ToolDefinition::new(
        "current_time",
        "Tell the current wall-clock time.",
        Arc::new(params),
        Arc::new(Schema::json()),
    )
    .with_defer_loading(true)
}

fn all_definitions() -> Vec<ToolDefinition> {
    let mut defs: Vec<ToolDefinition> = (0..GENERATED).map(generated).collect();
    defs.push(clock());
    defs
}

fn raw(def: &ToolDefinition) -> RawTool {
    RawTool::from_schemas(
        def.name.to_string(),
        def.description.to_string(),
        (*def.parameters).clone(),
        (*def.output).clone(),
        |_, _| async { Ok(Value::Null) },
    )
    .with_defer_loading(def.defer_loading)
}

/// A registry of the 1,001 tools (in the given order) plus `tool_search`.
fn registry(defs: &[ToolDefinition]) -> Registry {
    let registry = Registry::new();
    for def in defs {
        if let Err(e) = registry.register(raw(def)) {
            panic!("registering {}: {e}", def.name);
        }
    }
    if let Err(e) = tool_search::register(&registry) {
        panic!("registering tool_search: {e}");
    }
    registry
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

async fn search(registry: &Registry, args: &str) -> dsh_runtime::ToolResult {
    registry
        .execute(ToolCall::new("c1", tool_search::NAME, args))
        .await
}

async fn names(registry: &Registry, args: &str) -> Vec<String> {
    let result = search(registry, args).await;
    assert!(result.is_success(), "{args}: {}", result.text());
    result
        .value()
        .map(tool_search::found_names)
        .unwrap_or_default()
}

#[test]
fn queries_find_the_expected_tool_first() {
    let registry = registry(&all_definitions());
    rt().block_on(async {
        for (query, expected) in [
            (r#"{"query":"archive an invoice"}"#, "archive_invoice"),
            (r#"{"query":"publish release"}"#, "publish_release"),
            (r#"{"query":"restoreBackup"}"#, "restore_backup"),
            (
                r#"{"query":"export the spreadsheets"}"#,
                "export_spreadsheet",
            ),
            (r#"{"query":"unlock secret","limit":1}"#, "unlock_secret"),
            // Found through a parameter description only.
            (r#"{"query":"timezone"}"#, "current_time"),
        ] {
            let found = names(&registry, query).await;
            assert_eq!(
                found.first().map(String::as_str),
                Some(expected),
                "{query}: {found:?}"
            );
        }
        // The default limit is 5, and `limit` caps it.
        assert_eq!(names(&registry, r#"{"query":"invoice"}"#).await.len(), 5);
        assert_eq!(
            names(&registry, r#"{"query":"invoice","limit":2}"#)
                .await
                .len(),
            2
        );
        // Nothing shared with any tool: nothing found.
        assert!(names(&registry, r#"{"query":"zzzz"}"#).await.is_empty());
    });
}

#[test]
fn results_carry_the_model_facing_definition() {
    let registry = registry(&all_definitions());
    rt().block_on(async {
        let result = search(&registry, r#"{"query":"archive invoice","limit":1}"#).await;
        let tools = result
            .value()
            .and_then(|v| v.get("tools"))
            .and_then(Value::as_array)
            .expect("a tools array");
        let expected = registry
            .view()
            .schemas()
            .into_iter()
            .find(|d| &*d.name == "archive_invoice")
            .expect("registered")
            .to_json();
        assert_eq!(tools.len(), 1);
        assert_eq!(tools[0], expected);
    });
}

#[test]
fn ranking_is_deterministic_across_runs_and_registration_orders() {
    let defs = all_definitions();
    let mut reversed = defs.clone();
    reversed.reverse();
    let queries = [
        r#"{"query":"create update delete order","limit":50}"#,
        r#"{"query":"the workspace record","limit":50}"#,
        r#"{"query":"calendar event meeting","limit":50}"#,
        r#"{"query":"_invoice$","mode":"regex","limit":50}"#,
    ];
    let rt = rt();
    let first: Vec<Vec<String>> = {
        let r = registry(&defs);
        queries.iter().map(|q| rt.block_on(names(&r, q))).collect()
    };
    for run in [registry(&defs), registry(&reversed)] {
        let again: Vec<Vec<String>> = queries
            .iter()
            .map(|q| rt.block_on(names(&run, q)))
            .collect();
        assert_eq!(again, first);
    }
    // Equal scores are ordered by name: every generated tool matches "the workspace record"
    // equally within a noun, and the regex scores every match in the name alike.
    let regex = &first[3];
    let mut sorted = regex.clone();
    sorted.sort();
    assert_eq!(regex, &sorted);
    assert_eq!(regex.len(), 18, "{regex:?}"); // 20 verbs, 2 of them not deferred
}

#[test]
fn regex_mode_matches_names_descriptions_and_parameters() {
    let registry = registry(&all_definitions());
    rt().block_on(async {
        let found = names(
            &registry,
            r#"{"query":"^(archive|restore)_backup$","mode":"regex"}"#,
        )
        .await;
        assert_eq!(found, ["archive_backup", "restore_backup"]);
        // Case-sensitive unless `(?i)`.
        assert!(
            names(&registry, r#"{"query":"IANA TIMEZONE","mode":"regex"}"#)
                .await
                .is_empty()
        );
        let found = names(&registry, r#"{"query":"(?i)iana timezone","mode":"regex"}"#).await;
        assert_eq!(found, ["current_time"]);
        // A match in the name ranks above one in the description only, whatever the names.
        let found = names(&registry, r#"{"query":"wall|tag_backup","mode":"regex"}"#).await;
        assert_eq!(found, ["tag_backup", "current_time"]);
    });
}

#[test]
fn a_bad_regex_is_invalid_args_with_the_reason() {
    let registry = registry(&all_definitions());
    rt().block_on(async {
        let result = search(&registry, r#"{"query":"(unclosed","mode":"regex"}"#).await;
        assert!(result.is_error());
        assert_eq!(result.error_code(), Some(PipelineCode::InvalidArgs));
        let message = result.message().unwrap_or("");
        assert!(
            message.starts_with("tool_search: `query` is not a valid regular expression: "),
            "{message}"
        );
        assert!(message.ends_with("(mode `regex`)"), "{message}");
        let long = format!(r#"{{"query":"{}","mode":"regex"}}"#, "a".repeat(201));
        let result = search(&registry, &long).await;
        assert_eq!(result.error_code(), Some(PipelineCode::InvalidArgs));
        assert!(
            result
                .message()
                .unwrap_or("")
                .contains("201 characters, at most 200"),
            "{:?}",
            result.message()
        );
        // An unknown mode is refused by the parameter schema.
        let result = search(&registry, r#"{"query":"x","mode":"fuzzy"}"#).await;
        assert_eq!(result.error_code(), Some(PipelineCode::InvalidArgs));
    });
}

#[test]
fn tools_that_are_not_deferred_are_not_returned() {
    let registry = registry(&all_definitions());
    // `update_invoice` (index 3) is not deferred: the model has it already.
    assert!(!generated(3).defer_loading && generated(3).name == "update_invoice");
    rt().block_on(async {
        let found = names(&registry, r#"{"query":"update invoice","limit":50}"#).await;
        assert!(!found.is_empty());
        assert!(!found.iter().any(|n| n == "update_invoice"), "{found:?}");
        let found = names(&registry, r#"{"query":"update_invoice","mode":"regex"}"#).await;
        assert!(found.is_empty(), "{found:?}");
        assert!(
            !names(&registry, r#"{"query":"tool search","limit":50}"#)
                .await
                .iter()
                .any(|n| n == tool_search::NAME)
        );
    });
    let index = ToolIndex::new(&all_definitions());
    assert_eq!(index.len(), 901);
}

#[test]
fn a_call_searches_the_view_it_is_made_from() {
    let registry = registry(&all_definitions());
    let scope = registry.scope();
    if let Err(e) = scope.restrict(Restriction::deny(["archive_invoice"])) {
        panic!("restrict: {e}");
    }
    rt().block_on(async {
        let call = ToolCall::new("c1", tool_search::NAME, r#"{"query":"archive invoice"}"#);
        let result = scope.registry().execute(call.with_agent(scope.id())).await;
        let found = result
            .value()
            .map(tool_search::found_names)
            .unwrap_or_default();
        assert!(!found.is_empty(), "{}", result.text());
        assert!(!found.iter().any(|n| n == "archive_invoice"), "{found:?}");
        let global = names(&registry, r#"{"query":"archive invoice"}"#).await;
        assert_eq!(global.first().map(String::as_str), Some("archive_invoice"));
    });
}

#[test]
fn the_index_is_built_once_per_registry_change() {
    let registry = registry(&all_definitions());
    let search = ToolSearch::new(&registry);
    let a = search.index(None).expect("registry alive");
    let b = search.index(None).expect("registry alive");
    assert!(Arc::ptr_eq(&a, &b), "a second query reuses the index");
    let added = registry
        .register(raw(&ToolDefinition::new(
            "water_plants",
            "Water the plants of the garden.",
            Arc::new(Schema::closed_object(vec![])),
            Arc::new(Schema::json()),
        )
        .with_defer_loading(true)))
        .expect("register");
    let c = search.index(None).expect("registry alive");
    assert!(!Arc::ptr_eq(&a, &c), "a registration rebuilds the index");
    assert_eq!(c.len(), a.len() + 1);
    let hits = c
        .search("garden plants", Mode::Bm25, 1)
        .expect("bm25 never fails");
    assert_eq!(
        hits.first().map(|m| m.definition.name.as_ref()),
        Some("water_plants")
    );
    added.unregister();
    assert_eq!(search.index(None).expect("alive").len(), a.len());
    // The search does not keep its registry alive.
    drop(registry);
    assert!(search.index(None).is_none());
}

#[test]
fn the_index_api_reports_a_bad_regex() {
    let index = ToolIndex::new(&all_definitions());
    match index.search("[", Mode::Regex, 5) {
        Err(SearchError::InvalidRegex(reason)) => assert!(!reason.is_empty()),
        other => panic!("expected InvalidRegex, got {other:?}"),
    }
}
