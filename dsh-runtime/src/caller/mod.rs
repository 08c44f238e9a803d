//! What a running call asks of its caller: logs, forms, the caller's model, its roots.
//!
//! A tool body reaches whoever called it through its [`ToolContext`](crate::ToolContext):
//!
//! | method | what the caller does | MCP |
//! |---|---|---|
//! | [`log`](crate::ToolContext::log) | receives a log message (fire and forget) | `notifications/message` |
//! | [`elicit`](crate::ToolContext::elicit) | shows its user a typed form, returns the answer | `elicitation/create` (form) |
//! | [`elicit_url`](crate::ToolContext::elicit_url) | sends its user to a URL | `elicitation/create` (url) |
//! | [`sample`](crate::ToolContext::sample) | asks its model for a message | `sampling/createMessage` |
//! | [`roots`](crate::ToolContext::roots) | lists its roots | `roots/list` |
//!
//! The answers come from the [`CallerHandler`] the host installed around the call with
//! [`with_caller`]: an MCP server installs one per request that sends the client these
//! requests (on revision 2025-11-25) or answers the call with an `InputRequiredResult`
//! and resumes it on the retry (2026-07-28); a test installs a scripted one
//! (`dsh_testing`); an application answers them itself. A call with no handler gets
//! [`CallerError::NoCaller`] (code [`codes::NO_CALLER`]) from every request, and its logs
//! go nowhere.
//!
//! Every request is bounded by the call: cancelling the call (its deadline, its
//! caller's cancellation) ends the wait with [`CallerError::Cancelled`]. Errors convert
//! into [`ToolError`](crate::ToolError) with `?`, keeping their code.
//!
//! ```
//! use dsh_runtime::caller::{
//!     CallerAnswer, CallerError, CallerRequest, Elicited, FormAnswer, LogLevel, caller_fn, with_caller,
//! };
//! use dsh_runtime::{Registry, ToolCall, ToolContext, ToolError, ToolSchema, tool};
//! use serde::Deserialize;
//!
//! /// Where to deploy.
//! #[derive(ToolSchema, Deserialize)]
//! struct Target {
//!     /// The branch to deploy.
//!     branch: String,
//! }
//!
//! /// Deploy a branch the user picks.
//! #[tool]
//! async fn deploy(cx: ToolContext) -> Result<String, ToolError> {
//!     cx.log(LogLevel::Info, "choosing a branch");
//!     match cx.elicit::<Target>("Which branch?").await? {
//!         Elicited::Accepted(target) => Ok(format!("deploying {}", target.branch)),
//!         Elicited::Declined | Elicited::Cancelled => Ok("nothing deployed".into()),
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let registry = Registry::new();
//! let _deploy = registry.register(Deploy).unwrap();
//! let user = caller_fn(|request: CallerRequest| async move {
//!     match request {
//!         CallerRequest::Form(_) => {
//!             let answer = dsh_runtime::json::parse(r#"{"branch":"main"}"#).unwrap();
//!             Ok(CallerAnswer::Form(FormAnswer::Accepted(answer)))
//!         }
//!         _ => Err(CallerError::Unsupported { capability: "sampling" }),
//!     }
//! });
//! let result = with_caller(user, registry.execute(ToolCall::new("c1", "deploy", "{}"))).await;
//! assert_eq!(result.text(), "deploying main");
//! # });
//! ```

pub mod codes;
mod form;
mod handle;
mod types;

use std::fmt;
use std::future::Future;
use std::sync::Arc;

#[doc(hidden)]
pub use form::derive_checks as __form;
pub use form::{
    ElicitForm, FormChoice, FormField, FormFields, FormSchemaError, form_schema, form_schema_of,
    read_form_answer,
};
pub use handle::Caller;
pub use types::{
    CallerAnswer, CallerRequest, Elicited, FormAnswer, FormRequest, LogLevel, LogMessage,
    ModelPreferences, Question, RequestKind, Root, SampleRequest, SampledMessage, SamplingMessage,
    UrlAnswer, UrlRequest,
};

use crate::json::Value;

/// The call a request or a log comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AskingCall<'a> {
    /// The call's id (the caller's, e.g. an MCP request id).
    pub id: &'a str,
    /// The called tool's name.
    pub tool: &'a str,
}

impl<'a> AskingCall<'a> {
    /// The call `id` of `tool`.
    pub fn new(id: &'a str, tool: &'a str) -> Self {
        AskingCall { id, tool }
    }
}

/// A boxed future of a [`CallerHandler`].
pub type CallerFuture<'a, T> = std::pin::Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Who answers what calls ask of their caller (see the [module docs](self)).
///
/// Install one around calls with [`with_caller`]; the contexts of the calls it runs
/// keep it (a body's clones moved to other tasks too).
pub trait CallerHandler: Send + Sync + 'static {
    /// Answer one request of a call. The answer must be of the request's kind
    /// ([`CallerAnswer::Form`] for a form, ...): anything else is reported to the body
    /// as [`CallerError::InvalidAnswer`]. `call` is the asking call.
    fn request<'a>(
        &'a self,
        call: AskingCall<'a>,
        request: CallerRequest,
    ) -> CallerFuture<'a, Result<CallerAnswer, CallerError>>;

    /// Answer several requests asked together
    /// ([`ToolContext::ask_all`](crate::ToolContext::ask_all)), one answer per request in
    /// order. The default asks them one by one with [`CallerHandler::request`], all at
    /// once; a transport whose wire carries several requests in one round trip (MCP's
    /// `InputRequiredResult`) sends them together.
    fn request_all<'a>(
        &'a self,
        call: AskingCall<'a>,
        questions: Vec<Question>,
    ) -> CallerFuture<'a, Vec<Result<CallerAnswer, CallerError>>> {
        let asked = questions
            .into_iter()
            .map(move |q| self.request(call, q.request))
            .collect();
        Box::pin(join_all(asked))
    }

    /// Let the call go on as a task (see
    /// [`ToolContext::continue_as_task`](crate::ToolContext::continue_as_task)): `true`
    /// when it now is one. The default: `false`.
    fn continue_as_task<'a>(&'a self, call: AskingCall<'a>) -> CallerFuture<'a, bool> {
        let _ = call;
        Box::pin(std::future::ready(false))
    }

    /// Close the stream the call's answer goes on, telling the client to come back
    /// after `retry` (see [`ToolContext::close_stream`](crate::ToolContext::close_stream)):
    /// `true` when it was closed. The default: `false`.
    fn close_stream<'a>(
        &'a self,
        call: AskingCall<'a>,
        retry: std::time::Duration,
    ) -> CallerFuture<'a, bool> {
        let _ = (call, retry);
        Box::pin(std::future::ready(false))
    }

    /// Receive a log message of a call (the default drops it). Called on the body's
    /// task: keep it short.
    fn log(&self, call: AskingCall<'_>, message: LogMessage) {
        let _ = (call, message);
    }

    /// Whether a log message at `level` would be kept (the default: every level). A
    /// body's [`log`](crate::ToolContext::log) below it costs nothing more.
    fn logs_at(&self, level: LogLevel) -> bool {
        let _ = level;
        true
    }
}

/// The handler installed around a call (see [`with_caller`]), as a context carries it.
#[derive(Clone)]
pub struct CallerRoute(pub(crate) Arc<dyn CallerHandler>);

impl fmt::Debug for CallerRoute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CallerRoute(..)")
    }
}

impl<H: CallerHandler> From<Arc<H>> for CallerRoute {
    fn from(handler: Arc<H>) -> Self {
        CallerRoute(handler)
    }
}

impl From<Arc<dyn CallerHandler>> for CallerRoute {
    fn from(handler: Arc<dyn CallerHandler>) -> Self {
        CallerRoute(handler)
    }
}

impl CallerRoute {
    /// The handler.
    pub fn handler(&self) -> &Arc<dyn CallerHandler> {
        &self.0
    }

    /// The route installed around the current task's calls, if any.
    pub fn current() -> Option<Self> {
        CALLER_ROUTE.try_with(Clone::clone).ok()
    }
}

tokio::task_local! {
    static CALLER_ROUTE: CallerRoute;
}

/// Run `fut` (typically a [`crate::Registry::execute`]) with `handler` answering what
/// its calls ask of their caller. A context picks the handler up when the pipeline
/// creates it, so clones moved to other tasks keep it. A body that dispatches calls on
/// other tasks installs its own [`ToolContext::caller`](crate::ToolContext::caller)
/// around them the same way.
///
/// A plain function, not an `async fn`: the future it returns is `fut` and the handler,
/// not twice `fut`'s size (an `async fn` keeps its arguments beside the futures it awaits).
pub fn with_caller<F: Future>(
    handler: impl Into<CallerRoute>,
    fut: F,
) -> impl Future<Output = F::Output> {
    CALLER_ROUTE.scope(handler.into(), fut)
}

/// `fut` with the caller route current here (if any) installed, for running it on
/// another task.
pub(crate) fn caller_scoped<F: Future>(fut: F) -> impl Future<Output = F::Output> {
    let route = CallerRoute::current();
    async move {
        match route {
            Some(route) => CALLER_ROUTE.scope(route, fut).await,
            None => fut.await,
        }
    }
}

/// A handler answering every request with `f` (its logs are dropped).
pub fn caller_fn<F, Fut>(f: F) -> Arc<CallerFn<F>>
where
    F: Fn(CallerRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<CallerAnswer, CallerError>> + Send + 'static,
{
    Arc::new(CallerFn(f))
}

/// See [`caller_fn`].
pub struct CallerFn<F>(F);

impl<F, Fut> CallerHandler for CallerFn<F>
where
    F: Fn(CallerRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<CallerAnswer, CallerError>> + Send + 'static,
{
    fn request<'a>(
        &'a self,
        _call: AskingCall<'a>,
        request: CallerRequest,
    ) -> CallerFuture<'a, Result<CallerAnswer, CallerError>> {
        Box::pin((self.0)(request))
    }
}

/// Why a request of a call to its caller has no answer.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum CallerError {
    /// No handler is installed around the call: nobody can be asked.
    NoCaller,
    /// The caller cannot answer this kind of request (an MCP client that did not
    /// declare the capability, named as MCP names it: `elicitation`, `sampling`,
    /// `roots`).
    Unsupported {
        /// The missing capability.
        capability: &'static str,
    },
    /// The caller's answer is not one of the request: a form answer that fails the
    /// form's schema (the message names every violation, path-qualified), a sampling
    /// answer that is not a message, roots that are not a list of roots.
    InvalidAnswer(String),
    /// The call was cancelled (its deadline, its caller) before the answer came.
    Cancelled,
    /// The request failed on its way (a transport error, the caller's own error).
    Failed(String),
}

impl CallerError {
    /// The error's code (see [`codes`]).
    pub fn code(&self) -> &'static str {
        match self {
            CallerError::NoCaller => codes::NO_CALLER,
            CallerError::Unsupported { .. } => codes::CALLER_UNSUPPORTED,
            CallerError::InvalidAnswer(_) => codes::INVALID_ANSWER,
            CallerError::Cancelled => codes::CALLER_CANCELLED,
            CallerError::Failed(_) => codes::CALLER_FAILED,
        }
    }
}

impl fmt::Display for CallerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallerError::NoCaller => {
                f.write_str("nobody can be asked: no caller handler is installed around this call")
            }
            CallerError::Unsupported { capability } => {
                write!(
                    f,
                    "the caller cannot answer this request (it lacks the `{capability}` capability)"
                )
            }
            CallerError::InvalidAnswer(why) => write!(f, "the caller's answer is invalid: {why}"),
            CallerError::Cancelled => {
                f.write_str("the call was cancelled before the caller answered")
            }
            CallerError::Failed(why) => write!(f, "the request to the caller failed: {why}"),
        }
    }
}

impl std::error::Error for CallerError {}

/// Send a request on `route` (or fail without one), bounded by `cancel`.
pub(crate) async fn ask(
    route: Option<&CallerRoute>,
    call: AskingCall<'_>,
    cancel: &tokio_util::sync::CancellationToken,
    request: CallerRequest,
) -> Result<CallerAnswer, CallerError> {
    let Some(route) = route else {
        return Err(CallerError::NoCaller);
    };
    if cancel.is_cancelled() {
        return Err(CallerError::Cancelled);
    }
    let handler = &route.0;
    let asked = crate::panic::contained(|| handler.request(call, request));
    tokio::select! {
        biased;
        answer = asked => match answer {
            Ok(answer) => answer,
            Err(panic) => Err(CallerError::Failed(format!("the caller handler panicked: {panic}"))),
        },
        () = cancel.cancelled() => Err(CallerError::Cancelled),
    }
}

/// Every future's output, in order, the futures polled together.
async fn join_all<T>(futures: Vec<CallerFuture<'_, T>>) -> Vec<T> {
    let mut slots: Vec<(CallerFuture<'_, T>, Option<T>)> =
        futures.into_iter().map(|f| (f, None)).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (future, out) in &mut slots {
            if out.is_none() {
                match future.as_mut().poll(cx) {
                    std::task::Poll::Ready(value) => *out = Some(value),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    slots.into_iter().filter_map(|(_, out)| out).collect()
}

/// Send several requests on `route` together (see [`CallerHandler::request_all`]).
pub(crate) async fn ask_all(
    route: Option<&CallerRoute>,
    call: AskingCall<'_>,
    cancel: &tokio_util::sync::CancellationToken,
    questions: Vec<Question>,
) -> Vec<Result<CallerAnswer, CallerError>> {
    let n = questions.len();
    let fail = |e: CallerError| std::iter::repeat_n(e, n).map(Err).collect();
    let Some(route) = route else {
        return fail(CallerError::NoCaller);
    };
    if cancel.is_cancelled() {
        return fail(CallerError::Cancelled);
    }
    let handler = &route.0;
    let asked = crate::panic::contained(|| handler.request_all(call, questions));
    let mut answers = tokio::select! {
        biased;
        answers = asked => match answers {
            Ok(answers) => answers,
            Err(panic) => return fail(CallerError::Failed(format!("the caller handler panicked: {panic}"))),
        },
        () = cancel.cancelled() => return fail(CallerError::Cancelled),
    };
    // A handler answering the wrong number of requests: the missing ones fail.
    answers.truncate(n);
    while answers.len() < n {
        answers.push(Err(CallerError::Failed(
            "the caller handler gave fewer answers than requests".into(),
        )));
    }
    answers
}

/// Log on `route`, when it keeps `level`.
pub(crate) fn log(
    route: Option<&CallerRoute>,
    call: AskingCall<'_>,
    level: LogLevel,
    data: Value,
    logger: Option<&str>,
) {
    if let Some(route) = route
        && route.0.logs_at(level)
    {
        let message = LogMessage {
            level,
            logger: logger.map(str::to_string),
            data,
        };
        let handler = &route.0;
        // A panicking log handler loses the message, never the call.
        let _ = crate::panic::contain(|| handler.log(call, message));
    }
}
