//! `dsh-tools mcp --ask bash,write` over stdio with rmcp's client answering the approval
//! forms: a listed tool's call runs only on a yes (its side effect on disk shows whether it
//! ran), a tool not listed is never asked about, and an empty name is refused. With
//! `--code-mode code`, a program's tool call waits for the answer, and the question names
//! the `run_code` call too: over stdio and Streamable HTTP, with `initialize`
//! (elicitation) and with `server/discover` (`InputRequiredResult`, several rounds for a
//! program that asks twice; over HTTP in the server's stateless context).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, Implementation,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::{ClientHandler, ErrorData as McpError, RoleClient, ServiceExt};
use serde_json::{Value, json};

use crate::process::{self, DSH_TOOLS};

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
    let (mut child, io) = process::stdio(root.path(), &["--ask", "bash,write"]);
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
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--ask bash,,write: an empty tool name"),
        "{stderr}"
    );
}

/// `dsh-tools mcp` with these extra arguments and `DSH_MCP_STATE_KEYS` (or without it):
/// its exit status and stderr, before any client connects.
fn mcp_start(args: &[&str], env: Option<&str>) -> (Option<i32>, String) {
    let mut command = std::process::Command::new(DSH_TOOLS);
    command
        .arg("mcp")
        .args(args)
        .env_remove("DSH_MCP_STATE_KEYS")
        .stdin(std::process::Stdio::null());
    if let Some(value) = env {
        command.env("DSH_MCP_STATE_KEYS", value);
    }
    let out = command.output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn malformed_or_short_state_keys_stop_the_server_at_start() {
    let dir = std::env::temp_dir().join(format!("dsh-state-keys-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let short = dir.join("short");
    std::fs::write(&short, "# too short\n00112233\n").unwrap();
    let (code, stderr) = mcp_start(&["--state-key-file", short.to_str().unwrap()], None);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "error: --state-key-file {}: state key 1: 4 bytes, at least 32 needed",
            short.display()
        )),
        "{stderr}"
    );
    let (code, stderr) = mcp_start(&[], Some("not-hex!"));
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "error: DSH_MCP_STATE_KEYS: state key 1: not an even number of hexadecimal digits"
        ),
        "{stderr}"
    );
    let missing = dir.join("missing");
    let (code, stderr) = mcp_start(&["--state-key-file", missing.to_str().unwrap()], None);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("--state-key-file"), "{stderr}");
    // Well-formed keys start a server, which ends when its (empty) input does.
    let good = dir.join("good");
    std::fs::write(&good, format!("{}\n{}\n", "ab".repeat(32), "cd".repeat(40))).unwrap();
    let (_, stderr) = mcp_start(&["--state-key-file", good.to_str().unwrap()], None);
    assert!(!stderr.contains("state key"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------------
// Code mode: a program's tool call waits for the client's answer.

/// How the client reaches the server.
#[derive(Clone, Copy, Debug)]
enum Wire {
    Stdio,
    Http,
}

/// The protocol revision the client speaks: 2025-11-25 (`initialize`, elicitation) or
/// 2026-07-28 (`server/discover`, `InputRequiredResult` that rmcp's client answers and
/// retries).
#[derive(Clone, Copy, Debug)]
enum Revision {
    Initialize,
    Discover,
}

async fn connect<C: ClientHandler>(
    root: &std::path::Path,
    args: &[&str],
    user: C,
    wire: Wire,
    revision: Revision,
) -> (RunningService<RoleClient, C>, tokio::process::Child) {
    use rmcp::model::ProtocolVersion;
    use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
    use rmcp::transport::StreamableHttpClientTransport;
    let lifecycle = match revision {
        Revision::Initialize => ClientLifecycleMode::Initialize,
        Revision::Discover => ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    };
    let handshake = Duration::from_secs(20);
    match wire {
        Wire::Stdio => {
            let (child, io) = process::stdio(root, args);
            let client = tokio::time::timeout(handshake, user.serve_with_lifecycle(io, lifecycle))
                .await
                .expect("handshake in time")
                .expect("handshake");
            (client, child)
        }
        Wire::Http => {
            let (child, url) = process::http(root, args).await;
            let transport = StreamableHttpClientTransport::from_uri(url);
            let client =
                tokio::time::timeout(handshake, user.serve_with_lifecycle(transport, lifecycle))
                    .await
                    .expect("handshake in time")
                    .expect("handshake");
            (client, child)
        }
    }
}

fn run_code(program: &str) -> CallToolRequestParams {
    call(
        "run_code",
        json!({"code": program, "description": "Create a file"}),
    )
}

const TOUCH_APPROVED: &str = "await tools.bash({command: \"touch approved.txt\", description: \"create a file\"});\n\
     return \"ran\";";
/// Two questions in one program: yes, then no.
const TOUCH_TWICE: &str = "await tools.bash({command: \"touch approved-too.txt\", description: \"create a file\"});\n\
     try {\n\
       await tools.bash({command: \"touch declined.txt\", description: \"create a file\"});\n\
       return \"ran\";\n\
     } catch (e) { return (e as ToolCallError).message; }";

async fn code_mode_sub_call_approval(wire: Wire, revision: Revision) {
    let root = tempfile::tempdir().unwrap();
    let messages: Arc<Mutex<Vec<String>>> = Arc::default();
    let user = User {
        approve_if: "touch approved",
        messages: messages.clone(),
    };
    let (client, mut child) = connect(
        root.path(),
        &["--code-mode", "code", "--ask", "bash"],
        user,
        wire,
        revision,
    )
    .await;
    let what = format!("{wire:?}/{revision:?}");
    let timed = |f| tokio::time::timeout(Duration::from_secs(30), f);

    // Approved: the program waited for the answer, then its call ran.
    let r = timed(client.call_tool(run_code(TOUCH_APPROVED)))
        .await
        .expect("answered in time")
        .expect("a result");
    assert_eq!(r.is_error, Some(false), "{what}: {}", text_of(&r));
    assert_eq!(
        r.structured_content,
        Some(json!({"logs": [], "result": "ran"})),
        "{what}"
    );
    assert!(
        root.path().join("approved.txt").exists(),
        "{what}: bash ran"
    );

    // Two questions in one program (on 2026-07-28, two rounds of the same call): the
    // first approved, the second declined; the program sees the rejection.
    let r = timed(client.call_tool(run_code(TOUCH_TWICE)))
        .await
        .expect("answered in time")
        .expect("a result");
    assert_eq!(
        r.structured_content,
        Some(json!({"logs": [], "result": "the user rejected tool \"bash\""})),
        "{what}: {}",
        text_of(&r)
    );
    assert!(root.path().join("approved-too.txt").exists(), "{what}");
    assert!(
        !root.path().join("declined.txt").exists(),
        "{what}: bash did not run"
    );

    // Each question names the sub-call and the program's call.
    let messages = messages.lock().unwrap().clone();
    assert_eq!(messages.len(), 3, "{what}: {messages:?}");
    let reason =
        "Reason: dsh-tools mcp --ask lists tool \"bash\": each call needs the user's approval";
    let commands = [
        "touch approved.txt",
        "touch approved-too.txt",
        "touch declined.txt",
    ];
    for (message, command) in messages.iter().zip(commands) {
        let (head, rest) = message
            .split_once("\nVia: tool \"run_code\", call \"")
            .unwrap_or_else(|| panic!("{what}: no Via line in {message:?}"));
        assert_eq!(
            head,
            format!("Allow tool \"bash\" to run?\nCall: {command}"),
            "{what}"
        );
        let (id, tail) = rest.split_once("\"\n").expect("the call id, quoted");
        assert!(!id.is_empty(), "{what}: {message:?}");
        assert_eq!(tail, reason, "{what}");
    }

    client.cancel().await.unwrap();
    if matches!(wire, Wire::Http) {
        child.start_kill().unwrap();
    }
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("the server exits")
        .unwrap();
    if matches!(wire, Wire::Stdio) {
        assert!(status.success(), "{what}: {status}");
    }
}

/// A client that declares no elicitation: its user cannot be asked.
#[derive(Clone)]
struct NoUser;

impl ClientHandler for NoUser {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("no-ask-test", "0"),
        )
    }
}

const TOUCH_CAUGHT: &str = "try {\n\
       await tools.bash({command: \"touch unasked.txt\", description: \"create a file\"});\n\
       return \"ran\";\n\
     } catch (e) { return (e as ToolCallError).message; }";

/// A program's sub-call that needs approval, from a client that cannot ask its user:
/// the denial of a call with no approval handler, saying the client cannot ask.
async fn code_mode_sub_call_cannot_ask(wire: Wire, revision: Revision) {
    let root = tempfile::tempdir().unwrap();
    let (client, mut child) = connect(
        root.path(),
        &["--code-mode", "code", "--ask", "bash"],
        NoUser,
        wire,
        revision,
    )
    .await;
    let what = format!("{wire:?}/{revision:?}");
    let r = tokio::time::timeout(
        Duration::from_secs(30),
        client.call_tool(run_code(TOUCH_CAUGHT)),
    )
    .await
    .expect("answered in time")
    .expect("a result");
    let result = r
        .structured_content
        .as_ref()
        .map(|v| v["result"].clone())
        .unwrap_or_default();
    let message = result
        .as_str()
        .unwrap_or_else(|| panic!("{what}: {}", text_of(&r)));
    assert!(
        message.starts_with("dsh-tools mcp --ask lists tool \"bash\""),
        "{what}: the policy's reason first: {message}"
    );
    assert!(
        message.ends_with(
            "(the MCP client cannot ask its user for approval: it did not declare the \
             elicitation capability)"
        ),
        "{what}: {message}"
    );
    assert!(
        !root.path().join("unasked.txt").exists(),
        "{what}: bash did not run"
    );
    client.cancel().await.unwrap();
    if matches!(wire, Wire::Http) {
        child.start_kill().unwrap();
    }
    let _ = tokio::time::timeout(Duration::from_secs(20), child.wait()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_mode_sub_call_of_a_client_that_cannot_ask_says_so_over_stdio() {
    code_mode_sub_call_cannot_ask(Wire::Stdio, Revision::Initialize).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_mode_sub_call_of_a_client_that_cannot_ask_says_so_over_http() {
    code_mode_sub_call_cannot_ask(Wire::Http, Revision::Discover).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_mode_sub_call_waits_for_approval_over_stdio_with_initialize() {
    code_mode_sub_call_approval(Wire::Stdio, Revision::Initialize).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_mode_sub_call_waits_for_approval_over_stdio_with_discover() {
    code_mode_sub_call_approval(Wire::Stdio, Revision::Discover).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_mode_sub_call_waits_for_approval_over_http_with_initialize() {
    code_mode_sub_call_approval(Wire::Http, Revision::Initialize).await;
}

/// 2026-07-28 over HTTP: every request on its own, in the server's stateless context
/// (where `run_code` is offered too); the suspended program resumes on the retry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_mode_sub_call_waits_for_approval_over_http_with_discover() {
    code_mode_sub_call_approval(Wire::Http, Revision::Discover).await;
}

/// A user who never answers: each form waits until the server withdraws it
/// (`notifications/cancelled`), which is noted.
#[derive(Clone, Default)]
struct Silent {
    asked: Arc<std::sync::atomic::AtomicUsize>,
    withdrawn: Arc<std::sync::atomic::AtomicUsize>,
}

impl ClientHandler for Silent {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_elicitation().build(),
            Implementation::new("ask-test", "0"),
        )
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, McpError> {
        use std::sync::atomic::Ordering;
        self.asked.fetch_add(1, Ordering::SeqCst);
        if tokio::time::timeout(Duration::from_secs(20), context.ct.cancelled())
            .await
            .is_ok()
        {
            self.withdrawn.fetch_add(1, Ordering::SeqCst);
        }
        Ok(ElicitResult::new(ElicitationAction::Cancel))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_run_code_while_its_sub_call_waits_ends_the_program() {
    use rmcp::model::{CallToolRequest, CancelledNotificationParam, ClientRequest};
    use std::sync::atomic::Ordering;
    let root = tempfile::tempdir().unwrap();
    let (mut child, io) = process::stdio(root.path(), &["--code-mode", "code", "--ask", "bash"]);
    let user = Silent::default();
    let client = tokio::time::timeout(Duration::from_secs(20), user.clone().serve(io))
        .await
        .expect("handshake in time")
        .expect("handshake");
    let handle = client
        .send_cancellable_request(
            ClientRequest::CallToolRequest(CallToolRequest::new(run_code(
                "await tools.bash({command: \"touch never.txt\", description: \"create a file\"}); return \"ran\";",
            ))),
            rmcp::service::PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while user.asked.load(Ordering::SeqCst) == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the form was never sent"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    client
        .notify_cancelled(CancelledNotificationParam::new(
            Some(handle.id.clone()),
            Some("user abort".into()),
        ))
        .await
        .unwrap();
    // The waiting sub-call gives up: its form is withdrawn, the command never runs.
    while user.withdrawn.load(Ordering::SeqCst) == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the form was not withdrawn"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!root.path().join("never.txt").exists(), "bash did not run");
    // The session goes on: another program runs.
    let r = tokio::time::timeout(
        Duration::from_secs(20),
        client.call_tool(run_code("return 1 + 1;")),
    )
    .await
    .expect("answered in time")
    .expect("a result");
    assert_eq!(r.structured_content, Some(json!({"logs": [], "result": 2})));
    client.cancel().await.unwrap();
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("the server exits")
        .unwrap();
    assert!(status.success(), "{status}");
}
