//! Generate a resource's items: its struct and `From<Struct> for Resource`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::shared::{self, FnDef};

/// The checked URI and its placeholders.
pub(super) struct Uri {
    pub lit: syn::LitStr,
    pub placeholders: Vec<String>,
}

pub(super) fn expand(def: &FnDef<'_>, uri: &Uri) -> TokenStream {
    let struct_items = shared::struct_items(def);
    let from = from_impl(def, uri);
    let allows = shared::allows();
    let cfgs = &def.cfgs;
    quote! {
        #struct_items
        #(#cfgs)*
        #allows
        const _: () = {
            #from
        };
    }
}

fn from_impl(def: &FnDef<'_>, uri: &Uri) -> TokenStream {
    let krate = &def.krate;
    let res = quote!(#krate::resources);
    let m = quote!(#res::__macro);
    let target = def.struct_path();
    let name = &def.name;
    let lit = &uri.lit;
    let ok = &def.output.ty;

    // Each parameter read from its placeholder into a local of its own (parameter names
    // may be anything, including the names used here).
    let mut reads = Vec::new();
    let mut args = Vec::new();
    for (i, p) in def.params.iter().enumerate() {
        let local = format_ident!("__dsh_p{}", i);
        let ty = &p.ty;
        let pname = &p.name;
        let reader = shared::reader(krate, ty);
        reads.push(quote! {
            let #local: #ty = #m::placeholder(&__dsh_params, #pname, #reader)?;
        });
        args.push(quote!(#local));
    }
    let (capture, per_call) = shared::capture(def);
    let call = shared::call(def, &args);
    let mime = match &def.attr.mime_type {
        Some(m) => quote!(::core::option::Option::Some(#m)),
        None => quote_spanned!(ok.span()=> <#ok as #res::IntoContents>::MIME_TYPE),
    };
    let into = quote_spanned!(ok.span()=>
        <#ok as #res::IntoContents>::into_contents(__dsh_out, &__dsh_uri, #mime)
    );
    // `Send` is asked of the body's future: spanned at the fn name, as `#[tool]` does.
    let body = quote_spanned!(def.sig.ident.span()=> async move {
        let _ = &__dsh_params;
        #(#reads)*
        let __dsh_out = #call?;
        #into
    });
    let read = quote_spanned! {def.sig.ident.span()=>
        move |__dsh_uri: ::std::string::String, __dsh_params: #res::TemplateParams| {
            #per_call
            #body
        }
    };
    // The constructor's path at the fn name too: a body that is not `Send` is reported
    // at the path, as breaking the bound of the constructor.
    let at_fn = def.sig.ident.span();
    let construct = if uri.placeholders.is_empty() {
        let fixed = shared::respan(quote!(#res::Resource::fixed), at_fn);
        quote_spanned!(at_fn=> #fixed(#lit, #name, #read))
    } else {
        let template = shared::respan(quote!(#res::Resource::template), at_fn);
        let call = quote_spanned!(at_fn=> #template(#lit, #name, #read));
        quote!(#m::checked(#call))
    };

    let r = format_ident!("__dsh_r");
    let setters = setters(def, &mime, &r);
    quote! {
        #[automatically_derived]
        impl ::core::convert::From<#target> for #res::Resource {
            fn from(__dsh_value: #target) -> Self {
                #capture
                let mut #r = #construct;
                #(#setters)*
                #r
            }
        }
    }
}

/// The builder calls after the constructor: description, title, MIME type, size,
/// annotations and the parameters' completers.
fn setters(def: &FnDef<'_>, mime: &TokenStream, r: &syn::Ident) -> Vec<TokenStream> {
    let krate = &def.krate;
    let mut setters = Vec::new();
    let description = shared::description(def);
    setters.push(quote! {
        if let ::core::option::Option::Some(__dsh_d) = #description {
            #r = #r.with_description(__dsh_d);
        }
    });
    if let Some(t) = &def.attr.title {
        setters.push(quote!(#r = #r.with_title(::core::concat!(#t));));
    }
    setters.push(quote! {
        if let ::core::option::Option::Some(__dsh_m) = #mime {
            #r = #r.with_mime_type(__dsh_m);
        }
    });
    if let Some((size, _)) = def.attr.size {
        setters.push(quote!(#r = #r.with_size(#size);));
    }
    if let Some(annotations) = annotations(def) {
        setters.push(quote!(#r = #r.with_annotations(#annotations);));
    }
    for p in &def.params {
        setters.push(shared::completer(krate, p, r));
    }
    setters
}

/// `Annotations::new().with_..(..)` for the keys given, if any.
fn annotations(def: &FnDef<'_>) -> Option<TokenStream> {
    let a = &def.attr;
    if a.audience.is_none() && a.priority.is_none() && a.last_modified.is_none() {
        return None;
    }
    let krate = &def.krate;
    let content = quote!(#krate::content);
    let mut out = quote!(#content::Annotations::new());
    if let Some(roles) = &a.audience {
        let roles = roles.iter().map(|r| {
            let v = format_ident!("{}", r.variant());
            quote!(#content::Role::#v)
        });
        out.extend(quote!(.with_audience([#(#roles),*])));
    }
    if let Some(p) = a.priority {
        out.extend(quote!(.with_priority(#p)));
    }
    if let Some(t) = &a.last_modified {
        out.extend(quote!(.with_last_modified(#t)));
    }
    Some(out)
}

/// Stand-ins emitted next to errors: the struct and a `From` impl that never runs, so
/// code registering the resource keeps compiling and only the macro's errors show.
pub(super) fn fallback(def: &FnDef<'_>) -> TokenStream {
    let krate = &def.krate;
    let target = def.struct_path();
    let struct_items = shared::struct_items(def);
    let cfgs = &def.cfgs;
    quote! {
        #struct_items
        #(#cfgs)*
        const _: () = {
            #[automatically_derived]
            impl ::core::convert::From<#target> for #krate::resources::Resource {
                fn from(_: #target) -> Self {
                    ::core::unreachable!("`#[resource]` reported a compile error")
                }
            }
        };
    }
}
