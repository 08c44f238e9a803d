//! Compile-time rules of the macros: one case per rule under `tests/ui/<family>/`, each
//! with its reviewed `.stderr`; `tests/ui/pass/` holds cases that must compile and run.
//!
//! The cases are compiled against this test binary's own dependencies (no second build of
//! the dependency tree, see `ui_tests`). The snapshots are tied to the pinned compiler
//! (`rust-toolchain.toml`); regenerate them with
//! `TRYBUILD=overwrite cargo test -p ui-tests --test ui` and review the diff.

#[test]
fn ui() {
    let out_dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let mut t = ui_tests::TestCases::new(ui_tests_flags::rustc_flags!(), out_dir);
    t.pass("tests/ui/pass");
    t.compile_fail("tests/ui/tool");
    t.compile_fail("tests/ui/derive");
    t.run();
}
