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

/// The tools of a golden export (parsed keeping key order) and the whole fragment.
fn golden_export(target: &str) -> (Vec<dsh_runtime::json::Value>, dsh_runtime::json::Value) {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("tests/golden/export-{target}.json")),
    )
    .expect("golden");
    let fragment = dsh_runtime::json::parse(&text).expect("golden JSON");
    let list = if target.starts_with("gemini") {
        fragment
            .get_index(0)
            .and_then(|d| d.get("functionDeclarations"))
    } else if target.starts_with("mcp") {
        fragment.get("tools")
    } else {
        Some(&fragment)
    };
    let tools = list
        .and_then(dsh_runtime::json::Value::as_array)
        .map(|a| a.iter().cloned().collect())
        .expect("a list of tools");
    (tools, fragment)
}

#[test]
fn list_tokens_counts_every_target_s_export_with_o200k() {
    use dsh_providers::export::{Target, tokens};

    let o = run(&["list", "--tokens"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.starts_with("o200k tokens of each tool's entry as the target's request carries it"),
        "{out}"
    );
    let lines: Vec<&str> = out.lines().collect();
    let header = lines
        .iter()
        .position(|l| l.starts_with("tool "))
        .expect("a header row");
    let columns: Vec<&str> = lines[header].split_whitespace().skip(1).collect();
    let names: Vec<&str> = Target::ALL.iter().map(|t| t.name()).collect();
    assert_eq!(columns, names);
    let row = |name: &str| -> Vec<&str> {
        lines[header..]
            .iter()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no row {name} in\n{out}"))
            .split_whitespace()
            .skip(1)
            .collect()
    };
    // Every cell is the tokenizer's count of the entry in that target's golden export,
    // and the request row that of the whole fragment as sent (compact).
    for (i, target) in names.iter().enumerate() {
        let (tools, fragment) = golden_export(target);
        for tool in &tools {
            // (Chat Completions nests the name under `function`.)
            let name = tool
                .get("name")
                .or_else(|| tool.get("function").and_then(|f| f.get("name")))
                .and_then(|n| n.as_str())
                .expect("a name");
            assert_eq!(
                row(name)[i],
                tokens::count(&tool.to_string()).to_string(),
                "{target} {name}"
            );
        }
        assert_eq!(
            row("request")[i],
            tokens::count(&fragment.to_string()).to_string(),
            "{target}"
        );
        let accuracy = if target.starts_with("openai") {
            "exact"
        } else {
            "approx."
        };
        assert_eq!(row("accuracy")[i], accuracy, "{target}");
    }
    // Nothing is deferred among the reference tools: no up-front row.
    assert!(!out.contains("up front"), "{out}");

    // `--target` (or its old name `--provider`), comma-separated, and the JSON form.
    let o = run(&[
        "list",
        "--tokens",
        "--json",
        "--provider",
        "openai-strict,mcp",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["encoding"], "o200k_base");
    assert_eq!(v["targets"].as_array().map(Vec::len), Some(2));
    assert_eq!(v["targets"][1]["target"], "mcp");
    assert_eq!(v["targets"][1]["accuracy"], "o200k approximation");
    let (tools, fragment) = golden_export("openai-strict");
    let strict = &v["targets"][0];
    assert_eq!(strict["target"], "openai-strict");
    assert_eq!(strict["accuracy"], "exact");
    assert_eq!(strict["tools"][0]["name"], "read");
    let read = tools[0].to_string();
    assert_eq!(
        strict["tools"][0]["tokens"].as_u64(),
        Some(tokens::count(&read) as u64)
    );
    assert_eq!(
        strict["tools"][0]["bytes"].as_u64(),
        Some(read.len() as u64)
    );
    assert_eq!(strict["tools"][0]["deferred"], false);
    assert_eq!(
        strict["request"].as_u64(),
        Some(tokens::count(&fragment.to_string()) as u64)
    );
    assert_eq!(strict["upfront"], strict["request"]);

    let o = run(&[
        "list",
        "--tokens",
        "--target",
        "openai",
        "--target",
        "anthropic",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let header = out.lines().find(|l| l.starts_with("tool ")).unwrap_or("");
    assert_eq!(
        header.split_whitespace().collect::<Vec<_>>(),
        ["tool", "openai", "anthropic"]
    );

    let o = run(&["list", "--tokens", "--target", "bard"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("unknown provider \"bard\""),
        "{}",
        text(&o.stderr)
    );
    assert!(o.stdout.is_empty());
}
