//! Output values with `None` fields against the published MCP output schemas.

use dsh_providers::export::{self, Target};
use dsh_runtime::{Registry, ToolCall, ToolError, ToolSchema, json, tool};

/// What a file-writing tool reports: `before` is `None` for a new file.
#[derive(serde::Serialize, serde::Deserialize, ToolSchema)]
struct Written {
    /// The path written.
    path: String,
    /// The previous content, when the file existed.
    before: Option<String>,
    /// Lines of the previous content, when the file existed.
    lines: Option<Vec<Option<String>>>,
}

/// Create or replace a file.
#[tool]
async fn put(path: String) -> Result<Written, ToolError> {
    Ok(Written {
        path,
        before: None,
        lines: None,
    })
}

/// A `None` field of an output struct is absent from the value, so the value passes
/// the published output schema under standard JSON Schema (as a validating MCP
/// client checks `structuredContent`), where serde's `null` would not.
#[tokio::test]
async fn none_fields_are_absent_from_the_value_and_pass_the_published_schema() {
    let registry = Registry::new();
    let _reg = registry.register(Put).unwrap();
    let r = registry
        .execute(ToolCall::new("c1", "put", r#"{"path":"a.txt"}"#))
        .await;
    let value = r.value().expect("a success");
    assert_eq!(*value, json::parse(r#"{"path":"a.txt"}"#).unwrap());
    for target in [Target::Mcp2025_11_25, Target::Mcp2026_07_28] {
        let list = export::export_registry(&registry, target);
        let schema = json::to_serde(list.tool("put").unwrap().get("outputSchema").unwrap());
        let validator = jsonschema::draft202012::new(&schema).unwrap();
        let def = registry.view().get("put").unwrap();
        let structured = export::mcp_structured_content(&def.definition().output, value, target);
        assert!(
            validator.is_valid(&json::to_serde(&structured)),
            "{target:?}: {structured}"
        );
    }
    // The typed call reads the absent fields back as `None`.
    let typed = registry
        .call::<Put>(PutArgs { path: "b".into() })
        .await
        .unwrap();
    assert!(typed.before.is_none() && typed.lines.is_none());
}

fn error<T: std::error::Error + Send + Sync + 'static>() {}

#[test]
fn export_errors_are_std_errors() {
    error::<dsh_providers::export::ExportError>();
    error::<dsh_providers::export::UnknownTarget>();
}
