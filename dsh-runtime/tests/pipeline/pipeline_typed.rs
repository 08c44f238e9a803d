//! Typed calls through the full pipeline, and raw-schema tools.

use crate::pipeline_support;

use dsh_runtime::hooks::{Accept, PreDecision, post_execute_fn, pre_execute_fn};
use dsh_runtime::json::Value;
use dsh_runtime::schema::Schema;
use dsh_runtime::{
    RawTool, RegisterError, Registry, ToolCall, ToolCallError, ToolError, content::ContentBlock,
};
use pipeline_support::{Add, AddArgs, Log, v};

#[tokio::test]
async fn a_typed_call_returns_the_typed_output() {
    let registry = Registry::new();
    let _t = registry.register(Add::new()).unwrap();
    let sum = registry.call::<Add>(AddArgs { a: 2, b: 40 }).await;
    assert_eq!(sum, Ok(42));
}

#[tokio::test]
async fn a_typed_call_runs_policy_and_returns_the_final_value() {
    let registry = Registry::new();
    let _t = registry.register(Add::new()).unwrap();
    let log = Log::new();
    let l = log.clone();
    let _g = registry.add_guard(dsh_runtime::hooks::guard_fn(move |call| {
        l.push(format!("guard {} {}", call.name(), call.arguments()));
        None
    }));
    let _p = registry.add_post_execute(post_execute_fn(|_, r| {
        let doubled = r.value()?.as_number()?.as_i64()? * 2;
        Some(Accept::value(Value::from(doubled)).into())
    }));
    assert_eq!(registry.call::<Add>(AddArgs { a: 1, b: 2 }).await, Ok(6));
    assert_eq!(log.take(), [r#"guard add {"a":1,"b":2}"#]);
}

#[tokio::test]
async fn a_typed_call_failure_is_a_tool_call_error() {
    let registry = Registry::new();
    let _t = registry.register(Add::new()).unwrap();
    let err = registry
        .call::<Add>(AddArgs { a: i64::MAX, b: 1 })
        .await
        .unwrap_err();
    assert_eq!(err.tool_name, "add");
    assert_eq!(err.message, "the sum overflows");
    assert_eq!(err.code.as_deref(), Some("OVERFLOW"));
    assert_eq!(err.to_string(), r#"tool "add" failed: the sum overflows"#);

    let _d = registry.add_pre_execute(pre_execute_fn(|_| Some(PreDecision::deny("not allowed"))));
    let err = registry
        .call::<Add>(AddArgs { a: 1, b: 1 })
        .await
        .unwrap_err();
    assert_eq!(
        (err.tool_name.as_str(), err.message.as_str(), err.code),
        ("add", "not allowed", Some("POLICY_DENIED".into()))
    );
}

#[tokio::test]
async fn a_typed_call_resolves_in_the_callers_scope() {
    let registry = Registry::new();
    let err: ToolCallError = registry
        .call::<Add>(AddArgs { a: 1, b: 1 })
        .await
        .unwrap_err();
    assert!(
        err.message.starts_with("no tool of type `"),
        "{}",
        err.message
    );
    assert_eq!(err.code.as_deref(), Some("UNKNOWN_TOOL"));

    let scope = registry.scope();
    let _t = scope.register(Add::new()).unwrap();
    assert_eq!(scope.call::<Add>(AddArgs { a: 1, b: 1 }).await, Ok(2));
    assert!(registry.call::<Add>(AddArgs { a: 1, b: 1 }).await.is_err());
    let child = scope.child();
    assert_eq!(child.call::<Add>(AddArgs { a: 3, b: 1 }).await, Ok(4));
}

fn raw_tool() -> RawTool {
    RawTool::new(
        "lookup",
        "Look a key up.",
        &v(r#"{"type":"object","properties":{"key":{"type":"string","description":"The key."},"limit":{"type":"integer"}},"required":["key"]}"#),
        &v(r#"{"type":"object","additionalProperties":false,"properties":{"found":{"type":"boolean"}},"required":["found"]}"#),
        |args, _cx| async move {
            let key = args.as_object().and_then(|o| o.get("key")).and_then(Value::as_str).unwrap_or_default().to_string();
            match key.as_str() {
                "bad" => Ok(v(r#"{"found":"yes"}"#)),
                "err" => Err(ToolError::with_code("UPSTREAM", "server said no")),
                _ => Ok(v(&format!(r#"{{"found":{}}}"#, key == "present"))),
            }
        },
    )
    .unwrap()
}

#[tokio::test]
async fn raw_tools_go_through_the_same_pipeline() {
    let registry = Registry::new();
    let _t = registry.register(raw_tool()).unwrap();
    assert_eq!(
        registry.view().schemas_json(),
        r#"[{"name":"lookup","description":"Look a key up.","parameters":{"type":"object","additionalProperties":true,"properties":{"key":{"type":"string","description":"The key."},"limit":{"type":"integer"}},"required":["key"]}}]"#
    );
    let ok = registry
        .execute(ToolCall::new(
            "1",
            "lookup",
            r#"{"key":"present","extra":1}"#,
        ))
        .await;
    assert_eq!(*ok.value().unwrap(), v(r#"{"found":true}"#));
    assert_eq!(ok.content(), &[ContentBlock::text(r#"{"found":true}"#)]);

    let invalid = registry
        .execute(ToolCall::new("2", "lookup", r#"{"limit":"ten"}"#))
        .await;
    assert_eq!(invalid.code_str(), Some("INVALID_ARGS"));
    assert_eq!(
        invalid.message(),
        Some(r#"invalid arguments: missing required property "key"; "limit" must be an integer"#)
    );

    let bad = registry
        .execute(ToolCall::new("3", "lookup", r#"{"key":"bad"}"#))
        .await;
    assert_eq!(
        bad.message(),
        Some(r#"tool "lookup" returned invalid output: "value.found" must be a boolean"#)
    );
    let err = registry
        .execute(ToolCall::new("4", "lookup", r#"{"key":"err"}"#))
        .await;
    assert_eq!(
        (err.code_str(), err.message()),
        (Some("UPSTREAM"), Some("server said no"))
    );
}

#[tokio::test]
async fn raw_schemas_outside_the_vocabulary_are_refused() {
    let err = RawTool::new(
        "x",
        "x",
        &v(r##"{"type":"object","properties":{"a":{"type":"string","format":"uri"},"b":{"$ref":"#/x"}}}"##),
        &v("{}"),
        |_, _| async { Ok(Value::Null) },
    )
    .unwrap_err();
    assert_eq!(err.violations().len(), 2);
    assert!(err.to_string().starts_with("unsupported JSON schema: "));

    // Schemas built in code are checked at registration.
    let registry = Registry::new();
    let tool = RawTool::from_schemas(
        "x",
        "x",
        Schema::closed_object(vec![]),
        Schema::one_of(vec![std::sync::Arc::new(Schema::string())]),
        |_, _| async { Ok(Value::Null) },
    );
    let err = registry.register(tool).unwrap_err();
    assert!(matches!(err, RegisterError::Schema { .. }));
    assert_eq!(
        err.code(),
        Some(dsh_runtime::PipelineCode::UnsupportedSchema)
    );
    assert!(
        err.to_string()
            .starts_with(r#"tool "x": unsupported JSON schema: output"#),
        "{err}"
    );
    assert!(registry.view().names().is_empty());
}

#[tokio::test]
async fn raw_tool_options() {
    let registry = Registry::new();
    let _t = registry
        .register(
            raw_tool()
                .with_concurrency_safe(true)
                .with_render(|_, v| Ok(vec![ContentBlock::text(format!("found: {v}"))])),
        )
        .unwrap();
    let call = ToolCall::new("1", "lookup", r#"{"key":"present"}"#);
    assert_eq!(
        registry.execution_mode(&call),
        dsh_runtime::ExecutionMode::Parallel
    );
    let r = registry.execute(call).await;
    assert_eq!(
        r.content(),
        &[ContentBlock::text(r#"found: {"found":true}"#)]
    );
}
