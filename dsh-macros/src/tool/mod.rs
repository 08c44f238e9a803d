//! `#[tool]` and `#[toolbox]`.
//!
//! Phases: `attr` (darling `FromMeta` for `#[tool(...)]`) and `parse` (signature and doc
//! comments, including the `# Arguments` section read by `arguments`) build the IR in
//! `model`; `validate` checks the rules that span several items; `expand` generates the
//! items from the model alone, and `fallback` emits stand-ins when there were errors.
//! `toolbox` drives the same phases for every `#[tool]` method of an impl block.

mod arguments;
mod attr;
mod examples;
mod expand;
mod fallback;
mod model;
mod parse;
mod toolbox;
mod validate;

use proc_macro2::TokenStream;
use quote::quote;

use attr::ToolAttr;
use parse::Site;

use crate::ctxt::Ctxt;

pub(crate) fn expand_tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    let func: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(_) => {
            let e = syn::Error::new(
                proc_macro2::Span::call_site(),
                "`#[tool]` goes on an `async fn` (or on the methods of a `#[toolbox]` impl block)",
            )
            .into_compile_error();
            return quote!(#e #item);
        }
    };
    let mut errors = Ctxt::new();
    let attr = ToolAttr::parse(attr, &mut errors);
    let cleaned = strip_param_docs_fn(&func);
    let def = parse::tool_def(
        &func.sig,
        &func.vis,
        &func.attrs,
        attr,
        Site::Free,
        &mut errors,
    );
    validate::validate(&def, &mut errors);

    // A method with `self` is inside an impl block, where only associated items may go:
    // emit it alone (the error says to add `#[toolbox]`).
    if func.sig.receiver().is_some() {
        let errors = errors.check().err();
        return quote!(#errors #cleaned);
    }
    match errors.check() {
        Ok(()) => {
            let items = expand::expand(&def);
            quote!(#cleaned #items)
        }
        Err(errors) => {
            let stand_in = fallback::fallback(&def);
            quote!(#errors #cleaned #stand_in)
        }
    }
}

pub(crate) fn expand_toolbox(attr: TokenStream, item: TokenStream) -> TokenStream {
    toolbox::expand(attr, item)
}

/// rustc rejects doc comments and `#[schema]` on fn parameters; they were read, so drop
/// them.
fn strip_param_docs_fn(func: &syn::ItemFn) -> syn::ItemFn {
    let mut f = func.clone();
    strip_param_docs(&mut f.sig);
    f
}

fn strip_param_docs(sig: &mut syn::Signature) {
    for arg in sig.inputs.iter_mut() {
        if let syn::FnArg::Typed(pt) = arg {
            pt.attrs
                .retain(|a| !crate::doc::is_doc(a) && !parse::is_schema_attr(a));
        }
    }
}
