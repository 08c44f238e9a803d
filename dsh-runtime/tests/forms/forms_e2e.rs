//! A `#[tool]` that asks its caller a typed form, run through `Registry::execute` under
//! `with_caller`: the request the caller sees, and what the body gets for each answer
//! (accepted, declined, cancelled, invalid, no caller).

use std::sync::{Arc, Mutex};

use dsh_runtime::caller::{
    CallerAnswer, CallerError, CallerRequest, Elicited, FormAnswer, caller_fn, codes, with_caller,
};
use dsh_runtime::{Registry, ToolCall, ToolContext, ToolError, ToolResult, ToolSchema, tool};
use serde::Deserialize;
use serde_json::json;

use crate::forms_shapes::{Color, Size};
use crate::forms_support::{assert_mcp, value};

/// What to paint.
#[derive(ToolSchema, Deserialize, Debug)]
pub(crate) struct PaintJob {
    /// The wall to paint.
    wall: String,
    color: Color,
    #[serde(default)]
    coats: u8,
    sizes: Option<Vec<Size>>,
}

/// Paint a wall in the color the user picks.
#[tool]
async fn paint(cx: ToolContext) -> Result<String, ToolError> {
    Ok(match cx.elicit::<PaintJob>("What should I paint?").await? {
        Elicited::Accepted(job) => format!(
            "painting {} {:?} ({} coats, {} sizes)",
            job.wall,
            job.color,
            job.coats,
            job.sizes.map_or(0, |s| s.len())
        ),
        Elicited::Declined => "declined".into(),
        Elicited::Cancelled => "cancelled".into(),
    })
}

/// Run `paint` with a caller answering every form with `answer`; the result and the
/// requests the caller saw.
async fn run(answer: Result<FormAnswer, CallerError>) -> (ToolResult, Vec<CallerRequest>) {
    let registry = Registry::new();
    let _paint = registry.register(Paint).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let caller = caller_fn(move |request: CallerRequest| {
        log.lock().unwrap().push(request);
        let answer = answer.clone();
        async move { answer.map(CallerAnswer::Form) }
    });
    let result = with_caller(caller, registry.execute(ToolCall::new("c1", "paint", "{}"))).await;
    let seen = seen.lock().unwrap().clone();
    (result, seen)
}

#[tokio::test]
async fn the_caller_sees_the_typed_form() {
    let (result, seen) = run(Ok(FormAnswer::Declined)).await;
    assert_eq!(result.text(), "declined");
    let [CallerRequest::Form(form)] = seen.as_slice() else {
        panic!("one form request: {seen:?}");
    };
    assert_eq!(form.message, "What should I paint?");
    let schema = dsh_runtime::json::to_serde(&form.requested_schema);
    assert_mcp(&schema);
    assert_eq!(
        schema,
        json!({
            "type": "object",
            "properties": {
                "wall": {"type": "string", "description": "The wall to paint."},
                "color": {"type": "string", "enum": ["red", "green", "blue"], "description": "A color."},
                "coats": {"type": "integer", "minimum": 0, "maximum": 255, "default": 0},
                "sizes": {"type": "array", "items": {"anyOf": [
                    {"const": "S", "title": "Small"},
                    {"const": "M", "title": "Medium"},
                    {"const": "L", "title": "Large"},
                    {"const": "XL", "title": "XL"},
                ]}},
            },
            "required": ["wall", "color"],
        })
    );
}

#[tokio::test]
async fn an_accepted_answer_reaches_the_body() {
    let answer = value(r#"{"wall":"north","color":"green","sizes":["S","L"]}"#);
    let (result, _) = run(Ok(FormAnswer::Accepted(answer))).await;
    assert!(result.is_success(), "{result:?}");
    assert_eq!(result.text(), "painting north Green (0 coats, 2 sizes)");
}

#[tokio::test]
async fn declined_and_cancelled_reach_the_body() {
    assert_eq!(run(Ok(FormAnswer::Declined)).await.0.text(), "declined");
    assert_eq!(run(Ok(FormAnswer::Cancelled)).await.0.text(), "cancelled");
}

#[tokio::test]
async fn an_invalid_answer_fails_the_call_with_its_code() {
    let answer = value(r#"{"wall":"north","color":"purple","coats":"two"}"#);
    let (result, _) = run(Ok(FormAnswer::Accepted(answer))).await;
    assert!(result.is_error());
    assert_eq!(result.code_str(), Some(codes::INVALID_ANSWER));
    let message = result.message().unwrap_or_default();
    assert!(message.contains("answer.color"), "{message}");
    assert!(message.contains("answer.coats"), "{message}");
}

#[tokio::test]
async fn a_caller_error_fails_the_call_with_its_code() {
    let (result, _) = run(Err(CallerError::Unsupported {
        capability: "elicitation",
    }))
    .await;
    assert_eq!(result.code_str(), Some(codes::CALLER_UNSUPPORTED));
}

#[tokio::test]
async fn without_a_caller_nobody_is_asked() {
    let registry = Registry::new();
    let _paint = registry.register(Paint).unwrap();
    let result = registry.execute(ToolCall::new("c1", "paint", "{}")).await;
    assert_eq!(result.code_str(), Some(codes::NO_CALLER));
}
