//! Prompts: the workflows a server publishes, each a list of messages made from its
//! arguments by an async function.
//!
//! A [`Prompts`] collection holds them; an MCP server serves it (`prompts/list`,
//! `prompts/get`) and an in-process host uses the same calls ([`Prompts::list`],
//! [`Prompts::get`]).
//!
//! [`#[prompt]`](macro@crate::prompt) makes a prompt of an async fn (its arguments from
//! the fn's parameters), and [`#[context]`](macro@crate::context) the prompts of an impl
//! block, sharing its value; by hand:
//!
//! ```
//! use dsh_runtime::content::ContentBlock;
//! use dsh_runtime::prompts::{Prompt, PromptArgument, PromptError, PromptMessage, Prompts};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let prompts = Prompts::new();
//! let _review = prompts
//!     .register(
//!         Prompt::new("review", |args| async move {
//!             let file = args.get("file").unwrap_or_default().to_string();
//!             Ok(vec![PromptMessage::user(ContentBlock::text(format!("Review {file}.")))])
//!         })
//!         .with_argument(PromptArgument::required("file").with_description("The file to review.")),
//!     )
//!     .unwrap();
//! let got = prompts.get("review", [("file", "main.rs")]).await.unwrap();
//! assert_eq!(got.messages[0], PromptMessage::user(ContentBlock::text("Review main.rs.")));
//! assert!(matches!(prompts.get("review", [("x", "1")]).await, Err(PromptError::MissingArgument { .. })));
//! # });
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::str::FromStr;
use std::sync::{Arc, RwLock};

use tokio::sync::watch;

use crate::complete::{Completer, Completion, CompletionRequest};
use crate::content::{ContentBlock, Role};

/// One message of a prompt.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct PromptMessage {
    /// Who says it.
    pub role: Role,
    /// What is said: text, an image, audio, an embedded resource.
    pub content: ContentBlock,
}

impl PromptMessage {
    /// A message of the user.
    pub fn user(content: impl Into<ContentBlock>) -> Self {
        PromptMessage {
            role: Role::User,
            content: content.into(),
        }
    }

    /// A message of the model.
    pub fn assistant(content: impl Into<ContentBlock>) -> Self {
        PromptMessage {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// What a prompt function returns, turned into the prompt's messages: `#[prompt]`
/// functions return one of these (or a `Result` of one).
///
/// | type | messages |
/// | --- | --- |
/// | `String`, `&'static str` | one user message of that text |
/// | [`ContentBlock`] (text, image, audio, embedded resource) | one user message of it |
/// | [`PromptMessage`], `Vec<PromptMessage>` | as they are |
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a prompt's messages",
    label = "not the messages of a prompt",
    note = "return `String` (one user message), a `ContentBlock` (one user message: text, image, audio, embedded resource), `PromptMessage` or `Vec<PromptMessage>`, or a `Result` of one of these; or implement `dsh_runtime::prompts::IntoMessages` for the type"
)]
pub trait IntoMessages {
    /// The messages.
    fn into_messages(self) -> Vec<PromptMessage>;
}

impl IntoMessages for String {
    fn into_messages(self) -> Vec<PromptMessage> {
        vec![PromptMessage::user(ContentBlock::text(self))]
    }
}

impl IntoMessages for &'static str {
    fn into_messages(self) -> Vec<PromptMessage> {
        vec![PromptMessage::user(ContentBlock::text(self))]
    }
}

impl IntoMessages for ContentBlock {
    fn into_messages(self) -> Vec<PromptMessage> {
        vec![PromptMessage::user(self)]
    }
}

impl IntoMessages for PromptMessage {
    fn into_messages(self) -> Vec<PromptMessage> {
        vec![self]
    }
}

impl IntoMessages for Vec<PromptMessage> {
    fn into_messages(self) -> Vec<PromptMessage> {
        self
    }
}

/// One argument a prompt takes.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PromptArgument {
    /// Its name.
    pub name: String,
    /// A title to show.
    pub title: Option<String>,
    /// What it is.
    pub description: Option<String>,
    /// Whether the prompt needs it.
    pub required: bool,
}

impl PromptArgument {
    /// A required argument.
    pub fn required(name: impl Into<String>) -> Self {
        PromptArgument {
            name: name.into(),
            title: None,
            description: None,
            required: true,
        }
    }

    /// An optional argument.
    pub fn optional(name: impl Into<String>) -> Self {
        PromptArgument {
            required: false,
            ..PromptArgument::required(name)
        }
    }

    /// With a description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// With a title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
}

/// What a prompt publishes about itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PromptInfo {
    /// Its name.
    pub name: String,
    /// A title to show.
    pub title: Option<String>,
    /// What it is for.
    pub description: Option<String>,
    /// Its arguments, in order.
    pub arguments: Vec<PromptArgument>,
}

/// A prompt's arguments as given (all text, as MCP sends them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PromptArgs(BTreeMap<String, String>);

impl PromptArgs {
    /// The text of argument `name`, if given.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// Argument `name` parsed as `T` (`None` when not given).
    ///
    /// # Errors
    ///
    /// [`PromptError::InvalidArgument`] naming the argument when it does not parse.
    pub fn parse<T: FromStr>(&self, name: &str) -> Result<Option<T>, PromptError>
    where
        T::Err: fmt::Display,
    {
        self.get(name)
            .map(|text| {
                text.parse()
                    .map_err(|e: T::Err| PromptError::InvalidArgument {
                        argument: name.to_string(),
                        reason: format!("{text:?}: {e}"),
                    })
            })
            .transpose()
    }

    /// Every argument given, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

/// What getting a prompt returns.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct GotPrompt {
    /// The prompt's description.
    pub description: Option<String>,
    /// Its messages.
    pub messages: Vec<PromptMessage>,
}

/// A prompt's future.
pub type PromptFuture =
    Pin<Box<dyn Future<Output = Result<Vec<PromptMessage>, PromptError>> + Send>>;

type GetFn = dyn Fn(PromptArgs) -> PromptFuture + Send + Sync;

/// One prompt and how its messages are made.
#[derive(Clone)]
pub struct Prompt {
    info: PromptInfo,
    get: Arc<GetFn>,
    completers: BTreeMap<String, Completer>,
}

impl fmt::Debug for Prompt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Prompt")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl Prompt {
    /// A prompt named `name`, made by `get` from its arguments.
    pub fn new<F, Fut>(name: impl Into<String>, get: F) -> Prompt
    where
        F: Fn(PromptArgs) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<PromptMessage>, PromptError>> + Send + 'static,
    {
        Prompt {
            info: PromptInfo {
                name: name.into(),
                ..PromptInfo::default()
            },
            get: Arc::new(move |args| Box::pin(get(args))),
            completers: BTreeMap::new(),
        }
    }

    /// With a title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// With a description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.info.description = Some(description.into());
        self
    }

    /// With one more argument.
    pub fn with_argument(mut self, argument: PromptArgument) -> Self {
        self.info.arguments.push(argument);
        self
    }

    /// Complete argument `name` with `completer`.
    pub fn with_completer(mut self, name: impl Into<String>, completer: Completer) -> Self {
        self.completers.insert(name.into(), completer);
        self
    }

    /// What it publishes.
    pub fn info(&self) -> &PromptInfo {
        &self.info
    }
}

/// Why a prompt could not be got.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PromptError {
    /// No prompt has this name (MCP: `-32602`).
    NotFound(String),
    /// A required argument is missing (MCP: `-32602`).
    MissingArgument {
        /// The prompt.
        prompt: String,
        /// The argument.
        argument: String,
    },
    /// An argument's value is not one the prompt takes (MCP: `-32602`).
    InvalidArgument {
        /// The argument.
        argument: String,
        /// Why.
        reason: String,
    },
    /// The prompt failed (its own error, or a panic).
    Failed(String),
}

impl fmt::Display for PromptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PromptError::NotFound(name) => write!(f, "unknown prompt {name:?}"),
            PromptError::MissingArgument { prompt, argument } => {
                write!(
                    f,
                    "prompt {prompt:?}: the required argument `{argument}` is missing"
                )
            }
            PromptError::InvalidArgument { argument, reason } => {
                write!(f, "argument `{argument}`: {reason}")
            }
            PromptError::Failed(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for PromptError {}

/// Prompts that share one value: a type whose `impl` block carries `#[context]`
/// implements it for its `#[prompt]` methods; register them all with
/// [`Prompts::register_group`].
pub trait PromptGroup: Send + Sync + 'static {
    /// Every prompt of this value, sharing it.
    fn prompts(self: Arc<Self>) -> Vec<Prompt>;
}

/// Unregisters its prompt (or prompts, from [`Prompts::register_all`]) when dropped,
/// unless [`PromptHandle::keep`] was called.
#[must_use = "the prompt is unregistered when the handle is dropped; call `keep()` to keep it"]
pub struct PromptHandle {
    prompts: Prompts,
    names: Vec<String>,
    kept: bool,
}

impl PromptHandle {
    /// Keep the prompt registered for as long as the collection lives.
    pub fn keep(mut self) {
        self.kept = true;
    }
}

impl Drop for PromptHandle {
    fn drop(&mut self) {
        if !self.kept {
            self.prompts.unregister(&self.names);
        }
    }
}

impl fmt::Debug for PromptHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PromptHandle")
            .field("names", &self.names)
            .finish()
    }
}

/// A collection of prompts (see the [module docs](self)). Clones share it.
#[derive(Clone)]
pub struct Prompts {
    inner: Arc<RwLock<Vec<Prompt>>>,
    changes: Arc<watch::Sender<u64>>,
}

impl Default for Prompts {
    fn default() -> Self {
        Prompts::new()
    }
}

impl fmt::Debug for Prompts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Prompts")
            .field("len", &self.read_inner().len())
            .finish_non_exhaustive()
    }
}

impl Prompts {
    /// An empty collection.
    pub fn new() -> Prompts {
        Prompts {
            inner: Arc::default(),
            changes: Arc::new(watch::channel(0).0),
        }
    }

    fn read_inner(&self) -> std::sync::RwLockReadGuard<'_, Vec<Prompt>> {
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Register `prompt`.
    ///
    /// # Errors
    ///
    /// Another prompt has the same name, or two arguments share one.
    pub fn register(&self, prompt: impl Into<Prompt>) -> Result<PromptHandle, PromptError> {
        self.register_all([prompt.into()])
    }

    /// Register every one of `prompts`: all of them, or none (one list change), under
    /// one handle.
    ///
    /// # Errors
    ///
    /// Two of them, or one of them and a registered prompt, have the same name; two
    /// arguments of one prompt share one.
    pub fn register_all(
        &self,
        prompts: impl IntoIterator<Item = Prompt>,
    ) -> Result<PromptHandle, PromptError> {
        let prompts: Vec<Prompt> = prompts.into_iter().collect();
        for prompt in &prompts {
            let mut seen = std::collections::BTreeSet::new();
            if let Some(dup) = prompt.info.arguments.iter().find(|a| !seen.insert(&a.name)) {
                return Err(PromptError::Failed(format!(
                    "prompt {:?}: the argument `{}` is declared twice",
                    prompt.info.name, dup.name
                )));
            }
        }
        let names: Vec<String> = prompts.iter().map(|p| p.info.name.clone()).collect();
        {
            let mut inner = self.inner.write().unwrap_or_else(|e| e.into_inner());
            for (i, name) in names.iter().enumerate() {
                if inner.iter().any(|p| &p.info.name == name) || names[..i].contains(name) {
                    return Err(PromptError::Failed(format!(
                        "prompt {name:?} is already registered"
                    )));
                }
            }
            inner.extend(prompts);
        }
        if !names.is_empty() {
            self.changes.send_modify(|n| *n += 1);
        }
        Ok(PromptHandle {
            prompts: self.clone(),
            names,
            kept: false,
        })
    }

    /// Register every prompt of `group` (see [`PromptGroup`]): all of them, or none.
    ///
    /// # Errors
    ///
    /// As [`Prompts::register_all`].
    pub fn register_group<G: PromptGroup>(
        &self,
        group: Arc<G>,
    ) -> Result<PromptHandle, PromptError> {
        self.register_all(group.prompts())
    }

    fn unregister(&self, names: &[String]) {
        let removed = {
            let mut inner = self.inner.write().unwrap_or_else(|e| e.into_inner());
            let before = inner.len();
            inner.retain(|p| !names.contains(&p.info.name));
            before != inner.len()
        };
        if removed {
            self.changes.send_modify(|n| *n += 1);
        }
    }

    /// Whether the collection holds nothing.
    pub fn is_empty(&self) -> bool {
        self.read_inner().is_empty()
    }

    /// Every prompt, in registration order.
    pub fn list(&self) -> Vec<PromptInfo> {
        self.read_inner().iter().map(|p| p.info.clone()).collect()
    }

    fn find(&self, name: &str) -> Option<Prompt> {
        self.read_inner()
            .iter()
            .find(|p| p.info.name == name)
            .cloned()
    }

    /// Get prompt `name` with `args`.
    ///
    /// # Errors
    ///
    /// [`PromptError::NotFound`], [`PromptError::MissingArgument`] (checked before the
    /// prompt runs), the prompt's own error, a panic as [`PromptError::Failed`].
    pub async fn get<I, K, V>(&self, name: &str, args: I) -> Result<GotPrompt, PromptError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        let prompt = self
            .find(name)
            .ok_or_else(|| PromptError::NotFound(name.to_string()))?;
        let args = PromptArgs(
            args.into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        );
        if let Some(missing) = prompt
            .info
            .arguments
            .iter()
            .find(|a| a.required && args.get(&a.name).is_none())
        {
            return Err(PromptError::MissingArgument {
                prompt: name.to_string(),
                argument: missing.name.clone(),
            });
        }
        let fut = crate::panic::contain(|| (prompt.get)(args))
            .map_err(|p| PromptError::Failed(format!("prompt {name:?} panicked: {p}")))?;
        let messages = crate::panic::CatchUnwind::new(fut)
            .await
            .map_err(|p| PromptError::Failed(format!("prompt {name:?} panicked: {p}")))??;
        Ok(GotPrompt {
            description: prompt.info.description.clone(),
            messages,
        })
    }

    /// Complete argument `request.argument` of prompt `name` (`None`: no such prompt).
    /// An argument without a completer completes to nothing.
    pub async fn complete(&self, name: &str, request: CompletionRequest) -> Option<Completion> {
        let prompt = self.find(name)?;
        Some(match prompt.completers.get(&request.argument) {
            Some(completer) => completer.complete(request).await,
            None => Completion::default(),
        })
    }

    /// A counter that changes each time a prompt is registered or unregistered.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }
}
