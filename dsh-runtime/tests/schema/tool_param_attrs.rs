//! `#[schema(...)]` on `#[tool]` fn parameters: the same keys as on a struct field of
//! `#[derive(ToolSchema)]`, published in the parameter schema and enforced by validation
//! exactly as for that field.

use dsh_runtime::json::{Value, parse};
use dsh_runtime::validate::validate_arguments;
use dsh_runtime::{Tool, ToolContext, ToolSchema, tool};
use serde::Deserialize;

fn v(text: &str) -> Value {
    parse(text).expect("test JSON parses")
}

/// Search the notes.
#[tool]
async fn search_notes(
    /// What to look for.
    #[schema(length(min = 1, max = 80), pattern = "^[^\\n]*$", examples = ["rust"])]
    query: String,
    /// Ignored: the `description` key wins, as on a field.
    #[schema(
        range(min = 1, max = 50),
        default = 10,
        description = "At most this many notes."
    )]
    limit: Option<u32>,
    #[schema(enum = ["asc", "desc"], title = "Order")] order: Option<String>,
    #[schema(length(max = 3))] tags: Vec<String>,
    #[schema(const = true)] exact: Option<bool>,
    cx: ToolContext,
) -> Vec<String> {
    let _ = (limit, order, tags, exact, cx);
    vec![query]
}

/// The same parameters as struct fields, with the same attributes.
#[derive(Deserialize, ToolSchema)]
#[allow(dead_code)]
struct SearchNotesFields {
    /// What to look for.
    #[schema(length(min = 1, max = 80), pattern = "^[^\\n]*$", examples = ["rust"])]
    query: String,
    /// Ignored: the `description` key wins, as on a field.
    #[schema(
        range(min = 1, max = 50),
        default = 10,
        description = "At most this many notes."
    )]
    limit: Option<u32>,
    #[schema(enum = ["asc", "desc"], title = "Order")]
    order: Option<String>,
    #[schema(length(max = 3))]
    tags: Vec<String>,
    #[schema(const = true)]
    exact: Option<bool>,
}

const PARAMETERS: &str = concat!(
    r#"{"type":"object","properties":{"#,
    r#""query":{"type":"string","description":"What to look for.","examples":["rust"],"minLength":1,"maxLength":80,"pattern":"^[^\\n]*$"},"#,
    r#""limit":{"type":"integer","description":"At most this many notes.","default":10,"minimum":1,"maximum":50},"#,
    r#""order":{"type":"string","title":"Order","enum":["asc","desc"]},"#,
    r#""tags":{"type":"array","maxItems":3,"items":{"type":"string"}},"#,
    r#""exact":{"type":"boolean","const":true}},"#,
    r#""required":["query","tags"]}"#,
);

#[test]
fn tool_param_schema_keys_are_published() {
    let def = SearchNotes.definition();
    assert_eq!(def.parameters.to_json_string(), PARAMETERS);
    assert_eq!(SearchNotesArgs::schema().to_json_string(), PARAMETERS);
}

#[test]
fn tool_param_schema_keys_match_the_struct_field_form() {
    let params = SearchNotes.definition().parameters.clone();
    let fields = SearchNotesFields::schema();
    let (Some(params), Some(fields)) = (params.as_object(), fields.as_object()) else {
        panic!("both schemas are objects");
    };
    // Only the root differs (open parameter root, closed struct).
    assert_eq!(params.properties, fields.properties);
}

#[test]
fn tool_param_schema_keys_are_enforced_like_struct_fields() {
    let params = &SearchNotes.definition().parameters;
    let fields = SearchNotesFields::schema();
    let cases = [
        (
            r#"{"query":"","tags":[]}"#,
            r#""query" must be at least 1 characters long"#,
        ),
        (
            r#"{"query":"a\nb","tags":[]}"#,
            r#""query" must match the pattern "^[^\\n]*$""#,
        ),
        (
            r#"{"query":"a","limit":0,"tags":[]}"#,
            r#""limit" must be at least 1"#,
        ),
        (
            r#"{"query":"a","limit":51,"tags":[]}"#,
            r#""limit" must be at most 50"#,
        ),
        (
            r#"{"query":"a","order":"up","tags":[]}"#,
            r#""order" must be one of ["asc","desc"]"#,
        ),
        (
            r#"{"query":"a","tags":["1","2","3","4"]}"#,
            r#""tags" must have at most 3 items"#,
        ),
        (
            r#"{"query":"a","tags":[],"exact":false}"#,
            r#""exact" must be true"#,
        ),
    ];
    for (args, message) in cases {
        let from_params = validate_arguments(params, &v(args))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_else(|| panic!("{args} must fail the parameter schema"));
        let from_fields = validate_arguments(&fields, &v(args))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_else(|| panic!("{args} must fail the struct's schema"));
        assert_eq!(from_params, from_fields, "{args}");
        assert_eq!(from_params, format!("invalid arguments: {message}"));
    }
    let good = r#"{"query":"rust","limit":50,"order":"asc","tags":["a"],"exact":true}"#;
    assert!(validate_arguments(params, &v(good)).is_ok());
    assert!(validate_arguments(&fields, &v(good)).is_ok());
}

#[tokio::test]
async fn the_fn_stays_callable_without_the_attributes() {
    let out = search_notes(
        "q".into(),
        None,
        None,
        Vec::new(),
        None,
        ToolContext::detached("search_notes"),
    )
    .await;
    assert_eq!(out, ["q"]);
}
