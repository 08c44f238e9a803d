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

/// `#[context]`: parse the impl block and its keys, validate the block, then each
/// `#[resource]` / `#[prompt]` method through that macro's phases, and expand the group
/// impls.
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
    validate_impl(&item_impl, &mut errors);
    let self_ty = &*item_impl.self_ty;
    let Some(prefix) = type_prefix(self_ty, &mut errors) else {
        let errors = errors.check().err();
        return quote!(#errors #item);
    };
    let members = group_methods(&item_impl, krate.as_ref(), &prefix);
    if members.resources.is_empty() && members.prompts.is_empty() && item_impl.trait_.is_none() {
        errors.error_spanned(
            self_ty,
            "`#[context]` found no `#[resource]` or `#[prompt]` method in this impl block: mark each one",
        );
    }
    let krate = krate.map_or_else(|| quote!(::dsh_runtime), |p| p.to_token_stream());
    let cleaned = cleaned_impl(&item_impl);
    let errors = errors.check().err();
    let allows = shared::allows();
    let generated = &members.generated;
    let attr_paths = &members.attr_paths;
    let (resource_impl, prompt_impl) = group_impls(self_ty, &krate, &members);
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

/// The rules on the impl block itself: inherent, not generic.
fn validate_impl(item_impl: &syn::ItemImpl, errors: &mut Ctxt) {
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
}

/// The name the generated structs start with: the last segment of the impl's type, or an
/// error when the type has no name.
fn type_prefix(self_ty: &syn::Type, errors: &mut Ctxt) -> Option<String> {
    let prefix = match self_ty {
        syn::Type::Path(p) if p.qself.is_none() => {
            p.path.segments.last().map(|s| s.ident.to_string())
        }
        _ => None,
    };
    if prefix.is_none() {
        errors.error_spanned(
            self_ty,
            "`#[context]` needs a named type (`impl Docs { .. }`)",
        );
    }
    prefix.map(|p| p.trim_start_matches("r#").to_string())
}

/// The impl as emitted: our attributes and the parameters' docs and `#[complete]`s
/// removed from the methods that carry them.
fn cleaned_impl(item_impl: &syn::ItemImpl) -> syn::ItemImpl {
    let mut cleaned = item_impl.clone();
    for it in cleaned.items.iter_mut() {
        if let syn::ImplItem::Fn(f) = it
            && f.attrs.iter().any(|a| kind_of(a).is_some())
        {
            f.attrs.retain(|a| kind_of(a).is_none());
            shared::strip_param_attrs(&mut f.sig);
        }
    }
    cleaned
}

/// What the block's methods generate, and what the group impls name.
#[derive(Default)]
struct Members {
    /// Each method's items (or its errors and stand-ins).
    generated: Vec<TokenStream>,
    /// The resources' structs and `#[cfg]`s.
    resources: Vec<(syn::Ident, Vec<syn::Attribute>)>,
    /// The prompts' structs and `#[cfg]`s.
    prompts: Vec<(syn::Ident, Vec<syn::Attribute>)>,
    /// The paths the attributes were written with, each once.
    attr_paths: Vec<syn::Path>,
}

/// Every `#[resource]` and `#[prompt]` method through its macro's phases.
fn group_methods(item_impl: &syn::ItemImpl, krate: Option<&syn::Path>, prefix: &str) -> Members {
    let self_ty = &*item_impl.self_ty;
    let mut members = Members::default();
    for it in &item_impl.items {
        let syn::ImplItem::Fn(f) = it else { continue };
        let mut ours = f.attrs.iter().filter_map(|a| kind_of(a).map(|k| (k, a)));
        let Some((kind, first)) = ours.next() else {
            continue;
        };
        if !members.attr_paths.contains(first.path()) {
            members.attr_paths.push(first.path().clone());
        }
        let mut method_errors = Ctxt::new();
        for (_, extra) in ours {
            if !members.attr_paths.contains(extra.path()) {
                members.attr_paths.push(extra.path().clone());
            }
            method_errors.error_spanned(
                extra,
                "a method is one resource or one prompt: put every key in one `#[resource(...)]` or `#[prompt(...)]`",
            );
        }
        let mut attr = Attr::from_attribute(kind, first, &mut method_errors);
        if attr.krate.is_none() {
            attr.krate = krate.cloned();
        }
        let site = Site::Group { self_ty, prefix };
        let def = shared::fn_def(
            kind,
            &f.sig,
            &f.vis,
            &f.attrs,
            attr,
            site,
            &mut method_errors,
        );
        let entry = (def.struct_ident.clone(), def.cfgs.clone());
        match kind {
            Kind::Resource => {
                members.resources.push(entry);
                let items = crate::resource::expand_method(&def, method_errors);
                members.generated.push(items);
            }
            Kind::Prompt => {
                members.prompts.push(entry);
                members
                    .generated
                    .push(super::expand_method(&def, method_errors));
            }
        }
    }
    members
}

/// `impl ResourceGroup` and `impl PromptGroup` for the type, each where it has such
/// methods.
fn group_impls(
    self_ty: &syn::Type,
    krate: &TokenStream,
    members: &Members,
) -> (Option<TokenStream>, Option<TokenStream>) {
    let resource_impl = (!members.resources.is_empty()).then(|| {
        let (idents, cfgs): (Vec<_>, Vec<_>) = members.resources.iter().cloned().unzip();
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
    let prompt_impl = (!members.prompts.is_empty()).then(|| {
        let (idents, cfgs): (Vec<_>, Vec<_>) = members.prompts.iter().cloned().unzip();
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
    (resource_impl, prompt_impl)
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
