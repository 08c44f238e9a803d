//! Violations and where they are: the report of a validation ([`Violations`]), the path of
//! the node a violation is at, and the comparisons the validators share. Below both the
//! schema vocabulary's validator ([`crate::validate`]) and the JSON Schema documents
//! tools publish as written (`crate::schema::VerbatimSchema`), which both report this way.

use std::cmp::Ordering;
use std::fmt;

use crate::json::Number;

/// The most violations one report spells out; any further ones are only counted, and
/// the report ends with `and N more violations` (see [`Violations::omitted`]). A million
/// bad array items thus give a message of a few kilobytes, not tens of megabytes.
pub const MAX_REPORTED_VIOLATIONS: usize = 20;

/// The violations of one validation, in schema-walk order: full sentences such as
/// `"path" must be a string`.
///
/// At most [`MAX_REPORTED_VIOLATIONS`] are kept as messages; later ones are counted by
/// [`Violations::omitted`] and summarized at the end of [`Violations::joined`]
/// (`…; and 999980 more violations`). Keys echoed in paths are shortened when long (see
/// [`crate::json::path::elide`]), so a report stays small whatever the input.
///
/// All messages share one buffer (a failed validation allocates twice, however many
/// violations it reports). Index with [`Violations::get`], iterate with
/// [`Violations::iter`], or take the `; `-joined text with [`Violations::joined`]. It
/// compares equal to an array or `Vec` of the same messages.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Violations {
    /// The messages, joined by `; `, then the summary of the omitted ones, if any.
    text: String,
    /// Where each message ends in `text`.
    ends: Vec<usize>,
    /// Violations found beyond [`MAX_REPORTED_VIOLATIONS`].
    omitted: usize,
}

/// The separator between messages in [`Violations::joined`].
const SEPARATOR: &str = "; ";

impl Violations {
    /// No violations.
    pub fn new() -> Self {
        Violations::default()
    }

    /// No violations yet, with room for a handful of typical messages (so that most
    /// reports never reallocate).
    pub(crate) fn with_room() -> Self {
        Violations {
            text: String::with_capacity(512),
            ends: Vec::with_capacity(8),
            omitted: 0,
        }
    }

    /// Number of violations spelled out (at most [`MAX_REPORTED_VIOLATIONS`]).
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Number of further violations that were found but not spelled out.
    pub fn omitted(&self) -> usize {
        self.omitted
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The `i`-th violation.
    pub fn get(&self, i: usize) -> Option<&str> {
        let end = *self.ends.get(i)?;
        let start = match i {
            0 => 0,
            _ => self.ends[i - 1] + SEPARATOR.len(),
        };
        self.text.get(start..end)
    }

    /// Every violation, in order.
    pub fn iter(&self) -> ViolationsIter<'_> {
        ViolationsIter {
            of: self,
            front: 0,
            back: self.len(),
        }
    }

    /// Every violation joined by `; ` (no allocation), followed by `; and N more
    /// violations` when some were omitted.
    pub fn joined(&self) -> &str {
        &self.text
    }

    /// The violations as owned strings.
    pub fn to_vec(&self) -> Vec<String> {
        self.iter().map(str::to_owned).collect()
    }

    /// Append one violation (only counted once [`MAX_REPORTED_VIOLATIONS`] are kept).
    pub fn push(&mut self, message: &str) {
        if self.count_if_full() {
            self.seal();
            return;
        }
        self.begin().push_str(message);
        self.end();
    }

    /// When the report is full, counts one more omitted violation and returns `true`;
    /// the caller then builds no message. [`Violations::seal`] writes the summary.
    pub(crate) fn count_if_full(&mut self) -> bool {
        if self.ends.len() < MAX_REPORTED_VIOLATIONS {
            return false;
        }
        self.omitted += 1;
        true
    }

    /// Writes (or rewrites) the summary of the omitted violations after the messages.
    pub(crate) fn seal(&mut self) {
        if self.omitted == 0 {
            return;
        }
        self.text.truncate(self.ends.last().copied().unwrap_or(0));
        self.text.push_str(SEPARATOR);
        self.text.push_str("and ");
        self.text.push_str(itoa::Buffer::new().format(self.omitted));
        self.text.push_str(if self.omitted == 1 {
            " more violation"
        } else {
            " more violations"
        });
    }

    /// Start a message: the buffer to write it into.
    pub(crate) fn begin(&mut self) -> &mut String {
        if !self.ends.is_empty() {
            self.text.push_str(SEPARATOR);
        }
        &mut self.text
    }

    /// Close the message written since [`Violations::begin`].
    pub(crate) fn end(&mut self) {
        self.ends.push(self.text.len());
    }
}

impl fmt::Debug for Violations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl fmt::Display for Violations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl<S: AsRef<str>> FromIterator<S> for Violations {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        let mut v = Violations::new();
        for m in iter {
            v.push(m.as_ref());
        }
        v
    }
}

impl<'a> IntoIterator for &'a Violations {
    type Item = &'a str;
    type IntoIter = ViolationsIter<'a>;
    fn into_iter(self) -> ViolationsIter<'a> {
        self.iter()
    }
}

impl<S: AsRef<str>> PartialEq<[S]> for Violations {
    fn eq(&self, other: &[S]) -> bool {
        self.len() == other.len() && self.iter().zip(other).all(|(a, b)| a == b.as_ref())
    }
}

impl<S: AsRef<str>, const LEN: usize> PartialEq<[S; LEN]> for Violations {
    fn eq(&self, other: &[S; LEN]) -> bool {
        *self == other[..]
    }
}

impl<S: AsRef<str>, const LEN: usize> PartialEq<&[S; LEN]> for Violations {
    fn eq(&self, other: &&[S; LEN]) -> bool {
        *self == other[..]
    }
}

impl<S: AsRef<str>> PartialEq<Vec<S>> for Violations {
    fn eq(&self, other: &Vec<S>) -> bool {
        *self == other[..]
    }
}

impl<S: AsRef<str>, const LEN: usize> PartialEq<[S; LEN]> for &Violations {
    fn eq(&self, other: &[S; LEN]) -> bool {
        **self == other[..]
    }
}

impl<S: AsRef<str>> PartialEq<Vec<S>> for &Violations {
    fn eq(&self, other: &Vec<S>) -> bool {
        **self == other[..]
    }
}

/// Iterator over [`Violations`], in order.
#[derive(Clone, Debug)]
pub struct ViolationsIter<'a> {
    of: &'a Violations,
    front: usize,
    back: usize,
}

impl<'a> Iterator for ViolationsIter<'a> {
    type Item = &'a str;
    fn next(&mut self) -> Option<&'a str> {
        if self.front == self.back {
            return None;
        }
        self.front += 1;
        self.of.get(self.front - 1)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.back - self.front;
        (n, Some(n))
    }
}

impl DoubleEndedIterator for ViolationsIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.front == self.back {
            return None;
        }
        self.back -= 1;
        self.of.get(self.back)
    }
}

impl ExactSizeIterator for ViolationsIter<'_> {}

/// The path of the node being checked: a linked list on the walker's stack, rendered only
/// for a violation.
#[derive(Clone, Copy)]
pub(crate) enum Path<'p> {
    Root,
    Key(&'p Path<'p>, &'p str),
    Index(&'p Path<'p>, usize),
}

/// Write `path` as it appears inside a JSON string literal (escaped), e.g.
/// `items[2].name` or `m[\"odd key\"]`.
pub(crate) fn write_path(out: &mut String, path: &Path<'_>, label: &str, prefix: bool) {
    if let Path::Root = path {
        push_escaped(out, label);
        return;
    }
    let start = out.len();
    if prefix {
        push_escaped(out, label);
    }
    write_segments(out, path, start);
}

/// The segments of `path`, outermost first (recursion bounded by the schema depth).
fn write_segments(out: &mut String, path: &Path<'_>, start: usize) {
    match *path {
        Path::Root => {}
        Path::Key(parent, k) => {
            write_segments(out, parent, start);
            let k = &*crate::json::path::elide(k);
            if is_ident_key(k) {
                if out.len() > start {
                    out.push('.');
                }
                out.push_str(k);
            } else {
                out.push('[');
                push_escaped(out, &json_quote(k));
                out.push(']');
            }
        }
        Path::Index(parent, i) => {
            write_segments(out, parent, start);
            out.push('[');
            out.push_str(itoa::Buffer::new().format(i));
            out.push(']');
        }
    }
}

/// Append `s` escaped as the inside of a JSON string.
fn push_escaped(out: &mut String, s: &str) {
    if !s.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        out.push_str(s);
    } else {
        let quoted = json_quote(s);
        out.push_str(&quoted[1..quoted.len() - 1]);
    }
}

/// Whether `s` has fewer than `n` Unicode scalar values, counting only when the byte
/// length cannot decide it (a scalar value takes one to four bytes).
pub(crate) fn char_len_below(s: &str, n: u64) -> bool {
    let bytes = s.len() as u64;
    if bytes < n {
        true
    } else if bytes >= n.saturating_mul(4) {
        false
    } else {
        (s.chars().count() as u64) < n
    }
}

/// Exact comparison of a JSON number with an integer bound.
pub(crate) fn cmp_int(n: &Number, bound: i128) -> Ordering {
    if let Some(u) = n.as_u64() {
        return (u as i128).cmp(&bound);
    }
    if let Some(i) = n.as_i64() {
        return (i as i128).cmp(&bound);
    }
    cmp_f64_int(n.as_f64().unwrap_or(0.0), bound)
}

/// Exact comparison of a float with an integer.
pub(crate) fn cmp_f64_int(f: f64, bound: i128) -> Ordering {
    const TWO_127: f64 = 170_141_183_460_469_231_731_687_303_715_884_105_728.0;
    if f >= TWO_127 {
        return Ordering::Greater;
    }
    if f < -TWO_127 {
        return Ordering::Less;
    }
    let floor = f.floor();
    match (floor as i128).cmp(&bound) {
        Ordering::Equal if f > floor => Ordering::Greater,
        o => o,
    }
}

/// Exact comparison of a JSON number with a float bound.
pub(crate) fn cmp_f64(n: &Number, bound: f64) -> Ordering {
    let as_int = n
        .as_u64()
        .map(|u| u as i128)
        .or_else(|| n.as_i64().map(|i| i as i128));
    match as_int {
        Some(i) => cmp_f64_int(bound, i).reverse(),
        None => n
            .as_f64()
            .unwrap_or(0.0)
            .partial_cmp(&bound)
            .unwrap_or(Ordering::Equal),
    }
}

/// Whether `name` is written bare in a path (`a.b`), not quoted (`a["b c"]`): an
/// identifier of ASCII letters, digits, `_` and `$`, not starting with a digit.
pub(crate) fn is_ident_key(name: &str) -> bool {
    /// For each byte: 2 when it may start an identifier, 1 when it may only continue one.
    static CLASS: [u8; 256] = {
        let mut t = [0u8; 256];
        let mut b = 0;
        while b < 256 {
            let c = b as u8;
            t[b] = if c.is_ascii_alphabetic() || c == b'_' || c == b'$' {
                2
            } else if c.is_ascii_digit() {
                1
            } else {
                0
            };
            b += 1;
        }
        t
    };
    // ASCII only, so bytes are characters.
    match name.as_bytes() {
        [first, rest @ ..] => {
            CLASS[usize::from(*first)] == 2 && rest.iter().all(|&b| CLASS[usize::from(b)] != 0)
        }
        [] => false,
    }
}

/// `s` as a JSON string literal.
fn json_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    // Writing to a `String` cannot fail.
    let _ = crate::json::write_json_string(&mut out, s);
    out
}
