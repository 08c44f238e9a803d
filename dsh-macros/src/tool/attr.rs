//! Parse `#[tool(...)]` keys.
//!
//! The keys are read from darling's `NestedMeta` list by hand rather than with a derived
//! `FromMeta`: the derive appends ` at <field>` to every message and capitalises its own,
//! while our messages are lowercase, list the valid keys and say how to write the value
//! (misspelt keys still get darling's suggestion, see `crate::suggest`). Every key that
//! parses is kept even when others do not, so the expansion still knows the name and the
//! flags. Checks that concern one key (syntax, `timeout_ms = 0`, the name pattern) or
//! two keys of this one attribute live here; rules spanning several items are in
//! `validate.rs`.

use darling::ast::NestedMeta;
use proc_macro2::{Span, TokenStream};
use syn::spanned::Spanned;

use crate::ctxt::Ctxt;

// Attribute keywords (one constant each, as they appear in user code).
pub(super) const NAME: &str = "name";
pub(super) const DESCRIPTION: &str = "description";
pub(super) const TITLE: &str = "title";
pub(super) const TIMEOUT_MS: &str = "timeout_ms";
pub(super) const CONCURRENCY_SAFE: &str = "concurrency_safe";
pub(super) const READ_ONLY: &str = "read_only";
pub(super) const DESTRUCTIVE: &str = "destructive";
pub(super) const IDEMPOTENT: &str = "idempotent";
pub(super) const OPEN_WORLD: &str = "open_world";
pub(super) const DEFER_LOADING: &str = "defer_loading";
pub(super) const RENDER: &str = "render";
pub(super) const PRESENT_CALL: &str = "present_call";
pub(super) const PRESENT_RESULT: &str = "present_result";
pub(super) const PRESENTATION_META: &str = "presentation_meta";
pub(super) const FINALIZE_CONTENT: &str = "finalize_content";
pub(super) const ARGS: &str = "args";
pub(super) const DENY_UNKNOWN_ARGS: &str = "deny_unknown_args";
pub(super) const CRATE: &str = "crate";
pub(super) const STRUCT_NAME: &str = "struct_name";
pub(super) const ARGS_STRUCT_NAME: &str = "args_struct_name";
pub(super) const TASK: &str = "task";
pub(super) const TIMEOUT_RESTARTS_ON_PROGRESS: &str = "timeout_restarts_on_progress";
pub(super) const TASK_AFTER_INPUT: &str = "task_after_input";
pub(super) const ASK: &str = "ask";

// Input examples and compile-time portability (see `PortableTarget` below).
pub(super) const EXAMPLE: &str = "example";
pub(super) const PORTABLE: &str = "portable";

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
    DEFER_LOADING,
    RENDER,
    PRESENT_CALL,
    PRESENT_RESULT,
    PRESENTATION_META,
    FINALIZE_CONTENT,
    ARGS,
    DENY_UNKNOWN_ARGS,
    CRATE,
    STRUCT_NAME,
    ARGS_STRUCT_NAME,
    EXAMPLE,
    PORTABLE,
    TASK,
    TIMEOUT_RESTARTS_ON_PROGRESS,
    TASK_AFTER_INPUT,
    ASK,
];

/// Keys that may be given more than once (each adds to a list).
const REPEATABLE: &[&str] = &[EXAMPLE];

/// The reserved tool name (the code-mode entry point).
pub(super) const RESERVED_NAME: &str = "run_code";

/// A present flag, remembering where it was written.
#[derive(Clone, Copy, Default)]
pub(super) struct Flag(pub Option<Span>);

impl Flag {
    pub(super) fn is_present(self) -> bool {
        self.0.is_some()
    }
}

/// A name, checked against the portable tool-name pattern.
pub(super) struct Name {
    pub value: String,
}

/// `concurrency_safe` (always) or `concurrency_safe = path` (a predicate on the arguments).
pub(super) enum Concurrency {
    Always,
    Predicate(syn::Path),
}

/// A positive `timeout_ms`.
pub(super) struct Timeout {
    pub ms: u64,
}

/// Everything `#[tool(...)]` can say. Absent keys are `None` / not present.
#[derive(Default)]
pub(super) struct ToolAttr {
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
    /// `defer_loading`: exports mark the tool deferred, tool search finds it.
    pub defer_loading: Flag,
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
    /// `struct_name = "Name"`: the generated tool struct (and, by default, `NameArgs`).
    pub struct_name: Option<syn::Ident>,
    /// `args_struct_name = "Name"`: the generated args struct.
    pub args_struct_name: Option<syn::Ident>,

    // Input examples and portability.
    /// Every `example = r#"{..}"#`, checked to be a JSON object, in order.
    pub examples: Vec<super::examples::Example>,
    /// `portable = "target"` / `portable("a", "b")`: the targets whose export must lose
    /// nothing, each with the span of its literal.
    pub portable: Vec<(PortableTarget, Span)>,
    /// `task = "optional" | "required" | "forbidden"`: whether the tool may run as a task.
    pub task: Option<TaskSupport>,
    /// `timeout_restarts_on_progress`: the deadline starts again at each progress report.
    pub timeout_restarts_on_progress: Flag,
    /// `task_after_input`: the call becomes a task only when its body says so
    /// (`ToolContext::continue_as_task`), after asking its caller what it needs.
    pub task_after_input: Flag,
    /// `ask = "why"`: every call asks for approval first, with this reason.
    pub ask: Option<syn::Expr>,
}

impl ToolAttr {
    /// Parse the tokens inside `#[tool(...)]`: every key that parses, and an error in
    /// `errors` for every one that does not.
    pub(super) fn parse(tokens: TokenStream, errors: &mut Ctxt) -> ToolAttr {
        match NestedMeta::parse_meta_list(tokens) {
            Ok(items) => ToolAttr::read(&items, errors),
            Err(e) => {
                errors.push(e);
                ToolAttr::default()
            }
        }
    }

    /// Parse a `#[tool]` / `#[tool(...)]` attribute found on a method inside `#[toolbox]`.
    pub(super) fn from_attribute(attr: &syn::Attribute, errors: &mut Ctxt) -> ToolAttr {
        match &attr.meta {
            syn::Meta::Path(_) => ToolAttr::default(),
            syn::Meta::List(list) => ToolAttr::parse(list.tokens.clone(), errors),
            syn::Meta::NameValue(nv) => {
                errors.error_at(
                    nv.eq_token.span,
                    "expected `#[tool]` or `#[tool(key = value, ...)]`",
                );
                ToolAttr::default()
            }
        }
    }

    fn read(items: &[NestedMeta], errors: &mut Ctxt) -> ToolAttr {
        let mut out = ToolAttr::default();
        let mut seen: Vec<String> = Vec::new();
        for item in items {
            let meta = match item {
                NestedMeta::Meta(meta) => meta,
                NestedMeta::Lit(lit) => {
                    errors.error_spanned(
                        lit,
                        format!(
                            "expected a `#[tool]` key, found a literal; valid keys: {}",
                            key_list()
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
            };
            let path = meta.path();
            let key = match path.get_ident().map(ToString::to_string) {
                Some(k) if KEYS.contains(&k.as_str()) => k,
                _ => {
                    let text = path_text(path);
                    errors.error_spanned(
                        path,
                        format!(
                            "unknown `#[tool]` key `{text}`{}; valid keys: {}",
                            crate::suggest::hint(&text, KEYS),
                            key_list()
                        ),
                    );
                    continue;
                }
            };
            if seen.contains(&key) && !REPEATABLE.contains(&key.as_str()) {
                errors.error_spanned(
                    path,
                    format!("duplicate `#[tool]` key `{key}`: each key may be given once"),
                );
                continue;
            }
            seen.push(key.clone());
            if let Err(e) = out.set(&key, meta) {
                errors.push(e);
            }
        }
        // `args` takes the user's struct as the arguments: there is no struct to name.
        if out.args.is_present()
            && let Some(name) = &out.args_struct_name
        {
            errors.error_at(
                name.span(),
                "`args_struct_name` names the generated args struct, but with `args` the fn's parameter type is the arguments struct: remove one of the two keys",
            );
        }
        out.check_task_keys(errors);
        // A tool that asks before each call is not one a client may run unasked: MCP
        // clients commonly auto-approve `readOnlyHint` tools.
        if let (Some(_), Some(span)) = (&out.ask, out.read_only.0) {
            errors.error_at(
                span,
                "`read_only` with `ask`: a tool that asks for approval before each call must not be published as read-only (MCP clients may run read-only tools without asking); remove `read_only`, or remove `ask`",
            );
        }
        out
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
            DEFER_LOADING => self.defer_loading = flag(DEFER_LOADING, meta)?,
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
            STRUCT_NAME => self.struct_name = Some(ident(STRUCT_NAME, meta)?),
            ARGS_STRUCT_NAME => self.args_struct_name = Some(ident(ARGS_STRUCT_NAME, meta)?),
            EXAMPLE => self.examples.push(example(meta)?),
            PORTABLE => self.portable = portable(meta)?,
            TASK | TIMEOUT_RESTARTS_ON_PROGRESS | TASK_AFTER_INPUT => {
                self.set_task_keys(key, meta)?
            }
            ASK => self.ask = Some(text(ASK, meta)?),
            _ => {}
        }
        Ok(())
    }
}

// ---- tasks and progress-restarted deadlines ----------------------------------------------

/// The value of `task = "..."`, as the variant of `dsh_runtime::TaskSupport` it names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TaskSupport {
    Forbidden,
    Optional,
    Required,
}

impl TaskSupport {
    /// The variant's name in `dsh_runtime::TaskSupport`.
    pub(super) fn variant(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "Forbidden",
            TaskSupport::Optional => "Optional",
            TaskSupport::Required => "Required",
        }
    }

    /// Whether the tool may run as a task.
    pub(super) fn allows(self) -> bool {
        !matches!(self, TaskSupport::Forbidden)
    }
}

const TASK_VALUES: &[&str] = &["optional", "required", "forbidden"];

impl ToolAttr {
    fn set_task_keys(&mut self, key: &str, meta: &syn::Meta) -> darling::Result<()> {
        match key {
            TASK => self.task = Some(task_support(meta)?),
            TASK_AFTER_INPUT => self.task_after_input = flag(TASK_AFTER_INPUT, meta)?,
            _ => {
                self.timeout_restarts_on_progress = flag(TIMEOUT_RESTARTS_ON_PROGRESS, meta)?;
            }
        }
        Ok(())
    }

    /// `timeout_restarts_on_progress` restarts the `timeout_ms` deadline: without one it
    /// would do nothing.
    fn check_task_keys(&self, errors: &mut Ctxt) {
        if let Flag(Some(span)) = self.task_after_input
            && !self.task.is_some_and(TaskSupport::allows)
        {
            errors.error_at(
                span,
                "`task_after_input` makes a call a task after it asked its caller, and this tool never runs as a task: add `task = \"optional\"` or `task = \"required\"`, or remove the flag",
            );
        }
        if let Flag(Some(span)) = self.timeout_restarts_on_progress
            && self.timeout_ms.is_none()
        {
            errors.error_at(
                span,
                "`timeout_restarts_on_progress` restarts the `timeout_ms` deadline, and this tool has none: add `timeout_ms = <ms>` or remove the flag",
            );
        }
    }
}

/// `task = "optional" | "required" | "forbidden"`.
fn task_support(meta: &syn::Meta) -> darling::Result<TaskSupport> {
    let expr = value(TASK, meta, "\"optional\"")?;
    let how = "`task` must be one of the string literals \"optional\" (the tool runs as a task when the client supports tasks), \"required\" (only as a task) or \"forbidden\" (never; the default)";
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => match s.value().as_str() {
            "optional" => Ok(TaskSupport::Optional),
            "required" => Ok(TaskSupport::Required),
            "forbidden" => Ok(TaskSupport::Forbidden),
            other => Err(darling::Error::custom(format!(
                "unknown `task` value \"{other}\"{}; {how}",
                crate::suggest::hint(other, TASK_VALUES)
            ))
            .with_span(s)),
        },
        other => Err(darling::Error::custom(how).with_span(other)),
    }
}

fn key_list() -> String {
    KEYS.iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
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
pub(super) fn check_name(name: &str) -> Result<(), String> {
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

/// `struct_name = "Name"`: an identifier, as a string literal (like serde's `rename`).
fn ident(key: &str, meta: &syn::Meta) -> darling::Result<syn::Ident> {
    let expr = value(key, meta, "\"Name\"")?;
    let bad = || format!("`{key}` must be a type name in a string literal: `{key} = \"Name\"`");
    match expr {
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

// ---------------------------------------------------------------------------------------
// Input examples and compile-time portability.

/// A target `portable` checks a tool's schema against. Each is a rule set of the
/// runtime's export (`dsh_providers::export::Target`), named as the runtime's portability
/// facts name it (`dsh_runtime::schema::portable`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum PortableTarget {
    /// OpenAI Structured Outputs (`strict: true`), Responses and Chat Completions.
    OpenAiStrict,
    /// Anthropic strict tool use.
    AnthropicStrict,
    /// Gemini `parameters` (the OpenAPI 3.0 subset).
    Gemini,
}

impl PortableTarget {
    const ALL: [(&'static str, PortableTarget); 3] = [
        ("openai-strict", PortableTarget::OpenAiStrict),
        ("anthropic-strict", PortableTarget::AnthropicStrict),
        ("gemini", PortableTarget::Gemini),
    ];

    /// The constant naming the target in `dsh_runtime::schema::portable`.
    pub(super) fn runtime_const(self) -> &'static str {
        match self {
            PortableTarget::OpenAiStrict => "OPENAI_STRICT",
            PortableTarget::AnthropicStrict => "ANTHROPIC_STRICT",
            PortableTarget::Gemini => "GEMINI",
        }
    }
}

/// `example = r#"{"path": "a"}"#`: a string literal holding one JSON object.
fn example(meta: &syn::Meta) -> darling::Result<super::examples::Example> {
    let expr = value(EXAMPLE, meta, r##"r#"{"name": "value"}"#"##)?;
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => match super::examples::check(&s.value()) {
            Ok(text) => Ok(super::examples::Example {
                text,
                span: s.span(),
            }),
            Err((msg, _)) => Err(darling::Error::custom(msg).with_span(s)),
        },
        other => Err(darling::Error::custom(
            r##"`example` must be a string literal holding a JSON object of arguments: `example = r#"{"path": "src/lib.rs"}"#`"##,
        )
        .with_span(other)),
    }
}

/// `portable = "openai-strict"` or `portable("openai-strict", "gemini")`.
fn portable(meta: &syn::Meta) -> darling::Result<Vec<(PortableTarget, Span)>> {
    let usage = "`portable` names the targets whose export must lose nothing: `portable = \"openai-strict\"` or `portable(\"openai-strict\", \"gemini\")`";
    let lits: Vec<syn::LitStr> = match meta {
        syn::Meta::NameValue(nv) => match strip_group(&nv.value) {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => vec![s.clone()],
            other => return Err(darling::Error::custom(usage).with_span(other)),
        },
        syn::Meta::List(l) => {
            let parser =
                syn::punctuated::Punctuated::<syn::LitStr, syn::Token![,]>::parse_terminated;
            match syn::parse::Parser::parse2(parser, l.tokens.clone()) {
                Ok(list) if !list.is_empty() => list.into_iter().collect(),
                Ok(_) => {
                    return Err(darling::Error::custom(usage).with_span(&l.delimiter.span().join()));
                }
                Err(e) => return Err(darling::Error::custom(usage).with_span(&e.span())),
            }
        }
        syn::Meta::Path(p) => return Err(darling::Error::custom(usage).with_span(p)),
    };
    let mut errors = darling::Error::accumulator();
    let mut out: Vec<(PortableTarget, Span)> = Vec::new();
    for lit in lits {
        let text = lit.value();
        match PortableTarget::ALL.iter().find(|(n, _)| *n == text) {
            Some((_, t)) if out.iter().any(|(o, _)| o == t) => errors.push(
                darling::Error::custom(format!("`{text}` is listed twice in `portable`"))
                    .with_span(&lit),
            ),
            Some((_, t)) => out.push((*t, lit.span())),
            None => {
                let names: Vec<&str> = PortableTarget::ALL.iter().map(|(n, _)| *n).collect();
                errors.push(
                    darling::Error::custom(format!(
                        "unknown `portable` target `{text}`{}; valid targets: {}",
                        crate::suggest::hint(&text, &names),
                        names
                            .iter()
                            .map(|n| format!("`{n}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                    .with_span(&lit),
                );
            }
        }
    }
    errors.finish_with(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn parse(tokens: TokenStream) -> (ToolAttr, Vec<String>) {
        let mut errors = Ctxt::new();
        let attr = ToolAttr::parse(tokens, &mut errors);
        (attr, errors.messages())
    }

    #[test]
    fn accepts_every_key() {
        let (a, errs) = parse(quote!(
            name = "read-file_2",
            description = "Read.",
            title = include_str!("t.txt"),
            timeout_ms = 500,
            concurrency_safe = is_safe,
            read_only,
            destructive,
            idempotent,
            open_world,
            defer_loading,
            render = r,
            present_call = a::b,
            present_result = c,
            presentation_meta = d,
            finalize_content = e,
            crate = "::dsh",
            struct_name = "ReadTool",
            args_struct_name = "ReadToolInput",
            example = r#"{"path": "a"}"#,
            example = r#"{"path": "b", "n": 1}"#,
            portable("openai-strict", "gemini")
        ));
        assert!(errs.is_empty(), "{errs:#?}");
        let examples: Vec<&str> = a.examples.iter().map(|e| e.text.as_str()).collect();
        assert_eq!(examples, [r#"{"path":"a"}"#, r#"{"path":"b","n":1}"#]);
        let targets: Vec<PortableTarget> = a.portable.iter().map(|(t, _)| *t).collect();
        assert_eq!(
            targets,
            [PortableTarget::OpenAiStrict, PortableTarget::Gemini]
        );
        assert_eq!(a.name.map(|n| n.value).as_deref(), Some("read-file_2"));
        assert_eq!(a.timeout_ms.map(|t| t.ms), Some(500));
        assert!(matches!(
            a.concurrency_safe,
            Some(Concurrency::Predicate(_))
        ));
        assert!(a.read_only.is_present() && a.open_world.is_present());
        assert!(a.defer_loading.is_present());
        assert!(a.present_call.is_some() && a.finalize_content.is_some() && a.krate.is_some());
        assert_eq!(
            a.struct_name.map(|i| i.to_string()).as_deref(),
            Some("ReadTool")
        );
        assert_eq!(
            a.args_struct_name.map(|i| i.to_string()).as_deref(),
            Some("ReadToolInput")
        );
    }

    #[test]
    fn accumulates_every_error() {
        let (_, errs) = parse(quote!(
            nmae = "x",
            name = "a b",
            name = "c",
            timeout_ms = 0,
            read_only = true,
            defer_loading = true,
            render = "f",
            "lit",
            concurrency_safe(x),
            struct_name = "not an ident",
            args_struct_name = Input
        ));
        assert_eq!(errs.len(), 11, "{errs:#?}");
        assert!(errs[0].starts_with(
            "unknown `#[tool]` key `nmae` (did you mean `name`?); valid keys: `name`,"
        ));
        assert!(errs[1].contains("contains ' '"));
        assert!(errs[2].starts_with("duplicate `#[tool]` key `name`"));
        assert!(errs[3].starts_with("`timeout_ms` must be positive"));
        assert!(errs[4].starts_with("`read_only` is a flag"));
        assert!(errs[5].starts_with("`defer_loading` is a flag"));
        assert!(errs[6].starts_with("`render` must name a function"));
        assert!(errs[7].starts_with("expected a `#[tool]` key, found a literal"));
        assert!(errs[8].starts_with("expected `concurrency_safe` (always)"));
        assert!(errs[9].starts_with("`struct_name` must be a type name in a string literal"));
        assert!(errs[10].starts_with("`args_struct_name` must be a type name"));
    }

    #[test]
    fn portable_and_example_errors() {
        let (a, errs) = parse(quote!(portable = "anthropic-strict"));
        assert!(errs.is_empty() && a.portable.len() == 1);
        let (_, errs) = parse(quote!(
            portable = "openai",
            example = "[1]",
            example = 3,
            portable("gemini", 1)
        ));
        assert_eq!(errs.len(), 4, "{errs:#?}");
        assert!(errs[0].starts_with("unknown `portable` target `openai`"));
        assert!(errs[0].ends_with("valid targets: `openai-strict`, `anthropic-strict`, `gemini`"));
        assert!(errs[1].ends_with("found an array"));
        assert!(errs[2].starts_with("`example` must be a string literal"));
        assert!(errs[3].starts_with("duplicate `#[tool]` key `portable`"));
    }

    #[test]
    fn reads_the_task_keys() {
        for (value, support) in [
            ("optional", TaskSupport::Optional),
            ("required", TaskSupport::Required),
            ("forbidden", TaskSupport::Forbidden),
        ] {
            let (a, errs) =
                parse(quote!(task = #value, timeout_ms = 10, timeout_restarts_on_progress));
            assert!(errs.is_empty(), "{errs:#?}");
            assert_eq!(a.task, Some(support));
            assert!(a.timeout_restarts_on_progress.is_present());
        }
        let (a, errs) = parse(quote!(
            task = "optinal",
            task2,
            timeout_restarts_on_progress
        ));
        assert_eq!(errs.len(), 3, "{errs:#?}");
        assert!(
            errs[0].starts_with("unknown `task` value \"optinal\" (did you mean `optional`?)"),
            "{errs:#?}"
        );
        assert!(
            errs[1].starts_with("unknown `#[tool]` key `task2`"),
            "{errs:#?}"
        );
        assert!(errs[2].contains("this tool has none"), "{errs:#?}");
        assert_eq!(a.task, None);
        let (_, errs) = parse(quote!(task = 1));
        assert!(errs[0].starts_with("`task` must be one of"), "{errs:#?}");
        let (_, errs) = parse(quote!(task));
        assert!(errs[0].starts_with("`task` needs a value"), "{errs:#?}");
    }

    #[test]
    fn args_struct_name_needs_a_generated_args_struct() {
        let (_, errs) = parse(quote!(args, args_struct_name = "Input"));
        assert_eq!(errs.len(), 1, "{errs:#?}");
        assert!(errs[0].contains("remove one of the two keys"));
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
