//! The auto traits users rely on: every public type a host keeps, shares or moves across
//! tasks is `Send + Sync + 'static`, and the futures of a call are `Send` (so they can be
//! spawned on a multi-thread runtime). Checked at compile time: a regression fails the
//! build of this test binary.

use std::future::Future;

use dsh_runtime::hooks::{Accept, Approval, PostDecision, PreDecision, Replacement};
use dsh_runtime::present::{CallView, ResultView, ToolCallKind};
use dsh_runtime::{
    CallOrder, ContentBlock, DispatchOutcome, DynTool, ErrorCode, ExecToken, Execution,
    ExecutionMode, FailureCode, RegisterError, Registration, RegistrationGuard, Registry,
    RegistryBuilder, RestrictError, Restriction, Schema, Scope, ScopeId, Tool, ToolArgsError,
    ToolCall, ToolCallError, ToolContext, ToolDefinition, ToolDescriptor, ToolError,
    ToolResult, UnknownErrorCode, View, tool,
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
    send_sync_static::<Scope>();
    send_sync_static::<View>();
    send_sync_static::<Registration>();
    send_sync_static::<RegistrationGuard>();
    send_sync_static::<ToolResult>();
    send_sync_static::<ToolCall>();
    send_sync_static::<ToolContext>();
    send_sync_static::<Execution>();
    send_sync_static::<ExecToken>();
    send_sync_static::<ScopeId>();
    send_sync_static::<DynTool>();
    send_sync_static::<ToolDefinition>();
    send_sync_static::<ToolDescriptor>();
    send_sync_static::<Schema>();
    send_sync_static::<ContentBlock>();
    send_sync_static::<DispatchOutcome>();
    send_sync_static::<CallOrder>();
    send_sync_static::<ExecutionMode>();
    send_sync_static::<Restriction>();
    send_sync_static::<ErrorCode>();
    send_sync_static::<FailureCode<'static>>();
    send_sync_static::<ToolError>();
    send_sync_static::<ToolCallError>();
    send_sync_static::<ToolArgsError>();
    send_sync_static::<RegisterError>();
    send_sync_static::<RestrictError>();
    send_sync_static::<UnknownErrorCode>();
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
    drop(send_static(
        registry.execute_ordered(ToolCall::new("3", "hello", "{}"), &CallOrder::new()),
    ));
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
