//! Full JSON Schema 2020-12 validation through the `jsonschema` crate (feature
//! `json-schema`): the meta-schema check at registration and the verdict on what the
//! runtime's own validator does not check.

use crate::json::Value;
use crate::violations::{Path, Violations, write_path};

/// The deepest value handed to `jsonschema`, which recurses once per level (as does
/// dropping the `serde_json` copy it reads): a deeper value is refused, never checked.
pub(crate) const MAX_FULL_DEPTH: usize = 128;

/// The most characters of one `jsonschema` message a violation quotes.
const MAX_MESSAGE_CHARS: usize = 200;

/// A compiled `jsonschema` validator for one document.
pub(crate) struct Full {
    validator: jsonschema::Validator,
}

impl std::fmt::Debug for Full {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("jsonschema::Validator")
    }
}

/// The nesting depth of a value (a scalar is 1), counted without recursion; stops
/// counting past `limit`.
pub(crate) fn depth_exceeds(value: &Value, limit: usize) -> bool {
    let mut stack: Vec<(&Value, usize)> = vec![(value, 1)];
    while let Some((v, d)) = stack.pop() {
        if d > limit {
            return true;
        }
        match v {
            Value::Array(items) => stack.extend(items.iter().map(|i| (i, d + 1))),
            Value::Object(o) => stack.extend(o.values().map(|i| (i, d + 1))),
            _ => {}
        }
    }
    false
}

/// Render a `jsonschema` location inside `root` in the registry's path notation.
fn render(
    root: &Value,
    location: &jsonschema::paths::Location,
    out: &mut String,
    label: &str,
    prefix: bool,
) {
    // The path is rebuilt on the stack as the registry's linked `Path`.
    fn go(
        v: Option<&Value>,
        mut segments: std::vec::IntoIter<jsonschema::paths::LocationSegment<'_>>,
        path: &Path<'_>,
        out: &mut String,
        label: &str,
        prefix: bool,
    ) {
        match segments.next() {
            None => write_path(out, path, label, prefix),
            Some(jsonschema::paths::LocationSegment::Index(i)) => {
                let next = v.and_then(|v| v.get_index(i));
                go(next, segments, &Path::Index(path, i), out, label, prefix);
            }
            Some(jsonschema::paths::LocationSegment::Property(key)) => {
                let next = v.and_then(|v| v.get(&key));
                go(next, segments, &Path::Key(path, &key), out, label, prefix);
            }
        }
    }
    go(Some(root), location.iter(), &Path::Root, out, label, prefix);
}

impl Full {
    /// Check `schema` against the 2020-12 meta-schema and compile it; every problem,
    /// path-qualified from `label`.
    pub(crate) fn new(schema: &Value, label: &str) -> Result<Full, Vec<String>> {
        let serde = crate::json::to_serde(schema);
        let meta = jsonschema::draft202012::meta::validator();
        let problems: Vec<String> = meta
            .iter_errors(&serde)
            .map(|e| {
                let mut at = String::new();
                render(schema, e.instance_path(), &mut at, label, true);
                format!("{at}: not valid against the JSON Schema 2020-12 meta-schema: {e}")
            })
            .collect();
        if !problems.is_empty() {
            return Err(problems);
        }
        jsonschema::draft202012::options()
            // `format` is an annotation in 2020-12 unless a schema opts into the
            // format-assertion vocabulary; the runtime's own validator reads it so too.
            .should_validate_formats(false)
            .build(&serde)
            .map(|validator| Full { validator })
            .map_err(|e| vec![format!("{label}: the schema does not compile: {e}")])
    }

    /// Every violation of `value` (root named `label`), or nothing.
    pub(crate) fn check(&self, value: &Value, label: &str, prefix: bool) -> Result<(), Violations> {
        let mut out = Violations::new();
        if depth_exceeds(value, MAX_FULL_DEPTH) {
            let mut m = String::from("\"");
            write_path(&mut m, &Path::Root, label, prefix);
            m.push_str(&format!(
                "\" is nested more than {MAX_FULL_DEPTH} levels deep, deeper than a tool's own JSON Schema is checked"
            ));
            out.push(&m);
            return Err(out);
        }
        let serde = crate::json::to_serde(value);
        for e in self.validator.iter_errors(&serde) {
            let mut m = String::from("\"");
            render(value, e.instance_path(), &mut m, label, prefix);
            m.push_str("\" does not match the schema: ");
            // jsonschema's message may quote the whole value: keep it short.
            let text = e.to_string();
            match text.char_indices().nth(MAX_MESSAGE_CHARS) {
                Some((cut, _)) => {
                    m.push_str(&text[..cut]);
                    m.push('…');
                }
                None => m.push_str(&text),
            }
            out.push(&m);
        }
        if out.is_empty() { Ok(()) } else { Err(out) }
    }
}
