//! "Did you mean" for names a model got slightly wrong: a tool name, an argument key.
//!
//! Closeness is Jaro-Winkler similarity of at least 0.8 (`strsim`), the rule the macros'
//! attribute hints (darling's) and the `dsh-tools` host apply too.

/// The similarity from which a name counts as a likely misspelling of another.
const CLOSE: f64 = 0.8;

/// How much less similar than the best a name may be and still be suggested with it.
const NEAR_TIE: f64 = 0.02;

/// Whether `given` is a likely misspelling of `known` (never of itself).
pub(crate) fn is_close(given: &str, known: &str) -> bool {
    given != known && strsim::jaro_winkler(given, known) >= CLOSE
}

/// Up to `max` of `known` that `given` is closest to, most similar first (ties in the
/// order given).
pub(crate) fn closest<'k>(
    given: &str,
    known: impl IntoIterator<Item = &'k str>,
    max: usize,
) -> Vec<&'k str> {
    let mut scored: Vec<(f64, usize, &str)> = known
        .into_iter()
        .enumerate()
        .filter(|(_, k)| *k != given)
        .map(|(i, k)| (strsim::jaro_winkler(given, k), i, k))
        .filter(|(score, ..)| *score >= CLOSE)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    // Only the best and those about as close: a shared prefix alone (`job_`) makes many
    // names similar, and a list of them would not help.
    let best = scored.first().map_or(0.0, |s| s.0);
    scored
        .into_iter()
        .take_while(|(score, ..)| *score >= best - NEAR_TIE)
        .take(max)
        .map(|(.., k)| k)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_names_only() {
        assert!(is_close("qeury", "query"));
        assert!(is_close("serach_notes", "search_notes"));
        assert!(!is_close("query", "query"));
        assert!(!is_close("nope", "search_notes"));
        assert_eq!(
            closest("serach", ["add_note", "search", "snapshot", "searches"], 3),
            ["search"]
        );
        assert_eq!(
            closest("job_lst", ["job_output", "job_list", "job_kill"], 3),
            ["job_list"]
        );
        // Equally close names are all suggested, in the order given.
        assert_eq!(
            closest("note_x", ["note_a", "note_b"], 3),
            ["note_a", "note_b"]
        );
        assert!(closest("zzz", ["add_note", "search"], 3).is_empty());
    }
}
