//! Every MCP content block kind through each provider's tool result: what travels as a
//! part, what joins the text, and the line that stands for what the provider cannot
//! carry (never dropped silently). The messages are also checked with the providers'
//! official client libraries' own request types (`tests/round_trip/check_content.py`).

use std::path::Path;
use std::process::Command;

use dsh_providers::round_trip::{self, Anthropic, Gemini, OpenAiChat, OpenAiResponses, Provider};
use dsh_runtime::content::{Annotations, ContentBlock, ResourceLink, Role};
use dsh_runtime::{Registry, ToolCall, ToolContext, ToolResult, tool};
use serde_json::{Value as J, json};

use super::round_trip::{python_with_provider_libraries, tempfile_dir};

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";
/// `%PDF-1.4` and a newline.
const PDF: &str = "JVBERi0xLjQK";

/// Show the gallery: one block of every kind, and one that is not valid.
#[tool(read_only)]
async fn gallery(cx: ToolContext) -> String {
    let for_model = Annotations::new().with_audience([Role::Assistant]);
    cx.attach_content(ContentBlock::image(PNG, "image/png").with_annotations(for_model));
    cx.attach_content(ContentBlock::audio(WAV, "audio/wav"));
    cx.attach_content(
        ContentBlock::resource_text("file:///notes/plan.md", "# Plan")
            .with_mime_type("text/markdown"),
    );
    cx.attach_content(ContentBlock::resource_blob(
        "file:///docs/report.pdf",
        PDF,
        "application/pdf",
    ));
    cx.attach_content(ContentBlock::resource_blob(
        "file:///img/pixel.png",
        PNG,
        "image/png",
    ));
    cx.attach_content(ContentBlock::resource_blob(
        "file:///a/archive.zip",
        "UEsFBg==",
        "application/zip",
    ));
    cx.attach_content(
        ResourceLink::new("file:///data/big.csv", "big.csv")
            .with_mime_type("text/csv")
            .with_size(48_000)
            .into(),
    );
    cx.attach_content(ContentBlock::image("not base64!", "image/png"));
    "the gallery".to_string()
}

/// Only a picture.
#[tool(read_only, render = picture_only)]
async fn picture() -> String {
    "unused".to_string()
}

fn picture_only(_: &PictureArgs, _: &String) -> Vec<ContentBlock> {
    vec![ContentBlock::image(PNG, "image/png")]
}

async fn run(name: &str) -> (Vec<ToolCall>, Vec<ToolResult>) {
    let registry = Registry::new();
    let _gallery = registry.register(Gallery).unwrap();
    let _picture = registry.register(Picture).unwrap();
    let calls = vec![ToolCall::new("c1", name, "{}")];
    let results = round_trip::run_calls(&registry, calls.clone(), None).await;
    assert!(!results[0].is_error(), "{:?}", results[0]);
    (calls, results)
}

/// The text every text-carrying provider gets for the gallery, `api` naming it; `own`
/// are the lines of the blocks it carries as text in place of parts.
fn lines(api: &str, own: &[&str]) -> String {
    let mut lines = vec!["the gallery".to_string()];
    lines.extend(own.iter().map(|l| l.replace("{api}", api)));
    lines.extend([
        format!("[resource file:///a/archive.zip (application/zip) omitted: {api} takes no application/zip files in tool results]"),
        "[resource link: file:///data/big.csv (big.csv, text/csv, 48000 bytes)]".to_string(),
        "[image (image/png) omitted: image `data` is not base64: unexpected ' ' at offset 3]".to_string(),
    ]);
    lines.join("\n\n")
}

const AUDIO: &str = "[audio (audio/wav) omitted: {api} takes no audio in tool results]";
const PLAN: &str = "[resource file:///notes/plan.md (text/markdown)]\n# Plan";

fn responses_item(calls: &[ToolCall], results: &[ToolResult]) -> J {
    OpenAiResponses.messages(calls, results).remove(0)
}

#[tokio::test]
async fn openai_responses_carries_images_and_pdf_files() {
    let (calls, results) = run("gallery").await;
    let item = responses_item(&calls, &results);
    assert_eq!(
        item,
        json!({"type": "function_call_output", "call_id": "c1", "output": [
            {"type": "input_text", "text": lines("OpenAI Responses", &[AUDIO, PLAN])},
            {"type": "input_image", "image_url": format!("data:image/png;base64,{PNG}")},
            {"type": "input_file", "filename": "report.pdf", "file_data": format!("data:application/pdf;base64,{PDF}")},
            {"type": "input_image", "image_url": format!("data:image/png;base64,{PNG}")},
        ]})
    );
}

#[tokio::test]
async fn openai_chat_says_what_it_left_out() {
    let (calls, results) = run("gallery").await;
    let message = OpenAiChat.messages(&calls, &results).remove(0);
    let expected = lines(
        "OpenAI Chat Completions",
        &[
            round_trip::IMAGE_FALLBACK
                .replace("{media_type}", "image/png")
                .as_str(),
            AUDIO,
            PLAN,
            "[resource file:///docs/report.pdf (application/pdf) omitted: {api} takes no application/pdf files in tool results]",
            "[resource file:///img/pixel.png (image/png) omitted: {api} takes no image/png files in tool results]",
        ],
    );
    assert_eq!(
        message,
        json!({"role": "tool", "tool_call_id": "c1", "content": expected})
    );
    // The public text function agrees with what the Chat message carries.
    assert_eq!(
        round_trip::model_text(&results[0], true),
        expected.replace("OpenAI Chat Completions", "this provider")
    );
}

#[tokio::test]
async fn anthropic_carries_images_and_documents() {
    let (calls, results) = run("gallery").await;
    let message = Anthropic.messages(&calls, &results).remove(0);
    let image = json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}});
    assert_eq!(
        message,
        json!({"role": "user", "content": [{
            "type": "tool_result",
            "tool_use_id": "c1",
            "is_error": false,
            "content": [
                {"type": "text", "text": lines("Anthropic Messages", &[AUDIO])},
                image,
                {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "# Plan"}, "title": "file:///notes/plan.md"},
                {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": PDF}, "title": "file:///docs/report.pdf"},
                image,
            ],
        }]})
    );
}

#[tokio::test]
async fn gemini_carries_images_and_pdf_files_as_inline_data() {
    let (calls, results) = run("gallery").await;
    let content = Gemini.messages(&calls, &results).remove(0);
    let png = json!({"inlineData": {"mimeType": "image/png", "data": PNG}});
    assert_eq!(
        content,
        json!({"role": "user", "parts": [{"functionResponse": {
            "name": "gallery",
            "id": "c1",
            "response": {"output": lines("Gemini", &[AUDIO, PLAN])},
            "parts": [png, {"inlineData": {"mimeType": "application/pdf", "data": PDF}}, png],
        }}]})
    );
}

#[tokio::test]
async fn a_result_of_parts_alone_has_no_empty_text() {
    let (calls, results) = run("picture").await;
    let anthropic = Anthropic.messages(&calls, &results).remove(0);
    assert_eq!(
        anthropic["content"][0]["content"],
        json!([{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}])
    );
    assert_eq!(
        responses_item(&calls, &results)["output"],
        json!([{"type": "input_image", "image_url": format!("data:image/png;base64,{PNG}")}])
    );
}

/// The four messages validate, unchanged, as the client libraries' request types.
#[tokio::test]
async fn client_libraries_accept_every_kinds_tool_result() {
    let (calls, results) = run("gallery").await;
    let cases = json!({
        "anthropic": Anthropic.messages(&calls, &results).remove(0),
        "openai_responses": responses_item(&calls, &results),
        "openai_chat": OpenAiChat.messages(&calls, &results).remove(0),
        "gemini": Gemini.messages(&calls, &results).remove(0),
    });
    let file = tempfile_dir().join("content_blocks.json");
    std::fs::write(&file, serde_json::to_string(&cases).unwrap()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/round_trip/check_content.py");
    let out = Command::new(python_with_provider_libraries())
        .arg(script)
        .arg(&file)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.trim_end().starts_with("ok: "),
        "the client libraries rejected a tool result:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
