//! The requests a call makes of its caller and their answers.
//!
//! They serialize as MCP writes them (`camelCase` keys), so a transport maps them to its
//! own wire by value.

use serde::{Deserialize, Serialize};

use crate::content::{ContentBlock, Role};
use crate::json::Value;

/// The severity of a log message, as MCP (and syslog, RFC 5424) orders them: each level
/// is more severe than the one before.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Detailed debugging information.
    Debug,
    /// Ordinary progress.
    Info,
    /// Normal but significant events.
    Notice,
    /// Something unexpected that did not stop the call.
    Warning,
    /// An error.
    Error,
    /// A critical condition.
    Critical,
    /// Action must be taken at once.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    /// Every level, least severe first.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The level's name on the wire (`debug`, ..., `emergency`).
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    /// The level named `name` (its wire name), if any.
    pub fn parse(name: &str) -> Option<LogLevel> {
        LogLevel::ALL.into_iter().find(|l| l.as_str() == name)
    }
}

/// One log message of a call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LogMessage {
    /// Its severity.
    pub level: LogLevel,
    /// The logger's name, if the body gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// The message: a string, or any JSON data.
    pub data: Value,
}

/// What a request to the caller is for (a capability, as MCP names it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RequestKind {
    /// A form ([`CallerRequest::Form`]).
    Form,
    /// A URL to visit ([`CallerRequest::Url`]).
    Url,
    /// A message from the caller's model ([`CallerRequest::Sample`]).
    Sample,
    /// The caller's roots ([`CallerRequest::Roots`]).
    Roots,
}

impl RequestKind {
    /// The MCP client capability that answers this kind: `elicitation` (forms and
    /// URLs), `sampling`, `roots`.
    pub fn capability(self) -> &'static str {
        match self {
            RequestKind::Form | RequestKind::Url => "elicitation",
            RequestKind::Sample => "sampling",
            RequestKind::Roots => "roots",
        }
    }
}

/// One request of a call to its caller.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum CallerRequest {
    /// Show the user a form and return what they filled in.
    Form(FormRequest),
    /// Send the user to a URL (an OAuth consent, a payment page), out of band.
    Url(UrlRequest),
    /// Ask the caller's model for a message.
    Sample(SampleRequest),
    /// List the caller's roots (the directories or resources it works in).
    Roots,
}

impl CallerRequest {
    /// What the request is for.
    pub fn kind(&self) -> RequestKind {
        match self {
            CallerRequest::Form(_) => RequestKind::Form,
            CallerRequest::Url(_) => RequestKind::Url,
            CallerRequest::Sample(_) => RequestKind::Sample,
            CallerRequest::Roots => RequestKind::Roots,
        }
    }
}

/// One of several requests asked together ([`ToolContext::ask_all`]): the request, and
/// the key it is asked under where the caller's wire names its requests (MCP's
/// `InputRequiredResult.inputRequests` on revision 2026-07-28; without one the server
/// picks a key).
///
/// [`ToolContext::ask_all`]: crate::ToolContext::ask_all
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Question {
    /// The key, if the body names it.
    pub key: Option<String>,
    /// The request.
    pub request: CallerRequest,
}

impl Question {
    /// A question without a key.
    pub fn new(request: CallerRequest) -> Self {
        Question { key: None, request }
    }

    /// Asked under `key`.
    pub fn with_key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }
}

impl From<CallerRequest> for Question {
    fn from(request: CallerRequest) -> Self {
        Question::new(request)
    }
}

/// A form: a message and the schema of what the user fills in, within MCP's form subset
/// (a flat object of strings, numbers, integers, booleans and enums).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct FormRequest {
    /// What the user is asked.
    pub message: String,
    /// The form's JSON Schema (MCP's `requestedSchema`).
    pub requested_schema: Value,
}

impl FormRequest {
    /// A form request. The schema is sent as it is: [`ToolContext::elicit`] derives it
    /// from a type; a hand-written one must stay within MCP's form subset.
    ///
    /// [`ToolContext::elicit`]: crate::ToolContext::elicit
    pub fn new(message: impl Into<String>, requested_schema: Value) -> Self {
        FormRequest {
            message: message.into(),
            requested_schema,
        }
    }
}

/// A URL the user is sent to (MCP's URL-mode elicitation).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UrlRequest {
    /// Why the user is sent there.
    pub message: String,
    /// Where.
    pub url: String,
    /// An id the server picks to recognise the visit's completion.
    pub elicitation_id: String,
}

impl UrlRequest {
    /// A URL request.
    pub fn new(
        message: impl Into<String>,
        url: impl Into<String>,
        elicitation_id: impl Into<String>,
    ) -> Self {
        UrlRequest {
            message: message.into(),
            url: url.into(),
            elicitation_id: elicitation_id.into(),
        }
    }
}

/// One message of a sampling request's conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SamplingMessage {
    /// Who says it.
    pub role: Role,
    /// What is said (text, an image, audio).
    pub content: ContentBlock,
}

impl SamplingMessage {
    /// A message of the user.
    pub fn user(content: impl Into<ContentBlock>) -> Self {
        SamplingMessage {
            role: Role::User,
            content: content.into(),
        }
    }

    /// A message of the model (an earlier turn).
    pub fn assistant(content: impl Into<ContentBlock>) -> Self {
        SamplingMessage {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// What the server prefers of the model the caller picks; every priority is in `0..=1`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ModelPreferences {
    /// Model names to consider, best first (`"claude-3-5-sonnet"`, `"sonnet"`); the
    /// caller maps them to what it has.
    #[serde(default, skip_serializing_if = "Vec::is_empty", with = "hints")]
    pub hints: Vec<String>,
    /// How much cost matters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_priority: Option<f64>,
    /// How much speed matters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_priority: Option<f64>,
    /// How much capability matters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intelligence_priority: Option<f64>,
}

/// MCP writes a hint as `{"name": ..}`.
mod hints {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    struct Hint {
        #[serde(default)]
        name: Option<String>,
    }

    pub(super) fn serialize<S: Serializer>(hints: &[String], s: S) -> Result<S::Ok, S::Error> {
        let hints: Vec<Hint> = hints
            .iter()
            .map(|name| Hint {
                name: Some(name.clone()),
            })
            .collect();
        hints.serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
        let hints = Vec::<Hint>::deserialize(d)?;
        Ok(hints.into_iter().filter_map(|h| h.name).collect())
    }
}

impl ModelPreferences {
    /// No preference.
    pub fn new() -> Self {
        ModelPreferences::default()
    }

    /// Add a model name hint.
    pub fn with_hint(mut self, name: impl Into<String>) -> Self {
        self.hints.push(name.into());
        self
    }

    /// Set the cost, speed and capability priorities (each clamped to `0..=1`).
    pub fn with_priorities(mut self, cost: f64, speed: f64, intelligence: f64) -> Self {
        let clamp = |p: f64| if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) };
        self.cost_priority = Some(clamp(cost));
        self.speed_priority = Some(clamp(speed));
        self.intelligence_priority = Some(clamp(intelligence));
        self
    }
}

/// A request for a message of the caller's model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SampleRequest {
    /// The conversation so far.
    pub messages: Vec<SamplingMessage>,
    /// A system prompt the server asks for (the caller may change or drop it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// The most tokens to sample.
    pub max_tokens: u32,
    /// The sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Where to stop.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop_sequences: Vec<String>,
    /// What the server prefers of the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
}

impl SampleRequest {
    /// A request of one user message of text, for at most `max_tokens` tokens.
    pub fn new(prompt: impl Into<String>, max_tokens: u32) -> Self {
        SampleRequest::messages(
            vec![SamplingMessage::user(ContentBlock::text(prompt.into()))],
            max_tokens,
        )
    }

    /// A request continuing a conversation.
    pub fn messages(messages: Vec<SamplingMessage>, max_tokens: u32) -> Self {
        SampleRequest {
            messages,
            system_prompt: None,
            max_tokens,
            temperature: None,
            stop_sequences: Vec::new(),
            model_preferences: None,
        }
    }

    /// With a system prompt.
    pub fn with_system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// With a temperature.
    pub fn with_temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// With stop sequences.
    pub fn with_stop_sequences(mut self, stops: Vec<String>) -> Self {
        self.stop_sequences = stops;
        self
    }

    /// With model preferences.
    pub fn with_model_preferences(mut self, preferences: ModelPreferences) -> Self {
        self.model_preferences = Some(preferences);
        self
    }
}

/// The caller model's message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SampledMessage {
    /// Who says it (the model: `assistant`).
    pub role: Role,
    /// What it says.
    pub content: ContentBlock,
    /// The model that said it.
    pub model: String,
    /// Why it stopped (`endTurn`, `stopSequence`, `maxTokens`, or the caller's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

impl SampledMessage {
    /// A message of the model `model`.
    pub fn new(content: impl Into<ContentBlock>, model: impl Into<String>) -> Self {
        SampledMessage {
            role: Role::Assistant,
            content: content.into(),
            model: model.into(),
            stop_reason: None,
        }
    }

    /// With the reason the model stopped.
    pub fn with_stop_reason(mut self, reason: impl Into<String>) -> Self {
        self.stop_reason = Some(reason.into());
        self
    }

    /// The message's text (empty when its content is not text).
    pub fn text(&self) -> &str {
        match &self.content {
            ContentBlock::Text { text, .. } => text,
            _ => "",
        }
    }
}

/// One of the caller's roots.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Root {
    /// Its URI (`file:///home/me/project`).
    pub uri: String,
    /// A name to show.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Root {
    /// A root.
    pub fn new(uri: impl Into<String>) -> Self {
        Root {
            uri: uri.into(),
            name: None,
        }
    }

    /// With a name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// The answer to a form, before it is read into the form's type.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum FormAnswer {
    /// The user submitted the form: its content (a JSON object).
    Accepted(Value),
    /// The user said no.
    Declined,
    /// The user dismissed the form without choosing.
    Cancelled,
}

/// The answer to a URL request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum UrlAnswer {
    /// The user agreed to go there (the visit itself happens out of band).
    Accepted,
    /// The user said no.
    Declined,
    /// The user dismissed the request.
    Cancelled,
}

/// The answer to one [`CallerRequest`], of the request's kind.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
// One answer per question, handed over once: the size of a message is not worth a box.
#[allow(clippy::large_enum_variant)]
pub enum CallerAnswer {
    /// To [`CallerRequest::Form`].
    Form(FormAnswer),
    /// To [`CallerRequest::Url`].
    Url(UrlAnswer),
    /// To [`CallerRequest::Sample`].
    Sample(SampledMessage),
    /// To [`CallerRequest::Roots`].
    Roots(Vec<Root>),
}

impl CallerAnswer {
    /// What the answer is to.
    pub fn kind(&self) -> RequestKind {
        match self {
            CallerAnswer::Form(_) => RequestKind::Form,
            CallerAnswer::Url(_) => RequestKind::Url,
            CallerAnswer::Sample(_) => RequestKind::Sample,
            CallerAnswer::Roots(_) => RequestKind::Roots,
        }
    }
}

/// A typed form's answer (see [`ToolContext::elicit`](crate::ToolContext::elicit)).
#[derive(Clone, Debug, PartialEq)]
pub enum Elicited<T> {
    /// The user submitted the form; its content, read and validated.
    Accepted(T),
    /// The user said no.
    Declined,
    /// The user dismissed the form.
    Cancelled,
}

impl<T> Elicited<T> {
    /// The accepted value, if the user submitted the form.
    pub fn accepted(self) -> Option<T> {
        match self {
            Elicited::Accepted(value) => Some(value),
            Elicited::Declined | Elicited::Cancelled => None,
        }
    }
}
