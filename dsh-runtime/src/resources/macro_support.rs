//! Not public API: what `#[resource]`, `#[prompt]` and `#[context]` expand to.
//!
//! The traits rustc may name in an error carry a message saying what to change
//! (`on_unimplemented`), and their blanket impls are `do_not_recommend`, so the message
//! is the error rather than a missing bound inside them.
//!
//! A parameter's type is read from text the first way that applies, chosen at compile
//! time by method resolution over [`Pick`] ("autoref specialization"): its `FromStr`;
//! else serde, from the string (a unit enum's variant names); else nothing, and
//! [`FromText`] reports the type. A type with a [`ToolSchema`] whose schema is a string
//! enum completes from its values.

use std::any::Any;
use std::fmt::Display;
use std::marker::PhantomData;
use std::str::FromStr;

use serde::de::DeserializeOwned;

use super::{ResourceError, TemplateError, TemplateParams};
use crate::complete::Completer;
use crate::prompts::{PromptArgs, PromptError};
use crate::schema::{Kind, Schema, ToolSchema};

/// Implemented by `#[resource]` for the unit struct it generates in a module of its own
/// (as `#[tool]` does, see `ToolStruct`): a type of the same name where the fn is shadows
/// the glob import, and the assertion fails with this message.
#[diagnostic::on_unimplemented(
    message = "`#[resource]` cannot name its struct `{Self}`: a type of that name already exists here",
    label = "the resource struct of this fn is named `{Self}`",
    note = "name the generated struct with `#[resource(struct_name = \"...\")]`, or rename the other type"
)]
pub trait ResourceStruct {
    /// Evaluated by the assertion.
    const OK: () = ();
}

/// [`ResourceStruct`] for `#[prompt]`.
#[diagnostic::on_unimplemented(
    message = "`#[prompt]` cannot name its struct `{Self}`: a type of that name already exists here",
    label = "the prompt struct of this fn is named `{Self}`",
    note = "name the generated struct with `#[prompt(struct_name = \"...\")]`, or rename the other type"
)]
pub trait PromptStruct {
    /// Evaluated by the assertion.
    const OK: () = ();
}

/// The type `T` to read from text; see the module docs.
pub struct Pick<T>(PhantomData<fn() -> T>);

impl<T> Pick<T> {
    /// The one value.
    pub const NEW: Pick<T> = Pick(PhantomData);
}

/// First choice: `T: FromStr`.
pub trait ViaFromStr<T> {
    /// The reader.
    fn pick(&self) -> ParseText<T>;
}

impl<T: FromStr> ViaFromStr<T> for &&Pick<T>
where
    T::Err: Display,
{
    fn pick(&self) -> ParseText<T> {
        ParseText(PhantomData)
    }
}

/// Second choice: `T: Deserialize` from a string.
pub trait ViaSerde<T> {
    /// The reader.
    fn pick(&self) -> DeserializeText<T>;
}

impl<T: DeserializeOwned> ViaSerde<T> for &Pick<T> {
    fn pick(&self) -> DeserializeText<T> {
        DeserializeText(PhantomData)
    }
}

/// Last: no way, reported by [`FromText`].
pub trait ViaNothing<T> {
    /// The non-reader.
    fn pick(&self) -> NoReader<T>;
}

impl<T> ViaNothing<T> for Pick<T> {
    fn pick(&self) -> NoReader<T> {
        NoReader(PhantomData)
    }
}

/// Reads `T` with `FromStr`.
pub struct ParseText<T>(PhantomData<fn() -> T>);
/// Reads `T` with serde from a string.
pub struct DeserializeText<T>(PhantomData<fn() -> T>);
/// `T` cannot be read from text.
pub struct NoReader<T>(PhantomData<fn() -> T>);

/// A reader of `T` from text: what was picked for `T`.
#[diagnostic::on_unimplemented(
    message = "`{T}` cannot be read from the text of a URI placeholder or prompt argument",
    label = "not readable from text",
    note = "a parameter's type must implement `FromStr` (numbers, `bool`, `String`, ...) or deserialize from a string with serde (a unit enum deriving `serde::Deserialize`)"
)]
pub trait FromText<T> {
    /// `text` read as `T`, or why not.
    fn read(&self, text: &str) -> Result<T, String>;
}

impl<T: FromStr> FromText<T> for ParseText<T>
where
    T::Err: Display,
{
    fn read(&self, text: &str) -> Result<T, String> {
        text.parse().map_err(|e: T::Err| format!("{text:?}: {e}"))
    }
}

impl<T: DeserializeOwned> FromText<T> for DeserializeText<T> {
    fn read(&self, text: &str) -> Result<T, String> {
        let d = serde::de::value::StrDeserializer::<serde::de::value::Error>::new(text);
        T::deserialize(d).map_err(|e| format!("{text:?}: {e}"))
    }
}

/// Completion from `T`'s schema, when it has one.
pub trait ViaSchema {
    /// Its values, when its schema is a string enum.
    fn completer(&self) -> Option<Completer>;
}

impl<T: ToolSchema + 'static> ViaSchema for &Pick<T> {
    fn completer(&self) -> Option<Completer> {
        enum_strings(&T::schema()).map(Completer::values)
    }
}

/// No completion.
pub trait NoSchema {
    /// None.
    fn completer(&self) -> Option<Completer>;
}

impl<T> NoSchema for Pick<T> {
    fn completer(&self) -> Option<Completer> {
        None
    }
}

/// The strings a string-enum schema admits: its `enum`, or the `const`s of a `oneOf`
/// (a unit enum whose variants have docs).
pub fn enum_strings(schema: &Schema) -> Option<Vec<String>> {
    let text = |v: &crate::json::Value| match v {
        crate::json::Value::String(s) => Some(String::from(&**s)),
        _ => None,
    };
    if let Some(values) = &schema.enum_values {
        return values.as_slice().iter().map(text).collect();
    }
    match &schema.kind {
        Kind::OneOf(branches) => branches
            .iter()
            .map(|b| b.const_value.as_ref().and_then(text))
            .collect(),
        _ => None,
    }
}

/// Placeholder `name` of `params`, read by `read`.
///
/// # Errors
///
/// [`ResourceError::InvalidParams`] naming the placeholder.
pub fn placeholder<T>(
    params: &TemplateParams,
    name: &str,
    read: impl FnOnce(&str) -> Result<T, String>,
) -> Result<T, ResourceError> {
    let text = params
        .get(name)
        .ok_or_else(|| ResourceError::InvalidParams {
            placeholder: name.to_string(),
            reason: "no value".into(),
        })?;
    read(text).map_err(|reason| ResourceError::InvalidParams {
        placeholder: name.to_string(),
        reason,
    })
}

/// Required argument `name` of prompt `prompt`, read by `read`.
///
/// # Errors
///
/// [`PromptError::MissingArgument`] or [`PromptError::InvalidArgument`] naming it.
pub fn argument<T>(
    args: &PromptArgs,
    prompt: &str,
    name: &str,
    read: impl FnOnce(&str) -> Result<T, String>,
) -> Result<T, PromptError> {
    match optional_argument(args, name, read)? {
        Some(v) => Ok(v),
        None => Err(PromptError::MissingArgument {
            prompt: prompt.to_string(),
            argument: name.to_string(),
        }),
    }
}

/// Optional argument `name`, read by `read` when given.
///
/// # Errors
///
/// [`PromptError::InvalidArgument`] naming it.
pub fn optional_argument<T>(
    args: &PromptArgs,
    name: &str,
    read: impl FnOnce(&str) -> Result<T, String>,
) -> Result<Option<T>, PromptError> {
    args.get(name)
        .map(|text| {
            read(text).map_err(|reason| PromptError::InvalidArgument {
                argument: name.to_string(),
                reason,
            })
        })
        .transpose()
}

/// A resource of a template the macro checked.
pub fn checked(resource: Result<super::Resource, TemplateError>) -> super::Resource {
    resource.unwrap_or_else(|TemplateError(e)| {
        panic!("`#[resource]` checked this template at compile time: {e}")
    })
}

/// The description of a doc comment, when it says anything.
pub fn description(doc: std::borrow::Cow<'static, str>) -> Option<String> {
    (!doc.trim().is_empty()).then(|| doc.into_owned())
}

/// How `#[resource]` turns the error of a `Result` into the read's failure: a
/// [`ResourceError`] as it is, anything else that displays as [`ResourceError::Failed`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a resource's error type: it does not implement `Display`",
    label = "the error type of this resource",
    note = "a resource returns `Result<T, E>` where `E` is a `ResourceError` (kept as it is: `InvalidParams`, `NotFound`) or any error that implements `Display` (a failed read)"
)]
pub trait IntoResourceError {
    /// The conversion.
    fn into_resource_error(self) -> ResourceError;
}

#[diagnostic::do_not_recommend]
impl<E: Display + 'static> IntoResourceError for E {
    fn into_resource_error(self) -> ResourceError {
        match (&self as &dyn Any).downcast_ref::<ResourceError>() {
            Some(e) => e.clone(),
            None => ResourceError::Failed(self.to_string()),
        }
    }
}

/// [`IntoResourceError`] for `#[prompt]`: a [`PromptError`] as it is, anything else
/// that displays as [`PromptError::Failed`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a prompt's error type: it does not implement `Display`",
    label = "the error type of this prompt",
    note = "a prompt returns `Result<T, E>` where `E` is a `PromptError` (kept as it is: `InvalidArgument`) or any error that implements `Display` (a failed prompt)"
)]
pub trait IntoPromptError {
    /// The conversion.
    fn into_prompt_error(self) -> PromptError;
}

#[diagnostic::do_not_recommend]
impl<E: Display + 'static> IntoPromptError for E {
    fn into_prompt_error(self) -> PromptError {
        match (&self as &dyn Any).downcast_ref::<PromptError>() {
            Some(e) => e.clone(),
            None => PromptError::Failed(self.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    #[serde(rename_all = "lowercase")]
    enum Color {
        Red,
        Green,
    }

    // The borrows are the expansion's: each level picks a different way.
    #[test]
    #[allow(clippy::needless_borrow)]
    fn reads_the_first_way_that_applies() {
        let n: Result<u64, String> = FromText::read(&(&&&Pick::<u64>::NEW).pick(), "07");
        assert_eq!(n, Ok(7));
        let c: Result<Color, String> = FromText::read(&(&&&Pick::<Color>::NEW).pick(), "green");
        assert!(matches!(c, Ok(Color::Green)));
        let bad: Result<Color, String> = FromText::read(&(&&&Pick::<Color>::NEW).pick(), "blue");
        let bad = bad.err().unwrap_or_default();
        assert!(bad.starts_with("\"blue\": unknown variant `blue`"), "{bad}");
        assert!(matches!(Color::Red, Color::Red));
    }

    #[test]
    #[allow(clippy::needless_borrow)]
    fn completes_string_enums_only() {
        assert!((&&Pick::<u64>::NEW).completer().is_none());
        assert!((&&Pick::<Color>::NEW).completer().is_none());
        let e = Schema::string_enum(["a", "b"]);
        assert_eq!(enum_strings(&e), Some(vec!["a".into(), "b".into()]));
        assert_eq!(enum_strings(&Schema::string()), None);
    }

    #[test]
    fn errors_convert() {
        let kept = ResourceError::InvalidParams {
            placeholder: "id".into(),
            reason: "no".into(),
        };
        assert_eq!(kept.clone().into_resource_error(), kept);
        assert_eq!(
            "boom".to_string().into_resource_error(),
            ResourceError::Failed("boom".into())
        );
        assert_eq!(
            "boom".into_prompt_error(),
            PromptError::Failed("boom".into())
        );
    }
}
