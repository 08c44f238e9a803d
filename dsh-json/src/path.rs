//! Rendering of JSON paths in the notation used by error messages.
//!
//! A path starts at a root label (`arguments` for parsed arguments, `value` for
//! serialized values) and appends one segment per step:
//!
//! * `.key` when the key looks like an identifier (`[A-Za-z_$][A-Za-z0-9_$]*`);
//! * `["key"]` (the key as a JSON string literal) for every other key,
//!   including the empty key;
//! * `[i]` for an array index.
//!
//! For example: `arguments.filters[2]`, `value["a b"][0].x`.

use std::fmt::Write as _;

/// Whether `key` renders as `.key` (rather than `["key"]`) in a path.
pub fn is_identifier_key(key: &str) -> bool {
    let mut bytes = key.bytes();
    match bytes.next() {
        Some(b) if b.is_ascii_alphabetic() || b == b'_' || b == b'$' => {}
        _ => return false,
    }
    bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
}

/// Appends the path segment for object key `key` to `path`.
pub fn push_key(path: &mut String, key: &str) {
    if is_identifier_key(key) {
        path.push('.');
        path.push_str(key);
    } else {
        path.push('[');
        // Writing into a `String` cannot fail.
        let _ = super::write::write_json_string(path, key);
        path.push(']');
    }
}

/// Appends the path segment for array index `index` to `path`.
pub fn push_index(path: &mut String, index: usize) {
    let _ = write!(path, "[{index}]");
}

/// One step of a path, borrowed from wherever the caller keeps it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Seg<'a> {
    /// An object key.
    Key(&'a str),
    /// An array index.
    Index(usize),
}

/// Renders `root` followed by `segs`.
pub(crate) fn render<'a>(root: &str, segs: impl IntoIterator<Item = Seg<'a>>) -> String {
    let mut out = String::from(root);
    for seg in segs {
        match seg {
            Seg::Key(k) => push_key(&mut out, k),
            Seg::Index(i) => push_index(&mut out, i),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_segments() {
        let p = render(
            "arguments",
            [
                Seg::Key("filters"),
                Seg::Index(2),
                Seg::Key("a b"),
                Seg::Key(""),
                Seg::Key("_x$1"),
                Seg::Key("1a"),
                Seg::Key("q\"\n"),
            ],
        );
        assert_eq!(p, r#"arguments.filters[2]["a b"][""]._x$1["1a"]["q\"\n"]"#);
    }
}
