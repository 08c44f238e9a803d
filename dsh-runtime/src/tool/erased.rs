//! The object-safe face of a tool: [`ErasedTool`], [`DynTool`], [`BodyOutcome`], and
//! [`Toolbox`], a value whose methods are tools.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use super::context::ToolContext;
use super::definition::ToolDefinition;
use super::error::ToolError;
use super::traits::Tool;
use crate::cards::{CallView, ResultSummary, ResultView};
use crate::content::{ContentBlock, default_render};
use crate::json::Value;

/// What running a body produced, before the pipeline's output stage.
#[derive(Debug)]
#[non_exhaustive]
pub enum BodyOutcome {
    /// The body succeeded; its output as a lossless snapshot.
    Value(Value),
    /// The body succeeded with a string: its output is this text as a JSON string (kept
    /// as text so that the default content block takes it without a copy). Only
    /// [`ErasedTool::call_body`] returns it, to the pipeline.
    #[doc(hidden)]
    Text(String),
    /// The body failed.
    Failed(ToolError),
    /// The validated arguments did not deserialize into the typed arguments (a schema
    /// and serde disagreement); the message is serde's.
    ArgsRejected(String),
    /// The output could not be snapshotted losslessly (e.g. a NaN); the message says where.
    NotLossless(String),
}

/// A boxed, `Send` future (the erased tool interface).
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The object-safe face of a tool, used by the registry.
///
/// Implemented for every [`Tool`]; implement it directly only for tools whose arguments
/// and output are plain JSON (e.g. proxied tools, see [`crate::RawTool`]).
///
/// `Any` is a supertrait so the registry can find a tool by its Rust type for typed
/// calls ([`crate::Registry::call`]).
pub trait ErasedTool: std::any::Any + Send + Sync + 'static {
    /// The static definition.
    fn definition(&self) -> &ToolDefinition;
    /// Deserialize the (validated, normalized) arguments, run the body, snapshot the output.
    fn call_json<'a>(&'a self, args: &'a Value, cx: ToolContext) -> BoxFuture<'a, BodyOutcome>;
    /// [`ErasedTool::call_json`] as the pipeline calls it: a string output may come back
    /// as [`BodyOutcome::Text`] (the pipeline's default content block takes the text
    /// without a copy). Default: `call_json`.
    #[doc(hidden)]
    fn call_body<'a>(&'a self, args: &'a Value, cx: ToolContext) -> BoxFuture<'a, BodyOutcome> {
        self.call_json(args, cx)
    }
    /// See [`Tool::render`].
    fn render(&self, args: &Value, value: &Value) -> Result<Vec<ContentBlock>, ToolError>;
    /// See [`Tool::is_concurrency_safe`].
    fn is_concurrency_safe(&self, args: &Value) -> bool;
    /// See [`Tool::present_call`].
    fn present_call(&self, args: &Value) -> Option<CallView>;
    /// See [`Tool::present_result`].
    fn present_result(&self, args: &Value, result: &ResultSummary) -> Option<ResultView>;
    /// See [`Tool::presentation_meta`].
    fn presentation_meta(&self, args: &Value, value: &Value) -> Result<Option<Value>, ToolError>;
    /// See [`Tool::finalize_content`].
    fn finalize_content(&self, args: &Value, content: &[ContentBlock])
    -> Option<Vec<ContentBlock>>;
    /// Which hooks may run code of the tool's own (a set of [`hooks`] bits; see
    /// [`Tool::OVERRIDDEN_HOOKS`]). The pipeline runs the default of a hook whose bit is
    /// clear itself, without a panic guard (the defaults cannot panic). The default says
    /// "all", which is always correct.
    #[doc(hidden)]
    fn overridden_hooks(&self) -> u8 {
        crate::__private::tool_hooks::ALL
    }
}

impl<T: Tool> ErasedTool for T {
    fn definition(&self) -> &ToolDefinition {
        Tool::definition(self)
    }
    fn call_json<'a>(&'a self, args: &'a Value, cx: ToolContext) -> BoxFuture<'a, BodyOutcome> {
        text_as_value(self.call_body(args, cx))
    }
    fn call_body<'a>(&'a self, args: &'a Value, cx: ToolContext) -> BoxFuture<'a, BodyOutcome> {
        Box::pin(async move {
            let typed: T::Args = match T::args_from_json(args) {
                Ok(a) => a,
                Err(e) => return BodyOutcome::ArgsRejected(e.to_string()),
            };
            match Tool::call(self, typed, cx).await {
                Ok(out) => match output_text(out) {
                    Ok(text) => BodyOutcome::Text(text),
                    Err(out) => match crate::json::to_value(&out) {
                        Ok(v) => BodyOutcome::Value(v),
                        // The reason and where, under the one "not lossless" prefix the
                        // pipeline adds.
                        Err(e) => BodyOutcome::NotLossless(format!("{} at {}", e.kind(), e.path())),
                    },
                },
                Err(e) => BodyOutcome::Failed(e),
            }
        })
    }
    // Each hook calls the tool's own method only when it is overridden; the test is one
    // associated constant, so the branch not taken is not compiled for `T`.
    fn render(&self, args: &Value, value: &Value) -> Result<Vec<ContentBlock>, ToolError> {
        if Overrides::<T>::RENDER {
            Tool::render(self, args, value)
        } else {
            Ok(default_render(value))
        }
    }
    fn is_concurrency_safe(&self, args: &Value) -> bool {
        Overrides::<T>::IS_CONCURRENCY_SAFE && Tool::is_concurrency_safe(self, args)
    }
    fn present_call(&self, args: &Value) -> Option<CallView> {
        if Overrides::<T>::PRESENT_CALL {
            Tool::present_call(self, args)
        } else {
            None
        }
    }
    fn present_result(&self, args: &Value, result: &ResultSummary) -> Option<ResultView> {
        if Overrides::<T>::PRESENT_RESULT {
            Tool::present_result(self, args, result)
        } else {
            None
        }
    }
    fn presentation_meta(&self, args: &Value, value: &Value) -> Result<Option<Value>, ToolError> {
        if Overrides::<T>::PRESENTATION_META {
            Tool::presentation_meta(self, args, value)
        } else {
            Ok(None)
        }
    }
    fn finalize_content(
        &self,
        args: &Value,
        content: &[ContentBlock],
    ) -> Option<Vec<ContentBlock>> {
        if Overrides::<T>::FINALIZE_CONTENT {
            Tool::finalize_content(self, args, content)
        } else {
            None
        }
    }
    fn overridden_hooks(&self) -> u8 {
        T::OVERRIDDEN_HOOKS
    }
}

/// A body's output as a lossless value: what [`crate::json::to_value`] makes of it, except
/// that a `String` is moved into the value instead of copied (the common output of a
/// tool; a test compares both paths on generated values). The pipeline itself keeps a
/// `String` output as text ([`BodyOutcome::Text`]) and makes the value from it.
#[cfg(test)]
pub(crate) fn output_value<O: serde::Serialize + 'static>(
    out: O,
) -> Result<Value, crate::json::LosslessError> {
    match output_text(out) {
        Ok(text) => Ok(Value::String(crate::json::Str::from(text))),
        Err(out) => crate::json::to_value(&out),
    }
}

/// `body` with a [`BodyOutcome::Text`] turned into the value it stands for (the outcome
/// [`ErasedTool::call_json`] promises). Not generic: one copy serves every tool.
fn text_as_value(body: BoxFuture<'_, BodyOutcome>) -> BoxFuture<'_, BodyOutcome> {
    Box::pin(async move {
        match body.await {
            BodyOutcome::Text(text) => BodyOutcome::Value(Value::String(text.into())),
            other => other,
        }
    })
}

/// A body's output that is a `String`, moved out; any other output handed back as
/// `Some(out)`, which serializes exactly as `out` does.
fn output_text<O: 'static>(out: O) -> Result<String, Option<O>> {
    let mut slot = Some(out);
    if let Some(s) = (&mut slot as &mut dyn std::any::Any).downcast_mut::<Option<String>>() {
        // `slot` is `Some` (it was just filled); `take` only moves the string out.
        return Ok(s.take().unwrap_or_default());
    }
    Err(slot)
}

/// [`Tool::OVERRIDDEN_HOOKS`] as one constant per hook (a constant operand lets the
/// compiler drop the branch not taken before code generation).
struct Overrides<T>(std::marker::PhantomData<T>);

impl<T: Tool> Overrides<T> {
    const RENDER: bool = T::OVERRIDDEN_HOOKS & crate::__private::tool_hooks::RENDER != 0;
    const IS_CONCURRENCY_SAFE: bool =
        T::OVERRIDDEN_HOOKS & crate::__private::tool_hooks::IS_CONCURRENCY_SAFE != 0;
    const PRESENT_CALL: bool =
        T::OVERRIDDEN_HOOKS & crate::__private::tool_hooks::PRESENT_CALL != 0;
    const PRESENT_RESULT: bool =
        T::OVERRIDDEN_HOOKS & crate::__private::tool_hooks::PRESENT_RESULT != 0;
    const PRESENTATION_META: bool =
        T::OVERRIDDEN_HOOKS & crate::__private::tool_hooks::PRESENTATION_META != 0;
    const FINALIZE_CONTENT: bool =
        T::OVERRIDDEN_HOOKS & crate::__private::tool_hooks::FINALIZE_CONTENT != 0;
}

/// A type-erased, shareable tool, as the registry holds it.
#[derive(Clone)]
pub struct DynTool(Arc<dyn ErasedTool>);

impl DynTool {
    /// Erase a tool.
    pub fn new<T: ErasedTool>(tool: T) -> Self {
        DynTool(Arc::new(tool))
    }
    /// Erase a shared tool.
    pub fn from_arc(tool: Arc<dyn ErasedTool>) -> Self {
        DynTool(tool)
    }
    /// The erased interface.
    pub fn erased(&self) -> &dyn ErasedTool {
        &*self.0
    }
    /// The static definition.
    pub fn definition(&self) -> &ToolDefinition {
        self.0.definition()
    }
    /// Whether both handles share one tool (clones of one `DynTool`).
    pub fn same_as(&self, other: &DynTool) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// The Rust type of the erased tool (the `#[tool]` struct for derived tools).
    pub fn type_id(&self) -> std::any::TypeId {
        let any: &dyn std::any::Any = &*self.0;
        any.type_id()
    }
}

impl fmt::Debug for DynTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("DynTool")
            .field(&self.definition().name)
            .finish()
    }
}

/// A stateful value whose methods are tools (`#[toolbox] impl S { #[tool] async fn .. }`).
pub trait Toolbox: Send + Sync + 'static {
    /// Every tool of this value, sharing it.
    fn tools(self: Arc<Self>) -> Vec<DynTool>;
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::output_value;

    /// The moved path and the general path make the same value (or the same error).
    fn agrees<O: serde::Serialize + Clone + 'static>(out: &O) -> Result<(), TestCaseError> {
        let general = crate::json::to_value(out).map_err(|e| e.to_string());
        let fast = output_value(out.clone()).map_err(|e| e.to_string());
        prop_assert_eq!(fast, general);
        Ok(())
    }

    proptest! {
        #[test]
        fn output_value_agrees_with_to_value(
            s in any::<String>(),
            v in proptest::collection::vec(any::<String>(), 0..4),
            o in proptest::option::of(any::<String>()),
            n in any::<u64>(),
            f in any::<f64>(),
            m in proptest::collection::btree_map("[a-c]{0,2}", any::<i32>(), 0..4),
        ) {
            agrees(&s)?;
            agrees(&String::with_capacity(s.len() + 7) )?;
            let mut roomy = String::with_capacity(s.len() * 2 + 1);
            roomy.push_str(&s);
            agrees(&roomy)?;
            agrees(&v)?;
            agrees(&o)?;
            agrees(&n)?;
            agrees(&f)?;
            agrees::<BTreeMap<String, i32>>(&m)?;
            agrees(&(s.clone(), n))?;
        }
    }
}
