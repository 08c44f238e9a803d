//! Procedural macros for dsh-rs: `#[tool]`, `#[toolbox]` and `#[derive(ToolSchema)]`.
//!
//! Depend on `dsh-runtime`, which re-exports these macros and documents them with
//! examples; this crate holds only the expansion code.
//!
//! Each macro runs in phases on `proc_macro2` tokens: parse (attributes and signatures,
//! accumulating every error) -> model (an IR keeping spans) -> validate (rules that span
//! several items) -> expand. When anything fails, the user's item is still emitted with
//! stand-in items beside the errors, so one mistake does not cascade.
//!
//! Set `DSH_MACROS_DEBUG=1` to print every expansion to stderr.

use proc_macro::TokenStream;

mod ctxt;
mod derive;
mod doc;
mod prompt;
mod resource;
mod suggest;
mod tool;
mod types;

// Documented on its re-export, `dsh_runtime::tool` (rustdoc would append docs written
// here to those), hence the allow.
#[allow(missing_docs)]
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    debug("tool", tool::expand_tool(attr.into(), item.into())).into()
}

// Documented on its re-export, `dsh_runtime::toolbox`.
#[allow(missing_docs)]
#[proc_macro_attribute]
pub fn toolbox(attr: TokenStream, item: TokenStream) -> TokenStream {
    debug("toolbox", tool::expand_toolbox(attr.into(), item.into())).into()
}

/// Derive `ToolSchema` from a type's shape, doc comments and serde attributes. See
/// `dsh_runtime::ToolSchema`.
#[proc_macro_derive(ToolSchema, attributes(schema))]
pub fn derive_tool_schema(item: TokenStream) -> TokenStream {
    debug("ToolSchema", derive::expand(item.into())).into()
}

fn debug(name: &str, tokens: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
    if std::env::var_os("DSH_MACROS_DEBUG").is_some() {
        eprintln!("// expansion of {name}:\n{tokens}");
    }
    tokens
}

// Documented on its re-export, `dsh_runtime::resource`.
#[allow(missing_docs)]
#[proc_macro_attribute]
pub fn resource(attr: TokenStream, item: TokenStream) -> TokenStream {
    debug(
        "resource",
        resource::expand_resource(attr.into(), item.into()),
    )
    .into()
}

// Documented on its re-export, `dsh_runtime::prompt`.
#[allow(missing_docs)]
#[proc_macro_attribute]
pub fn prompt(attr: TokenStream, item: TokenStream) -> TokenStream {
    debug("prompt", prompt::expand_prompt(attr.into(), item.into())).into()
}

// Documented on its re-export, `dsh_runtime::context`.
#[allow(missing_docs)]
#[proc_macro_attribute]
pub fn context(attr: TokenStream, item: TokenStream) -> TokenStream {
    debug("context", prompt::expand_context(attr.into(), item.into())).into()
}
