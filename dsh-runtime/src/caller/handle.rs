//! [`Caller`]: what a running call (a tool's body, a prompt) asks of its caller.

use std::sync::Arc;

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::{
    AskingCall, CallerAnswer, CallerError, CallerFuture, CallerRequest, CallerRoute, ElicitForm,
    Elicited, FormAnswer, FormRequest, LogLevel, Question, RequestKind, Root, SampleRequest,
    SampledMessage, UrlAnswer, UrlRequest,
};
use crate::json::Value;

/// The caller of one running call: where its requests and logs go (a tool body gets the
/// same methods on its [`ToolContext`](crate::ToolContext); a prompt gets one with
/// [`Caller::current`]).
#[derive(Clone, Debug)]
pub struct Caller {
    route: Option<CallerRoute>,
    id: Arc<str>,
    name: Arc<str>,
    cancel: CancellationToken,
}

impl Caller {
    /// The caller of call `id` of `name`, answered on `route`, its requests ended by
    /// `cancel`.
    pub fn new(
        route: Option<CallerRoute>,
        id: impl Into<Arc<str>>,
        name: impl Into<Arc<str>>,
        cancel: CancellationToken,
    ) -> Caller {
        Caller {
            route,
            id: id.into(),
            name: name.into(),
            cancel,
        }
    }

    /// The caller installed around the current task ([`super::with_caller`]), for the
    /// running `name` (a prompt, say): without one, every request fails with
    /// [`CallerError::NoCaller`].
    pub fn current(name: impl Into<Arc<str>>) -> Caller {
        let name = name.into();
        Caller::new(
            CallerRoute::current(),
            name.clone(),
            name,
            CancellationToken::new(),
        )
    }

    fn asking(&self) -> AskingCall<'_> {
        AskingCall::new(&self.id, &self.name)
    }

    /// Whether a handler is installed.
    pub fn is_present(&self) -> bool {
        self.route.is_some()
    }

    /// See [`ToolContext::log`](crate::ToolContext::log).
    pub fn log(&self, level: LogLevel, message: impl Into<String>) {
        if self.route.is_some() {
            let data = Value::from(message.into());
            super::log(self.route.as_ref(), self.asking(), level, data, None);
        }
    }

    /// See [`ToolContext::log_data`](crate::ToolContext::log_data).
    pub fn log_data<T: Serialize + ?Sized>(&self, level: LogLevel, logger: Option<&str>, data: &T) {
        if self
            .route
            .as_ref()
            .is_some_and(|c| c.handler().logs_at(level))
        {
            let data = crate::json::to_value(data)
                .unwrap_or_else(|e| Value::from(format!("unloggable data: {e}")));
            super::log(self.route.as_ref(), self.asking(), level, data, logger);
        }
    }

    /// See [`ToolContext::elicit`](crate::ToolContext::elicit).
    // A boxed future rather than an `async fn`: the bound `T: ElicitForm` then sits on
    // the call alone, so a `T` outside the form subset is one compile error there.
    pub fn elicit<T: ElicitForm>(
        &self,
        message: impl Into<String>,
    ) -> CallerFuture<'_, Result<Elicited<T>, CallerError>> {
        let message = message.into();
        Box::pin(async move {
            let schema = super::form_schema_of::<T>().map_err(|e| {
                CallerError::Failed(format!("form `{}`: {e}", std::any::type_name::<T>()))
            })?;
            match self.elicit_form(FormRequest::new(message, schema)).await? {
                FormAnswer::Accepted(content) => {
                    super::read_form_answer::<T>(&content).map(Elicited::Accepted)
                }
                FormAnswer::Declined => Ok(Elicited::Declined),
                FormAnswer::Cancelled => Ok(Elicited::Cancelled),
            }
        })
    }

    /// See [`ToolContext::elicit_form`](crate::ToolContext::elicit_form).
    pub async fn elicit_form(&self, request: FormRequest) -> Result<FormAnswer, CallerError> {
        match self.request(CallerRequest::Form(request)).await? {
            CallerAnswer::Form(answer) => Ok(answer),
            other => Err(wrong_answer("a form", &other)),
        }
    }

    /// See [`ToolContext::elicit_url`](crate::ToolContext::elicit_url).
    pub async fn elicit_url(&self, request: UrlRequest) -> Result<UrlAnswer, CallerError> {
        match self.request(CallerRequest::Url(request)).await? {
            CallerAnswer::Url(answer) => Ok(answer),
            other => Err(wrong_answer("a URL request", &other)),
        }
    }

    /// See [`ToolContext::sample`](crate::ToolContext::sample).
    pub async fn sample(&self, request: SampleRequest) -> Result<SampledMessage, CallerError> {
        match self.request(CallerRequest::Sample(request)).await? {
            CallerAnswer::Sample(message) => Ok(message),
            other => Err(wrong_answer("a sampling request", &other)),
        }
    }

    /// See [`ToolContext::roots`](crate::ToolContext::roots).
    pub async fn roots(&self) -> Result<Vec<Root>, CallerError> {
        match self.request(CallerRequest::Roots).await? {
            CallerAnswer::Roots(roots) => Ok(roots),
            other => Err(wrong_answer("a roots request", &other)),
        }
    }

    /// See [`ToolContext::ask_all`](crate::ToolContext::ask_all).
    pub async fn ask_all(
        &self,
        questions: Vec<Question>,
    ) -> Vec<Result<CallerAnswer, CallerError>> {
        super::ask_all(self.route.as_ref(), self.asking(), &self.cancel, questions).await
    }

    /// See [`ToolContext::continue_as_task`](crate::ToolContext::continue_as_task).
    pub async fn continue_as_task(&self) -> bool {
        match &self.route {
            Some(route) => route.handler().continue_as_task(self.asking()).await,
            None => false,
        }
    }

    /// See [`ToolContext::close_stream`](crate::ToolContext::close_stream).
    pub async fn close_stream(&self, retry: std::time::Duration) -> bool {
        match &self.route {
            Some(route) => route.handler().close_stream(self.asking(), retry).await,
            None => false,
        }
    }

    /// Send one request, bounded by the call's cancellation.
    pub async fn request(&self, request: CallerRequest) -> Result<CallerAnswer, CallerError> {
        super::ask(self.route.as_ref(), self.asking(), &self.cancel, request).await
    }
}

/// The error of an answer of another kind than its request.
fn wrong_answer(asked: &str, answer: &CallerAnswer) -> CallerError {
    CallerError::InvalidAnswer(format!(
        "{asked} was answered as {}",
        match answer.kind() {
            RequestKind::Form => "a form",
            RequestKind::Url => "a URL request",
            RequestKind::Sample => "a sampling request",
            _ => "a roots request",
        }
    ))
}
