//! Completion of prompt arguments and resource-template placeholders.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// The most values one completion answer holds (MCP's limit).
pub const MAX_COMPLETIONS: usize = 100;

/// What a completion is asked with.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompletionRequest {
    /// The argument or placeholder being completed.
    pub argument: String,
    /// What the user typed so far.
    pub prefix: String,
    /// The values of the other arguments already given, by name.
    pub context: Vec<(String, String)>,
}

impl CompletionRequest {
    /// A request for `argument`, typed so far as `prefix`.
    pub fn new(argument: impl Into<String>, prefix: impl Into<String>) -> Self {
        CompletionRequest {
            argument: argument.into(),
            prefix: prefix.into(),
            context: Vec::new(),
        }
    }

    /// With the other arguments' values.
    pub fn with_context(mut self, context: Vec<(String, String)>) -> Self {
        self.context = context;
        self
    }
}

/// A completion answer: at most [`MAX_COMPLETIONS`] values, how many there are in all,
/// and whether there are more than these.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Completion {
    /// The values, best first.
    pub values: Vec<String>,
    /// How many values there are in all, when known.
    pub total: Option<u64>,
    /// Whether there are more values than these.
    pub has_more: bool,
}

impl Completion {
    /// The answer of `candidates` to `prefix`: those starting with it, the first
    /// [`MAX_COMPLETIONS`] of them, with the total and whether more were left out.
    pub fn filtered<I, S>(candidates: I, prefix: &str) -> Completion
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let matching: Vec<String> = candidates
            .into_iter()
            .map(Into::into)
            .filter(|c| c.starts_with(prefix))
            .collect();
        Completion::of(matching)
    }

    /// The answer `values` (cut to [`MAX_COMPLETIONS`], the total kept).
    pub fn of(mut values: Vec<String>) -> Completion {
        let total = values.len();
        values.truncate(MAX_COMPLETIONS);
        Completion {
            has_more: total > values.len(),
            total: Some(total as u64),
            values,
        }
    }
}

/// A boxed completion future.
pub type CompletionFuture = Pin<Box<dyn Future<Output = Completion> + Send>>;

/// How one argument or placeholder completes: from a fixed list, or a function.
#[derive(Clone)]
pub enum Completer {
    /// From these values (a unit enum's variants), filtered by the prefix.
    Values(Arc<[String]>),
    /// By this function.
    With(Arc<dyn Fn(CompletionRequest) -> CompletionFuture + Send + Sync>),
}

impl std::fmt::Debug for Completer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Completer::Values(values) => f.debug_tuple("Values").field(values).finish(),
            Completer::With(_) => f.write_str("With(..)"),
        }
    }
}

impl Completer {
    /// Completes from `values`.
    pub fn values<I, S>(values: I) -> Completer
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Completer::Values(values.into_iter().map(Into::into).collect())
    }

    /// Completes with `f` (its answer is cut to [`MAX_COMPLETIONS`] values).
    pub fn with<F, Fut>(f: F) -> Completer
    where
        F: Fn(CompletionRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<String>> + Send + 'static,
    {
        Completer::With(Arc::new(move |request| {
            let fut = f(request);
            Box::pin(async move { Completion::of(fut.await) })
        }))
    }

    /// The answer to `request`.
    pub async fn complete(&self, request: CompletionRequest) -> Completion {
        match self {
            Completer::Values(values) => {
                Completion::filtered(values.iter().cloned(), &request.prefix)
            }
            Completer::With(f) => {
                let fut = crate::panic::contain(|| f(request));
                match fut {
                    Ok(fut) => crate::panic::CatchUnwind::new(fut)
                        .await
                        .unwrap_or_default(),
                    Err(_) => Completion::default(),
                }
            }
        }
    }
}
