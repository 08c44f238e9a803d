//! The URI of `#[resource]`, checked at compile time: a scheme, then a URI template of
//! RFC 6570 level 1 (`{name}` placeholders).
//!
//! The rules and messages are the runtime's (`dsh_runtime::resources::UriTemplate::parse`,
//! which this crate cannot call: the runtime depends on it), so a template the macro
//! accepts is one the runtime parses; `tests` below keeps the cases of the runtime's own
//! test.

/// The placeholders of `text`, in order, or why it is not a resource URI.
pub(super) fn placeholders(text: &str) -> Result<Vec<String>, String> {
    check_scheme(text)?;
    let mut names: Vec<String> = Vec::new();
    let mut rest = text;
    // Whether the last part was a placeholder.
    let mut after_placeholder = false;
    while !rest.is_empty() {
        match rest.find('{') {
            Some(0) => {
                let close = rest
                    .find('}')
                    .ok_or_else(|| format!("`{text}`: a `{{` is not closed"))?;
                let name = &rest[1..close];
                check_name(text, name)?;
                if after_placeholder {
                    return Err(format!(
                        "`{text}`: placeholders `{{..}}{{{name}}}` need literal text between them"
                    ));
                }
                if names.iter().any(|n| n == name) {
                    return Err(format!("`{text}`: placeholder `{{{name}}}` appears twice"));
                }
                names.push(name.to_string());
                after_placeholder = true;
                rest = &rest[close + 1..];
            }
            Some(i) => {
                if rest[..i].contains('}') {
                    return Err(format!("`{text}`: a `}}` without its `{{`"));
                }
                after_placeholder = false;
                rest = &rest[i..];
            }
            None => {
                if rest.contains('}') {
                    return Err(format!("`{text}`: a `}}` without its `{{`"));
                }
                rest = "";
            }
        }
    }
    Ok(names)
}

/// A URI starts with its scheme: a letter, then letters, digits, `+`, `-` or `.`, then `:`.
fn check_scheme(text: &str) -> Result<(), String> {
    let scheme = text.split(':').next().unwrap_or_default();
    let ok = text.contains(':')
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{text}` is not a URI: a resource URI starts with a scheme, such as `file:///..`, `docs://..` or `users://{{id}}/profile`"
        ))
    }
}

fn check_name(text: &str, name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err(format!("`{text}`: an empty placeholder `{{}}`"));
    }
    if let Some(op) = name.chars().next().filter(|c| "+#./;?&=,!@|".contains(*c)) {
        return Err(format!(
            "`{text}`: `{{{name}}}` uses the operator `{op}` of a later level of RFC 6570; only `{{name}}` is supported"
        ));
    }
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!(
            "`{text}`: placeholder `{{{name}}}`: a name is letters, digits and `_`"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_placeholders() {
        assert_eq!(
            placeholders("test://template/{id}/data"),
            Ok(vec!["id".to_string()])
        );
        assert_eq!(
            placeholders("a://{x}-{y_2}.json"),
            Ok(vec!["x".to_string(), "y_2".to_string()])
        );
        assert_eq!(placeholders("file:///etc/hosts"), Ok(vec![]));
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
            ("x://a}{b}", "without its"),
            ("no-scheme/{a}", "not a URI"),
            ("1x://a", "not a URI"),
            ("{a}://x", "not a URI"),
        ] {
            let e = placeholders(text).unwrap_err();
            assert!(e.contains(why), "{text}: {e}");
        }
    }
}
