//! Input examples: whole argument objects shown to the model.
//!
//! Two sources, in this order: the ```` ```json ```` blocks of the doc comment's
//! `# Examples` section (read by `arguments::split`), then every
//! `#[tool(example = r#"{..}"#)]`. Each must be a JSON object; anything else is a compile
//! error at the block's line or at the literal. The text is kept as written, minus the
//! whitespace between tokens, so key order and number text reach the model unchanged;
//! the registry validates every example against the parameter schema at registration.

use proc_macro2::Span;

/// One input example, checked to be a JSON object.
pub(super) struct Example {
    /// The example's JSON text, whitespace between tokens removed.
    pub text: String,
    /// Where it was written (the literal, or the block's first doc line).
    pub span: Span,
}

/// Check one example's text: a JSON object, returned compacted, or a message saying what
/// is wrong with the line of `text` it is about (1-based).
pub(super) fn check(text: &str) -> Result<String, (String, usize)> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        (
            format!(
                "an input example must be valid JSON: {e}; write the arguments as one JSON object, e.g. {{\"path\": \"src/lib.rs\"}}"
            ),
            e.line().max(1),
        )
    })?;
    match value {
        serde_json::Value::Object(_) => Ok(compact(text)),
        other => Err((
            format!(
                "an input example must be a JSON object of arguments ({{\"name\": value, ..}}), found {}",
                match other {
                    serde_json::Value::Null => "null",
                    serde_json::Value::Bool(_) => "a boolean",
                    serde_json::Value::Number(_) => "a number",
                    serde_json::Value::String(_) => "a string",
                    serde_json::Value::Array(_) => "an array",
                    serde_json::Value::Object(_) => "an object",
                }
            ),
            1,
        )),
    }
}

/// `text` (valid JSON) without the whitespace between tokens.
fn compact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    for c in text.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !c.is_whitespace() {
            out.push(c);
        }
    }
    out
}

/// Whether a fence line opens a JSON block: ```` ```json ```` (a `,`-separated attribute
/// list may follow, as rustdoc allows).
pub(super) fn is_json_fence(trimmed: &str) -> bool {
    let info = trimmed.trim_start_matches(['`', '~']).trim();
    let lang = info
        .split([',', ' ', '\t'])
        .next()
        .unwrap_or_default()
        .trim_start_matches('{')
        .trim_start_matches('.');
    lang.eq_ignore_ascii_case("json")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_are_kept_compact_in_their_order() {
        assert_eq!(
            check("{ \"b\": 1.50,\n  \"a\": \"x y\\\" z\" }").unwrap(),
            r#"{"b":1.50,"a":"x y\" z"}"#
        );
    }

    #[test]
    fn other_values_and_bad_json_are_refused() {
        assert!(check("[1]").unwrap_err().0.contains("found an array"));
        assert!(
            check("{\"a\": }")
                .unwrap_err()
                .0
                .starts_with("an input example must be valid JSON")
        );
        assert!(check("\"s\"").unwrap_err().0.contains("found a string"));
    }

    #[test]
    fn json_fences() {
        assert!(is_json_fence("```json"));
        assert!(is_json_fence("```JSON,ignore"));
        assert!(!is_json_fence("```rust"));
        assert!(!is_json_fence("```"));
    }
}
