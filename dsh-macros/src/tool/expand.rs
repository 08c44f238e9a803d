//! Generate a tool's items from the model.
//!
//! Checks on user types are emitted at the user's tokens (`quote_spanned!`) through public
//! paths (`<T as ToolSchema>::..`, `Tool::Output`, `json::from_value`), so a compile error
//! points at the offending type and quotes the public name; `__private` helpers only ever
//! see types this expansion generated.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::ext::IdentExt as _;
use syn::spanned::Spanned;

use super::attr::Concurrency;
use super::model::{Input, Receiver, ReceiverKind, ToolDef};
use super::parse::respan;
use crate::types::type_text;

/// Lints generated code may trip over although the user's code is fine.
pub(super) fn allows() -> TokenStream {
    quote! {
        #[allow(
            unused_qualifications,
            clippy::used_underscore_binding,
            clippy::unit_arg,
            clippy::redundant_closure_call,
            clippy::needless_question_mark
        )]
    }
}

/// The public items of one tool: the tool struct, the args struct, and their impls.
pub(super) fn expand(def: &ToolDef<'_>) -> TokenStream {
    let tool_struct = tool_struct(def);
    let args_struct = args_struct(def);
    let schema_impl = schema_impl(def);
    let deserialize_impl = args_deserialize(def);
    let tool_impl = tool_impl(def);
    let portable = portable_checks(def);
    let allows = allows();
    let cfgs = &def.cfgs;
    quote! {
        #tool_struct
        #args_struct
        #(#cfgs)*
        #allows
        const _: () = {
            #schema_impl
            #deserialize_impl
            #tool_impl
            #portable
        };
    }
}

/// `#[tool(portable = "..")]`: per parameter and target, a constant that evaluates the
/// parameter type's portability facts and panics, at the parameter's type, with the
/// message saying what the target's export would lose and what to change.
fn portable_checks(def: &ToolDef<'_>) -> TokenStream {
    if def.attr.portable.is_empty() {
        return TokenStream::new();
    }
    let krate = &def.krate;
    let derive = quote!(#krate::__private::derive);
    let mut params: Vec<(String, &syn::Type, Span, TokenStream)> = Vec::new();
    for input in &def.inputs {
        match input {
            Input::Field(f) => {
                let ty = &f.ty;
                let base =
                    quote_spanned!(ty.span()=> <#ty as #krate::ToolParam>::PROPERTY_PORTABILITY);
                let mut facts = crate::derive::expand::facts::attrs(&derive, base, &f.schema);
                if !gemini_name(&f.name) {
                    facts = quote!(#facts.with(#derive::feature::PROPERTY_NAME));
                }
                params.push((f.name.clone(), ty, f.ident.span(), facts));
            }
            Input::Args { ty, name } => {
                // The type is the parameter root: its own openness is the root's.
                let facts =
                    quote_spanned!(ty.span()=> <#ty as #krate::ToolSchema>::PORTABILITY.as_root());
                let name = name.clone().unwrap_or_else(|| "args".to_string());
                params.push((name, ty, ty.span(), facts));
            }
            Input::Context { .. } => {}
        }
    }
    let mut checks = Vec::new();
    for (name, ty, span, facts) in &params {
        let ty_text = type_text(ty);
        for (target, _) in &def.attr.portable {
            let t = format_ident!("{}", target.runtime_const());
            checks.push(quote_spanned! {*span=>
                const _: () = {
                    const FACTS: #derive::Facts = #facts;
                    if let ::core::option::Option::Some(m) =
                        #krate::schema::portable::check(&FACTS, #krate::schema::portable::#t, #name, #ty_text)
                    {
                        ::core::panic!("{}", m.as_str());
                    }
                };
            });
        }
    }
    quote!(#(#checks)*)
}

/// Whether a parameter name is one Gemini's OpenAPI form accepts (the runtime's rule).
fn gemini_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && name.len() <= 64
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// `pub struct ReadFile;`, or `pub struct ServerSearch(pub Arc<Server>);` in a toolbox.
///
/// A free fn's unit struct is defined in a module of its own and glob-imported where the
/// fn is (`pub use __dsh_tool_read_file::*;`); every generated impl names it through that
/// module. The name can be taken already (`fn text_stats` beside a `struct TextStats`):
/// an explicit item then shadows the glob import, so no generated impl lands on the
/// user's type, and the assertion `<TextStats as ToolStruct>` (implemented for the
/// generated struct only) fails at the fn name with one message saying to use
/// `struct_name`. A plain `pub struct` would give rustc's "defined multiple times"
/// followed by an error for every impl that resolved to the user's type; a named
/// re-export would give a suggestion to rename the import at the fn name. The module
/// needs no imports (a unit struct names no type), so this works inside fn bodies too.
/// A toolbox struct holds the impl's type and its name starts with that type's, so it is
/// defined directly.
pub(super) fn tool_struct(def: &ToolDef<'_>) -> TokenStream {
    let vis = &def.vis;
    let tool = &def.tool_ident;
    let cfgs = &def.cfgs;
    let krate = &def.krate;
    let fn_name = def.sig.ident.to_string();
    match &def.receiver {
        Receiver::None => {
            let doc = format!(
                "The `{}` tool: the fn `{fn_name}` as a `{}::Tool` (generated by `#[tool]`).",
                def.name,
                krate_doc_path(def)
            );
            let module = def.tool_module.as_ref().unwrap_or(tool);
            let inner_vis = vis_in_child(vis);
            let check = quote_spanned!(tool.span()=>
                <#tool as #krate::ToolStruct>::OK
            );
            quote! {
                #(#cfgs)*
                mod #module {
                    #[doc = #doc]
                    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug, ::core::default::Default)]
                    #inner_vis struct #tool;

                    #[diagnostic::do_not_recommend]
                    impl #krate::ToolStruct for #tool {}
                }
                #(#cfgs)*
                #[allow(unused_imports)]
                #vis use #module::*;
                #(#cfgs)*
                const _: () = #check;
            }
        }
        Receiver::Method { self_ty, .. } => {
            let doc = format!(
                "The `{}` tool: the method `{fn_name}` of a shared value as a `{}::Tool` (generated by `#[toolbox]`).",
                def.name,
                krate_doc_path(def)
            );
            quote! {
                #(#cfgs)*
                #[doc = #doc]
                #[allow(private_interfaces)]
                #vis struct #tool(pub ::std::sync::Arc<#self_ty>);

                #(#cfgs)*
                #[automatically_derived]
                impl ::core::clone::Clone for #tool {
                    fn clone(&self) -> Self {
                        #tool(::std::sync::Arc::clone(&self.0))
                    }
                }
            }
        }
    }
}

/// The visibility that, written one module further down, means the same as `vis`.
fn vis_in_child(vis: &syn::Visibility) -> TokenStream {
    match vis {
        syn::Visibility::Public(_) => quote!(pub),
        syn::Visibility::Inherited => quote!(pub(super)),
        syn::Visibility::Restricted(r) => {
            let path = &r.path;
            let first = path.segments.first().map(|s| s.ident.to_string());
            match first.as_deref() {
                Some("crate") if path.segments.len() == 1 => quote!(pub(crate)),
                Some("self") => {
                    let rest = path.segments.iter().skip(1);
                    quote!(pub(in super #(::#rest)*))
                }
                Some("super") => quote!(pub(in super::#path)),
                _ => quote!(pub(in #path)),
            }
        }
    }
}

fn krate_doc_path(def: &ToolDef<'_>) -> String {
    def.krate.to_string().replace(' ', "")
}

/// The generated args struct (none with `#[tool(args)]`).
fn args_struct(def: &ToolDef<'_>) -> TokenStream {
    if def.args_param().is_some() {
        return TokenStream::new();
    }
    let krate = &def.krate;
    let vis = &def.vis;
    let args = &def.args_ident;
    let serde_crate = format!("{}::__private::serde", krate_doc_path(def));
    let doc = format!(
        "The arguments of the `{}` tool, one field per parameter of `{}`.",
        def.name, def.sig.ident
    );
    let fields = def.fields().map(|f| {
        let ident = &f.ident;
        let ty = &f.ty;
        let docs = match &f.entry {
            Some(text) => quote!(#[doc = #text]),
            // An undocumented parameter still gets a doc line, so a crate with
            // `#![deny(missing_docs)]` accepts the generated struct.
            None if f.docs.is_empty() => {
                let text = format!("The `{}` argument.", f.ident.unraw());
                quote!(#[doc = #text])
            }
            None => {
                let d = &f.docs;
                quote!(#(#d)*)
            }
        };
        quote! {
            #docs
            pub #ident: #ty,
        }
    });
    // `Deserialize` is implemented by hand next to the `Tool` impl (`args_deserialize`),
    // through the same reader as `Tool::args_from_json`: serde's derive would require
    // `Deserialize` of every parameter type inside its generated code, so a type without
    // it was reported there (in serde's internals) once per use.
    //
    // `Serialize` (for typed calls, which send arguments as JSON) is implemented only when
    // every parameter type is `Serialize`: a parameter type that only derives
    // `Deserialize` is fine until something serializes the arguments. The `for<'_>`
    // makes each bound non-trivial, so rustc checks it where the impl is used rather
    // than rejecting the impl.
    let serialize_bound = def
        .fields()
        .map(|f| {
            let ty = &f.ty;
            format!("for<'__dsh> {}: {serde_crate}::Serialize", quote!(#ty))
        })
        .collect::<Vec<_>>()
        .join(", ");
    let cfgs = &def.cfgs;
    quote! {
        #(#cfgs)*
        #[doc = #doc]
        #[derive(#krate::__private::serde::Serialize)]
        #[serde(crate = #serde_crate, bound(serialize = #serialize_bound))]
        #vis struct #args {
            #(#fields)*
        }
    }
}

/// `impl Deserialize for ReadFileArgs`: the arguments object read member by member, as
/// `Tool::args_from_json` reads it (see `args_struct` for why not serde's derive).
fn args_deserialize(def: &ToolDef<'_>) -> TokenStream {
    if def.args_param().is_some() {
        return TokenStream::new();
    }
    let krate = &def.krate;
    let args = &def.args_ident;
    let serde = quote!(#krate::__private::serde);
    let reader = members_reader(def);
    quote! {
        #[automatically_derived]
        impl #args {
            #reader
        }

        #[automatically_derived]
        impl<'de> #serde::Deserialize<'de> for #args {
            fn deserialize<__D: #serde::Deserializer<'de>>(
                __dsh_d: __D,
            ) -> ::core::result::Result<Self, __D::Error> {
                let __dsh_v = <#krate::json::Value as #serde::Deserialize<'de>>::deserialize(__dsh_d)?;
                #args::__dsh_read(&__dsh_v).map_err(<__D::Error as #serde::de::Error>::custom)
            }
        }
    }
}

/// `ReadFileArgs::__dsh_read`: the arguments object read member by member, shared by the
/// `Deserialize` impl and `Tool::args_from_json` (an inherent fn, so that reading the
/// arguments never depends on the `Tool` impl, which does not apply when the output type
/// lacks `Serialize`; see `tool_impl`).
///
/// One pass over the members matches each key against the parameter names (as serde's
/// derived visitor does; an object's keys are unique, so each slot is set at most once),
/// then each parameter is read from its slot in declaration order, so the first error
/// is that of the first parameter in error, as with a lookup per name.
fn members_reader(def: &ToolDef<'_>) -> TokenStream {
    let krate = &def.krate;
    let args = &def.args_ident;
    let deny = def.attr.deny_unknown_args.is_present();
    let names: Vec<&String> = def.fields().map(|f| &f.name).collect();
    let slots: Vec<syn::Ident> = (0..names.len())
        .map(|i| format_ident!("__dsh_s{i}"))
        .collect();
    let unknown = if deny {
        quote!(return ::core::result::Result::Err(
            #krate::__private::unknown_arg(__dsh_k, &[#(#names),*])
        ))
    } else {
        TokenStream::new()
    };
    let members = quote!(#krate::__private::args_members(__dsh_v)?);
    let pass = if names.is_empty() && !deny {
        quote!(let _ = #members;)
    } else {
        quote! {
            let __dsh_m = #members;
            #(let mut #slots: ::core::option::Option<&#krate::json::Value> = ::core::option::Option::None;)*
            for (__dsh_k, __dsh_x) in __dsh_m.entries() {
                let __dsh_k: &str = __dsh_k;
                match __dsh_k {
                    #(#names => #slots = ::core::option::Option::Some(__dsh_x),)*
                    _ => { #unknown }
                }
            }
        }
    };
    let members = def.fields().zip(&slots).map(|(f, slot)| {
        let ident = &f.ident;
        let name = &f.name;
        let ty = &f.ty;
        let read = quote_spanned!(ty.span()=> <#ty as #krate::ToolParam>::read(#slot, #name)?);
        quote!(#ident: #read,)
    });
    quote! {
        fn __dsh_read(
            __dsh_v: &#krate::json::Value,
        ) -> ::core::result::Result<Self, #krate::json::DeError> {
            #pass
            ::core::result::Result::Ok(#args { #(#members)* })
        }
    }
}

/// `impl ToolSchema for ReadFileArgs`: the parameter root (open, or closed with
/// `deny_unknown_args`), one property per parameter.
fn schema_impl(def: &ToolDef<'_>) -> TokenStream {
    if def.args_param().is_some() {
        return TokenStream::new();
    }
    let krate = &def.krate;
    let args = &def.args_ident;
    let deny = def.attr.deny_unknown_args.is_present();
    // `#[schema(..)]` on a parameter is applied as on a struct field, by the derive's own
    // code: the same `Edit`, and the same marker-trait assertions at the type.
    let derive = quote!(#krate::__private::derive);
    let mut asserts = Vec::new();
    let mut default_checks = Vec::new();
    let props: Vec<TokenStream> = def
        .fields()
        .map(|f| {
            let name = &f.name;
            let ty = &f.ty;
            let doc = match &f.entry {
                // A `description` key replaces the doc, as on a field.
                _ if f.schema.description.is_some() => quote!(""),
                Some(text) => quote!(#text),
                None => crate::doc::doc_concat(&crate::doc::doc_exprs(&f.docs)),
            };
            asserts.extend(crate::derive::expand::constraint_asserts(
                &derive, ty, &f.schema,
            ));
            default_checks.extend(crate::derive::default::fit_check(&derive, ty, &f.schema));
            // Every use of a parameter type goes through `ToolParam` at the type, so a type
            // lacking `Deserialize` or `ToolSchema` gives one error there (identical errors
            // at one span are reported once).
            let optional = quote_spanned!(ty.span()=> <#ty as #krate::ToolParam>::OPTIONAL);
            let schema = quote_spanned!(ty.span()=> <#ty as #krate::ToolParam>::property_schema());
            let schema = match crate::derive::expand::edit(&derive, &[], &f.schema) {
                Some(edit) => quote!(#edit.apply(#schema)),
                None => schema,
            };
            quote!(#krate::__private::param(#name, #doc, #optional, #schema))
        })
        .collect();
    quote! {
        #(#default_checks)*
        #[automatically_derived]
        impl #krate::ToolSchema for #args {
            fn build_schema() -> #krate::schema::Schema {
                #(#asserts)*
                #krate::__private::parameters(::std::vec![#(#props),*], #deny)
            }
        }
    }
}

fn tool_impl(def: &ToolDef<'_>) -> TokenStream {
    let krate = &def.krate;
    let tool = def.tool_path();
    let args_ty = def.args_type();
    let out = &def.output.ty;
    let out_span = def.output.span;
    let definition = definition_fn(def);
    let call = call_fn(def);
    let reader = args_reader(def);
    let hooks = hooks(def);
    let output_assoc = quote_spanned!(out_span=> type Output = #out;);
    let args_assoc = match def.args_param() {
        Some(t) => quote_spanned!(t.span()=> type Args = #t;),
        None => quote!(type Args = #args_ty;),
    };
    // The output type must be `Serialize` (`Tool::Output`'s bound). That is asserted at
    // the output type through `SerializeOutput`, whose message says what to derive; the
    // impl itself assumes it in a `where` clause, which the `for<'_>` makes non-trivial,
    // so a type without it gets only the assertion's error (the impl then does not
    // apply) instead of serde's generic one pointing into the runtime's source.
    let output_check = quote_spanned!(out_span=>
        const _: () = <#out as #krate::type_checks::SerializeOutput>::OK;
    );
    // Likewise the arguments type of `#[tool(args)]` must be `Deserialize` (`Tool::Args`'s
    // bound): asserted at that type through `ToolParam` (as a listed parameter's type
    // is), and assumed by the impls.
    let (args_check, args_bound) = match def.args_param() {
        Some(t) => (
            quote_spanned!(t.span()=>
                const _: bool = <#t as #krate::ToolParam>::OPTIONAL;
            ),
            quote!(for<'__dsh> #t: #krate::__private::serde::de::DeserializeOwned,),
        ),
        None => (TokenStream::new(), TokenStream::new()),
    };
    let name = &def.name;
    quote! {
        #output_check
        #args_check
        #[automatically_derived]
        impl #krate::NamedTool for #tool
        where
            for<'__dsh> #out: #krate::__private::serde::Serialize,
            #args_bound
        {
            const NAME: &'static str = #name;
        }
        #[automatically_derived]
        impl #krate::Tool for #tool
        where
            for<'__dsh> #out: #krate::__private::serde::Serialize,
            #args_bound
        {
            #args_assoc
            #output_assoc
            #definition
            #call
            #reader
            #hooks
        }
    }
}

/// For a generated args struct: read each member directly instead of through the
/// struct's `Deserialize` (whose visitor would be compiled for every tool).
fn args_reader(def: &ToolDef<'_>) -> TokenStream {
    if def.args_param().is_some() {
        return TokenStream::new();
    }
    let krate = &def.krate;
    let args = &def.args_ident;
    quote! {
        fn args_from_json(
            __dsh_v: &#krate::json::Value,
        ) -> ::core::result::Result<<Self as #krate::Tool>::Args, #krate::json::DeError> {
            #args::__dsh_read(__dsh_v)
        }
    }
}

fn definition_fn(def: &ToolDef<'_>) -> TokenStream {
    let krate = &def.krate;
    let name = &def.name;
    let description = match &def.attr.description {
        Some(e) => quote!(#krate::__private::doc(::core::concat!(#e))),
        None => {
            let c = crate::doc::doc_concat(&def.description);
            quote!(#krate::__private::doc(#c))
        }
    };
    let title = match &def.attr.title {
        Some(e) => quote!(::core::option::Option::Some(::core::concat!(#e))),
        None => quote!(::core::option::Option::None),
    };
    let timeout = def.attr.timeout_ms.as_ref().map_or(0, |t| t.ms);
    let a = &def.attr;
    let [ro, de, id, ow] =
        [a.read_only, a.destructive, a.idempotent, a.open_world].map(|f| f.is_present());
    let defer = a.defer_loading.is_present();
    let examples = def.examples.iter().chain(&a.examples).map(|e| {
        let text = syn::LitStr::new(&e.text, e.span);
        quote!(#text)
    });
    let parameters = match def.args_param() {
        Some(t) => {
            // The arguments must be a JSON object: checked at compile time through the
            // `SchemaObject` marker (derived for structs with named fields, implemented for
            // string-keyed maps), spanned on the parameter's type; `args_object` re-checks
            // the built schema for hand-written marker impls.
            let schema = quote_spanned!(t.span()=> {
                let () = <#t as #krate::type_checks::SchemaObject>::OK;
                <#t as #krate::ToolSchema>::schema()
            });
            let deny = def.attr.deny_unknown_args.is_present();
            quote!(#krate::__private::args_object::<#t>(#name, #schema, #deny))
        }
        None => {
            let args = &def.args_ident;
            quote!(<#args as #krate::ToolSchema>::schema())
        }
    };
    let out = &def.output.ty;
    let output =
        quote_spanned!(def.output.span=> <#out as #krate::type_checks::HasToolSchema>::schema());
    let task = task_setters(def, krate);
    quote! {
        fn definition(&self) -> &#krate::ToolDefinition {
            static DEFINITION: ::std::sync::OnceLock<#krate::ToolDefinition> = ::std::sync::OnceLock::new();
            // A non-capturing closure coerces to `fn() -> ToolDefinition`, so the
            // once-cell machinery is instantiated once for all tools, not per tool.
            #krate::__private::definition_once(&DEFINITION, || {
                #krate::__private::definition(
                    #krate::__private::ToolMeta {
                        name: #name,
                        description: #description,
                        title: #title,
                        timeout_ms: #timeout,
                        annotations: [#ro, #de, #id, #ow],
                        defer_loading: #defer,
                        input_examples: &[#(#examples),*],
                    },
                    #parameters,
                    #output,
                )
                #task
            })
        }
    }
}

/// `.with_task_support(..)` / `.with_timeout_restarts_on_progress(true)` for the keys
/// given (nothing for a tool that sets neither).
fn task_setters(def: &ToolDef<'_>, krate: &TokenStream) -> TokenStream {
    let mut out = TokenStream::new();
    if let Some(support) = def.attr.task {
        let variant = syn::Ident::new(support.variant(), proc_macro2::Span::call_site());
        out.extend(quote!(.with_task_support(#krate::TaskSupport::#variant)));
    }
    if def.attr.timeout_restarts_on_progress.is_present() {
        out.extend(quote!(.with_timeout_restarts_on_progress(true)));
    }
    if def.attr.task_after_input.is_present() {
        out.extend(quote!(.with_task_after_input(true)));
    }
    if let Some(reason) = &def.attr.ask {
        out.extend(quote!(.with_ask(::core::concat!(#reason))));
    }
    out
}

fn call_fn(def: &ToolDef<'_>) -> TokenStream {
    let krate = &def.krate;

    // Bind each field to a fresh local: parameter names may be anything, including the
    // names this fn uses.
    let mut bindings = Vec::new();
    let mut call_args = Vec::new();
    let mut context = TokenStream::new();
    let mut unused_cx = quote!(::core::mem::drop(__dsh_cx););
    let mut field_index = 0usize;
    for input in &def.inputs {
        match input {
            Input::Field(f) => {
                let ident = &f.ident;
                let local = format_ident!("__dsh_p{}", field_index);
                field_index += 1;
                bindings.push(quote!(#ident: #local));
                call_args.push(quote!(#local));
            }
            Input::Args { .. } => call_args.push(quote!(__dsh_args)),
            Input::Context { ty, by_ref, .. } => {
                // The parameter was recognised by its type's name; this binding, at the
                // user's type, is where an unrelated type named `ToolContext` fails
                // ("expected `ToolContext`, found `dsh_runtime::ToolContext`").
                context = quote_spanned!(ty.span()=> let __dsh_cx: #ty = __dsh_cx;);
                unused_cx = TokenStream::new();
                call_args.push(if *by_ref {
                    quote!(&__dsh_cx)
                } else {
                    quote!(__dsh_cx)
                });
            }
        }
    }
    let destructure = match def.args_param() {
        Some(_) => TokenStream::new(),
        None => {
            let args = &def.args_ident;
            quote!(let #args { #(#bindings),* } = __dsh_args;)
        }
    };
    let (this, callee) = callee(def, &call_args);
    let result = call_result(def, &callee);
    // `Send` is required of the body's future; spanning the bound and the async block at
    // the fn name makes a non-`Send` body point there rather than at the attribute.
    let ret = quote_spanned!(def.sig.ident.span()=> impl ::core::future::Future<
        Output = ::core::result::Result<<Self as #krate::Tool>::Output, #krate::ToolError>,
    > + ::core::marker::Send);
    let body = quote_spanned!(def.sig.ident.span()=> async move {
        #context
        #result
    });
    quote! {
        fn call(
            &self,
            __dsh_args: <Self as #krate::Tool>::Args,
            __dsh_cx: #krate::ToolContext,
        ) -> #ret {
            #destructure
            #this
            #unused_cx
            #body
        }
    }
}

/// The prelude that clones the toolbox value (for a `&self` or `Arc<Self>` method) and
/// the call of the user's fn.
fn callee(def: &ToolDef<'_>, call_args: &[TokenStream]) -> (TokenStream, TokenStream) {
    let fn_name = &def.sig.ident;
    match &def.receiver {
        Receiver::None => (TokenStream::new(), quote!(#fn_name(#(#call_args),*))),
        Receiver::Method { self_ty, kind } => match kind {
            ReceiverKind::Ref => (
                quote!(let __dsh_this = ::std::sync::Arc::clone(&self.0);),
                quote!(<#self_ty>::#fn_name(&*__dsh_this, #(#call_args),*)),
            ),
            ReceiverKind::Arc => (
                quote!(let __dsh_this = ::std::sync::Arc::clone(&self.0);),
                quote!(<#self_ty>::#fn_name(__dsh_this, #(#call_args),*)),
            ),
            ReceiverKind::Static => (
                TokenStream::new(),
                quote!(<#self_ty>::#fn_name(#(#call_args),*)),
            ),
        },
    }
}

/// The awaited call as the body's `Result`: a fallible fn's error converted into a
/// `ToolError`, any other output wrapped in `Ok`.
fn call_result(def: &ToolDef<'_>, callee: &TokenStream) -> TokenStream {
    let krate = &def.krate;
    if def.output.fallible {
        // The error converts with `Into<ToolError>`, through `IntoToolError` (whose
        // message says how to convert): checked at `E` when the return type names it, else
        // (`io::Result<T>`-style aliases) at the return type.
        let into = match &def.output.err_ty {
            Some(e) => quote_spanned!(e.span()=>
                |__dsh_e: #e| -> #krate::ToolError { <#e as #krate::IntoToolError>::into_tool_error(__dsh_e) }
            ),
            None => quote_spanned!(def.output_type_span()=>
                |__dsh_e| -> #krate::ToolError { #krate::IntoToolError::into_tool_error(__dsh_e) }
            ),
        };
        quote!(::core::result::Result::map_err(#callee.await, #into))
    } else {
        quote!(::core::result::Result::Ok(#callee.await))
    }
}

impl ToolDef<'_> {
    /// Where to report the error conversion of a `Result` alias (`anyhow::Result<T>`):
    /// its `Result`, the one token that says there is an error type.
    fn output_type_span(&self) -> Span {
        match &self.sig.output {
            syn::ReturnType::Type(_, t) => match &**t {
                syn::Type::Path(p) => p
                    .path
                    .segments
                    .last()
                    .map_or_else(|| t.span(), |s| s.ident.span()),
                _ => t.span(),
            },
            syn::ReturnType::Default => self.sig.ident.span(),
        }
    }
}

/// The `Tool` hooks the keys ask for, and `OVERRIDDEN_HOOKS` naming them.
fn hooks(def: &ToolDef<'_>) -> TokenStream {
    let krate = &def.krate;
    let mut out_tokens = TokenStream::new();
    // `Tool::OVERRIDDEN_HOOKS`: the runtime's named bit of every hook generated below.
    let a = &def.attr;
    let bits = [
        (a.render.is_some(), "RENDER"),
        (def.concurrency().is_some(), "IS_CONCURRENCY_SAFE"),
        (a.present_call.is_some(), "PRESENT_CALL"),
        (a.present_result.is_some(), "PRESENT_RESULT"),
        (a.presentation_meta.is_some(), "PRESENTATION_META"),
        (a.finalize_content.is_some(), "FINALIZE_CONTENT"),
    ]
    .into_iter()
    .filter(|(on, _)| *on)
    .map(|(_, bit)| {
        let bit = format_ident!("{bit}");
        quote!(| #krate::__private::tool_hooks::#bit)
    });
    out_tokens.extend(quote!(const OVERRIDDEN_HOOKS: u8 = 0 #(#bits)*;));
    out_tokens.extend(concurrency_hook(def));
    out_tokens.extend(presenter_hooks(def));
    out_tokens.extend(projector_hooks(def));
    out_tokens
}

/// `is_concurrency_safe`: always (for valid arguments), or the predicate's answer.
fn concurrency_hook(def: &ToolDef<'_>) -> TokenStream {
    let krate = &def.krate;
    let value = quote!(#krate::json::Value);
    let params = quote!(&<Self as #krate::Tool>::definition(self).parameters);
    let args_ty = quote!(<Self as #krate::Tool>::Args);
    let mut out_tokens = TokenStream::new();
    match def.concurrency() {
        None => {}
        // Soft-validated like the predicate form: arguments that cannot run are not
        // worth running in parallel.
        Some(Concurrency::Always) => out_tokens.extend(quote! {
            fn is_concurrency_safe(&self, __dsh_args: &#value) -> bool {
                #krate::validate::is_valid(#params, __dsh_args)
            }
        }),
        Some(Concurrency::Predicate(p)) => {
            let call = quote_spanned!(p.span()=> #p(&__dsh_a));
            out_tokens.extend(quote! {
                fn is_concurrency_safe(&self, __dsh_args: &#value) -> bool {
                    match #krate::__private::soft_args::<#args_ty>(#params, __dsh_args) {
                        ::core::option::Option::Some(__dsh_a) => {
                            #krate::__private::presenter(|| -> bool { #call }).unwrap_or(false)
                        }
                        ::core::option::Option::None => false,
                    }
                }
            });
        }
    }

    out_tokens
}

/// `present_call`, `present_result` and `finalize_content`: the presenter called with the
/// soft-validated arguments; a panic or unreadable arguments mean no view.
fn presenter_hooks(def: &ToolDef<'_>) -> TokenStream {
    let krate = &def.krate;
    let value = quote!(#krate::json::Value);
    let params = quote!(&<Self as #krate::Tool>::definition(self).parameters);
    let args_ty = quote!(<Self as #krate::Tool>::Args);
    let mut out_tokens = TokenStream::new();
    let soft = quote! {
        let __dsh_a: #args_ty = #krate::__private::soft_args(#params, __dsh_args)?;
    };

    if let Some(p) = &def.attr.present_call {
        let call = quote_spanned!(p.span()=> ::core::convert::Into::into(#p(&__dsh_a)));
        out_tokens.extend(quote! {
            fn present_call(&self, __dsh_args: &#value) -> ::core::option::Option<#krate::cards::CallView> {
                #soft
                #krate::__private::presenter(|| -> ::core::option::Option<#krate::cards::CallView> { #call }).flatten()
            }
        });
    }

    if let Some(p) = &def.attr.present_result {
        let call =
            quote_spanned!(p.span()=> ::core::convert::Into::into(#p(&__dsh_a, __dsh_result)));
        out_tokens.extend(quote! {
            fn present_result(
                &self,
                __dsh_args: &#value,
                __dsh_result: &#krate::cards::ResultSummary,
            ) -> ::core::option::Option<#krate::cards::ResultView> {
                #soft
                #krate::__private::presenter(|| -> ::core::option::Option<#krate::cards::ResultView> { #call }).flatten()
            }
        });
    }

    if let Some(p) = &def.attr.finalize_content {
        let call =
            quote_spanned!(p.span()=> ::core::convert::Into::into(#p(&__dsh_a, __dsh_content)));
        out_tokens.extend(quote! {
            fn finalize_content(
                &self,
                __dsh_args: &#value,
                __dsh_content: &[#krate::content::ContentBlock],
            ) -> ::core::option::Option<::std::vec::Vec<#krate::content::ContentBlock>> {
                #soft
                #krate::__private::presenter(|| -> ::core::option::Option<::std::vec::Vec<#krate::content::ContentBlock>> { #call }).flatten()
            }
        });
    }

    out_tokens
}

/// `render` and `presentation_meta`: the projector called with the arguments and the
/// typed output.
fn projector_hooks(def: &ToolDef<'_>) -> TokenStream {
    let krate = &def.krate;
    let value = quote!(#krate::json::Value);
    let params = quote!(&<Self as #krate::Tool>::definition(self).parameters);
    let args_ty = quote!(<Self as #krate::Tool>::Args);
    let mut out_tokens = TokenStream::new();
    let out = &def.output.ty;
    // The output type deserializes only for `render` and `presentation_meta`, through
    // `DeserializeOutput` (whose message says what to derive): a missing `Deserialize` is
    // reported at the key that asks for it.
    let out_at = |p: &syn::Path| respan(out.to_token_stream(), p.span());

    if let Some(p) = &def.attr.render {
        let out_here = out_at(p);
        let typed = quote_spanned!(p.span()=> <#out_here as #krate::type_checks::DeserializeOutput>::from_output(__dsh_value));
        let call = quote_spanned!(p.span()=> #p(&__dsh_a, &__dsh_v));
        out_tokens.extend(quote! {
            fn render(
                &self,
                __dsh_args: &#value,
                __dsh_value: &#value,
            ) -> ::core::result::Result<::std::vec::Vec<#krate::content::ContentBlock>, #krate::ToolError> {
                let __dsh_a: #args_ty = #krate::__private::projector_args("render", #params, __dsh_args)?;
                let __dsh_v: #out = #krate::__private::projector_output("render", #typed)?;
                #krate::__private::projector("render", || -> ::std::vec::Vec<#krate::content::ContentBlock> { #call })
            }
        });
    }

    if let Some(p) = &def.attr.presentation_meta {
        let out_here = out_at(p);
        let typed = quote_spanned!(p.span()=> <#out_here as #krate::type_checks::DeserializeOutput>::from_output(__dsh_value));
        let call = quote_spanned!(p.span()=> #p(&__dsh_a, &__dsh_v));
        let to_value = quote_spanned!(p.span()=> #krate::json::to_value(&__dsh_m));
        out_tokens.extend(quote! {
            fn presentation_meta(
                &self,
                __dsh_args: &#value,
                __dsh_value: &#value,
            ) -> ::core::result::Result<::core::option::Option<#value>, #krate::ToolError> {
                let __dsh_a: #args_ty = match #krate::__private::soft_args(#params, __dsh_args) {
                    ::core::option::Option::Some(__dsh_a) => __dsh_a,
                    ::core::option::Option::None => return ::core::result::Result::Ok(::core::option::Option::None),
                };
                let __dsh_v: #out = #krate::__private::projector_output("presentation_meta", #typed)?;
                let __dsh_m = #krate::__private::projector("presentation_meta", || #call)?;
                #krate::__private::meta_value(#to_value)
            }
        });
    }
    out_tokens
}
