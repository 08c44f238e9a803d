//! Typed calls from Rust through the full pipeline.

use std::any::TypeId;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::ToolCall;
use crate::error_code::PipelineCode;
use crate::json;
use crate::registry::{AgentScope, ByType, Registry};
use crate::schema::json_quote;
use crate::tool::{AgentScopeId, Tool};

/// A typed call's failure: the tool's name and the failure's message (and code, when the
/// failure has one). When the arguments or the final value did not convert, the
/// conversion's error is the [`source`](std::error::Error::source).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ToolCallError {
    /// The tool that was called (the Rust type name when no tool of that type is
    /// visible).
    pub tool_name: String,
    /// The failure's message.
    pub message: String,
    /// The failure's code as on the wire, if any.
    pub code: Option<String>,
    source: Option<Arc<dyn std::error::Error + Send + Sync + 'static>>,
}

/// Equal when the tool, message and code are (the source is not compared).
impl PartialEq for ToolCallError {
    fn eq(&self, other: &Self) -> bool {
        self.tool_name == other.tool_name
            && self.message == other.message
            && self.code == other.code
    }
}

impl Eq for ToolCallError {}

impl ToolCallError {
    fn caused_by(mut self, e: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Arc::new(e));
        self
    }
}

impl fmt::Display for ToolCallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "tool {} failed: {}",
            json_quote(&self.tool_name),
            self.message
        )
    }
}

impl std::error::Error for ToolCallError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.source {
            Some(e) => Some(&**e),
            None => None,
        }
    }
}

impl Registry {
    /// Call the global tool of type `T` through the full pipeline (policy included), and
    /// return its final value (after post-execute) as `T::Output`. See [`AgentScope::call`]
    /// for a call from an agent scope.
    ///
    /// The tool is found by its Rust type among the global tools; the call gets a fresh
    /// id (`typed-<n>`) and its own cancellation token.
    pub async fn call<T>(&self, args: T::Args) -> Result<T::Output, ToolCallError>
    where
        T: Tool,
        T::Args: Serialize,
        T::Output: DeserializeOwned,
    {
        self.call_from::<T>(None, args).await
    }

    async fn call_from<T>(
        &self,
        scope: Option<AgentScopeId>,
        args: T::Args,
    ) -> Result<T::Output, ToolCallError>
    where
        T: Tool,
        T::Args: Serialize,
        T::Output: DeserializeOwned,
    {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let type_name = std::any::type_name::<T>();
        let unresolved = |message: String, code: Option<PipelineCode>| ToolCallError {
            tool_name: type_name.to_string(),
            message,
            code: code.map(|c| c.as_str().to_string()),
            source: None,
        };
        let name = match self.snapshot(scope).view().by_type(TypeId::of::<T>()) {
            ByType::Found(entry) => entry.name().clone(),
            ByType::Missing => {
                return Err(unresolved(
                    format!("no tool of type `{type_name}` is visible to this caller"),
                    Some(PipelineCode::UnknownTool),
                ));
            }
            ByType::Ambiguous => {
                return Err(unresolved(
                    format!(
                        "several tools of type `{type_name}` are visible to this caller; call one by name with `execute`"
                    ),
                    None,
                ));
            }
        };
        let fail = |message: String, code: Option<&str>| ToolCallError {
            tool_name: name.to_string(),
            message,
            code: code.map(str::to_string),
            source: None,
        };
        let value = json::to_value(&args).map_err(|e| {
            let message = format!("arguments are not lossless JSON: {e}");
            fail(message, Some(PipelineCode::InvalidArgs.as_str())).caused_by(e)
        })?;
        let id = format!("typed-{}", NEXT.fetch_add(1, Ordering::Relaxed));
        let mut call = ToolCall::new(id, name.clone(), value);
        call.agent = scope;
        let result = self.execute(call).await;
        match result.value() {
            Some(v) => json::from_value::<T::Output>(v).map_err(|e| {
                fail(
                    format!(
                        "the final value does not deserialize into `{}`: {e}",
                        std::any::type_name::<T::Output>()
                    ),
                    None,
                )
                .caused_by(e)
            }),
            None => Err(fail(
                result.message().unwrap_or_default().to_string(),
                result.code_str(),
            )),
        }
    }
}

impl AgentScope {
    /// Call the tool of type `T` that this scope sees, through the full pipeline (this
    /// scope's hooks included), as [`Registry::call`] does for the global view.
    pub async fn call<T>(&self, args: T::Args) -> Result<T::Output, ToolCallError>
    where
        T: Tool,
        T::Args: Serialize,
        T::Output: DeserializeOwned,
    {
        self.registry().call_from::<T>(Some(self.id()), args).await
    }
}
