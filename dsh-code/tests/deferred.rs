//! Deferred tools in code mode: the SDK declares the loaded tools and `tools.search`, a
//! program finds a deferred tool with it and calls it like any other, and bad searches
//! reject with a message saying what to fix.

mod support;

use dsh_code::{CodeConfig, Mode};
use dsh_runtime::json::Value;
use dsh_runtime::{RegistrationHandle, ToolResult, tool};
use support::*;

struct Deferred {
    env: Env,
    _tools: Vec<RegistrationHandle>,
}

fn deferred_env() -> Deferred {
    let env = env(Mode::Both, CodeConfig::default());
    let tools = register_deferred(&env.registry);
    Deferred { env, _tools: tools }
}

fn sdk_block(env: &Env) -> String {
    let shown = dsh_code::prompt(&env.registry, Some(env.scope.id()));
    assert!(shown.warnings.is_empty(), "{:?}", shown.warnings);
    let text = shown.instructions.expect("the SDK is shown");
    text.split_once("```ts\n")
        .and_then(|(_, rest)| rest.split_once("\n```"))
        .map(|(ts, _)| ts.to_string())
        .expect("a ts block")
}

fn failure(r: &ToolResult) -> String {
    assert!(r.is_error(), "expected a failure: {:?}", r.value());
    r.message().unwrap_or_default().to_string()
}

#[test]
fn the_sdk_declares_the_loaded_tools_and_the_search() {
    let d = deferred_env();
    let sdk = sdk_block(&d.env);
    // The loaded probe tools are declared; the deferred ones are not.
    assert!(sdk.contains("  echo: {"), "{sdk}");
    assert!(
        !sdk.contains("weather") && !sdk.contains("stock_price"),
        "{sdk}"
    );
    assert!(
        sdk.contains("/** 2 more tools are not declared above (they are deferred)"),
        "{sdk}"
    );
    assert!(
        sdk.contains("  search(query: string, options?: { mode?: \"bm25\" | \"regex\"; limit?: number }): Promise<ToolMatch[]>;"),
        "{sdk}"
    );
    assert!(
        sdk.contains("  call(name: string, args: JsonValue): Promise<JsonValue>;"),
        "{sdk}"
    );
    assert!(sdk.contains("type ToolMatch = {"), "{sdk}");
    // Without deferred tools, no search is declared.
    let plain = default_env();
    let sdk = sdk_block(&plain);
    assert!(
        !sdk.contains("search(") && !sdk.contains("ToolMatch"),
        "{sdk}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_finds_a_deferred_tool_and_calls_it() {
    let d = deferred_env();
    let value = d
        .env
        .value(
            r#"const found = await tools.search("weather of a city");
const w = await tools.call(found[0].name, { city: "Oslo" });
const same = await tools[found[0].name]({ city: "Bergen" });
return { names: found.map((m) => m.name), first: found[0], w, same };"#,
        )
        .await;
    // Both share common words; the weather tool ranks first.
    assert_eq!(
        value.get("names").map(Value::to_string).as_deref(),
        Some(r#"["weather","stock_price"]"#)
    );
    let first = value.get("first").expect("a match");
    assert_eq!(
        first.get("description").and_then(Value::as_str),
        Some("Get the current weather for a city.")
    );
    assert_eq!(
        first.get("signature").and_then(Value::as_str),
        Some(
            "weather(args: {\n  /** The city name. */\n  city: string;\n} & Record<string, JsonValue>): Promise<string>"
        )
    );
    assert_eq!(
        value.get("w").and_then(Value::as_str),
        Some("sunny in Oslo")
    );
    assert_eq!(
        value.get("same").and_then(Value::as_str),
        Some("sunny in Bergen")
    );

    // Regex mode: a match in a description ranks above one in a parameter ...
    let value = d
        .env
        .value(
            r#"const found = await tools.search("(?i)city|ticker", { mode: "regex", limit: 2 });
return found.map((m) => m.name);"#,
        )
        .await;
    assert_eq!(value.to_string(), r#"["weather","stock_price"]"#);
    // ... equal scores are ordered by name, and `limit` cuts.
    let value = d
        .env
        .value(
            r#"return (await tools.search("price|weather", { mode: "regex", limit: 1 })).map((m) => m.name);"#,
        )
        .await;
    assert_eq!(value.to_string(), r#"["stock_price"]"#);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_searches_reject_with_what_to_fix() {
    let d = deferred_env();
    let cases = [
        (
            "tools.search(42)",
            "tools.search(query): `query` must be a string",
        ),
        (
            r#"tools.search("x", { mode: "fuzzy" })"#,
            r#"tools.search: `options.mode` must be "bm25" or "regex", not "fuzzy""#,
        ),
        (
            r#"tools.search("x", { limit: 0 })"#,
            "tools.search: `options.limit` must be an integer from 1 to 50, not 0",
        ),
        (
            r#"tools.search("x", { top: 3 })"#,
            r#"tools.search: unknown option "top"; the options are `mode` and `limit`"#,
        ),
        (
            r#"tools.search("x", "regex")"#,
            "tools.search: `options` must be an object, not string",
        ),
        (
            r#"tools.search("x", { limit: () => 1 })"#,
            "tools.search: options[1].limit is a function",
        ),
        (
            r#"tools.search("(", { mode: "regex" })"#,
            "tools.search: `query` is not a valid regular expression",
        ),
        (
            r#"tools.call("nope", {})"#,
            r#"tools.call: unknown tool "nope"; find deferred tools with tools.search(query)"#,
        ),
    ];
    for (call, expected) in cases {
        let program = format!(
            "try {{ await {call}; return 'resolved'; }} catch (e) {{ return [e instanceof ToolCallError, e.toolName, e.message]; }}"
        );
        let value = d.env.value(&program).await;
        let parts = value
            .as_array()
            .unwrap_or_else(|| panic!("{call}: {value}"));
        assert_eq!(parts[0], Value::Bool(true), "{call}: {value}");
        let tool = if call.starts_with("tools.call") {
            "nope"
        } else {
            "search"
        };
        assert_eq!(parts[1].as_str(), Some(tool), "{call}");
        let message = parts[2].as_str().unwrap_or_default();
        assert!(message.starts_with(expected), "{call}: {message}");
    }
    // Without deferred tools there is no search: the name is unknown like any other.
    let plain = default_env();
    let r = plain.run("return typeof tools.search;").await;
    assert!(
        failure(&r).contains("unknown tool \"search\""),
        "{:?}",
        r.message()
    );
}

/// A tool the author named `search`.
#[tool(read_only)]
async fn search(
    /// What to look for.
    text: String,
) -> String {
    format!("searched {text}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_named_search_keeps_its_name_and_the_deferred_tools_are_declared() {
    let d = deferred_env();
    let _search = d.env.registry.register(Search).unwrap();
    let shown = dsh_code::prompt(&d.env.registry, Some(d.env.scope.id()));
    let warnings: Vec<String> = shown.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        [
            "search: name: a tool named `search` takes the place of `tools.search`: the 2 deferred tool(s) are declared in full"
        ]
    );
    let text = shown.instructions.expect("the SDK");
    assert!(text.contains("  weather: {"), "{text}");
    let value = d
        .env
        .value(r#"return await tools.search({ text: "a" });"#)
        .await;
    assert_eq!(value.as_str(), Some("searched a"));
}
