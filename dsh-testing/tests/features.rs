//! A dev-dependency on dsh-testing must not change how dsh-runtime or dsh-mcp is built,
//! so that a user's `cargo test` reuses what their `cargo build` built.
//!
//! Cargo builds a crate again whenever the features of anything in its dependency tree
//! differ. Each case writes a scratch user crate (the README's dependency lines, with
//! dsh-testing under `[dev-dependencies]`) and asks `cargo tree` for the features of every
//! package as `cargo build` resolves them (`-e no-dev`) and as `cargo test` does. Every
//! package that dsh-runtime or dsh-mcp depends on must have the same features in both.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("dsh-testing sits in the workspace")
        .to_path_buf()
}

fn cargo(dir: &Path, args: &[&str]) -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(args)
        .current_dir(dir)
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("cargo tree prints UTF-8")
}

/// `name version` -> every feature list it is built with (host and target units).
fn features(dir: &Path, edges: &str) -> BTreeMap<String, BTreeSet<String>> {
    let text = cargo(
        dir,
        &[
            "tree",
            "--offline",
            "-e",
            edges,
            "--prefix",
            "none",
            "-f",
            "{p}|{f}",
        ],
    );
    let mut map: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let line = line.trim_end_matches(" (*)");
        let (package, feats) = line.split_once('|').unwrap_or((line, ""));
        let mut words = package.split_whitespace();
        let key = format!(
            "{} {}",
            words.next().unwrap_or(""),
            words.next().unwrap_or("")
        );
        map.entry(key).or_default().insert(feats.trim().to_string());
    }
    map
}

/// The packages in the trees of `crates`, as `cargo build` sees them.
fn closure(dir: &Path, crates: &[&str]) -> BTreeSet<String> {
    let mut set = BTreeSet::new();
    for krate in crates {
        let text = cargo(
            dir,
            &[
                "tree",
                "--offline",
                "-p",
                krate,
                "-e",
                "normal,build",
                "--prefix",
                "none",
                "-f",
                "{p}",
            ],
        );
        for line in text.lines() {
            let mut words = line.split_whitespace();
            if let (Some(name), Some(version)) = (words.next(), words.next()) {
                set.insert(format!("{name} {version}"));
            }
        }
    }
    set
}

fn check(name: &str, deps: &str, dev_deps: &str, crates: &[&str]) {
    let root = workspace();
    let dir = tempfile::tempdir().expect("a scratch directory");
    let path = |c: &str| root.join(c).display().to_string();
    let manifest = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
         [dependencies]\n{}\n\n[dev-dependencies]\n{}\n",
        deps.replace("@", &path("")),
        dev_deps.replace("@", &path("")),
    );
    std::fs::write(dir.path().join("Cargo.toml"), manifest).expect("write the manifest");
    std::fs::create_dir(dir.path().join("src")).expect("src");
    std::fs::write(dir.path().join("src/main.rs"), "fn main() {}\n").expect("main.rs");
    // The workspace's versions, so the resolution needs nothing that is not downloaded.
    std::fs::copy(root.join("Cargo.lock"), dir.path().join("Cargo.lock")).expect("copy the lock");

    let build = features(dir.path(), "no-dev");
    let test = features(dir.path(), "normal,build,dev");
    let shared = closure(dir.path(), crates);
    assert!(
        shared.len() > 20,
        "the closure of {crates:?} is too small: {shared:?}"
    );
    let differ: Vec<String> = shared
        .iter()
        .filter(|p| build.get(*p) != test.get(*p))
        .map(|p| {
            format!(
                "{p}: cargo build {:?}, cargo test {:?}",
                build.get(p),
                test.get(p)
            )
        })
        .collect();
    assert!(
        differ.is_empty(),
        "dsh-testing as a dev-dependency changes the features of packages {crates:?} depend \
         on, so a user's `cargo test` builds them again. Turn the same features on in \
         {crates:?}:\n{}",
        differ.join("\n")
    );
}

#[test]
fn the_testing_kit_leaves_dsh_runtime_as_cargo_build_built_it() {
    check(
        "kit_user",
        "dsh-runtime = { path = \"@dsh-runtime\" }\n\
         tokio = { version = \"1\", features = [\"macros\", \"rt-multi-thread\"] }\n\
         serde = { version = \"1\", features = [\"derive\"] }",
        "dsh-testing = { path = \"@dsh-testing\" }",
        &["dsh-runtime"],
    );
}

#[test]
fn the_mcp_testing_kit_leaves_dsh_mcp_as_cargo_build_built_it() {
    check(
        "mcp_kit_user",
        "dsh-runtime = { path = \"@dsh-runtime\" }\n\
         dsh-mcp = { path = \"@dsh-mcp\" }\n\
         tokio = { version = \"1\", features = [\"macros\", \"rt-multi-thread\"] }",
        "dsh-testing = { path = \"@dsh-testing\", features = [\"mcp\"] }",
        &["dsh-runtime", "dsh-mcp"],
    );
}
