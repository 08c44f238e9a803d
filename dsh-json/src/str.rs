//! [`Str`]: the text of JSON strings and object keys.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

use compact_str::CompactString;

/// An immutable string as a [`Value`](crate::Value) holds it (a string value or an object
/// key): text of up to 24 bytes is stored inline, longer text on the heap.
///
/// Most strings in tool arguments (keys, enum tags, identifiers, short values) are short,
/// so a snapshot of them allocates only for its containers. `Str` dereferences to `str`
/// and converts from and into `String`, `&str` and `Box<str>`.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Str(CompactString);

impl Str {
    /// The text.
    #[inline]
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// The text as a `String` (reusing the heap buffer of long text).
    pub fn into_string(self) -> String {
        self.0.into_string()
    }
}

impl Deref for Str {
    type Target = str;
    #[inline]
    fn deref(&self) -> &str {
        self.0.as_str()
    }
}

impl AsRef<str> for Str {
    fn as_ref(&self) -> &str {
        self
    }
}

impl Borrow<str> for Str {
    fn borrow(&self) -> &str {
        self
    }
}

impl Hash for Str {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Debug for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self)
    }
}

impl From<&str> for Str {
    #[inline]
    fn from(s: &str) -> Str {
        Str(CompactString::from(s))
    }
}

impl From<&String> for Str {
    fn from(s: &String) -> Str {
        Str(CompactString::from(s.as_str()))
    }
}

impl From<String> for Str {
    /// Short text moves inline; long text keeps the string's buffer.
    fn from(s: String) -> Str {
        Str(CompactString::from(s))
    }
}

impl From<Box<str>> for Str {
    fn from(s: Box<str>) -> Str {
        Str(CompactString::from(s))
    }
}

impl From<std::borrow::Cow<'_, str>> for Str {
    fn from(s: std::borrow::Cow<'_, str>) -> Str {
        Str(CompactString::from(s))
    }
}

impl From<char> for Str {
    fn from(c: char) -> Str {
        Str::from(c.encode_utf8(&mut [0; 4]) as &str)
    }
}

impl From<Str> for String {
    fn from(s: Str) -> String {
        s.into_string()
    }
}

impl From<Str> for Box<str> {
    fn from(s: Str) -> Box<str> {
        s.into_string().into_boxed_str()
    }
}

impl PartialEq<str> for Str {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Str {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Str {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other.as_str()
    }
}

impl PartialEq<Str> for str {
    fn eq(&self, other: &Str) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<Str> for &str {
    fn eq(&self, other: &Str) -> bool {
        *self == other.as_str()
    }
}

/// String equality without a `memcmp` call for the short strings that object keys and
/// enum values usually are (compared as overlapping machine words).
#[inline(always)]
pub fn text_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word8 = |s: &[u8], at: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&s[at..at + 8]);
        u64::from_ne_bytes(w)
    };
    let word4 = |s: &[u8], at: usize| {
        let mut w = [0u8; 4];
        w.copy_from_slice(&s[at..at + 4]);
        u32::from_ne_bytes(w)
    };
    match n {
        0 => true,
        1..=3 => a.iter().zip(b).all(|(x, y)| x == y),
        4..=7 => word4(a, 0) == word4(b, 0) && word4(a, n - 4) == word4(b, n - 4),
        8..=16 => word8(a, 0) == word8(b, 0) && word8(a, n - 8) == word8(b, n - 8),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::Str;

    proptest! {
        /// Every conversion keeps the text, inline or not.
        #[test]
        fn conversions_keep_the_text(s in any::<String>(), pad in 0usize..40) {
            let long = format!("{s}{}", "x".repeat(pad));
            for t in [&s, &long] {
                prop_assert_eq!(Str::from(t.as_str()), t.as_str());
                prop_assert_eq!(Str::from(t.clone()), t.as_str());
                prop_assert_eq!(Str::from(t.clone().into_boxed_str()), t.as_str());
                prop_assert_eq!(Str::from(t.as_str()).into_string(), t.clone());
                prop_assert_eq!(Box::<str>::from(Str::from(t.as_str())), t.clone().into_boxed_str());
                prop_assert_eq!(format!("{:?}", Str::from(t.as_str())), format!("{t:?}"));
            }
        }
    }
}

#[cfg(test)]
mod text_eq_tests {
    use super::text_eq;

    #[test]
    fn text_eq_agrees_with_eq_at_every_length() {
        let base = "abcdefghijklmnopqrstuvwxyz0123456789";
        for n in 0..=base.len() {
            let a = &base[..n];
            assert!(text_eq(a, a));
            for i in 0..n {
                let mut b = a.as_bytes().to_vec();
                b[i] = b'_';
                let b = std::str::from_utf8(&b).unwrap();
                assert!(!text_eq(a, b), "{a} vs {b}");
            }
            if n > 0 {
                assert!(!text_eq(a, &base[..n - 1]));
            }
        }
        assert!(text_eq("é✓", "é✓"));
        assert!(!text_eq("é✓", "e✓x"));
    }
}
