//! From the derive input to the model: darling walks the item, the attribute readers in
//! `attr.rs` read `#[serde]` and `#[schema]`, and names are resolved the way serde
//! resolves them. Single-item rules (an attribute that does not fit the item's shape) are
//! checked here, every error accumulated.

use crate::ctxt::Ctxt;
use darling::ast::{Data, Fields};
use darling::{FromDeriveInput, FromField, FromVariant};
use syn::spanned::Spanned;

use super::attr::{parse_schema, parse_serde};
use super::case::RenameRule;
use super::keys::{Pos, error};
use super::model::{Body, Field, Input, Repr, Style, Variant};
use crate::doc::doc_exprs;

#[derive(FromDeriveInput)]
#[darling(forward_attrs(doc, serde, schema))]
struct InputRec {
    ident: syn::Ident,
    generics: syn::Generics,
    data: Data<VariantRec, FieldRec>,
    attrs: Vec<syn::Attribute>,
}

#[derive(FromVariant)]
#[darling(forward_attrs(doc, serde, schema))]
struct VariantRec {
    ident: syn::Ident,
    fields: Fields<FieldRec>,
    attrs: Vec<syn::Attribute>,
}

#[derive(FromField)]
#[darling(forward_attrs(doc, serde, schema))]
struct FieldRec {
    ident: Option<syn::Ident>,
    ty: syn::Type,
    attrs: Vec<syn::Attribute>,
}

fn style(s: darling::ast::Style) -> Style {
    match s {
        darling::ast::Style::Struct => Style::Named,
        darling::ast::Style::Tuple => Style::Tuple,
        darling::ast::Style::Unit => Style::Unit,
    }
}

/// serde's name for an identifier (raw identifiers lose their `r#`).
fn unraw(ident: &syn::Ident) -> String {
    let s = ident.to_string();
    s.strip_prefix("r#").map(str::to_string).unwrap_or(s)
}

pub(super) fn from_ast(input: &syn::DeriveInput, errors: &mut Ctxt) -> Option<Input> {
    if let syn::Data::Union(u) = &input.data {
        errors.push(error(
            u.union_token.span,
            "`ToolSchema` cannot be derived for a union: serde cannot deserialize unions; use a struct or an enum",
        ));
        return None;
    }
    let rec = errors.handle(InputRec::from_derive_input(input))?;

    if let Some(lt) = rec.generics.lifetimes().next() {
        errors.push(error(
            lt.lifetime.span(),
            "`ToolSchema` cannot be derived for a type with lifetime parameters: tool arguments are deserialized from owned JSON; use owned types (`String`, `Vec<T>`, `Cow<'static, str>`)",
        ));
    }

    let serde = parse_serde(&rec.attrs, Pos::Container, errors);
    let schema = parse_schema(&rec.attrs, Pos::Container, errors);
    let doc = doc_exprs(&rec.attrs);

    let body = match rec.data {
        Data::Struct(fields) => {
            let (st, fields) = fields.split();
            let st = style(st);
            let rule = serde.rename_all;
            let fields = fields
                .into_iter()
                .enumerate()
                .map(|(i, f)| field(f, i, rule, errors))
                .collect();
            container_struct_checks(&serde, &schema, st, errors);
            Body::Struct(st, fields)
        }
        Data::Enum(variants) => {
            let repr = repr(&serde, errors);
            container_enum_checks(&serde, &schema, errors);
            let variants = variants
                .into_iter()
                .map(|v| variant(v, &serde, errors))
                .collect();
            Body::Enum(repr, variants)
        }
    };

    Some(Input {
        ident: rec.ident,
        generics: rec.generics,
        doc,
        serde,
        schema,
        body,
    })
}

fn field(rec: FieldRec, index: usize, rule: Option<RenameRule>, errors: &mut Ctxt) -> Field {
    let serde = parse_serde(&rec.attrs, Pos::Field, errors);
    let schema = parse_schema(&rec.attrs, Pos::Field, errors);
    let name = match (&serde.rename, &rec.ident) {
        (Some(r), _) => r.clone(),
        (None, Some(ident)) => {
            let n = unraw(ident);
            rule.map_or(n.clone(), |r| r.apply_to_field(&n))
        }
        (None, None) => index.to_string(),
    };
    if let Some((key, span)) = serde.custom_de
        && schema.with.is_none()
    {
        errors.push(error(
            span,
            format!(
                "`#[serde({key} = ..)]` makes serde accept whatever that function accepts, which `ToolSchema` cannot see; add `#[schema(with = path::to::fn)]` naming a `fn() -> dsh_runtime::schema::Schema` that describes it"
            ),
        ));
    }
    let span = rec
        .ident
        .as_ref()
        .map_or_else(|| rec.ty.span(), |i| i.span());
    Field {
        doc: doc_exprs(&rec.attrs),
        ident: rec.ident,
        ty: rec.ty,
        name,
        serde,
        schema,
        span,
    }
}

fn variant(rec: VariantRec, container: &super::attr::Serde, errors: &mut Ctxt) -> Variant {
    let serde = parse_serde(&rec.attrs, Pos::Variant, errors);
    let schema = parse_schema(&rec.attrs, Pos::Variant, errors);
    let name = match &serde.rename {
        Some(r) => r.clone(),
        None => {
            let n = unraw(&rec.ident);
            container
                .rename_all
                .map_or(n.clone(), |r| r.apply_to_variant(&n))
        }
    };
    let (st, fields) = rec.fields.split();
    let st = style(st);
    // A variant's own `rename_all` wins over the enum's `rename_all_fields`.
    let rule = serde.rename_all.or(container.rename_all_fields);
    let fields: Vec<Field> = fields
        .into_iter()
        .enumerate()
        .map(|(i, f)| field(f, i, rule, errors))
        .collect();
    if let Some((key, span)) = serde.custom_de {
        errors.push(error(
            span,
            format!(
                "`#[serde({key} = ..)]` on a variant is not supported by `ToolSchema`; put it on the variant's field together with `#[schema(with = path::to::fn)]`"
            ),
        ));
    }
    if let Some(span) = schema.open
        && st != Style::Named
    {
        errors.push(error(
            span,
            "`open` applies to structs and struct variants with named fields",
        ));
    }
    if !serde.skip && st == Style::Tuple && fields.len() > 1 {
        errors.push(error(
            rec.ident.span(),
            format!(
                "tuple variant `{}` has no tool schema: the schema vocabulary has no positional arrays; use named fields (`{} {{ .. }}`) or a single field holding a struct",
                rec.ident, rec.ident
            ),
        ));
    }
    if !serde.skip && st == Style::Tuple && fields.iter().any(|f| f.serde.skip) {
        errors.push(error(
            rec.ident.span(),
            "skipped fields in tuple variants are not supported by `ToolSchema`",
        ));
    }
    Variant {
        doc: doc_exprs(&rec.attrs),
        ident: rec.ident,
        name,
        style: st,
        fields,
        serde,
        schema,
    }
}

fn repr(serde: &super::attr::Serde, errors: &mut Ctxt) -> Repr {
    match (&serde.tag, &serde.content, serde.untagged) {
        (None, None, Some(_)) => Repr::Untagged,
        (_, _, Some(span)) => {
            errors.push(error(
                span,
                "`untagged` cannot be combined with `tag` or `content`; pick one representation",
            ));
            Repr::Untagged
        }
        (Some((tag, _)), None, None) => Repr::Internal { tag: tag.clone() },
        (Some((tag, tspan)), Some((content, _)), None) => {
            if tag == content {
                errors.push(error(*tspan, "`tag` and `content` must be different keys"));
            }
            Repr::Adjacent {
                tag: tag.clone(),
                content: content.clone(),
            }
        }
        (None, Some((_, span)), None) => {
            errors.push(error(
                *span,
                "`content` needs `tag`: write `#[serde(tag = \"..\", content = \"..\")]`",
            ));
            Repr::External
        }
        (None, None, None) => Repr::External,
    }
}

fn container_struct_checks(
    serde: &super::attr::Serde,
    schema: &super::keys::SchemaAttrs,
    st: Style,
    errors: &mut Ctxt,
) {
    if let Some((_, span)) = &serde.tag {
        errors.push(error(
            *span,
            "`tag` on a struct is not supported by `ToolSchema`; use an internally tagged enum",
        ));
    }
    if let Some((_, span)) = &serde.content {
        errors.push(error(*span, "`content` applies to enums"));
    }
    if let Some(span) = serde.untagged {
        errors.push(error(span, "`untagged` applies to enums"));
    }
    if let Some(span) = schema.open
        && st != Style::Named
    {
        errors.push(error(span, "`open` applies to structs with named fields"));
    }
    if let Some(span) = serde.try_from
        && schema.with.is_none()
    {
        errors.push(error(
            span,
            "`#[serde(try_from = ..)]` makes serde accept what the conversion accepts, which `ToolSchema` cannot see; add `#[schema(with = path::to::fn)]` naming a `fn() -> dsh_runtime::schema::Schema` that describes it",
        ));
    }
}

fn container_enum_checks(
    serde: &super::attr::Serde,
    schema: &super::keys::SchemaAttrs,
    errors: &mut Ctxt,
) {
    if let Some(span) = serde.default {
        errors.push(error(span, "`default` on a container applies to structs"));
    }
    if let Some(span) = serde.transparent {
        errors.push(error(span, "`transparent` applies to structs"));
    }
    if let Some(span) = schema.open {
        errors.push(error(
            span,
            "`open` applies to structs; put it on a struct variant instead",
        ));
    }
    if let Some(span) = serde.try_from
        && schema.with.is_none()
    {
        errors.push(error(
            span,
            "`#[serde(try_from = ..)]` makes serde accept what the conversion accepts, which `ToolSchema` cannot see; add `#[schema(with = path::to::fn)]` naming a `fn() -> dsh_runtime::schema::Schema` that describes it",
        ));
    }
}
