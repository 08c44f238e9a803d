//! The rustdoc `# Arguments` section of a tool fn's doc comment.
//!
//! Accepted syntax (the rustdoc convention):
//!
//! ```text
//! /// Read a file.
//! ///
//! /// # Arguments
//! ///
//! /// * `path` - Absolute path of the file.
//! /// * `limit`: Maximum number of lines,
//! ///   continued on an indented line.
//! ```
//!
//! Bullets are `*`, `-` or `+`; the separator after the name is `-`, `:` or a dash, or
//! nothing. The section ends at the next heading. Its entries become property
//! descriptions and the section is left out of the tool description (the model sees each
//! text once, on its property). Only doc attributes that are string literals can be read
//! here; `#[doc = include_str!(..)]` text passes through to the description unread.

use proc_macro2::Span;

use crate::ctxt::Ctxt;

/// One `* `name` - text` entry.
pub struct Entry {
    pub name: String,
    pub text: String,
    /// The doc line the entry starts on (the only span a doc comment line has).
    pub span: Span,
}

impl Entry {
    /// The parameter name, without `r#`.
    pub fn unraw_name(&self) -> &str {
        self.name.strip_prefix("r#").unwrap_or(&self.name)
    }
}

/// A fn doc comment split into the tool description and the `# Arguments` entries.
pub struct Split {
    /// The `#[doc]` expressions forming the description, section removed.
    pub description: Vec<syn::Expr>,
    /// Whether the description is known to be blank (every part is a literal and all of
    /// them are whitespace). A non-literal part is assumed to carry text.
    pub blank: bool,
    pub entries: Vec<Entry>,
}

/// Split the doc attributes of a fn. Malformed entries are reported in `errors`.
pub fn split(attrs: &[syn::Attribute], errors: &mut Ctxt) -> Split {
    let mut description = Vec::new();
    let mut entries: Vec<Entry> = Vec::new();
    let mut blank = true;
    let mut state = State::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        let syn::Meta::NameValue(nv) = &attr.meta else {
            continue;
        };
        let lit = match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => s,
            other => {
                // Unreadable text ends the section and is kept as it is.
                state.section = false;
                blank = false;
                description.push(other.clone());
                continue;
            }
        };
        let span = lit.span();
        let text = lit.value();
        let mut kept: Vec<&str> = Vec::new();
        for line in text.split('\n') {
            if state.line(line, span, &mut entries, errors) {
                kept.push(line);
            }
        }
        if kept.is_empty() {
            continue;
        }
        let joined = kept.join("\n");
        if !joined.trim().is_empty() {
            blank = false;
        }
        let lit = syn::LitStr::new(&joined, span);
        description.push(syn::Expr::Lit(syn::ExprLit {
            attrs: Vec::new(),
            lit: syn::Lit::Str(lit),
        }));
    }
    Split {
        description,
        blank,
        entries,
    }
}

#[derive(Default)]
struct State {
    /// Inside the `# Arguments` section.
    section: bool,
    /// Inside a fenced code block (where `#` starts hidden doctest lines, not headings).
    fence: bool,
    /// The entry continuation lines are appended to.
    open: bool,
}

impl State {
    /// Feed one line; returns whether it stays in the description.
    fn line(
        &mut self,
        line: &str,
        span: Span,
        entries: &mut Vec<Entry>,
        errors: &mut Ctxt,
    ) -> bool {
        let trimmed = line.trim();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            self.fence = !self.fence;
            return !self.section;
        }
        if let (false, Some(title)) = (self.fence, heading(trimmed)) {
            self.section = title.eq_ignore_ascii_case("arguments");
            self.open = false;
            return !self.section;
        }
        if !self.section {
            return true;
        }
        if trimmed.is_empty() {
            return false;
        }
        if let Some(rest) = bullet(trimmed) {
            match entry(rest) {
                Some((name, text)) => {
                    entries.push(Entry { name, text, span });
                    self.open = true;
                }
                None => {
                    errors.push(syn::Error::new(
                        span,
                        "expected an entry of the form `* `name` - description` in the `# Arguments` section",
                    ));
                    self.open = false;
                }
            }
        } else if let (true, Some(last)) = (self.open, entries.last_mut()) {
            if !last.text.is_empty() {
                last.text.push('\n');
            }
            last.text.push_str(trimmed);
        } else {
            errors.push(syn::Error::new(
                span,
                "the `# Arguments` section holds only entries of the form `* `name` - description`; move other text above the heading",
            ));
        }
        false
    }
}

/// The title of a Markdown ATX heading (`# Title` .. `###### Title`).
fn heading(line: &str) -> Option<&str> {
    let hashes = line.chars().take_while(|c| *c == '#').count();
    if hashes == 0 || hashes > 6 {
        return None;
    }
    let rest = &line[hashes..];
    if rest.is_empty() {
        Some("")
    } else if rest.starts_with(' ') || rest.starts_with('\t') {
        Some(rest.trim())
    } else {
        None
    }
}

fn bullet(line: &str) -> Option<&str> {
    let mut chars = line.chars();
    match (chars.next(), chars.next()) {
        (Some('*' | '-' | '+'), Some(' ' | '\t')) => Some(line[2..].trim_start()),
        _ => None,
    }
}

/// `` `name` - text `` -> (name, text).
fn entry(rest: &str) -> Option<(String, String)> {
    let rest = rest.strip_prefix('`')?;
    let end = rest.find('`')?;
    let name = rest[..end].trim();
    if name.is_empty() {
        return None;
    }
    let mut text = rest[end + 1..].trim_start();
    for sep in ["-", ":", "\u{2013}", "\u{2014}"] {
        if let Some(t) = text.strip_prefix(sep) {
            text = t.trim_start();
            break;
        }
    }
    Some((name.to_string(), text.trim_end().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::ToTokens;
    use syn::parse_quote;

    fn texts(s: &Split) -> Vec<String> {
        s.description
            .iter()
            .map(|e| e.to_token_stream().to_string())
            .collect()
    }

    #[test]
    fn splits_the_section_off() {
        let f: syn::ItemFn = parse_quote! {
            /// Read a file.
            ///
            /// # Arguments
            ///
            /// * `path` - Absolute path.
            /// * `limit`: Max lines,
            ///   at most 100.
            /// - `r#type`
            ///
            /// # Errors
            /// When missing.
            #[doc = include_str!("x.md")]
            async fn f() {}
        };
        let mut errors = Ctxt::new();
        let s = split(&f.attrs, &mut errors);
        assert!(errors.check().is_ok());
        assert!(!s.blank);
        let e: Vec<(&str, &str)> = s
            .entries
            .iter()
            .map(|e| (e.name.as_str(), e.text.as_str()))
            .collect();
        assert_eq!(
            e,
            [
                ("path", "Absolute path."),
                ("limit", "Max lines,\nat most 100."),
                ("r#type", "")
            ]
        );
        assert_eq!(
            texts(&s),
            [
                "\" Read a file.\"",
                "\"\"",
                "\" # Errors\"",
                "\" When missing.\"",
                "include_str ! (\"x.md\")"
            ]
        );
    }

    #[test]
    fn reports_malformed_entries() {
        let f: syn::ItemFn = parse_quote! {
            /// Tool.
            ///
            /// # Arguments
            /// Some prose.
            /// * path - no backticks
            async fn f() {}
        };
        let mut errors = Ctxt::new();
        let s = split(&f.attrs, &mut errors);
        assert_eq!(errors.len(), 2);
        assert!(s.entries.is_empty());
    }

    #[test]
    fn headings_in_code_blocks_are_not_sections() {
        let f: syn::ItemFn = parse_quote! {
            /** Tool.

            ```
            # Arguments
            ```
            */
            async fn f() {}
        };
        let mut errors = Ctxt::new();
        let s = split(&f.attrs, &mut errors);
        assert!(errors.check().is_ok() && s.entries.is_empty());
        assert!(texts(&s)[0].contains("# Arguments"));
    }

    #[test]
    fn blank_docs_are_blank() {
        let f: syn::ItemFn = parse_quote! {
            ///
            /// # Arguments
            /// * `a` - A.
            async fn f() {}
        };
        let mut errors = Ctxt::new();
        assert!(split(&f.attrs, &mut errors).blank);
        assert!(errors.check().is_ok());
    }
}
