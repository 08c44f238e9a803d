//! Parse `#[resource(...)]` and `#[prompt(...)]` keys.
//!
//! Read by hand from darling's `NestedMeta` list, like `#[tool(...)]`'s keys (see
//! `tool/attr.rs` for why): lowercase messages that list the valid keys and say how to
//! write a value, a "did you mean" for a misspelt key, and every key that parses kept
//! even when others do not.

use darling::ast::NestedMeta;
use proc_macro2::{Span, TokenStream};

use crate::ctxt::Ctxt;

pub(crate) const URI: &str = "uri";
pub(crate) const NAME: &str = "name";
pub(crate) const TITLE: &str = "title";
pub(crate) const DESCRIPTION: &str = "description";
pub(crate) const MIME_TYPE: &str = "mime_type";
pub(crate) const SIZE: &str = "size";
pub(crate) const AUDIENCE: &str = "audience";
pub(crate) const PRIORITY: &str = "priority";
pub(crate) const LAST_MODIFIED: &str = "last_modified";
pub(crate) const CRATE: &str = "crate";
pub(crate) const STRUCT_NAME: &str = "struct_name";

/// The keys of `#[resource]`, in the order messages list them.
pub(crate) const RESOURCE_KEYS: &[&str] = &[
    URI,
    NAME,
    TITLE,
    DESCRIPTION,
    MIME_TYPE,
    SIZE,
    AUDIENCE,
    PRIORITY,
    LAST_MODIFIED,
    CRATE,
    STRUCT_NAME,
];

/// The keys of `#[prompt]`.
pub(crate) const PROMPT_KEYS: &[&str] = &[NAME, TITLE, DESCRIPTION, CRATE, STRUCT_NAME];

/// Who a resource is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    User,
    Assistant,
}

impl Role {
    const ALL: [(&'static str, Role); 2] = [("user", Role::User), ("assistant", Role::Assistant)];

    /// The variant's name in `dsh_runtime::content::Role`.
    pub(crate) fn variant(self) -> &'static str {
        match self {
            Role::User => "User",
            Role::Assistant => "Assistant",
        }
    }
}

/// Everything `#[resource(...)]` or `#[prompt(...)]` can say (a prompt has only the
/// first five keys). Absent keys are `None`.
#[derive(Default)]
pub(crate) struct Attr {
    /// `"scheme://..."` first, or `uri = ".."`.
    pub uri: Option<syn::LitStr>,
    pub name: Option<String>,
    /// A string literal or a macro call expanding to one.
    pub title: Option<syn::Expr>,
    pub description: Option<syn::Expr>,
    pub krate: Option<syn::Path>,
    pub struct_name: Option<syn::Ident>,
    pub mime_type: Option<String>,
    /// The size, and where it was written.
    pub size: Option<(u64, Span)>,
    pub audience: Option<Vec<Role>>,
    pub priority: Option<f64>,
    pub last_modified: Option<String>,
}

/// Which attribute is read.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    Resource,
    Prompt,
}

impl Kind {
    pub(crate) fn attr(self) -> &'static str {
        match self {
            Kind::Resource => "#[resource]",
            Kind::Prompt => "#[prompt]",
        }
    }

    fn keys(self) -> &'static [&'static str] {
        match self {
            Kind::Resource => RESOURCE_KEYS,
            Kind::Prompt => PROMPT_KEYS,
        }
    }
}

impl Attr {
    /// Parse the tokens inside `#[resource(...)]` / `#[prompt(...)]`.
    pub(crate) fn parse(kind: Kind, tokens: TokenStream, errors: &mut Ctxt) -> Attr {
        match NestedMeta::parse_meta_list(tokens) {
            Ok(items) => Attr::read(kind, &items, errors),
            Err(e) => {
                errors.push(e);
                Attr::default()
            }
        }
    }

    /// Parse an attribute found on a method inside `#[context]`.
    pub(crate) fn from_attribute(kind: Kind, attr: &syn::Attribute, errors: &mut Ctxt) -> Attr {
        match &attr.meta {
            syn::Meta::Path(_) => Attr::default(),
            syn::Meta::List(list) => Attr::parse(kind, list.tokens.clone(), errors),
            syn::Meta::NameValue(nv) => {
                let bare = kind.attr().trim_start_matches("#[").trim_end_matches(']');
                errors.error_at(
                    nv.eq_token.span,
                    format!("expected `#[{bare}]` or `#[{bare}(key = value, ...)]`"),
                );
                Attr::default()
            }
        }
    }

    fn read(kind: Kind, items: &[NestedMeta], errors: &mut Ctxt) -> Attr {
        let mut out = Attr::default();
        let mut seen: Vec<String> = Vec::new();
        let keys = kind.keys();
        for (i, item) in items.iter().enumerate() {
            let meta = match item {
                // `#[resource("scheme://..")]`: the URI, first.
                NestedMeta::Lit(syn::Lit::Str(s)) if i == 0 && matches!(kind, Kind::Resource) => {
                    seen.push(URI.to_string());
                    out.uri = Some(s.clone());
                    continue;
                }
                NestedMeta::Lit(lit) => {
                    let hint = match kind {
                        Kind::Resource => " (only the URI, first, goes without a key)",
                        Kind::Prompt => "",
                    };
                    errors.error_spanned(
                        lit,
                        format!(
                            "expected a `{}` key, found a literal{hint}; valid keys: {}",
                            kind.attr(),
                            key_list(keys)
                        ),
                    );
                    continue;
                }
                NestedMeta::NameValueInvalidExpr(bad) => {
                    errors.error_spanned(
                        &bad.value,
                        format!(
                            "the value of `{}` is not an expression",
                            path_text(&bad.path)
                        ),
                    );
                    continue;
                }
                NestedMeta::Meta(meta) => meta,
            };
            let path = meta.path();
            let key = match path.get_ident().map(ToString::to_string) {
                Some(k) if keys.contains(&k.as_str()) => k,
                _ => {
                    let text = path_text(path);
                    errors.error_spanned(
                        path,
                        format!(
                            "unknown `{}` key `{text}`{}; valid keys: {}",
                            kind.attr(),
                            crate::suggest::hint(&text, keys),
                            key_list(keys)
                        ),
                    );
                    continue;
                }
            };
            if seen.contains(&key) {
                let msg = if key == URI {
                    "the URI is given twice: write it first (`#[resource(\"scheme://..\")]`) or as `uri = \"..\"`, once".to_string()
                } else {
                    format!(
                        "duplicate `{}` key `{key}`: each key may be given once",
                        kind.attr()
                    )
                };
                errors.error_spanned(path, msg);
                continue;
            }
            seen.push(key.clone());
            if let Err(e) = out.set(&key, meta) {
                errors.push(e);
            }
        }
        out
    }

    fn set(&mut self, key: &str, meta: &syn::Meta) -> darling::Result<()> {
        match key {
            URI => self.uri = Some(lit_str(URI, meta, "\"scheme://path/{id}\"")?),
            NAME => self.name = Some(name(meta)?),
            TITLE => self.title = Some(text(TITLE, meta)?),
            DESCRIPTION => self.description = Some(text(DESCRIPTION, meta)?),
            CRATE => self.krate = Some(crate_path(meta)?),
            STRUCT_NAME => self.struct_name = Some(ident(STRUCT_NAME, meta)?),
            MIME_TYPE => self.mime_type = Some(mime_type(meta)?),
            SIZE => self.size = Some(size(meta)?),
            AUDIENCE => self.audience = Some(audience(meta)?),
            PRIORITY => self.priority = Some(priority(meta)?),
            _ => self.last_modified = Some(last_modified(meta)?),
        }
        Ok(())
    }
}

fn key_list(keys: &[&str]) -> String {
    keys.iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn path_text(path: &syn::Path) -> String {
    let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let lead = if path.leading_colon.is_some() {
        "::"
    } else {
        ""
    };
    format!("{lead}{}", segs.join("::"))
}

/// The value of `key = value`, or an error saying how to write it.
fn value<'m>(key: &str, meta: &'m syn::Meta, example: &str) -> darling::Result<&'m syn::Expr> {
    match meta {
        syn::Meta::NameValue(nv) => Ok(strip_group(&nv.value)),
        _ => Err(
            darling::Error::custom(format!("`{key}` needs a value: `{key} = {example}`"))
                .with_span(meta),
        ),
    }
}

/// Look through the invisible groups `macro_rules!` may wrap around an expression.
fn strip_group(mut e: &syn::Expr) -> &syn::Expr {
    while let syn::Expr::Group(g) = e {
        e = &g.expr;
    }
    e
}

/// `key = "..."`: a string literal.
fn lit_str(key: &str, meta: &syn::Meta, example: &str) -> darling::Result<syn::LitStr> {
    match value(key, meta, example)? {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => Ok(s.clone()),
        other => Err(darling::Error::custom(format!(
            "`{key}` must be a string literal: `{key} = {example}`"
        ))
        .with_span(other)),
    }
}

fn name(meta: &syn::Meta) -> darling::Result<String> {
    let s = lit_str(NAME, meta, "\"name\"")?;
    let v = s.value();
    if v.trim().is_empty() {
        return Err(darling::Error::custom("`name` cannot be empty").with_span(&s));
    }
    if v.chars().any(char::is_whitespace) {
        return Err(darling::Error::custom(format!(
            "`name` is an identifier for programs: `{v}` contains whitespace; a text to show goes in `title`"
        ))
        .with_span(&s));
    }
    Ok(v)
}

/// `title = ".."` / `description = ".."`: a string literal, or a macro call that expands
/// to one (`include_str!("..")`, `concat!(..)`).
fn text(key: &str, meta: &syn::Meta) -> darling::Result<syn::Expr> {
    let expr = value(key, meta, "\"...\"")?;
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => {
            if s.value().trim().is_empty() {
                Err(darling::Error::custom(format!("`{key}` cannot be empty")).with_span(s))
            } else {
                Ok(expr.clone())
            }
        }
        syn::Expr::Macro(_) => Ok(expr.clone()),
        other => Err(darling::Error::custom(format!(
            "`{key}` must be a string literal or a macro call expanding to one (`include_str!(..)`, `concat!(..)`)"
        ))
        .with_span(other)),
    }
}

/// `struct_name = "Name"`.
fn ident(key: &str, meta: &syn::Meta) -> darling::Result<syn::Ident> {
    let bad = || format!("`{key}` must be a type name in a string literal: `{key} = \"Name\"`");
    match value(key, meta, "\"Name\"")? {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => match syn::parse_str::<syn::Ident>(&s.value()) {
            Ok(mut ident) if ident != "Self" => {
                ident.set_span(s.span());
                Ok(ident)
            }
            _ => Err(darling::Error::custom(bad()).with_span(s)),
        },
        other => Err(darling::Error::custom(bad()).with_span(other)),
    }
}

/// `crate = "path"` or `crate = path`.
fn crate_path(meta: &syn::Meta) -> darling::Result<syn::Path> {
    let bad = "`crate` must be a path such as `\"::dsh_runtime\"`";
    match value(CRATE, meta, "\"::dsh_runtime\"")? {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => s
            .parse::<syn::Path>()
            .map_err(|_| darling::Error::custom(bad).with_span(s)),
        syn::Expr::Path(p) if p.qself.is_none() => Ok(p.path.clone()),
        other => Err(darling::Error::custom(bad).with_span(other)),
    }
}

/// `mime_type = "type/subtype"` (parameters allowed: `text/plain; charset=utf-8`).
fn mime_type(meta: &syn::Meta) -> darling::Result<String> {
    let s = lit_str(MIME_TYPE, meta, "\"text/plain\"")?;
    let v = s.value();
    let essence = v.split(';').next().unwrap_or_default().trim();
    let token = |t: &str| {
        !t.is_empty()
            && t.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b))
    };
    match essence.split_once('/') {
        Some((ty, sub)) if token(ty) && token(sub) => Ok(v),
        _ => Err(darling::Error::custom(format!(
            "`mime_type` must be a MIME type `type/subtype` (such as `text/plain` or `application/json`), not `{v}`"
        ))
        .with_span(&s)),
    }
}

/// `size = <bytes>`.
fn size(meta: &syn::Meta) -> darling::Result<(u64, Span)> {
    let how = "`size` must be an integer literal: the size in bytes";
    match value(SIZE, meta, "1024")? {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse::<u64>().map(|n| (n, i.span())).map_err(|_| {
            darling::Error::custom(format!("{how} that fits in a `u64`")).with_span(i)
        }),
        other => Err(darling::Error::custom(how).with_span(other)),
    }
}

/// `audience = "user"`, `audience = ["user", "assistant"]` or `audience("user", ..)`.
fn audience(meta: &syn::Meta) -> darling::Result<Vec<Role>> {
    let usage = "`audience` says who the resource is for: `audience = \"user\"`, `audience = \"assistant\"` or `audience = [\"user\", \"assistant\"]`";
    let as_lit = |e: &syn::Expr| match strip_group(e) {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => Ok(s.clone()),
        other => Err(darling::Error::custom(usage).with_span(other)),
    };
    let lits: Vec<syn::LitStr> = match meta {
        syn::Meta::NameValue(nv) => match strip_group(&nv.value) {
            syn::Expr::Array(a) if !a.elems.is_empty() => {
                a.elems.iter().map(as_lit).collect::<darling::Result<_>>()?
            }
            other => vec![as_lit(other)?],
        },
        syn::Meta::List(l) => {
            let parser =
                syn::punctuated::Punctuated::<syn::LitStr, syn::Token![,]>::parse_terminated;
            match syn::parse::Parser::parse2(parser, l.tokens.clone()) {
                Ok(list) if !list.is_empty() => list.into_iter().collect(),
                _ => {
                    return Err(darling::Error::custom(usage).with_span(&l.delimiter.span().join()));
                }
            }
        }
        syn::Meta::Path(p) => return Err(darling::Error::custom(usage).with_span(p)),
    };
    let mut errors = darling::Error::accumulator();
    let mut out: Vec<Role> = Vec::new();
    for lit in lits {
        let text = lit.value();
        match Role::ALL.iter().find(|(n, _)| *n == text) {
            Some((_, r)) if out.contains(r) => errors.push(
                darling::Error::custom(format!("`{text}` is listed twice in `audience`"))
                    .with_span(&lit),
            ),
            Some((_, r)) => out.push(*r),
            None => {
                let names: Vec<&str> = Role::ALL.iter().map(|(n, _)| *n).collect();
                errors.push(
                    darling::Error::custom(format!(
                        "unknown `audience` \"{text}\"{}; the audience is \"user\", \"assistant\" or both (`[\"user\", \"assistant\"]`)",
                        crate::suggest::hint(&text, &names),
                    ))
                    .with_span(&lit),
                );
            }
        }
    }
    errors.finish_with(out)
}

/// `priority = 0.5`: a number from 0 (entirely optional) to 1 (effectively required).
fn priority(meta: &syn::Meta) -> darling::Result<f64> {
    let how = "`priority` must be a number literal from 0 (entirely optional) to 1 (effectively required), such as `priority = 0.5`";
    let (n, span) = match value(PRIORITY, meta, "0.5")? {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Float(f),
            ..
        }) => (f.base10_parse::<f64>().ok(), f.span()),
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => (i.base10_parse::<u8>().ok().map(f64::from), i.span()),
        other => return Err(darling::Error::custom(how).with_span(other)),
    };
    match n {
        Some(n) if (0.0..=1.0).contains(&n) => Ok(n),
        _ => Err(darling::Error::custom(how).with_span(&span)),
    }
}

/// `last_modified = "2025-01-12T15:00:58Z"`: an RFC 3339 date-time.
fn last_modified(meta: &syn::Meta) -> darling::Result<String> {
    let s = lit_str(LAST_MODIFIED, meta, "\"2025-01-12T15:00:58Z\"")?;
    let v = s.value();
    if rfc3339(&v) {
        Ok(v)
    } else {
        Err(darling::Error::custom(format!(
            "`last_modified` must be an RFC 3339 date-time such as \"2025-01-12T15:00:58Z\" (`YYYY-MM-DDTHH:MM:SS`, an optional fraction, then `Z` or an offset `+HH:MM`), not \"{v}\""
        ))
        .with_span(&s))
    }
}

/// Whether `s` is an RFC 3339 date-time (`YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`), with
/// each field in range.
pub(crate) fn rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let part = s.get(r)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    let at = |i: usize, c: &[u8]| b.get(i).is_some_and(|x| c.contains(x));
    if b.len() < 20
        || !at(4, b"-")
        || !at(7, b"-")
        || !at(10, b"Tt")
        || !at(13, b":")
        || !at(16, b":")
    {
        return false;
    }
    let (Some(_), Some(mo), Some(d), Some(h), Some(mi), Some(sec)) = (
        num(0..4),
        num(5..7),
        num(8..10),
        num(11..13),
        num(14..16),
        num(17..19),
    ) else {
        return false;
    };
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return false;
    }
    let mut rest = &s[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return false;
        }
        rest = &frac[digits..];
    }
    match rest {
        "Z" | "z" => true,
        _ => {
            let r = rest.as_bytes();
            r.len() == 6
                && (r[0] == b'+' || r[0] == b'-')
                && r[3] == b':'
                && rest[1..3].parse::<u32>().is_ok_and(|h| h < 24)
                && rest[4..6].parse::<u32>().is_ok_and(|m| m < 60)
                && rest[1..3]
                    .bytes()
                    .chain(rest[4..6].bytes())
                    .all(|c| c.is_ascii_digit())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn parse(kind: Kind, tokens: TokenStream) -> (Attr, Vec<String>) {
        let mut errors = Ctxt::new();
        let attr = Attr::parse(kind, tokens, &mut errors);
        (attr, errors.messages())
    }

    #[test]
    fn accepts_every_resource_key() {
        let (a, errs) = parse(
            Kind::Resource,
            quote!(
                "docs://{id}",
                name = "doc",
                title = "Doc",
                description = include_str!("x"),
                mime_type = "text/plain; charset=utf-8",
                size = 12,
                audience = ["user", "assistant"],
                priority = 0.5,
                last_modified = "2025-01-12T15:00:58.5+01:00",
                crate = "::dsh",
                struct_name = "Doc"
            ),
        );
        assert!(errs.is_empty(), "{errs:#?}");
        assert_eq!(a.uri.map(|u| u.value()).as_deref(), Some("docs://{id}"));
        assert_eq!(a.audience, Some(vec![Role::User, Role::Assistant]));
        assert_eq!(a.priority, Some(0.5));
        assert_eq!(a.size.map(|s| s.0), Some(12));
        let (a, errs) = parse(
            Kind::Resource,
            quote!(uri = "a://b", audience = "user", priority = 1),
        );
        assert!(errs.is_empty(), "{errs:#?}");
        assert_eq!(a.audience, Some(vec![Role::User]));
        assert_eq!(a.priority, Some(1.0));
    }

    #[test]
    fn accumulates_every_error() {
        let (_, errs) = parse(
            Kind::Resource,
            quote!(
                "a://b",
                uri = "c://d",
                mime = "x",
                mime_type = "text",
                audience = "users",
                priority = 2.0,
                last_modified = "yesterday",
                size = -1,
                name = "a b",
                "lit"
            ),
        );
        assert_eq!(errs.len(), 9, "{errs:#?}");
        assert!(errs[0].starts_with("the URI is given twice"));
        assert!(
            errs[1].starts_with("unknown `#[resource]` key `mime` (did you mean `mime_type`?)")
        );
        assert!(errs[2].starts_with("`mime_type` must be a MIME type"));
        assert!(errs[3].starts_with("unknown `audience` \"users\" (did you mean `user`?)"));
        assert!(errs[4].starts_with("`priority` must be a number literal from 0"));
        assert!(errs[5].starts_with("`last_modified` must be an RFC 3339 date-time"));
        assert!(errs[6].starts_with("`size` must be an integer literal"));
        assert!(errs[7].contains("contains whitespace"));
        assert!(errs[8].starts_with("expected a `#[resource]` key, found a literal"));
        let (_, errs) = parse(Kind::Prompt, quote!("x", mime_type = "text/plain"));
        assert_eq!(errs.len(), 2, "{errs:#?}");
        assert!(errs[1].starts_with("unknown `#[prompt]` key `mime_type`; valid keys: `name`"));
    }

    #[test]
    fn checks_rfc3339() {
        for ok in [
            "2025-01-12T15:00:58Z",
            "2025-01-12t15:00:58.123z",
            "2025-01-12T15:00:58-05:30",
        ] {
            assert!(rfc3339(ok), "{ok}");
        }
        for bad in [
            "2025-01-12",
            "2025-13-12T15:00:58Z",
            "2025-01-12T15:00:58",
            "2025-01-12T15:00:58.Z",
            "2025-01-12T15:00:58+5:00",
            "2025-01-12 15:00:58Z",
        ] {
            assert!(!rfc3339(bad), "{bad}");
        }
    }
}
