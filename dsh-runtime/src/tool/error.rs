//! [`ToolError`]: what a tool body (or a hook) fails with.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use crate::caller::CallerError;

/// The error a tool body (or a hook) fails with.
///
/// Any `std::error::Error` converts into it with `?`, keeping the error as its
/// [`source`](ToolError::source); [`ToolError::with_code`] attaches a machine-readable code
/// (e.g. `FS_NOT_FOUND`) that the pipeline passes through.
///
/// `ToolError` deliberately does not implement `std::error::Error`, so that the blanket
/// conversion from every error type can exist (as with `anyhow::Error`). Converted into a
/// `Box<dyn std::error::Error>`, it is a standard error whose `source()` is the cause.
///
/// ```
/// use dsh_runtime::ToolError;
///
/// fn read() -> Result<String, ToolError> {
///     Ok(std::fs::read_to_string("/nonexistent/dsh-runtime-doc")?)
/// }
/// let err = read().unwrap_err();
/// let io = err.source().and_then(|e| e.downcast_ref::<std::io::Error>());
/// assert_eq!(io.map(|e| e.kind()), Some(std::io::ErrorKind::NotFound));
/// let boxed: Box<dyn std::error::Error + Send + Sync> = err.into();
/// assert!(boxed.source().is_some_and(|e| e.is::<std::io::Error>()));
/// ```
#[derive(Clone)]
pub struct ToolError {
    message: String,
    code: Option<Cow<'static, str>>,
    source: Option<Arc<dyn std::error::Error + Send + Sync + 'static>>,
}

impl ToolError {
    /// An error with a message and no code.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            code: None,
            source: None,
        }
    }

    /// An error with a code and a message.
    pub fn with_code(code: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            code: Some(code.into()),
            source: None,
        }
    }

    /// The same error, with `source` as its cause (what [`ToolError::source`] returns).
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Arc::new(source));
        self
    }

    /// The human-readable message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The code, typed, when one was given: a registry [`PipelineCode`](crate::PipelineCode) or
    /// the tool's own (see [`ToolError::code_str`] for the wire form).
    pub fn code(&self) -> Option<crate::error_code::FailureCode<'_>> {
        self.code_str().map(crate::error_code::FailureCode::of)
    }

    /// The code as given, when one was.
    pub fn code_str(&self) -> Option<&str> {
        self.code.as_deref()
    }

    /// The error this one was converted from, if any (never sent to the model: the
    /// message is what the pipeline reports).
    pub fn source(&self) -> Option<&(dyn std::error::Error + Send + Sync + 'static)> {
        self.source.as_deref()
    }
}

/// Equal when the message and code are (the source is not compared).
impl PartialEq for ToolError {
    fn eq(&self, other: &Self) -> bool {
        self.message == other.message && self.code == other.code
    }
}

impl Eq for ToolError {}

impl fmt::Debug for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("ToolError");
        if let Some(c) = &self.code {
            d.field("code", c);
        }
        d.field("message", &self.message);
        if let Some(source) = &self.source {
            d.field("source", source);
        }
        d.finish()
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Any error, by its message. A [`CallerError`] keeps its code too (`CALLER_…`, see
/// [`crate::caller::codes`]).
impl<E: std::error::Error + Send + Sync + 'static> From<E> for ToolError {
    fn from(e: E) -> Self {
        let code = (&e as &dyn std::any::Any)
            .downcast_ref::<CallerError>()
            .map(CallerError::code);
        let error = match code {
            Some(code) => ToolError::with_code(code, e.to_string()),
            None => ToolError::new(e.to_string()),
        };
        error.with_source(e)
    }
}

/// A [`ToolError`] as a standard error, for `?` in a function returning
/// `Box<dyn std::error::Error + Send + Sync>` (such as `main`): it displays as the
/// message, prefixed by the code when there is one (`FS_NOT_FOUND: …`).
struct AsStdError(ToolError);

impl fmt::Debug for AsStdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for AsStdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0.code {
            Some(code) => write!(f, "{code}: {}", self.0.message),
            None => f.write_str(&self.0.message),
        }
    }
}

impl std::error::Error for AsStdError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self.0.source() {
            Some(e) => Some(e),
            None => None,
        }
    }
}

impl From<ToolError> for Box<dyn std::error::Error + Send + Sync + 'static> {
    /// ```
    /// fn run() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    ///     Err(dsh_runtime::ToolError::with_code("FS_NOT_FOUND", "no such file"))?;
    ///     Ok(())
    /// }
    /// assert_eq!(run().unwrap_err().to_string(), "FS_NOT_FOUND: no such file");
    /// ```
    fn from(e: ToolError) -> Self {
        Box::new(AsStdError(e))
    }
}

impl From<ToolError> for Box<dyn std::error::Error + 'static> {
    fn from(e: ToolError) -> Self {
        Box::new(AsStdError(e))
    }
}
