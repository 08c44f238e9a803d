//! Doc comments as descriptions.
//!
//! The macros never read doc text themselves: they `concat!` the expressions of every
//! `#[doc = ...]` attribute (one line each), so `include_str!` and `#[doc = macro!()]`
//! forms keep working, and the runtime (`__private::doc`) normalises the text.

use proc_macro2::TokenStream;
use quote::quote;

/// The `#[doc = <expr>]` expressions of `attrs`, in order.
pub(crate) fn doc_exprs(attrs: &[syn::Attribute]) -> Vec<syn::Expr> {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => Some(nv.value.clone()),
            _ => None,
        })
        .collect()
}

/// `concat!(line, "\n", line, ...)`, or `""` when there is no doc.
pub(crate) fn doc_concat(exprs: &[syn::Expr]) -> TokenStream {
    if exprs.is_empty() {
        return quote!("");
    }
    let mut parts = Vec::new();
    for (i, e) in exprs.iter().enumerate() {
        if i > 0 {
            parts.push(quote!("\n"));
        }
        parts.push(quote!(#e));
    }
    quote!(::core::concat!(#(#parts),*))
}

/// Whether `attr` is a doc attribute (`///`, `/** */` or `#[doc = ...]`).
pub(crate) fn is_doc(attr: &syn::Attribute) -> bool {
    attr.path().is_ident("doc")
}
