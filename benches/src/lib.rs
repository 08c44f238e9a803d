//! Benchmarks for dsh-rs; see `BENCHMARKS.md` at the repository root.
//!
//! This library is intentionally empty. The criterion benches live in `benches/` (run
//! `cargo bench -p dsh-benches`), and the compile-time comparison is the script
//! `compile/run.py`.
