//! `#[context]`: every `#[resource]` and `#[prompt]` method of an inherent impl block
//! becomes a resource or prompt sharing the value through an `Arc`; the type implements
//! `ResourceGroup` and/or `PromptGroup`.
//!
//! Naming, as `#[toolbox]`'s: the struct of method `readme` on `impl Docs` is
//! `DocsReadme(pub Arc<Docs>)`. The block may also carry `#[toolbox]` (each attribute
//! takes its own methods and leaves the others).

use darling::ast::NestedMeta;
use proc_macro2::TokenStream;
use quote::{ToTokens, quote};

use crate::ctxt::Ctxt;
use crate::resource::attr::{Attr, CRATE, Kind};
use crate::resource::shared::{self, Site};

pub(super) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Ctxt::new();
    let krate = group_crate(attr, &mut errors);
    let item_impl: syn::ItemImpl = match syn::parse2(item.clone()) {
        Ok(i) => i,
        Err(_) => {
            let e = syn::Error::new(
                proc_macro2::Span::call_site(),
                "`#[context]` goes on an inherent `impl` block whose methods carry `#[resource]` or `#[prompt]`",
            )
            .into_compile_error();
            let attr_errors = errors.check().err();
            return quote!(#attr_errors #e #item);
        }
    };
    if let Some((path, _)) = &item_impl.trait_ {
        errors.error_spanned(
            path,
            "`#[context]` goes on an inherent impl block (`impl Docs { .. }`), not on a trait impl",
        );
    }
    if !item_impl.generics.params.is_empty() {
        errors.error_spanned(
            &item_impl.generics,
            "`#[context]` does not support generic impl blocks: write the impl for a concrete type (e.g. `impl Docs<Local>`)",
        );
    }
    let self_ty = &*item_impl.self_ty;
    let prefix = match self_ty {
        syn::Type::Path(p) if p.qself.is_none() => {
            p.path.segments.last().map(|s| s.ident.to_string())
        }
        _ => None,
    };
    let Some(prefix) = prefix else {
        errors.error_spanned(
            self_ty,
            "`#[context]` needs a named type (`impl Docs { .. }`)",
        );
        let errors = errors.check().err();
        return quote!(#errors #item);
    };
    let prefix = prefix.trim_start_matches("r#").to_string();

    // The impl as emitted: our attributes and the parameters' docs and `#[complete]`s
    // removed from the methods that carry them.
    let mut cleaned = item_impl.clone();
    for it in cleaned.items.iter_mut() {
        if let syn::ImplItem::Fn(f) = it
            && f.attrs.iter().any(|a| kind_of(a).is_some())
        {
            f.attrs.retain(|a| kind_of(a).is_none());
            shared::strip_param_attrs(&mut f.sig);
        }
    }

    let mut generated = Vec::new();
    let mut resources: Vec<(syn::Ident, Vec<syn::Attribute>)> = Vec::new();
    let mut prompts: Vec<(syn::Ident, Vec<syn::Attribute>)> = Vec::new();
    let mut attr_paths: Vec<syn::Path> = Vec::new();
    for it in &item_impl.items {
        let syn::ImplItem::Fn(f) = it else { continue };
        let mut ours = f.attrs.iter().filter_map(|a| kind_of(a).map(|k| (k, a)));
        let Some((kind, first)) = ours.next() else {
            continue;
        };
        if !attr_paths.contains(first.path()) {
            attr_paths.push(first.path().clone());
        }
        let mut method_errors = Ctxt::new();
        for (_, extra) in ours {
            if !attr_paths.contains(extra.path()) {
                attr_paths.push(extra.path().clone());
            }
            method_errors.error_spanned(
                extra,
                "a method is one resource or one prompt: put every key in one `#[resource(...)]` or `#[prompt(...)]`",
            );
        }
        let mut attr = Attr::from_attribute(kind, first, &mut method_errors);
        if attr.krate.is_none() {
            attr.krate = krate.clone();
        }
        let def = shared::fn_def(
            kind,
            &f.sig,
            &f.vis,
            &f.attrs,
            attr,
            Site::Group {
                self_ty,
                prefix: &prefix,
            },
            &mut method_errors,
        );
        let entry = (def.struct_ident.clone(), def.cfgs.clone());
        match kind {
            Kind::Resource => {
                resources.push(entry);
                generated.push(crate::resource::expand_method(&def, method_errors));
            }
            Kind::Prompt => {
                prompts.push(entry);
                generated.push(super::expand_method(&def, method_errors));
            }
        }
    }
    if resources.is_empty() && prompts.is_empty() && item_impl.trait_.is_none() {
        errors.error_spanned(
            self_ty,
            "`#[context]` found no `#[resource]` or `#[prompt]` method in this impl block: mark each one",
        );
    }

    let krate = krate.map_or_else(|| quote!(::dsh_runtime), |p| p.to_token_stream());
    let resource_impl = (!resources.is_empty()).then(|| {
        let (idents, cfgs): (Vec<_>, Vec<_>) = resources.into_iter().unzip();
        quote! {
            #[automatically_derived]
            impl #krate::resources::ResourceGroup for #self_ty {
                fn resources(self: ::std::sync::Arc<Self>) -> ::std::vec::Vec<#krate::resources::Resource> {
                    let mut __dsh_all = ::std::vec::Vec::new();
                    #(
                        #(#cfgs)*
                        __dsh_all.push(#krate::resources::Resource::from(#idents(::std::sync::Arc::clone(&self))));
                    )*
                    __dsh_all
                }
            }
        }
    });
    let prompt_impl = (!prompts.is_empty()).then(|| {
        let (idents, cfgs): (Vec<_>, Vec<_>) = prompts.into_iter().unzip();
        quote! {
            #[automatically_derived]
            impl #krate::prompts::PromptGroup for #self_ty {
                fn prompts(self: ::std::sync::Arc<Self>) -> ::std::vec::Vec<#krate::prompts::Prompt> {
                    let mut __dsh_all = ::std::vec::Vec::new();
                    #(
                        #(#cfgs)*
                        __dsh_all.push(#krate::prompts::Prompt::from(#idents(::std::sync::Arc::clone(&self))));
                    )*
                    __dsh_all
                }
            }
        }
    });
    let errors = errors.check().err();
    let allows = shared::allows();
    quote! {
        #errors
        #cleaned
        #(#generated)*
        #allows
        const _: () = {
            // The attributes were consumed here, so rustc never resolves their paths;
            // naming each keeps the user's `use dsh_runtime::resource` from being unused.
            #(
                #[allow(unused_imports)]
                use #attr_paths as _;
            )*
            #resource_impl
            #prompt_impl
        };
    }
}

/// `#[resource]` / `#[prompt]` (by the last path segment: `#[dsh_runtime::prompt]` too).
fn kind_of(a: &syn::Attribute) -> Option<Kind> {
    let last = a.path().segments.last()?;
    if last.ident == "resource" {
        Some(Kind::Resource)
    } else if last.ident == "prompt" {
        Some(Kind::Prompt)
    } else {
        None
    }
}

/// `#[context]` or `#[context(crate = "..")]`.
fn group_crate(attr: TokenStream, errors: &mut Ctxt) -> Option<syn::Path> {
    if attr.is_empty() {
        return None;
    }
    let items = match NestedMeta::parse_meta_list(attr) {
        Ok(i) => i,
        Err(e) => {
            errors.push(e);
            return None;
        }
    };
    let mut krate = None;
    for item in &items {
        match item {
            NestedMeta::Meta(m @ syn::Meta::NameValue(nv)) if nv.path.is_ident(CRATE) => {
                let parsed = Attr::parse(Kind::Prompt, m.to_token_stream(), errors).krate;
                if parsed.is_some() {
                    krate = parsed;
                }
            }
            other => errors.error_spanned(
                other,
                "`#[context]` takes no keys but `crate = \"...\"`; resource and prompt keys go on each method's `#[resource(...)]` or `#[prompt(...)]`",
            ),
        }
    }
    krate
}
