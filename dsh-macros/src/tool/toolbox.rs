//! `#[toolbox]`: every `#[tool]` method of an inherent impl block becomes a tool sharing
//! the value through an `Arc`, and the type implements `Toolbox`.
//!
//! Naming: the tool struct of method `search` on `impl Server` is `ServerSearch` (and its
//! args struct `ServerSearchArgs`): the type name keeps tools of different toolboxes and
//! free tools in one module apart.

use darling::ast::NestedMeta;
use proc_macro2::TokenStream;
use quote::{ToTokens, quote};

use super::attr::{CRATE, ToolAttr};
use super::parse::{Site, replace_self_tokens};
use super::{expand, fallback, parse, strip_param_docs, validate};
use crate::ctxt::Ctxt;

/// `#[toolbox]`: parse the impl block and its keys, validate the block, then each
/// `#[tool]` method through `#[tool]`'s own phases, and expand the `Toolbox` impl.
pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Ctxt::new();
    let krate = toolbox_crate(attr, &mut errors);
    let item_impl: syn::ItemImpl = match syn::parse2(item.clone()) {
        Ok(i) => i,
        Err(_) => {
            let e = syn::Error::new(
                proc_macro2::Span::call_site(),
                "`#[toolbox]` goes on an inherent `impl` block whose methods carry `#[tool]`",
            )
            .into_compile_error();
            let attr_errors = errors.check().err();
            return quote!(#attr_errors #e #item);
        }
    };
    validate_impl(&item_impl, &mut errors);
    let Some(prefix) = type_prefix(&item_impl.self_ty, &mut errors) else {
        let errors = errors.check().err();
        return quote!(#errors #item);
    };
    let methods = tool_methods(&item_impl, krate.as_ref(), &prefix);
    if methods.idents.is_empty() {
        errors.push(syn::Error::new_spanned(
            &item_impl.self_ty,
            "`#[toolbox]` found no `#[tool]` method in this impl block: mark each tool method with `#[tool]`",
        ));
    }
    let krate = krate.map_or_else(|| quote!(::dsh_runtime), |p| p.to_token_stream());
    let errors = errors.check().err();
    let cleaned = cleaned_impl(&item_impl);
    let generated = &methods.generated;
    let allows = expand::allows();
    let toolbox = toolbox_impl(&item_impl.self_ty, &krate, &methods);
    quote! {
        #errors
        #cleaned
        #(#generated)*
        #allows
        #toolbox
    }
}

/// The rules on the impl block itself: inherent, not generic, no doc comment.
fn validate_impl(item_impl: &syn::ItemImpl, errors: &mut Ctxt) {
    if let Some((path, _)) = &item_impl.trait_ {
        errors.push(syn::Error::new_spanned(
            path,
            "`#[toolbox]` goes on an inherent impl block (`impl Server { .. }`), not on a trait impl",
        ));
    }
    if !item_impl.generics.params.is_empty() {
        errors.push(syn::Error::new_spanned(
            &item_impl.generics,
            "`#[toolbox]` does not support generic impl blocks: every tool publishes one fixed schema; \
             put the tools on an impl for a concrete type (e.g. `impl Server<Local>`)",
        ));
    }
    // A tool's description is the doc comment of its method; one on the impl block
    // would silently describe nothing the model sees.
    if let Some(doc) = item_impl.attrs.iter().find(|a| crate::doc::is_doc(a)) {
        errors.push(syn::Error::new_spanned(
            doc,
            "a doc comment on a `#[toolbox]` impl block is not any tool's description: the model reads each tool's description from the doc comment of its `#[tool]` method; move this text to the method(s) it describes, or make it a `//` comment",
        ));
    }
}

/// The name the tool structs start with: the last segment of the impl's type
/// (`ServerSearch` for `impl api::Server`), or an error when the type has no name.
fn type_prefix(self_ty: &syn::Type, errors: &mut Ctxt) -> Option<String> {
    let prefix = match self_ty {
        syn::Type::Path(p) if p.qself.is_none() => {
            p.path.segments.last().map(|s| s.ident.to_string())
        }
        _ => None,
    };
    if prefix.is_none() {
        errors.push(syn::Error::new_spanned(
            self_ty,
            "`#[toolbox]` needs a named type (`impl Server { .. }`)",
        ));
    }
    prefix.map(|p| p.trim_start_matches("r#").to_string())
}

/// The impl as emitted: `#[tool]` attributes and parameter docs removed.
fn cleaned_impl(item_impl: &syn::ItemImpl) -> syn::ItemImpl {
    let mut cleaned = item_impl.clone();
    for it in cleaned.items.iter_mut() {
        if let syn::ImplItem::Fn(f) = it
            && f.attrs.iter().any(is_tool_attr)
        {
            f.attrs.retain(|a| !is_tool_attr(a));
            strip_param_docs(&mut f.sig);
        }
    }
    cleaned
}

/// What the `#[tool]` methods of the block generate, and what the `Toolbox` impl names.
#[derive(Default)]
struct Methods {
    /// Each method's items (or its errors and stand-ins).
    generated: Vec<TokenStream>,
    /// Each method's tool struct.
    idents: Vec<syn::Ident>,
    /// Each method's `#[cfg]`s.
    cfgs: Vec<Vec<syn::Attribute>>,
    /// The paths the `#[tool]` attributes were written with, each once.
    paths: Vec<syn::Path>,
    /// The output types of the tools that expanded (and are not configured out).
    outputs: Vec<syn::Type>,
    /// Their `#[tool(args)]` types.
    args_types: Vec<syn::Type>,
}

/// Every `#[tool]` method through `#[tool]`'s phases: parse, validate, then expand (or
/// the fallback's stand-ins when there were errors).
fn tool_methods(item_impl: &syn::ItemImpl, krate: Option<&syn::Path>, prefix: &str) -> Methods {
    let self_ty = &*item_impl.self_ty;
    let self_tokens = self_ty.to_token_stream();
    let mut methods = Methods::default();
    for it in &item_impl.items {
        let syn::ImplItem::Fn(f) = it else { continue };
        let mut tool_attrs = f.attrs.iter().filter(|a| is_tool_attr(a));
        let Some(first) = tool_attrs.next() else {
            continue;
        };
        if !methods.paths.contains(first.path()) {
            methods.paths.push(first.path().clone());
        }
        let mut tool_errors = Ctxt::new();
        for extra in tool_attrs {
            tool_errors.push(syn::Error::new_spanned(
                extra,
                "duplicate `#[tool]` attribute: put every key in one `#[tool(...)]`",
            ));
        }
        let mut attr = ToolAttr::from_attribute(first, &mut tool_errors);
        if attr.krate.is_none() {
            attr.krate = krate.cloned();
        }
        // Paths in the keys may say `Self::..`; the generated impls are outside this block.
        replace_self_in_paths(&mut attr, &self_tokens);
        let site = Site::Toolbox { self_ty, prefix };
        let def = parse::tool_def(&f.sig, &f.vis, &f.attrs, attr, site, &mut tool_errors);
        validate::validate(&def, &mut tool_errors);
        methods.idents.push(def.tool_ident.clone());
        methods.cfgs.push(def.cfgs.clone());
        match tool_errors.check() {
            Ok(()) => {
                // A configured-out tool's output type may not exist: not named (a `where`
                // predicate cannot carry `#[cfg]`).
                if def.cfgs.is_empty() {
                    methods.outputs.push(def.output.ty.clone());
                    methods.args_types.extend(def.args_param().cloned());
                }
                methods.generated.push(expand::expand(&def));
            }
            Err(errs) => {
                let stand_in = fallback::fallback(&def);
                methods.generated.push(quote!(#errs #stand_in));
            }
        }
    }
    methods
}

/// `impl Toolbox for Server`: one `DynTool` per method.
fn toolbox_impl(self_ty: &syn::Type, krate: &TokenStream, methods: &Methods) -> TokenStream {
    let Methods {
        idents,
        cfgs,
        paths,
        outputs,
        args_types,
        ..
    } = methods;
    let count = idents.len();
    quote! {
        const _: () = {
            // The `#[tool]` attributes were consumed here, so rustc never resolves their
            // paths; naming each one keeps the user's `use dsh_runtime::tool` from being
            // reported as unused.
            #(
                #[allow(unused_imports)]
                use #paths as _;
            )*

            // Each tool's impl assumes its output type is `Serialize` and its
            // `#[tool(args)]` type `Deserialize` (see `#[tool]`); so does this one, so a
            // missing derive is reported once, at that type.
            #[automatically_derived]
            impl #krate::Toolbox for #self_ty
            where
                #(for<'__dsh> #outputs: #krate::__private::serde::Serialize,)*
                #(for<'__dsh> #args_types: #krate::__private::serde::de::DeserializeOwned,)*
            {
                fn tools(self: ::std::sync::Arc<Self>) -> ::std::vec::Vec<#krate::DynTool> {
                    let mut __dsh_tools = ::std::vec::Vec::with_capacity(#count);
                    #(
                        #(#cfgs)*
                        __dsh_tools.push(#krate::DynTool::new(#idents(::std::sync::Arc::clone(&self))));
                    )*
                    __dsh_tools
                }
            }
        };
    }
}

/// `#[tool]`, `#[dsh_runtime::tool]`, ...
fn is_tool_attr(a: &syn::Attribute) -> bool {
    a.path().segments.last().is_some_and(|s| s.ident == "tool")
}

/// `#[toolbox]` or `#[toolbox(crate = "..")]`.
fn toolbox_crate(attr: TokenStream, errors: &mut Ctxt) -> Option<syn::Path> {
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
        let parsed = match item {
            NestedMeta::Meta(m @ syn::Meta::NameValue(nv)) if nv.path.is_ident(CRATE) => {
                ToolAttr::parse(m.to_token_stream(), errors).krate
            }
            other => {
                errors.push(syn::Error::new_spanned(
                    other,
                    "`#[toolbox]` takes no keys but `crate = \"...\"`; tool keys go on each method's `#[tool(...)]`",
                ));
                None
            }
        };
        if parsed.is_some() {
            krate = parsed;
        }
    }
    krate
}

fn replace_self_in_paths(attr: &mut ToolAttr, self_ty: &TokenStream) {
    let fix = |p: &mut syn::Path| {
        if let Ok(np) = syn::parse2(replace_self_tokens(p.to_token_stream(), self_ty)) {
            *p = np;
        }
    };
    for p in [
        &mut attr.render,
        &mut attr.present_call,
        &mut attr.present_result,
        &mut attr.presentation_meta,
        &mut attr.finalize_content,
    ]
    .into_iter()
    .flatten()
    {
        fix(p);
    }
    if let Some(super::attr::Concurrency::Predicate(p)) = &mut attr.concurrency_safe {
        fix(p);
    }
}
