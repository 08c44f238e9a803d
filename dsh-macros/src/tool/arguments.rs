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

use super::examples::{self, Example};

/// One `* `name` - text` entry.
pub(super) struct Entry {
    pub name: String,
    pub text: String,
    /// The doc line the entry starts on (the only span a doc comment line has).
    pub span: Span,
}

impl Entry {
    /// The parameter name, without `r#`.
    pub(super) fn unraw_name(&self) -> &str {
        self.name.strip_prefix("r#").unwrap_or(&self.name)
    }
}

/// A fn doc comment split into the tool description and the `# Arguments` entries.
pub(super) struct Split {
    /// The `#[doc]` expressions forming the description, section removed.
    pub description: Vec<syn::Expr>,
    /// Whether the description is known to be blank (every part is a literal and all of
    /// them are whitespace). A non-literal part is assumed to carry text.
    pub blank: bool,
    pub entries: Vec<Entry>,
    /// The ```` ```json ```` blocks of the `# Examples` section, checked to be objects.
    pub examples: Vec<Example>,
}

/// Split the doc attributes of a fn. Malformed entries are reported in `errors`.
pub(super) fn split(attrs: &[syn::Attribute], errors: &mut Ctxt) -> Split {
    let mut description = Vec::new();
    let mut entries: Vec<Entry> = Vec::new();
    let mut found: Vec<Example> = Vec::new();
    let mut blank = true;
    let mut state = State {
        json_examples: examples_have_json(attrs),
        ..State::default()
    };
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
            if state.line(line, span, &mut entries, &mut found, errors) {
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
    if let Some(block) = state.block.take() {
        errors.push(syn::Error::new(
            block.spans[0],
            "this ```json block of the `# Examples` section is never closed; end it with a ``` line",
        ));
    }
    Split {
        description,
        blank,
        entries,
        examples: found,
    }
}

/// The literal text of every doc attribute, line by line, with its span.
fn doc_lines(attrs: &[syn::Attribute]) -> impl Iterator<Item = String> + '_ {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(syn::MetaNameValue {
                value:
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(s),
                        ..
                    }),
                ..
            }) => Some(s.value()),
            _ => None,
        })
        .flat_map(|t| t.split('\n').map(str::to_string).collect::<Vec<_>>())
}

/// Whether an `# Examples` section holds a ```` ```json ```` block: only then is the
/// section read as input examples (and left out of the description); an `# Examples`
/// section of other code stays in the description as it is.
fn examples_have_json(attrs: &[syn::Attribute]) -> bool {
    let (mut fence, mut in_examples) = (false, false);
    for line in doc_lines(attrs) {
        let trimmed = line.trim();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            if !fence && in_examples && examples::is_json_fence(trimmed) {
                return true;
            }
            fence = !fence;
        } else if let (false, Some(title)) = (fence, heading(trimmed)) {
            in_examples = title.eq_ignore_ascii_case("examples");
        }
    }
    false
}

/// A ```` ```json ```` block being read.
struct Block {
    lines: Vec<String>,
    spans: Vec<Span>,
}

#[derive(Default)]
struct State {
    /// Inside the `# Arguments` section.
    section: bool,
    /// Inside a fenced code block (where `#` starts hidden doctest lines, not headings).
    fence: bool,
    /// The entry continuation lines are appended to.
    open: bool,
    /// The `# Examples` section holds JSON blocks: it is read as input examples.
    json_examples: bool,
    /// Inside that section.
    in_examples: bool,
    /// The JSON block being read.
    block: Option<Block>,
}

impl State {
    /// Feed one line; returns whether it stays in the description.
    fn line(
        &mut self,
        line: &str,
        span: Span,
        entries: &mut Vec<Entry>,
        found: &mut Vec<Example>,
        errors: &mut Ctxt,
    ) -> bool {
        let trimmed = line.trim();
        if self.in_examples && self.examples_line(line, span, found, errors) {
            return false;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            self.fence = !self.fence;
            return !self.section;
        }
        if let (false, Some(title)) = (self.fence, heading(trimmed)) {
            self.section = title.eq_ignore_ascii_case("arguments");
            self.in_examples = self.json_examples && title.eq_ignore_ascii_case("examples");
            self.open = false;
            return !(self.section || self.in_examples);
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

impl State {
    /// A line of the `# Examples` section: JSON blocks become examples, prose (a caption
    /// for the rustdoc reader) is left out, another kind of code block is an error.
    /// Returns `false` for a heading, which ends the section.
    fn examples_line(
        &mut self,
        line: &str,
        span: Span,
        found: &mut Vec<Example>,
        errors: &mut Ctxt,
    ) -> bool {
        let trimmed = line.trim();
        let fence = trimmed.starts_with("```") || trimmed.starts_with("~~~");
        if fence {
            if let Some(block) = self.block.take() {
                let text = block.lines.join("\n");
                match examples::check(&text) {
                    Ok(text) => found.push(Example {
                        text,
                        span: block.spans[0],
                    }),
                    Err((msg, line)) => {
                        let at = block.spans.get(line - 1).or(block.spans.first());
                        errors.push(syn::Error::new(at.copied().unwrap_or(span), msg));
                    }
                }
                self.fence = false;
            } else if self.fence {
                self.fence = false;
            } else {
                self.fence = true;
                if examples::is_json_fence(trimmed) {
                    self.block = Some(Block {
                        lines: Vec::new(),
                        spans: Vec::new(),
                    });
                } else {
                    errors.push(syn::Error::new(
                        span,
                        "an `# Examples` section with ```json argument examples holds only ```json blocks (each one JSON object of arguments); move this code block above the heading",
                    ));
                }
            }
            return true;
        }
        if let Some(block) = &mut self.block {
            block.lines.push(line.to_string());
            block.spans.push(span);
            return true;
        }
        self.fence || heading(trimmed).is_none()
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
    fn json_examples_are_read_out_of_the_description() {
        let f: syn::ItemFn = parse_quote! {
            /// Read.
            ///
            /// # Examples
            ///
            /// A caption.
            ///
            /// ```json
            /// {"path": "a",
            ///  "limit": 2}
            /// ```
            ///
            /// ```json
            /// {"path": "b"}
            /// ```
            ///
            /// # Errors
            /// Missing.
            async fn f() {}
        };
        let mut errors = Ctxt::new();
        let s = split(&f.attrs, &mut errors);
        assert!(errors.check().is_ok());
        let ex: Vec<&str> = s.examples.iter().map(|e| e.text.as_str()).collect();
        assert_eq!(ex, [r#"{"path":"a","limit":2}"#, r#"{"path":"b"}"#]);
        assert_eq!(
            texts(&s),
            ["\" Read.\"", "\"\"", "\" # Errors\"", "\" Missing.\""]
        );
    }

    #[test]
    fn examples_sections_without_json_stay() {
        let f: syn::ItemFn = parse_quote! {
            /// Read.
            ///
            /// # Examples
            ///
            /// ```
            /// let x = 1;
            /// ```
            async fn f() {}
        };
        let mut errors = Ctxt::new();
        let s = split(&f.attrs, &mut errors);
        assert!(errors.check().is_ok() && s.examples.is_empty());
        assert_eq!(texts(&s).len(), 7);
    }

    #[test]
    fn bad_examples_are_errors() {
        let f: syn::ItemFn = parse_quote! {
            /// Read.
            ///
            /// # Examples
            ///
            /// ```json
            /// [1]
            /// ```
            ///
            /// ```text
            /// x
            /// ```
            ///
            /// ```json
            /// {"a": 1}
            async fn f() {}
        };
        let mut errors = Ctxt::new();
        let s = split(&f.attrs, &mut errors);
        assert_eq!(errors.len(), 3);
        assert!(s.examples.is_empty());
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
