//! OpenAI Chat Completions: `choices[0].message.tool_calls[]` in, `role: "tool"` messages
//! out (text only: an image is replaced by [`super::IMAGE_FALLBACK`], an embedded text
//! resource joins the text, and audio and files are each a line saying they were left
//! out).

use serde_json::{Value as J, json};

use super::content::{Takes, render};
use super::{Provider, Reader, RoundTripError, conversation};
use dsh_runtime::{ToolCall, ToolResult};

/// The Chat Completions API (`POST /v1/chat/completions`).
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenAiChat;

const NAME: &str = "OpenAI Chat Completions";

/// A `role: "tool"` message takes text only.
const TAKES: Takes = Takes {
    api: NAME,
    images: false,
    pdf: false,
    text_documents: false,
};

/// The first choice's message.
fn message(response: &J) -> Result<&serde_json::Map<String, J>, RoundTripError> {
    let r = Reader { provider: NAME };
    let root = r.object(response, "(the response)")?;
    let choices = r.array(root, "", "choices")?;
    let Some(first) = choices.first() else {
        return r.fail("choices", "a non-empty array");
    };
    let choice = r.object(first, "choices[0]")?;
    let message = r.field(choice, "choices[0]", "message")?;
    r.object(message, "choices[0].message")
}

impl Provider for OpenAiChat {
    fn name(&self) -> &'static str {
        NAME
    }

    fn calls(&self, response: &J) -> Result<Vec<ToolCall>, RoundTripError> {
        let r = Reader { provider: NAME };
        let message = message(response)?;
        let base = "choices[0].message";
        let calls = r.optional_array(message, base, "tool_calls")?;
        let mut out = Vec::with_capacity(calls.len());
        for (i, call) in calls.iter().enumerate() {
            let path = format!("{base}.tool_calls[{i}]");
            let call = r.object(call, &path)?;
            let id = r.string(call, &path, "id")?;
            match call.get("type") {
                None => {}
                Some(J::String(t)) if t == "function" => {}
                Some(_) => return r.fail(&format!("{path}.type"), "\"function\""),
            }
            let fpath = format!("{path}.function");
            let function = r.object(r.field(call, &path, "function")?, &fpath)?;
            let name = r.string(function, &fpath, "name")?;
            // The model's text, unparsed: the registry's snapshot reads it losslessly.
            let arguments = r.string(function, &fpath, "arguments")?;
            out.push(ToolCall::new(id, name, arguments));
        }
        Ok(out)
    }

    fn messages(&self, calls: &[ToolCall], results: &[ToolResult]) -> Vec<J> {
        calls
            .iter()
            .zip(results)
            .map(|(call, result)| {
                json!({
                    "role": "tool",
                    "tool_call_id": call.call_id(),
                    "content": render(result, TAKES).text,
                })
            })
            .collect()
    }

    fn extend_request(
        &self,
        request: &mut J,
        response: &J,
        messages: Vec<J>,
    ) -> Result<(), RoundTripError> {
        let message = message(response)?;
        // The assistant message as a request message: the keys the request type has.
        let mut assistant = serde_json::Map::new();
        assistant.insert("role".into(), J::from("assistant"));
        assistant.insert(
            "content".into(),
            message.get("content").cloned().unwrap_or(J::Null),
        );
        if let Some(refusal @ J::String(_)) = message.get("refusal") {
            assistant.insert("refusal".into(), refusal.clone());
        }
        if let Some(J::Array(calls)) = message.get("tool_calls")
            && !calls.is_empty()
        {
            assistant.insert("tool_calls".into(), J::Array(calls.clone()));
        }
        let conversation = conversation(NAME, request, "messages")?;
        conversation.push(J::Object(assistant));
        conversation.extend(messages);
        Ok(())
    }
}
