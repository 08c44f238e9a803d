//! What a call asks of its MCP client: the `dsh_runtime::caller` requests of a tool body
//! (forms, URLs, sampling, roots, logs) on MCP's wire.
//!
//! - On sessions with server-to-client requests (revision 2025-11-25, stdio and HTTP
//!   sessions) each request is sent to the client as `elicitation/create`,
//!   `sampling/createMessage` or `roots/list`, and the answer read back
//!   ([`session::SessionCaller`]); logs are `notifications/message`, at or above the
//!   level the client set with `logging/setLevel` (`info` until it sets one).
//! - On revision 2026-07-28 the call is suspended and answered with an
//!   `InputRequiredResult` whose `inputRequests` hold the requests (the approval route's
//!   machinery, see `crate::approval::resume`); logs go on the call's response stream
//!   at or above the request's `_meta["io.modelcontextprotocol/logLevel"]`, and none
//!   without one.
//!
//! A request is asked only when the client declared the capability answering it
//! (`elicitation` with form or URL mode, `sampling`, `roots`); otherwise it fails
//! with `CallerError::Unsupported`, which a body that lets it through (`?`) turns into
//! the protocol's missing-capability error (`-32021`, with `requiredCapabilities`) on
//! revision 2026-07-28, and into a tool error on earlier ones.

// Sampling, roots and logging are deprecated by revision 2026-07-28 (SEP-2577), which
// keeps them through `InputRequiredResult`; they are served on both revisions.
#![allow(deprecated)]

pub(crate) mod logs;
pub(crate) mod rounds;
pub(crate) mod session;

use dsh_runtime::caller::{
    CallerAnswer, CallerError, CallerRequest, FormAnswer, RequestKind, Root, SampledMessage,
    UrlAnswer,
};
use rmcp::model::{
    ClientCapabilities, CreateMessageRequestParams, ElicitRequestParams, ElicitResult,
    ElicitationAction, InputRequest, ListRootsRequest, Request,
};
use serde_json::{Value, json};

/// Closes the HTTP stream a request of a session is answered on (SEP-1699), given the
/// request's id (its text) and the delay after which the client should resume: put on
/// the request by the HTTP transport, for sessions whose streams can be resumed.
#[derive(Clone)]
pub(crate) struct StreamCloser(
    pub(crate)  std::sync::Arc<
        dyn Fn(String, std::time::Duration) -> dsh_runtime::BoxFuture<'static, bool> + Send + Sync,
    >,
);

/// Whether the client declared the capability answering `kind`.
pub(crate) fn can_answer(capabilities: Option<&ClientCapabilities>, kind: RequestKind) -> bool {
    let Some(c) = capabilities else {
        return false;
    };
    match kind {
        // A bare `elicitation: {}` means form, as the protocol has it.
        RequestKind::Form => c
            .elicitation
            .as_ref()
            .is_some_and(|e| e.form.is_some() || e.url.is_none()),
        RequestKind::Url => c.elicitation.as_ref().is_some_and(|e| e.url.is_some()),
        RequestKind::Sample => c.sampling.is_some(),
        RequestKind::Roots => c.roots.is_some(),
        _ => false,
    }
}

/// The capabilities a client lacks to answer `kind`, as `requiredCapabilities` names
/// them.
pub(crate) fn required(kind: RequestKind) -> ClientCapabilities {
    let value = match kind {
        RequestKind::Url => json!({ "elicitation": { "url": {} } }),
        RequestKind::Form => json!({ "elicitation": {} }),
        RequestKind::Sample => json!({ "sampling": {} }),
        _ => json!({ "roots": {} }),
    };
    serde_json::from_value(value).unwrap_or_default()
}

/// The capability named `name` (as [`RequestKind::capability`] names them).
pub(crate) fn required_named(name: &str) -> ClientCapabilities {
    match name {
        "sampling" => required(RequestKind::Sample),
        "roots" => required(RequestKind::Roots),
        _ => required(RequestKind::Form),
    }
}

fn failed(what: &str, e: impl std::fmt::Display) -> CallerError {
    CallerError::Failed(format!("{what}: {e}"))
}

/// The request's params on MCP's wire (`elicitation/create`, `sampling/createMessage`,
/// `roots/list`).
pub(crate) fn input_request(request: &CallerRequest) -> Result<InputRequest, CallerError> {
    Ok(match request {
        CallerRequest::Form(_) | CallerRequest::Url(_) => {
            InputRequest::Elicitation(Request::new(elicit_params(request)?))
        }
        CallerRequest::Sample(_) => {
            InputRequest::CreateMessage(Request::new(sample_params(request)?))
        }
        _ => InputRequest::ListRoots(ListRootsRequest::default()),
    })
}

/// An `elicitation/create` request's params of a form or URL request.
pub(crate) fn elicit_params(request: &CallerRequest) -> Result<ElicitRequestParams, CallerError> {
    let value = match request {
        CallerRequest::Form(form) => json!({
            "mode": "form",
            "message": form.message,
            "requestedSchema": dsh_runtime::json::to_serde(&form.requested_schema),
        }),
        CallerRequest::Url(url) => json!({
            "mode": "url",
            "message": url.message,
            "url": url.url,
            "elicitationId": url.elicitation_id,
        }),
        _ => return Err(CallerError::Failed("not an elicitation".into())),
    };
    serde_json::from_value(value).map_err(|e| failed("the form is not one MCP can send", e))
}

/// A `sampling/createMessage` request's params.
pub(crate) fn sample_params(
    request: &CallerRequest,
) -> Result<CreateMessageRequestParams, CallerError> {
    let CallerRequest::Sample(sample) = request else {
        return Err(CallerError::Failed("not a sampling request".into()));
    };
    let value = serde_json::to_value(sample).map_err(|e| failed("sampling request", e))?;
    serde_json::from_value(value)
        .map_err(|e| failed("the sampling request is not one MCP can send", e))
}

/// Read the client's answer (`ElicitResult`, `CreateMessageResult`, `ListRootsResult`
/// as JSON) to a request of `kind`.
pub(crate) fn read_answer(kind: RequestKind, answer: &Value) -> Result<CallerAnswer, CallerError> {
    match kind {
        RequestKind::Form | RequestKind::Url => {
            let result: ElicitResult = serde_json::from_value(answer.clone())
                .map_err(|e| invalid("an elicitation result", e))?;
            Ok(elicit_answer(kind, result))
        }
        RequestKind::Sample => read_sampled(answer).map(CallerAnswer::Sample),
        _ => {
            let roots = answer
                .get("roots")
                .cloned()
                .ok_or_else(|| invalid("a roots list", "no `roots`"))?;
            let roots: Vec<Root> =
                serde_json::from_value(roots).map_err(|e| invalid("a roots list", e))?;
            Ok(CallerAnswer::Roots(roots))
        }
    }
}

fn invalid(what: &str, e: impl std::fmt::Display) -> CallerError {
    CallerError::InvalidAnswer(format!("the client's answer is not {what}: {e}"))
}

/// A form or URL answer.
pub(crate) fn elicit_answer(kind: RequestKind, result: ElicitResult) -> CallerAnswer {
    let accepted = matches!(result.action, ElicitationAction::Accept);
    let cancelled = matches!(result.action, ElicitationAction::Cancel);
    if kind == RequestKind::Url {
        return CallerAnswer::Url(match (accepted, cancelled) {
            (true, _) => UrlAnswer::Accepted,
            (_, true) => UrlAnswer::Cancelled,
            _ => UrlAnswer::Declined,
        });
    }
    CallerAnswer::Form(match (accepted, cancelled) {
        (true, _) => {
            let content = result
                .content
                .unwrap_or_else(|| Value::Object(Default::default()));
            match dsh_runtime::json::from_serde(&content) {
                Ok(content) => FormAnswer::Accepted(content),
                // Not lossless JSON (a number out of range): nothing the form admits.
                Err(_) => FormAnswer::Accepted(dsh_runtime::json::Value::Null),
            }
        }
        (_, true) => FormAnswer::Cancelled,
        _ => FormAnswer::Declined,
    })
}

/// A sampling answer: one message (a one-block array is read as its block).
fn read_sampled(answer: &Value) -> Result<SampledMessage, CallerError> {
    let mut answer = answer.clone();
    if let Some(content) = answer.get_mut("content")
        && let Value::Array(blocks) = content
        && blocks.len() == 1
    {
        let block = blocks.remove(0);
        *content = block;
    }
    let value = dsh_runtime::json::from_serde(&answer).map_err(|e| invalid("a message", e))?;
    dsh_runtime::json::from_value::<SampledMessage>(&value).map_err(|e| invalid("a message", e))
}
