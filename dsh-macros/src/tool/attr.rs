//! Parse `#[tool(...)]` keys.
//!
//! `ToolAttr` implements darling's `FromMeta` by hand (`from_list`) rather than deriving
//! it: the derive appends ` at <field>` to every message and capitalises its own, while
//! our messages are lowercase, list the valid keys and say how to write the value.
//! Checks that concern one key (syntax, `timeout_ms = 0`, the name pattern) live here;
//! rules spanning several items are in `validate.rs`.

use darling::FromMeta;
use darling::ast::NestedMeta;
use proc_macro2::{Span, TokenStream};
use syn::spanned::Spanned;

// Attribute keywords (one constant each, as they appear in user code).
pub const NAME: &str = "name";
pub const DESCRIPTION: &str = "description";
pub const TITLE: &str = "title";
pub const TIMEOUT_MS: &str = "timeout_ms";
pub const CONCURRENCY_SAFE: &str = "concurrency_safe";
pub const READ_ONLY: &str = "read_only";
pub const DESTRUCTIVE: &str = "destructive";
pub const IDEMPOTENT: &str = "idempotent";
pub const OPEN_WORLD: &str = "open_world";
pub const RENDER: &str = "render";
pub const PRESENT_CALL: &str = "present_call";
pub const PRESENT_RESULT: &str = "present_result";
pub const PRESENTATION_META: &str = "presentation_meta";
pub const FINALIZE_CONTENT: &str = "finalize_content";
pub const ARGS: &str = "args";
pub const DENY_UNKNOWN_ARGS: &str = "deny_unknown_args";
pub const CRATE: &str = "crate";

/// Every key, in the order the error message lists them.
const KEYS: &[&str] = &[
    NAME,
    DESCRIPTION,
    TITLE,
    TIMEOUT_MS,
    CONCURRENCY_SAFE,
    READ_ONLY,
    DESTRUCTIVE,
    IDEMPOTENT,
    OPEN_WORLD,
    RENDER,
    PRESENT_CALL,
    PRESENT_RESULT,
    PRESENTATION_META,
    FINALIZE_CONTENT,
    ARGS,
    DENY_UNKNOWN_ARGS,
    CRATE,
];

/// The reserved tool name (the code-mode entry point).
pub const RESERVED_NAME: &str = "run_code";

/// A present flag, remembering where it was written.
#[derive(Clone, Copy, Default)]
pub struct Flag(pub Option<Span>);

impl Flag {
    pub fn is_present(self) -> bool {
        self.0.is_some()
    }
}

/// A name, checked against the portable tool-name pattern.
pub struct Name {
    pub value: String,
}

/// `concurrency_safe` (always) or `concurrency_safe = path` (a predicate on the arguments).
pub enum Concurrency {
    Always,
    Predicate(syn::Path),
}

/// A positive `timeout_ms`.
pub struct Timeout {
    pub ms: u64,
}

/// Everything `#[tool(...)]` can say. Absent keys are `None` / not present.
#[derive(Default)]
pub struct ToolAttr {
    pub name: Option<Name>,
    /// A string literal or a macro call expanding to one (`include_str!`, `concat!`).
    pub description: Option<syn::Expr>,
    pub title: Option<syn::Expr>,
    pub timeout_ms: Option<Timeout>,
    pub concurrency_safe: Option<Concurrency>,
    pub read_only: Flag,
    pub destructive: Flag,
    pub idempotent: Flag,
    pub open_world: Flag,
    pub render: Option<syn::Path>,
    pub present_call: Option<syn::Path>,
    pub present_result: Option<syn::Path>,
    pub presentation_meta: Option<syn::Path>,
    pub finalize_content: Option<syn::Path>,
    /// `args`: the single parameter is the whole arguments object.
    pub args: Flag,
    /// `deny_unknown_args`: undeclared root keys are `INVALID_ARGS` (the root is closed).
    pub deny_unknown_args: Flag,
    /// `crate = "path"`: where `dsh_runtime` is (for renamed dependencies).
    pub krate: Option<syn::Path>,
}

impl ToolAttr {
    /// Parse the tokens inside `#[tool(...)]`.
    #[cfg(test)]
    pub fn parse(tokens: TokenStream) -> darling::Result<ToolAttr> {
        let items = NestedMeta::parse_meta_list(tokens)?;
        ToolAttr::from_list(&items)
    }

    /// Parse the tokens inside `#[tool(...)]`, keeping every key that parsed when others
    /// did not (so the expansion still knows the name, the flags...).
    pub fn parse_lenient(tokens: TokenStream) -> (ToolAttr, Vec<syn::Error>) {
        match NestedMeta::parse_meta_list(tokens) {
            Ok(items) => {
                let (attr, errors) = ToolAttr::read(&items);
                (attr, errors.into_iter().map(syn::Error::from).collect())
            }
            Err(e) => (ToolAttr::default(), vec![e]),
        }
    }

    /// Parse a `#[tool]` / `#[tool(...)]` attribute found on a method inside `#[toolbox]`.
    pub fn from_attribute(attr: &syn::Attribute) -> (ToolAttr, Vec<syn::Error>) {
        match &attr.meta {
            syn::Meta::Path(_) => (ToolAttr::default(), Vec::new()),
            syn::Meta::List(list) => ToolAttr::parse_lenient(list.tokens.clone()),
            syn::Meta::NameValue(nv) => (
                ToolAttr::default(),
                vec![syn::Error::new(
                    nv.eq_token.span,
                    "expected `#[tool]` or `#[tool(key = value, ...)]`",
                )],
            ),
        }
    }
}

impl FromMeta for ToolAttr {
    fn from_list(items: &[NestedMeta]) -> darling::Result<Self> {
        let (out, errors) = ToolAttr::read(items);
        if errors.is_empty() {
            Ok(out)
        } else {
            Err(darling::Error::multiple(errors))
        }
    }
}

impl ToolAttr {
    /// Every key that parses, and an error for every one that does not.
    fn read(items: &[NestedMeta]) -> (ToolAttr, Vec<darling::Error>) {
        let mut out = ToolAttr::default();
        let mut errors = darling::Error::accumulator();
        let mut seen: Vec<String> = Vec::new();
        for item in items {
            let meta = match item {
                NestedMeta::Meta(meta) => meta,
                NestedMeta::Lit(lit) => {
                    errors.push(
                        darling::Error::custom(format!(
                            "expected a `#[tool]` key, found a literal; valid keys: {}",
                            key_list()
                        ))
                        .with_span(lit),
                    );
                    continue;
                }
                NestedMeta::NameValueInvalidExpr(bad) => {
                    errors.push(
                        darling::Error::custom(format!(
                            "the value of `{}` is not an expression",
                            path_text(&bad.path)
                        ))
                        .with_span(&bad.value),
                    );
                    continue;
                }
            };
            let path = meta.path();
            let key = match path.get_ident().map(ToString::to_string) {
                Some(k) if KEYS.contains(&k.as_str()) => k,
                _ => {
                    let text = path_text(path);
                    let hint = match closest_key(&text) {
                        Some(k) => format!(" (did you mean `{k}`?)"),
                        None => String::new(),
                    };
                    errors.push(
                        darling::Error::custom(format!(
                            "unknown `#[tool]` key `{text}`{hint}; valid keys: {}",
                            key_list()
                        ))
                        .with_span(path),
                    );
                    continue;
                }
            };
            if seen.contains(&key) {
                errors.push(
                    darling::Error::custom(format!(
                        "duplicate `#[tool]` key `{key}`: each key may be given once"
                    ))
                    .with_span(path),
                );
                continue;
            }
            seen.push(key.clone());
            if let Err(e) = out.set(&key, meta) {
                errors.push(e);
            }
        }
        (out, errors.into_inner())
    }

    fn set(&mut self, key: &str, meta: &syn::Meta) -> darling::Result<()> {
        match key {
            NAME => self.name = Some(name(meta)?),
            DESCRIPTION => self.description = Some(text(DESCRIPTION, meta)?),
            TITLE => self.title = Some(text(TITLE, meta)?),
            TIMEOUT_MS => self.timeout_ms = Some(timeout(meta)?),
            CONCURRENCY_SAFE => self.concurrency_safe = Some(concurrency(meta)?),
            READ_ONLY => self.read_only = flag(READ_ONLY, meta)?,
            DESTRUCTIVE => self.destructive = flag(DESTRUCTIVE, meta)?,
            IDEMPOTENT => self.idempotent = flag(IDEMPOTENT, meta)?,
            OPEN_WORLD => self.open_world = flag(OPEN_WORLD, meta)?,
            RENDER => self.render = Some(fn_path(RENDER, meta)?),
            PRESENT_CALL => self.present_call = Some(fn_path(PRESENT_CALL, meta)?),
            PRESENT_RESULT => self.present_result = Some(fn_path(PRESENT_RESULT, meta)?),
            PRESENTATION_META => {
                self.presentation_meta = Some(fn_path(PRESENTATION_META, meta)?);
            }
            FINALIZE_CONTENT => self.finalize_content = Some(fn_path(FINALIZE_CONTENT, meta)?),
            ARGS => self.args = flag(ARGS, meta)?,
            DENY_UNKNOWN_ARGS => self.deny_unknown_args = flag(DENY_UNKNOWN_ARGS, meta)?,
            CRATE => self.krate = Some(crate_path(meta)?),
            _ => {}
        }
        Ok(())
    }
}

fn key_list() -> String {
    KEYS.iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The key closest to a misspelt one, if it is close enough to be a likely typo.
fn closest_key(unknown: &str) -> Option<&'static str> {
    let prefix = |k: &str| unknown.len() >= 4 && (k.starts_with(unknown) || unknown.starts_with(k));
    KEYS.iter()
        .map(|k| (edit_distance(unknown, k), *k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 4) || prefix(k))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Levenshtein distance, counting an adjacent swap as one edit.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

fn path_text(path: &syn::Path) -> String {
    let mut s = String::new();
    if path.leading_colon.is_some() {
        s.push_str("::");
    }
    let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    s.push_str(&segs.join("::"));
    s
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

/// `name = "..."`: checked against `^[a-zA-Z0-9_-]{1,64}$` and the reserved name.
fn name(meta: &syn::Meta) -> darling::Result<Name> {
    let expr = value(NAME, meta, "\"tool_name\"")?;
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => {
            let value = s.value();
            check_name(&value).map_err(|msg| darling::Error::custom(msg).with_span(s))?;
            Ok(Name { value })
        }
        other => Err(darling::Error::custom(
            "`name` must be a string literal: `name = \"tool_name\"`",
        )
        .with_span(other)),
    }
}

/// The portable tool-name rule shared by OpenAI, Anthropic, Gemini and MCP, plus the
/// reserved code-mode name.
pub fn check_name(name: &str) -> Result<(), String> {
    if name == RESERVED_NAME {
        return Err(format!(
            "the tool name `{RESERVED_NAME}` is reserved for code mode; choose another `name`"
        ));
    }
    let bad: Vec<char> = name
        .chars()
        .filter(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
        .collect();
    if name.is_empty() {
        Err("a tool name cannot be empty; it must match `^[a-zA-Z0-9_-]{1,64}$`".to_string())
    } else if !bad.is_empty() {
        let mut shown: Vec<String> = Vec::new();
        for c in bad {
            let q = format!("{c:?}");
            if !shown.contains(&q) {
                shown.push(q);
            }
        }
        Err(format!(
            "tool name `{name}` contains {}; a tool name must match `^[a-zA-Z0-9_-]{{1,64}}$` (ASCII letters, digits, `_` and `-`) to be portable across model providers",
            shown.join(", ")
        ))
    } else if name.len() > 64 {
        Err(format!(
            "tool name `{name}` is {} characters long; a tool name must match `^[a-zA-Z0-9_-]{{1,64}}$` (at most 64 characters)",
            name.len()
        ))
    } else {
        Ok(())
    }
}

/// `description = "..."` / `title = "..."`: a string literal, or a macro call that
/// expands to one (`include_str!("..")`, `concat!(..)`).
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

/// `timeout_ms = <positive integer literal>`.
fn timeout(meta: &syn::Meta) -> darling::Result<Timeout> {
    let expr = value(TIMEOUT_MS, meta, "30000")?;
    let positive = "`timeout_ms` must be a positive integer literal (milliseconds)";
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => match i.base10_parse::<u64>() {
            Ok(0) => Err(darling::Error::custom(
                "`timeout_ms` must be positive: a deadline of 0 ms would fail every call; remove the key for no deadline",
            )
            .with_span(i)),
            Ok(ms) => Ok(Timeout { ms }),
            Err(_) => Err(darling::Error::custom(format!("{positive} that fits in a `u64`")).with_span(i)),
        },
        other => Err(darling::Error::custom(positive).with_span(other)),
    }
}

/// `concurrency_safe` or `concurrency_safe = path::to::predicate`.
fn concurrency(meta: &syn::Meta) -> darling::Result<Concurrency> {
    match meta {
        syn::Meta::Path(_) => Ok(Concurrency::Always),
        syn::Meta::NameValue(nv) => match strip_group(&nv.value) {
            syn::Expr::Path(p) if p.qself.is_none() => Ok(Concurrency::Predicate(p.path.clone())),
            other => Err(darling::Error::custom(
                "expected `concurrency_safe` (always) or `concurrency_safe = path::to::fn` (a `fn(&Args) -> bool`)",
            )
            .with_span(other)),
        },
        syn::Meta::List(l) => Err(darling::Error::custom(
            "expected `concurrency_safe` (always) or `concurrency_safe = path::to::fn` (a `fn(&Args) -> bool`)",
        )
        .with_span(&l.delimiter.span().join())),
    }
}

/// A word with no value.
fn flag(key: &str, meta: &syn::Meta) -> darling::Result<Flag> {
    match meta {
        syn::Meta::Path(p) => Ok(Flag(Some(p.span()))),
        syn::Meta::NameValue(nv) => Err(darling::Error::custom(format!(
            "`{key}` is a flag: write `{key}` without a value"
        ))
        .with_span(&nv.value)),
        syn::Meta::List(l) => Err(darling::Error::custom(format!(
            "`{key}` is a flag: write `{key}` without a value"
        ))
        .with_span(&l.delimiter.span().join())),
    }
}

/// `key = path::to::fn`.
fn fn_path(key: &str, meta: &syn::Meta) -> darling::Result<syn::Path> {
    let expr = value(key, meta, "path::to::fn")?;
    match expr {
        syn::Expr::Path(p) if p.qself.is_none() => Ok(p.path.clone()),
        other => Err(darling::Error::custom(format!(
            "`{key}` must name a function: `{key} = path::to::fn`"
        ))
        .with_span(other)),
    }
}

/// `crate = "path"` (like serde's `crate` attribute) or `crate = path`.
fn crate_path(meta: &syn::Meta) -> darling::Result<syn::Path> {
    let expr = value(CRATE, meta, "\"::dsh_runtime\"")?;
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => s.parse::<syn::Path>().map_err(|_| {
            darling::Error::custom("`crate` must be a path such as `\"::dsh_runtime\"`")
                .with_span(s)
        }),
        syn::Expr::Path(p) if p.qself.is_none() => Ok(p.path.clone()),
        other => Err(
            darling::Error::custom("`crate` must be a path such as `\"::dsh_runtime\"`")
                .with_span(other),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn errors(tokens: TokenStream) -> Vec<String> {
        match ToolAttr::parse(tokens) {
            Ok(_) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn accepts_every_key() {
        let a = ToolAttr::parse(quote!(
            name = "read-file_2",
            description = "Read.",
            title = include_str!("t.txt"),
            timeout_ms = 500,
            concurrency_safe = is_safe,
            read_only,
            destructive,
            idempotent,
            open_world,
            render = r,
            present_call = a::b,
            present_result = c,
            presentation_meta = d,
            finalize_content = e,
            args,
            crate = "::dsh"
        ))
        .unwrap_or_default();
        assert_eq!(a.name.map(|n| n.value).as_deref(), Some("read-file_2"));
        assert_eq!(a.timeout_ms.map(|t| t.ms), Some(500));
        assert!(matches!(
            a.concurrency_safe,
            Some(Concurrency::Predicate(_))
        ));
        assert!(a.read_only.is_present() && a.open_world.is_present() && a.args.is_present());
        assert!(a.present_call.is_some() && a.finalize_content.is_some() && a.krate.is_some());
    }

    #[test]
    fn accumulates_every_error() {
        let errs = errors(quote!(
            nmae = "x",
            name = "a b",
            name = "c",
            timeout_ms = 0,
            read_only = true,
            render = "f",
            "lit",
            concurrency_safe(x)
        ));
        assert_eq!(errs.len(), 8, "{errs:#?}");
        assert!(errs[0].starts_with(
            "unknown `#[tool]` key `nmae` (did you mean `name`?); valid keys: `name`,"
        ));
        assert!(errs[1].contains("contains ' '"));
        assert!(errs[2].starts_with("duplicate `#[tool]` key `name`"));
        assert!(errs[3].starts_with("`timeout_ms` must be positive"));
        assert!(errs[4].starts_with("`read_only` is a flag"));
        assert!(errs[5].starts_with("`render` must name a function"));
        assert!(errs[6].starts_with("expected a `#[tool]` key, found a literal"));
        assert!(errs[7].starts_with("expected `concurrency_safe` (always)"));
    }

    #[test]
    fn suggests_close_keys() {
        assert_eq!(closest_key("readonly"), Some("read_only"));
        assert_eq!(closest_key("read_olny"), Some("read_only"));
        assert_eq!(closest_key("timeout"), Some("timeout_ms"));
        assert_eq!(closest_key("present"), Some("present_call"));
        assert_eq!(closest_key("nmae"), Some("name"));
        assert_eq!(closest_key("colour"), None);
    }

    #[test]
    fn checks_names() {
        assert!(check_name("read_file").is_ok());
        assert!(check_name(&"a".repeat(64)).is_ok());
        assert!(
            check_name(&"a".repeat(65))
                .unwrap_err()
                .contains("65 characters")
        );
        assert!(check_name("run_code").unwrap_err().contains("reserved"));
        assert!(check_name("").is_err());
        assert!(check_name("é").unwrap_err().contains("'é'"));
    }
}
