//! Golden snapshots of the schemas derived for the corpus (`derive_support`), one JSON
//! file per type under `tests/snapshots/derive/`. The projection is byte-stable, so any
//! change in a derived schema shows up here as a diff.
//!
//! Rewrite the snapshots with `DSH_BLESS=1 cargo test -p dsh-runtime --test schema derive_schemas`
//! and review the diff.

use crate::derive_support;

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

/// Every violation of `text` against `T`'s schema (root label `value`, prefixed paths).
fn violations<T: dsh_runtime::ToolSchema + 'static>(text: &str) -> Vec<String> {
    let value = dsh_runtime::json::parse(text).expect("test JSON");
    match dsh_runtime::validate::validate_labeled(&T::schema(), &value, "value", true) {
        Ok(_) => Vec::new(),
        Err(v) => v.to_vec(),
    }
}

#[test]
fn a_tagged_union_names_its_tag_or_the_chosen_branch() {
    use derive_support::{Adjacent, Internal, Nested};
    // A wrong tag: its path and the allowed values.
    assert_eq!(
        violations::<Internal>(r#"{"kind":"later"}"#),
        [r#""value.kind" must be one of ["circle","point-at","labels","empty","box"]"#]
    );
    // No tag at all.
    assert_eq!(
        violations::<Internal>(r#"{"radius":1}"#),
        [
            r#"missing required property "value.kind" (one of ["circle","point-at","labels","empty","box"])"#
        ]
    );
    // The tag picks a branch: that branch's violations, with full paths.
    assert_eq!(
        violations::<Internal>(r#"{"kind":"box","topLeft":{"x":"1"},"extra":true}"#),
        [
            r#"missing required property "value.topLeft.y""#,
            r#""value.topLeft.x" must be an integer"#,
            r#""value.extra" is not a declared property (additionalProperties: false)"#,
        ]
    );
    assert_eq!(
        violations::<Internal>(r#"{"kind":"circle"}"#),
        [r#"missing required property "value.radius""#]
    );
    // Not an object.
    assert_eq!(
        violations::<Internal>(r#""circle""#),
        [r#""value" must be an object"#]
    );
    // Adjacent tagging: the tag, then the content's violations.
    assert_eq!(
        violations::<Adjacent>(r#"{"t":"Move","c":{"to":{"x":1}}}"#),
        [r#"missing required property "value.c.to.y""#]
    );
    assert_eq!(
        violations::<Adjacent>(r#"{"t":"Jump"}"#),
        [r#""value.t" must be one of ["Ping","Text","Count","Move"]"#]
    );
    // Nested: the union's paths continue the outer ones (an `Option` field).
    assert_eq!(
        violations::<Nested>(
            r#"{"commands":[],"shape":{"kind":"circle","radius":"big"},"speeds":{},"count":1}"#
        ),
        [r#""value.shape.radius" must be a number"#]
    );
}

#[test]
fn an_untagged_union_explains_its_closest_branch() {
    use derive_support::{External, Untagged, UntaggedObjects};
    // The object branch fits the value's type: its violations, the first one in the line
    // naming it (no message ends in an empty clause).
    assert_eq!(
        violations::<Untagged>(r#"{"a":1,"b":300}"#),
        [
            r#""value" matches none of the 5 oneOf branches; the closest is branch 5: "value.b" must be at most 255"#,
        ]
    );
    assert_eq!(
        violations::<UntaggedObjects>(r#"{"id":-1}"#),
        [
            r#""value" matches none of the 3 oneOf branches; the closest is branch 2: "value.id" must be at least 0"#,
        ]
    );
    // Externally tagged: the variant's key picks the closest branch.
    assert_eq!(
        violations::<External>(r#"{"go":{"to":{"x":1,"y":2},"fast":"yes"}}"#),
        [
            r#""value" matches none of the 5 oneOf branches; the closest is branch 3: "value.go.fast" must be a boolean"#,
        ]
    );
}

/// A unit-variant enum whose variants are documented (a `oneOf` of constants) fails like
/// an undocumented one.
#[test]
fn a_documented_unit_enum_fails_like_an_enum() {
    #[derive(serde::Deserialize, dsh_runtime::ToolSchema)]
    #[serde(rename_all = "lowercase")]
    #[allow(dead_code)]
    enum Documented {
        /// Whenever.
        Low,
        /// Soon.
        Normal,
        /// Now.
        High,
    }
    #[derive(serde::Deserialize, dsh_runtime::ToolSchema)]
    #[serde(rename_all = "lowercase")]
    #[allow(dead_code)]
    enum Plain {
        Low,
        Normal,
        High,
    }
    let expected = [r#""value" must be one of ["low","normal","high"]"#];
    assert_eq!(violations::<Documented>(r#""urgent""#), expected);
    assert_eq!(violations::<Plain>(r#""urgent""#), expected);
    assert_eq!(violations::<Documented>("3"), expected);
}

#[test]
fn an_optional_union_reports_only_the_value_branch() {
    // `Option<T>` outside a property is `oneOf [T, null]`: T's violations say it all.
    assert_eq!(
        violations::<Vec<Option<u8>>>(r#"[1,null,"x"]"#),
        [r#""value[2]" must be an integer"#]
    );
}
