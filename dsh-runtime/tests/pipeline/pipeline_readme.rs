//! The examples of PIPELINE.md, with a hand-written `ReadFile` standing in for the one
//! `#[tool]` generates.

use std::num::NonZeroU64;
use std::sync::Arc;

use dsh_runtime::ToolAnnotations;
use dsh_runtime::hooks::{PreDecision, guard_fn, pre_execute_fn};
use dsh_runtime::json;
use dsh_runtime::schema::{Property, Schema};
use dsh_runtime::{RawTool, Registry, Tool, ToolCall, ToolContext, ToolDefinition, ToolError};

#[derive(serde::Serialize, serde::Deserialize)]
struct ReadFileArgs {
    path: String,
}

struct ReadFile;

fn read_file_definition() -> &'static ToolDefinition {
    static DEF: std::sync::OnceLock<ToolDefinition> = std::sync::OnceLock::new();
    DEF.get_or_init(|| {
        let mut annotations = ToolAnnotations::default();
        annotations.read_only = true;
        ToolDefinition::new(
            "read_file",
            "Read a file from disk.",
            Arc::new(Schema::closed_object(vec![Property::new(
                "path",
                Schema::string(),
                true,
            )])),
            Arc::new(Schema::string()),
        )
        .with_annotations(annotations)
    })
}

impl Tool for ReadFile {
    type Args = ReadFileArgs;
    type Output = String;
    fn definition(&self) -> &ToolDefinition {
        read_file_definition()
    }
    async fn call(&self, args: ReadFileArgs, _cx: ToolContext) -> Result<String, ToolError> {
        Ok(format!("contents of {}", args.path))
    }
}

#[tokio::test]
async fn readme_examples() -> Result<(), Box<dyn std::error::Error>> {
    let registry = Registry::new();
    let _read = registry.register(ReadFile)?;

    let _policy = registry.add_pre_execute(pre_execute_fn(|call| {
        let path = call.arguments().as_object()?.get("path")?.as_str()?;
        path.starts_with("/etc/shadow")
            .then(|| PreDecision::deny("that file is off limits"))
    }));
    let _guard = registry.add_guard(guard_fn(|call| {
        call.definition()
            .is_some_and(|d| d.annotations.destructive)
            .then(|| format!("{} is destructive and needs review", call.name()))
    }));

    let result = registry
        .execute(ToolCall::new(
            "call_1",
            "read_file",
            r#"{"path":"/etc/hosts"}"#,
        ))
        .await;
    assert!(result.is_success());

    let denied = registry
        .execute(ToolCall::new(
            "call_2",
            "read_file",
            r#"{"path":"/etc/shadow"}"#,
        ))
        .await;
    assert_eq!(denied.message(), Some("that file is off limits"));
    assert_eq!(denied.code_str(), Some("POLICY_DENIED"));

    let params = json::parse(r#"{"type":"object","properties":{}}"#)?;
    let output = json::parse(r#"{"type":"string"}"#)?;
    let slow = RawTool::new(
        "slow",
        "Wait for a while.",
        &params,
        &output,
        |_, cx| async move {
            cx.cancellation().cancelled().await;
            Ok(json::Value::from("done"))
        },
    )?
    .with_timeout_ms(NonZeroU64::new(50).ok_or("zero")?);
    let _slow = registry.register(slow)?;
    let r = registry
        .execute(ToolCall::new("call_3", "slow", "{}"))
        .await;
    assert_eq!(r.code_str(), Some("TOOL_TIMEOUT"));

    // The guard denies destructive tools.
    let mut destructive = ToolAnnotations::default();
    destructive.destructive = true;
    let rm = RawTool::new("rm", "Remove a file.", &params, &output, |_, _| async {
        Ok(json::Value::from("removed"))
    })?
    .with_annotations(destructive);
    let _rm = registry.register(rm)?;
    let r = registry.execute(ToolCall::new("call_4", "rm", "{}")).await;
    assert_eq!(r.message(), Some("rm is destructive and needs review"));

    let text: String = registry
        .call::<ReadFile>(ReadFileArgs {
            path: "/etc/hosts".into(),
        })
        .await?;
    assert_eq!(text, "contents of /etc/hosts");
    Ok(())
}
