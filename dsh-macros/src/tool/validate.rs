//! Rules that span several parts of a tool: the description against the keys, property
//! names against each other, `# Arguments` entries against the parameters. Checks on a
//! single key or parameter happen while parsing.

use super::model::{Input, ToolDef};
use crate::ctxt::Ctxt;

pub(super) fn validate(def: &ToolDef<'_>, errors: &mut Ctxt) {
    // The model reads the description to decide whether and how to call the tool, so a
    // tool without one is almost certainly a mistake.
    if def.attr.description.is_none() && def.description_blank {
        errors.error_at(
            def.sig.ident.span(),
            format!(
                "the tool `{}` has no description: add a doc comment saying what it does (`/// ...`) or `#[tool(description = \"...\")]`",
                def.name
            ),
        );
    }

    let names: Vec<(String, proc_macro2::Span)> = def
        .fields()
        .map(|f| (f.name.clone(), f.ident.span()))
        .collect();
    duplicate_properties(&names, errors);
    duplicate_headers(def, errors);
    argument_entries(def, &names, errors);
}

/// Two parameters with the same JSON name (`path` and `r#path`) would be one property.
fn duplicate_properties(names: &[(String, proc_macro2::Span)], errors: &mut Ctxt) {
    for (i, (name, span)) in names.iter().enumerate() {
        if names[..i].iter().any(|(n, _)| n == name) {
            errors.error_at(
                *span,
                format!("duplicate property `{name}`: two parameters have this JSON name"),
            );
        }
    }
}

/// Each `x-mcp-header` names one header: a client sends one `Mcp-Param-<name>` per
/// parameter, and header names are case-insensitive.
fn duplicate_headers(def: &ToolDef<'_>, errors: &mut Ctxt) {
    let headers: Vec<(&str, &str, proc_macro2::Span)> = def
        .fields()
        .filter_map(|f| {
            let (header, span) = f.schema.header.as_ref()?;
            Some((header.as_str(), f.name.as_str(), *span))
        })
        .collect();
    for (i, (header, name, span)) in headers.iter().enumerate() {
        if let Some((first, other, _)) = headers[..i]
            .iter()
            .find(|(h, _, _)| h.eq_ignore_ascii_case(header))
        {
            errors.error_at(
                *span,
                format!(
                    "duplicate `header` name {header:?}: parameter `{other}` is already mirrored into `Mcp-Param-{first}` (header names are case-insensitive); give `{name}` a header name of its own, or remove its `header`"
                ),
            );
        }
    }
}

/// Each `# Arguments` entry documents exactly one schema parameter, once. (Parsing gave
/// each undocumented parameter the text of its first entry; these rules report the
/// entries that cannot be used.)
fn argument_entries(def: &ToolDef<'_>, names: &[(String, proc_macro2::Span)], errors: &mut Ctxt) {
    for (i, entry) in def.entries.iter().enumerate() {
        let wanted = entry.unraw_name();
        let role = def.inputs.iter().find_map(|input| match input {
            Input::Field(f) if f.name == wanted => Some(Role::Field(f)),
            Input::Context { name: Some(n), .. } if n == wanted => Some(Role::Context),
            Input::Args { name: Some(n), .. } if n == wanted => Some(Role::Args),
            _ => None,
        });
        match role {
            Some(Role::Field(f)) => {
                if !f.docs.is_empty() {
                    errors.error_at(
                        entry.span,
                        format!("`{wanted}` is documented twice, on the parameter and in `# Arguments`: keep one"),
                    );
                } else if def.entries[..i].iter().any(|e| e.unraw_name() == wanted) {
                    errors.error_at(
                        entry.span,
                        format!("`{wanted}` has two entries in `# Arguments`"),
                    );
                }
            }
            // The context is a real parameter, just not a property: documenting it for
            // rustdoc is fine.
            Some(Role::Context) => {}
            Some(Role::Args) => errors.error_at(
                entry.span,
                format!("`{wanted}` is the arguments struct (`#[tool(args)]`): its fields carry the descriptions, document them instead"),
            ),
            None => {
                let known: Vec<String> = names.iter().map(|(n, _)| format!("`{n}`")).collect();
                let known = if known.is_empty() {
                    "the tool has no parameters".to_string()
                } else {
                    format!("parameters: {}", known.join(", "))
                };
                errors.error_at(
                    entry.span,
                    format!(
                        "`# Arguments` documents `{}`, which is not a parameter of `{}` ({known})",
                        entry.name, def.sig.ident
                    ),
                );
            }
        }
    }
}

enum Role<'f> {
    Field(&'f super::model::Field),
    Context,
    Args,
}
