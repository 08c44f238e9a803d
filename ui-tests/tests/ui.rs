//! Compile-time rules of the macros: one case per rule under `tests/ui/<family>/`, each
//! with its reviewed `.stderr`, checked by trybuild, and `tests/ui/crate_root/`: what only
//! a crate of its own can show (lints at the crate root), compiled and run. The other
//! cases that must compile and run (`tests/ui/pass/`) are modules of the `pass` test
//! binary (see `tests/pass.rs`), built with the workspace's own dependencies: trybuild
//! builds each pass case as a binary of its own, which was most of its run time.
//!
//! The snapshots are tied to the pinned compiler (`rust-toolchain.toml`); regenerate them
//! with `TRYBUILD=overwrite cargo test -p ui-tests --test ui` and review the diff.
//! `cargo test -p ui-tests --test ui -- ui trybuild=name` runs the cases whose path
//! contains `name`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/crate_root/*.rs");
    t.compile_fail("tests/ui/tool/*.rs");
    t.compile_fail("tests/ui/derive/*.rs");
    t.compile_fail("tests/ui/resource/*.rs");
    t.compile_fail("tests/ui/prompt/*.rs");
    t.compile_fail("tests/ui/context/*.rs");
}
