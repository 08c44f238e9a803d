//! The traits a tool implements: [`Tool`], [`NamedTool`], and the ones `#[tool]` asserts at
//! the user's types.

use std::future::Future;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::context::ToolContext;
use super::definition::ToolDefinition;
use super::error::ToolError;
use crate::cards::{CallView, ResultSummary, ResultView};
use crate::content::{ContentBlock, default_render};
use crate::json::Value;
use crate::schema::Schema;

/// A tool whose name is known from its type: `#[tool]` implements it for the struct it
/// generates, so policy can target a tool by type instead of by a name string that a
/// rename or a typo would silently miss ([`CallInfo::is`](crate::hooks::CallInfo::is),
/// [`hooks::pre_execute_for`](crate::hooks::pre_execute_for)).
///
/// ```
/// use dsh_runtime::{NamedTool, tool};
///
/// /// Close a ticket.
/// #[tool(name = "close")]
/// async fn close_ticket(id: u64) -> u64 { id }
///
/// assert_eq!(CloseTicket::NAME, "close");
/// ```
pub trait NamedTool: Tool {
    /// The name the model calls (`ToolDefinition::name`).
    const NAME: &'static str;
}

/// Not public API. Implemented by `#[tool]` for the unit struct it generates, which it defines in a
/// module of its own and glob-imports where the fn is. A type of the same name in that
/// scope shadows the glob import without an error, so the expansion asserts
/// `<Name as ToolStruct>` at the fn name: this message is then the only error. It lives
/// here rather than in `__private` because rustc names it in the error.
#[diagnostic::on_unimplemented(
    message = "`#[tool]` cannot name its struct `{Self}`: a type of that name already exists here",
    label = "the tool struct of this fn is named `{Self}`",
    note = "name the generated structs with `#[tool(struct_name = \"...\")]` (the arguments struct becomes `<name>Args`), or rename the other type"
)]
#[doc(hidden)]
pub trait ToolStruct {
    /// Evaluated by the assertion.
    const OK: () = ();
}

/// Not public API: what `#[tool]` asks of a parameter's type. Every use the expansion makes
/// of a parameter type (its schema, whether it is optional, reading it from the
/// arguments) goes through this one trait at the type's span, so a type missing
/// `Deserialize`, `ToolSchema` or both gives one error there, with this message, instead
/// of one per use from serde's and this crate's internals.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter: it must implement `serde::Deserialize` and `dsh_runtime::ToolSchema`",
    label = "not usable as a tool parameter",
    note = "derive what is missing on the type's definition: `#[derive(serde::Deserialize, dsh_runtime::ToolSchema)]` (for `Vec<T>`, `Option<T>` and other containers, on `T`); a type from another crate cannot derive them: take a type that has both (`String`, `u64`, a struct of your own) or implement them for a newtype of your own"
)]
#[doc(hidden)]
pub trait ToolParam: Sized {
    /// `ToolSchema::OPTIONAL`.
    const OPTIONAL: bool;
    /// `ToolSchema::PROPERTY_PORTABILITY`.
    const PROPERTY_PORTABILITY: crate::schema::portable::Facts;
    /// `ToolSchema::property_schema`.
    fn property_schema() -> Arc<Schema>;
    /// The member `name` of validated arguments, as the generated reader found it in its
    /// one pass over the members; an absent member is what serde's derive makes of a
    /// missing field (`None` for an `Option`, an error otherwise).
    fn read(member: Option<&Value>, name: &'static str) -> Result<Self, crate::json::DeError>;
}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned + crate::schema::ToolSchema + 'static> ToolParam for T {
    const OPTIONAL: bool = <T as crate::schema::ToolSchema>::OPTIONAL;
    const PROPERTY_PORTABILITY: crate::schema::portable::Facts =
        <T as crate::schema::ToolSchema>::PROPERTY_PORTABILITY;

    fn property_schema() -> Arc<Schema> {
        <T as crate::schema::ToolSchema>::property_schema()
    }

    fn read(member: Option<&Value>, name: &'static str) -> Result<Self, crate::json::DeError> {
        match member {
            Some(v) => T::deserialize(v),
            None => T::deserialize(crate::json::__private::MissingField(name)),
        }
    }
}

/// Not public API: how `#[tool]` turns the error of a `Result` return type into the
/// call's failure. A blanket impl over `Into<ToolError>`, so that an error type without
/// the conversion is reported at the error type with this message rather than as a
/// missing `std::error::Error` impl.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's error type: it does not convert into `dsh_runtime::ToolError`",
    label = "the error type of this tool",
    note = "a tool returns `Result<T, E>` where `E: Into<ToolError>`: every `std::error::Error` converts; return `Result<T, ToolError>` and convert other errors in the body, e.g. `.map_err(ToolError::new)` for a `String`, `.map_err(|e| ToolError::new(format!(\"{{e:#}}\")))` for an `anyhow::Error`"
)]
#[doc(hidden)]
pub trait IntoToolError {
    /// The conversion.
    fn into_tool_error(self) -> ToolError;
}

#[diagnostic::do_not_recommend]
impl<E: Into<ToolError>> IntoToolError for E {
    fn into_tool_error(self) -> ToolError {
        self.into()
    }
}

/// A tool: a typed async body plus the hooks the pipeline calls around it.
///
/// Only [`Tool::definition`] and [`Tool::call`] are required. The other hooks receive the
/// frozen JSON arguments (and value) because they also run on replayed logs, where the
/// arguments may no longer match the current schema: implementations deserialize softly
/// (the `#[tool]` macro generates that for typed presenter functions).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool",
    label = "`{Self}` does not implement `Tool`",
    note = "put `#[dsh_runtime::tool]` on an `async fn`, which generates a unit struct implementing `Tool`, and register that struct"
)]
pub trait Tool: Send + Sync + 'static {
    /// The typed arguments the body receives.
    type Args: DeserializeOwned + Send + 'static;
    /// The canonical output value.
    type Output: Serialize + Send + 'static;

    /// Which hooks this implementation overrides (a set of [`hooks`] bits). The erased
    /// tool calls only those and runs the defaults itself, so a tool that overrides none
    /// compiles no hook code of its own. The default says "all", which is always correct;
    /// `#[tool]` states exactly the hooks it generates.
    #[doc(hidden)]
    const OVERRIDDEN_HOOKS: u8 = crate::__private::tool_hooks::ALL;

    /// The static definition.
    fn definition(&self) -> &ToolDefinition;

    /// Run the body. Arguments were validated against the parameter schema already.
    fn call(
        &self,
        args: Self::Args,
        cx: ToolContext,
    ) -> impl Future<Output = Result<Self::Output, ToolError>> + Send;

    /// Read validated, normalized arguments into [`Tool::Args`]. The default goes through
    /// `Args`'s `Deserialize`; `#[tool]` overrides it, for the argument structs it
    /// generates, with a direct read of each member (the same result, less code per tool).
    #[doc(hidden)]
    fn args_from_json(args: &Value) -> Result<Self::Args, crate::json::DeError>
    where
        Self: Sized,
    {
        crate::json::from_value(args)
    }

    /// Model-facing content for a canonical value. Default: a string value as raw text,
    /// anything else as compact JSON.
    fn render(&self, args: &Value, value: &Value) -> Result<Vec<ContentBlock>, ToolError> {
        let _ = args;
        Ok(default_render(value))
    }

    /// Whether a call with these (valid) arguments may run in parallel with other
    /// parallel-safe calls. Default: no.
    fn is_concurrency_safe(&self, args: &Value) -> bool {
        let _ = args;
        false
    }

    /// The pending card for a call; `None` means the generic card.
    fn present_call(&self, args: &Value) -> Option<CallView> {
        let _ = args;
        None
    }

    /// The completed card for a result; `None` means the generic card.
    fn present_result(&self, args: &Value, result: &ResultSummary) -> Option<ResultView> {
        let _ = (args, result);
        None
    }

    /// Durable, replayable card data derived from the canonical value (top-level calls only).
    fn presentation_meta(&self, args: &Value, value: &Value) -> Result<Option<Value>, ToolError> {
        let _ = (args, value);
        Ok(None)
    }

    /// Replace the final content once, after post-execute; `None` keeps it.
    fn finalize_content(
        &self,
        args: &Value,
        content: &[ContentBlock],
    ) -> Option<Vec<ContentBlock>> {
        let _ = (args, content);
        None
    }
}
