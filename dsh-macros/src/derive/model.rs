//! The IR of one `#[derive(ToolSchema)]` input: names already resolved the way serde
//! resolves them (renames and `rename_all` applied), attributes read, spans kept.

use proc_macro2::Span;

use super::attr::Serde;
use super::keys::SchemaAttrs;

pub(crate) struct Input {
    pub ident: syn::Ident,
    pub generics: syn::Generics,
    pub doc: Vec<syn::Expr>,
    pub serde: Serde,
    pub schema: SchemaAttrs,
    pub body: Body,
}

pub(crate) enum Body {
    Struct(Style, Vec<Field>),
    Enum(Repr, Vec<Variant>),
}

/// The shape of a struct or variant body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Style {
    /// `{ a: A, .. }`
    Named,
    /// `(A, ..)`
    Tuple,
    /// no fields
    Unit,
}

/// serde's enum representation.
#[derive(Clone, Debug)]
pub(crate) enum Repr {
    /// `{"Variant": content}` (unit variants: `"Variant"`).
    External,
    /// `{"tag": "Variant", ..fields}`.
    Internal { tag: String },
    /// `{"tag": "Variant", "content": content}`.
    Adjacent { tag: String, content: String },
    /// `content`, the first variant that deserializes wins.
    Untagged,
}

pub(crate) struct Variant {
    pub ident: syn::Ident,
    /// The name serde reads (after renames).
    pub name: String,
    pub style: Style,
    pub fields: Vec<Field>,
    pub doc: Vec<syn::Expr>,
    pub serde: Serde,
    pub schema: SchemaAttrs,
}

pub(crate) struct Field {
    pub ident: Option<syn::Ident>,
    pub ty: syn::Type,
    /// The key serde reads (after renames); the index for tuple fields.
    pub name: String,
    pub doc: Vec<syn::Expr>,
    pub serde: Serde,
    pub schema: SchemaAttrs,
    /// Where to point errors about the field as a whole.
    pub span: Span,
}

impl Field {
    /// Whether the field takes part in deserialization.
    pub(crate) fn is_live(&self) -> bool {
        !self.serde.skip
    }
}

impl Variant {
    pub(crate) fn is_live(&self) -> bool {
        !self.serde.skip
    }
}

impl Input {
    /// The single field serde reads through for `transparent` (and newtype) structs.
    pub(crate) fn transparent_field(&self) -> Option<&Field> {
        match &self.body {
            Body::Struct(_, fields) => {
                let mut live = fields.iter().filter(|f| f.is_live());
                let first = live.next()?;
                live.next().is_none().then_some(first)
            }
            Body::Enum(..) => None,
        }
    }
}
