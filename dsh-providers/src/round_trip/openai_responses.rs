//! OpenAI Responses: `output[]` items of type `function_call` in, `function_call_output`
//! items out (text, with `input_image` items for images and `input_file` items for PDF
//! files).

use serde_json::{Value as J, json};

use super::content::{Part, Takes, render};
use super::{Provider, Reader, RoundTripError, conversation};
use dsh_runtime::{ToolCall, ToolResult};

/// The Responses API (`POST /v1/responses`).
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenAiResponses;

const NAME: &str = "OpenAI Responses";

/// A `function_call_output` takes text, images and files (PDF).
const TAKES: Takes = Takes {
    api: NAME,
    images: true,
    pdf: true,
    text_documents: false,
};

/// A part as an item of a `function_call_output`'s `output`.
fn item(part: Part<'_>) -> J {
    match part {
        Part::Image { media_type, data } => {
            json!({"type": "input_image", "image_url": format!("data:{media_type};base64,{data}")})
        }
        Part::Pdf { data, uri } => json!({
            "type": "input_file",
            "filename": Part::file_name(uri),
            "file_data": format!("data:application/pdf;base64,{data}"),
        }),
        // Not produced: text resources join the text here (`text_documents: false`).
        Part::Document { uri, text } => {
            json!({"type": "input_text", "text": format!("[resource {uri}]\n{text}")})
        }
    }
}

fn output(response: &J) -> Result<&[J], RoundTripError> {
    let r = Reader { provider: NAME };
    let root = r.object(response, "(the response)")?;
    r.array(root, "", "output")
}

impl Provider for OpenAiResponses {
    fn name(&self) -> &'static str {
        NAME
    }

    fn calls(&self, response: &J) -> Result<Vec<ToolCall>, RoundTripError> {
        let r = Reader { provider: NAME };
        let mut out = Vec::new();
        for (i, item) in output(response)?.iter().enumerate() {
            let path = format!("output[{i}]");
            let item = r.object(item, &path)?;
            if item.get("type").and_then(J::as_str) != Some("function_call") {
                continue;
            }
            let call_id = r.string(item, &path, "call_id")?;
            let name = r.string(item, &path, "name")?;
            // The model's text, unparsed: the registry's snapshot reads it losslessly.
            let arguments = r.string(item, &path, "arguments")?;
            out.push(ToolCall::new(call_id, name, arguments));
        }
        Ok(out)
    }

    fn messages(&self, calls: &[ToolCall], results: &[ToolResult]) -> Vec<J> {
        calls
            .iter()
            .zip(results)
            .map(|(call, result)| {
                let rendered = render(result, TAKES);
                let output = if rendered.parts.is_empty() {
                    J::from(rendered.text)
                } else {
                    let mut items = Vec::new();
                    if !rendered.text.is_empty() {
                        items.push(json!({"type": "input_text", "text": rendered.text}));
                    }
                    items.extend(rendered.parts.into_iter().map(item));
                    J::Array(items)
                };
                json!({"type": "function_call_output", "call_id": call.call_id(), "output": output})
            })
            .collect()
    }

    fn extend_request(
        &self,
        request: &mut J,
        response: &J,
        messages: Vec<J>,
    ) -> Result<(), RoundTripError> {
        let items = output(response)?.to_vec();
        // A text `input` is the user's first message.
        if let Some(J::String(text)) = request.get("input") {
            let first = json!({"role": "user", "content": text});
            request["input"] = J::Array(vec![first]);
        }
        let conversation = conversation(NAME, request, "input")?;
        conversation.extend(items);
        conversation.extend(messages);
        Ok(())
    }
}
