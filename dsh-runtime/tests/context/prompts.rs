//! `#[prompt]` on free fns: arguments, messages, and the errors.

use dsh_runtime::content::{ContentBlock, Role};
use dsh_runtime::prompts::{PromptArgument, PromptError, PromptMessage, Prompts};
use dsh_runtime::{ToolSchema, prompt};
use serde::Deserialize;

use super::block_on;

#[derive(Clone, Copy, Debug, Deserialize, ToolSchema)]
#[serde(rename_all = "lowercase")]
enum Depth {
    Quick,
    Thorough,
}

/// Review a file.
#[prompt(title = "Code review")]
async fn review(
    /// The file to review.
    file: String,
    /// How closely to look.
    depth: Depth,
    /// At most this many remarks.
    limit: Option<u8>,
) -> String {
    let limit = limit.map_or_else(|| "any number of".to_string(), |n| n.to_string());
    format!("Review {file} ({depth:?}), with {limit} remarks.")
}

/// Describe an image.
#[prompt(name = "describe-image")]
async fn describe(url: String) -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(ContentBlock::image("iVBORw0KGgo=", "image/png")),
        PromptMessage::user(ContentBlock::resource_text(url, "alt text")),
        PromptMessage::assistant(ContentBlock::text("I see a picture.")),
        PromptMessage::user(ContentBlock::audio("UklGRg==", "audio/wav")),
    ]
}

#[prompt]
async fn greeting() -> ContentBlock {
    ContentBlock::text("Hello!")
}

#[prompt]
async fn strict(n: u32) -> Result<PromptMessage, String> {
    if n == 0 {
        return Err("zero is not allowed".to_string());
    }
    Ok(PromptMessage::assistant(ContentBlock::text(n.to_string())))
}

#[prompt]
async fn exploding() -> String {
    panic!("the prompt body panicked")
}

fn prompts() -> Prompts {
    let prompts = Prompts::new();
    prompts
        .register_all([
            Review.into(),
            Describe.into(),
            Greeting.into(),
            Strict.into(),
            Exploding.into(),
        ])
        .unwrap()
        .keep();
    prompts
}

#[test]
fn publishes_arguments_from_the_parameters() {
    let list = prompts().list();
    let review = &list[0];
    assert_eq!(review.name, "review");
    assert_eq!(review.title.as_deref(), Some("Code review"));
    assert_eq!(review.description.as_deref(), Some("Review a file."));
    assert_eq!(
        review.arguments,
        [
            PromptArgument::required("file").with_description("The file to review."),
            PromptArgument::required("depth").with_description("How closely to look."),
            PromptArgument::optional("limit").with_description("At most this many remarks."),
        ]
    );
    assert_eq!(list[1].name, "describe-image");
    assert_eq!(list[2].description, None);
    assert_eq!(list[2].arguments, []);
}

#[test]
fn gets_messages() {
    block_on(async {
        let prompts = prompts();
        let got = prompts
            .get("review", [("file", "main.rs"), ("depth", "quick")])
            .await
            .unwrap();
        assert_eq!(got.description.as_deref(), Some("Review a file."));
        assert_eq!(
            got.messages,
            [PromptMessage::user(ContentBlock::text(
                "Review main.rs (Quick), with any number of remarks."
            ))]
        );
        let got = prompts
            .get(
                "review",
                [("file", "a.rs"), ("depth", "thorough"), ("limit", "3")],
            )
            .await
            .unwrap();
        assert_eq!(
            got.messages[0].content.as_text(),
            Some("Review a.rs (Thorough), with 3 remarks.")
        );
        let got = prompts
            .get("describe-image", [("url", "img://1")])
            .await
            .unwrap();
        let kinds: Vec<(&str, Role)> = got
            .messages
            .iter()
            .map(|m| (m.content.kind(), m.role))
            .collect();
        assert_eq!(
            kinds,
            [
                ("image", Role::User),
                ("resource", Role::User),
                ("text", Role::Assistant),
                ("audio", Role::User)
            ]
        );
        let got = prompts
            .get("greeting", std::iter::empty::<(String, String)>())
            .await
            .unwrap();
        assert_eq!(
            got.messages,
            [PromptMessage::user(ContentBlock::text("Hello!"))]
        );
        let got = prompts.get("strict", [("n", "2")]).await.unwrap();
        assert_eq!(
            got.messages,
            [PromptMessage::assistant(ContentBlock::text("2"))]
        );
    });
}

#[test]
fn a_missing_or_mistyped_argument_is_named() {
    block_on(async {
        let prompts = prompts();
        assert_eq!(
            prompts.get("review", [("file", "main.rs")]).await,
            Err(PromptError::MissingArgument {
                prompt: "review".into(),
                argument: "depth".into()
            })
        );
        match prompts
            .get("review", [("file", "a"), ("depth", "deep")])
            .await
        {
            Err(PromptError::InvalidArgument { argument, reason }) => {
                assert_eq!(argument, "depth");
                assert!(reason.contains("unknown variant `deep`"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        match prompts
            .get(
                "review",
                [("file", "a"), ("depth", "quick"), ("limit", "300")],
            )
            .await
        {
            Err(PromptError::InvalidArgument { argument, reason }) => {
                assert_eq!(argument, "limit");
                assert!(reason.contains("\"300\""), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        match prompts.get("strict", [("n", "-1")]).await {
            Err(PromptError::InvalidArgument { argument, .. }) => assert_eq!(argument, "n"),
            other => panic!("{other:?}"),
        }
    });
}

#[test]
fn errors_and_panics_of_the_body_are_failures() {
    block_on(async {
        let prompts = prompts();
        assert_eq!(
            prompts.get("strict", [("n", "0")]).await,
            Err(PromptError::Failed("zero is not allowed".into()))
        );
        match prompts
            .get("exploding", std::iter::empty::<(String, String)>())
            .await
        {
            Err(PromptError::Failed(why)) => {
                assert!(why.contains("panicked"), "{why}");
                assert!(why.contains("the prompt body panicked"), "{why}");
            }
            other => panic!("{other:?}"),
        }
        assert!(prompts.get("strict", [("n", "1")]).await.is_ok());
    });
}
