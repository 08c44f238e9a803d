//! Deferred tools (`#[tool(defer_loading)]`) in every export: marked where the provider
//! can defer a tool, exported loaded with a warning elsewhere, and left out or loaded by
//! `export_loaded`.

use dsh_providers::export::{self, Target, check};
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

#[test]
fn a_deferred_tool_brings_the_providers_tool_search() {
    let last = |e: &export::Export| {
        e.fragment()
            .as_array()
            .and_then(|l| l.last().cloned())
            .map(|v| v.to_string())
    };
    let e = export::export(&defs(), Target::Anthropic);
    assert_eq!(
        last(&e).as_deref(),
        Some(r#"{"type":"tool_search_tool_bm25_20251119","name":"tool_search_tool_bm25"}"#)
    );
    let e = e.with_provider_search(export::ProviderSearch::Regex);
    assert_eq!(
        last(&e).as_deref(),
        Some(r#"{"type":"tool_search_tool_regex_20251119","name":"tool_search_tool_regex"}"#)
    );
    assert!(check::check(Target::Anthropic, &e.fragment()).is_empty());
    for target in [Target::OpenAiResponses, Target::OpenAiResponsesStrict] {
        let e = export::export(&defs(), target);
        assert_eq!(last(&e).as_deref(), Some(r#"{"type":"tool_search"}"#));
        assert_eq!(e.fragment().as_array().map(|l| l.len()), Some(3));
    }
    // Nothing deferred, nothing added; the same for the targets that cannot defer and
    // for `export_loaded`, whose host runs its own search.
    let loaded = [Add.definition().clone()];
    for target in Target::ALL {
        assert!(export::export(&loaded, target).search.is_none(), "{target}");
        assert!(
            export::export_loaded(&defs(), &[] as &[&str], target)
                .search
                .is_none(),
            "{target}"
        );
        if !target.can_defer() {
            assert!(export::export(&defs(), target).search.is_none(), "{target}");
        }
    }
    // Without it, the provider would refuse the request: so does the checker.
    let mut e = export::export(&defs(), Target::Anthropic);
    e.search = None;
    let problems = check::check(Target::Anthropic, &e.fragment());
    assert_eq!(
        problems,
        ["request: tools: a deferred tool needs the provider's tool search tool in the request"]
    );
    let fragment = dsh_runtime::json::parse(
        r#"[{"name":"a","input_schema":{"type":"object"}},{"type":"tool_search_tool_bm25_20251119","name":"tool_search_tool_regex"}]"#,
    )
    .expect("json");
    assert_eq!(
        check::check(Target::Anthropic, &fragment),
        ["tool_search_tool_bm25: name: must be \"tool_search_tool_bm25\""]
    );
}

fn namespaced() -> Vec<ToolDefinition> {
    let crm = dsh_runtime::Namespace::new("crm", "Customer records.");
    let named = |d: &ToolDefinition, name: &str| {
        let mut d = d.clone().with_namespace(Some(crm.clone()));
        d.name = name.to_string().into();
        d
    };
    vec![
        named(Add.definition(), "crm_add"),
        Weather.definition().clone(),
        named(Add.definition(), "crm_sum"),
    ]
}

#[test]
fn openai_responses_groups_a_namespace_where_its_first_tool_was() {
    for target in [Target::OpenAiResponses, Target::OpenAiResponsesStrict] {
        let e = export::export(&namespaced(), target);
        assert!(e.is_complete(), "{target}: {:?}", e.errors);
        assert!(
            !e.warnings.iter().any(|w| w.path == "namespace"),
            "{target}: {:?}",
            e.warnings
        );
        let fragment = e.fragment();
        let list = fragment.as_array().expect("a list");
        // The namespace, the deferred weather tool, the provider's tool search.
        assert_eq!(list.len(), 3, "{target}: {fragment}");
        let ns = list[0].as_object().expect("an object");
        assert_eq!(
            ns.keys().collect::<Vec<_>>(),
            ["type", "name", "description", "tools"]
        );
        assert_eq!(ns.get("type").and_then(Value::as_str), Some("namespace"));
        assert_eq!(ns.get("name").and_then(Value::as_str), Some("crm"));
        let inner: Vec<String> = ns
            .get("tools")
            .and_then(Value::as_array)
            .expect("tools")
            .iter()
            .map(Value::to_string)
            .collect();
        // The tools' own entries, unchanged, in publication order.
        assert_eq!(
            inner,
            [
                e.tool("crm_add").map(Value::to_string).expect("crm_add"),
                e.tool("crm_sum").map(Value::to_string).expect("crm_sum")
            ]
        );
        assert_eq!(list[1].get("name").and_then(Value::as_str), Some("weather"));
        let problems = check::check(target, &fragment);
        assert!(problems.is_empty(), "{target}: checker: {problems:#?}");
    }
}

#[test]
fn other_targets_export_a_namespace_flat_with_one_warning() {
    for target in Target::ALL
        .into_iter()
        .filter(|t| !matches!(t, Target::OpenAiResponses | Target::OpenAiResponsesStrict))
    {
        let e = export::export(&namespaced(), target);
        assert!(e.is_complete(), "{target}: {:?}", e.errors);
        assert_eq!(e.tools.len(), 3, "{target}");
        assert!(e.tools.iter().all(|t| t.namespace.is_none()), "{target}");
        let warnings: Vec<String> = e
            .warnings
            .iter()
            .filter(|w| w.path == "namespace")
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            warnings,
            [format!(
                "crm_add: namespace: {target} has no namespaces: the tools of namespace `crm` are exported at the top level, without its description"
            )],
            "{target}"
        );
        assert!(
            !e.fragment().to_string().contains("\"namespace\""),
            "{target}"
        );
    }
}

#[test]
fn a_namespace_openai_cannot_take_is_exported_flat() {
    let bad = dsh_runtime::Namespace::new("crm tools", "Customer records.");
    let defs = [Add.definition().clone().with_namespace(Some(bad))];
    let e = export::export(&defs, Target::OpenAiResponses);
    assert!(e.is_complete());
    assert!(e.tools[0].namespace.is_none());
    assert_eq!(
        e.warnings
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        [
            "add: namespace: namespace `crm tools` is exported at the top level: OpenAI requires namespace names matching ^[a-zA-Z0-9_-]{1,64}$"
        ]
    );
}

#[test]
fn the_checker_reads_namespace_entries() {
    let fragment = dsh_runtime::json::parse(
        r#"[{"type":"namespace","name":"crm","tools":[]},{"type":"namespace","name":"a b","description":"x","tools":[{"type":"function","name":"f","parameters":{"type":"object"},"strict":false,"extra":1}]}]"#,
    )
    .expect("json");
    let problems = check::check(Target::OpenAiResponses, &fragment);
    assert_eq!(
        problems,
        [
            "namespace crm: description: must be a string",
            "namespace crm: tools: must be a non-empty array",
            "namespace a b: name: must match ^[a-zA-Z0-9_-]{1,64}$",
            "f: tool: unexpected field \"extra\"",
        ],
        "{problems:#?}"
    );
}
