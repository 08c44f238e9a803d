//! Input examples: read from the doc comment's `# Examples` JSON blocks and the
//! `example` keys, validated at registration, sent as Anthropic's `input_examples` and
//! appended to the description elsewhere, with a warning.

use dsh_providers::export::{self, Target};
use dsh_runtime::{RegisterError, Registry, Tool, tool};

/// Read lines of a file.
///
/// # Examples
///
/// The first ten lines:
///
/// ```json
/// {
///   "path": "src/lib.rs",
///   "limit": 10
/// }
/// ```
///
/// # Errors
///
/// When the file is missing.
#[tool(read_only, example = r#"{"path": "README.md"}"#)]
async fn read_lines(path: String, limit: Option<u32>) -> String {
    format!("{path}:{limit:?}")
}

/// Stat a file.
///
/// # Examples
///
/// ```
/// let x = 1;
/// ```
#[tool]
async fn stat_file(path: String) -> String {
    path
}

/// Move a file.
#[tool(
    example = r#"{"from": "a", "to": "b"}"#,
    example = r#"{"from": "a", "to": 3}"#
)]
async fn move_file(from: String, to: String) -> String {
    format!("{from}{to}")
}

fn texts(t: &impl Tool) -> Vec<String> {
    t.definition()
        .input_examples
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn doc_blocks_then_keys_in_order_and_out_of_the_description() {
    assert_eq!(
        texts(&ReadLines),
        [
            r#"{"path":"src/lib.rs","limit":10}"#,
            r#"{"path":"README.md"}"#
        ]
    );
    let d = &ReadLines.definition().description;
    assert!(
        !d.contains("Examples") && !d.contains("src/lib.rs") && !d.contains("ten lines"),
        "{d}"
    );
    assert!(
        d.starts_with("Read lines of a file.") && d.contains("# Errors"),
        "{d}"
    );
    // A section without JSON blocks is documentation, kept as it was.
    assert!(texts(&StatFile).is_empty());
    assert!(StatFile.definition().description.contains("# Examples"));
}

#[test]
fn anthropic_gets_input_examples_and_the_others_a_description_with_a_warning() {
    let registry = Registry::new();
    let _r = registry.register(ReadLines).unwrap();
    for target in [Target::Anthropic, Target::AnthropicStrict] {
        let e = export::export_registry(&registry, target);
        let t = e.tool("read_lines").unwrap();
        assert_eq!(
            t.get("input_examples").map(ToString::to_string).as_deref(),
            Some(r#"[{"path":"src/lib.rs","limit":10},{"path":"README.md"}]"#)
        );
        assert!(
            e.warnings.iter().all(|w| w.path != "input_examples"),
            "{:?}",
            e.warnings
        );
        let desc = t
            .get("description")
            .and_then(|d| d.as_str())
            .unwrap_or_default();
        assert!(!desc.contains("Examples:"));
    }
    for target in [
        Target::OpenAiChat,
        Target::OpenAiResponsesStrict,
        Target::GeminiJsonSchema,
        Target::GeminiOpenApi,
        Target::Mcp2026_07_28,
    ] {
        let e = export::export_registry(&registry, target);
        let t = e.tool("read_lines").unwrap();
        let entry = t.get("function").unwrap_or(t);
        assert!(entry.get("input_examples").is_none(), "{target}");
        let desc = entry
            .get("description")
            .and_then(|d| d.as_str())
            .unwrap_or_default();
        assert!(
            desc.ends_with(
                r#"

Examples: {"path":"src/lib.rs","limit":10}; {"path":"README.md"}"#
            ),
            "{target}: {desc}"
        );
        let w = e
            .warnings
            .iter()
            .find(|w| w.path == "input_examples")
            .unwrap();
        assert_eq!(w.tool, "read_lines");
        assert_eq!(
            w.lost,
            format!(
                "{target} has no input examples field: the 2 examples are appended to the description"
            )
        );
    }
}

#[test]
fn an_example_that_does_not_match_the_schema_is_a_registration_error() {
    let registry = Registry::new();
    let err = registry.register(MoveFile).unwrap_err();
    match &err {
        RegisterError::Example {
            name,
            index,
            violations,
        } => {
            assert_eq!((name.as_str(), *index), ("move_file", 1));
            assert!(violations.contains("input_examples[1].to"), "{violations}");
        }
        other => panic!("expected an example error, got {other:?}"),
    }
    assert_eq!(
        err.to_string(),
        r#"tool "move_file": input example 1 does not match the parameter schema: "input_examples[1].to" must be a string"#
    );
    // Nothing was registered.
    assert!(registry.view().get("move_file").is_none());
}
