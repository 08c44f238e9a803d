//! Golden snapshots of the schemas derived for the corpus (`derive_support`), one JSON
//! file per type under `tests/snapshots/derive/`. The projection is byte-stable, so any
//! change in a derived schema shows up here as a diff.
//!
//! Rewrite the snapshots with `DSH_BLESS=1 cargo test -p dsh-runtime --test derive_schemas`
//! and review the diff.

mod derive_support;

use std::path::PathBuf;

/// Indent compact JSON text (keys keep their order; string contents are untouched).
fn pretty(compact: &str) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut chars = compact.chars().peekable();
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        out.push_str(&"  ".repeat(depth));
    };
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '{' | '[' => {
                out.push(c);
                let close = if c == '{' { '}' } else { ']' };
                if chars.peek() == Some(&close) {
                    out.push(close);
                    chars.next();
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            c => out.push(c),
        }
    }
    out.push('\n');
    out
}

#[test]
fn derived_schemas_match_snapshots() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/derive");
    let bless = std::env::var_os("DSH_BLESS").is_some();
    let mut failures = Vec::new();
    for entry in derive_support::corpus() {
        // Every derived schema passes the definition-time checks a registration runs.
        if let Err(e) = entry.schema.check("schema") {
            failures.push(format!("{}: {e}", entry.name));
        }
        let text = pretty(&entry.schema.to_json_string());
        // The snapshot is valid JSON with the same content as the compact projection.
        let reparsed: serde_json::Value =
            serde_json::from_str(&text).expect("pretty output is JSON");
        assert_eq!(
            reparsed,
            dsh_runtime::json::to_serde(&entry.schema.to_json_schema()),
            "{}",
            entry.name
        );
        let path = dir.join(format!("{}.json", entry.name));
        if bless {
            std::fs::create_dir_all(&dir).expect("create snapshot dir");
            std::fs::write(&path, &text).expect("write snapshot");
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(expected) if expected == text => {}
            Ok(expected) => failures.push(format!(
                "{}: schema differs from {}\n--- expected\n{expected}\n--- actual\n{text}",
                entry.name,
                path.display()
            )),
            Err(_) => failures.push(format!(
                "{}: no snapshot at {} (run with DSH_BLESS=1)",
                entry.name,
                path.display()
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn pretty_printing_keeps_strings_intact() {
    assert_eq!(
        pretty(r#"{"a":"x,{}:\"","b":[],"c":[1,{}]}"#),
        "{\n  \"a\": \"x,{}:\\\"\",\n  \"b\": [],\n  \"c\": [\n    1,\n    {}\n  ]\n}\n"
    );
}
