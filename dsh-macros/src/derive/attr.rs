//! Reading `#[serde(...)]` and `#[schema(...)]` attributes.
//!
//! Both are read key by key with `parse_nested_meta`, so every error is spanned on the key
//! (or value) it is about and parsing goes on after it: all errors of one derive are
//! reported together. Checks that need only one attribute live here; rules spanning
//! several items are in `validate.rs`.

use std::collections::HashSet;

use crate::ctxt::Ctxt;
use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::parse::ParseStream;
use syn::spanned::Spanned;
use syn::{LitStr, Token};

use super::case::RenameRule;
use super::keys::{Bound, Json, JsonKind, Length, Pos, Range, SchemaAttrs, error, json_string};

// ---------------------------------------------------------------------------------------
// serde

// The serde attributes the derive understands, and what it does with each. Anything else
// is an error: a serde attribute the derive cannot interpret could make serde accept
// something the schema does not describe.
const SERDE_RENAME: &str = "rename";
const SERDE_RENAME_ALL: &str = "rename_all";
const SERDE_RENAME_ALL_FIELDS: &str = "rename_all_fields";
const SERDE_TAG: &str = "tag";
const SERDE_CONTENT: &str = "content";
const SERDE_UNTAGGED: &str = "untagged";
const SERDE_DEFAULT: &str = "default";
const SERDE_SKIP: &str = "skip";
const SERDE_SKIP_DESERIALIZING: &str = "skip_deserializing";
const SERDE_TRANSPARENT: &str = "transparent";
const SERDE_FROM: &str = "from";
const SERDE_TRY_FROM: &str = "try_from";
const SERDE_DESERIALIZE_WITH: &str = "deserialize_with";
const SERDE_WITH: &str = "with";

/// Keys serde accepts that the derive understands, with the positions where serde
/// accepts them. Keys that only affect serialization are accepted and ignored.
const SERDE_KEYS: &[(&str, &[Pos])] = &[
    (SERDE_RENAME, &[Pos::Container, Pos::Variant, Pos::Field]),
    (SERDE_RENAME_ALL, &[Pos::Container, Pos::Variant]),
    (SERDE_RENAME_ALL_FIELDS, &[Pos::Container]),
    (SERDE_TAG, &[Pos::Container]),
    (SERDE_CONTENT, &[Pos::Container]),
    (SERDE_UNTAGGED, &[Pos::Container]),
    (SERDE_DEFAULT, &[Pos::Container, Pos::Field]),
    ("deny_unknown_fields", &[Pos::Container]),
    (SERDE_TRANSPARENT, &[Pos::Container]),
    (SERDE_FROM, &[Pos::Container]),
    (SERDE_TRY_FROM, &[Pos::Container]),
    ("into", &[Pos::Container]),
    ("bound", &[Pos::Container, Pos::Variant, Pos::Field]),
    ("crate", &[Pos::Container]),
    ("expecting", &[Pos::Container]),
    (SERDE_SKIP, &[Pos::Variant, Pos::Field]),
    (SERDE_SKIP_DESERIALIZING, &[Pos::Variant, Pos::Field]),
    ("skip_serializing", &[Pos::Variant, Pos::Field]),
    ("skip_serializing_if", &[Pos::Field]),
    ("serialize_with", &[Pos::Variant, Pos::Field]),
    (SERDE_DESERIALIZE_WITH, &[Pos::Variant, Pos::Field]),
    (SERDE_WITH, &[Pos::Variant, Pos::Field]),
    ("borrow", &[Pos::Variant, Pos::Field]),
];

/// serde keys the derive cannot keep in agreement, with the fix to name.
fn serde_unsupported(key: &str) -> Option<&'static str> {
    Some(match key {
        "flatten" => {
            "`#[serde(flatten)]` is not supported by `ToolSchema`: a closed object cannot take the flattened fields' keys and the schema vocabulary has no `allOf`; declare the fields directly in this struct, or keep the nested struct as an ordinary field"
        }
        "alias" => {
            "`#[serde(alias)]` is not supported by `ToolSchema`: the schema can publish only one name per property; remove the alias (publish the name the model should use with `rename`)"
        }
        "other" => {
            "`#[serde(other)]` is not supported by `ToolSchema`: a catch-all variant accepts names the schema cannot list; remove it, or describe the enum by hand with `#[schema(with = path::to::fn)]` on the enum"
        }
        "remote" => {
            "`#[serde(remote)]` is not supported by `ToolSchema`; derive `ToolSchema` on the remote type's own definition, or implement `ToolSchema` by hand"
        }
        "variant_identifier" | "field_identifier" => {
            "identifier enums are not supported by `ToolSchema`; implement `ToolSchema` by hand"
        }
        "getter" => "`#[serde(getter)]` (remote derives) is not supported by `ToolSchema`",
        "non_exhaustive" => "`#[serde(non_exhaustive)]` is not supported by `ToolSchema`",
        _ => return None,
    })
}

/// What the serde attributes of one item say, as far as the schema is concerned.
#[derive(Default)]
pub(crate) struct Serde {
    /// The name serde deserializes (`rename` or `rename(deserialize = ..)`).
    pub rename: Option<String>,
    pub rename_all: Option<RenameRule>,
    pub rename_all_fields: Option<RenameRule>,
    pub tag: Option<(String, Span)>,
    pub content: Option<(String, Span)>,
    pub untagged: Option<Span>,
    pub default: Option<Span>,
    /// The function of `default = "path"`.
    pub default_fn: Option<syn::ExprPath>,
    pub transparent: Option<Span>,
    pub from: Option<syn::Type>,
    pub try_from: Option<Span>,
    /// `skip` or `skip_deserializing`.
    pub skip: bool,
    /// `deserialize_with` or `with`: the key and its span.
    pub custom_de: Option<(&'static str, Span)>,
}

fn known_serde_keys(pos: Pos) -> String {
    SERDE_KEYS
        .iter()
        .filter(|(_, ps)| ps.contains(&pos))
        .map(|(k, _)| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Read every `#[serde(...)]` attribute of one item.
pub(crate) fn parse_serde(attrs: &[syn::Attribute], pos: Pos, errors: &mut Ctxt) -> Serde {
    let mut out = Serde::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let result = attr.parse_nested_meta(|meta| {
            let Some(known) = serde_key(&meta, pos, errors) else {
                return skip_value(&meta);
            };
            serde_value(known, &meta, &mut out)
        });
        if let Err(e) = result {
            errors.push(e);
        }
    }
    out
}

/// The serde attribute `meta` names, or `None` (reported) when `ToolSchema` does not
/// support it, does not know it, or it does not apply at `pos`.
fn serde_key(meta: &ParseNestedMeta, pos: Pos, errors: &mut Ctxt) -> Option<&'static str> {
    let key = meta_key(meta);
    let span = meta.path.span();
    if let Some(fix) = serde_unsupported(&key) {
        errors.push(error(span, fix));
        return None;
    }
    let Some((known, positions)) = SERDE_KEYS.iter().find(|(k, _)| *k == key) else {
        errors.push(error(
            span,
            format!(
                "unknown serde attribute `{key}`: `ToolSchema` cannot tell what it makes serde accept; the serde attributes understood on {} are {}",
                pos.noun(),
                known_serde_keys(pos)
            ),
        ));
        return None;
    };
    if !positions.contains(&pos) {
        let msg = if key == SERDE_UNTAGGED && pos == Pos::Variant {
            "`#[serde(untagged)]` on a variant is not supported by `ToolSchema`; put `#[serde(untagged)]` on the enum, or tag this variant like the others".to_string()
        } else {
            format!(
                "serde does not accept `{key}` on {}; the serde attributes understood there are {}",
                pos.noun(),
                known_serde_keys(pos)
            )
        };
        errors.push(error(span, msg));
        return None;
    }
    Some(known)
}

/// What the serde attribute `known` says, into `out`.
fn serde_value(known: &'static str, meta: &ParseNestedMeta, out: &mut Serde) -> syn::Result<()> {
    let span = meta.path.span();
    match known {
        SERDE_RENAME => {
            let (_, de) = ser_de(meta)?;
            if let Some(de) = de {
                out.rename = Some(de.value());
            }
        }
        SERDE_RENAME_ALL | SERDE_RENAME_ALL_FIELDS => {
            let (_, de) = ser_de(meta)?;
            if let Some(lit) = de {
                // An unknown convention is reported by serde's own derive (the
                // `serde` attribute exists only next to one), so it is not
                // repeated here.
                match RenameRule::from_str(&lit.value()) {
                    Some(rule) if known == SERDE_RENAME_ALL => out.rename_all = Some(rule),
                    Some(rule) => out.rename_all_fields = Some(rule),
                    None => {}
                }
            }
        }
        SERDE_TAG => {
            let lit = lit_str(meta)?;
            out.tag = Some((lit.value(), span));
        }
        SERDE_CONTENT => {
            let lit = lit_str(meta)?;
            out.content = Some((lit.value(), span));
        }
        SERDE_UNTAGGED => out.untagged = Some(span),
        SERDE_TRANSPARENT => out.transparent = Some(span),
        SERDE_DEFAULT => {
            if meta.input.peek(Token![=]) {
                // An unparsable path is reported by serde's own derive.
                out.default_fn = lit_str(meta)?.parse::<syn::ExprPath>().ok();
            }
            out.default = Some(span);
        }
        SERDE_SKIP | SERDE_SKIP_DESERIALIZING => out.skip = true,
        SERDE_FROM => {
            let lit = lit_str(meta)?;
            out.from = Some(lit.parse::<syn::Type>()?);
        }
        SERDE_TRY_FROM => {
            lit_str(meta)?;
            out.try_from = Some(span);
        }
        SERDE_DESERIALIZE_WITH | SERDE_WITH => {
            lit_str(meta)?;
            out.custom_de = Some((known, span));
        }
        _ => return skip_value(meta),
    }
    Ok(())
}

/// `key = "x"` (both sides) or `key(serialize = "a", deserialize = "b")`.
fn ser_de(meta: &ParseNestedMeta) -> syn::Result<(Option<LitStr>, Option<LitStr>)> {
    if meta.input.peek(Token![=]) {
        let lit = lit_str(meta)?;
        return Ok((Some(lit.clone()), Some(lit)));
    }
    let mut ser = None;
    let mut de = None;
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("serialize") {
            ser = Some(lit_str(&inner)?);
            Ok(())
        } else if inner.path.is_ident("deserialize") {
            de = Some(lit_str(&inner)?);
            Ok(())
        } else {
            Err(inner.error("expected `serialize = \"...\"` or `deserialize = \"...\"`"))
        }
    })?;
    Ok((ser, de))
}

fn lit_str(meta: &ParseNestedMeta) -> syn::Result<LitStr> {
    meta.value()?.parse::<LitStr>()
}

fn meta_key(meta: &ParseNestedMeta) -> String {
    match meta.path.get_ident() {
        Some(i) => i.to_string().trim_start_matches("r#").to_string(),
        None => {
            let path = &meta.path;
            quote::quote!(#path).to_string().replace(' ', "")
        }
    }
}

/// Consume the value of a key that was already reported, so parsing continues with the
/// next key.
fn skip_value(meta: &ParseNestedMeta) -> syn::Result<()> {
    let input = meta.input;
    if input.peek(syn::token::Paren) {
        input.parse::<proc_macro2::TokenTree>()?;
    } else if input.peek(Token![=]) {
        input.parse::<Token![=]>()?;
        while !input.is_empty() && !input.peek(Token![,]) {
            input.parse::<proc_macro2::TokenTree>()?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// #[schema(...)]

const KEY_DESCRIPTION: &str = "description";
const KEY_TITLE: &str = "title";
const KEY_OPEN: &str = "open";
const KEY_RANGE: &str = "range";
const KEY_LENGTH: &str = "length";
const KEY_PATTERN: &str = "pattern";
const KEY_EXAMPLES: &str = "examples";
const KEY_EXAMPLE: &str = "example";
const KEY_DEFAULT: &str = "default";
const KEY_WITH: &str = "with";
const KEY_ENUM: &str = "enum";
const KEY_CONST: &str = "const";
const KEY_CRATE: &str = "crate";
const KEY_HEADER: &str = "header";
const KEY_ENUM_NAMES: &str = "enum_names";

/// Every `#[schema]` key with the positions where it applies.
///
/// A `#[tool]` parameter takes a field's keys except `with`: a parameter is read with its
/// type's own `Deserialize`, so its schema is always the type's.
const SCHEMA_KEYS: &[(&str, &[Pos])] = &[
    (
        KEY_DESCRIPTION,
        &[Pos::Container, Pos::Variant, Pos::Field, Pos::Param],
    ),
    (
        KEY_TITLE,
        &[Pos::Container, Pos::Variant, Pos::Field, Pos::Param],
    ),
    (
        KEY_EXAMPLES,
        &[Pos::Container, Pos::Variant, Pos::Field, Pos::Param],
    ),
    (
        KEY_EXAMPLE,
        &[Pos::Container, Pos::Variant, Pos::Field, Pos::Param],
    ),
    (
        KEY_DEFAULT,
        &[Pos::Container, Pos::Variant, Pos::Field, Pos::Param],
    ),
    (KEY_OPEN, &[Pos::Container, Pos::Variant]),
    (KEY_RANGE, &[Pos::Field, Pos::Param]),
    (KEY_LENGTH, &[Pos::Field, Pos::Param]),
    (KEY_PATTERN, &[Pos::Field, Pos::Param]),
    (KEY_ENUM, &[Pos::Field, Pos::Param]),
    (KEY_CONST, &[Pos::Field, Pos::Param]),
    (KEY_HEADER, &[Pos::Param]),
    (KEY_WITH, &[Pos::Container, Pos::Field]),
    (KEY_CRATE, &[Pos::Container]),
    (KEY_ENUM_NAMES, &[Pos::Container]),
];

fn schema_keys(pos: Pos) -> String {
    SCHEMA_KEYS
        .iter()
        .filter(|(_, ps)| ps.contains(&pos))
        .map(|(k, _)| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Read every `#[schema(...)]` attribute of one item.
pub(crate) fn parse_schema(attrs: &[syn::Attribute], pos: Pos, errors: &mut Ctxt) -> SchemaAttrs {
    let mut out = SchemaAttrs::default();
    let mut seen: HashSet<&'static str> = HashSet::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("schema")) {
        if let syn::Meta::Path(p) = &attr.meta {
            errors.push(error(
                p.span(),
                format!(
                    "expected `#[schema(...)]` with keys; valid keys on {} are {}",
                    pos.noun(),
                    schema_keys(pos)
                ),
            ));
            continue;
        }
        let result = attr.parse_nested_meta(|meta| {
            let Some(known) = schema_key(&meta, pos, &mut seen, errors) else {
                return skip_value(&meta);
            };
            schema_value(known, &meta, &mut out, errors)
        });
        if let Err(e) = result {
            errors.push(e);
        }
    }
    if let (Some((values, _)), Some((c, span))) = (&out.enum_values, &out.const_value)
        && !values.iter().any(|v| v.text == c.text)
    {
        errors.push(error(*span, "`const` must be one of the `enum` values"));
    }
    super::default::check_literal(&out, pos, errors);
    out
}

/// The `#[schema]` key `meta` names, or `None` (reported) when it is unknown, does not
/// apply at `pos` or was given before.
fn schema_key(
    meta: &ParseNestedMeta,
    pos: Pos,
    seen: &mut HashSet<&'static str>,
    errors: &mut Ctxt,
) -> Option<&'static str> {
    let key = meta_key(meta);
    let span = meta.path.span();
    let Some((known, positions)) = SCHEMA_KEYS.iter().find(|(k, _)| *k == key) else {
        let valid: Vec<&str> = SCHEMA_KEYS
            .iter()
            .filter(|(_, ps)| ps.contains(&pos))
            .map(|(k, _)| *k)
            .collect();
        // JSON Schema's own keyword names are a likely first guess.
        let hint = match key.as_str() {
            "minimum" | "maximum" | "min" | "max" | "exclusiveMinimum" | "exclusiveMaximum" => {
                " (write `range(min = .., max = ..)`)".to_string()
            }
            "minLength" | "maxLength" | "min_length" | "max_length" | "minItems" | "maxItems" => {
                " (write `length(min = .., max = ..)`)".to_string()
            }
            _ => crate::suggest::hint(&key, &valid),
        };
        errors.push(error(
            span,
            format!(
                "unknown `schema` key `{key}`{hint}; valid keys on {} are {}",
                pos.noun(),
                schema_keys(pos)
            ),
        ));
        return None;
    };
    if !positions.contains(&pos) {
        errors.push(error(
            span,
            format!(
                "`{key}` does not apply to {}; valid keys there are {}",
                pos.noun(),
                schema_keys(pos)
            ),
        ));
        return None;
    }
    // `example` and `examples` set the same annotation.
    let slot = if *known == KEY_EXAMPLE {
        KEY_EXAMPLES
    } else {
        known
    };
    if !seen.insert(slot) {
        errors.push(error(
            span,
            if slot == KEY_EXAMPLES {
                "duplicate `schema` key: `example`/`examples` given twice; list every example in one `examples = [..]`".to_string()
            } else {
                format!("duplicate `schema` key `{key}`; give each key once")
            },
        ));
        return None;
    }
    Some(known)
}

/// The value of the `#[schema]` key `known`, into `out`.
fn schema_value(
    known: &'static str,
    meta: &ParseNestedMeta,
    out: &mut SchemaAttrs,
    errors: &mut Ctxt,
) -> syn::Result<()> {
    let span = meta.path.span();
    match known {
        KEY_DESCRIPTION => out.description = Some(meta.value()?.parse()?),
        KEY_TITLE => out.title = Some(meta.value()?.parse()?),
        KEY_OPEN => {
            if !meta.input.is_empty() && !meta.input.peek(Token![,]) {
                return Err(meta.error("`open` takes no value: write `#[schema(open)]`"));
            }
            out.open = Some(span);
        }
        KEY_ENUM_NAMES => {
            if !meta.input.is_empty() && !meta.input.peek(Token![,]) {
                return Err(
                    meta.error("`enum_names` takes no value: write `#[schema(enum_names)]`")
                );
            }
            out.enum_names = Some(span);
        }
        KEY_RANGE => out.range = Some(parse_range(meta, errors)?),
        KEY_LENGTH => out.length = Some(parse_length(meta, errors)?),
        KEY_PATTERN => out.pattern = Some(pattern_value(meta, errors)?),
        KEY_EXAMPLES => {
            let input = meta.value()?;
            let items = parse_json_array(input)?;
            out.examples = Some(items);
        }
        KEY_EXAMPLE => {
            let input = meta.value()?;
            out.examples = Some(vec![parse_json(input)?]);
        }
        KEY_DEFAULT => {
            let input = meta.value()?;
            let start = input.span();
            let value = parse_json(input)?;
            out.default_span = Some(start);
            out.default = Some(value);
        }
        KEY_WITH => out.with = Some(parse_path(meta)?),
        KEY_HEADER => {
            let lit = lit_str(meta)?;
            let name = lit.value();
            if let Err(why) = check_header_name(&name) {
                errors.push(error(lit.span(), why));
            }
            out.header = Some((name, lit.span()));
        }
        KEY_CRATE => out.krate = Some(parse_path(meta)?),
        KEY_ENUM => out.enum_values = Some(enum_value(meta, span, errors)?),
        KEY_CONST => out.const_value = Some(const_value(meta, span, errors)?),
        _ => return skip_value(meta),
    }
    Ok(())
}

/// `pattern = ".."`: the regex, checked to compile.
fn pattern_value(meta: &ParseNestedMeta, errors: &mut Ctxt) -> syn::Result<(String, Span)> {
    let lit = lit_str(meta)?;
    let src = lit.value();
    if let Err(e) = regex_syntax::ParserBuilder::new().build().parse(&src) {
        errors.push(error(
            lit.span(),
            format!(
                "invalid `pattern`: the regex does not compile: {}",
                e.to_string().lines().last().unwrap_or_default().trim()
            ),
        ));
    }
    Ok((src, lit.span()))
}

/// `enum = [..]`: scalar values of one JSON type.
fn enum_value(
    meta: &ParseNestedMeta,
    span: Span,
    errors: &mut Ctxt,
) -> syn::Result<(Vec<Json>, Span)> {
    let input = meta.value()?;
    let start = input.span();
    let items = parse_json_array(input)?;
    if items.is_empty() {
        errors.push(error(start, "`enum` must list at least one value"));
    }
    for (i, item) in items.iter().enumerate() {
        if !scalar(item.kind) {
            errors.push(error(
                start,
                format!(
                    "`enum` values must be strings, numbers or booleans, but entry {i} is {}",
                    kind_noun(item.kind)
                ),
            ));
        } else if !same_family(items[0].kind, item.kind) {
            errors.push(error(
                start,
                format!("`enum` values must all have one JSON type, but entry {i} is {} and entry 0 is {}", kind_noun(item.kind), kind_noun(items[0].kind)),
            ));
        }
    }
    Ok((items, span))
}

/// `const = ..`: a scalar value.
fn const_value(meta: &ParseNestedMeta, span: Span, errors: &mut Ctxt) -> syn::Result<(Json, Span)> {
    let input = meta.value()?;
    let start = input.span();
    let value = parse_json(input)?;
    if !scalar(value.kind) {
        errors.push(error(
            start,
            format!(
                "`const` must be a string, number or boolean, not {}",
                kind_noun(value.kind)
            ),
        ));
    }
    Ok((value, span))
}

/// An `x-mcp-header` name must be an HTTP field-name token (RFC 9110 `1*tchar`): the
/// client sends the argument as the header `Mcp-Param-<name>`.
fn check_header_name(name: &str) -> Result<(), String> {
    let tchar = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    let fix = "`header` names the HTTP header `Mcp-Param-<name>` the argument is repeated in, so it must be an HTTP token: ASCII letters, digits and ``!#$%&'*+-.^_`|~``";
    if name.is_empty() {
        return Err(format!(
            "empty `header` name: {fix}; write e.g. `header = \"Region\"`"
        ));
    }
    match name.char_indices().find(|(_, c)| !tchar(*c)) {
        None => Ok(()),
        Some((_, bad)) => {
            let suggestion: String = name.chars().filter(|c| tchar(*c)).collect();
            let example = if suggestion.is_empty() {
                "Region".to_string()
            } else {
                suggestion
            };
            Err(format!(
                "invalid `header` name {name:?}: {bad:?} is not allowed; {fix}; write e.g. `header = \"{example}\"`"
            ))
        }
    }
}

fn scalar(kind: JsonKind) -> bool {
    matches!(
        kind,
        JsonKind::Bool | JsonKind::Int | JsonKind::Float | JsonKind::String
    )
}

fn same_family(a: JsonKind, b: JsonKind) -> bool {
    let fam = |k| match k {
        JsonKind::Int | JsonKind::Float => JsonKind::Float,
        k => k,
    };
    fam(a) == fam(b)
}

fn kind_noun(kind: JsonKind) -> &'static str {
    match kind {
        JsonKind::Null => "null",
        JsonKind::Bool => "a boolean",
        JsonKind::Int | JsonKind::Float => "a number",
        JsonKind::String => "a string",
        JsonKind::Array => "an array",
        JsonKind::Object => "an object",
    }
}

/// `key = path` or `key = "path"`.
fn parse_path(meta: &ParseNestedMeta) -> syn::Result<syn::Path> {
    let input = meta.value()?;
    if input.peek(LitStr) {
        input.parse::<LitStr>()?.parse()
    } else {
        input.parse()
    }
}

fn parse_range(meta: &ParseNestedMeta, errors: &mut Ctxt) -> syn::Result<Range> {
    let span = meta.path.span();
    let mut range = Range {
        min: None,
        max: None,
    };
    if !meta.input.peek(syn::token::Paren) {
        return Err(meta.error("expected `range(min = .., max = ..)`"));
    }
    meta.parse_nested_meta(|inner| {
        let which = if inner.path.is_ident("min") {
            &mut range.min
        } else if inner.path.is_ident("max") {
            &mut range.max
        } else {
            return Err(inner.error("unknown `range` key; expected `min = ..` and/or `max = ..`"));
        };
        if which.is_some() {
            return Err(inner.error("duplicate `range` bound"));
        }
        let input = inner.value()?;
        let start = input.span();
        let lit = parse_json(input)?;
        *which = Some(match lit.kind {
            JsonKind::Int => Bound::Int(
                lit.text
                    .parse::<i128>()
                    .map_err(|_| syn::Error::new(start, "`range` bound out of range"))?,
            ),
            JsonKind::Float => Bound::Float(
                lit.text
                    .parse::<f64>()
                    .map_err(|_| syn::Error::new(start, "`range` bound is not a number"))?,
            ),
            _ => {
                return Err(syn::Error::new(
                    start,
                    "`range` bounds must be number literals",
                ));
            }
        });
        Ok(())
    })?;
    if range.min.is_none() && range.max.is_none() {
        errors.push(error(span, "`range` needs `min = ..`, `max = ..` or both"));
    }
    if let (Some(a), Some(b)) = (range.min, range.max)
        && a.as_f64() > b.as_f64()
    {
        errors.push(error(span, "`range` has `min` greater than `max`"));
    }
    Ok(range)
}

fn parse_length(meta: &ParseNestedMeta, errors: &mut Ctxt) -> syn::Result<Length> {
    let span = meta.path.span();
    let mut length = Length {
        min: None,
        max: None,
    };
    if !meta.input.peek(syn::token::Paren) {
        return Err(meta.error("expected `length(min = .., max = ..)`"));
    }
    meta.parse_nested_meta(|inner| {
        let which = if inner.path.is_ident("min") {
            &mut length.min
        } else if inner.path.is_ident("max") {
            &mut length.max
        } else {
            return Err(inner.error("unknown `length` key; expected `min = ..` and/or `max = ..`"));
        };
        if which.is_some() {
            return Err(inner.error("duplicate `length` bound"));
        }
        let lit: syn::LitInt = inner.value()?.parse()?;
        *which = Some(lit.base10_parse::<u64>().map_err(|_| {
            syn::Error::new(lit.span(), "`length` bounds must be non-negative integers")
        })?);
        Ok(())
    })?;
    if length.min.is_none() && length.max.is_none() {
        errors.push(error(span, "`length` needs `min = ..`, `max = ..` or both"));
    }
    if let (Some(a), Some(b)) = (length.min, length.max)
        && a > b
    {
        errors.push(error(span, "`length` has `min` greater than `max`"));
    }
    Ok(length)
}

// ---------------------------------------------------------------------------------------
// JSON-ish literals: `null`, `true`/`false`, numbers (optionally negative), strings,
// `[..]` arrays and `{ "key": value, .. }` objects.

fn parse_json_array(input: ParseStream) -> syn::Result<Vec<Json>> {
    if !input.peek(syn::token::Bracket) {
        return Err(input.error("expected a list of JSON literals: `[..]`"));
    }
    let content;
    syn::bracketed!(content in input);
    let mut items = Vec::new();
    while !content.is_empty() {
        items.push(parse_json(&content)?);
        if content.is_empty() {
            break;
        }
        content.parse::<Token![,]>()?;
    }
    Ok(items)
}

pub(crate) fn parse_json(input: ParseStream) -> syn::Result<Json> {
    if input.peek(syn::token::Bracket) {
        let items = parse_json_array(input)?;
        let text = format!(
            "[{}]",
            items
                .iter()
                .map(|j| j.text.as_str())
                .collect::<Vec<_>>()
                .join(",")
        );
        return Ok(Json {
            text,
            kind: JsonKind::Array,
        });
    }
    if input.peek(syn::token::Brace) {
        return parse_json_object(input);
    }
    let negative = input.peek(Token![-]);
    if negative {
        input.parse::<Token![-]>()?;
    }
    let lookahead = input.lookahead1();
    if lookahead.peek(syn::LitInt) {
        return json_int(input, negative);
    }
    if lookahead.peek(syn::LitFloat) {
        return json_float(input, negative);
    }
    if negative {
        return Err(lookahead.error());
    }
    if lookahead.peek(LitStr) {
        let lit: LitStr = input.parse()?;
        return Ok(Json {
            text: json_string(&lit.value()),
            kind: JsonKind::String,
        });
    }
    if lookahead.peek(syn::LitBool) {
        let lit: syn::LitBool = input.parse()?;
        return Ok(Json {
            text: lit.value.to_string(),
            kind: JsonKind::Bool,
        });
    }
    if input.peek(syn::Ident) {
        let fork = input.fork();
        let ident: syn::Ident = fork.parse()?;
        if ident == "null" {
            input.parse::<syn::Ident>()?;
            return Ok(Json {
                text: "null".into(),
                kind: JsonKind::Null,
            });
        }
    }
    Err(input.error(
        "expected a JSON literal: `null`, `true`, `false`, a number, a string, `[..]` or `{ \"key\": .. }`",
    ))
}

/// A JSON object literal `{ "key": value, .. }` (each key once).
fn parse_json_object(input: ParseStream) -> syn::Result<Json> {
    let content;
    syn::braced!(content in input);
    let mut parts = Vec::new();
    let mut keys = HashSet::new();
    while !content.is_empty() {
        let key: LitStr = content.parse()?;
        if !keys.insert(key.value()) {
            return Err(syn::Error::new(key.span(), "duplicate key in JSON object"));
        }
        content.parse::<Token![:]>()?;
        let value = parse_json(&content)?;
        parts.push(format!("{}:{}", json_string(&key.value()), value.text));
        if content.is_empty() {
            break;
        }
        content.parse::<Token![,]>()?;
    }
    Ok(Json {
        text: format!("{{{}}}", parts.join(",")),
        kind: JsonKind::Object,
    })
}

/// An integer literal (after an optional `-`), within `i128`.
fn json_int(input: ParseStream, negative: bool) -> syn::Result<Json> {
    let lit: syn::LitInt = input.parse()?;
    no_suffix(lit.suffix(), lit.span())?;
    let v = lit
        .base10_parse::<u128>()
        .map_err(|_| syn::Error::new(lit.span(), "number literal out of range"))?;
    let text = if negative && v != 0 {
        format!("-{v}")
    } else {
        v.to_string()
    };
    if text.parse::<i128>().is_err() {
        return Err(syn::Error::new(lit.span(), "number literal out of range"));
    }
    Ok(Json {
        text,
        kind: JsonKind::Int,
    })
}

/// A finite float literal (after an optional `-`); `-0.0` written as `0.0`.
fn json_float(input: ParseStream, negative: bool) -> syn::Result<Json> {
    let lit: syn::LitFloat = input.parse()?;
    no_suffix(lit.suffix(), lit.span())?;
    let v: f64 = lit.base10_parse()?;
    if !v.is_finite() {
        return Err(syn::Error::new(lit.span(), "number literal is not finite"));
    }
    let v = if negative { -v } else { v };
    // `-0.0` is not lossless JSON.
    let v = if v == 0.0 { 0.0 } else { v };
    Ok(Json {
        text: format!("{v:?}"),
        kind: JsonKind::Float,
    })
}

fn no_suffix(suffix: &str, span: Span) -> syn::Result<()> {
    if suffix.is_empty() {
        Ok(())
    } else {
        Err(syn::Error::new(
            span,
            format!("remove the `{suffix}` suffix: JSON numbers have no type suffix"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(tokens: proc_macro2::TokenStream) -> syn::Result<Json> {
        syn::parse::Parser::parse2(parse_json, tokens)
    }

    #[test]
    fn json_literals_render_as_json() {
        let cases = [
            (quote::quote!(null), "null"),
            (quote::quote!(true), "true"),
            (quote::quote!(-3), "-3"),
            (quote::quote!(-0), "0"),
            (quote::quote!(1.5e3), "1500.0"),
            (quote::quote!(-0.0), "0.0"),
            (quote::quote!("a\"b\n"), "\"a\\\"b\\n\""),
            (quote::quote!([1, "x", [], {}]), "[1,\"x\",[],{}]"),
            (
                quote::quote!({ "k": [true], "n": null }),
                "{\"k\":[true],\"n\":null}",
            ),
        ];
        for (tokens, text) in cases {
            assert_eq!(json(tokens).map(|j| j.text).ok().as_deref(), Some(text));
        }
    }

    #[test]
    fn bad_json_literals_are_errors() {
        for tokens in [
            quote::quote!(1u8),
            quote::quote!(foo),
            quote::quote!({ "a": 1, "a": 2 }),
            quote::quote!(-"x"),
            quote::quote!(1e400),
        ] {
            assert!(json(tokens).is_err());
        }
    }

    #[test]
    fn unknown_schema_keys_get_a_suggestion() {
        let mut acc = Ctxt::new();
        let a: syn::Attribute =
            syn::parse_quote!(#[schema(lenght(max = 3), descripion = "x", zzz)]);
        parse_schema(&[a], Pos::Field, &mut acc);
        let errs = acc.messages();
        assert_eq!(errs.len(), 3, "{errs:#?}");
        assert!(errs[0].starts_with(
            "unknown `schema` key `lenght` (did you mean `length`?); valid keys on a field are"
        ));
        assert!(
            errs[1].starts_with("unknown `schema` key `descripion` (did you mean `description`?)")
        );
        assert!(errs[2].starts_with("unknown `schema` key `zzz`; valid keys"));
    }

    fn schema_errors(attr: syn::Attribute, pos: Pos) -> usize {
        let mut acc = Ctxt::new();
        parse_schema(&[attr], pos, &mut acc);
        acc.len()
    }

    #[test]
    fn schema_keys_accumulate_errors() {
        let a: syn::Attribute =
            syn::parse_quote!(#[schema(nope, range(min = 1), range(max = 2), open)]);
        // unknown key, duplicate `range`, `open` on a field
        assert_eq!(schema_errors(a, Pos::Field), 3);
        let ok: syn::Attribute = syn::parse_quote!(#[schema(range(min = -1, max = 2.5), length(max = 3), pattern = "^a+$", examples = [1, {"a": null}], default = "a", enum = ["a", "b"], const = "a")]);
        assert_eq!(schema_errors(ok, Pos::Field), 0);
        // A default is checked against each of the item's own keys.
        let bad_default: syn::Attribute = syn::parse_quote!(#[schema(range(min = -1, max = 2.5), default = 3, enum = [1, 2], const = 1)]);
        assert_eq!(schema_errors(bad_default, Pos::Field), 3);
        let bad_default: syn::Attribute =
            syn::parse_quote!(#[schema(length(max = 1), pattern = "^a+$", default = "bb")]);
        assert_eq!(schema_errors(bad_default, Pos::Param), 2);
        let bad_pattern: syn::Attribute = syn::parse_quote!(#[schema(pattern = "(")]);
        assert_eq!(schema_errors(bad_pattern, Pos::Field), 1);
        let reversed: syn::Attribute =
            syn::parse_quote!(#[schema(range(min = 3, max = 1), length(min = 2, max = 1))]);
        assert_eq!(schema_errors(reversed, Pos::Field), 2);
    }

    fn serde_errors(attr: syn::Attribute, pos: Pos) -> (Serde, usize) {
        let mut acc = Ctxt::new();
        let s = parse_serde(&[attr], pos, &mut acc);
        (s, acc.len())
    }

    #[test]
    fn serde_keys() {
        let (s, n) = serde_errors(
            syn::parse_quote!(#[serde(rename(serialize = "a", deserialize = "b"), default = "f", skip_serializing_if = "x", bound = "T: X")]),
            Pos::Field,
        );
        assert_eq!(
            (s.rename.as_deref(), s.default.is_some(), n),
            (Some("b"), true, 0)
        );
        let (_, n) = serde_errors(
            syn::parse_quote!(#[serde(flatten, alias = "x", mystery, tag = "t")]),
            Pos::Field,
        );
        assert_eq!(n, 4);
        let (s, n) = serde_errors(
            syn::parse_quote!(#[serde(rename_all = "camelCase", tag = "kind", content = "c")]),
            Pos::Container,
        );
        assert_eq!(
            (s.rename_all, s.tag.map(|t| t.0), s.content.map(|c| c.0), n),
            (
                Some(RenameRule::Camel),
                Some("kind".into()),
                Some("c".into()),
                0
            )
        );
    }
}
