//! `#[resource]`, and what `#[prompt]` shares with it.
//!
//! Phases as for `#[tool]`: `attr` reads the keys (of both attributes), `shared` reads the
//! signature into the IR (`FnDef`, also `#[prompt]`'s) and holds the generated pieces both
//! use, `template` checks the URI, this module checks that placeholders and parameters
//! are the same names, and `expand` generates the items (or stand-ins next to errors).

pub(crate) mod attr;
mod expand;
pub(crate) mod shared;
mod template;

use proc_macro2::TokenStream;
use quote::quote;

use crate::ctxt::Ctxt;
use attr::{Attr, Kind};
use shared::{FnDef, Site};

pub(crate) fn expand_resource(attr: TokenStream, item: TokenStream) -> TokenStream {
    let func: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(_) => {
            let e = syn::Error::new(
                proc_macro2::Span::call_site(),
                "`#[resource]` goes on an `async fn` (or on the methods of a `#[context]` impl block)",
            )
            .into_compile_error();
            return quote!(#e #item);
        }
    };
    let mut errors = Ctxt::new();
    let attr = Attr::parse(Kind::Resource, attr, &mut errors);
    let mut cleaned = func.clone();
    shared::strip_param_attrs(&mut cleaned.sig);
    let def = shared::fn_def(
        Kind::Resource,
        &func.sig,
        &func.vis,
        &func.attrs,
        attr,
        Site::Free,
        &mut errors,
    );
    let uri = check_uri(&def, &mut errors);
    // A method is inside an impl block, where only associated items may go: emit it
    // alone (the error says to add `#[context]`).
    if func.sig.receiver().is_some() {
        let errors = errors.check().err();
        return quote!(#errors #cleaned);
    }
    match (errors.check(), uri) {
        (Ok(()), Some(uri)) => {
            let items = expand::expand(&def, &uri);
            quote!(#cleaned #items)
        }
        (errors, _) => {
            let errors = errors.err();
            let stand_in = expand::fallback(&def);
            quote!(#errors #cleaned #stand_in)
        }
    }
}

/// Expand one `#[resource]` method of a `#[context]` block: the generated items, or the
/// errors and stand-ins.
pub(crate) fn expand_method(def: &FnDef<'_>, mut errors: Ctxt) -> TokenStream {
    let uri = check_uri(def, &mut errors);
    match (errors.check(), uri) {
        (Ok(()), Some(uri)) => expand::expand(def, &uri),
        (errors, _) => {
            let errors = errors.err();
            let stand_in = expand::fallback(def);
            quote!(#errors #stand_in)
        }
    }
}

/// The URI, checked: a scheme, a level-1 template, `size` only on a fixed URI, and its
/// placeholders the fn's parameters, one for one.
fn check_uri(def: &FnDef<'_>, errors: &mut Ctxt) -> Option<expand::Uri> {
    let Some(lit) = def.attr.uri.clone() else {
        errors.error_at(
            def.sig.ident.span(),
            "a `#[resource]` needs its URI, first: a fixed one (`#[resource(\"docs://readme\")]`), or a URI template whose placeholders are the fn's parameters (`#[resource(\"users://{id}/profile\")]` on `async fn profile(id: u64)`)",
        );
        return None;
    };
    let placeholders = match template::placeholders(&lit.value()) {
        Ok(p) => p,
        Err(e) => {
            errors.error_spanned(&lit, e);
            return None;
        }
    };
    if let (Some((_, span)), false) = (def.attr.size, placeholders.is_empty()) {
        errors.error_at(
            span,
            "`size` is the size of one resource: a URI template names many, and publishes none; remove `size`",
        );
    }
    let mut ok = true;
    for name in &placeholders {
        if !def.params.iter().any(|p| &p.name == name) {
            ok = false;
            errors.error_spanned(
                &lit,
                format!(
                    "the placeholder `{{{name}}}` is not a parameter of `{}`: add the parameter `{name}: T`, with `T` read from the placeholder's text (`String`, `u64`, a unit enum, ...)",
                    def.sig.ident
                ),
            );
        }
    }
    for p in &def.params {
        if !placeholders.contains(&p.name) {
            ok = false;
            let what = if placeholders.is_empty() {
                "the URI has no placeholder".to_string()
            } else {
                format!(
                    "its placeholders are {}",
                    placeholders
                        .iter()
                        .map(|n| format!("`{{{n}}}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            errors.error_spanned(
                &p.pat,
                format!(
                    "the parameter `{0}` is not a placeholder of the URI `{1}` ({what}): each parameter of a `#[resource]` fn is read from the URI; add `{{{0}}}` to the URI template, or remove the parameter",
                    p.name,
                    lit.value()
                ),
            );
        }
    }
    ok.then_some(expand::Uri { lit, placeholders })
}
