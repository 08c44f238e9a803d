//! The IR of one tool: what the signature and attributes say, with the user's tokens kept
//! for spans. Built by `parse.rs`, checked by `validate.rs`, read by `expand.rs` and
//! `fallback.rs`.

use proc_macro2::{Span, TokenStream};

use super::attr::{Concurrency, ToolAttr};

/// One `#[tool]` fn or method.
pub(super) struct ToolDef<'a> {
    /// The fn's signature (spans for the name, `async`, generics).
    pub sig: &'a syn::Signature,
    /// Visibility of the generated items (the fn's).
    pub vis: syn::Visibility,
    /// The parsed `#[tool(...)]` keys.
    pub attr: ToolAttr,
    /// The model-facing tool name.
    pub name: String,
    /// The generated tool struct (`ReadFile`, or `struct_name`).
    pub tool_ident: syn::Ident,
    /// For a free fn, the module the tool struct is defined in (see `expand::tool_struct`).
    pub tool_module: Option<syn::Ident>,
    /// The generated args struct (`ReadFileArgs`, or `args_struct_name`), unless
    /// `#[tool(args)]`.
    pub args_ident: syn::Ident,
    /// The description parts (`#[doc]` expressions, `# Arguments` removed).
    pub description: Vec<syn::Expr>,
    /// Whether the description is known to be blank.
    pub description_blank: bool,
    /// The `# Arguments` entries.
    pub entries: Vec<super::arguments::Entry>,
    /// The input examples of the doc comment's `# Examples` section (the `example` keys
    /// follow them, in `attr.examples`).
    pub examples: Vec<super::examples::Example>,
    /// The parameters, in the fn's order.
    pub inputs: Vec<Input>,
    /// What the fn returns.
    pub output: Output,
    /// How the body is reached.
    pub receiver: Receiver,
    /// `dsh_runtime`, or the `crate = ".."` override.
    pub krate: TokenStream,
    /// The fn's `#[cfg(..)]` attributes, repeated on every generated item so that a
    /// configured-out fn takes its tool with it.
    pub cfgs: Vec<syn::Attribute>,
}

/// How a tool body is called.
pub(super) enum Receiver {
    /// A free fn: `read_file(..)`.
    None,
    /// A method of a `#[toolbox]` type; the tool struct holds an `Arc` of `self_ty`.
    Method {
        self_ty: Box<syn::Type>,
        kind: ReceiverKind,
    },
}

pub(super) enum ReceiverKind {
    /// `&self`.
    Ref,
    /// `self: Arc<Self>`.
    Arc,
    /// No receiver (an associated fn inside the toolbox).
    Static,
}

/// One fn parameter.
pub(super) enum Input {
    /// A schema property: becomes a field of the generated args struct.
    Field(Field),
    /// `#[tool(args)]`: the whole arguments object.
    Args {
        ty: syn::Type,
        /// The parameter's name, when its pattern is an identifier.
        name: Option<String>,
    },
    /// The `ToolContext` (its type as written, without `&`), by value or by reference.
    Context {
        ty: syn::Type,
        by_ref: bool,
        name: Option<String>,
    },
}

/// A parameter that is a schema property.
pub(super) struct Field {
    /// The parameter's identifier, reused as the args struct's field.
    pub ident: syn::Ident,
    /// The JSON property name (the identifier without `r#`).
    pub name: String,
    pub ty: syn::Type,
    /// The parameter's own `///` docs.
    pub docs: Vec<syn::Attribute>,
    /// The text of its `# Arguments` entry, if any.
    pub entry: Option<String>,
    /// Its `#[schema(...)]` keys, read as a struct field's.
    pub schema: Box<crate::derive::keys::SchemaAttrs>,
}

/// The return type.
pub(super) struct Output {
    /// The canonical output type (`T` of `Result<T, E>`, or the plain type).
    pub ty: syn::Type,
    /// Whether the fn returns a `Result` (an `Err` becomes the tool's failure).
    pub fallible: bool,
    /// `E` of `Result<T, E>`, when written.
    pub err_ty: Option<syn::Type>,
    /// Where to report output problems.
    pub span: Span,
}

impl ToolDef<'_> {
    pub(super) fn fields(&self) -> impl Iterator<Item = &Field> {
        self.inputs.iter().filter_map(|i| match i {
            Input::Field(f) => Some(f),
            _ => None,
        })
    }

    /// The type of `#[tool(args)]`'s parameter.
    pub(super) fn args_param(&self) -> Option<&syn::Type> {
        self.inputs.iter().find_map(|i| match i {
            Input::Args { ty, .. } => Some(ty),
            _ => None,
        })
    }

    /// The `Tool::Args` type.
    pub(super) fn args_type(&self) -> TokenStream {
        match self.args_param() {
            Some(t) => quote::quote!(#t),
            None => {
                let a = &self.args_ident;
                quote::quote!(#a)
            }
        }
    }

    /// How generated impls name the tool struct: through its defining module when there
    /// is one, so they never resolve to a user type of the same name.
    pub(super) fn tool_path(&self) -> TokenStream {
        let tool = &self.tool_ident;
        match &self.tool_module {
            Some(m) => quote::quote!(#m::#tool),
            None => quote::quote!(#tool),
        }
    }

    pub(super) fn concurrency(&self) -> Option<&Concurrency> {
        self.attr.concurrency_safe.as_ref()
    }
}
