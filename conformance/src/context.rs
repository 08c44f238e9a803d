//! The fixtures of resources, prompts and completion: what the suite's `resources-*`,
//! `prompts-*` and `completion-complete` scenarios read and get.

use dsh_runtime::caller::{Caller, CallerAnswer, CallerRequest, FormAnswer, FormRequest, Question};
use dsh_runtime::complete::Completer;
use dsh_runtime::content::{ContentBlock, ResourceContents};
use dsh_runtime::prompts::{Prompt, PromptArgument, PromptError, PromptMessage, Prompts};
use dsh_runtime::resources::{Resource, ResourceError, Resources};
use dsh_runtime::{tool, toolbox};

use crate::RED_PIXEL_PNG;

/// The resources served: two fixed ones, a watched one and a template.
pub(crate) fn resources() -> Result<Resources, Box<dyn std::error::Error>> {
    let resources = Resources::new();
    resources
        .register(
            Resource::fixed("test://static-text", "static-text", |uri, _| async move {
                Ok(vec![
                    ResourceContents::text(uri, "This is the content of the static text resource.")
                        .with_mime_type("text/plain"),
                ])
            })
            .with_description("A fixed text resource.")
            .with_mime_type("text/plain"),
        )?
        .keep();
    resources
        .register(
            Resource::fixed(
                "test://static-binary",
                "static-binary",
                |uri, _| async move {
                    Ok(vec![
                        ResourceContents::blob(uri, RED_PIXEL_PNG).with_mime_type("image/png"),
                    ])
                },
            )
            .with_description("A fixed binary resource: a 1x1 red PNG.")
            .with_mime_type("image/png"),
        )?
        .keep();
    resources
        .register(
            Resource::fixed(
                "test://watched-resource",
                "watched-resource",
                |uri, _| async move {
                    Ok(vec![
                        ResourceContents::text(uri, "Watched.").with_mime_type("text/plain"),
                    ])
                },
            )
            .with_description("A resource clients subscribe to.")
            .with_mime_type("text/plain"),
        )?
        .keep();
    resources
        .register(
            Resource::template(
                "test://template/{id}/data",
                "template-data",
                |uri, params| async move {
                    let id = params.get("id").unwrap_or_default().to_string();
                    let mut text = dsh_runtime::json::Object::new();
                    text.insert("id", id.clone());
                    text.insert("templateTest", true);
                    text.insert("data", format!("Data for ID: {id}"));
                    let text = dsh_runtime::json::Value::from(text);
                    Ok::<_, ResourceError>(vec![
                        ResourceContents::text(uri, text.to_string())
                            .with_mime_type("application/json"),
                    ])
                },
            )?
            .with_description("Data for an id.")
            .with_mime_type("application/json")
            .with_completer("id", Completer::values(["1", "2", "3", "123"])),
        )?
        .keep();
    Ok(resources)
}

fn text(text: impl Into<String>) -> PromptMessage {
    PromptMessage::user(ContentBlock::text(text.into()))
}

/// The prompts served.
pub(crate) fn prompts() -> Result<Prompts, Box<dyn std::error::Error>> {
    let prompts = Prompts::new();
    prompts
        .register(
            Prompt::new("test_simple_prompt", |_| async move {
                Ok(vec![text("This is a simple prompt for testing.")])
            })
            .with_description("A prompt without arguments."),
        )?
        .keep();
    prompts
        .register(
            Prompt::new("test_prompt_with_arguments", |args| async move {
                let (a, b) = (
                    args.get("arg1").unwrap_or_default(),
                    args.get("arg2").unwrap_or_default(),
                );
                Ok(vec![text(format!(
                    "Prompt with arguments: arg1='{a}', arg2='{b}'"
                ))])
            })
            .with_description("A prompt with two arguments.")
            .with_argument(PromptArgument::required("arg1").with_description("First test argument"))
            .with_argument(
                PromptArgument::required("arg2").with_description("Second test argument"),
            )
            .with_completer(
                "arg1",
                Completer::values(["paris", "park", "party", "test", "testing"]),
            ),
        )?
        .keep();
    prompts
        .register(
            Prompt::new("test_prompt_with_embedded_resource", |args| async move {
                let uri = args.get("resourceUri").unwrap_or_default().to_string();
                let resource =
                    ResourceContents::text(uri, "Embedded resource content for testing.")
                        .with_mime_type("text/plain");
                Ok::<_, PromptError>(vec![
                    PromptMessage::user(ContentBlock::from(resource)),
                    text("Please process the embedded resource above."),
                ])
            })
            .with_description("A prompt embedding a resource.")
            .with_argument(
                PromptArgument::required("resourceUri")
                    .with_description("URI of the resource to embed"),
            ),
        )?
        .keep();
    prompts
        .register(
            Prompt::new("test_input_required_result_prompt", |_| async move {
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
                let answer = caller.ask_all(vec![question]).await.pop();
                let context = match answer {
                    Some(Ok(CallerAnswer::Form(FormAnswer::Accepted(content)))) => content
                        .get("context")
                        .and_then(dsh_runtime::json::Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    other => return Err(PromptError::Failed(format!("no context: {other:?}"))),
                };
                Ok(vec![text(format!("Use this context: {context}"))])
            })
            .with_description("A prompt that asks its caller for context first."),
        )?
        .keep();
    prompts
        .register(
            Prompt::new("test_prompt_with_image", |_| async move {
                Ok(vec![
                    PromptMessage::user(ContentBlock::image(RED_PIXEL_PNG, "image/png")),
                    text("Please analyze the image above."),
                ])
            })
            .with_description("A prompt with an image."),
        )?
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
