//! Rules that span several items of one input: the shape of the whole struct, recursion
//! through field types, property and variant names that collide after renames, and the
//! untagged-enum overlaps that can be decided without types (the rest is proved by rustc
//! in a constant, see `expand.rs`).

use std::collections::HashMap;

use crate::ctxt::Ctxt;
use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;

use super::keys::error;
use super::model::{Body, Field, Input, Repr, Style, Variant};

pub(super) fn validate(input: &Input, errors: &mut Ctxt) {
    if let Some(span) = input.schema.enum_names
        && !unit_enum(input)
    {
        errors.push(error(
            span,
            "`enum_names` applies to an enum of unit variants (an elicitation form's single-select field, written as MCP's legacy `enum` + `enumNames`); remove it",
        ));
    }
    match &input.body {
        Body::Struct(style, fields) => validate_struct(input, *style, fields, errors),
        Body::Enum(repr, variants) => validate_enum(input, repr, variants, errors),
    }
}

/// A struct: `transparent` and tuple structs, recursion, and property names.
fn validate_struct(input: &Input, style: Style, fields: &[Field], errors: &mut Ctxt) {
    let custom = input.schema.with.is_some();
    let live = fields.iter().filter(|f| f.is_live()).count();
    if let Some(span) = input.serde.transparent {
        if live != 1 && !custom {
            errors.push(error(
                span,
                "`transparent` needs exactly one field that is not skipped",
            ));
        }
    } else if style == Style::Tuple && !custom && input.serde.from.is_none() {
        if fields.len() > 1 {
            errors.push(error(
                input.ident.span(),
                format!(
                    "tuple struct `{}` has no tool schema: the schema vocabulary has no positional arrays; use named fields, or `#[serde(transparent)]` when all fields but one are skipped",
                    input.ident
                ),
            ));
        } else if live == 0 {
            errors.push(error(
                input.ident.span(),
                "a newtype struct whose field is skipped is not supported by `ToolSchema`",
            ));
        }
    }
    if !custom && input.serde.from.is_none() {
        for f in fields {
            check_recursion(input, f, errors);
        }
        if style == Style::Named {
            check_names(fields.iter(), None, errors);
        }
    }
}

/// An enum: a live variant, variant names after renames, recursion, property names, and
/// at most one untagged unit variant.
fn validate_enum(input: &Input, repr: &Repr, variants: &[Variant], errors: &mut Ctxt) {
    if input.schema.with.is_some() || input.serde.from.is_some() {
        return;
    }
    if !variants.iter().any(|v| v.is_live()) {
        errors.push(error(
            input.ident.span(),
            format!(
                "enum `{}` has no variant serde can deserialize, so it has no tool schema",
                input.ident
            ),
        ));
    }
    let mut names: HashMap<&str, &syn::Ident> = HashMap::new();
    let mut unit: Option<&syn::Ident> = None;
    for v in variants.iter().filter(|v| v.is_live()) {
        if let Some(first) = names.insert(&v.name, &v.ident)
            && !matches!(repr, Repr::Untagged)
        {
            errors.push(error(
                v.ident.span(),
                format!(
                    "variants `{first}` and `{}` are both named \"{}\" after renames; serde can only ever read the first",
                    v.ident, v.name
                ),
            ));
        }
        for f in &v.fields {
            check_recursion(input, f, errors);
        }
        if v.style == Style::Named {
            let tag = match repr {
                Repr::Internal { tag } => Some(tag.as_str()),
                _ => None,
            };
            check_names(v.fields.iter(), tag, errors);
        }
        if matches!(repr, Repr::Untagged) && v.style == Style::Unit {
            match unit {
                Some(first) => errors.push(error(
                    v.ident.span(),
                    format!(
                        "untagged unit variants `{first}` and `{}` both read `null`: exactly one `oneOf` branch must match, and serde would always pick `{first}`; keep one unit variant, or tag the enum (`#[serde(tag = \"..\")]`)",
                        v.ident
                    ),
                )),
                None => unit = Some(&v.ident),
            }
        }
    }
}

/// Whether serde reads the input as one of its unit variants' names: an externally
/// tagged enum whose live variants are all unit variants (what a form offers as choices).
pub(super) fn unit_enum(input: &Input) -> bool {
    match &input.body {
        Body::Enum(Repr::External, variants) => {
            input.schema.with.is_none()
                && input.serde.from.is_none()
                && variants.iter().any(|v| v.is_live())
                && variants
                    .iter()
                    .filter(|v| v.is_live())
                    .all(|v| v.style == Style::Unit && v.serde.untagged.is_none())
        }
        _ => false,
    }
}

/// Two properties of one object with the same key (after renames), or a field named like
/// the tag of an internally tagged enum.
fn check_names<'a>(fields: impl Iterator<Item = &'a Field>, tag: Option<&str>, errors: &mut Ctxt) {
    let mut seen: HashMap<&str, &Field> = HashMap::new();
    for f in fields.filter(|f| f.is_live()) {
        // A field named like the internal tag is reported by serde's own derive.
        if tag == Some(f.name.as_str()) {
            continue;
        }
        if let Some(first) = seen.insert(&f.name, f) {
            let first = first
                .ident
                .as_ref()
                .map_or_else(|| first.name.clone(), |i| i.to_string());
            errors.push(error(
                f.span,
                format!(
                    "duplicate property \"{}\" (after renames): field `{first}` has the same key; rename one of them",
                    f.name
                ),
            ));
        }
    }
}

/// A field whose type mentions the type being derived. Schemas are finite trees (the
/// vocabulary has no `$ref`), so a recursive type cannot have one. The check is textual
/// and conservative: a different type with the same name in another module is flagged
/// too (give the field `#[schema(with = ..)]` then).
fn check_recursion(input: &Input, field: &Field, errors: &mut Ctxt) {
    if !field.is_live() || field.schema.with.is_some() {
        return;
    }
    if let Some(span) = find_ident(field.ty.to_token_stream(), &input.ident) {
        let what = field
            .ident
            .as_ref()
            .map_or_else(|| "this field".to_string(), |i| format!("field `{i}`"));
        errors.push(error(
            span,
            format!(
                "recursive type: {what} contains `{}` itself, and a tool schema is a finite tree (no `$ref`); bound the nesting with a separate type, or describe the field with `#[schema(with = path::to::fn)]`",
                input.ident
            ),
        ));
    }
}

fn find_ident(tokens: TokenStream, target: &syn::Ident) -> Option<proc_macro2::Span> {
    for tt in tokens {
        match tt {
            TokenTree::Ident(i) if i == *target || i == "Self" => return Some(i.span()),
            TokenTree::Group(g) => {
                if let Some(s) = find_ident(g.stream(), target) {
                    return Some(s);
                }
            }
            _ => {}
        }
    }
    None
}
