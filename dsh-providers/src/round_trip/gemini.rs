//! Google Gemini `generateContent`: `candidates[0].content.parts[].functionCall` in, one
//! user content of `functionResponse` parts out (`response.output`, or `response.error`
//! on failures; images and PDF files as `functionResponse.parts[].inlineData`).
//!
//! A `functionCall` without an `id` gets the call id `#N` (its position among the calls);
//! its `functionResponse` then carries no id, and Gemini matches it by name and order.

use serde_json::{Value as J, json};

use super::content::{Part, Takes, render};
use super::{Provider, Reader, RoundTripError, conversation};
use dsh_runtime::{ToolCall, ToolResult};

/// The Gemini API (`models/*:generateContent`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Gemini;

const NAME: &str = "Gemini";

/// A `functionResponse` takes media parts: images and documents (PDF).
const TAKES: Takes = Takes {
    api: NAME,
    images: true,
    pdf: true,
    text_documents: false,
};

/// A part as a `functionResponse.parts[]` entry.
fn part(part: Part<'_>) -> J {
    match part {
        Part::Image { media_type, data } => {
            json!({"inlineData": {"mimeType": media_type, "data": data}})
        }
        Part::Pdf { data, .. } => {
            json!({"inlineData": {"mimeType": "application/pdf", "data": data}})
        }
        // Not produced: text resources join the text here (`text_documents: false`).
        Part::Document { text, .. } => {
            json!({"inlineData": {"mimeType": "text/plain", "data": text}})
        }
    }
}

/// The prefix of the call ids given to calls without one.
const POSITIONAL: char = '#';

fn turn(response: &J) -> Result<&J, RoundTripError> {
    let r = Reader { provider: NAME };
    let root = r.object(response, "(the response)")?;
    let candidates = r.array(root, "", "candidates")?;
    let Some(first) = candidates.first() else {
        return r.fail("candidates", "a non-empty array");
    };
    let candidate = r.object(first, "candidates[0]")?;
    r.field(candidate, "candidates[0]", "content")
}

impl Provider for Gemini {
    fn name(&self) -> &'static str {
        NAME
    }

    fn calls(&self, response: &J) -> Result<Vec<ToolCall>, RoundTripError> {
        let r = Reader { provider: NAME };
        let content = r.object(turn(response)?, "candidates[0].content")?;
        let parts = r.optional_array(content, "candidates[0].content", "parts")?;
        let mut out = Vec::new();
        for (i, part) in parts.iter().enumerate() {
            let path = format!("candidates[0].content.parts[{i}]");
            let part = r.object(part, &path)?;
            let Some(call) = part.get("functionCall") else {
                continue;
            };
            let path = format!("{path}.functionCall");
            let call = r.object(call, &path)?;
            let name = r.string(call, &path, "name")?;
            let id = match call.get("id") {
                None | Some(J::Null) => format!("{POSITIONAL}{}", out.len()),
                Some(J::String(id)) => id.clone(),
                Some(_) => return r.fail(&format!("{path}.id"), "a string"),
            };
            let args = match call.get("args") {
                None | Some(J::Null) => J::Object(serde_json::Map::new()),
                Some(a) => a.clone(),
            };
            out.push(ToolCall::new(id, name, args));
        }
        Ok(out)
    }

    fn messages(&self, calls: &[ToolCall], results: &[ToolResult]) -> Vec<J> {
        let parts: Vec<J> = calls
            .iter()
            .zip(results)
            .map(|(call, result)| {
                let key = if result.is_error() { "error" } else { "output" };
                let mut response = serde_json::Map::new();
                response.insert("name".into(), J::from(call.name()));
                let rendered = render(result, TAKES);
                response.insert("response".into(), json!({ key: rendered.text }));
                if !call.call_id().starts_with(POSITIONAL) {
                    response.insert("id".into(), J::from(call.call_id()));
                }
                if !rendered.parts.is_empty() {
                    let parts = rendered.parts.into_iter().map(part).collect();
                    response.insert("parts".into(), J::Array(parts));
                }
                json!({ "functionResponse": response })
            })
            .collect();
        if parts.is_empty() {
            return Vec::new();
        }
        vec![json!({"role": "user", "parts": parts})]
    }

    fn extend_request(
        &self,
        request: &mut J,
        response: &J,
        messages: Vec<J>,
    ) -> Result<(), RoundTripError> {
        let mut turn = turn(response)?.clone();
        if let Some(o) = turn.as_object_mut() {
            o.entry("role").or_insert_with(|| J::from("model"));
        }
        let conversation = conversation(NAME, request, "contents")?;
        conversation.push(turn);
        conversation.extend(messages);
        Ok(())
    }
}
