//! `dsh-tools/TOOLS.md` is the catalog `dsh-tools docs` generates for the host's tools;
//! this test fails when the two differ.

use std::path::Path;

use dsh_providers::catalog;
use dsh_tools::REGENERATE_CATALOG;
use dsh_tools::host::Host;

#[test]
fn tools_md_is_up_to_date() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let host = Host::new(manifest).expect("host");
    let generated = catalog::markdown(host.registry(), Some(REGENERATE_CATALOG));
    let checked_in = std::fs::read_to_string(manifest.join("TOOLS.md")).unwrap_or_else(|e| {
        panic!(
            "dsh-tools/TOOLS.md: {e}; generate it with `{}`",
            REGENERATE_CATALOG
        )
    });
    assert!(
        generated == checked_in,
        "dsh-tools/TOOLS.md is stale: the tool definitions changed. Regenerate it from the repository root with\n\n    {}\n\nand review the diff.",
        REGENERATE_CATALOG
    );
}

#[test]
fn the_catalog_is_deterministic_and_complete() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let a = catalog::markdown(
        Host::new(manifest).expect("host").registry(),
        Some(REGENERATE_CATALOG),
    );
    let b = catalog::markdown(
        Host::new(manifest.join("src")).expect("host").registry(),
        Some(REGENERATE_CATALOG),
    );
    assert_eq!(
        a, b,
        "the catalog must not depend on the root or on run order"
    );
    for name in ["read", "write", "edit", "grep", "glob"] {
        assert!(
            a.contains(&format!("\n## {name}\n")),
            "no section for {name}"
        );
    }
    // Parameters come with their derived types and constraints.
    assert!(a.contains("| `limit` | integer (1..=2000) | no | How many lines to return (default and maximum: 2000). |"));
    assert!(a.contains("| `file_path` | string (non-empty) | yes |"));
    assert!(a.contains("| `operation` | \"create\" \\| \"update\" | yes | Created or replaced. |"));
    assert!(a.contains("**Annotations:** read-only, idempotent · **Timeout:** 30000 ms"));
}
