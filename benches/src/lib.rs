//! Benchmarks for dsh-rs; see `BENCHMARKS.md` at the repository root.
//!
//! This library is intentionally empty. The criterion benches live in `benches/` (run
//! `cargo bench -p dsh-benches`), the compile-time comparison is the script
//! `compile/run.py`, and the token table against rmcp and FastMCP is `tokens/run.sh`
//! (with the examples `rmcp_tool_list` and `token_table`, feature `peers`).
