//! A crate root with `#![deny(missing_docs, warnings)]`: every item `#[resource]`,
//! `#[prompt]` and `#[context]` generate is documented and warning-free, public or private,
//! with or without a doc comment on the fn.
#![deny(missing_docs, warnings)]

use std::sync::Arc;

use dsh_runtime::complete::CompletionRequest;
use dsh_runtime::prompts::{PromptGroup, Prompts};
use dsh_runtime::resources::{Json, ResourceError, ResourceGroup, Resources};
use dsh_runtime::{ToolSchema, context, prompt, resource};
use serde::{Deserialize, Serialize};

/// A shade.
#[derive(Deserialize, Serialize, ToolSchema)]
#[serde(rename_all = "lowercase")]
pub enum Shade {
    /// Light.
    Light,
    /// Dark.
    Dark,
}

/// A theme.
#[resource("themes://{shade}", mime_type = "text/css")]
pub async fn theme(shade: Shade) -> Result<Json<Shade>, ResourceError> {
    Ok(Json(shade))
}

#[resource("docs://private", audience = "assistant", priority = 0.1)]
async fn private_doc() -> &'static str {
    "private"
}

/// Completes names.
pub async fn names(request: CompletionRequest) -> Vec<String> {
    vec![request.prefix]
}

/// Greet.
#[prompt]
pub async fn greet(
    /// Who.
    #[complete(with = names)]
    name: String,
    shade: Option<Shade>,
) -> String {
    format!("hi {name}{}", if shade.is_some() { "!" } else { "" })
}

#[prompt(name = "private-prompt")]
async fn private_prompt() -> String {
    String::new()
}

/// Shared docs.
pub struct Docs;

#[context]
impl Docs {
    /// The README.
    #[resource("docs://readme")]
    pub async fn readme(&self) -> String {
        String::new()
    }

    #[prompt]
    async fn summarise(self: Arc<Self>, page: u32) -> String {
        page.to_string()
    }
}

fn main() {
    let resources = Resources::new();
    resources
        .register_all([Theme.into(), PrivateDoc.into()])
        .unwrap()
        .keep();
    resources.register_group(Arc::new(Docs)).unwrap().keep();
    let prompts = Prompts::new();
    prompts
        .register_all([Greet.into(), PrivatePrompt.into()])
        .unwrap()
        .keep();
    prompts.register_group(Arc::new(Docs)).unwrap().keep();
    assert_eq!(resources.list().len(), 2);
    assert_eq!(prompts.list().len(), 3);
    assert_eq!(
        Arc::new(Docs).resources().len() + Arc::new(Docs).prompts().len(),
        2
    );
}
