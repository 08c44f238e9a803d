//! The nesting limit of argument snapshots is configurable per registry.

use dsh_runtime::json::{self, Value};
use dsh_runtime::{RawTool, Registry, ToolCall};

fn echo() -> RawTool {
    RawTool::new(
        "echo",
        "Return the value.",
        &json::parse(r#"{"type":"object","additionalProperties":false,"properties":{"v":{}},"required":["v"]}"#).unwrap(),
        &json::parse("{}").unwrap(),
        |args: Value, _cx| async move { Ok(args) },
    )
    .unwrap()
}

fn nested(depth: usize) -> String {
    // `{"v":` opens one level, then `depth - 1` arrays.
    format!(
        "{{\"v\":{}1{}}}",
        "[".repeat(depth - 1),
        "]".repeat(depth - 1)
    )
}

#[tokio::test]
async fn default_limit_is_128_levels() {
    let registry = Registry::new();
    let _r = registry.register(echo()).unwrap();
    let ok = registry
        .execute(ToolCall::new("a", "echo", nested(128)))
        .await;
    assert!(ok.is_success(), "{:?}", ok.message());
    let deep = registry
        .execute(ToolCall::new("b", "echo", nested(129)))
        .await;
    assert_eq!(deep.code_str(), Some("INVALID_ARGS"));
    let message = deep.message().unwrap();
    assert!(
        message.starts_with("arguments are nested too deeply: ") && message.contains("128"),
        "{message}"
    );
}

#[tokio::test]
async fn builder_sets_the_limit() {
    let registry = Registry::builder().max_depth(4).build();
    let _r = registry.register(echo()).unwrap();
    assert!(
        registry
            .execute(ToolCall::new("a", "echo", nested(4)))
            .await
            .is_success()
    );
    let deep = registry
        .execute(ToolCall::new("b", "echo", nested(5)))
        .await;
    assert!(!deep.is_success());
    assert!(
        deep.message().unwrap().contains("4"),
        "{:?}",
        deep.message()
    );
}
