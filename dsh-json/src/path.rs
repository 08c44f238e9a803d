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
//!
//! Messages stay small whatever the input: a key longer than [`MAX_ECHO_CHARS`]
//! characters is shown by its beginning, an ellipsis and its length in bytes
//! (see [`elide`]), and a path longer than [`MAX_PATH_BYTES`] keeps its
//! beginning and its end around a note of its length.

use std::borrow::Cow;
use std::fmt::Write as _;

/// The most characters of an input key or number literal an error message
/// echoes; longer ones are shortened by [`elide`].
pub const MAX_ECHO_CHARS: usize = 64;

/// The longest path (in bytes) an error message shows whole; longer paths keep
/// their first and last bytes around a note of the full length.
pub const MAX_PATH_BYTES: usize = 256;

/// `text` as an error message echoes it: whole when it has at most
/// [`MAX_ECHO_CHARS`] characters, otherwise its first [`MAX_ECHO_CHARS`]
/// characters, an ellipsis and its full length in bytes, e.g.
/// `aaaa…(10485760 bytes)`.
///
/// ```
/// use dsh_json::path::elide;
/// assert_eq!(elide("short"), "short");
/// let long = "x".repeat(1000);
/// assert_eq!(elide(&long), format!("{}…(1000 bytes)", "x".repeat(64)));
/// ```
pub fn elide(text: &str) -> Cow<'_, str> {
    if text.len() <= MAX_ECHO_CHARS {
        return Cow::Borrowed(text);
    }
    match text.char_indices().nth(MAX_ECHO_CHARS) {
        None => Cow::Borrowed(text),
        Some((cut, _)) => Cow::Owned(format!("{}…({} bytes)", &text[..cut], text.len())),
    }
}

/// Shortens a rendered path longer than [`MAX_PATH_BYTES`]: its beginning, a
/// note of its full length, and its end (`arguments[0][0]…(path of 2000009
/// bytes)…[0][0]`).
fn elide_path(path: String) -> String {
    if path.len() <= MAX_PATH_BYTES {
        return path;
    }
    let keep = MAX_PATH_BYTES / 2;
    let mut head = keep;
    while !path.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = path.len() - keep;
    while !path.is_char_boundary(tail) {
        tail += 1;
    }
    format!(
        "{}…(path of {} bytes)…{}",
        &path[..head],
        path.len(),
        &path[tail..]
    )
}

/// Whether `key` renders as `.key` (rather than `["key"]`) in a path.
pub fn is_identifier_key(key: &str) -> bool {
    let mut bytes = key.bytes();
    match bytes.next() {
        Some(b) if b.is_ascii_alphabetic() || b == b'_' || b == b'$' => {}
        _ => return false,
    }
    bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
}

/// Appends the path segment for object key `key` to `path` (a key longer than
/// [`MAX_ECHO_CHARS`] characters is shortened by [`elide`]).
pub fn push_key(path: &mut String, key: &str) {
    if is_identifier_key(key) && key.len() <= MAX_ECHO_CHARS {
        path.push('.');
        path.push_str(key);
    } else {
        path.push('[');
        // Writing into a `String` cannot fail.
        let _ = super::write::write_json_string(path, &elide(key));
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

/// Renders `root` followed by `segs`, shortened as described in the module
/// documentation.
pub(crate) fn render<'a>(root: &str, segs: impl IntoIterator<Item = Seg<'a>>) -> String {
    let mut out = String::from(root);
    for seg in segs {
        match seg {
            Seg::Key(k) => push_key(&mut out, k),
            Seg::Index(i) => push_index(&mut out, i),
        }
    }
    elide_path(out)
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

    #[test]
    fn long_keys_and_paths_are_shortened() {
        let key = "k".repeat(10_000);
        let p = render("arguments", [Seg::Key(&key), Seg::Index(1)]);
        assert_eq!(
            p,
            format!("arguments[\"{}…(10000 bytes)\"][1]", "k".repeat(64))
        );
        // Multi-byte characters are cut at a character boundary.
        let wide = "é".repeat(100);
        assert_eq!(elide(&wide), format!("{}…(200 bytes)", "é".repeat(64)));
        assert_eq!(elide(&"é".repeat(64)), "é".repeat(64));
        let deep = render("arguments", (0..100_000).map(Seg::Index));
        assert!(deep.len() < MAX_PATH_BYTES + 40, "{}", deep.len());
        assert!(deep.starts_with("arguments[0][1][2]"), "{deep}");
        assert!(deep.ends_with("[99998][99999]"), "{deep}");
        assert!(deep.contains("…(path of 688899 bytes)…"), "{deep}");
    }
}
