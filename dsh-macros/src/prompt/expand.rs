//! Generate a prompt's items: its struct and `From<Struct> for Prompt`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::resource::shared::{self, FnDef};

pub(super) fn expand(def: &FnDef<'_>) -> TokenStream {
    let struct_items = shared::struct_items(def);
    let from = from_impl(def);
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

fn from_impl(def: &FnDef<'_>) -> TokenStream {
    let krate = &def.krate;
    let prompts = quote!(#krate::prompts);
    let m = quote!(#krate::resources::__macro);
    let target = def.struct_path();
    let name = &def.name;
    let ok = &def.output.ty;

    let mut reads = Vec::new();
    let mut args = Vec::new();
    for (i, p) in def.params.iter().enumerate() {
        let local = format_ident!("__dsh_p{}", i);
        let ty = &p.ty;
        let pname = &p.name;
        let reader = shared::reader(krate, p.read_ty());
        reads.push(match &p.optional {
            Some(_) => quote! {
                let #local: #ty = #m::optional_argument(&__dsh_args, #pname, #reader)?;
            },
            None => quote! {
                let #local: #ty = #m::argument(&__dsh_args, #name, #pname, #reader)?;
            },
        });
        args.push(quote!(#local));
    }
    let arguments = prompt_arguments(def);
    let (capture, per_call) = shared::capture(def);
    let call = shared::call(def, &args);
    let into = quote_spanned!(ok.span()=>
        <#ok as #prompts::IntoMessages>::into_messages(__dsh_out)
    );
    let body = quote_spanned!(def.sig.ident.span()=> async move {
        let _ = &__dsh_args;
        #(#reads)*
        let __dsh_out = #call?;
        ::core::result::Result::<_, #prompts::PromptError>::Ok(#into)
    });
    let get = quote_spanned! {def.sig.ident.span()=>
        move |__dsh_args: #prompts::PromptArgs| {
            #per_call
            #body
        }
    };

    // At the fn name, as the read closure: a body that is not `Send` is reported there.
    let new = shared::respan(quote!(#prompts::Prompt::new), def.sig.ident.span());
    let construct = quote_spanned!(def.sig.ident.span()=> #new(#name, #get));
    let p = format_ident!("__dsh_p");
    let setters = setters(def, &p);
    quote! {
        #[automatically_derived]
        impl ::core::convert::From<#target> for #prompts::Prompt {
            fn from(__dsh_value: #target) -> Self {
                #capture
                let mut #p = #construct;
                #(#setters)*
                #(#arguments)*
                #p
            }
        }
    }
}

/// Each parameter declared as a prompt argument (required, or optional for an `Option`),
/// with its description.
fn prompt_arguments(def: &FnDef<'_>) -> Vec<TokenStream> {
    let krate = &def.krate;
    let prompts = quote!(#krate::prompts);
    def.params
        .iter()
        .map(|p| {
            let pname = &p.name;
            let made = if p.optional.is_some() {
                quote!(#prompts::PromptArgument::optional(#pname))
            } else {
                quote!(#prompts::PromptArgument::required(#pname))
            };
            let description = shared::param_description(krate, p);
            quote! {
                let mut __dsh_a = #made;
                if let ::core::option::Option::Some(__dsh_d) = #description {
                    __dsh_a = __dsh_a.with_description(__dsh_d);
                }
                __dsh_p = __dsh_p.with_argument(__dsh_a);
            }
        })
        .collect()
}

/// The builder calls after the constructor: description, title and the arguments'
/// completers.
fn setters(def: &FnDef<'_>, p: &syn::Ident) -> Vec<TokenStream> {
    let krate = &def.krate;
    let mut setters = Vec::new();
    let description = shared::description(def);
    setters.push(quote! {
        if let ::core::option::Option::Some(__dsh_d) = #description {
            #p = #p.with_description(__dsh_d);
        }
    });
    if let Some(t) = &def.attr.title {
        setters.push(quote!(#p = #p.with_title(::core::concat!(#t));));
    }
    for param in &def.params {
        setters.push(shared::completer(krate, param, p));
    }
    setters
}

/// Stand-ins emitted next to errors (see `resource::expand::fallback`).
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
            impl ::core::convert::From<#target> for #krate::prompts::Prompt {
                fn from(_: #target) -> Self {
                    ::core::unreachable!("`#[prompt]` reported a compile error")
                }
            }
        };
    }
}
