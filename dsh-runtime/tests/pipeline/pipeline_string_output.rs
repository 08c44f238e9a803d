//! A `#[tool]` whose output is a `String` takes the pipeline's text path (the text is kept
//! for the default content block, the value made from it): whatever the text, short
//! (held inline) or long, the result must be the one of the general path, a tool that
//! returns the same string as a JSON value; directly, through a wrapper, and on a task of
//! its own (a call the caller can cancel).

use dsh_runtime::hooks::{CallInfo, HookFuture, Next, Wrapper};
use dsh_runtime::json::{self, Value};
use dsh_runtime::{
    CancellationToken, DispatchOutcome, RawTool, Registry, ToolCall, ToolError, tool,
};
use proptest::prelude::*;

/// Echo the text.
#[tool]
async fn echo_text(
    /// The text to echo.
    text: String,
) -> String {
    text
}

/// Runs the rest of the dispatch unchanged: forces the wrapped path.
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

/// The same tool as a JSON value in, JSON value out.
fn raw_echo() -> RawTool {
    let params = json::parse(
        r#"{"type":"object","properties":{"text":{"type":"string","description":"The text to echo."}},"required":["text"],"additionalProperties":false}"#,
    )
    .expect("parameters");
    let output = json::parse(r#"{"type":"string"}"#).expect("output");
    RawTool::new(
        "echo_text",
        "Echo the text.",
        &params,
        &output,
        |args, _| async move {
            Ok(args
                .as_object()
                .and_then(|o| o.get("text"))
                .cloned()
                .unwrap_or(Value::Null))
        },
    )
    .expect("raw tool")
}

/// The result's envelope and its value, for `text`.
fn run(typed: bool, wrapped: bool, isolated: bool, text: &str) -> (String, Option<Value>) {
    let registry = Registry::new();
    let _tool = if typed {
        registry.register(EchoText)
    } else {
        registry.register(raw_echo())
    }
    .expect("registered");
    let _w = wrapped.then(|| registry.add_wrapper(PassThrough));
    let args = serde_json::json!({ "text": text }).to_string();
    let mut call = ToolCall::new("c", "echo_text", args);
    if isolated {
        call = call.with_cancellation(CancellationToken::new());
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let result = rt.block_on(registry.execute(call));
    let envelope = serde_json::to_string(&result).expect("envelope");
    (envelope, result.value().cloned())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn a_string_output_gives_the_general_paths_result(
        text in prop_oneof![any::<String>(), "[a-zé\"\\\\]{20,90}"],
        wrapped in any::<bool>(),
        isolated in any::<bool>(),
    ) {
        let (typed, value) = run(true, wrapped, isolated, &text);
        let (general, _) = run(false, wrapped, isolated, &text);
        prop_assert_eq!(&typed, &general);
        prop_assert_eq!(value, Some(Value::from(text.as_str())));
    }
}
