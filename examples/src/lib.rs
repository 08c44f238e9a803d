//! Small runnable programs that teach dsh-rs, one binary each under `src/bin/`.

/// The project README's Rust examples, compiled and run as doctests so they stay true
/// (they span the crates: the runtime, provider export, the testing kit).
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
