//! "Did you mean" hints for misspelt keys.
//!
//! The closest key is darling's (`suggestions` feature: Jaro-Winkler similarity above
//! 0.8, the rule darling's own derives apply). Only the phrasing is ours: darling's message
//! is capitalised and names a "field", while ours are lowercase and name the attribute.

/// The valid key closest to `unknown`, if any is close enough to be a likely typo.
pub(crate) fn did_you_mean<'k>(unknown: &str, keys: &[&'k str]) -> Option<&'k str> {
    let text = darling::Error::unknown_field_with_alts(unknown, keys).to_string();
    let (_, rest) = text.split_once("Did you mean `")?;
    let (key, _) = rest.split_once('`')?;
    keys.iter().copied().find(|k| *k == key)
}

/// ` (did you mean `key`?)`, or nothing.
pub(crate) fn hint(unknown: &str, keys: &[&str]) -> String {
    did_you_mean(unknown, keys)
        .map(|k| format!(" (did you mean `{k}`?)"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_keys_only() {
        let keys = [
            "name",
            "read_only",
            "timeout_ms",
            "present_call",
            "struct_name",
        ];
        assert_eq!(did_you_mean("readonly", &keys), Some("read_only"));
        assert_eq!(did_you_mean("read_olny", &keys), Some("read_only"));
        assert_eq!(did_you_mean("timeout", &keys), Some("timeout_ms"));
        assert_eq!(did_you_mean("present", &keys), Some("present_call"));
        assert_eq!(did_you_mean("nmae", &keys), Some("name"));
        assert_eq!(did_you_mean("structname", &keys), Some("struct_name"));
        assert_eq!(did_you_mean("colour", &keys), None);
        assert_eq!(hint("nmae", &keys), " (did you mean `name`?)");
        assert_eq!(hint("zzz", &keys), "");
    }
}
