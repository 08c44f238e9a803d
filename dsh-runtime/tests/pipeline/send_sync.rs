//! The auto traits users rely on: every public type a host keeps, shares or moves across
//! tasks is `Send + Sync + 'static`, and the futures of a call are `Send` (so they can be
//! spawned on a multi-thread runtime). Checked at compile time: a regression fails the
//! build of this test binary.

use std::future::Future;

use dsh_runtime::cards::{CallView, ResultView, ToolCallKind};
use dsh_runtime::hooks::{Accept, Approval, PostDecision, PreDecision, Replacement};
use dsh_runtime::{
    AgentScope, AgentScopeId, CallIdentity, CallOrder, DispatchOutcome, DynTool, ExecutionId,
    ExecutionMode, FailureCode, PipelineCode, RegisterError, RegistrationGuard, RegistrationHandle,
    Registry, RegistryBuilder, RestrictError, Restriction, Tool, ToolCall, ToolCallError,
    ToolContext, ToolDefinition, ToolDescriptor, ToolError, ToolResult, ToolView,
    UnknownPipelineCode, content::ContentBlock, schema::Schema, tool, validate::ToolArgsError,
};

fn send_sync_static<T: Send + Sync + 'static>() {}

fn send<F: Future + Send>(f: F) -> F {
    f
}

fn send_static<F: Future + Send + 'static>(f: F) -> F {
    f
}

/// Say hello.
#[tool]
async fn hello(name: String) -> String {
    format!("hello {name}")
}

#[test]
fn public_types_are_send_sync_and_static() {
    send_sync_static::<Registry>();
    send_sync_static::<RegistryBuilder>();
    send_sync_static::<AgentScope>();
    send_sync_static::<ToolView>();
    send_sync_static::<RegistrationHandle>();
    send_sync_static::<RegistrationGuard>();
    send_sync_static::<ToolResult>();
    send_sync_static::<ToolCall>();
    send_sync_static::<ToolContext>();
    send_sync_static::<CallIdentity>();
    send_sync_static::<ExecutionId>();
    send_sync_static::<AgentScopeId>();
    send_sync_static::<DynTool>();
    send_sync_static::<ToolDefinition>();
    send_sync_static::<ToolDescriptor>();
    send_sync_static::<Schema>();
    send_sync_static::<ContentBlock>();
    send_sync_static::<DispatchOutcome>();
    send_sync_static::<CallOrder>();
    send_sync_static::<ExecutionMode>();
    send_sync_static::<Restriction>();
    send_sync_static::<PipelineCode>();
    send_sync_static::<FailureCode<'static>>();
    send_sync_static::<ToolError>();
    send_sync_static::<ToolCallError>();
    send_sync_static::<ToolArgsError>();
    send_sync_static::<RegisterError>();
    send_sync_static::<RestrictError>();
    send_sync_static::<UnknownPipelineCode>();
    send_sync_static::<PreDecision>();
    send_sync_static::<Approval>();
    send_sync_static::<PostDecision>();
    send_sync_static::<Accept>();
    send_sync_static::<Replacement>();
    send_sync_static::<CallView>();
    send_sync_static::<ResultView>();
    send_sync_static::<ToolCallKind>();
    send_sync_static::<Hello>();
    send_sync_static::<HelloArgs>();
}

#[test]
fn call_futures_are_send() {
    let registry = Registry::new();
    let scope = registry.scope();
    // Built, never polled: only their types matter.
    drop(send(registry.execute(ToolCall::new("1", "hello", "{}"))));
    drop(send(
        registry.execute_batch(vec![ToolCall::new("2", "hello", "{}")], 2),
    ));
    drop(send(registry.call::<Hello>(HelloArgs { name: "a".into() })));
    drop(send(scope.call::<Hello>(HelloArgs { name: "b".into() })));
    drop(send_static(registry.execute_ordered(
        ToolCall::new("3", "hello", "{}"),
        &CallOrder::new(),
    )));
    drop(send(Hello.call(
        HelloArgs { name: "c".into() },
        ToolContext::detached("hello"),
    )));
    // A call future that owns its registry can be spawned.
    let owned = registry.clone();
    drop(send_static(async move {
        owned.execute(ToolCall::new("4", "hello", "{}")).await
    }));
}

fn error<T: std::error::Error + Send + Sync + 'static>() {}

#[test]
fn public_error_types_are_std_errors() {
    error::<RegisterError>();
    error::<RestrictError>();
    error::<ToolCallError>();
    error::<ToolArgsError>();
    error::<UnknownPipelineCode>();
    error::<dsh_runtime::schema::SchemaError>();
    error::<dsh_runtime::json::ParseError>();
    error::<dsh_runtime::json::LosslessError>();
    error::<dsh_runtime::json::DeError>();
}

#[test]
fn error_sources_chain_the_cause() {
    use std::error::Error as _;

    // A schema refusal carries the schema error.
    let schema_error =
        Schema::from_json_schema(&dsh_runtime::json::Value::from("not a schema")).unwrap_err();
    let err = RegisterError::Schema {
        name: "bad".into(),
        error: schema_error.clone(),
    };
    let source = err.source().expect("a schema refusal has a source");
    assert_eq!(
        source.downcast_ref::<dsh_runtime::schema::SchemaError>(),
        Some(&schema_error)
    );
    assert!(RegisterError::Reserved.source().is_none());

    // A tool error converted from an io error keeps it.
    let io = std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
    let tool_error = ToolError::from(io);
    assert_eq!(tool_error.message(), "gone");
    assert!(
        tool_error
            .source()
            .is_some_and(|e| e.is::<std::io::Error>())
    );
    let boxed: Box<dyn std::error::Error + Send + Sync> = tool_error.into();
    assert!(boxed.source().is_some_and(|e| e.is::<std::io::Error>()));
    assert!(ToolError::new("plain").source().is_none());
}

/// Halve a number.
#[tool]
async fn halve(x: f64) -> f64 {
    x / 2.0
}

#[tokio::test]
async fn a_typed_call_whose_arguments_do_not_convert_has_the_cause() {
    use std::error::Error as _;

    let registry = Registry::new();
    let _t = registry.register(Halve).unwrap();
    assert_eq!(registry.call::<Halve>(HalveArgs { x: 3.0 }).await, Ok(1.5));
    // NaN is not JSON: the arguments fail the lossless conversion, which is the source.
    let err = registry
        .call::<Halve>(HalveArgs { x: f64::NAN })
        .await
        .unwrap_err();
    assert_eq!(err.code.as_deref(), Some("INVALID_ARGS"));
    assert!(
        err.source()
            .is_some_and(|e| e.is::<dsh_runtime::json::LosslessError>()),
        "{err:?}"
    );
    let missing = registry
        .call::<Hello>(HelloArgs { name: "x".into() })
        .await
        .unwrap_err();
    assert_eq!(missing.code.as_deref(), Some("UNKNOWN_TOOL"));
    assert!(missing.source().is_none());
}
