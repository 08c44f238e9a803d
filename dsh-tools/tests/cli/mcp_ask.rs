//! `dsh-tools mcp --ask bash,write` over stdio with rmcp's client answering the approval
//! forms: a listed tool's call runs only on a yes (its side effect on disk shows whether it
//! ran), a tool not listed is never asked about, and an empty name is refused.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, Implementation,
};
use rmcp::service::RequestContext;
use rmcp::{ClientHandler, ErrorData as McpError, RoleClient, ServiceExt};
use serde_json::{Value, json};

const DSH_TOOLS: &str = env!("CARGO_BIN_EXE_dsh-tools");

/// A user who approves a form whose message mentions `approve_if`, and declines others;
/// the messages are recorded.
#[derive(Clone)]
struct User {
    approve_if: &'static str,
    messages: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for User {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_elicitation().build(),
            Implementation::new("ask-test", "0"),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, McpError> {
        let ElicitRequestParams::FormElicitationParams { message, .. } = request else {
            return Ok(ElicitResult::new(ElicitationAction::Cancel));
        };
        let yes = message.contains(self.approve_if);
        self.messages.lock().unwrap().push(message);
        Ok(if yes {
            ElicitResult::new(ElicitationAction::Accept).with_content(json!({"approve": true}))
        } else {
            ElicitResult::new(ElicitationAction::Decline)
        })
    }
}

fn call(name: &str, args: Value) -> CallToolRequestParams {
    let Value::Object(args) = args else {
        panic!("object")
    };
    CallToolRequestParams::new(name.to_string()).with_arguments(args)
}

fn text_of(result: &rmcp::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_flag_puts_listed_tools_to_the_clients_user() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("notes.txt"), "alpha\n").unwrap();
    let mut child = tokio::process::Command::new(DSH_TOOLS)
        .arg("--root")
        .arg(root.path())
        .args(["mcp", "--ask", "bash,write"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let io = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let messages: Arc<Mutex<Vec<String>>> = Arc::default();
    let user = User {
        approve_if: "touch approved.txt",
        messages: messages.clone(),
    };
    let client = tokio::time::timeout(Duration::from_secs(20), user.serve(io))
        .await
        .expect("handshake in time")
        .expect("handshake");
    let timed = |f| tokio::time::timeout(Duration::from_secs(20), f);

    // Approved: the command ran.
    let r = timed(client.call_tool(call(
        "bash",
        json!({"command": "touch approved.txt", "description": "create a file"}),
    )))
    .await
    .unwrap()
    .unwrap();
    assert_eq!(r.is_error, Some(false), "{}", text_of(&r));
    assert!(root.path().join("approved.txt").exists(), "bash ran");

    // Declined: the command did not run.
    let r = timed(client.call_tool(call(
        "bash",
        json!({"command": "touch declined.txt", "description": "create a file"}),
    )))
    .await
    .unwrap()
    .unwrap();
    assert_eq!(r.is_error, Some(true));
    assert_eq!(text_of(&r), "Error: the user rejected tool \"bash\"");
    assert!(
        !root.path().join("declined.txt").exists(),
        "bash did not run"
    );

    let r = timed(client.call_tool(call(
        "write",
        json!({"file_path": "new.txt", "content": "x"}),
    )))
    .await
    .unwrap()
    .unwrap();
    assert_eq!(text_of(&r), "Error: the user rejected tool \"write\"");
    assert!(!root.path().join("new.txt").exists(), "write did not run");

    // Not listed: never asked.
    let r = timed(client.call_tool(call("read", json!({"file_path": "notes.txt"}))))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.is_error, Some(false), "{}", text_of(&r));

    let messages = messages.lock().unwrap().clone();
    assert_eq!(messages.len(), 3, "{messages:?}");
    let reason =
        "Reason: dsh-tools mcp --ask lists tool \"bash\": each call needs the user's approval";
    assert_eq!(
        messages[0],
        format!("Allow tool \"bash\" to run?\nCall: touch approved.txt\n{reason}")
    );
    assert!(
        messages[2].starts_with("Allow tool \"write\" to run?\nCall: "),
        "{}",
        messages[2]
    );

    client.cancel().await.unwrap();
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("server exits after the client")
        .unwrap();
    assert!(status.success(), "{status}");
}

#[test]
fn ask_flag_refuses_an_empty_name() {
    let out = std::process::Command::new(DSH_TOOLS)
        .args(["mcp", "--ask", "bash,,write"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--ask bash,,write: an empty tool name"),
        "{stderr}"
    );
}
