//! The compile-time side of typed forms: which types a form may hold, checked where a
//! body asks for the form ([`ToolContext::elicit`](crate::ToolContext::elicit)).
//!
//! `#[derive(ToolSchema)]` implements these traits next to the schema:
//!
//! - a struct with named fields gets [`FormFields`], bounded on every field's type being
//!   a [`FormField`] (and on the field's `#[schema]` keys being ones a form can carry);
//! - an enum of unit variants gets [`FormField`] (a single-select field) and
//!   [`FormChoice`] (so a `Vec` of it is a multi-select field);
//! - a newtype (or `#[serde(transparent)]`) struct gets [`FormField`] when its field is
//!   one; a `#[serde(from = "X")]` type gets whatever `X` has.
//!
//! The derived impls carry a type parameter (`impl<D> FormFields<D> for T where Field:
//! FormField<D>`) that keeps their bounds from being checked where the type is declared:
//! a struct with a map or nested struct field still derives `ToolSchema` and works as a
//! tool's parameters; only asking for it as a form (`FormFields<()>`) fails, at the call,
//! naming the field type that is outside MCP's form subset and why.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashSet, VecDeque};
use std::num::{NonZeroU8, NonZeroU16, NonZeroU32, NonZeroU64, NonZeroUsize};
use std::sync::Arc;

/// A type one field of an elicitation form can hold: a string, a number, an integer, a
/// boolean, an enum of unit variants (a single-select), a `Vec` or set of such an enum (a
/// multi-select), each possibly in an `Option` (a field the user may leave empty).
///
/// `D` is a placeholder the derived impls are generic over (`impl<D> FormFields<D> for
/// T where Field: FormField<D>`): it keeps a bound that cannot hold (a map field) from
/// being rejected where the type is declared, so such a type still derives `ToolSchema`
/// and serves as tool parameters; only asking for it as a form (at `D = ()`) fails,
/// naming the field. Implement the trait for your own newtype whose
/// schema is one of those kinds (`impl<D> FormField<D> for Email {}`): the form's schema
/// is still checked when the form is asked ([`form_schema`](super::form_schema)), and
/// a schema outside the subset then fails the request with
/// [`CallerError::Failed`](crate::caller::CallerError::Failed).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a field of an elicitation form",
    label = "has a field of type `{Self}`, outside MCP's form subset",
    note = "MCP forms are flat: a form field is a string, a number, an integer, a boolean, an enum of unit variants (one choice), or a `Vec` of such an enum (several choices), each possibly in an `Option`; nested structs, maps, lists of other items and arbitrary JSON cannot be asked in a form"
)]
pub trait FormField<D = ()> {
    /// Whether the field, as a single-select, is written as MCP's legacy `enum` +
    /// `enumNames` rather than a titled `oneOf` (an enum deriving `ToolSchema` with
    /// `#[schema(enum_names)]`).
    const LEGACY_ENUM_NAMES: bool = false;
}

/// An enum of unit variants: the choices of a single-select field, and the items of a
/// multi-select one (`Vec<Self>`). Derived for such enums with `ToolSchema`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a choice of a multi-select form field",
    label = "not a choice",
    note = "a multi-select form field is a `Vec` (or set) of an enum of unit variants deriving `ToolSchema`; MCP forms have no lists of free strings, numbers or objects"
)]
pub trait FormChoice<D = ()> {}

/// A struct whose fields are all [`FormField`]s: the type of a form
/// ([`ElicitForm`](super::ElicitForm)). Derived for structs with named fields with
/// `ToolSchema`, bounded on their fields.
///
/// Implementing it by hand (for a type with a hand-written `ToolSchema`) promises that
/// the type's schema is a flat object of form fields; the schema is still checked when
/// the form is asked.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an elicitation form",
    label = "not a struct of form fields",
    note = "a form is a struct with named fields deriving `ToolSchema` and `Deserialize`"
)]
pub trait FormFields<D = ()> {
    /// Whether the property named `property` (its name on the wire) is a single-select
    /// written as MCP's legacy `enum` + `enumNames` (see
    /// [`FormField::LEGACY_ENUM_NAMES`]).
    fn legacy_enum_names(property: &str) -> bool {
        let _ = property;
        false
    }
}

// Every impl is `do_not_recommend`: an error names the field's whole type
// (`Vec<String>`, `Option<Value>`) and lists none of the impls (the trait's note says
// what a form field is).
macro_rules! fields {
    ($($t:ty),* $(,)?) => {$(
        #[diagnostic::do_not_recommend]
        impl<D> FormField<D> for $t {}
    )*};
}

fields!(
    String,
    Box<str>,
    Arc<str>,
    Cow<'static, str>,
    char,
    bool,
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    f32,
    f64,
    NonZeroU8,
    NonZeroU16,
    NonZeroU32,
    NonZeroU64,
    NonZeroUsize,
);

#[diagnostic::do_not_recommend]
impl<D, T: FormField<D>> FormField<D> for Option<T> {
    const LEGACY_ENUM_NAMES: bool = T::LEGACY_ENUM_NAMES;
}

#[diagnostic::do_not_recommend]
impl<D, T: FormField<D>> FormField<D> for Box<T> {
    const LEGACY_ENUM_NAMES: bool = T::LEGACY_ENUM_NAMES;
}

#[diagnostic::do_not_recommend]
impl<D, T: FormField<D>> FormField<D> for Arc<T> {
    const LEGACY_ENUM_NAMES: bool = T::LEGACY_ENUM_NAMES;
}

#[diagnostic::do_not_recommend]
impl<D, E: FormChoice<D>> FormField<D> for Vec<E> {}

#[diagnostic::do_not_recommend]
impl<D, E: FormChoice<D>> FormField<D> for VecDeque<E> {}

#[diagnostic::do_not_recommend]
impl<D, E: FormChoice<D>> FormField<D> for BTreeSet<E> {}

#[diagnostic::do_not_recommend]
impl<D, E: FormChoice<D>, S> FormField<D> for HashSet<E, S> {}

// Checks of a field's `#[schema]` keys, emitted by the derive only for a field that has
// the key. Nothing implements them: asking for a form with such a field fails with
// their message, while the struct stays usable as tool parameters.

/// Never implemented: a form field with `#[schema(pattern = ..)]`.
#[diagnostic::on_unimplemented(
    message = "a form field cannot carry `#[schema(pattern = ..)]`: MCP forms have no `pattern`",
    label = "this field of type `{Self}` has a `pattern`",
    note = "remove the `pattern` from the form's field (and check the answer in the tool body), or use a form type of its own for the question"
)]
pub trait FormPatternKey<D> {}

/// Never implemented: a form field whose schema is written by hand
/// (`#[schema(with = ..)]`, or serde's `with`/`deserialize_with`).
#[diagnostic::on_unimplemented(
    message = "a form field cannot be described by `#[schema(with = ..)]`: its schema is not known to be in MCP's form subset",
    label = "this field of type `{Self}` has a hand-written schema",
    note = "give the field a form type (a string, number, integer, boolean, enum of unit variants, or a `Vec` of such an enum), or implement `FormFields` for the form by hand (its schema is then checked when the form is asked)"
)]
pub trait FormWithKey<D> {}

/// Never implemented: a form field with an `enum` or `const` of numbers or booleans.
#[diagnostic::on_unimplemented(
    message = "a form field's `#[schema(enum = ..)]`/`const` must list strings: MCP forms offer choices of strings only",
    label = "this field of type `{Self}` lists choices that are not strings",
    note = "use a `String` field with string choices, or an enum of unit variants deriving `ToolSchema`"
)]
pub trait FormChoicesKey<D> {}
