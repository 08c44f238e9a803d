//! `#[prompt]`, and `#[context]`: the `#[resource]` and `#[prompt]` methods of an impl
//! block, sharing its value (here rather than under `resource`, since it drives both).
//!
//! The signature is read into `resource::shared`'s IR (the same rules for parameters,
//! receivers and outputs); `expand` generates the prompt's items.

mod expand;
mod group;

use proc_macro2::TokenStream;
use quote::quote;

use crate::ctxt::Ctxt;
use crate::resource::attr::{Attr, Kind};
use crate::resource::shared::{self, FnDef, Site};

pub(crate) fn expand_prompt(attr: TokenStream, item: TokenStream) -> TokenStream {
    let func: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(_) => {
            let e = syn::Error::new(
                proc_macro2::Span::call_site(),
                "`#[prompt]` goes on an `async fn` (or on the methods of a `#[context]` impl block)",
            )
            .into_compile_error();
            return quote!(#e #item);
        }
    };
    let mut errors = Ctxt::new();
    let attr = Attr::parse(Kind::Prompt, attr, &mut errors);
    let mut cleaned = func.clone();
    shared::strip_param_attrs(&mut cleaned.sig);
    let def = shared::fn_def(
        Kind::Prompt,
        &func.sig,
        &func.vis,
        &func.attrs,
        attr,
        Site::Free,
        &mut errors,
    );
    if func.sig.receiver().is_some() {
        let errors = errors.check().err();
        return quote!(#errors #cleaned);
    }
    let items = expand_method(&def, errors);
    quote!(#cleaned #items)
}

/// The generated items of one prompt, or the errors and stand-ins.
fn expand_method(def: &FnDef<'_>, errors: Ctxt) -> TokenStream {
    match errors.check() {
        Ok(()) => expand::expand(def),
        Err(errors) => {
            let stand_in = expand::fallback(def);
            quote!(#errors #stand_in)
        }
    }
}

pub(crate) fn expand_context(attr: TokenStream, item: TokenStream) -> TokenStream {
    group::expand(attr, item)
}
