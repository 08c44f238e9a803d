//! `#[schema(default = ..)]` is checked where it is written: against the item's own keys
//! here, from the literal alone (a `range`, `length`, `pattern`, `enum` or `const` it
//! breaks is an error at the value), and against the item's type by [`fit_check`], a
//! constant the compiler evaluates with the type's `DefaultFit` (a default of the wrong
//! JSON type, outside an integer type's range, or not a variant of a unit enum).
//!
//! Why both: a default the item's schema rejects would be published to the model as
//! the value to send, and no later step refuses it.

use proc_macro2::TokenStream;

use quote::{quote, quote_spanned};

use super::keys::{Bound, JsonKind, Length, Pos, SchemaAttrs, error, json_string};
use crate::ctxt::Ctxt;

/// Errors for a default that breaks the item's own `range`, `length`, `pattern`, `enum`
/// or `const`, at the default's value. A default of another JSON type than a key applies
/// to is left to [`fit_check`], which names the type.
pub(crate) fn check_literal(s: &SchemaAttrs, pos: Pos, errors: &mut Ctxt) {
    let (Some(d), Some(span)) = (&s.default, s.default_span) else {
        return;
    };
    let Ok(value) = serde_json::from_str::<serde_json::Value>(&d.text) else {
        return;
    };
    let shown = &d.text;
    let item = if pos == Pos::Param {
        "parameter"
    } else {
        "field"
    };
    let mut fail = |why: String| {
        errors.push(error(span, format!("`default = {shown}` {why}")));
    };
    if let (Some(r), serde_json::Value::Number(n)) = (&s.range, &value) {
        let below = r
            .min
            .is_some_and(|b| cmp(n, b) == Some(std::cmp::Ordering::Less));
        let above = r
            .max
            .is_some_and(|b| cmp(n, b) == Some(std::cmp::Ordering::Greater));
        if below || above {
            fail(format!(
                "is outside the {item}'s `range({})`; give a default within it, or remove it",
                range_text(r.min, r.max)
            ));
        }
    }
    if let Some(l) = &s.length
        && let Some(why) = length_break(l, &value, item)
    {
        fail(why);
    }
    if let (Some((pattern, _)), serde_json::Value::String(t)) = (&s.pattern, &value)
        && let Ok(re) = dsh_pattern::compile(pattern)
        && !re.is_match(t)
    {
        fail(format!(
            "does not match the {item}'s `pattern = {}`; give a default that does, or remove it",
            json_string(pattern)
        ));
    }
    if let Some((values, _)) = &s.enum_values {
        let parsed: Vec<serde_json::Value> = values
            .iter()
            .filter_map(|v| serde_json::from_str(&v.text).ok())
            .collect();
        if !parsed.iter().any(|v| same(v, &value)) {
            let list: Vec<&str> = values.iter().map(|v| v.text.as_str()).collect();
            fail(format!(
                "is not one of the {item}'s `enum = [{}]`; give one of them, or remove it",
                list.join(", ")
            ));
        }
    }
    if let Some((c, _)) = &s.const_value
        && let Ok(c) = serde_json::from_str::<serde_json::Value>(&c.text)
        && !same(&c, &value)
    {
        fail(format!(
            "is not the {item}'s `const = {c}`; give that value, or remove it"
        ));
    }
}

/// Why a string's or an array's default breaks the item's `length`, if it does.
fn length_break(l: &Length, value: &serde_json::Value, item: &str) -> Option<String> {
    let (len, unit) = match &value {
        serde_json::Value::String(t) => (Some(t.chars().count() as u64), "character"),
        serde_json::Value::Array(a) => (Some(a.len() as u64), "item"),
        _ => (None, ""),
    };
    let len = len?;
    if l.min.is_some_and(|m| len < m) || l.max.is_some_and(|m| len > m) {
        let plural = if len == 1 { "" } else { "s" };
        let mut bounds = Vec::new();
        if let Some(m) = l.min {
            bounds.push(format!("min = {m}"));
        }
        if let Some(m) = l.max {
            bounds.push(format!("max = {m}"));
        }
        return Some(format!(
            "has {len} {unit}{plural}, outside the {item}'s `length({})`; give a default within it, or remove it",
            bounds.join(", ")
        ));
    }
    None
}

fn range_text(min: Option<Bound>, max: Option<Bound>) -> String {
    let b = |b: Bound| match b {
        Bound::Int(i) => i.to_string(),
        Bound::Float(f) => format!("{f:?}"),
    };
    let mut parts = Vec::new();
    if let Some(m) = min {
        parts.push(format!("min = {}", b(m)));
    }
    if let Some(m) = max {
        parts.push(format!("max = {}", b(m)));
    }
    parts.join(", ")
}

/// A JSON number against a bound, exactly for integers.
fn cmp(n: &serde_json::Number, b: Bound) -> Option<std::cmp::Ordering> {
    let int = n
        .as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from));
    match (int, b) {
        (Some(i), Bound::Int(b)) => Some(i.cmp(&b)),
        _ => n.as_f64()?.partial_cmp(&match b {
            Bound::Int(i) => i as f64,
            Bound::Float(f) => f,
        }),
    }
}

/// JSON equality, numbers by value (`1` is `1.0`).
fn same(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    match (a, b) {
        (serde_json::Value::Number(x), serde_json::Value::Number(y)) => {
            x == y || x.as_f64().is_some_and(|x| y.as_f64() == Some(x))
        }
        _ => a == b,
    }
}

/// The constant that checks an item's default against its type `ty`: its JSON type,
/// an integer type's range, a unit enum's variants (`DefaultFit`). Spanned at the
/// default, so the compiler's message points there; `None` without a default.
pub(crate) fn fit_check(p: &TokenStream, ty: &syn::Type, s: &SchemaAttrs) -> Option<TokenStream> {
    let (d, span) = (s.default.as_ref()?, s.default_span?);
    let value: serde_json::Value = serde_json::from_str(&d.text).ok()?;
    let kind = match d.kind {
        JsonKind::Null => quote!(#p::kind::NULL),
        JsonKind::Bool => quote!(#p::kind::BOOLEAN),
        JsonKind::Int | JsonKind::Float => quote!(#p::kind::NUMBER),
        JsonKind::String => quote!(#p::kind::STRING),
        JsonKind::Array => quote!(#p::kind::ARRAY),
        JsonKind::Object => quote!(#p::kind::OBJECT),
    };
    let int = match (&value, d.kind) {
        (serde_json::Value::Number(n), JsonKind::Int) => {
            match n.as_i64().map(i128::from).or(n.as_u64().map(i128::from)) {
                Some(i) => {
                    let lit = proc_macro2::Literal::i128_unsuffixed(i);
                    quote!(::core::option::Option::Some(#lit))
                }
                None => quote!(::core::option::Option::None),
            }
        }
        _ => quote!(::core::option::Option::None),
    };
    let integral = d.kind == JsonKind::Int;
    let string = match &value {
        serde_json::Value::String(t) => t.clone(),
        _ => String::new(),
    };
    let shown = &d.text;
    let ty_text = crate::types::type_text(ty);
    Some(quote_spanned! {span=>
        const _: () = {
            if let ::core::option::Option::Some(m) = #p::default_fits(
                &<#ty as #p::DefaultFit>::FIT, #kind, #int, #integral, #string, #shown, #ty_text,
            ) {
                ::core::panic!("{}", m.as_str());
            }
        };
    })
}
