//! The elicitation-form impls of one input (`dsh_runtime::caller::{FormFields,
//! FormField, FormChoice}`): which types a tool body may ask its caller to fill in as an
//! MCP form, checked by rustc where the body asks (`cx.elicit::<T>`).
//!
//! - a struct with named fields: `FormFields`, bounded on every live field's type being
//!   a `FormField` (and, for a field whose `#[schema]` keys a form cannot carry, on a
//!   never-implemented trait whose message says why);
//! - an externally tagged enum of unit variants: `FormField` (a single-select field) and
//!   `FormChoice` (`Vec<Self>` is a multi-select); `#[schema(enum_names)]` sets
//!   `LEGACY_ENUM_NAMES`;
//! - a newtype or `transparent` struct: `FormField` when its field is one;
//! - `#[serde(from = "X")]`: each of the three that `X` has.
//!
//! Every impl is generic over a placeholder `__DshForm` that appears in its bounds, so a
//! bound that cannot hold (a map field) is not a "trivially false" bound rejected where
//! the type is declared: the type keeps deriving and serving as tool parameters, and
//! only a form of it fails, at the `elicit` call, naming the field type. A type whose
//! schema is written by hand (`#[schema(with)]` on the container) gets none of them.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::keys::JsonKind;
use super::model::{Body, Field, Input, Style};

/// The placeholder parameter of the form impls.
const PLACEHOLDER: &str = "__DshForm";

/// The path generated code reaches `dsh_runtime::caller` through.
fn caller_path(input: &Input) -> TokenStream {
    match &input.schema.krate {
        Some(path) => quote!(#path::caller),
        None => quote!(::dsh_runtime::caller),
    }
}

/// The form impls of `input`; `generics` are the input's generics with the bounds its
/// `ToolSchema` impl puts on them.
pub(super) fn expand(input: &Input, generics: &syn::Generics) -> TokenStream {
    // A hand-written schema may be anything; the runtime's own types (`crate = crate`)
    // are never forms, and would only lengthen the list of forms rustc shows with an
    // error.
    let own = matches!(&input.schema.krate, Some(path) if path.is_ident("crate"));
    if input.schema.with.is_some() || own {
        return quote!();
    }
    let h = Header {
        input,
        generics,
        c: caller_path(input),
        d: syn::Ident::new(PLACEHOLDER, proc_macro2::Span::call_site()),
    };
    if let Some(from) = &input.serde.from {
        return from_forms(&h, from);
    }
    match &input.body {
        Body::Struct(style, fields) => {
            if input.serde.transparent.is_some() || *style == Style::Tuple {
                return transparent_form(&h);
            }
            if *style != Style::Named {
                return quote!();
            }
            struct_form(&h, fields)
        }
        Body::Enum(..) => {
            if !super::validate::unit_enum(input) {
                return quote!();
            }
            let legacy = input.schema.enum_names.is_some();
            let field = h.of(quote!(FormField), Vec::new());
            let choice = h.of(quote!(FormChoice), Vec::new());
            quote! {
                #[automatically_derived]
                #[diagnostic::do_not_recommend]
                #field {
                    const LEGACY_ENUM_NAMES: ::core::primitive::bool = #legacy;
                }
                #[automatically_derived]
                #[diagnostic::do_not_recommend]
                #choice {}
            }
        }
    }
}

/// What the form impls of one input share: its type, generics, the path to
/// `dsh_runtime::caller` and the impls' extra type parameter.
struct Header<'a> {
    input: &'a Input,
    generics: &'a syn::Generics,
    c: TokenStream,
    d: syn::Ident,
}

impl Header<'_> {
    /// `impl<.., __DshForm> Trait<__DshForm> for Ident<..> where <bounds>, <extra>`
    fn of(&self, tr: TokenStream, extra: Vec<TokenStream>) -> TokenStream {
        let (c, d) = (&self.c, &self.d);
        let ident = &self.input.ident;
        let (_, ty_generics, _) = self.input.generics.split_for_impl();
        let mut g = self.generics.clone();
        g.params.push(syn::parse_quote!(#d));
        let clause = g.make_where_clause();
        for e in extra {
            clause.predicates.push(syn::parse_quote!(#e));
        }
        let (impl_generics, _, where_clause) = g.split_for_impl();
        // Spanned at the type's name: a note "required for `T` to implement ..." points
        // there (a span of the derive itself would make rustc call the field types
        // "type parameters" and suggest writing the impl by hand).
        let tr = respan(quote!(#c::#tr<#d>), ident.span());
        quote_spanned!(ident.span()=> impl #impl_generics #tr for #ident #ty_generics #where_clause)
    }
}

/// `#[serde(from = "X")]`: a form exactly when `X` is.
fn from_forms(h: &Header<'_>, from: &syn::Type) -> TokenStream {
    let (c, d) = (&h.c, &h.d);
    let fields = h.of(
        quote!(FormFields),
        vec![quote_spanned!(from.span()=> #from: #c::FormFields<#d>)],
    );
    let field = h.of(
        quote!(FormField),
        vec![quote_spanned!(from.span()=> #from: #c::FormField<#d>)],
    );
    let choice = h.of(
        quote!(FormChoice),
        vec![quote_spanned!(from.span()=> #from: #c::FormChoice<#d>)],
    );
    // Not `do_not_recommend` (nor `automatically_derived`, which makes rustc suggest
    // writing the impl by hand): an error goes through it down to `X`'s fields.
    quote! {
        #fields {
            fn legacy_enum_names(property: &::core::primitive::str) -> ::core::primitive::bool {
                <#from as #c::FormFields<#d>>::legacy_enum_names(property)
            }
        }
        #[automatically_derived]
        #[diagnostic::do_not_recommend]
        #field {
            const LEGACY_ENUM_NAMES: ::core::primitive::bool = <#from as #c::FormField<#d>>::LEGACY_ENUM_NAMES;
        }
        #[automatically_derived]
        #[diagnostic::do_not_recommend]
        #choice {}
    }
}

/// A transparent struct or newtype: a form field when its one field is.
fn transparent_form(h: &Header<'_>) -> TokenStream {
    let (c, d) = (&h.c, &h.d);
    let Some(f) = h.input.transparent_field() else {
        return quote!();
    };
    let (bounds, forms) = field_bounds(c, d, f);
    let legacy = if forms {
        let ty = &f.ty;
        quote!(<#ty as #c::FormField<#d>>::LEGACY_ENUM_NAMES)
    } else {
        quote!(false)
    };
    let field = h.of(quote!(FormField), bounds);
    quote! {
        #[automatically_derived]
        #[diagnostic::do_not_recommend]
        #field {
            const LEGACY_ENUM_NAMES: ::core::primitive::bool = #legacy;
        }
    }
}

/// A struct with named fields: a form when each live field is a form field.
fn struct_form(h: &Header<'_>, fields: &[Field]) -> TokenStream {
    let (c, d) = (&h.c, &h.d);
    let mut bounds = Vec::new();
    let mut arms = Vec::new();
    for f in fields.iter().filter(|f| f.is_live()) {
        let (b, forms) = field_bounds(c, d, f);
        bounds.extend(b);
        if forms {
            let name = &f.name;
            let ty = &f.ty;
            arms.push(quote!(#name => <#ty as #c::FormField<#d>>::LEGACY_ENUM_NAMES,));
        }
    }
    let fields = h.of(quote!(FormFields), bounds);
    let body = if arms.is_empty() {
        quote!()
    } else {
        quote! {
            fn legacy_enum_names(property: &::core::primitive::str) -> ::core::primitive::bool {
                match property {
                    #(#arms)*
                    _ => false,
                }
            }
        }
    };
    // Not `do_not_recommend` (nor `automatically_derived`, which makes rustc suggest
    // writing the impl by hand): the error at an `elicit` call must go through this impl
    // down to the field type that is not a form field.
    quote! {
        #fields { #body }
    }
}

/// The bounds one field puts on a form, each spanned where the user wrote the reason
/// (the type, the key), and whether the field's type is bounded as a `FormField`.
fn field_bounds(c: &TokenStream, d: &syn::Ident, f: &Field) -> (Vec<TokenStream>, bool) {
    let ty = &f.ty;
    // `Ty: Trait<D>`, the trait spanned at `span`: rustc's note "unsatisfied trait bound
    // introduced here" points there.
    let bound = |tr: TokenStream, span: proc_macro2::Span| {
        let tr = respan(quote!(#c::#tr<#d>), span);
        quote!(#ty: #tr)
    };
    let mut bounds = Vec::new();
    // A schema written by hand may be anything: not a form field the derive can vouch
    // for.
    if let Some(with) = &f.schema.with {
        bounds.push(bound(quote!(__form::FormWithKey), with.span()));
        return (bounds, false);
    }
    if let Some((_, span)) = f.serde.custom_de {
        bounds.push(bound(quote!(__form::FormWithKey), span));
        return (bounds, false);
    }
    bounds.push(bound(quote!(FormField), ty.span()));
    if let Some((_, span)) = &f.schema.pattern {
        bounds.push(bound(quote!(__form::FormPatternKey), *span));
    }
    let typed_choices = f
        .schema
        .enum_values
        .iter()
        .flat_map(|(values, span)| values.first().map(|v| (v.kind, *span)))
        .chain(f.schema.const_value.iter().map(|(v, span)| (v.kind, *span)))
        .find(|(kind, _)| *kind != JsonKind::String);
    if let Some((_, span)) = typed_choices {
        bounds.push(bound(quote!(__form::FormChoicesKey), span));
    }
    (bounds, true)
}

/// `tokens` with every span set to `span`.
fn respan(tokens: TokenStream, span: proc_macro2::Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut tt| {
            if let proc_macro2::TokenTree::Group(g) = &tt {
                let mut group = proc_macro2::Group::new(g.delimiter(), respan(g.stream(), span));
                group.set_span(span);
                tt = proc_macro2::TokenTree::Group(group);
            } else {
                tt.set_span(span);
            }
            tt
        })
        .collect()
}

/// Stand-ins emitted next to the derive's errors, so that an `elicit` of the type
/// reports only the real mistake.
pub(super) fn stand_in(input: &syn::DeriveInput, krate: Option<&syn::Path>) -> TokenStream {
    let c = match krate {
        Some(path) => quote!(#path::caller),
        None => quote!(::dsh_runtime::caller),
    };
    let d = syn::Ident::new(PLACEHOLDER, proc_macro2::Span::call_site());
    let ident = &input.ident;
    let mut generics = input.generics.clone();
    generics.params.push(syn::parse_quote!(#d));
    let (impl_generics, _, where_clause) = generics.split_for_impl();
    let (_, ty_generics, _) = input.generics.split_for_impl();
    match &input.data {
        syn::Data::Struct(s) if matches!(s.fields, syn::Fields::Named(_)) => quote! {
            #[diagnostic::do_not_recommend]
            impl #impl_generics #c::FormFields<#d> for #ident #ty_generics #where_clause {}
        },
        syn::Data::Enum(_) => quote! {
            #[diagnostic::do_not_recommend]
            impl #impl_generics #c::FormField<#d> for #ident #ty_generics #where_clause {}
            #[diagnostic::do_not_recommend]
            impl #impl_generics #c::FormChoice<#d> for #ident #ty_generics #where_clause {}
        },
        _ => quote!(),
    }
}
