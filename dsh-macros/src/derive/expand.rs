//! Code generation from the model.
//!
//! The expansion is one `const _: () = { .. };` holding:
//! - `impl ToolSchema`: `build_schema` builds the node once (the runtime caches it), fetching
//!   children with `<FieldTy as HasToolSchema>::property_schema()` / `schema()` (the
//!   hidden `type_checks::HasToolSchema`: `ToolSchema`'s message, without the list of its impls);
//! - `impl JsonShape`: the JSON kinds the schema admits, for untagged enums that hold this
//!   type;
//! - `impl SchemaObject` for structs with named fields (internally tagged newtype payloads);
//! - for untagged enums, a constant proving every pair of variants disjoint;
//! - the elicitation-form impls (`form.rs`).
//!
//! Type questions (does a field type have a schema, is it a number for `range`) are left to
//! rustc: the generated code names the field type in a trait-qualified path spanned at the
//! type, so the error sits on the user's type with the trait's `on_unimplemented` message.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::keys::{Bound, JsonKind, SchemaAttrs};
use super::model::{Body, Field, Input, Repr, Style, Variant};
use crate::doc::doc_concat;

/// The path generated code reaches the runtime's derive support through.
pub(crate) fn support_path(input: &Input) -> TokenStream {
    match &input.schema.krate {
        Some(path) => quote!(#path::__private::derive),
        None => quote!(::dsh_runtime::__private::derive),
    }
}

/// The input's generics with `T: ToolSchema + 'static` added for every type parameter.
pub(crate) fn bounded_generics(input: &Input, p: &TokenStream) -> syn::Generics {
    let mut generics = input.generics.clone();
    let params: Vec<syn::Ident> = generics.type_params().map(|t| t.ident.clone()).collect();
    let clause = generics.make_where_clause();
    for t in params {
        clause
            .predicates
            .push(syn::parse_quote!(#t: #p::ToolSchema + 'static));
    }
    generics
}

pub(crate) fn expand(input: &Input) -> TokenStream {
    let p = support_path(input);
    let ident = &input.ident;
    let mut generics = bounded_generics(input, &p);
    let form = super::form::expand(input, &generics);
    let generic = input.generics.type_params().next().is_some()
        || input.generics.const_params().next().is_some();

    let mut cx = Cx {
        p: &p,
        generic,
        asserts: Vec::new(),
        shape_bounds: Vec::new(),
    };
    let build = build_schema(&mut cx, input);
    let facts = facts::container(&p, input);
    let optional = optional_items(&mut cx, input);
    let shape = shape_of(&mut cx, input);
    let overlaps = overlap_checks(&mut cx, input);
    let asserts = &cx.asserts;
    let fit = fit_of(&p, input);
    let default_checks = default_checks(&p, input, generic);

    // Checks that name generic parameters must live in the generic fn (evaluated per
    // instantiation), whose impl then needs the payloads' shapes; the others are a free
    // constant, evaluated even when the schema is never built.
    let (overlap_in_fn, overlap_free) = match overlaps {
        Some(o) if generic => {
            generics = with_bounds(&generics, &cx.shape_bounds);
            (quote!(const { #o };), quote!())
        }
        Some(o) => (quote!(), quote!(const _: () = { #o };)),
        None => (quote!(), quote!()),
    };
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();

    let shape_generics = with_bounds(&generics, &cx.shape_bounds);
    let (shape_impl_generics, _, shape_where) = shape_generics.split_for_impl();

    let object_marker = object_marker(&p, input, &generics);

    quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals, unused_qualifications, clippy::all, clippy::pedantic)]
        const _: () = {
            #[automatically_derived]
            impl #impl_generics #p::ToolSchema for #ident #ty_generics #where_clause {
                const PORTABILITY: #p::Facts = #facts;
                #optional
                fn build_schema() -> #p::Schema {
                    #(#asserts)*
                    #overlap_in_fn
                    #build
                }
            }

            #[automatically_derived]
            #[diagnostic::do_not_recommend]
            impl #shape_impl_generics #p::JsonShape for #ident #ty_generics #shape_where {
                const SHAPE: #p::Shape = #shape;
            }

            #[automatically_derived]
            #[diagnostic::do_not_recommend]
            impl #shape_impl_generics #p::DefaultFit for #ident #ty_generics #shape_where {
                const FIT: #p::Fit = #fit;
            }

            #object_marker
            #form
            #overlap_free
            #(#default_checks)*
        };
    }
}

/// `generics` with `bounds` added to its `where` clause.
fn with_bounds(generics: &syn::Generics, bounds: &[syn::WherePredicate]) -> syn::Generics {
    let mut generics = generics.clone();
    let clause = generics.make_where_clause();
    for b in bounds {
        clause.predicates.push(b.clone());
    }
    generics
}

/// A field's default checked against its type, each in a free constant: not for a
/// generic type, whose fields' types are only known per instantiation.
fn default_checks(p: &TokenStream, input: &Input, generic: bool) -> Vec<TokenStream> {
    if generic {
        return Vec::new();
    }
    let fields: Vec<&Field> = match &input.body {
        Body::Struct(_, fields) => fields.iter().collect(),
        Body::Enum(_, variants) => variants.iter().flat_map(|v| &v.fields).collect(),
    };
    fields
        .into_iter()
        .filter(|f| f.schema.with.is_none())
        .filter_map(|f| super::default::fit_check(p, &f.ty, &f.schema))
        .collect()
}

/// `impl SchemaObject` for a struct with named fields whose schema is its own (no
/// `schema(with)`, serde `from` or `transparent`).
fn object_marker(p: &TokenStream, input: &Input, generics: &syn::Generics) -> TokenStream {
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    match &input.body {
        Body::Struct(Style::Named, _)
            if input.schema.with.is_none()
                && input.serde.from.is_none()
                && input.serde.transparent.is_none() =>
        {
            quote! {
                #[automatically_derived]
                #[diagnostic::do_not_recommend]
                impl #impl_generics #p::SchemaObject for #ident #ty_generics #where_clause {}
            }
        }
        _ => quote!(),
    }
}

/// What a `#[schema(default)]` of this type may be: a unit enum's variant names when
/// serde reads its unit variants as those strings, else the kinds of its shape.
fn fit_of(p: &TokenStream, input: &Input) -> TokenStream {
    if let Body::Enum(Repr::External, variants) = &input.body
        && input.schema.with.is_none()
        && input.serde.from.is_none()
        && variants.iter().all(|v| v.serde.untagged.is_none())
    {
        let live: Vec<&Variant> = variants.iter().filter(|v| v.is_live()).collect();
        let names: Vec<&str> = live
            .iter()
            .filter(|v| v.style == Style::Unit)
            .map(|v| v.name.as_str())
            .collect();
        if !names.is_empty() {
            let fit = quote!(#p::Fit::strings(&[#(#names),*]));
            return if live.iter().any(|v| v.style != Style::Unit) {
                quote!(#fit.or_kinds(#p::kind::OBJECT))
            } else {
                fit
            };
        }
    }
    quote!(#p::Fit::of(<Self as #p::JsonShape>::SHAPE.kinds))
}

struct Cx<'a> {
    p: &'a TokenStream,
    /// Whether the type has type or const parameters.
    generic: bool,
    /// Statements type-checking the constraints against field types.
    asserts: Vec<TokenStream>,
    /// `where` predicates of the `JsonShape` impl. Each is written `for<'__dsh> Ty: Trait`:
    /// a bound under a binder is not "trivially false" for rustc, so when a field type
    /// lacks the trait the impl simply does not apply, instead of repeating the error the
    /// `ToolSchema` impl already reports.
    shape_bounds: Vec<syn::WherePredicate>,
}

impl Cx<'_> {
    fn shape_bound(&mut self, ty: &syn::Type, tr: TokenStream) {
        self.shape_bounds
            .push(syn::parse_quote!(for<'__dsh> #ty: #tr));
    }
}

// ---------------------------------------------------------------------------------------
// annotations and constraints

fn bound_tokens(p: &TokenStream, b: Option<Bound>) -> TokenStream {
    match b {
        None => quote!(::core::option::Option::None),
        Some(Bound::Int(i)) => {
            let lit = Literal::i128_unsuffixed(i);
            quote!(::core::option::Option::Some(#p::Bound::Int(#lit)))
        }
        Some(Bound::Float(f)) => {
            let lit = Literal::f64_unsuffixed(f);
            quote!(::core::option::Option::Some(#p::Bound::Float(#lit)))
        }
    }
}

fn opt_u64(v: Option<u64>) -> TokenStream {
    match v {
        None => quote!(::core::option::Option::None),
        Some(v) => {
            let lit = Literal::u64_unsuffixed(v);
            quote!(::core::option::Option::Some(#lit))
        }
    }
}

fn texts<'a>(items: impl Iterator<Item = &'a str>) -> TokenStream {
    let items = items.collect::<Vec<_>>();
    quote!(::core::option::Option::Some(&[#(#items),*]))
}

/// `Edit { .. }` for the doc and `#[schema]` keys of one item, or `None` when there is
/// nothing to apply.
pub(crate) fn edit(p: &TokenStream, doc: &[syn::Expr], s: &SchemaAttrs) -> Option<TokenStream> {
    let mut parts = Vec::new();
    if let Some(d) = &s.description {
        parts.push(quote!(description: #d,));
    } else if !doc.is_empty() {
        let d = doc_concat(doc);
        parts.push(quote!(description: #d,));
    }
    if let Some(t) = &s.title {
        parts.push(quote!(title: ::core::option::Option::Some(#t),));
    }
    if let Some(e) = &s.examples {
        let t = texts(e.iter().map(|j| j.text.as_str()));
        parts.push(quote!(examples: #t,));
    }
    if let Some(d) = &s.default {
        let t = &d.text;
        parts.push(quote!(default: ::core::option::Option::Some(#t),));
    }
    if let Some((h, _)) = &s.header {
        parts.push(quote!(header: ::core::option::Option::Some(#h),));
    }
    if let Some(r) = &s.range {
        let (min, max) = (bound_tokens(p, r.min), bound_tokens(p, r.max));
        parts.push(quote!(minimum: #min, maximum: #max,));
    }
    if let Some(l) = &s.length {
        let (min, max) = (opt_u64(l.min), opt_u64(l.max));
        parts.push(quote!(min_length: #min, max_length: #max,));
    }
    if let Some((pat, _)) = &s.pattern {
        parts.push(quote!(pattern: ::core::option::Option::Some(#pat),));
    }
    if let Some((values, _)) = &s.enum_values {
        let t = texts(values.iter().map(|j| j.text.as_str()));
        parts.push(quote!(enum_values: #t,));
    }
    if let Some((c, _)) = &s.const_value {
        let t = &c.text;
        parts.push(quote!(const_value: ::core::option::Option::Some(#t),));
    }
    if parts.is_empty() {
        None
    } else {
        Some(quote!(#p::Edit { #(#parts)* ..#p::Edit::NONE }))
    }
}

/// Apply an item's edit to an `Arc<Schema>` expression.
fn apply_arc(
    p: &TokenStream,
    doc: &[syn::Expr],
    s: &SchemaAttrs,
    base: TokenStream,
) -> TokenStream {
    match edit(p, doc, s) {
        Some(e) => quote!(#e.apply(#base)),
        None => base,
    }
}

/// Apply an item's edit to a `Schema` expression.
fn apply_node(
    p: &TokenStream,
    doc: &[syn::Expr],
    s: &SchemaAttrs,
    base: TokenStream,
) -> TokenStream {
    match edit(p, doc, s) {
        Some(e) => quote!(#e.node(#base)),
        None => base,
    }
}

/// Type-check a field's constraints against its type.
fn field_asserts(cx: &mut Cx, f: &Field) {
    if f.schema.with.is_some() {
        return;
    }
    let asserts = constraint_asserts(cx.p, &f.ty, &f.schema);
    cx.asserts.extend(asserts);
}

/// Statements asserting, at `ty`, the marker trait each constraint of `schema` needs
/// (`range` a number, `pattern` a string...), so a constraint on the wrong kind of type is
/// an error on that type. Shared with `#[tool]` parameters.
pub(crate) fn constraint_asserts(
    p: &TokenStream,
    ty: &syn::Type,
    schema: &SchemaAttrs,
) -> Vec<TokenStream> {
    let mut asserts = Vec::new();
    let mut need = |tr: &str| {
        let tr = format_ident!("{}", tr);
        asserts.push(quote_spanned! {ty.span()=>
            let () = <#ty as #p::#tr>::OK;
        });
    };
    if schema.range.is_some() {
        need("SchemaNumber");
    }
    if schema.length.is_some() {
        need("SchemaLength");
    }
    if schema.pattern.is_some() {
        need("SchemaString");
    }
    if schema.header.is_some() {
        need("SchemaHeader");
    }
    let kinds = schema
        .enum_values
        .iter()
        .flat_map(|(v, _)| v.iter().map(|j| j.kind))
        .chain(schema.const_value.iter().map(|(j, _)| j.kind))
        .next();
    match kinds {
        Some(JsonKind::String) => need("SchemaString"),
        Some(JsonKind::Int | JsonKind::Float) => need("SchemaNumber"),
        Some(JsonKind::Bool) => need("SchemaBool"),
        _ => {}
    }
    asserts
}

// ---------------------------------------------------------------------------------------
// fields

#[derive(Clone, Copy, PartialEq)]
enum Role {
    /// An object property: `Option<T>` is `T`, not required.
    Property,
    /// A value on its own (newtype payloads): `Option<T>` is `oneOf [T, null]`.
    Value,
}

/// The field's schema as an `Arc<Schema>` expression, with its doc and constraints.
fn field_schema(cx: &mut Cx, f: &Field, role: Role) -> TokenStream {
    field_asserts(cx, f);
    let p = cx.p;
    let base = match &f.schema.with {
        Some(with) => quote_spanned!(with.span()=> #p::Arc::new(#with())),
        None => {
            let ty = &f.ty;
            match role {
                Role::Property => {
                    quote_spanned!(ty.span()=> <#ty as #p::HasToolSchema>::property_schema())
                }
                Role::Value => quote_spanned!(ty.span()=> <#ty as #p::HasToolSchema>::schema()),
            }
        }
    };
    apply_arc(p, &f.doc, &f.schema, base)
}

/// Whether the key must be present, as a constant expression.
///
/// serde fills a missing key from `Default` when the field (or the struct) has
/// `#[serde(default)]`; otherwise it asks the field type to deserialize "nothing", which
/// only `Option`-like types accept (`ToolSchema::OPTIONAL`). A field read by a custom
/// function (`deserialize_with`, or described by `#[schema(with)]`) is required unless it
/// has a default: serde reports a missing key before calling the function.
fn required(cx: &Cx, f: &Field, container_default: bool) -> TokenStream {
    if f.serde.default.is_some() || container_default {
        return quote!(false);
    }
    if f.serde.custom_de.is_some() || f.schema.with.is_some() {
        return quote!(true);
    }
    let p = cx.p;
    let ty = &f.ty;
    quote_spanned!(ty.span()=> !<#ty as #p::HasToolSchema>::OPTIONAL)
}

fn property(cx: &mut Cx, f: &Field, container_default: bool) -> TokenStream {
    let p = cx.p;
    let name = &f.name;
    let schema = field_schema(cx, f, Role::Property);
    let schema = match serde_default(cx, f) {
        Some(value) => quote!(#p::serde_default(#schema, #value)),
        None => schema,
    };
    let req = required(cx, f, container_default);
    quote!(#p::property(#name, #schema, #req))
}

/// The field's `#[serde(default)]` / `#[serde(default = "path")]` value as an
/// `Option<Value>` expression, computed when the schema is built (once: the runtime caches
/// it) and published as the property's `default` when the value serializes and validates
/// against the property's schema. An explicit `#[schema(default = ..)]` wins, and a
/// field read by a custom function (`with`) has no computable JSON default. The `path`
/// form is called only in non-generic types, where its signature is known to fit.
fn serde_default(cx: &Cx, f: &Field) -> Option<TokenStream> {
    f.serde.default?;
    if f.schema.default.is_some() || f.schema.with.is_some() || f.serde.custom_de.is_some() {
        return None;
    }
    let p = cx.p;
    let ty = &f.ty;
    let probe = match &f.serde.default_fn {
        Some(path) if !cx.generic => {
            quote_spanned!(path.span()=> #p::DefaultFn::<#ty>(#path))
        }
        Some(_) => return None,
        None => quote!(#p::DefaultValue::<#ty>::NEW),
    };
    Some(quote! {{
        #[allow(unused_imports)]
        use #p::{DefaultJson as _, NoDefaultJson as _};
        (&#probe).default_json()
    }})
}

/// A closed (or open) object of named fields, as a `Schema` expression.
fn object(
    cx: &mut Cx,
    fields: &[Field],
    lead: Option<TokenStream>,
    open: bool,
    container_default: bool,
) -> TokenStream {
    let p = cx.p;
    let mut props: Vec<TokenStream> = lead.into_iter().collect();
    for f in fields.iter().filter(|f| f.is_live()) {
        props.push(property(cx, f, container_default));
    }
    quote!(#p::object(::std::vec![#(#props),*], #open))
}

/// The shape of an object of named fields.
fn object_shape(
    cx: &mut Cx,
    fields: &[Field],
    lead: &[&str],
    open: bool,
    container_default: bool,
) -> TokenStream {
    let p = cx.p.clone();
    let mut keys: Vec<TokenStream> = lead
        .iter()
        .map(|k| quote!(#p::Key { name: #k, required: true }))
        .collect();
    for f in fields.iter().filter(|f| f.is_live()) {
        let name = &f.name;
        let req = required(cx, f, container_default);
        if f.serde.default.is_none()
            && !container_default
            && f.serde.custom_de.is_none()
            && f.schema.with.is_none()
        {
            cx.shape_bound(&f.ty, quote!(#p::ToolSchema));
        }
        keys.push(quote!(#p::Key { name: #name, required: #req }));
    }
    let closed = !open;
    quote!(#p::Shape::object(&[#(#keys),*], #closed))
}

// ---------------------------------------------------------------------------------------
// build_schema

fn build_schema(cx: &mut Cx, input: &Input) -> TokenStream {
    let p = cx.p.clone();
    let node = if let Some(with) = &input.schema.with {
        quote_spanned!(with.span()=> #with())
    } else if let Some(from) = &input.serde.from {
        quote_spanned!(from.span()=> #p::Arc::unwrap_or_clone(<#from as #p::HasToolSchema>::schema()))
    } else {
        match &input.body {
            Body::Struct(style, fields) => struct_node(cx, input, *style, fields),
            Body::Enum(repr, variants) => enum_node(cx, repr, variants),
        }
    };
    apply_node(&p, &input.doc, &input.schema, node)
}

fn struct_node(cx: &mut Cx, input: &Input, style: Style, fields: &[Field]) -> TokenStream {
    let p = cx.p.clone();
    if input.serde.transparent.is_some() || style == Style::Tuple {
        return match input.transparent_field() {
            Some(f) => {
                let s = field_schema(cx, f, Role::Value);
                quote!(#p::Arc::unwrap_or_clone(#s))
            }
            None => quote!(#p::Schema::json()),
        };
    }
    match style {
        Style::Unit => quote!(#p::Schema::null()),
        _ => object(
            cx,
            fields,
            None,
            input.schema.open.is_some(),
            input.serde.default.is_some(),
        ),
    }
}

/// `const OPTIONAL` and `property_schema` for types serde reads straight through
/// (`transparent`, `from`): such a type is optional exactly when the inner one is.
fn optional_items(cx: &mut Cx, input: &Input) -> TokenStream {
    let p = cx.p.clone();
    if input.schema.with.is_some() {
        return quote!();
    }
    let (ty, field) = if let Some(from) = &input.serde.from {
        (from.clone(), None)
    } else if input.serde.transparent.is_some() {
        match input.transparent_field() {
            Some(f) if f.schema.with.is_none() && f.serde.custom_de.is_none() => {
                (f.ty.clone(), Some(f))
            }
            _ => return quote!(),
        }
    } else {
        return quote!();
    };
    let inner = quote_spanned!(ty.span()=> <#ty as #p::HasToolSchema>::property_schema());
    let inner = match field {
        Some(f) => apply_arc(&p, &f.doc, &f.schema, inner),
        None => inner,
    };
    let outer = apply_arc(&p, &input.doc, &input.schema, inner);
    let inner_facts = quote_spanned!(ty.span()=> <#ty as #p::HasToolSchema>::PROPERTY_PORTABILITY);
    let inner_facts = match field {
        Some(f) => facts::attrs(&p, inner_facts, &f.schema),
        None => inner_facts,
    };
    let outer_facts = facts::attrs(&p, inner_facts, &input.schema);
    quote! {
        const OPTIONAL: bool = <#ty as #p::HasToolSchema>::OPTIONAL;
        const PROPERTY_PORTABILITY: #p::Facts = if <#ty as #p::HasToolSchema>::OPTIONAL {
            #outer_facts
        } else {
            <Self as #p::ToolSchema>::PORTABILITY
        };

        fn property_schema() -> #p::Arc<#p::Schema>
        where
            Self: 'static,
        {
            if <#ty as #p::HasToolSchema>::OPTIONAL {
                #outer
            } else {
                <Self as #p::ToolSchema>::schema()
            }
        }
    }
}

fn has_annotations(v: &Variant) -> bool {
    !v.doc.is_empty()
        || v.schema.description.is_some()
        || v.schema.title.is_some()
        || v.schema.examples.is_some()
        || v.schema.default.is_some()
}

fn enum_node(cx: &mut Cx, repr: &Repr, variants: &[Variant]) -> TokenStream {
    let p = cx.p.clone();
    let live: Vec<&Variant> = variants.iter().filter(|v| v.is_live()).collect();
    if live.is_empty() {
        return quote!(#p::Schema::json());
    }
    // A unit-only externally tagged enum is a string enum; when its variants carry docs,
    // a `oneOf` of constants keeps each variant's description (as schemars does).
    if matches!(repr, Repr::External)
        && live.iter().all(|v| v.style == Style::Unit)
        && !live.iter().any(|v| has_annotations(v))
    {
        let names = live.iter().map(|v| &v.name);
        return quote!(#p::string_enum(&[#(#names),*]));
    }
    let mut branches = Vec::new();
    for v in &live {
        let node = variant_node(cx, repr, v);
        let node = apply_node(&p, &v.doc, &v.schema, node);
        branches.push(quote!(#p::Arc::new(#node)));
    }
    quote!(#p::one_of(::std::vec![#(#branches),*]))
}

/// The payload of a newtype variant: its single field.
fn payload(v: &Variant) -> Option<&Field> {
    match v.style {
        Style::Tuple => v.fields.first(),
        _ => None,
    }
}

fn variant_node(cx: &mut Cx, repr: &Repr, v: &Variant) -> TokenStream {
    let p = cx.p.clone();
    let name = &v.name;
    let open = v.schema.open.is_some();
    match repr {
        Repr::External => match v.style {
            Style::Unit => quote!(#p::string_const(#name)),
            _ => {
                let content = variant_content(cx, v);
                quote!(#p::object(::std::vec![#p::property(#name, #content, true)], false))
            }
        },
        Repr::Internal { tag } => {
            let lead = quote!(#p::tag_property(#tag, #name));
            match v.style {
                Style::Unit => quote!(#p::object(::std::vec![#lead], #open)),
                Style::Named => object(cx, &v.fields, Some(lead), open, false),
                Style::Tuple => match payload(v) {
                    Some(f) => {
                        if f.schema.with.is_none() {
                            let ty = &f.ty;
                            cx.asserts.push(quote_spanned! {ty.span()=>
                                let () = <#ty as #p::SchemaObject>::OK;
                            });
                        }
                        let s = field_schema(cx, f, Role::Value);
                        quote!(#p::inline_tag(#tag, #name, #s))
                    }
                    None => quote!(#p::Schema::json()),
                },
            }
        }
        Repr::Adjacent { tag, content } => {
            let lead = quote!(#p::tag_property(#tag, #name));
            match v.style {
                Style::Unit => quote!(#p::object(::std::vec![#lead], false)),
                Style::Named => {
                    let inner = object(cx, &v.fields, None, open, false);
                    quote!(#p::object(
                        ::std::vec![#lead, #p::property(#content, #p::Arc::new(#inner), true)],
                        false
                    ))
                }
                Style::Tuple => match payload(v) {
                    Some(f) => {
                        // serde fills a missing content from "nothing", like a missing field.
                        let s = field_schema(cx, f, Role::Property);
                        let req = required(cx, f, false);
                        quote!(#p::object(
                            ::std::vec![#lead, #p::property(#content, #s, #req)],
                            false
                        ))
                    }
                    None => quote!(#p::Schema::json()),
                },
            }
        }
        Repr::Untagged => match v.style {
            Style::Unit => quote!(#p::Schema::null()),
            _ => {
                let s = variant_content(cx, v);
                quote!(#p::Arc::unwrap_or_clone(#s))
            }
        },
    }
}

/// The JSON a data-carrying variant holds (after its tag, if any), as `Arc<Schema>`.
fn variant_content(cx: &mut Cx, v: &Variant) -> TokenStream {
    let p = cx.p.clone();
    match v.style {
        Style::Named => {
            let o = object(cx, &v.fields, None, v.schema.open.is_some(), false);
            quote!(#p::Arc::new(#o))
        }
        Style::Tuple => match payload(v) {
            Some(f) => field_schema(cx, f, Role::Value),
            None => quote!(#p::Arc::new(#p::Schema::json())),
        },
        Style::Unit => quote!(#p::Arc::new(#p::Schema::null())),
    }
}

// ---------------------------------------------------------------------------------------
// shapes and untagged overlaps

fn any_shape(p: &TokenStream) -> TokenStream {
    quote!(#p::Shape::of(#p::kind::ANY))
}

fn shape_of(cx: &mut Cx, input: &Input) -> TokenStream {
    let p = cx.p.clone();
    if input.schema.with.is_some() {
        return any_shape(&p);
    }
    if let Some(from) = &input.serde.from {
        cx.shape_bound(from, quote!(#p::JsonShape));
        return quote_spanned!(from.span()=> <#from as #p::JsonShape>::SHAPE);
    }
    match &input.body {
        Body::Struct(style, fields) => {
            if input.serde.transparent.is_some() || *style == Style::Tuple {
                return match input.transparent_field() {
                    Some(f) => payload_shape(cx, f),
                    None => any_shape(&p),
                };
            }
            match style {
                Style::Unit => quote!(#p::Shape::of(#p::kind::NULL)),
                _ => object_shape(
                    cx,
                    fields,
                    &[],
                    input.schema.open.is_some(),
                    input.serde.default.is_some(),
                ),
            }
        }
        Body::Enum(repr, variants) => {
            let live: Vec<&Variant> = variants.iter().filter(|v| v.is_live()).collect();
            match repr {
                Repr::External => {
                    let mut kinds = Vec::new();
                    if live.iter().any(|v| v.style == Style::Unit) {
                        kinds.push(quote!(#p::kind::STRING));
                    }
                    if live.iter().any(|v| v.style != Style::Unit) {
                        kinds.push(quote!(#p::kind::OBJECT));
                    }
                    if kinds.is_empty() {
                        return any_shape(&p);
                    }
                    quote!(#p::Shape::of(#(#kinds)|*))
                }
                Repr::Internal { .. } | Repr::Adjacent { .. } => {
                    quote!(#p::Shape::of(#p::kind::OBJECT))
                }
                Repr::Untagged => {
                    let mut shapes = live.iter().map(|v| variant_shape(cx, v));
                    match shapes.next() {
                        Some(first) => {
                            let rest: Vec<TokenStream> = shapes.collect();
                            quote!(#first #(.union(#rest))*)
                        }
                        None => any_shape(&p),
                    }
                }
            }
        }
    }
}

fn payload_shape(cx: &mut Cx, f: &Field) -> TokenStream {
    let p = cx.p.clone();
    if f.schema.with.is_some() {
        return any_shape(&p);
    }
    let ty = &f.ty;
    cx.shape_bound(ty, quote!(#p::JsonShape));
    quote_spanned!(ty.span()=> <#ty as #p::JsonShape>::SHAPE)
}

/// The shape of an untagged variant.
fn variant_shape(cx: &mut Cx, v: &Variant) -> TokenStream {
    let p = cx.p.clone();
    match v.style {
        Style::Unit => quote!(#p::Shape::of(#p::kind::NULL)),
        Style::Named => object_shape(cx, &v.fields, &[], v.schema.open.is_some(), false),
        Style::Tuple => match payload(v) {
            Some(f) => payload_shape(cx, f),
            None => any_shape(&p),
        },
    }
}

const KIND_NAMES: &[(&str, &str)] = &[
    ("NULL", "`null`"),
    ("BOOLEAN", "boolean"),
    ("NUMBER", "number"),
    ("STRING", "string"),
    ("ARRAY", "array"),
    ("OBJECT", "object"),
];

/// For an untagged enum, statements that panic (at compile time) when two variants can
/// match the same JSON value. Exactly one `oneOf` branch must match, so overlapping
/// variants would make valid values fail validation; serde would pick the first.
fn overlap_checks(cx: &mut Cx, input: &Input) -> Option<TokenStream> {
    let Body::Enum(Repr::Untagged, variants) = &input.body else {
        return None;
    };
    if input.schema.with.is_some() || input.serde.from.is_some() {
        return None;
    }
    let p = cx.p.clone();
    let live: Vec<&Variant> = variants.iter().filter(|v| v.is_live()).collect();
    let shapes: Vec<TokenStream> = live.iter().map(|v| variant_shape(cx, v)).collect();
    let mut checks = Vec::new();
    for j in 1..live.len() {
        for i in 0..j {
            let (a, b) = (&live[i], &live[j]);
            // Two unit variants are reported by `validate` with a better span.
            if a.style == Style::Unit && b.style == Style::Unit {
                continue;
            }
            let (sa, sb) = (&shapes[i], &shapes[j]);
            let arms = KIND_NAMES.iter().map(|(k, noun)| {
                let k = format_ident!("{}", k);
                let msg = format!(
                    "untagged variants `{}` and `{}` can both match the same JSON {noun}: exactly one `oneOf` branch must match (and serde would always pick `{}`); make their JSON disjoint, or tag the enum with `#[serde(tag = \"..\")]`",
                    a.ident, b.ident, a.ident
                );
                quote_spanned!(b.ident.span()=> #p::kind::#k => ::core::panic!(#msg),)
            });
            let span = b.ident.span();
            checks.push(quote_spanned! {span=>
                match #p::overlap(&#sa, &#sb) {
                    0 => {}
                    #(#arms)*
                    _ => {}
                }
            });
        }
    }
    if checks.is_empty() {
        return None;
    }
    Some(quote!(#(#checks)*))
}

// ---------------------------------------------------------------------------------------
// portability facts

/// `const PORTABILITY`: the facts of the schema `build_schema` builds, combined from the
/// field types' facts in the same structure (see `dsh_runtime::schema::portable`).
pub(crate) mod facts {
    use proc_macro2::{Literal, TokenStream};
    use quote::{quote, quote_spanned};
    use syn::spanned::Spanned;

    use super::super::keys::{Bound, JsonKind, SchemaAttrs};
    use super::super::model::{Field, Input, Repr, Style, Variant};
    use super::{Role, has_annotations, payload};

    fn unknown(p: &TokenStream) -> TokenStream {
        quote!(#p::Facts::UNKNOWN)
    }

    fn any_json(p: &TokenStream) -> TokenStream {
        quote!(#p::Facts::PLAIN.with(#p::feature::ANY_JSON))
    }

    fn string(p: &TokenStream) -> TokenStream {
        quote!(#p::Facts::of(#p::root::STRING))
    }

    /// The container's facts (its own `#[schema]` keys applied last, as `apply_node`).
    pub(crate) fn container(p: &TokenStream, input: &Input) -> TokenStream {
        let node = if input.schema.with.is_some() {
            return unknown(p);
        } else if let Some(from) = &input.serde.from {
            quote_spanned!(from.span()=> <#from as #p::HasToolSchema>::PORTABILITY)
        } else {
            match &input.body {
                super::super::model::Body::Struct(style, fields) => {
                    if input.serde.transparent.is_some() || *style == Style::Tuple {
                        match input.transparent_field() {
                            Some(f) => field(p, f, Role::Value, false),
                            None => any_json(p),
                        }
                    } else if *style == Style::Unit {
                        quote!(#p::Facts::PLAIN)
                    } else {
                        object(p, fields, None, input.schema.open.is_some())
                    }
                }
                super::super::model::Body::Enum(repr, variants) => enumeration(p, repr, variants),
            }
        };
        attrs(p, node, &input.schema)
    }

    /// `base` with the facts of an item's `#[schema]` keys.
    pub(crate) fn attrs(p: &TokenStream, base: TokenStream, s: &SchemaAttrs) -> TokenStream {
        let mut out = base;
        if let Some(l) = &s.length {
            let opt = |v: Option<u64>| match v {
                Some(v) => {
                    let lit = Literal::u64_unsuffixed(v);
                    quote!(::core::option::Option::Some(#lit))
                }
                None => quote!(::core::option::Option::None),
            };
            let (min, max) = (opt(l.min), opt(l.max));
            out = quote!(#out.length(#min, #max));
        }
        if let Some(r) = &s.range {
            let informative = |b: Option<Bound>| match b {
                Some(Bound::Int(i)) => {
                    i != i128::from(i64::MIN)
                        && i != i128::from(i64::MAX)
                        && i != i128::from(u64::MAX)
                }
                Some(Bound::Float(f)) => f.is_finite(),
                None => false,
            };
            if informative(r.min) || informative(r.max) {
                out = quote!(#out.bounded());
            }
        }
        let mut features = Vec::new();
        if let Some(e) = &s.examples {
            features.push(quote!(#p::feature::EXAMPLES));
            if e.len() > 1 {
                features.push(quote!(#p::feature::EXAMPLES_MANY));
            }
        }
        if s.default.is_some() {
            features.push(quote!(#p::feature::DEFAULT));
        }
        let non_string = s
            .enum_values
            .iter()
            .flat_map(|(v, _)| v.iter().map(|j| j.kind))
            .chain(s.const_value.iter().map(|(j, _)| j.kind))
            .any(|k| k != JsonKind::String);
        if non_string {
            features.push(quote!(#p::feature::NON_STRING_ENUM));
        }
        if !features.is_empty() {
            out = quote!(#out.with(#(#features)|*));
        }
        out
    }

    /// A field's facts: its type's (as a property or a value), its keys, and a published
    /// `#[serde(default)]` when `property`.
    fn field(p: &TokenStream, f: &Field, role: Role, property: bool) -> TokenStream {
        if f.schema.with.is_some() {
            return unknown(p);
        }
        let ty = &f.ty;
        let base = match role {
            Role::Property => {
                quote_spanned!(ty.span()=> <#ty as #p::HasToolSchema>::PROPERTY_PORTABILITY)
            }
            Role::Value => quote_spanned!(ty.span()=> <#ty as #p::HasToolSchema>::PORTABILITY),
        };
        let mut out = attrs(p, base, &f.schema);
        // `serde_default` publishes the field's default (when it serializes): counted as
        // a `default`, the one case where the export may in fact publish none.
        if property
            && f.serde.default.is_some()
            && f.schema.default.is_none()
            && f.serde.custom_de.is_none()
        {
            out = quote!(#out.with(#p::feature::DEFAULT));
        }
        out
    }

    /// An object of the live `fields`, after the lead (tag) property.
    fn object(p: &TokenStream, fields: &[Field], lead: Option<&str>, open: bool) -> TokenStream {
        let live: Vec<&Field> = fields.iter().filter(|f| f.is_live()).collect();
        let count = live.len() + usize::from(lead.is_some());
        let mut out = quote!(#p::Facts::object(#count, #open));
        if let Some(tag) = lead {
            let s = string(p);
            out = quote!(#out.property(#tag, #s));
        }
        for f in live {
            let name = &f.name;
            let ff = field(p, f, Role::Property, true);
            out = quote!(#out.property(#name, #ff));
        }
        out
    }

    fn enumeration(p: &TokenStream, repr: &Repr, variants: &[Variant]) -> TokenStream {
        let live: Vec<&Variant> = variants.iter().filter(|v| v.is_live()).collect();
        if live.is_empty() {
            return any_json(p);
        }
        if matches!(repr, Repr::External)
            && live.iter().all(|v| v.style == Style::Unit)
            && !live.iter().any(|v| has_annotations(v))
        {
            return string(p);
        }
        // Documented unit variants only (descriptions and titles): strict exports write
        // the `oneOf` of described strings as an `enum` (`export::project`).
        if matches!(repr, Repr::External)
            && live.len() >= 2
            && live.iter().all(|v| {
                v.style == Style::Unit && v.schema.examples.is_none() && v.schema.default.is_none()
            })
        {
            let s = string(p);
            return quote!(#s.with(#p::feature::DOCUMENTED_ENUM).rooted(#p::root::OTHER));
        }
        let branches: Vec<TokenStream> = live
            .iter()
            .map(|v| attrs(p, variant(p, repr, v), &v.schema))
            .collect();
        if branches.len() == 1 {
            return branches.into_iter().next().unwrap_or_else(|| any_json(p));
        }
        quote!(#p::Facts::union(&[#(#branches),*]))
    }

    fn variant(p: &TokenStream, repr: &Repr, v: &Variant) -> TokenStream {
        let name = &v.name;
        let open = v.schema.open.is_some();
        match repr {
            Repr::External => match v.style {
                Style::Unit => string(p),
                _ => {
                    let c = content(p, v);
                    quote!(#p::Facts::object(1, false).property(#name, #c))
                }
            },
            Repr::Internal { tag } => match v.style {
                Style::Unit => object(p, &[], Some(tag), open),
                Style::Named => object(p, &v.fields, Some(tag), open),
                Style::Tuple => match payload(v) {
                    Some(f) => {
                        let pf = field(p, f, Role::Value, false);
                        quote!(#pf.merge(#p::Facts::name(#tag), ""))
                    }
                    None => any_json(p),
                },
            },
            Repr::Adjacent { tag, content: key } => {
                let s = string(p);
                let lead = quote!(#p::Facts::object(2, false).property(#tag, #s));
                match v.style {
                    Style::Unit => {
                        quote!(#p::Facts::object(1, false).property(#tag, #s))
                    }
                    Style::Named => {
                        let inner = object(p, &v.fields, None, open);
                        quote!(#lead.property(#key, #inner))
                    }
                    Style::Tuple => match payload(v) {
                        Some(f) => {
                            let c = field(p, f, Role::Property, false);
                            quote!(#lead.property(#key, #c))
                        }
                        None => any_json(p),
                    },
                }
            }
            Repr::Untagged => match v.style {
                Style::Unit => quote!(#p::Facts::PLAIN),
                _ => content(p, v),
            },
        }
    }

    fn content(p: &TokenStream, v: &Variant) -> TokenStream {
        match v.style {
            Style::Named => object(p, &v.fields, None, v.schema.open.is_some()),
            Style::Tuple => match payload(v) {
                Some(f) => field(p, f, Role::Value, false),
                None => any_json(p),
            },
            Style::Unit => quote!(#p::Facts::PLAIN),
        }
    }
}
