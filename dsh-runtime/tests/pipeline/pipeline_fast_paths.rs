//! The per-call fast paths of the pipeline agree with its general paths on generated
//! inputs:
//!
//! - an unwrapped call creates the body's cancellation token only if the body asks for it;
//!   a call through a pass-through wrapper (which may run the body again, so it always
//!   creates the token) must give the very same result whatever the body does with its
//!   token and whenever the caller cancels;
//! - a view's name table (a non-keyed hash) finds exactly the names a linear scan of the
//!   registered tools finds.

use dsh_runtime::hooks::{CallInfo, HookFuture, Next, Wrapper};
use dsh_runtime::json::Value;
use dsh_runtime::{DispatchOutcome, RawTool, Registry, ToolCall, ToolContext, ToolError};
use proptest::prelude::*;
use std::collections::BTreeSet;
use tokio_util::sync::CancellationToken;

/// Runs the rest of the dispatch unchanged: forces the general (wrapped) path.
struct PassThrough;

impl Wrapper for PassThrough {
    fn around<'a>(
        &'a self,
        _call: &'a CallInfo<'a>,
        next: Next<'a>,
    ) -> HookFuture<'a, Result<DispatchOutcome, ToolError>> {
        HookFuture::new(async move { next.run().await })
    }
}

/// What the body does with its context.
#[derive(Clone, Copy, Debug)]
enum Touch {
    /// Never looks at the token.
    Nothing,
    /// Asks whether it is cancelled, without taking the token.
    Asks,
    /// Takes the token and asks it.
    Reads,
    /// Cancels its own token.
    CancelsOwn,
    /// Cancels its own token through a clone of the context, then asks the original.
    CancelsThroughClone,
    /// Takes the token, then the caller cancels, then asks again.
    ReadsThenCallerCancels,
    /// Sends context on the side and concludes the turn.
    SideChannel,
}

/// When the caller cancels.
#[derive(Clone, Copy, Debug)]
enum Caller {
    Never,
    BeforeExecute,
    DuringBody,
}

fn touch() -> impl Strategy<Value = Touch> {
    prop_oneof![
        Just(Touch::Nothing),
        Just(Touch::Asks),
        Just(Touch::Reads),
        Just(Touch::CancelsOwn),
        Just(Touch::CancelsThroughClone),
        Just(Touch::ReadsThenCallerCancels),
        Just(Touch::SideChannel),
    ]
}

fn caller() -> impl Strategy<Value = Caller> {
    prop_oneof![
        Just(Caller::Never),
        Just(Caller::BeforeExecute),
        Just(Caller::DuringBody),
    ]
}

/// The body for one scenario; its value records everything it saw.
fn body(
    touch: Touch,
    caller: Caller,
    token: CancellationToken,
    fail: bool,
) -> impl Fn(
    Value,
    ToolContext,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Value, ToolError>> + Send>>
+ Send
+ Sync
+ 'static {
    move |_args, cx| {
        let token = token.clone();
        Box::pin(async move {
            let mut seen = Vec::new();
            if matches!(caller, Caller::DuringBody) {
                token.cancel();
            }
            match touch {
                Touch::Nothing => {}
                Touch::Asks => seen.push(cx.is_cancelled()),
                Touch::Reads => seen.push(cx.cancellation().is_cancelled()),
                Touch::CancelsOwn => {
                    cx.cancellation().cancel();
                    seen.push(cx.is_cancelled());
                    seen.push(token.is_cancelled());
                }
                Touch::CancelsThroughClone => {
                    let other = cx.clone();
                    other.cancellation().cancel();
                    seen.push(cx.is_cancelled());
                    seen.push(cx.cancellation().is_cancelled());
                }
                Touch::ReadsThenCallerCancels => {
                    let own = cx.cancellation().clone();
                    seen.push(own.is_cancelled());
                    token.cancel();
                    seen.push(own.is_cancelled());
                    seen.push(cx.is_cancelled());
                }
                Touch::SideChannel => {
                    cx.defer_context("first");
                    cx.clone().defer_context("second");
                    cx.conclude_turn();
                    seen.push(cx.is_cancelled());
                }
            }
            if fail {
                return Err(ToolError::with_code("OWN_CODE", format!("saw {seen:?}")));
            }
            Ok(Value::from(format!("saw {seen:?}")))
        })
    }
}

fn object_schema() -> Value {
    dsh_runtime::json::parse(r#"{"type":"object"}"#).expect("schema")
}

/// One scenario on a fresh registry, wrapped or not; the result envelope as JSON text.
fn run(touch: Touch, caller: Caller, fail: bool, wrapped: bool) -> String {
    let registry = Registry::new();
    let token = CancellationToken::new();
    let tool = RawTool::new(
        "probe",
        "A probe.",
        &object_schema(),
        &Value::Object(Default::default()),
        body(touch, caller, token.clone(), fail),
    )
    .expect("tool");
    let _t = registry.register(tool).expect("registered");
    let _w = wrapped.then(|| registry.add_wrapper(PassThrough));
    if matches!(caller, Caller::BeforeExecute) {
        token.cancel();
    }
    let call = ToolCall::new("c", "probe", "{}").with_cancellation(token);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let result = rt.block_on(registry.execute(call));
    serde_json::to_string(&result).expect("envelope")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn the_lazy_body_token_agrees_with_the_eager_one(
        touch in touch(),
        caller in caller(),
        fail in any::<bool>(),
    ) {
        let fast = run(touch, caller, fail, false);
        let general = run(touch, caller, fail, true);
        prop_assert_eq!(fast, general);
    }

    #[test]
    fn the_name_table_finds_what_a_scan_finds(
        names in proptest::collection::btree_set("[a-zA-Z0-9_-]{1,24}", 0..24),
        probes in proptest::collection::vec("[a-zA-Z0-9_-]{0,24}", 0..24),
    ) {
        let registry = Registry::new();
        let mut regs = Vec::new();
        for name in &names {
            let tool = RawTool::new(
                name.clone(),
                "A tool.",
                &object_schema(),
                &Value::Object(Default::default()),
                |_, _| async { Ok(Value::Null) },
            )
            .expect("tool");
            regs.push(registry.register(tool).expect("registered"));
        }
        let listed: BTreeSet<String> = registry.view().names().iter().map(|n| n.to_string()).collect();
        prop_assert_eq!(&listed, &names);
        for probe in names.iter().chain(probes.iter()) {
            let scanned = registry
                .view()
                .definitions()
                .into_iter()
                .find(|d| d.name == probe.as_str())
                .map(|d| d.name.to_string());
            let found = registry.view().get(probe).map(|t| t.definition().name.to_string());
            prop_assert_eq!(found, scanned, "lookup of {:?}", probe);
        }
        // A scope's view builds its table the other way (inherited, then its own tools).
        let scope = registry.scope();
        let own: BTreeSet<&String> = probes.iter().filter(|p| !p.is_empty()).take(4).collect();
        let extra: Vec<_> = own
            .into_iter()
            .map(|p| {
                let tool = RawTool::new(
                    p.clone(),
                    "Scoped.",
                    &object_schema(),
                    &Value::Object(Default::default()),
                    |_, _| async { Ok(Value::Null) },
                )
                .expect("tool");
                scope.register(tool).expect("registered")
            })
            .collect();
        for probe in names.iter().chain(probes.iter()) {
            let scanned = scope
                .view()
                .definitions()
                .into_iter()
                .find(|d| d.name == probe.as_str())
                .map(|d| d.description.to_string());
            let found = scope.view().get(probe).map(|t| t.definition().description.to_string());
            prop_assert_eq!(found, scanned, "scoped lookup of {:?}", probe);
        }
        drop(extra);
        drop(regs);
    }
}
