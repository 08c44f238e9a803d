//! The fixtures of resources, prompts and completion: what the suite's `resources-*`,
//! `prompts-*` and `completion-complete` scenarios read and get.

use dsh_runtime::caller::{Caller, CallerAnswer, CallerRequest, FormAnswer, FormRequest, Question};
use dsh_runtime::complete::CompletionRequest;
use dsh_runtime::content::{ContentBlock, ResourceContents};
use dsh_runtime::prompts::{Prompt, PromptError, PromptMessage, Prompts};
use dsh_runtime::resources::{Json, Resources};
use dsh_runtime::{prompt, resource, tool, toolbox};

use crate::RED_PIXEL_PNG;

/// A fixed text resource.
#[resource("test://static-text", name = "static-text", mime_type = "text/plain")]
async fn static_text() -> &'static str {
    "This is the content of the static text resource."
}

/// A fixed binary resource: a 1x1 red PNG.
#[resource(
    "test://static-binary",
    name = "static-binary",
    mime_type = "image/png"
)]
async fn static_binary() -> ResourceContents {
    ResourceContents::blob("test://static-binary", RED_PIXEL_PNG).with_mime_type("image/png")
}

/// A resource clients subscribe to.
#[resource(
    "test://watched-resource",
    name = "watched-resource",
    mime_type = "text/plain"
)]
async fn watched_resource() -> &'static str {
    "Watched."
}

/// What `test://template/{id}/data` holds.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct TemplateBody {
    id: String,
    template_test: bool,
    data: String,
}

/// Data for an id.
#[resource("test://template/{id}/data", name = "template-data")]
async fn template_data(#[complete(with = complete_id)] id: String) -> Json<TemplateBody> {
    Json(TemplateBody {
        data: format!("Data for ID: {id}"),
        id,
        template_test: true,
    })
}

/// The ids `test://template/{id}/data` completes from.
async fn complete_id(request: CompletionRequest) -> Vec<String> {
    ["1", "2", "3", "123"]
        .into_iter()
        .filter(|id| id.starts_with(&request.prefix))
        .map(str::to_string)
        .collect()
}

/// The resources served: the fixed ones and the template.
pub(crate) fn resources() -> Result<Resources, Box<dyn std::error::Error>> {
    let resources = Resources::new();
    resources
        .register_all([
            StaticText.into(),
            StaticBinary.into(),
            WatchedResource.into(),
            TemplateData.into(),
        ])?
        .keep();
    Ok(resources)
}

fn text(text: impl Into<String>) -> PromptMessage {
    PromptMessage::user(ContentBlock::text(text.into()))
}

/// A prompt without arguments.
#[prompt]
async fn test_simple_prompt() -> &'static str {
    "This is a simple prompt for testing."
}

/// A prompt with two arguments.
#[prompt]
async fn test_prompt_with_arguments(
    /// First test argument
    #[complete(with = complete_arg1)]
    arg1: String,
    /// Second test argument
    arg2: String,
) -> String {
    format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")
}

/// The values `arg1` completes from.
async fn complete_arg1(request: CompletionRequest) -> Vec<String> {
    ["paris", "park", "party", "test", "testing"]
        .into_iter()
        .filter(|v| v.starts_with(&request.prefix))
        .map(str::to_string)
        .collect()
}

/// A prompt embedding a resource.
#[prompt]
#[allow(non_snake_case)] // the suite names the argument `resourceUri`
async fn test_prompt_with_embedded_resource(
    /// URI of the resource to embed
    resourceUri: String,
) -> Vec<PromptMessage> {
    let resource = ResourceContents::text(resourceUri, "Embedded resource content for testing.")
        .with_mime_type("text/plain");
    vec![
        PromptMessage::user(ContentBlock::from(resource)),
        text("Please process the embedded resource above."),
    ]
}

/// A prompt with an image.
#[prompt]
async fn test_prompt_with_image() -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(ContentBlock::image(RED_PIXEL_PNG, "image/png")),
        text("Please analyze the image above."),
    ]
}

/// A prompt that asks its caller for context first.
#[prompt]
async fn test_input_required_result_prompt() -> Result<String, PromptError> {
    let caller = Caller::current("test_input_required_result_prompt");
    let schema = dsh_runtime::json::parse(
        r#"{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}"#,
    )
    .map_err(|e| PromptError::Failed(e.to_string()))?;
    let question = Question::new(CallerRequest::Form(FormRequest::new(
        "What context should the prompt use?",
        schema,
    )))
    .with_key("user_context");
    let context = match caller.ask_all(vec![question]).await.pop() {
        Some(Ok(CallerAnswer::Form(FormAnswer::Accepted(content)))) => content
            .get("context")
            .and_then(dsh_runtime::json::Value::as_str)
            .unwrap_or_default()
            .to_string(),
        other => return Err(PromptError::Failed(format!("no context: {other:?}"))),
    };
    Ok(format!("Use this context: {context}"))
}

/// The prompts served.
pub(crate) fn prompts() -> Result<Prompts, Box<dyn std::error::Error>> {
    let prompts = Prompts::new();
    prompts
        .register_all([
            TestSimplePrompt.into(),
            TestPromptWithArguments.into(),
            TestPromptWithEmbeddedResource.into(),
            TestPromptWithImage.into(),
            TestInputRequiredResultPrompt.into(),
        ])?
        .keep();
    Ok(prompts)
}

/// `test_trigger_prompt_change`: adds or removes the prompt `test_dynamic_prompt`.
pub(crate) struct PromptChange {
    /// The served prompts.
    pub(crate) prompts: Prompts,
    /// `test_dynamic_prompt` while it is registered.
    pub(crate) dynamic: std::sync::Mutex<Option<dsh_runtime::prompts::PromptHandle>>,
}

#[toolbox]
impl PromptChange {
    /// Change the prompt list: add `test_dynamic_prompt`, or remove it if it is there.
    #[tool(name = "test_trigger_prompt_change")]
    pub(crate) async fn trigger(&self) -> Result<String, dsh_runtime::ToolError> {
        let mut dynamic = self
            .dynamic
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if dynamic.take().is_some() {
            return Ok("Mutation triggered: test_dynamic_prompt removed".to_string());
        }
        let prompt = Prompt::new("test_dynamic_prompt", |_| async move {
            Ok(vec![text("A prompt that comes and goes.")])
        })
        .with_description("Added by test_trigger_prompt_change.");
        let handle = self
            .prompts
            .register(prompt)
            .map_err(|e| dsh_runtime::ToolError::new(e.to_string()))?;
        *dynamic = Some(handle);
        Ok("Mutation triggered: test_dynamic_prompt added".to_string())
    }
}
