//! What `#[resource]` and `#[prompt]` share: the IR of one fn (its parameters read from
//! text, its receiver, its output), read from the signature with every problem pushed to
//! `errors`; and the generated pieces both use (the struct, the call of the body, reading
//! a parameter from text, completion).

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;

use super::attr::{Attr, Kind};
use crate::ctxt::Ctxt;

/// Where the fn sits.
#[derive(Clone, Copy)]
pub(crate) enum Site<'a> {
    /// A free fn.
    Free,
    /// A method of `impl <self_ty>` under `#[context]`; `prefix` starts the struct name.
    Group {
        self_ty: &'a syn::Type,
        prefix: &'a str,
    },
}

/// How the body is reached.
pub(crate) enum Receiver {
    /// A free fn.
    None,
    /// A method of a `#[context]` type; the struct holds an `Arc` of `self_ty`.
    Method {
        self_ty: Box<syn::Type>,
        kind: ReceiverKind,
    },
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReceiverKind {
    /// `&self`.
    Ref,
    /// `self: Arc<Self>`.
    Arc,
    /// No receiver.
    Static,
}

/// One parameter, read from text.
pub(crate) struct Param {
    /// The placeholder or argument name (the identifier without `r#`).
    pub name: String,
    /// The type as written (`Self` replaced).
    pub ty: syn::Type,
    /// `T` of `Option<T>`.
    pub optional: Option<syn::Type>,
    /// The parameter's `///` docs.
    pub docs: Vec<syn::Attribute>,
    /// `#[complete(with = path)]`.
    pub complete: Option<syn::Path>,
    /// The pattern, for errors.
    pub pat: syn::Pat,
}

impl Param {
    /// The type read from text (`T` of `Option<T>`).
    pub(crate) fn read_ty(&self) -> &syn::Type {
        self.optional.as_ref().unwrap_or(&self.ty)
    }
}

/// The return type.
pub(crate) struct Output {
    /// `T` of `Result<T, E>`, or the type.
    pub ty: syn::Type,
    /// Whether it is a `Result`.
    pub fallible: bool,
    /// `E`, when written.
    pub err_ty: Option<syn::Type>,
    /// Where to report a conversion of the error of a `Result` alias: its `Result`.
    pub result_span: Span,
}

/// One `#[resource]` or `#[prompt]` fn.
pub(crate) struct FnDef<'a> {
    pub kind: Kind,
    pub sig: &'a syn::Signature,
    pub vis: syn::Visibility,
    pub attr: Attr,
    /// The published name.
    pub name: String,
    /// The doc comment's `#[doc]` expressions.
    pub docs: Vec<syn::Expr>,
    pub params: Vec<Param>,
    pub output: Output,
    pub receiver: Receiver,
    /// The generated struct.
    pub struct_ident: syn::Ident,
    /// For a free fn, the module the struct is defined in.
    pub struct_module: Option<syn::Ident>,
    /// `::dsh_runtime`, or the `crate` key.
    pub krate: TokenStream,
    /// The fn's `#[cfg]`s, repeated on every generated item.
    pub cfgs: Vec<syn::Attribute>,
}

impl FnDef<'_> {
    /// The struct as generated impls name it (through its module for a free fn).
    pub(crate) fn struct_path(&self) -> TokenStream {
        let s = &self.struct_ident;
        match &self.struct_module {
            Some(m) => quote!(#m::#s),
            None => quote!(#s),
        }
    }
}

pub(crate) fn fn_def<'a>(
    kind: Kind,
    sig: &'a syn::Signature,
    vis: &syn::Visibility,
    fn_attrs: &[syn::Attribute],
    attr: Attr,
    site: Site<'_>,
    errors: &mut Ctxt,
) -> FnDef<'a> {
    check_qualifiers(kind, sig, errors);
    let self_ty = match site {
        Site::Free => None,
        Site::Group { self_ty, .. } => Some(self_ty),
    };
    let (receiver, params) = read_inputs(kind, sig, self_ty, errors);
    let output = read_output(kind, sig, self_ty, errors);

    let fn_name = sig.ident.unraw().to_string();
    let name = attr.name.clone().unwrap_or_else(|| fn_name.clone());
    let (struct_ident, struct_module) = struct_idents(kind, sig, &attr, &site);
    let krate = match &attr.krate {
        Some(p) => p.to_token_stream(),
        None => quote!(::dsh_runtime),
    };
    let cfgs = fn_attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .cloned()
        .collect();
    FnDef {
        kind,
        sig,
        vis: vis.clone(),
        attr,
        name,
        docs: crate::doc::doc_exprs(fn_attrs),
        params,
        output,
        receiver,
        struct_ident,
        struct_module,
        krate,
        cfgs,
    }
}

/// The receiver and the parameters (each name once).
fn read_inputs(
    kind: Kind,
    sig: &syn::Signature,
    self_ty: Option<&syn::Type>,
    errors: &mut Ctxt,
) -> (Receiver, Vec<Param>) {
    let mut receiver = match self_ty {
        None => Receiver::None,
        Some(t) => Receiver::Method {
            self_ty: Box::new(t.clone()),
            kind: ReceiverKind::Static,
        },
    };
    let mut params: Vec<Param> = Vec::new();
    for arg in &sig.inputs {
        match arg {
            syn::FnArg::Receiver(r) => read_receiver(kind, r, &mut receiver, errors),
            syn::FnArg::Typed(pt) => {
                if let Some(p) = read_param(kind, pt, self_ty, errors) {
                    if params.iter().any(|q| q.name == p.name) {
                        errors.error_spanned(
                            &pt.pat,
                            format!("two parameters are named `{}`", p.name),
                        );
                        continue;
                    }
                    params.push(p);
                }
            }
        }
    }
    (receiver, params)
}

/// The generated struct, and (for a free fn) the module it is defined in.
fn struct_idents(
    kind: Kind,
    sig: &syn::Signature,
    attr: &Attr,
    site: &Site<'_>,
) -> (syn::Ident, Option<syn::Ident>) {
    let fn_name = sig.ident.unraw().to_string();
    let base = match site {
        Site::Free => pascal(&fn_name),
        Site::Group { prefix, .. } => format!("{prefix}{}", pascal(&fn_name)),
    };
    let struct_ident = match &attr.struct_name {
        Some(n) => n.clone(),
        None => syn::Ident::new(&base, sig.ident.span()),
    };
    let struct_module = match site {
        Site::Free => {
            let word = match kind {
                Kind::Resource => "resource",
                Kind::Prompt => "prompt",
            };
            Some(format_ident!(
                "__dsh_{}_{}",
                word,
                fn_name,
                span = sig.ident.span()
            ))
        }
        Site::Group { .. } => None,
    };
    (struct_ident, struct_module)
}

fn check_qualifiers(kind: Kind, sig: &syn::Signature, errors: &mut Ctxt) {
    let attr = kind.attr();
    if sig.asyncness.is_none() {
        errors.error_at(
            sig.fn_token.span,
            format!(
                "a `{attr}` fn must be `async`: write `async fn {}`",
                sig.ident
            ),
        );
    }
    if let Some(c) = &sig.constness {
        errors.error_at(c.span, format!("a `{attr}` fn cannot be `const`"));
    }
    if let syn::Safety::Unsafe(u) = &sig.safety {
        errors.error_at(u.span, format!("a `{attr}` fn cannot be `unsafe`"));
    }
    if let Some(abi) = &sig.abi {
        errors.error_spanned(abi, format!("a `{attr}` fn cannot have an `extern` ABI"));
    }
    if !sig.generics.params.is_empty() {
        errors.error_spanned(
            &sig.generics,
            format!(
                "a `{attr}` fn cannot be generic: each parameter is read from text into one concrete type; write the concrete types"
            ),
        );
    }
    if let Some(v) = &sig.variadic {
        errors.error_spanned(v, format!("a `{attr}` fn cannot be variadic"));
    }
}

fn read_receiver(kind: Kind, r: &syn::Receiver, receiver: &mut Receiver, errors: &mut Ctxt) {
    let Receiver::Method { kind: rk, .. } = receiver else {
        errors.error_at(
            r.self_token.span,
            format!(
                "a `{}` method needs `#[context]` on its `impl` block: the block's resources and prompts are registered together and share the value",
                kind.attr()
            ),
        );
        return;
    };
    let arc_self = |ty: &syn::Type| -> bool {
        let syn::Type::Path(p) = ty else { return false };
        let Some(last) = p.path.segments.last() else {
            return false;
        };
        let syn::PathArguments::AngleBracketed(a) = &last.arguments else {
            return false;
        };
        last.ident == "Arc"
            && a.args.len() == 1
            && matches!(a.args.first(), Some(syn::GenericArgument::Type(syn::Type::Path(s))) if s.path.is_ident("Self"))
    };
    match &r.kind {
        syn::ReceiverKind::Reference(_, _, None) => *rk = ReceiverKind::Ref,
        syn::ReceiverKind::Typed(_, ty) if arc_self(ty) => *rk = ReceiverKind::Arc,
        _ => errors.error_spanned(
            r,
            format!(
                "a `{}` method shares the value between calls, which may run at once: take `&self` or `self: Arc<Self>`",
                kind.attr()
            ),
        ),
    }
}

/// `#[complete(...)]` on a parameter.
pub(crate) fn is_complete_attr(a: &syn::Attribute) -> bool {
    a.path().is_ident("complete")
}

fn read_param(
    kind: Kind,
    pt: &syn::PatType,
    self_ty: Option<&syn::Type>,
    errors: &mut Ctxt,
) -> Option<Param> {
    let (docs, mut complete) = param_attrs(kind, pt, errors);
    let ident = match &*pt.pat {
        syn::Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => p.ident.clone(),
        other => {
            errors.error_spanned(
                other,
                match kind {
                    Kind::Resource => "a resource parameter needs a plain name (`id: u64`), the name of its placeholder in the URI template",
                    Kind::Prompt => "a prompt parameter needs a plain name (`file: String`), the name of its argument",
                },
            );
            return None;
        }
    };
    let ty = match self_ty {
        Some(s) => replace_self(&pt.ty, s),
        None => (*pt.ty).clone(),
    };
    // A parameter with an error is still kept (the expansion stops at the errors), so
    // its name does not also count as a missing placeholder.
    check_param_type(kind, &ty, errors);
    let optional = option_inner(&ty).cloned();
    if let (Kind::Resource, Some(_)) = (kind, &optional) {
        errors.error_spanned(
            &ty,
            "a placeholder always has a value (a URI with an empty placeholder does not match the template): take `T`, not `Option<T>`",
        );
    }
    if let (Kind::Resource, Some(d)) = (kind, docs.first()) {
        errors.error_spanned(
            d,
            "a placeholder has no description of its own in MCP: describe it in the resource's doc comment instead",
        );
    }
    // `with = Self::names` names an associated fn of the `#[context]` type.
    if let (Some(s), Some(path)) = (self_ty, &mut complete)
        && let Ok(p) = syn::parse2(replace_self_tokens(
            path.to_token_stream(),
            &s.to_token_stream(),
        ))
    {
        *path = p;
    }
    Some(Param {
        name: ident.unraw().to_string(),
        ty,
        optional,
        docs,
        complete,
        pat: (*pt.pat).clone(),
    })
}

/// A parameter's doc comments and its `#[complete(with = ..)]`; any other attribute is
/// reported.
fn param_attrs(
    kind: Kind,
    pt: &syn::PatType,
    errors: &mut Ctxt,
) -> (Vec<syn::Attribute>, Option<syn::Path>) {
    let attr = kind.attr();
    let mut complete = None;
    let mut docs = Vec::new();
    for a in &pt.attrs {
        if crate::doc::is_doc(a) {
            docs.push(a.clone());
        } else if is_complete_attr(a) {
            if complete.is_some() {
                errors.error_spanned(a, "duplicate `#[complete]`: a parameter completes one way");
            } else {
                complete = read_complete(a, errors);
            }
        } else {
            errors.error_spanned(
                a,
                format!(
                    "a `{attr}` parameter takes doc comments and `#[complete(with = path)]` only"
                ),
            );
        }
    }
    (docs, complete)
}

/// A parameter's type must be owned and concrete.
fn check_param_type(kind: Kind, ty: &syn::Type, errors: &mut Ctxt) {
    let attr = kind.attr();
    match strip_type(ty) {
        syn::Type::Reference(r) => errors.error_spanned(
            r,
            format!(
                "a `{attr}` parameter must own its value (it is read from text): use an owned type such as `String` instead of a reference"
            ),
        ),
        syn::Type::ImplTrait(t) => errors.error_spanned(
            t,
            format!(
                "a `{attr}` fn cannot be generic: use a concrete parameter type instead of `impl Trait`"
            ),
        ),
        _ => {}
    }
}

/// `#[complete(with = path::to::fn)]`.
fn read_complete(a: &syn::Attribute, errors: &mut Ctxt) -> Option<syn::Path> {
    let usage = "expected `#[complete(with = path::to::fn)]`, naming an `async fn(CompletionRequest) -> Vec<String>`";
    let syn::Meta::List(list) = &a.meta else {
        errors.error_spanned(a, usage);
        return None;
    };
    match syn::parse2::<syn::MetaNameValue>(list.tokens.clone()) {
        Ok(nv) if nv.path.is_ident("with") => match nv.value {
            syn::Expr::Path(p) if p.qself.is_none() => Some(p.path),
            other => {
                errors.error_spanned(other, usage);
                None
            }
        },
        Ok(nv) => {
            let key = nv.path.to_token_stream().to_string();
            errors.error_spanned(
                &nv.path,
                format!(
                    "unknown `#[complete]` key `{key}`{}; {usage}",
                    crate::suggest::hint(&key, &["with"])
                ),
            );
            None
        }
        Err(_) => {
            errors.error_spanned(list, usage);
            None
        }
    }
}

fn strip_type(mut ty: &syn::Type) -> &syn::Type {
    loop {
        match ty {
            syn::Type::Paren(p) => ty = &p.elem,
            syn::Type::Group(g) => ty = &g.elem,
            _ => return ty,
        }
    }
}

/// `T` of `Option<T>` (also `std::option::Option<T>`), by the last path segment.
fn option_inner(ty: &syn::Type) -> Option<&syn::Type> {
    let syn::Type::Path(p) = strip_type(ty) else {
        return None;
    };
    let last = p.path.segments.last()?;
    let syn::PathArguments::AngleBracketed(a) = &last.arguments else {
        return None;
    };
    match (last.ident == "Option", a.args.len(), a.args.first()) {
        (true, 1, Some(syn::GenericArgument::Type(t))) => Some(t),
        _ => None,
    }
}

fn read_output(
    kind: Kind,
    sig: &syn::Signature,
    self_ty: Option<&syn::Type>,
    errors: &mut Ctxt,
) -> Output {
    let ty = match &sig.output {
        syn::ReturnType::Default => {
            return Output {
                ty: syn::parse_quote_spanned!(sig.ident.span()=> ()),
                fallible: false,
                err_ty: None,
                result_span: sig.ident.span(),
            };
        }
        syn::ReturnType::Type(_, ty) => match self_ty {
            Some(s) => replace_self(ty, s),
            None => (**ty).clone(),
        },
    };
    if let syn::Type::ImplTrait(t) = strip_type(&ty) {
        errors.error_spanned(
            t,
            format!(
                "a `{}` fn returns a named type (its MIME type and conversion are read from it): return a concrete type instead of `impl Trait`",
                kind.attr()
            ),
        );
    }
    if let syn::Type::Path(p) = strip_type(&ty)
        && let Some(last) = p.path.segments.last()
        && last.ident == "Result"
    {
        let types: Vec<syn::Type> = match &last.arguments {
            syn::PathArguments::AngleBracketed(a) => a
                .args
                .iter()
                .filter_map(|g| match g {
                    syn::GenericArgument::Type(t) => Some(t.clone()),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        let mut types = types.into_iter();
        let result_span = last.ident.span();
        return match types.next() {
            Some(ok) => Output {
                ty: ok,
                fallible: true,
                err_ty: types.next(),
                result_span,
            },
            None => {
                errors.error_spanned(
                    &ty,
                    "cannot see the value type of this `Result`: write `Result<T, E>`",
                );
                Output {
                    ty: syn::parse_quote_spanned!(result_span=> ()),
                    fallible: true,
                    err_ty: None,
                    result_span,
                }
            }
        };
    }
    Output {
        result_span: ty.span(),
        ty,
        fallible: false,
        err_ty: None,
    }
}

/// `read_file` -> `ReadFile`.
pub(crate) fn pascal(snake: &str) -> String {
    let mut out = String::new();
    for part in snake.split('_').filter(|p| !p.is_empty()) {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            out.push_str(chars.as_str());
        }
    }
    if out.is_empty() {
        out.push_str("Item");
    }
    out
}

/// Replace `Self` with the impl's type: generated items live outside the impl block.
pub(crate) fn replace_self(ty: &syn::Type, self_ty: &syn::Type) -> syn::Type {
    let tokens = replace_self_tokens(ty.to_token_stream(), &self_ty.to_token_stream());
    syn::parse2(tokens).unwrap_or_else(|_| ty.clone())
}

pub(crate) fn replace_self_tokens(tokens: TokenStream, self_ty: &TokenStream) -> TokenStream {
    tokens
        .into_iter()
        .flat_map(|tt| -> Vec<TokenTree> {
            match tt {
                TokenTree::Ident(i) if i == "Self" => {
                    respan(self_ty.clone(), i.span()).into_iter().collect()
                }
                TokenTree::Group(g) => {
                    let mut ng = proc_macro2::Group::new(
                        g.delimiter(),
                        replace_self_tokens(g.stream(), self_ty),
                    );
                    ng.set_span(g.span());
                    vec![TokenTree::Group(ng)]
                }
                other => vec![other],
            }
        })
        .collect()
}

/// `tokens` with every span set to `span`.
pub(crate) fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut tt| {
            if let TokenTree::Group(g) = &tt {
                let mut ng = proc_macro2::Group::new(g.delimiter(), respan(g.stream(), span));
                ng.set_span(span);
                tt = TokenTree::Group(ng);
            } else {
                tt.set_span(span);
            }
            tt
        })
        .collect()
}

/// Doc comments and `#[complete]` on fn parameters were read; rustc rejects the first
/// and does not know the second, so drop them.
pub(crate) fn strip_param_attrs(sig: &mut syn::Signature) {
    for arg in sig.inputs.iter_mut() {
        if let syn::FnArg::Typed(pt) = arg {
            pt.attrs
                .retain(|a| !crate::doc::is_doc(a) && !is_complete_attr(a));
        }
    }
}

// ---------------------------------------------------------------------------------------
// Generated pieces.

/// Lints generated code may trip over although the user's code is fine.
pub(crate) fn allows() -> TokenStream {
    quote! {
        #[allow(
            unused_qualifications,
            clippy::used_underscore_binding,
            clippy::redundant_closure_call,
            clippy::needless_question_mark,
            clippy::needless_borrow,
            clippy::unit_arg
        )]
    }
}

/// The generated struct: a unit struct in a module of its own for a free fn (as
/// `#[tool]` does: a type of the same name shadows the glob import, and the assertion
/// at the fn name then says to use `struct_name`), or `GroupMethod(pub Arc<Group>)`.
pub(crate) fn struct_items(def: &FnDef<'_>) -> TokenStream {
    let vis = &def.vis;
    let ident = &def.struct_ident;
    let cfgs = &def.cfgs;
    let krate = &def.krate;
    let fn_name = def.sig.ident.to_string();
    let (what, target, marker) = match def.kind {
        Kind::Resource => ("resource", "resources::Resource", quote!(ResourceStruct)),
        Kind::Prompt => ("prompt", "prompts::Prompt", quote!(PromptStruct)),
    };
    let krate_text = krate.to_string().replace(' ', "");
    match &def.receiver {
        Receiver::None => {
            let doc = format!(
                "The `{}` {what}: the fn `{fn_name}` as a `{krate_text}::{target}` (generated by `#[{what}]`; register it, it converts).",
                def.name
            );
            let module = def.struct_module.as_ref().unwrap_or(ident);
            let inner_vis = vis_in_child(vis);
            let check = quote_spanned!(ident.span()=>
                <#ident as #krate::resources::__macro::#marker>::OK
            );
            quote! {
                #(#cfgs)*
                #[doc(hidden)]
                mod #module {
                    #[doc = #doc]
                    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug, ::core::default::Default)]
                    #inner_vis struct #ident;

                    #[diagnostic::do_not_recommend]
                    impl #krate::resources::__macro::#marker for #ident {}
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
                "The `{}` {what}: the method `{fn_name}` of a shared value as a `{krate_text}::{target}` (generated by `#[context]`).",
                def.name
            );
            quote! {
                #(#cfgs)*
                #[doc = #doc]
                #[allow(private_interfaces)]
                #vis struct #ident(pub ::std::sync::Arc<#self_ty>);

                #(#cfgs)*
                #[automatically_derived]
                impl ::core::clone::Clone for #ident {
                    fn clone(&self) -> Self {
                        #ident(::std::sync::Arc::clone(&self.0))
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

/// `|text| -> Result<T, String>`: reads the parameter's type from text, the first way
/// that applies (see `dsh_runtime::resources::__macro`), reported at the type when none
/// does.
pub(crate) fn reader(krate: &TokenStream, ty: &syn::Type) -> TokenStream {
    let m = quote!(#krate::resources::__macro);
    // Every token of the call at the type, so the error's span is the type alone.
    let m_here = respan(m.clone(), ty.span());
    let read = quote_spanned!(ty.span()=>
        #m_here::FromText::<#ty>::read(&(&&&#m_here::Pick::<#ty>::NEW).pick(), __dsh_text)
    );
    quote! {
        |__dsh_text: &str| {
            #[allow(unused_imports)]
            use #m::{ViaFromStr as _, ViaSerde as _, ViaNothing as _};
            #read
        }
    }
}

/// `.with_completer(name, ..)` for a parameter: its `#[complete(with = ..)]`, else its
/// type's enum values when it has a string-enum schema, else nothing. `target` is the
/// local holding the resource or prompt.
pub(crate) fn completer(krate: &TokenStream, p: &Param, target: &syn::Ident) -> TokenStream {
    let name = &p.name;
    match &p.complete {
        Some(path) => {
            let completer = respan(quote!(#krate::complete::Completer), path.span());
            let with = quote_spanned!(path.span()=> #completer::with(#path));
            quote!(#target = #target.with_completer(#name, #with);)
        }
        None => {
            let ty = p.read_ty();
            let m = quote!(#krate::resources::__macro);
            quote! {
                if let ::core::option::Option::Some(__dsh_c) = {
                    #[allow(unused_imports)]
                    use #m::{ViaSchema as _, NoSchema as _};
                    (&&#m::Pick::<#ty>::NEW).completer()
                } {
                    #target = #target.with_completer(#name, __dsh_c);
                }
            }
        }
    }
}

/// The statements before the read closure that capture the shared value, and inside it
/// the ones that give each call its own handle (`__dsh_this`).
pub(crate) fn capture(def: &FnDef<'_>) -> (TokenStream, TokenStream) {
    match &def.receiver {
        Receiver::Method {
            kind: ReceiverKind::Ref | ReceiverKind::Arc,
            ..
        } => (
            quote!(let __dsh_shared = __dsh_value.0;),
            quote!(let __dsh_this = ::std::sync::Arc::clone(&__dsh_shared);),
        ),
        _ => (quote!(let _ = __dsh_value;), TokenStream::new()),
    }
}

/// The body's call, awaited, as a `Result` whose error is the macro's error type
/// (`ResourceError` or `PromptError`), converted through `into_err` at `E`.
pub(crate) fn call(def: &FnDef<'_>, args: &[TokenStream]) -> TokenStream {
    let krate = &def.krate;
    let f = &def.sig.ident;
    let callee = match &def.receiver {
        Receiver::None => quote!(#f(#(#args),*)),
        Receiver::Method { self_ty, kind } => match kind {
            ReceiverKind::Ref => quote!(<#self_ty>::#f(&*__dsh_this, #(#args),*)),
            ReceiverKind::Arc => quote!(<#self_ty>::#f(__dsh_this, #(#args),*)),
            ReceiverKind::Static => quote!(<#self_ty>::#f(#(#args),*)),
        },
    };
    let (err, conv, method) = match def.kind {
        Kind::Resource => (
            quote!(#krate::resources::ResourceError),
            quote!(#krate::resources::__macro::IntoResourceError),
            quote!(into_resource_error),
        ),
        Kind::Prompt => (
            quote!(#krate::prompts::PromptError),
            quote!(#krate::resources::__macro::IntoPromptError),
            quote!(into_prompt_error),
        ),
    };
    if def.output.fallible {
        let into = match &def.output.err_ty {
            Some(e) => quote_spanned!(e.span()=>
                |__dsh_e: #e| -> #err { <#e as #conv>::#method(__dsh_e) }
            ),
            None => quote_spanned!(def.output.result_span=>
                |__dsh_e| -> #err { #conv::#method(__dsh_e) }
            ),
        };
        quote!(::core::result::Result::map_err(#callee.await, #into))
    } else {
        quote!(::core::result::Result::<_, #err>::Ok(#callee.await))
    }
}

/// The description of a fn: its `description` key, or its doc comment (normalised as a
/// tool's), `None` when blank.
pub(crate) fn description(def: &FnDef<'_>) -> TokenStream {
    let krate = &def.krate;
    let text = match &def.attr.description {
        Some(e) => quote!(::core::concat!(#e)),
        None => crate::doc::doc_concat(&def.docs),
    };
    quote!(#krate::resources::__macro::description(#krate::__private::doc(#text)))
}

/// The description of a parameter (its doc comment), `None` when blank.
pub(crate) fn param_description(krate: &TokenStream, p: &Param) -> TokenStream {
    let text = crate::doc::doc_concat(&crate::doc::doc_exprs(&p.docs));
    quote!(#krate::resources::__macro::description(#krate::__private::doc(#text)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn errors_of(kind: Kind, f: &syn::ItemFn, site: Site<'_>) -> Vec<String> {
        let mut errors = Ctxt::new();
        let _ = fn_def(
            kind,
            &f.sig,
            &f.vis,
            &f.attrs,
            Attr::default(),
            site,
            &mut errors,
        );
        errors.messages()
    }

    #[test]
    fn reads_params_and_output() {
        let f: syn::ItemFn = parse_quote! {
            /// Doc.
            async fn user_profile(id: u64, #[complete(with = ids)] r#type: Kind) -> Result<String, E> {}
        };
        let mut errors = Ctxt::new();
        let d = fn_def(
            Kind::Resource,
            &f.sig,
            &f.vis,
            &f.attrs,
            Attr::default(),
            Site::Free,
            &mut errors,
        );
        assert!(errors.check().is_ok());
        let names: Vec<&str> = d.params.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["id", "type"]);
        assert!(d.params[1].complete.is_some());
        assert!(d.output.fallible && d.output.err_ty.is_some());
        assert_eq!(d.struct_ident, "UserProfile");
        assert_eq!(
            d.struct_module.map(|m| m.to_string()).as_deref(),
            Some("__dsh_resource_user_profile")
        );
    }

    #[test]
    fn accumulates_signature_errors() {
        let f: syn::ItemFn = parse_quote! {
            fn f<T>(&self, (a, b): (u8, u8), s: &str, o: Option<u8>, #[complete(values = x)] c: u8, #[serde] d: u8, d: u8) {}
        };
        let errs = errors_of(Kind::Resource, &f, Site::Free);
        assert_eq!(errs.len(), 9, "{errs:#?}");
        assert!(errs[0].contains("must be `async`"));
        assert!(errs[1].contains("cannot be generic"));
        assert!(errs[2].contains("needs `#[context]`"));
        assert!(errs[3].contains("plain name"));
        assert!(errs[4].contains("must own its value"));
        assert!(errs[5].contains("not `Option<T>`"));
        assert!(errs[6].starts_with("unknown `#[complete]` key `values`"));
        assert!(errs[7].contains("doc comments and `#[complete(with = path)]` only"));
        assert!(errs[8].contains("two parameters are named `d`"));
        // A prompt takes `Option`.
        let f: syn::ItemFn = parse_quote!(
            async fn f(o: Option<u8>) {}
        );
        assert!(errors_of(Kind::Prompt, &f, Site::Free).is_empty());
    }

    #[test]
    fn methods_take_shared_receivers() {
        let ty: syn::Type = parse_quote!(Docs);
        let site = Site::Group {
            self_ty: &ty,
            prefix: "Docs",
        };
        for ok in [
            quote!(
                async fn f(&self) {}
            ),
            quote!(
                async fn f(self: Arc<Self>) {}
            ),
            quote!(
                async fn f() {}
            ),
        ] {
            let f: syn::ItemFn = syn::parse2(ok).unwrap();
            assert!(errors_of(Kind::Prompt, &f, site).is_empty());
        }
        let f: syn::ItemFn = parse_quote!(
            async fn f(&mut self) {}
        );
        let errs = errors_of(Kind::Prompt, &f, site);
        assert!(
            errs[0].contains("take `&self` or `self: Arc<Self>`"),
            "{errs:#?}"
        );
    }
}
