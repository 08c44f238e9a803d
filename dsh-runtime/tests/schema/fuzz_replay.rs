//! The fuzz targets' bodies on every `cargo test`, without libFuzzer.
//!
//! `fuzz/` is a cargo-fuzz workspace of its own whose targets are one-line wrappers
//! around plain functions of the input bytes (`fuzz/src/{parse,validate,execute}.rs`).
//! This file compiles those same functions (with `#[path]`, so the main workspace never
//! depends on `libfuzzer-sys`) and runs each of them over:
//!
//! - every seed file under `fuzz/seeds/` (all targets' seeds go through every body: the
//!   generated-tool bodies read any bytes), and
//! - a few thousand deterministic mutations of those seeds (bit flips, byte edits,
//!   deletions, duplications, splices, tokens from `fuzz/parse.dict`) and random byte
//!   strings, from a fixed PRNG seed.
//!
//! The invariants are the fuzz targets' own (the bodies assert them). A failing input is
//! printed and written under the test's temporary target directory; add it to
//! `fuzz/seeds/<target>/` so that this test replays it from then on.
//!
//! `DSH_FUZZ_REPLAY_MUTATIONS=<n>` changes the number of mutations per body and
//! `DSH_FUZZ_REPLAY_SEED=<u64>` the PRNG seed (e.g. for a longer sweep in release); the
//! real campaign is `fuzz/run.sh` (`DSH_CI_FUZZ=1 .ci/run`).

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::path::{Path, PathBuf};

// The fuzz crate's library, whose `pub` items are its API there and private here.
#[path = "../../../fuzz/src/lib.rs"]
#[allow(unreachable_pub)]
mod dsh_fuzz;

/// The longest input made (the fuzz campaign's `-max_len`).
const MAX_LEN: usize = 4096;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

fn env_number(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(s) => s
            .parse()
            .unwrap_or_else(|_| panic!("{name} must be an unsigned integer, got {s:?}")),
        Err(_) => default,
    }
}

/// Every seed file under `fuzz/seeds/`, with its path relative to `fuzz/`, in a stable
/// order.
fn seeds() -> Vec<(String, Vec<u8>)> {
    let root = fuzz_dir().join("seeds");
    let mut files = Vec::new();
    let dirs = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("cannot read the fuzz seeds at {}: {e}", root.display()));
    for dir in dirs {
        let dir = dir.expect("a seed directory entry").path();
        if !dir.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&dir).expect("a seed directory") {
            let path = file.expect("a seed file entry").path();
            if path.is_file() {
                files.push(path);
            }
        }
    }
    files.sort();
    assert!(!files.is_empty(), "no seed files under {}", root.display());
    files
        .into_iter()
        .map(|path| {
            let bytes = std::fs::read(&path).expect("a readable seed file");
            let label = path
                .strip_prefix(fuzz_dir())
                .unwrap_or(&path)
                .display()
                .to_string();
            (label, bytes)
        })
        .collect()
}

/// The tokens of a libFuzzer dictionary: one `"..."` per line (`#` comments), with
/// `\\`, `\"` and `\xNN` escapes.
fn dictionary(path: &Path) -> Vec<Vec<u8>> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut tokens = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let inner = line
            .strip_prefix('"')
            .and_then(|l| l.strip_suffix('"'))
            .unwrap_or_else(|| panic!("{}:{}: not a quoted token", path.display(), n + 1));
        let mut token = Vec::new();
        let mut bytes = inner.bytes();
        while let Some(b) = bytes.next() {
            if b != b'\\' {
                token.push(b);
                continue;
            }
            match bytes.next() {
                Some(b'x') => {
                    let hex: Vec<u8> = bytes.by_ref().take(2).collect();
                    let byte = std::str::from_utf8(&hex)
                        .ok()
                        .and_then(|h| u8::from_str_radix(h, 16).ok())
                        .unwrap_or_else(|| panic!("{}:{}: bad \\x escape", path.display(), n + 1));
                    token.push(byte);
                }
                Some(other) => token.push(other),
                None => panic!("{}:{}: dangling backslash", path.display(), n + 1),
            }
        }
        tokens.push(token);
    }
    tokens
}

/// SplitMix64: small, fast and fully determined by its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`; the modulo bias is irrelevant here).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn byte(&mut self) -> u8 {
        self.next() as u8
    }

    /// A range `start..end` inside `0..=len`.
    fn span(&mut self, len: usize) -> (usize, usize) {
        let start = self.below(len + 1);
        let end = start + self.below(len - start + 1).min(16);
        (start, end)
    }
}

/// One input: a seed (or random bytes) with one to four edits.
fn mutate(rng: &mut Rng, seeds: &[(String, Vec<u8>)], dict: &[Vec<u8>]) -> Vec<u8> {
    let mut data = if rng.below(8) == 0 {
        (0..rng.below(96)).map(|_| rng.byte()).collect()
    } else {
        seeds[rng.below(seeds.len())].1.clone()
    };
    for _ in 0..=rng.below(4) {
        match rng.below(8) {
            0 if !data.is_empty() => {
                let i = rng.below(data.len());
                data[i] ^= 1 << rng.below(8);
            }
            1 if !data.is_empty() => {
                let i = rng.below(data.len());
                data[i] = rng.byte();
            }
            2 => {
                let i = rng.below(data.len() + 1);
                data.insert(i, rng.byte());
            }
            3 => {
                let (start, end) = rng.span(data.len());
                data.drain(start..end);
            }
            4 => {
                let (start, end) = rng.span(data.len());
                let copy = data[start..end].to_vec();
                let at = rng.below(data.len() + 1);
                data.splice(at..at, copy);
            }
            5 if !dict.is_empty() => {
                let token = &dict[rng.below(dict.len())];
                let at = rng.below(data.len() + 1);
                data.splice(at..at, token.iter().copied());
            }
            6 => {
                // Splice: a piece of another seed replaces a piece of this input.
                let other = &seeds[rng.below(seeds.len())].1;
                let (from, to) = rng.span(other.len());
                let (start, end) = rng.span(data.len());
                data.splice(start..end, other[from..to].iter().copied());
            }
            _ => {
                let keep = rng.below(data.len() + 1);
                data.truncate(keep);
            }
        }
    }
    data.truncate(MAX_LEN);
    data
}

/// Run `body` on `input`; on a panic, say which input it was (and save it) first.
fn check(target: &str, label: &str, input: &[u8], body: fn(&[u8]) -> bool) -> bool {
    match catch_unwind(AssertUnwindSafe(|| body(input))) {
        Ok(checked) => checked,
        Err(panic) => {
            let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-replay");
            let file = dir.join(format!("{target}-failure"));
            let saved = std::fs::create_dir_all(&dir)
                .and_then(|()| std::fs::write(&file, input))
                .map_or_else(
                    |e| format!("(could not save it: {e})"),
                    |()| format!("saved to {}", file.display()),
                );
            eprintln!(
                "fuzz body `{target}` failed on {label} ({} bytes, {saved}):\n{}",
                input.len(),
                input.escape_ascii()
            );
            resume_unwind(panic)
        }
    }
}

/// Every seed and `mutations` mutations (unless `DSH_FUZZ_REPLAY_MUTATIONS` says
/// otherwise) through `body`. Returns how many inputs reached the body's checks, and how
/// many ran.
fn replay(target: &str, body: fn(&[u8]) -> bool, mutations: usize) -> (usize, usize) {
    let seeds = seeds();
    let dict = dictionary(&fuzz_dir().join("parse.dict"));
    let mutations = env_number("DSH_FUZZ_REPLAY_MUTATIONS", mutations as u64) as usize;
    let seed = env_number("DSH_FUZZ_REPLAY_SEED", 0x00d5_f022);
    let mut checked = 0;
    for (label, bytes) in &seeds {
        checked += usize::from(check(target, label, bytes, body));
    }
    // Each body gets its own stream, so changing one body's use of bytes leaves the
    // others' inputs alone.
    let mut rng = Rng(seed
        ^ target
            .bytes()
            .fold(0u64, |h, b| h.wrapping_mul(31) ^ u64::from(b)));
    for i in 0..mutations {
        let input = mutate(&mut rng, &seeds, &dict);
        let label = format!("mutation {i} (DSH_FUZZ_REPLAY_SEED={seed})");
        checked += usize::from(check(target, &label, &input, body));
    }
    eprintln!(
        "{target}: {checked} of {} inputs checked",
        seeds.len() + mutations
    );
    (checked, seeds.len() + mutations)
}

// Mutation counts: each body's share of a few seconds in a debug build (the parser is
// the cheapest; `validate` compiles a jsonschema validator per input).

#[test]
fn the_parse_body_holds_on_seeds_and_mutations() {
    let (checked, total) = replay("parse", dsh_fuzz::parse::run, 20_000);
    assert_eq!(checked, total, "the parse body checks every input");
}

#[test]
fn the_validate_body_holds_on_seeds_and_mutations() {
    let (checked, total) = replay("validate", dsh_fuzz::validate::run, 4_000);
    // Generation rarely gives up (arbitrary pads exhausted input with defaults): nearly
    // every input must reach the comparison with jsonschema, or this replay is hollow.
    assert!(checked * 10 >= total * 9, "{checked} of {total} checked");
}

#[test]
fn the_execute_body_holds_on_seeds_and_mutations() {
    let (checked, total) = replay("execute", dsh_fuzz::execute::run, 6_000);
    assert!(checked * 10 >= total * 9, "{checked} of {total} checked");
}

#[test]
fn the_mutator_is_deterministic_and_varied() {
    let seeds = seeds();
    let dict = dictionary(&fuzz_dir().join("parse.dict"));
    assert!(dict.iter().any(|t| t == br"\ud800"), "escapes are decoded");
    let run = |seed| {
        let mut rng = Rng(seed);
        (0..500)
            .map(|_| mutate(&mut rng, &seeds, &dict))
            .collect::<Vec<_>>()
    };
    let a = run(7);
    assert_eq!(a, run(7), "the same seed gives the same inputs");
    assert_ne!(a, run(8));
    let distinct: std::collections::HashSet<&Vec<u8>> = a.iter().collect();
    assert!(
        distinct.len() > 400,
        "only {} distinct inputs",
        distinct.len()
    );
    assert!(a.iter().all(|i| i.len() <= MAX_LEN));
    let unchanged = a
        .iter()
        .filter(|i| seeds.iter().any(|(_, s)| s == *i))
        .count();
    assert!(unchanged < 50, "{unchanged} inputs are a seed unchanged");
}
