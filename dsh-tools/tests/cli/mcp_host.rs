//! `dsh-tools mcp` over stdio with rmcp's client: the reference tools, a background job
//! read in a later call, a cancelled foreground command whose process is gone, and the
//! session's jobs killed when the client disconnects, after which the server exits on
//! its own.

use std::path::Path;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CancelledNotificationParam, ClientRequest};
use serde_json::{Value, json};

pub(crate) fn call(name: &str, args: Value) -> CallToolRequestParams {
    let Value::Object(args) = args else {
        panic!("object")
    };
    CallToolRequestParams::new(name.to_string()).with_arguments(args)
}

pub(crate) fn text_of(result: &rmcp::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

pub(crate) fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.split_whitespace().next() == Some("Z")),
    }
}

pub(crate) async fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !f() {
        assert!(tokio::time::Instant::now() < deadline, "timed out: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub(crate) async fn read_pid(file: &Path) -> u32 {
    let mut pid = None;
    wait_until("the pid file", || {
        pid = std::fs::read_to_string(file)
            .ok()
            .and_then(|s| s.trim().parse().ok());
        pid.is_some()
    })
    .await;
    pid.unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_session_with_jobs_and_cancellation() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
    let (mut child, io) = crate::process::stdio(root.path(), &[]);
    let client = ().serve(io).await.unwrap();

    let r = client
        .call_tool(call("read", json!({"file_path": "notes.txt"})))
        .await
        .unwrap();
    assert_eq!(r.structured_content.as_ref().unwrap()["totalLines"], 2);
    assert!(text_of(&r).contains("alpha"));

    // A background job, read in a later call.
    let r = client
        .call_tool(call(
            "bash",
            json!({"command": "echo one; sleep 0.2; echo two", "description": "two lines", "run_in_background": true}),
        ))
        .await
        .unwrap();
    let job = r.structured_content.unwrap()["result"]["jobId"]
        .as_str()
        .unwrap()
        .to_string();
    let r = client
        .call_tool(call("job_output", json!({"job_id": job, "wait": true})))
        .await
        .unwrap();
    let out = r.structured_content.unwrap().to_string();
    assert!(out.contains("one") && out.contains("two"), "{out}");

    // Cancel a long foreground command: the call ends, the process is gone.
    let pid_file = root.path().join("fg.pid");
    let handle = client
        .send_cancellable_request(
            ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(call(
                "bash",
                json!({"command": format!("echo $$ > {}; exec sleep 300", pid_file.display()), "description": "sleep"}),
            ))),
            rmcp::service::PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    let pid = read_pid(&pid_file).await;
    assert!(!gone(pid));
    client
        .notify_cancelled(CancelledNotificationParam::new(
            Some(handle.id.clone()),
            Some("user abort".into()),
        ))
        .await
        .unwrap();
    wait_until("the cancelled sleep exits", || gone(pid)).await;

    // A job still running when the session ends dies with it.
    let bg_file = root.path().join("bg.pid");
    client
        .call_tool(call(
            "bash",
            json!({"command": format!("echo $$ > {}; exec sleep 300", bg_file.display()), "description": "outlive", "run_in_background": true}),
        ))
        .await
        .unwrap();
    let bg = read_pid(&bg_file).await;
    assert!(!gone(bg));
    client.cancel().await.unwrap();
    // The server notices the closed stdin, closes the session and exits by itself.
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("dsh-tools mcp exits when its client leaves")
        .unwrap();
    assert!(status.success(), "{status}");
    wait_until("the background job is killed", || gone(bg)).await;
}
