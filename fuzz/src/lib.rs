//! The bodies of the fuzz targets, as plain functions of the input bytes.
//!
//! Each target in `fuzz_targets/` is one line that hands libFuzzer's input to
//! [`parse::run`], [`validate::run`] or [`execute::run`]; a body panics when an
//! invariant breaks and returns quietly otherwise (including on input it cannot use).
//!
//! The same files are compiled into the main workspace's tests (`dsh-runtime`'s `schema`
//! test binary includes this file with `#[path]`), which replay every seed under
//! `fuzz/seeds/` and a few thousand deterministic mutations of them through every body,
//! so the invariants are checked on each `cargo test` without libFuzzer. Code here
//! must therefore depend only on crates both builds have: `dsh-json`, `dsh-runtime`,
//! `arbitrary`, `serde_json`, `jsonschema` and `tokio` (never `libfuzzer-sys`), and
//! refer to its siblings with `super::`.

pub mod execute;
pub mod generate;
pub mod parse;
pub mod validate;
