//! Every reference tool's real outputs pass the output schema it publishes, judged as a
//! consumer judges them: the `jsonschema` crate under Draft 2020-12, against the JSON
//! Schema projection and each MCP export's `outputSchema` (with the value as
//! `structuredContent`, wrapped where the 2025-11-25 export wraps it).
//!
//! The outcomes: `read`; `write` creating a file and replacing one; `edit`; `grep` with
//! and without matches; `glob`; foreground `bash` exiting 0, non-zero, and killed by a
//! signal; background `bash` with `job_output` (running and settled), `job_list` and
//! `job_kill` (running and already finished).

#![cfg(unix)]

use dsh_providers::export::{self, Target};
use dsh_runtime::json;
use dsh_runtime::{Registry, ToolResult};
use dsh_tools::host::Host;

/// Checks one success against everything its tool publishes; returns the value.
fn check(registry: &Registry, name: &str, result: &ToolResult) -> serde_json::Value {
    let value = match result.value() {
        Some(v) => v,
        None => panic!("{name}: expected a success, got {result:?}"),
    };
    let tool = registry.view().get(name).expect("the tool is registered");
    let output = &tool.definition().output;
    let projected = json::to_serde(&output.to_json_schema());
    let as_serde = json::to_serde(value);
    let errors = |schema: &serde_json::Value, instance: &serde_json::Value| -> Vec<String> {
        jsonschema::draft202012::new(schema)
            .expect("a published schema compiles as Draft 2020-12")
            .iter_errors(instance)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect()
    };
    let e = errors(&projected, &as_serde);
    assert!(
        e.is_empty(),
        "{name}: {as_serde} fails its output schema: {e:?}"
    );
    for target in [Target::Mcp2025_11_25, Target::Mcp2026_07_28] {
        let list = export::export_registry(registry, target);
        let entry = list.tool(name).expect("exported");
        let schema = json::to_serde(entry.get("outputSchema").expect("an outputSchema"));
        let structured = json::to_serde(&export::mcp_structured_content(output, value, target));
        let e = errors(&schema, &structured);
        assert!(
            e.is_empty(),
            "{name} ({target:?}): structuredContent {structured} fails outputSchema: {e:?}"
        );
    }
    as_serde
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_outcome_of_every_reference_tool_passes_its_published_output_schema() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("notes.txt"), "alpha\nbeta\ngamma\n").unwrap();
    let host = Host::new(root).unwrap();
    let registry = host.registry();
    let call = |name: &'static str, args: serde_json::Value| {
        let host = &host;
        async move {
            let r = host.call("c", name, &args.to_string()).await;
            (name, r)
        }
    };

    let (n, r) = call("read", serde_json::json!({"file_path": "notes.txt"})).await;
    check(registry, n, &r);

    // A new file: no previous content (serde would write `"before": null`).
    let (n, r) = call(
        "write",
        serde_json::json!({"file_path": "new/fresh.txt", "content": "one\n"}),
    )
    .await;
    let v = check(registry, n, &r);
    assert_eq!(v["operation"], "create");
    assert!(v.get("before").is_none(), "{v}");
    let (n, r) = call(
        "write",
        serde_json::json!({"file_path": "new/fresh.txt", "content": "two\n"}),
    )
    .await;
    let v = check(registry, n, &r);
    assert_eq!(v["before"], "one\n");

    let (n, r) = call(
        "edit",
        serde_json::json!({"file_path": "notes.txt", "old_string": "beta", "new_string": "BETA"}),
    )
    .await;
    check(registry, n, &r);

    let (n, r) = call("grep", serde_json::json!({"pattern": "gam+a"})).await;
    let v = check(registry, n, &r);
    assert!(!v["matches"].as_array().unwrap().is_empty(), "{v}");
    let (n, r) = call("grep", serde_json::json!({"pattern": "no such text here"})).await;
    check(registry, n, &r);
    let (n, r) = call("glob", serde_json::json!({"pattern": "**/*.txt"})).await;
    check(registry, n, &r);

    // Foreground bash: exit 0 (no signal), exit 3, and killed by a signal (no exit code).
    let (n, r) = call(
        "bash",
        serde_json::json!({"command": "echo hi", "description": "Say hi"}),
    )
    .await;
    let v = check(registry, n, &r);
    assert_eq!(v["exitCode"], 0);
    assert!(v.get("signal").is_none(), "{v}");
    let (n, r) = call(
        "bash",
        serde_json::json!({"command": "echo oops >&2; exit 3", "description": "Fail"}),
    )
    .await;
    assert_eq!(check(registry, n, &r)["exitCode"], 3);
    let (n, r) = call(
        "bash",
        serde_json::json!({"command": "kill -KILL $$", "description": "Kill the shell"}),
    )
    .await;
    let v = check(registry, n, &r);
    assert!(v.get("exitCode").is_none(), "{v}");
    assert!(v.get("signal").is_some(), "{v}");

    // Background bash and the job tools.
    let (n, r) = call(
        "bash",
        serde_json::json!({"command": "echo started; sleep 30", "description": "Wait", "run_in_background": true}),
    )
    .await;
    let v = check(registry, n, &r);
    let running = v["jobId"].as_str().expect("a job id").to_string();
    let (n, r) = call("job_output", serde_json::json!({"job_id": running})).await;
    check(registry, n, &r);
    let (n, r) = call("job_list", serde_json::json!({})).await;
    check(registry, n, &r);
    let (n, r) = call("job_kill", serde_json::json!({"job_id": running})).await;
    check(registry, n, &r);
    let (n, r) = call(
        "job_output",
        serde_json::json!({"job_id": running, "wait": true, "timeout_ms": 20000}),
    )
    .await;
    check(registry, n, &r);

    let (n, r) = call(
        "bash",
        serde_json::json!({"command": "echo done", "description": "Quick", "run_in_background": true}),
    )
    .await;
    let quick = check(registry, n, &r)["jobId"]
        .as_str()
        .expect("a job id")
        .to_string();
    let (n, r) = call(
        "job_output",
        serde_json::json!({"job_id": quick, "wait": true, "timeout_ms": 20000}),
    )
    .await;
    check(registry, n, &r);
    let (n, r) = call("job_kill", serde_json::json!({"job_id": quick})).await;
    let v = check(registry, n, &r);
    assert_eq!(v["outcome"], "already-finished");
    let (n, r) = call("job_list", serde_json::json!({})).await;
    check(registry, n, &r);

    host.shutdown().await;
}
