//! The README's "Depending on dsh-rs" lines agree with the workspace: each crate they
//! name exists (by path, at that directory; by version, with a version that requirement
//! accepts), the two blocks name the same crates, and the Rust version stated is the
//! workspace's `rust-version`. `.ci/readme-deps` builds a scratch crate from the path
//! lines; this test is the cheap part that runs with every `cargo test`.

use std::path::Path;

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The `[dependencies]` lines of the ```` ```toml ```` block after `marker`.
fn block(readme: &str, marker: &str) -> Vec<(String, String)> {
    let start = readme
        .find(marker)
        .unwrap_or_else(|| panic!("README.md has no {marker}"));
    let rest = &readme[start..];
    let body = rest
        .split("```toml\n")
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .unwrap_or_else(|| panic!("no toml block after {marker}"));
    let mut lines = body.lines();
    assert_eq!(lines.next(), Some("[dependencies]"), "{body}");
    lines
        .map(|l| {
            let (name, spec) = l.split_once(" = ").unwrap_or_else(|| panic!("{l}"));
            (name.to_string(), spec.to_string())
        })
        .collect()
}

/// `key = "value"` from a manifest's `[package]` table (or the workspace's).
fn field(manifest: &str, key: &str) -> Option<String> {
    manifest.lines().find_map(|l| {
        let v = l.strip_prefix(key)?.trim_start().strip_prefix('=')?.trim();
        Some(v.trim_matches('"').to_string())
    })
}

/// The string value of `key` in an inline table `{ key = "value", .. }`.
fn inline(spec: &str, key: &str) -> Option<String> {
    let rest = spec.split(&format!("{key} = \"")).nth(1)?;
    Some(rest.split('"').next()?.to_string())
}

/// The `features = [..]` of an inline table, in order (none for a plain version).
fn features(spec: &str) -> Vec<String> {
    spec.split("features = [")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .map(|list| {
            list.split(',')
                .map(|f| f.trim().trim_matches('"').to_string())
                .filter(|f| !f.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// The line of crate `name` in a block.
fn registry_line(name: &str, block: &[(String, String)]) -> String {
    block
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, spec)| spec.clone())
        .unwrap_or_default()
}

#[test]
fn the_readme_dependency_lines_name_the_workspace_crates() {
    let readme = read("README.md");
    let workspace = read("Cargo.toml");
    let version = field(&workspace, "version").expect("workspace version");
    let registry = block(&readme, "<!-- dependencies: crates.io -->");
    let path = block(&readme, "<!-- dependencies: path -->");
    let names = |b: &[(String, String)]| b.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&registry), names(&path));
    for crate_name in ["dsh-runtime", "dsh-mcp", "dsh-code"] {
        assert!(names(&path).iter().any(|n| n == crate_name), "{crate_name}");
    }
    for ((name, req), (_, spec)) in registry.iter().zip(&path) {
        if !name.starts_with("dsh-") {
            // Third-party lines are the same in both blocks.
            assert_eq!(req, spec, "{name}");
            continue;
        }
        // `"0.1"` (or `{ version = "0.1", features = [..] }`) accepts the workspace's
        // `0.1.z`; the features, if any, are the same in both blocks and the crate's own.
        let req = inline(req, "version").unwrap_or_else(|| req.trim_matches('"').to_string());
        assert!(
            version.starts_with(&format!("{req}.")),
            "{name} = {req:?} does not accept the workspace's {version}"
        );
        assert_eq!(
            features(&registry_line(name, &registry)),
            features(spec),
            "{name}"
        );
        // `{ path = "../dsh-rs/<dir>" [, features = [..]] }`: the crate `name` lives in
        // `<dir>`.
        let dir = inline(spec, "path")
            .and_then(|p| p.strip_prefix("../dsh-rs/").map(str::to_string))
            .unwrap_or_else(|| panic!("{name} = {spec}"));
        let manifest = read(&format!("{dir}/Cargo.toml"));
        assert_eq!(field(&manifest, "name").as_deref(), Some(name.as_str()));
        for feature in features(spec) {
            assert!(
                manifest.contains(&format!("\n{feature} = [")),
                "{name} has no feature {feature:?}"
            );
        }
        assert!(
            !manifest.contains("publish = false"),
            "{name} is not published"
        );
    }
    let rust = field(&workspace, "rust-version").expect("rust-version");
    assert!(
        readme.contains(&format!("needs Rust {rust} or later")),
        "the README must state rust-version {rust}"
    );
    assert!(readme.contains("edition 2024"));
    assert_eq!(field(&workspace, "edition").as_deref(), Some("2024"));
}
