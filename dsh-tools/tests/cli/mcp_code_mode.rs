//! `dsh-tools mcp --code-mode`: each session's scope in code mode, driven with rmcp's
//! client over stdio. In `code` the list is `run_code` alone (its description carries
//! the code-only rule and the typed SDK of the session's tools), a program reaches the
//! tools through `tools/call run_code`, and a direct call of another tool is refused as
//! unknown, naming `run_code`. In `both` the tools stay callable next to `run_code`.

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};

use crate::process::DSH_TOOLS;

fn call(name: &str, args: Value) -> CallToolRequestParams {
    let Value::Object(args) = args else {
        panic!("object")
    };
    CallToolRequestParams::new(name.to_string()).with_arguments(args)
}

fn run_code(program: &str) -> CallToolRequestParams {
    call(
        "run_code",
        json!({"code": program, "description": "Read the notes"}),
    )
}

async fn serve(
    root: &std::path::Path,
    mode: &str,
) -> (RunningService<RoleClient, ()>, tokio::process::Child) {
    let (child, io) = crate::process::stdio(root, &["--code-mode", mode]);
    let client = ().serve(io).await.unwrap();
    (client, child)
}

fn root() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("notes.txt"), "alpha\nbeta\ngamma\n").unwrap();
    root
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_mode_lists_run_code_alone_and_refuses_direct_calls() {
    let root = root();
    let (client, mut child) = serve(root.path(), "code").await;

    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["run_code"]);
    let description = tools[0].description.as_deref().unwrap_or_default();
    assert!(
        description.starts_with(dsh_code::DESCRIPTION),
        "{description}"
    );
    assert!(
        description.contains(dsh_code::sdk::CODE_ONLY_RULE),
        "{description}"
    );
    assert!(
        description.contains(dsh_code::sdk::typescript::INSTRUCTIONS),
        "{description}"
    );
    // The SDK types the global tools and the session's own (bash, the job tools).
    for member in ["  read: {", "  grep: {", "  bash: {", "  job_output: {"] {
        assert!(
            description.contains(member),
            "{member} missing:\n{description}"
        );
    }
    assert!(description.contains("declare const tools"), "{description}");

    // A program reaches the tools through run_code, and the value is structured.
    let r = client
        .call_tool(run_code(
            "const [r, g] = await Promise.all([tools.read({file_path: \"notes.txt\"}), tools.grep({pattern: \"a$\"})]);\n\
             console.log(`read ${r.totalLines} lines`);\n\
             return {first: r.lines[0].text, total: r.totalLines, matches: g.matches.length};",
        ))
        .await
        .unwrap();
    assert_ne!(r.is_error, Some(true), "{r:?}");
    assert_eq!(
        r.structured_content,
        Some(json!({
            "logs": ["read 3 lines"],
            "result": {"first": "alpha", "total": 3, "matches": 3}
        }))
    );

    // A failure inside the program is a ToolCallError the program sees.
    let r = client
        .call_tool(run_code(
            "try { await tools.read({file_path: \"missing.txt\"}); } catch (e) { return (e as ToolCallError).toolName; }",
        ))
        .await
        .unwrap();
    assert_eq!(
        r.structured_content,
        Some(json!({"logs": [], "result": "read"}))
    );

    // A direct call of another tool is unknown, and the message names run_code.
    let err = client
        .call_tool(call("read", json!({"file_path": "notes.txt"})))
        .await
        .expect_err("a direct read in code mode");
    let message = err.to_string();
    assert!(
        message.contains("unknown tool \"read\"") && message.contains("run_code"),
        "{message}"
    );

    client.cancel().await.unwrap();
    let status = child.wait().await.unwrap();
    assert!(status.success(), "{status:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_mode_keeps_the_tools_callable_next_to_run_code() {
    let root = root();
    let (client, mut child) = serve(root.path(), "both").await;

    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(
        names.contains(&"read") && names.contains(&"bash"),
        "{names:?}"
    );
    assert_eq!(names.last(), Some(&"run_code"), "{names:?}");
    let description = tools
        .iter()
        .find(|t| t.name == "run_code")
        .and_then(|t| t.description.as_deref())
        .unwrap_or_default();
    assert!(description.contains("  read: {"), "{description}");
    assert!(
        !description.contains(dsh_code::sdk::CODE_ONLY_RULE),
        "{description}"
    );

    let r = client
        .call_tool(call("read", json!({"file_path": "notes.txt"})))
        .await
        .unwrap();
    assert_eq!(r.structured_content.as_ref().unwrap()["totalLines"], 3);
    let r = client
        .call_tool(run_code(
            "return (await tools.read({file_path: \"notes.txt\", offset: 2})).lines.map(l => l.text);",
        ))
        .await
        .unwrap();
    assert_eq!(
        r.structured_content,
        Some(json!({"logs": [], "result": ["beta", "gamma"]}))
    );

    client.cancel().await.unwrap();
    let status = child.wait().await.unwrap();
    assert!(status.success(), "{status:?}");
}

#[test]
fn native_is_the_default() {
    let out = std::process::Command::new(DSH_TOOLS)
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("--code-mode code|both"), "{help}");
    let out = std::process::Command::new(DSH_TOOLS)
        .args(["mcp", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("--code-mode <MODE>"), "{help}");
    assert!(help.contains("[default: native]"), "{help}");
}

/// Requests served statelessly (`--stateless` with `initialize`, and every 2026-07-28
/// request over HTTP) run in the server's stateless context, which is in code mode too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_http_requests_are_in_code_mode_too() {
    use rmcp::model::ProtocolVersion;
    use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
    use rmcp::transport::StreamableHttpClientTransport;
    let root = root();
    let (mut child, url) =
        crate::process::http(root.path(), &["--stateless", "--code-mode", "code"]).await;
    for lifecycle in [
        ClientLifecycleMode::Initialize,
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    ] {
        let what = format!("{lifecycle:?}");
        let client = ()
            .serve_with_lifecycle(
                StreamableHttpClientTransport::from_uri(url.clone()),
                lifecycle,
            )
            .await
            .unwrap();
        let tools = client.list_all_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, ["run_code"], "{what}");
        let r = client
            .call_tool(run_code(
                "return (await tools.read({file_path: \"notes.txt\", offset: 2})).lines.map(l => l.text);",
            ))
            .await
            .unwrap();
        assert_eq!(
            r.structured_content,
            Some(json!({"logs": [], "result": ["beta", "gamma"]})),
            "{what}: {r:?}"
        );
        client.cancel().await.unwrap();
    }
    child.start_kill().unwrap();
    let _ = child.wait().await;
}
