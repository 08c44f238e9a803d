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

/// Deploy an image.
#[tool]
async fn deploy(
    /// The region to deploy in.
    #[schema(header = "Region", title = "Region")]
    region: String,
    #[schema(header = "Replicas", range(max = 9))] replicas: Option<u32>,
    #[schema(header = "Dry-Run")] dry_run: bool,
    image: String,
) -> String {
    let _ = (replicas, dry_run);
    format!("{image} in {region}")
}

#[test]
fn header_params_publish_x_mcp_header_after_the_other_annotations() {
    let expected = concat!(
        r#"{"type":"object","properties":{"#,
        r#""region":{"type":"string","description":"The region to deploy in.","title":"Region","x-mcp-header":"Region"},"#,
        r#""replicas":{"type":"integer","x-mcp-header":"Replicas","minimum":0,"maximum":9},"#,
        r#""dry_run":{"type":"boolean","x-mcp-header":"Dry-Run"},"#,
        r#""image":{"type":"string"}},"#,
        r#""required":["region","dry_run","image"]}"#,
    );
    let def = Deploy.definition();
    assert_eq!(def.parameters.to_json_string(), expected);
    // The header is an annotation: it changes nothing validation accepts.
    let args = v(r#"{"region":"eu","dry_run":true,"image":"app:1"}"#);
    assert!(validate_arguments(&def.parameters, &args).is_ok());
    // It reads back from JSON Schema, and passes the definition-time checks.
    let read = dsh_runtime::schema::Schema::parameters_from_json_schema(&v(expected))
        .expect("the published schema reads back");
    let (Some(read), Some(params)) = (read.as_object(), def.parameters.as_object()) else {
        panic!("both schemas are objects");
    };
    assert_eq!(read.properties, params.properties);
    assert!(def.parameters.check("parameters").is_ok());
}

#[test]
fn header_rules_are_checked_on_schemas_read_from_json() {
    let read = |text: &str| {
        dsh_runtime::schema::Schema::parameters_from_json_schema(&v(text))
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    assert_eq!(
        read(
            r#"{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"},"b":{"type":"object","additionalProperties":false,"properties":{"c":{"type":"integer","x-mcp-header":"C"}}}}}"#
        ),
        Ok(())
    );
    let cases = [
        (
            r#"{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"My Region"}}}"#,
            r#"schema.properties.a: `x-mcp-header` "My Region" is not an HTTP field-name token"#,
        ),
        (
            r#"{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}"#,
            "schema.properties.a: `x-mcp-header` applies only to string, integer and boolean nodes, not to a number node",
        ),
        (
            r#"{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Region"},"b":{"type":"string","x-mcp-header":"region"}}}"#,
            r#"schema.properties.b: `x-mcp-header` "region" is already the header of schema.properties.a"#,
        ),
        (
            r#"{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}"#,
            "schema.properties.a.items: `x-mcp-header` applies only to a property reached from the parameter root through `properties`",
        ),
        (
            r#"{"type":"object","properties":{"a":{"type":"string","x-mcp-header":7}}}"#,
            "schema.properties.a: `x-mcp-header` must be a string, found 7",
        ),
    ];
    for (text, expected) in cases {
        let err = read(text).expect_err(text);
        assert!(err.contains(expected), "{err}\nlacks\n{expected}");
    }
}
