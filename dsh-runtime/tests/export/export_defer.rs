//! Deferred tools (`#[tool(defer_loading)]`) in every export: marked where the provider
//! can defer a tool, exported loaded with a warning elsewhere, and left out or loaded by
//! `export_loaded`.

use dsh_runtime::export::{self, Target, check};
use dsh_runtime::json::Value;
use dsh_runtime::{Tool, ToolDefinition, tool};

/// Look up the weather of a city.
#[tool(read_only, defer_loading)]
async fn weather(
    /// The city.
    city: String,
) -> String {
    city
}

/// Add two numbers.
#[tool(read_only)]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn defs() -> Vec<ToolDefinition> {
    vec![Add.definition().clone(), Weather.definition().clone()]
}

fn entry<'a>(e: &'a export::Export, name: &str) -> &'a dsh_runtime::json::Object {
    e.tool(name)
        .and_then(Value::as_object)
        .unwrap_or_else(|| panic!("{}: no entry for {name}", e.target))
}

#[test]
fn the_macro_flag_sets_the_definition() {
    assert!(Weather.definition().defer_loading);
    assert!(!Add.definition().defer_loading);
}

#[test]
fn anthropic_and_openai_responses_mark_deferred_tools() {
    for target in [
        Target::Anthropic,
        Target::AnthropicStrict,
        Target::OpenAiResponses,
        Target::OpenAiResponsesStrict,
    ] {
        assert!(target.can_defer());
        let e = export::export(&defs(), target);
        assert!(e.is_complete(), "{target}: {:?}", e.errors);
        // (Strict targets also report the closed root, which is not about deferral.)
        assert!(
            !e.warnings.iter().any(|w| w.path == "defer_loading"),
            "{target}: {:?}",
            e.warnings
        );
        assert_eq!(
            entry(&e, "weather").get("defer_loading"),
            Some(&Value::Bool(true)),
            "{target}"
        );
        assert!(!entry(&e, "add").contains_key("defer_loading"), "{target}");
        let problems = check::check(target, &e.fragment());
        assert!(problems.is_empty(), "{target}: checker: {problems:#?}");
    }
    // The exact Anthropic entry.
    let e = export::export(&defs(), Target::Anthropic);
    assert_eq!(
        e.tool("weather").map(Value::to_string).as_deref(),
        Some(
            r#"{"name":"weather","description":"Look up the weather of a city.","input_schema":{"type":"object","properties":{"city":{"type":"string","description":"The city."}},"required":["city"]},"defer_loading":true}"#
        )
    );
    let e = export::export(&defs(), Target::OpenAiResponses);
    assert_eq!(
        e.tool("weather").map(Value::to_string).as_deref(),
        Some(
            r#"{"type":"function","name":"weather","description":"Look up the weather of a city.","parameters":{"type":"object","properties":{"city":{"type":"string","description":"The city."}},"required":["city"]},"strict":false,"defer_loading":true}"#
        )
    );
}

#[test]
fn targets_without_deferral_export_the_tool_and_warn() {
    for target in Target::ALL.into_iter().filter(|t| !t.can_defer()) {
        let e = export::export(&defs(), target);
        assert!(e.is_complete(), "{target}: {:?}", e.errors);
        assert_eq!(e.tools.len(), 2, "{target}");
        let fragment = e.fragment().to_string();
        assert!(!fragment.contains("defer_loading"), "{target}: {fragment}");
        let defer: Vec<_> = e
            .warnings
            .iter()
            .filter(|w| w.path == "defer_loading")
            .collect();
        assert_eq!(defer.len(), 1, "{target}: {:?}", e.warnings);
        assert_eq!(defer[0].tool, "weather");
        assert!(
            defer[0]
                .lost
                .starts_with(&format!("{target} cannot defer a tool")),
            "{}",
            defer[0].lost
        );
        let problems = check::check(target, &e.fragment());
        assert!(problems.is_empty(), "{target}: checker: {problems:#?}");
    }
}

#[test]
fn the_checker_refuses_a_false_or_misplaced_defer_loading() {
    let text = r#"[{"name":"a","input_schema":{"type":"object"},"defer_loading":false}]"#;
    let fragment = dsh_runtime::json::parse(text).expect("json");
    let problems = check::check(Target::Anthropic, &fragment);
    assert!(
        problems.iter().any(|p| p.contains("defer_loading")),
        "{problems:#?}"
    );
    let text = r#"[{"type":"function","function":{"name":"a","parameters":{"type":"object"},"strict":false,"defer_loading":true}}]"#;
    let fragment = dsh_runtime::json::parse(text).expect("json");
    let problems = check::check(Target::OpenAiChat, &fragment);
    assert!(
        problems.iter().any(|p| p.contains("defer_loading")),
        "{problems:#?}"
    );
}

#[test]
fn export_loaded_leaves_out_deferred_tools_until_found() {
    for target in Target::ALL {
        let e = export::export_loaded(&defs(), &[] as &[&str], target);
        let names: Vec<&str> = e.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["add"], "{target}");
        assert!(
            !e.warnings.iter().any(|w| w.path == "defer_loading"),
            "{target}: {:?}",
            e.warnings
        );

        let e = export::export_loaded(&defs(), &["weather".to_string()], target);
        let names: Vec<&str> = e.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["add", "weather"], "{target}");
        assert!(
            !e.warnings.iter().any(|w| w.path == "defer_loading"),
            "{target}: {:?}",
            e.warnings
        );
        assert!(
            !e.fragment().to_string().contains("defer_loading"),
            "{target}: a found tool is exported loaded"
        );
    }
}
