//! The keys that seal approval states (`requestState`, protocol 2026-07-28) and bind
//! stateless tasks to their credentials: a keyring, so that several server instances
//! share it and keys can be rotated.
//!
//! - A state is sealed with the ring's **first** key and opened with **any** key of the
//!   ring. To rotate: put the new key first and keep the old one after it until the
//!   states it sealed have expired ([`crate::McpServer::with_approval_ttl`]), then
//!   remove it.
//! - Each key is named in the states it seals by an id derived from the key itself
//!   (HMAC-SHA-256 of a fixed label), so instances whose rings list the same keys in
//!   another order still open each other's states, and the id says nothing of the key.
//! - The credentials of a stateless request are kept as an HMAC of its
//!   `Authorization` header under a key derived from the first key: instances sharing
//!   the ring (and a store) recognise the same client. Rotating the first key makes
//!   the stateless tasks created before unreachable (they expire within their time to
//!   live).
//! - Without configured keys, a server draws one random key at start ([`StateKeys::random`]):
//!   its states are valid only in that process.

use std::fmt;

use hmac::{KeyInit as _, Mac as _};
use rmcp::model::RequestStateCodec;

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// The shortest key accepted, in bytes (as rmcp's codec requires).
pub const MIN_KEY_BYTES: usize = RequestStateCodec::MIN_KEY_LENGTH;

/// The environment variable `dsh-tools mcp` reads state keys from (the same format as
/// [`StateKeys::parse`]).
pub const STATE_KEYS_ENV: &str = "DSH_MCP_STATE_KEYS";

/// A keyring for approval states (see the module docs).
#[derive(Clone)]
pub struct StateKeys {
    keys: Vec<Vec<u8>>,
}

impl fmt::Debug for StateKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the keys.
        f.debug_struct("StateKeys")
            .field("keys", &self.keys.len())
            .finish_non_exhaustive()
    }
}

/// Why keys were refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StateKeyError(String);

impl StateKeys {
    /// A ring of one key drawn from the operating system's random source (the default:
    /// states valid in this process only).
    ///
    /// # Errors
    ///
    /// When the random source fails.
    pub fn random() -> Result<Self, StateKeyError> {
        let mut key = vec![0u8; MIN_KEY_BYTES];
        getrandom::fill(&mut key)
            .map_err(|e| StateKeyError(format!("no random state key: {e}")))?;
        Ok(StateKeys { keys: vec![key] })
    }

    /// A ring of these keys, the first sealing.
    ///
    /// # Errors
    ///
    /// When there is none, one is shorter than [`MIN_KEY_BYTES`], or one is repeated.
    pub fn new<I, K>(keys: I) -> Result<Self, StateKeyError>
    where
        I: IntoIterator<Item = K>,
        K: Into<Vec<u8>>,
    {
        let keys: Vec<Vec<u8>> = keys.into_iter().map(Into::into).collect();
        if keys.is_empty() {
            return Err(StateKeyError("no state key given".to_string()));
        }
        for (i, key) in keys.iter().enumerate() {
            if key.len() < MIN_KEY_BYTES {
                return Err(StateKeyError(format!(
                    "state key {}: {} bytes, at least {MIN_KEY_BYTES} needed",
                    i + 1,
                    key.len()
                )));
            }
            if keys[..i].contains(key) {
                return Err(StateKeyError(format!(
                    "state key {}: the same key as an earlier one",
                    i + 1
                )));
            }
        }
        Ok(StateKeys { keys })
    }

    /// Read a ring from text: keys in hexadecimal (at least `2 × MIN_KEY_BYTES` digits
    /// each, e.g. the output of `openssl rand -hex 32`), separated by whitespace, commas
    /// or new lines; a line whose first non-blank character is `#` is a comment. The
    /// first key seals.
    ///
    /// # Errors
    ///
    /// When a key is not hexadecimal or too short, or there is none.
    pub fn parse(text: &str) -> Result<Self, StateKeyError> {
        let mut keys = Vec::new();
        for line in text.lines() {
            if line.trim_start().starts_with('#') {
                continue;
            }
            for word in line
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|w| !w.is_empty())
            {
                let key = hex(word).ok_or_else(|| {
                    StateKeyError(format!(
                        "state key {}: not an even number of hexadecimal digits",
                        keys.len() + 1
                    ))
                })?;
                keys.push(key);
            }
        }
        StateKeys::new(keys)
    }

    /// How many keys the ring has.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether the ring is empty (never, once built).
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The codec sealing with the first key and opening with any.
    pub(crate) fn codec(&self) -> Result<RequestStateCodec, StateKeyError> {
        let ids: Vec<String> = self.keys.iter().map(|k| key_id(k)).collect();
        let active = ids.first().cloned().unwrap_or_default();
        RequestStateCodec::new_with_keyring(active, ids.into_iter().zip(self.keys.iter().cloned()))
            .map_err(|e| StateKeyError(format!("state keys: {e}")))
    }

    /// A keyed digest of `data` under a key derived from the first key for `purpose`.
    pub(crate) fn digest(&self, purpose: &str, data: &[u8]) -> String {
        let first = self.keys.first().map_or(&[][..], Vec::as_slice);
        let derived = mac(first, purpose.as_bytes());
        to_hex(&mac(&derived, data)[..16])
    }
}

fn mac(key: &[u8], data: &[u8]) -> Vec<u8> {
    match HmacSha256::new_from_slice(key) {
        Ok(mut m) => {
            m.update(data);
            m.finalize().into_bytes().to_vec()
        }
        // HMAC takes keys of any length.
        Err(_) => Vec::new(),
    }
}

/// The id a key is named by in the states it seals.
fn key_id(key: &[u8]) -> String {
    format!("k{}", to_hex(&mac(key, b"dsh-mcp state key id")[..8]))
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::SealOptions;

    const A: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    const B: &str = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";

    #[test]
    fn a_ring_seals_with_its_first_key_and_opens_with_any() {
        let old = StateKeys::parse(A).unwrap().codec().unwrap();
        let rotated = StateKeys::parse(&format!("# rotated\n{B},\n{A}\n"))
            .unwrap()
            .codec()
            .unwrap();
        let new_only = StateKeys::parse(B).unwrap().codec().unwrap();
        let sealed = old.seal_with(b"x", &SealOptions::new());
        assert_eq!(rotated.open(&sealed).unwrap(), b"x");
        assert!(new_only.open(&sealed).is_err());
        let resealed = rotated.seal_with(b"y", &SealOptions::new());
        assert_eq!(new_only.open(&resealed).unwrap(), b"y");
    }

    #[test]
    fn short_malformed_repeated_or_missing_keys_are_refused() {
        let short = StateKeys::parse("00112233").unwrap_err();
        assert_eq!(
            short.to_string(),
            "state key 1: 4 bytes, at least 32 needed"
        );
        let odd = StateKeys::parse(&format!("{A} abc")).unwrap_err();
        assert_eq!(
            odd.to_string(),
            "state key 2: not an even number of hexadecimal digits"
        );
        let not_hex = StateKeys::parse("zz").unwrap_err();
        assert!(not_hex.to_string().contains("hexadecimal"), "{not_hex}");
        let repeated = StateKeys::parse(&format!("{A} {A}")).unwrap_err();
        assert!(repeated.to_string().contains("same key"), "{repeated}");
        assert_eq!(
            StateKeys::parse("# nothing\n").unwrap_err().to_string(),
            "no state key given"
        );
    }

    #[test]
    fn digests_depend_on_the_first_key_and_the_purpose() {
        let a = StateKeys::parse(A).unwrap();
        let ab = StateKeys::parse(&format!("{A} {B}")).unwrap();
        let b = StateKeys::parse(B).unwrap();
        assert_eq!(a.digest("p", b"x"), ab.digest("p", b"x"));
        assert_ne!(a.digest("p", b"x"), b.digest("p", b"x"));
        assert_ne!(a.digest("p", b"x"), a.digest("q", b"x"));
        assert_eq!(a.digest("p", b"x").len(), 32);
    }
}
