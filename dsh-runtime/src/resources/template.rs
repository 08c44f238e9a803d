//! URI templates of RFC 6570 level 1: literal text and `{name}` placeholders.

use std::fmt;

/// A URI template of RFC 6570 level 1 (`test://template/{id}/data`): literal text and
/// simple `{name}` placeholders, each matching one or more characters up to the next
/// literal text (never a `/`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UriTemplate {
    pub(super) text: String,
    pub(super) parts: Vec<Part>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Part {
    Literal(String),
    Placeholder(String),
}

/// Why a text is not a level-1 URI template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemplateError(pub String);

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TemplateError {}

impl UriTemplate {
    /// Parse `text`.
    ///
    /// # Errors
    ///
    /// An unclosed or empty `{}`, a placeholder name that is not letters, digits and
    /// `_`, an operator of a later level (`{+x}`, `{?x}`), two placeholders with nothing
    /// between them, or a name used twice.
    pub fn parse(text: &str) -> Result<UriTemplate, TemplateError> {
        let mut parts = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            match rest.find('{') {
                Some(0) => {
                    let close = rest
                        .find('}')
                        .ok_or_else(|| TemplateError(format!("`{text}`: a `{{` is not closed")))?;
                    let name = &rest[1..close];
                    check_name(text, name)?;
                    if matches!(parts.last(), Some(Part::Placeholder(_))) {
                        return Err(TemplateError(format!(
                            "`{text}`: placeholders `{{..}}{{{name}}}` need literal text between them"
                        )));
                    }
                    if parts
                        .iter()
                        .any(|p| matches!(p, Part::Placeholder(n) if n == name))
                    {
                        return Err(TemplateError(format!(
                            "`{text}`: placeholder `{{{name}}}` appears twice"
                        )));
                    }
                    parts.push(Part::Placeholder(name.to_string()));
                    rest = &rest[close + 1..];
                }
                Some(i) => {
                    parts.push(Part::Literal(rest[..i].to_string()));
                    rest = &rest[i..];
                }
                None => {
                    if rest.contains('}') {
                        return Err(TemplateError(format!("`{text}`: a `}}` without its `{{`")));
                    }
                    parts.push(Part::Literal(rest.to_string()));
                    rest = "";
                }
            }
        }
        if let Some(Part::Literal(l)) = parts.first()
            && l.contains('}')
        {
            return Err(TemplateError(format!("`{text}`: a `}}` without its `{{`")));
        }
        Ok(UriTemplate {
            text: text.to_string(),
            parts,
        })
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The placeholders' names, in order.
    pub fn placeholders(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Placeholder(name) => Some(name.as_str()),
            Part::Literal(_) => None,
        })
    }

    /// Whether the template has no placeholder (a fixed URI).
    pub fn is_fixed(&self) -> bool {
        self.placeholders().next().is_none()
    }

    /// The placeholders' values in `uri`, in order, when it matches (each value
    /// percent-decoded; `None` when a value is not valid UTF-8 once decoded). A value
    /// ends where the literal text after it first starts outside a `%XX` escape.
    pub fn matches(&self, uri: &str) -> Option<Vec<(String, String)>> {
        let mut values = Vec::new();
        let mut rest = uri;
        let mut parts = self.parts.iter().peekable();
        while let Some(part) = parts.next() {
            match part {
                Part::Literal(l) => rest = rest.strip_prefix(l.as_str())?,
                Part::Placeholder(name) => {
                    let end = match parts.peek() {
                        Some(Part::Literal(next)) => find_outside_escapes(rest, next)?,
                        _ => rest.len(),
                    };
                    let raw = &rest[..end];
                    if raw.is_empty() || raw.contains('/') {
                        return None;
                    }
                    values.push((name.clone(), decode(raw)?));
                    rest = &rest[end..];
                }
            }
        }
        rest.is_empty().then_some(values)
    }

    /// The URI with each placeholder replaced by its value (percent-encoding what is not
    /// an RFC 3986 unreserved character, and the character that starts the literal text
    /// after the placeholder, so that the URI [`matches`](Self::matches) back to the
    /// same values: `x://{a}-{b}` with `a = "1-2"` is `x://1%2D2-3`). A placeholder
    /// without a value stays empty.
    pub fn expand(&self, values: &[(&str, &str)]) -> String {
        let mut out = String::new();
        for (i, part) in self.parts.iter().enumerate() {
            match part {
                Part::Literal(l) => out.push_str(l),
                Part::Placeholder(name) => {
                    let stop = match self.parts.get(i + 1) {
                        Some(Part::Literal(next)) => next.bytes().next(),
                        _ => None,
                    };
                    if let Some((_, v)) = values.iter().find(|(n, _)| n == name) {
                        encode(v, stop, &mut out);
                    }
                }
            }
        }
        out
    }
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// A part of literal text.
pub(super) fn literal(text: &str) -> Part {
    Part::Literal(text.to_string())
}

fn check_name(text: &str, name: &str) -> Result<(), TemplateError> {
    if name.is_empty() {
        return Err(TemplateError(format!(
            "`{text}`: an empty placeholder `{{}}`"
        )));
    }
    if let Some(op) = name.chars().next().filter(|c| "+#./;?&=,!@|".contains(*c)) {
        return Err(TemplateError(format!(
            "`{text}`: `{{{name}}}` uses the operator `{op}` of a later level of RFC 6570; only `{{name}}` is supported"
        )));
    }
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(TemplateError(format!(
            "`{text}`: placeholder `{{{name}}}`: a name is letters, digits and `_`"
        )));
    }
    Ok(())
}

fn encode(value: &str, stop: Option<u8>, out: &mut String) {
    for b in value.bytes() {
        if (b.is_ascii_alphanumeric() || b"-._~".contains(&b)) && Some(b) != stop {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
}

/// The first place `literal` starts in `text` at a character or `%XX` escape boundary
/// (never inside an escape: `%7B` does not hold a literal `B` that ends a value).
fn find_outside_escapes(text: &str, literal: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if text[i..].starts_with(literal) {
            return Some(i);
        }
        i += match bytes[i] {
            b'%' if i + 2 < bytes.len()
                && bytes[i + 1].is_ascii_hexdigit()
                && bytes[i + 2].is_ascii_hexdigit() =>
            {
                3
            }
            _ => text[i..].chars().next().map_or(1, char::len_utf8),
        };
    }
    None
}

fn decode(raw: &str) -> Option<String> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = raw.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_matches_what_it_expands_to() {
        let t = UriTemplate::parse("test://template/{id}/data").unwrap();
        assert_eq!(t.placeholders().collect::<Vec<_>>(), ["id"]);
        let uri = t.expand(&[("id", "a b/c")]);
        assert_eq!(uri, "test://template/a%20b%2Fc/data");
        assert_eq!(t.matches(&uri), Some(vec![("id".into(), "a b/c".into())]));
        assert_eq!(
            t.matches("test://template/7/data"),
            Some(vec![("id".into(), "7".into())])
        );
        assert_eq!(t.matches("test://template//data"), None);
        assert_eq!(t.matches("test://template/7/other"), None);
        assert_eq!(t.matches("test://template/a/b/data"), None);
        // The character starting the next literal text is encoded too.
        let t = UriTemplate::parse("x://{a}-{b}").unwrap();
        let uri = t.expand(&[("a", "1-2"), ("b", "3-4")]);
        assert_eq!(uri, "x://1%2D2-3-4");
        assert_eq!(
            t.matches(&uri),
            Some(vec![("a".into(), "1-2".into()), ("b".into(), "3-4".into())])
        );
        // A literal starting with a hex digit is not found inside an escape.
        let hex = UriTemplate::parse("a://{p0}B{p1}").unwrap();
        let uri = hex.expand(&[("p0", "{"), ("p1", "A")]);
        assert_eq!(uri, "a://%7BBA");
        assert_eq!(
            hex.matches(&uri),
            Some(vec![("p0".into(), "{".into()), ("p1".into(), "A".into())])
        );
    }

    #[test]
    fn bad_templates_say_why() {
        for (text, why) in [
            ("x://{", "not closed"),
            ("x://{}", "empty"),
            ("x://{+a}", "operator"),
            ("x://{a}{b}", "literal text between"),
            ("x://{a}/{a}", "twice"),
            ("x://{a-b}", "letters, digits"),
            ("x://a}", "without its"),
        ] {
            let e = UriTemplate::parse(text).unwrap_err().0;
            assert!(e.contains(why), "{text}: {e}");
        }
    }
}
