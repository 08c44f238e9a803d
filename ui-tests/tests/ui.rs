//! Compile-time rules of the macros: one case per rule under `tests/ui/<family>/`, each
//! with its reviewed `.stderr`; `tests/ui/pass/` holds cases that must compile and run.
//!
//! The snapshots are tied to the pinned compiler (`rust-toolchain.toml`); regenerate them
//! with `TRYBUILD=overwrite cargo test -p ui-tests --test ui` and review the diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/tool/*.rs");
    t.compile_fail("tests/ui/derive/*.rs");
}
