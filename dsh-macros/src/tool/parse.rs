//! Read a tool fn's signature and doc comments into the model.
//!
//! Every problem is pushed to `errors` and parsing carries on, so one expansion reports
//! all of them; the model is always built (with what could be read) so the fallback can
//! emit stand-ins.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{ToTokens, format_ident, quote};
use syn::ext::IdentExt;
use syn::spanned::Spanned;

use super::arguments;
use super::attr::{ToolAttr, check_name};
use super::model::{Field, Input, Output, Receiver, ReceiverKind, ToolDef};
use crate::ctxt::Ctxt;

/// Where the fn sits.
pub(super) enum Site<'a> {
    /// A free fn under `#[tool]`.
    Free,
    /// A method of `impl <self_ty>` under `#[toolbox]`; `prefix` starts the generated
    /// struct names.
    Toolbox {
        self_ty: &'a syn::Type,
        prefix: &'a str,
    },
}

pub(super) fn tool_def<'a>(
    sig: &'a syn::Signature,
    vis: &syn::Visibility,
    fn_attrs: &[syn::Attribute],
    attr: ToolAttr,
    site: Site<'_>,
    errors: &mut Ctxt,
) -> ToolDef<'a> {
    check_qualifiers(sig, errors);
    let self_ty = match site {
        Site::Free => None,
        Site::Toolbox { self_ty, .. } => Some(self_ty),
    };
    let (receiver, mut inputs) = read_inputs(sig, &attr, self_ty, errors);
    let output = read_output(sig, self_ty, errors);
    let split = arguments::split(fn_attrs, errors);
    // An undocumented parameter takes the text of its (first) `# Arguments` entry;
    // `validate` reports the entries that go unused.
    for input in &mut inputs {
        if let Input::Field(f) = input
            && f.docs.is_empty()
        {
            f.entry = split
                .entries
                .iter()
                .find(|e| e.unraw_name() == f.name)
                .map(|e| e.text.clone());
        }
    }
    let name = tool_name(sig, &attr, errors);
    let (tool_ident, args_ident, tool_module) = struct_idents(sig, &attr, &site);
    let krate = match &attr.krate {
        Some(p) => p.to_token_stream(),
        None => quote!(::dsh_runtime),
    };
    let cfgs = fn_attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .cloned()
        .collect();

    ToolDef {
        sig,
        vis: vis.clone(),
        attr,
        name,
        tool_ident,
        tool_module,
        args_ident,
        description: split.description,
        description_blank: split.blank,
        entries: split.entries,
        examples: split.examples,
        inputs,
        output,
        receiver,
        krate,
        cfgs,
    }
}

/// The receiver and the parameters; with `#[tool(args)]`, the parameter it takes.
fn read_inputs(
    sig: &syn::Signature,
    attr: &ToolAttr,
    self_ty: Option<&syn::Type>,
    errors: &mut Ctxt,
) -> (Receiver, Vec<Input>) {
    let mut receiver = match self_ty {
        None => Receiver::None,
        Some(t) => Receiver::Method {
            self_ty: Box::new(t.clone()),
            kind: ReceiverKind::Static,
        },
    };
    let mut inputs = Vec::new();
    for arg in &sig.inputs {
        match arg {
            syn::FnArg::Receiver(r) => read_receiver(r, &mut receiver, errors),
            syn::FnArg::Typed(pt) => {
                if let Some(input) = read_param(pt, attr, &inputs, self_ty, errors) {
                    inputs.push(input);
                }
            }
        }
    }
    if let Some(span) = attr.args.0
        && !inputs.iter().any(|i| matches!(i, Input::Args { .. }))
    {
        errors.push(syn::Error::new(
            span,
            "`args` takes the fn's one parameter (besides the context) as the whole arguments object, but the fn has none",
        ));
    }
    (receiver, inputs)
}

/// The tool's name: `#[tool(name = "..")]`, else the fn's (checked).
fn tool_name(sig: &syn::Signature, attr: &ToolAttr, errors: &mut Ctxt) -> String {
    let fn_name = sig.ident.unraw().to_string();
    match &attr.name {
        Some(n) => n.value.clone(),
        None => {
            if let Err(msg) = check_name(&fn_name) {
                errors.push(syn::Error::new(
                    sig.ident.span(),
                    format!("{msg}; or set one with `#[tool(name = \"...\")]`"),
                ));
            }
            fn_name
        }
    }
}

/// The tool struct, the args struct and (for a free fn) the module the tool struct is
/// defined in. `struct_name` renames the tool struct and, unless `args_struct_name` says
/// otherwise, the args struct after it (`Name` and `NameArgs`).
fn struct_idents(
    sig: &syn::Signature,
    attr: &ToolAttr,
    site: &Site<'_>,
) -> (syn::Ident, syn::Ident, Option<syn::Ident>) {
    let fn_name = sig.ident.unraw().to_string();
    let base = match site {
        Site::Free => pascal(&fn_name),
        Site::Toolbox { prefix, .. } => format!("{prefix}{}", pascal(&fn_name)),
    };
    let tool_ident = match &attr.struct_name {
        Some(name) => name.clone(),
        None => syn::Ident::new(&base, sig.ident.span()),
    };
    let args_ident = match (&attr.args_struct_name, &attr.struct_name) {
        (Some(name), _) => name.clone(),
        (None, Some(name)) => format_ident!("{}Args", name, span = name.span()),
        (None, None) => syn::Ident::new(&format!("{base}Args"), sig.ident.span()),
    };
    let tool_module = match site {
        Site::Free => Some(format_ident!(
            "__dsh_tool_{}",
            fn_name,
            span = sig.ident.span()
        )),
        Site::Toolbox { .. } => None,
    };
    (tool_ident, args_ident, tool_module)
}

fn check_qualifiers(sig: &syn::Signature, errors: &mut Ctxt) {
    if sig.asyncness.is_none() {
        errors.push(syn::Error::new(
            sig.fn_token.span,
            format!(
                "a `#[tool]` fn must be `async`: write `async fn {}`",
                sig.ident
            ),
        ));
    }
    if let Some(c) = &sig.constness {
        errors.push(syn::Error::new(c.span, "a `#[tool]` fn cannot be `const`"));
    }
    if let syn::Safety::Unsafe(u) = &sig.safety {
        errors.push(syn::Error::new(
            u.span,
            "a `#[tool]` fn cannot be `unsafe`: the model calls it with arbitrary arguments",
        ));
    }
    if let Some(abi) = &sig.abi {
        errors.push(syn::Error::new_spanned(
            abi,
            "a `#[tool]` fn cannot have an `extern` ABI",
        ));
    }
    if !sig.generics.params.is_empty() {
        errors.push(syn::Error::new_spanned(
            &sig.generics,
            "a `#[tool]` fn cannot be generic: its schema is derived from concrete parameter types; \
             write the concrete types, or wrap a generic fn in a non-generic `#[tool]` fn",
        ));
    }
}

fn read_receiver(r: &syn::Receiver, receiver: &mut Receiver, errors: &mut Ctxt) {
    let Receiver::Method { kind, .. } = receiver else {
        errors.push(syn::Error::new(
            r.self_token.span,
            "a `#[tool]` method needs `#[toolbox]` on its `impl` block: the toolbox registers the value's tools together and gives each one the shared value",
        ));
        return;
    };
    let arc_self = |ty: &syn::Type| -> bool {
        let syn::Type::Path(p) = ty else { return false };
        let Some(last) = p.path.segments.last() else {
            return false;
        };
        if last.ident != "Arc" {
            return false;
        }
        let syn::PathArguments::AngleBracketed(a) = &last.arguments else {
            return false;
        };
        a.args.len() == 1
            && matches!(a.args.first(), Some(syn::GenericArgument::Type(syn::Type::Path(s))) if s.path.is_ident("Self"))
    };
    match &r.kind {
        syn::ReceiverKind::Reference(_, _, None) => *kind = ReceiverKind::Ref,
        syn::ReceiverKind::Typed(_, ty) if arc_self(ty) => *kind = ReceiverKind::Arc,
        _ => errors.push(syn::Error::new_spanned(
            r,
            "a toolbox tool shares the value between calls: take `&self` or `self: Arc<Self>`",
        )),
    }
}

fn read_param(
    pt: &syn::PatType,
    attr: &ToolAttr,
    inputs: &[Input],
    self_ty: Option<&syn::Type>,
    errors: &mut Ctxt,
) -> Option<Input> {
    for a in &pt.attrs {
        if a.path().is_ident("cfg") || a.path().is_ident("cfg_attr") {
            errors.push(syn::Error::new_spanned(
                a,
                "a `#[tool]` parameter cannot be conditional: the schema lists every parameter",
            ));
        }
    }
    let docs: Vec<syn::Attribute> = pt
        .attrs
        .iter()
        .filter(|a| crate::doc::is_doc(a))
        .cloned()
        .collect();
    let schema_attr = pt.attrs.iter().find(|a| is_schema_attr(a));
    let pat_name = match &*pt.pat {
        syn::Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => Some(&p.ident),
        _ => None,
    };

    if let Some(context) = context_type(&pt.ty) {
        return read_context(pt, context, inputs, schema_attr, pat_name, errors);
    }

    let ty = match self_ty {
        Some(s) => replace_self(&pt.ty, s),
        None => (*pt.ty).clone(),
    };
    if !check_param_type(&ty, errors) {
        return None;
    }

    if attr.args.is_present() {
        return read_args_param(pt, ty, inputs, &docs, schema_attr, pat_name, errors);
    }

    let Some(ident) = pat_name else {
        errors.push(syn::Error::new_spanned(
            &pt.pat,
            "a tool parameter needs a plain name (`name: Type`), which becomes its JSON property; \
             to take one struct as the whole arguments object, use `#[tool(args)]`",
        ));
        return None;
    };
    let schema =
        crate::derive::attr::parse_schema(&pt.attrs, crate::derive::keys::Pos::Param, errors);
    Some(Input::Field(Field {
        ident: ident.clone(),
        name: ident.unraw().to_string(),
        ty,
        docs,
        entry: None,
        schema: Box::new(schema),
    }))
}

/// The `ToolContext` parameter (at most one, without `#[schema]`).
fn read_context(
    pt: &syn::PatType,
    context: syn::Result<(&syn::Type, bool)>,
    inputs: &[Input],
    schema_attr: Option<&syn::Attribute>,
    pat_name: Option<&syn::Ident>,
    errors: &mut Ctxt,
) -> Option<Input> {
    match context {
        Ok((inner, by_ref)) => {
            if let Some(a) = schema_attr {
                errors.push(syn::Error::new_spanned(
                    a,
                    "the `ToolContext` parameter is not part of the parameter schema: remove `#[schema(..)]`",
                ));
            }
            if inputs.iter().any(|i| matches!(i, Input::Context { .. })) {
                errors.push(syn::Error::new_spanned(
                    &pt.ty,
                    "a tool takes at most one `ToolContext` parameter",
                ));
                return None;
            }
            Some(Input::Context {
                ty: inner.clone(),
                by_ref,
                name: pat_name.map(|i| i.unraw().to_string()),
            })
        }
        Err(e) => {
            errors.push(e);
            None
        }
    }
}

/// The one parameter of a `#[tool(args)]` fn, whose type documents and shapes the
/// arguments (no doc comment or `#[schema]` of its own).
fn read_args_param(
    pt: &syn::PatType,
    ty: syn::Type,
    inputs: &[Input],
    docs: &[syn::Attribute],
    schema_attr: Option<&syn::Attribute>,
    pat_name: Option<&syn::Ident>,
    errors: &mut Ctxt,
) -> Option<Input> {
    if inputs.iter().any(|i| matches!(i, Input::Args { .. })) {
        errors.push(syn::Error::new_spanned(
            pt,
            "with `#[tool(args)]` the fn takes one parameter (the arguments struct) besides the context",
        ));
        return None;
    }
    if let Some(d) = docs.first() {
        errors.push(syn::Error::new_spanned(
            d,
            "with `#[tool(args)]` the descriptions come from the arguments struct: document its fields instead",
        ));
    }
    if let Some(a) = schema_attr {
        errors.push(syn::Error::new_spanned(
            a,
            "with `#[tool(args)]` the schema comes from the arguments struct: put `#[schema(..)]` on its fields instead",
        ));
    }
    Some(Input::Args {
        ty,
        name: pat_name.map(|i| i.unraw().to_string()),
    })
}

/// `#[schema(...)]` on a parameter: read by `#[tool]` and removed from the emitted fn.
pub(super) fn is_schema_attr(attr: &syn::Attribute) -> bool {
    attr.path().is_ident("schema")
}

/// Types a parameter cannot have (each checked syntactically; everything else is left
/// to trait bounds at the type). Returns whether the type is usable.
fn check_param_type(ty: &syn::Type, errors: &mut Ctxt) -> bool {
    match ty {
        syn::Type::Reference(r) => errors.push(syn::Error::new_spanned(
            r,
            "a tool parameter must own its value (arguments are deserialized into it): use an owned type such as `String` instead of a reference",
        )),
        syn::Type::ImplTrait(t) => errors.push(syn::Error::new_spanned(
            t,
            "a `#[tool]` fn cannot be generic: use a concrete parameter type instead of `impl Trait`",
        )),
        syn::Type::Paren(p) => return check_param_type(&p.elem, errors),
        syn::Type::Group(g) => return check_param_type(&g.elem, errors),
        _ => return true,
    }
    false
}

/// A parameter whose type is named `ToolContext` (by value or `&`) is the context.
/// The name is only the trigger: the expansion asserts at the type that it is the
/// runtime's context, so an unrelated type with that name fails there clearly.
fn context_type(ty: &syn::Type) -> Option<syn::Result<(&syn::Type, bool)>> {
    let named = |t: &syn::Type| match t {
        syn::Type::Path(p) if p.qself.is_none() => p
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident == "ToolContext" && s.arguments.is_none()),
        _ => false,
    };
    match ty {
        syn::Type::Reference(r) if named(&r.elem) => Some(match &r.mutability {
            None => Ok((&*r.elem, true)),
            Some(m) => Err(syn::Error::new(
                m.span,
                "take the context by value or by shared reference (`&ToolContext`), not `&mut`",
            )),
        }),
        t if named(t) => Some(Ok((t, false))),
        _ => None,
    }
}

fn read_output(sig: &syn::Signature, self_ty: Option<&syn::Type>, errors: &mut Ctxt) -> Output {
    let ty = match &sig.output {
        syn::ReturnType::Default => {
            return Output {
                ty: syn::parse_quote_spanned!(sig.ident.span()=> ()),
                fallible: false,
                err_ty: None,
                span: sig.ident.span(),
            };
        }
        syn::ReturnType::Type(_, ty) => match self_ty {
            Some(s) => replace_self(ty, s),
            None => (**ty).clone(),
        },
    };
    let span = ty.span();
    if let syn::Type::ImplTrait(_) = ty {
        errors.push(syn::Error::new(
            span,
            "a tool's output type must be named: its schema is published; return a concrete type instead of `impl Trait`",
        ));
    }
    // `Result<T, E>`, `io::Result<T>`, `anyhow::Result<T>`...: recognised by the last path
    // segment, which is all a macro can see; `T` is the output, and the error converts
    // through `Into<ToolError>` (checked by the compiler at the return type).
    if let syn::Type::Path(p) = &ty
        && let Some(last) = p.path.segments.last()
        && last.ident == "Result"
    {
        let mut types = match &last.arguments {
            syn::PathArguments::AngleBracketed(a) => a
                .args
                .iter()
                .filter_map(|g| match g {
                    syn::GenericArgument::Type(t) => Some(t.clone()),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
        .into_iter();
        let ok = types.next();
        let err_ty = types.next();
        return match ok {
            Some(ok) => Output {
                span: ok.span(),
                ty: ok,
                fallible: true,
                err_ty,
            },
            None => {
                errors.push(syn::Error::new(
                    span,
                    "cannot see the output type of this `Result`: write `Result<T, E>` with the output type `T`",
                ));
                Output {
                    ty: syn::parse_quote_spanned!(span=> ()),
                    fallible: true,
                    err_ty: None,
                    span,
                }
            }
        };
    }
    Output {
        ty,
        fallible: false,
        err_ty: None,
        span,
    }
}

/// `read_file` -> `ReadFile`.
pub(super) fn pascal(snake: &str) -> String {
    let mut out = String::new();
    for part in snake.split('_').filter(|p| !p.is_empty()) {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            out.push_str(chars.as_str());
        }
    }
    if out.is_empty() {
        out.push_str("Tool");
    }
    out
}

/// Replace `Self` with the impl's type: generated items live outside the impl block,
/// where `Self` would mean something else.
pub(super) fn replace_self(ty: &syn::Type, self_ty: &syn::Type) -> syn::Type {
    let tokens = replace_self_tokens(ty.to_token_stream(), &self_ty.to_token_stream());
    syn::parse2(tokens).unwrap_or_else(|_| ty.clone())
}

pub(super) fn replace_self_tokens(tokens: TokenStream, self_ty: &TokenStream) -> TokenStream {
    tokens
        .into_iter()
        .flat_map(|tt| -> Vec<TokenTree> {
            match tt {
                TokenTree::Ident(i) if i == "Self" => {
                    // Keep the user's span so errors still point at their `Self`.
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
pub(super) fn respan(tokens: TokenStream, span: Span) -> TokenStream {
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

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn def_errors(f: &syn::ItemFn, attr: ToolAttr) -> Vec<String> {
        let mut errors = Ctxt::new();
        let _ = tool_def(&f.sig, &f.vis, &f.attrs, attr, Site::Free, &mut errors);
        errors.messages()
    }

    #[test]
    fn pascal_case() {
        assert_eq!(pascal("read_file"), "ReadFile");
        assert_eq!(pascal("get_v2_data"), "GetV2Data");
        assert_eq!(pascal("__x"), "X");
        assert_eq!(pascal("type"), "Type");
    }

    #[test]
    fn reads_inputs_and_output() {
        let f: syn::ItemFn = parse_quote! {
            /// Doc.
            async fn read_file(/// P.
                path: String, mut r#type: Option<u8>, cx: &dsh::ToolContext) -> io::Result<Vec<u8>> {}
        };
        let mut errors = Ctxt::new();
        let d = tool_def(
            &f.sig,
            &f.vis,
            &f.attrs,
            ToolAttr::default(),
            Site::Free,
            &mut errors,
        );
        assert!(errors.check().is_ok());
        let names: Vec<&str> = d.fields().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["path", "type"]);
        assert_eq!(d.fields().next().map(|f| f.docs.len()), Some(1));
        assert!(matches!(d.inputs[2], Input::Context { by_ref: true, .. }));
        assert!(d.output.fallible);
        assert_eq!(d.output.ty.to_token_stream().to_string(), "Vec < u8 >");
        assert_eq!(d.tool_ident, "ReadFile");
        assert_eq!(d.args_ident, "ReadFileArgs");
    }

    #[test]
    fn accumulates_signature_errors() {
        let f: syn::ItemFn = parse_quote! {
            fn f<T>(&self, (a, b): (u8, u8), s: &str, x: impl Copy, c: ToolContext, d: &mut ToolContext, e: ToolContext) {}
        };
        let errs = def_errors(&f, ToolAttr::default());
        assert_eq!(errs.len(), 8, "{errs:#?}");
        assert!(errs[0].contains("must be `async`"));
        assert!(errs[1].contains("cannot be generic"));
        assert!(errs[2].contains("needs `#[toolbox]`"));
        assert!(errs[3].contains("plain name"));
        assert!(errs[4].contains("must own its value"));
        assert!(errs[5].contains("`impl Trait`"));
        assert!(errs[6].contains("not `&mut`"));
        assert!(errs[7].contains("at most one `ToolContext`"));
    }

    #[test]
    fn names_the_generated_structs() {
        let f: syn::ItemFn = parse_quote! {
            /// Doc.
            async fn text_stats() {}
        };
        let named = |attr: proc_macro2::TokenStream| {
            let mut errors = Ctxt::new();
            let attr = ToolAttr::parse(attr, &mut errors);
            let d = tool_def(&f.sig, &f.vis, &f.attrs, attr, Site::Free, &mut errors);
            assert!(errors.check().is_ok());
            (d.tool_ident.to_string(), d.args_ident.to_string())
        };
        let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
        assert_eq!(named(quote!()), pair("TextStats", "TextStatsArgs"));
        assert_eq!(
            named(quote!(struct_name = "Stats")),
            pair("Stats", "StatsArgs")
        );
        assert_eq!(
            named(quote!(struct_name = "Stats", args_struct_name = "Input")),
            pair("Stats", "Input")
        );
        assert_eq!(
            named(quote!(args_struct_name = "Input")),
            pair("TextStats", "Input")
        );
    }

    #[test]
    fn arguments_entries_document_parameters_and_validation_reports_the_rest() {
        let f: syn::ItemFn = parse_quote! {
            /// Doc.
            ///
            /// # Arguments
            ///
            /// * `a` - First.
            /// * `a` - Again.
            /// * `b` - Already documented.
            /// * `c` - No such parameter.
            async fn f(a: u8, /// B.
                b: u8) {}
        };
        let mut errors = Ctxt::new();
        let d = tool_def(
            &f.sig,
            &f.vis,
            &f.attrs,
            ToolAttr::default(),
            Site::Free,
            &mut errors,
        );
        assert!(errors.is_empty());
        let entries: Vec<Option<&str>> = d.fields().map(|f| f.entry.as_deref()).collect();
        assert_eq!(entries, [Some("First."), None]);
        super::super::validate::validate(&d, &mut errors);
        let errs = errors.messages();
        assert_eq!(errs.len(), 3, "{errs:#?}");
        assert!(errs[0].contains("two entries"));
        assert!(errs[1].contains("documented twice"));
        assert!(errs[2].contains("not a parameter"));
    }

    #[test]
    fn replaces_self() {
        let t: syn::Type = parse_quote!(Vec<<Self as T>::Item>);
        let s: syn::Type = parse_quote!(Server);
        assert_eq!(
            replace_self(&t, &s).to_token_stream().to_string(),
            "Vec < < Server as T > :: Item >"
        );
    }
}
