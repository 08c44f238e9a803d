//! Duplicate-key detection shared by the parser and the serializers.
//!
//! Small objects are checked with a linear scan (no allocation). Once an object
//! has [`LINEAR_LIMIT`] keys, the detector switches to a set of randomly keyed
//! SipHash values, so hostile objects with many keys stay O(n) overall.

use std::collections::HashSet;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher, RandomState};

use super::str::{Str, text_eq};

/// Number of keys below which a linear scan is used.
pub(crate) const LINEAR_LIMIT: usize = 24;

/// A pass-through hasher for values that are already hashes.
#[derive(Default)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is used; fold anything else defensively.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = i;
    }
}

struct Hashed {
    state: RandomState,
    seen: HashSet<u64, BuildHasherDefault<IdHasher>>,
}

/// Tracks the keys of one object under construction.
#[derive(Default)]
pub(crate) struct DupDetector {
    hashed: Option<Box<Hashed>>,
}

impl DupDetector {
    /// Returns `true` when `key` already occurs in `existing` (the keys of the
    /// object so far, all distinct). Otherwise records `key`, which the caller
    /// must then append to the object.
    #[inline]
    pub(crate) fn is_duplicate<T>(&mut self, existing: &[(Str, T)], key: &str) -> bool {
        if self.hashed.is_none() && existing.len() < LINEAR_LIMIT {
            return existing.iter().any(|(k, _)| text_eq(k, key));
        }
        self.is_duplicate_hashed(existing, key)
    }

    /// [`DupDetector::is_duplicate`] for an object with many keys.
    #[cold]
    #[inline(never)]
    fn is_duplicate_hashed<T>(&mut self, existing: &[(Str, T)], key: &str) -> bool {
        if self.hashed.is_none() {
            let state = RandomState::new();
            let mut seen =
                HashSet::with_capacity_and_hasher(existing.len() * 2, Default::default());
            for (k, _) in existing {
                seen.insert(state.hash_one(&**k));
            }
            self.hashed = Some(Box::new(Hashed { state, seen }));
        }
        let Some(h) = self.hashed.as_deref_mut() else {
            return false;
        };
        let hash = h.state.hash_one(key);
        if h.seen.insert(hash) {
            false
        } else {
            // Same hash: confirm (a genuine collision is astronomically rare).
            existing.iter().any(|(k, _)| &**k == key)
        }
    }
}

/// Removes duplicate keys, keeping the position of the first occurrence and the
/// value of the last one (the semantics of repeated [`Object::insert`]).
///
/// [`Object::insert`]: super::Object::insert
pub(crate) fn dedup_last_wins<V: Default>(entries: &mut Vec<(Str, V)>) {
    const NONE: usize = usize::MAX;
    let n = entries.len();
    if n < 2 {
        return;
    }
    // first_of[j] = index of the first occurrence of entries[j]'s key, for
    // duplicates; NONE for first occurrences.
    let mut first_of = vec![NONE; n];
    let mut any = false;
    if n <= LINEAR_LIMIT {
        for j in 1..n {
            if let Some(i) = entries[..j].iter().position(|(k, _)| k == &entries[j].0) {
                // `position` finds the first occurrence, which is never a duplicate.
                first_of[j] = i;
                any = true;
            }
        }
    } else {
        let mut index: std::collections::HashMap<&str, usize> =
            std::collections::HashMap::with_capacity(n);
        for (j, (k, _)) in entries.iter().enumerate() {
            match index.entry(&**k) {
                std::collections::hash_map::Entry::Occupied(e) => {
                    first_of[j] = *e.get();
                    any = true;
                }
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(j);
                }
            }
        }
    }
    if !any {
        return;
    }
    for j in 0..n {
        let i = first_of[j];
        if i != NONE {
            let v = std::mem::take(&mut entries[j].1);
            entries[i].1 = v;
        }
    }
    let mut j = 0;
    entries.retain(|_| {
        let keep = first_of[j] == NONE;
        j += 1;
        keep
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_small_and_large() {
        for n in [3usize, LINEAR_LIMIT, LINEAR_LIMIT * 10] {
            let mut d = DupDetector::default();
            let mut entries: Vec<(Str, ())> = Vec::new();
            for i in 0..n {
                let k = format!("k{i}");
                assert!(!d.is_duplicate(&entries, &k));
                entries.push((k.into(), ()));
            }
            assert!(d.is_duplicate(&entries, "k0"));
            assert!(d.is_duplicate(&entries, &format!("k{}", n - 1)));
            assert!(!d.is_duplicate(&entries, "zz"));
        }
    }
}
