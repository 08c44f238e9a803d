//! `dsh-tools export`, `sdk` and `list --tokens` through the binary: output, warnings
//! on stderr, exit statuses.

use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run dsh-tools")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn export_prints_the_fragment_and_warnings() {
    let o = run(&["export", "--provider", "openai-strict"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let golden = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/golden/export-openai-strict.json"),
    )
    .expect("golden");
    assert_eq!(text(&o.stdout), golden);
    let stderr = text(&o.stderr);
    assert!(
        stderr.lines().any(|l| l.starts_with(
            "warning: read: parameters.properties.file_path: minLength is not supported here"
        )),
        "{stderr}"
    );
    let o = run(&["export", "--provider", "anthropic"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(o.stderr.is_empty(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v[0]["name"], "read");
    assert_eq!(v[0]["input_schema"]["type"], "object");
}

#[test]
fn export_of_an_unknown_provider_is_a_usage_error() {
    let o = run(&["export", "--provider", "bard"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr)
            .contains("unknown provider \"bard\"; expected one of: openai, openai-strict")
    );
    assert!(o.stdout.is_empty());
}

#[test]
fn sdk_prints_both_languages() {
    let ts = run(&["sdk", "--lang", "ts"]);
    assert_eq!(ts.status.code(), Some(0));
    let ts = text(&ts.stdout);
    assert!(ts.starts_with("## Programs for run_code\n"));
    assert!(ts.contains("```ts\ntype JsonValue = "));
    assert!(ts.contains("declare const tools: {"));
    let py = run(&["sdk", "--lang", "py"]);
    assert_eq!(py.status.code(), Some(0));
    assert!(text(&py.stdout).contains("```python\nfrom typing import "));
    assert_eq!(run(&["sdk", "--lang", "go"]).status.code(), Some(2));
}

#[test]
fn list_tokens_shows_sizes() {
    let o = run(&["list", "--tokens"]);
    assert_eq!(o.status.code(), Some(0));
    let out = text(&o.stdout);
    assert!(
        out.starts_with(
            "Definition sizes (registry schemas, compact JSON); tokens are estimated as bytes/4.\n"
        ),
        "{out}"
    );
    let read = out
        .lines()
        .find(|l| l.starts_with("read "))
        .expect("a row for read");
    let cols: Vec<&str> = read.split_whitespace().collect();
    let bytes: usize = cols[1].parse().expect("bytes");
    let tokens: usize = cols[2].parse().expect("tokens");
    assert_eq!(tokens, bytes.div_ceil(4));
    assert!(out.lines().last().unwrap_or("").starts_with("total"));

    let o = run(&["list", "--tokens", "--json", "--provider", "openai-strict"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let golden: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/golden/export-openai-strict.json"),
        )
        .expect("golden"),
    )
    .expect("golden JSON");
    // The size is that of the compact JSON of the tool's entry.
    assert_eq!(v[0]["name"], "read");
    assert_eq!(
        v[0]["bytes"].as_u64(),
        Some(serde_json::to_string(&golden[0]).expect("json").len() as u64)
    );
}
