//! The JSON Schema `pattern` keyword as dsh-rs reads it.
//!
//! A pattern is written in the syntax of the [`regex`] crate (a subset of ECMA-262 without
//! look-around or back-references) and, as in JSON Schema, is not anchored. Its shorthand
//! classes mean what they mean in ECMA-262, not the regex crate's Unicode defaults:
//!
//! - `\d` is `[0-9]` and `\w` is `[A-Za-z0-9_]`;
//! - `\b`/`\B` are word boundaries by that ASCII `\w`, and inside a class `[\b]` is a
//!   backspace;
//! - `\s` is ECMA-262's white space and line terminators (ASCII `\t\n\v\f\r` and space,
//!   plus U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000, U+FEFF);
//! - `\D`, `\W` and `\S` are their complements.
//!
//! The runtime's validator (`dsh_runtime::schema::Pattern`) and the macros' compile-time
//! check of a `#[schema(default)]` both compile through [`compile`], so a default is
//! matched exactly as an argument will be.
//!
//! ```
//! let re = dsh_pattern::compile(r"^\d{3}$").unwrap();
//! assert!(re.is_match("123"));
//! assert!(!re.is_match("١٢٣")); // Arabic-Indic digits are not `\d` in ECMA-262
//! ```

use std::borrow::Cow;

/// Compile `source` with the shorthand classes translated (see the crate docs).
///
/// # Errors
///
/// The regex crate's error when the pattern does not compile (its message names the
/// position); the error is about the translated text only where a class was rewritten.
pub fn compile(source: &str) -> Result<regex::Regex, regex::Error> {
    regex::Regex::new(&ecma_classes(source))
}

/// ECMA-262's `\s` as the inside of a character class.
const ECMA_SPACE: &str = r"\t\n\x0B\x0C\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";

/// Rewrites the shorthand classes of `source` (regex crate syntax) to their ECMA-262
/// meaning, as the crate docs list them. Everything else is copied unchanged.
///
/// ```
/// assert_eq!(dsh_pattern::ecma_classes(r"^\d+$"), "^[0-9]+$");
/// assert_eq!(dsh_pattern::ecma_classes(r"[\w-]"), "[0-9A-Za-z_-]");
/// assert_eq!(dsh_pattern::ecma_classes("plain"), "plain");
/// ```
pub fn ecma_classes(source: &str) -> Cow<'_, str> {
    if !source.contains('\\') {
        return Cow::Borrowed(source);
    }
    let mut out = String::with_capacity(source.len() + 32);
    // Nesting of character classes (the regex crate allows `[a[^b]]`).
    let mut depth = 0usize;
    let mut chars = source.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let inside = depth > 0;
                match chars.next() {
                    Some('d') if inside => out.push_str("0-9"),
                    Some('d') => out.push_str("[0-9]"),
                    Some('w') if inside => out.push_str("0-9A-Za-z_"),
                    Some('w') => out.push_str("[0-9A-Za-z_]"),
                    Some('s') if inside => out.push_str(ECMA_SPACE),
                    Some('s') => {
                        out.push('[');
                        out.push_str(ECMA_SPACE);
                        out.push(']');
                    }
                    // Complements are nested classes inside a class.
                    Some('D') => out.push_str("[^0-9]"),
                    Some('W') => out.push_str("[^0-9A-Za-z_]"),
                    Some('S') => {
                        out.push_str("[^");
                        out.push_str(ECMA_SPACE);
                        out.push(']');
                    }
                    Some('b') if inside => out.push_str(r"\x08"),
                    Some('b') => out.push_str(r"(?-u:\b)"),
                    Some('B') if !inside => out.push_str(r"(?-u:\B)"),
                    Some(other) => {
                        out.push('\\');
                        out.push(other);
                    }
                    None => out.push('\\'),
                }
            }
            '[' => {
                depth += 1;
                out.push('[');
                // A leading `^` negates and a `]` right after is a literal.
                if chars.peek() == Some(&'^') {
                    chars.next();
                    out.push('^');
                }
                if chars.peek() == Some(&']') {
                    chars.next();
                    out.push(']');
                }
            }
            ']' if depth > 0 => {
                depth -= 1;
                out.push(']');
            }
            other => out.push(other),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shorthand_classes_take_their_ecma_meaning() {
        let cases: &[(&str, &str, bool)] = &[
            (r"^\d$", "7", true),
            (r"^\d$", "\u{0663}", false),
            (r"^\w+$", "a_Z9", true),
            (r"^\w$", "é", false),
            (r"^\s$", "\u{FEFF}", true),
            (r"^\s$", "\u{85}", false),
            (r"^\S$", "\u{85}", true),
            (r"^[\b]$", "\u{8}", true),
            (r"\bé", "é", false),
            (r"^[^\d]$", "x", true),
            (r"^[\D]$", "5", false),
            (r"^[]a]$", "]", true),
        ];
        for &(pattern, text, expected) in cases {
            let re = compile(pattern).unwrap();
            assert_eq!(re.is_match(text), expected, "{pattern} against {text:?}");
        }
    }

    #[test]
    fn a_pattern_without_escapes_is_borrowed() {
        assert!(matches!(ecma_classes("[a-z]+"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_bad_pattern_is_the_regex_error() {
        assert!(compile("(").is_err());
    }
}
