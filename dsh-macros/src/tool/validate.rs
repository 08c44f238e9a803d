//! Rules that span several parts of a tool: the description against the keys, property
//! names against each other, `# Arguments` entries against the parameters. Checks on a
//! single key or parameter happen while parsing.

use super::model::{Input, ToolDef};

pub fn validate(def: &mut ToolDef<'_>, errors: &mut Vec<syn::Error>) {
    // The model reads the description to decide whether and how to call the tool, so a
    // tool without one is almost certainly a mistake.
    if def.attr.description.is_none() && def.description_blank {
        errors.push(syn::Error::new(
            def.sig.ident.span(),
            format!(
                "the tool `{}` has no description: add a doc comment saying what it does (`/// ...`) or `#[tool(description = \"...\")]`",
                def.name
            ),
        ));
    }

    // Two parameters with the same JSON name (`path` and `r#path`) would be one property.
    let names: Vec<(String, proc_macro2::Span)> = def
        .fields()
        .map(|f| (f.name.clone(), f.ident.span()))
        .collect();
    for (i, (name, span)) in names.iter().enumerate() {
        if names[..i].iter().any(|(n, _)| n == name) {
            errors.push(syn::Error::new(
                *span,
                format!("duplicate property `{name}`: two parameters have this JSON name"),
            ));
        }
    }

    // Each `# Arguments` entry documents exactly one schema parameter, once.
    let entries = std::mem::take(&mut def.entries);
    for entry in &entries {
        let wanted = entry.name.strip_prefix("r#").unwrap_or(&entry.name);
        let role = def.inputs.iter_mut().find_map(|i| match i {
            Input::Field(f) if f.name == wanted => Some(Role::Field(f)),
            Input::Context { name: Some(n), .. } if n == wanted => Some(Role::Context),
            Input::Args { name: Some(n), .. } if n == wanted => Some(Role::Args),
            _ => None,
        });
        match role {
            Some(Role::Field(f)) => {
                if !f.docs.is_empty() {
                    errors.push(syn::Error::new(
                        entry.span,
                        format!("`{wanted}` is documented twice, on the parameter and in `# Arguments`: keep one"),
                    ));
                } else if f.entry.is_some() {
                    errors.push(syn::Error::new(
                        entry.span,
                        format!("`{wanted}` has two entries in `# Arguments`"),
                    ));
                } else {
                    f.entry = Some(entry.text.clone());
                }
            }
            // The context is a real parameter, just not a property: documenting it for
            // rustdoc is fine.
            Some(Role::Context) => {}
            Some(Role::Args) => errors.push(syn::Error::new(
                entry.span,
                format!("`{wanted}` is the arguments struct (`#[tool(args)]`): its fields carry the descriptions, document them instead"),
            )),
            None => {
                let known: Vec<String> = names.iter().map(|(n, _)| format!("`{n}`")).collect();
                let known = if known.is_empty() {
                    "the tool has no parameters".to_string()
                } else {
                    format!("parameters: {}", known.join(", "))
                };
                errors.push(syn::Error::new(
                    entry.span,
                    format!(
                        "`# Arguments` documents `{}`, which is not a parameter of `{}` ({known})",
                        entry.name, def.sig.ident
                    ),
                ));
            }
        }
    }
    def.entries = entries;
}

enum Role<'f> {
    Field(&'f mut super::model::Field),
    Context,
    Args,
}
