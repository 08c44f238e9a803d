//! Typed calls from Rust through the full pipeline.

use std::any::TypeId;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::ToolCall;
use crate::json;
use crate::registry::Registry;
use crate::registry::state::ByType;
use crate::schema::json_quote;
use crate::tool::{ScopeId, Tool};

/// A typed call's failure: the tool's name and the failure's message (and code, when the
/// failure has one).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolCallError {
    /// The tool that was called (the Rust type name when no tool of that type is
    /// visible).
    pub tool_name: String,
    /// The failure's message.
    pub message: String,
    /// The failure's code, if any.
    pub code: Option<String>,
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

impl std::error::Error for ToolCallError {}

impl Registry {
    /// Call the visible tool of type `T` from `scope` (`None`: the global view) through
    /// the full pipeline, and return its final value (after post-execute) as
    /// `T::Output`.
    ///
    /// The tool is found by its Rust type among the tools visible to `scope`; the call
    /// gets a fresh id (`typed-<n>`) and its own cancellation token.
    pub async fn call<T>(
        &self,
        scope: Option<ScopeId>,
        args: T::Args,
    ) -> Result<T::Output, ToolCallError>
    where
        T: Tool,
        T::Args: Serialize,
        T::Output: DeserializeOwned,
    {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let name = {
            let snap = self.inner.snapshot();
            let view = snap.view(scope);
            match view.by_type(TypeId::of::<T>()) {
                ByType::Found(entry) => entry.name.clone(),
                ByType::Missing => {
                    return Err(ToolCallError {
                        tool_name: std::any::type_name::<T>().to_string(),
                        message: format!(
                            "no tool of type `{}` is visible to this caller",
                            std::any::type_name::<T>()
                        ),
                        code: Some(super::ErrorCode::UnknownTool.as_str().to_string()),
                    });
                }
                ByType::Ambiguous => {
                    return Err(ToolCallError {
                        tool_name: std::any::type_name::<T>().to_string(),
                        message: format!(
                            "several tools of type `{}` are visible to this caller; call one by name with `execute`",
                            std::any::type_name::<T>()
                        ),
                        code: None,
                    });
                }
            }
        };
        let fail = |message: String, code: Option<&str>| ToolCallError {
            tool_name: name.to_string(),
            message,
            code: code.map(str::to_string),
        };
        let value = json::to_value(&args).map_err(|e| {
            fail(
                format!("tool execution arguments must be losslessly JSON-serializable: {e}"),
                None,
            )
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
            }),
            None => Err(fail(
                result.message().unwrap_or_default().to_string(),
                result.code(),
            )),
        }
    }
}
