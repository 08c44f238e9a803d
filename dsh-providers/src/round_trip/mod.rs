//! The provider round trip: a model's tool calls in, the next request's messages out.
//!
//! Each provider is a type implementing [`Provider`], the three steps of a tool round in
//! the shapes its API documents:
//!
//! | provider | calls from | results become |
//! | --- | --- | --- |
//! | [`OpenAiResponses`] | `output[]` items of type `function_call` | `function_call_output` items |
//! | [`OpenAiChat`] | `choices[0].message.tool_calls[]` | `role: "tool"` messages |
//! | [`Anthropic`] | `content[]` blocks of type `tool_use` | one user message of `tool_result` blocks (`is_error`) |
//! | [`Gemini`] | `candidates[0].content.parts[].functionCall` | one user content of `functionResponse` parts |
//!
//! - **Calls** ([`Provider::calls`]): every tool call of a response becomes a
//!   [`ToolCall`] with the provider's call id and the arguments as the model sent them.
//!   OpenAI sends arguments as text, and the text is kept, so the registry's lossless
//!   snapshot sees duplicate keys and number spelling. A response without tool calls
//!   gives none; a malformed one is a [`RoundTripError`] naming the path that is missing
//!   or of the wrong type.
//! - **Running them**: [`run_calls`] runs them through [`Registry::execute_batch`]
//!   (concurrency-safe calls overlap, results in model order), from the caller's agent
//!   scope.
//! - **Messages** ([`Provider::messages`]): each result's model-facing text is its
//!   content's text blocks followed by every context (the note naming ignored arguments,
//!   the contexts a body deferred, post-execute's), one paragraph each, so nothing the
//!   pipeline tells the model is lost. The other content blocks go where the provider
//!   takes them in a tool result, and where it takes none of their kind, a line of the
//!   text says what was left out and why (never silently):
//!
//!   | block | Responses | Chat | Anthropic | Gemini |
//!   | --- | --- | --- | --- | --- |
//!   | image | `input_image` (data URL) | line ([`IMAGE_FALLBACK`]) | `image` block (base64) | `functionResponse.parts[].inlineData` |
//!   | audio | line | line | line | line |
//!   | embedded text resource | text, framed by its URI | text, framed | `document` block (plain-text source, titled by the URI) | text, framed |
//!   | embedded `image/*` blob | `input_image` | line | `image` block | `inlineData` |
//!   | embedded `application/pdf` blob | `input_file` (data URL, file name from the URI) | line | `document` block (base64 PDF) | `inlineData` |
//!   | other embedded blob | line | line | line | line |
//!   | resource link | a line naming it | a line | a line | a line |
//!
//!   A block that is not valid ([`ContentBlock::validate`](dsh_runtime::content::ContentBlock::validate):
//!   data that is not base64, a malformed MIME type, …) is a line naming the problem
//!   instead. Annotations are hints for MCP clients and are not sent.
//! - **The next request** ([`Provider::extend_request`]): the model's turn (its output
//!   items, assistant message or content) and the results are appended to the request's
//!   conversation (`input`, `messages` or `contents`).
//!
//! [`run_turn`] puts the steps in a loop around a "send this request, get the response"
//! function of the caller's (the runtime has no HTTP client): it stops when the model
//! calls no tool, after a maximum of rounds, or when a tool concludes the turn
//! ([`dsh_runtime::ToolContext::conclude_turn`]).
//!
//! ```
//! # async fn demo() {
//! use dsh_providers::round_trip::{self, OpenAiChat, Provider};
//! use dsh_runtime::{tool, Registry, ToolError};
//!
//! /// Add two numbers.
//! #[tool]
//! async fn add(a: i64, b: i64) -> Result<i64, ToolError> {
//!     Ok(a + b)
//! }
//!
//! let registry = Registry::new();
//! let _add = registry.register(Add).unwrap();
//! let mut request = serde_json::json!({
//!     "model": "gpt-5",
//!     "messages": [{"role": "user", "content": "2 + 3?"}],
//! });
//! // The response to `request`, as the API returned it:
//! let response = serde_json::json!({"choices": [{"message": {"role": "assistant", "content": null,
//!     "tool_calls": [{"id": "call_1", "type": "function",
//!                     "function": {"name": "add", "arguments": "{\"a\":2,\"b\":3}"}}]}}]});
//! let calls = OpenAiChat.calls(&response).unwrap();
//! let results = round_trip::run_calls(&registry, calls.clone(), None).await;
//! let messages = OpenAiChat.messages(&calls, &results);
//! OpenAiChat.extend_request(&mut request, &response, messages).unwrap();
//! assert_eq!(request["messages"][2], serde_json::json!({"role": "tool", "tool_call_id": "call_1", "content": "5"}));
//! # }
//! ```

use std::fmt;
use std::future::Future;

use serde_json::{Map, Value as J};

use dsh_runtime::{AgentScopeId, Registry, ToolCall, ToolResult};

mod anthropic;
mod content;
mod gemini;
mod openai_chat;
mod openai_responses;

pub use anthropic::Anthropic;
pub use gemini::Gemini;
pub use openai_chat::OpenAiChat;
pub use openai_responses::OpenAiResponses;

/// How many calls of one round [`run_calls`] and [`run_turn`] run at once (at most).
pub const MAX_PARALLEL: usize = 8;

/// The line that stands for an image in a tool result of a provider that takes text only
/// there (OpenAI Chat Completions); `{media_type}` is replaced by the image's media type.
pub const IMAGE_FALLBACK: &str =
    "[an image ({media_type}) was left out: this provider's tool results carry text only]";

/// A response (or request) that is not of the provider's documented shape.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RoundTripError {
    /// The response text is not JSON.
    #[error("the {provider} response is not JSON: {message}")]
    NotJson {
        /// The provider whose response it was meant to be.
        provider: &'static str,
        /// The JSON parser's message.
        message: String,
    },
    /// A part of the response is missing or of the wrong type.
    #[error("the {provider} response is malformed: `{path}` must be {expected}")]
    Response {
        /// The provider.
        provider: &'static str,
        /// Where, e.g. `choices[0].message.tool_calls[1].function.name`.
        path: String,
        /// What was expected there, e.g. `a string`.
        expected: &'static str,
    },
    /// The request to extend has no conversation of the provider's shape.
    #[error("the {provider} request cannot be extended: `{path}` must be {expected}")]
    Request {
        /// The provider.
        provider: &'static str,
        /// Where, e.g. `messages`.
        path: String,
        /// What was expected there.
        expected: &'static str,
    },
}

/// One provider's three steps of a tool round (implemented by [`OpenAiResponses`],
/// [`OpenAiChat`], [`Anthropic`] and [`Gemini`]).
pub trait Provider {
    /// The provider's name in messages (`OpenAI Responses`).
    fn name(&self) -> &'static str;

    /// Every tool call of `response`, in the order the model made them.
    ///
    /// # Errors
    ///
    /// When a part the calls are read from is missing or of the wrong type.
    fn calls(&self, response: &J) -> Result<Vec<ToolCall>, RoundTripError>;

    /// [`Provider::calls`] from the response body's text.
    ///
    /// # Errors
    ///
    /// When the text is not JSON, or as [`Provider::calls`].
    fn calls_from_text(&self, response: &str) -> Result<Vec<ToolCall>, RoundTripError> {
        let value: J = serde_json::from_str(response).map_err(|e| RoundTripError::NotJson {
            provider: self.name(),
            message: e.to_string(),
        })?;
        self.calls(&value)
    }

    /// The provider's tool-result items for `results`, the results of `calls` in the same
    /// order (as [`run_calls`] returns them). A call without a result (a shorter
    /// `results`) is left out.
    fn messages(&self, calls: &[ToolCall], results: &[ToolResult]) -> Vec<J>;

    /// Append the model's turn (from `response`) and then `messages` to the conversation
    /// of `request`, which then is the next request.
    ///
    /// # Errors
    ///
    /// When `request` has no conversation of the provider's shape, or `response` no turn.
    fn extend_request(
        &self,
        request: &mut J,
        response: &J,
        messages: Vec<J>,
    ) -> Result<(), RoundTripError>;
}

/// Run a response's calls through [`Registry::execute_batch`] (at most [`MAX_PARALLEL`]
/// at once), from `agent`'s scope (`None`: the global view); the results are in the
/// calls' order.
pub async fn run_calls(
    registry: &Registry,
    calls: Vec<ToolCall>,
    agent: Option<AgentScopeId>,
) -> Vec<ToolResult> {
    let calls = match agent {
        Some(agent) => calls.into_iter().map(|c| c.with_agent(agent)).collect(),
        None => calls,
    };
    registry.execute_batch(calls, MAX_PARALLEL).await
}

/// How [`run_turn`] runs.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct TurnOptions {
    /// At most this many requests are sent (default 8; `0` counts as `1`).
    pub max_rounds: usize,
    /// The agent scope the calls come from (`None`: the global view).
    pub agent: Option<AgentScopeId>,
}

impl Default for TurnOptions {
    fn default() -> Self {
        TurnOptions {
            max_rounds: 8,
            agent: None,
        }
    }
}

impl TurnOptions {
    /// Send at most `rounds` requests.
    #[must_use]
    pub fn with_max_rounds(mut self, rounds: usize) -> Self {
        self.max_rounds = rounds;
        self
    }

    /// Run the calls from `agent`'s scope.
    #[must_use]
    pub fn with_agent(mut self, agent: AgentScopeId) -> Self {
        self.agent = Some(agent);
        self
    }
}

/// Why [`run_turn`] stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stop {
    /// The model's last response called no tool: it is the turn's answer.
    Answered,
    /// A tool concluded the turn ([`dsh_runtime::ToolContext::conclude_turn`]); its results are
    /// in the request.
    Concluded,
    /// [`TurnOptions::max_rounds`] requests were sent and the last one still called
    /// tools; their results are in the request.
    MaxRounds,
}

/// Where [`run_turn`] stopped.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Outcome {
    /// Why it stopped.
    pub stop: Stop,
    /// The conversation so far: the request with every round's turn and results (send
    /// it to continue).
    pub request: J,
    /// The last response.
    pub response: J,
    /// How many requests were sent.
    pub rounds: usize,
    /// The results of every round, in order.
    pub results: Vec<ToolResult>,
}

/// A failure of [`run_turn`].
#[derive(Debug)]
#[non_exhaustive]
pub enum TurnError<E> {
    /// The caller's `send` failed.
    Transport(E),
    /// A response (or the request) was not of the provider's shape.
    RoundTrip(RoundTripError),
}

impl<E: fmt::Display> fmt::Display for TurnError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TurnError::Transport(e) => write!(f, "sending the request failed: {e}"),
            TurnError::RoundTrip(e) => e.fmt(f),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for TurnError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TurnError::Transport(e) => Some(e),
            TurnError::RoundTrip(e) => Some(e),
        }
    }
}

/// A model's turn: send `request`, run the response's tool calls, append the turn and
/// the results, and send again, until the model calls no tool, a tool concludes the
/// turn, or [`TurnOptions::max_rounds`] requests were sent.
///
/// `send` is the caller's HTTP call (or a recorded conversation in tests): it gets each
/// request and returns the provider's response body.
///
/// # Errors
///
/// [`TurnError::Transport`] when `send` fails, [`TurnError::RoundTrip`] when a response has
/// no calls of the provider's shape where it should.
pub async fn run_turn<P, S, F, E>(
    registry: &Registry,
    provider: &P,
    mut request: J,
    options: &TurnOptions,
    mut send: S,
) -> Result<Outcome, TurnError<E>>
where
    P: Provider + ?Sized,
    S: FnMut(J) -> F,
    F: Future<Output = Result<J, E>>,
{
    let max = options.max_rounds.max(1);
    let mut all = Vec::new();
    let mut rounds = 0;
    loop {
        rounds += 1;
        let response = send(request.clone()).await.map_err(TurnError::Transport)?;
        let calls = provider.calls(&response).map_err(TurnError::RoundTrip)?;
        if calls.is_empty() {
            return Ok(Outcome {
                stop: Stop::Answered,
                request,
                response,
                rounds,
                results: all,
            });
        }
        let results = run_calls(registry, calls.clone(), options.agent).await;
        let messages = provider.messages(&calls, &results);
        provider
            .extend_request(&mut request, &response, messages)
            .map_err(TurnError::RoundTrip)?;
        let concluded = results.iter().any(ToolResult::concludes_turn);
        all.extend(results);
        let stop = if concluded {
            Stop::Concluded
        } else if rounds >= max {
            Stop::MaxRounds
        } else {
            continue;
        };
        return Ok(Outcome {
            stop,
            request,
            response,
            rounds,
            results: all,
        });
    }
}

/// A result's model-facing text: its text blocks, then every context, one paragraph each.
/// Without `image_fallback`, images are left out of the text (they travel beside it);
/// with it, each is a line saying it was left out ([`IMAGE_FALLBACK`]). Every other
/// block is text too: an embedded text resource framed by its URI, a resource link as a
/// line naming it, and audio, other binary resources and invalid blocks as a line
/// saying what was left out and why.
pub fn model_text(result: &ToolResult, image_fallback: bool) -> String {
    let takes = content::Takes {
        api: "this provider",
        images: !image_fallback,
        pdf: false,
        text_documents: false,
    };
    content::render(result, takes).text
}

/// Reading a response with paths for the errors.
pub(crate) struct Reader {
    pub(crate) provider: &'static str,
}

impl Reader {
    pub(crate) fn fail<T>(&self, path: &str, expected: &'static str) -> Result<T, RoundTripError> {
        Err(RoundTripError::Response {
            provider: self.provider,
            path: path.to_string(),
            expected,
        })
    }

    pub(crate) fn object<'a>(
        &self,
        v: &'a J,
        path: &str,
    ) -> Result<&'a Map<String, J>, RoundTripError> {
        match v.as_object() {
            Some(o) => Ok(o),
            None => self.fail(path, "an object"),
        }
    }

    pub(crate) fn field<'a>(
        &self,
        o: &'a Map<String, J>,
        path: &str,
        key: &str,
    ) -> Result<&'a J, RoundTripError> {
        match o.get(key) {
            Some(v) => Ok(v),
            None => self.fail(&join(path, key), "present"),
        }
    }

    pub(crate) fn string<'a>(
        &self,
        o: &'a Map<String, J>,
        path: &str,
        key: &str,
    ) -> Result<&'a str, RoundTripError> {
        match o.get(key) {
            Some(J::String(s)) => Ok(s),
            _ => self.fail(&join(path, key), "a string"),
        }
    }

    pub(crate) fn array<'a>(
        &self,
        o: &'a Map<String, J>,
        path: &str,
        key: &str,
    ) -> Result<&'a [J], RoundTripError> {
        match o.get(key) {
            Some(J::Array(a)) => Ok(a),
            _ => self.fail(&join(path, key), "an array"),
        }
    }

    /// An array that may be absent or `null` (no items).
    pub(crate) fn optional_array<'a>(
        &self,
        o: &'a Map<String, J>,
        path: &str,
        key: &str,
    ) -> Result<&'a [J], RoundTripError> {
        match o.get(key) {
            None | Some(J::Null) => Ok(&[]),
            Some(J::Array(a)) => Ok(a),
            _ => self.fail(&join(path, key), "an array or null"),
        }
    }
}

pub(crate) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// The conversation array `key` of a request object, made when absent.
pub(crate) fn conversation<'a>(
    provider: &'static str,
    request: &'a mut J,
    key: &str,
) -> Result<&'a mut Vec<J>, RoundTripError> {
    let fail = || RoundTripError::Request {
        provider,
        path: key.to_string(),
        expected: "an array",
    };
    let Some(o) = request.as_object_mut() else {
        return Err(RoundTripError::Request {
            provider,
            path: "(the request)".to_string(),
            expected: "an object",
        });
    };
    let entry = o.entry(key).or_insert_with(|| J::Array(Vec::new()));
    entry.as_array_mut().ok_or_else(fail)
}
