//! Anthropic Messages: `content[]` blocks of type `tool_use` in, one user message of
//! `tool_result` blocks out (`is_error` on failures; `image` blocks for images, `document`
//! blocks for embedded text resources and PDF files).

use serde_json::{Value as J, json};

use super::content::{Part, Takes, render};
use super::{Provider, Reader, RoundTripError, conversation};
use dsh_runtime::{ToolCall, ToolResult};

/// The Messages API (`POST /v1/messages`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Anthropic;

const NAME: &str = "Anthropic Messages";

/// A `tool_result` block's `content` takes text, images and documents (PDF, plain text).
const TAKES: Takes = Takes {
    api: NAME,
    images: true,
    pdf: true,
    text_documents: true,
};

/// A part as a content block of a `tool_result`.
fn block(part: Part<'_>) -> J {
    match part {
        Part::Image { media_type, data } => {
            json!({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}})
        }
        Part::Pdf { data, uri } => json!({
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf", "data": data},
            "title": uri,
        }),
        Part::Document { uri, text } => json!({
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": text},
            "title": uri,
        }),
    }
}

fn content(response: &J) -> Result<&[J], RoundTripError> {
    let r = Reader { provider: NAME };
    let root = r.object(response, "(the response)")?;
    r.array(root, "", "content")
}

impl Provider for Anthropic {
    fn name(&self) -> &'static str {
        NAME
    }

    fn calls(&self, response: &J) -> Result<Vec<ToolCall>, RoundTripError> {
        let r = Reader { provider: NAME };
        let mut out = Vec::new();
        for (i, block) in content(response)?.iter().enumerate() {
            let path = format!("content[{i}]");
            let block = r.object(block, &path)?;
            if block.get("type").and_then(J::as_str) != Some("tool_use") {
                continue;
            }
            let id = r.string(block, &path, "id")?;
            let name = r.string(block, &path, "name")?;
            let input = r.field(block, &path, "input")?;
            out.push(ToolCall::new(id, name, input.clone()));
        }
        Ok(out)
    }

    fn messages(&self, calls: &[ToolCall], results: &[ToolResult]) -> Vec<J> {
        let blocks: Vec<J> = calls
            .iter()
            .zip(results)
            .map(|(call, result)| {
                let rendered = render(result, TAKES);
                // Anthropic refuses an empty text block; one is kept when nothing else is
                // there, as before.
                let mut content = Vec::new();
                if !rendered.text.is_empty() || rendered.parts.is_empty() {
                    content.push(json!({"type": "text", "text": rendered.text}));
                }
                content.extend(rendered.parts.into_iter().map(block));
                json!({
                    "type": "tool_result",
                    "tool_use_id": call.call_id(),
                    "content": content,
                    "is_error": result.is_error(),
                })
            })
            .collect();
        if blocks.is_empty() {
            return Vec::new();
        }
        vec![json!({"role": "user", "content": blocks})]
    }

    fn extend_request(
        &self,
        request: &mut J,
        response: &J,
        messages: Vec<J>,
    ) -> Result<(), RoundTripError> {
        let turn = json!({"role": "assistant", "content": content(response)?});
        let conversation = conversation(NAME, request, "messages")?;
        conversation.push(turn);
        conversation.extend(messages);
        Ok(())
    }
}
