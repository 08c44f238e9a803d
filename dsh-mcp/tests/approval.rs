//! `ask` over MCP, driven by rmcp's client (which implements the client side of
//! elicitation and of `InputRequiredResult`): a session's call that pre-execute policy
//! asks about becomes an `elicitation/create` request to the client (2025-11-25) or an
//! `InputRequiredResult` whose retry resumes the call (2026-07-28), over stdio-style byte
//! streams and over Streamable HTTP; accept runs the call, decline and cancel fail it with
//! their codes, a client without the capability gets the no-handler denial saying it
//! cannot ask, an in-process approval handler answers first, and tampered, rebound,
//! replayed and expired states are refused. (A code-mode program's tool call waiting for
//! approval is tested through the real binary, in `dsh-tools/tests/cli/mcp_ask.rs`.)

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use dsh_mcp::{HttpOptions, McpServer, serve_http};
use dsh_runtime::hooks::{Approval, PreDecision, observer_fn, pre_execute_fn};
use dsh_runtime::{Registry, ToolError, tool};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, Implementation,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::{ClientHandler, ErrorData as McpError, RoleClient};
use serde_json::{Value, json};

static RUNS: AtomicUsize = AtomicUsize::new(0);

/// Record one run (the side effect the tests look for) and echo the note.
#[tool]
async fn touch(
    /// What to echo.
    note: String,
) -> Result<String, ToolError> {
    RUNS.fetch_add(1, Ordering::SeqCst);
    Ok(format!("touched: {note}"))
}

/// Tests share `RUNS`: each takes the lock for its whole run.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// What the client's user answers.
#[derive(Clone, Copy, Debug)]
enum Answer {
    Approve,
    AcceptNo,
    Decline,
    Cancel,
}

/// A client that declares the elicitation capability (or not) and answers every
/// elicitation with `answer`, recording the requests.
#[derive(Clone)]
struct User {
    capable: bool,
    answer: Answer,
    asked: Arc<Mutex<Vec<Value>>>,
}

impl ClientHandler for User {
    fn get_info(&self) -> ClientConfig {
        let capabilities = if self.capable {
            ClientCapabilities::builder().enable_elicitation().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(capabilities, Implementation::new("approval-test", "0"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, McpError> {
        // The request's params, and (under `requestMeta`) the `_meta` rmcp read from them.
        let mut recorded = serde_json::to_value(&request).unwrap();
        recorded["requestMeta"] = serde_json::to_value(&context.meta).unwrap();
        self.asked.lock().unwrap().push(recorded);
        Ok(match self.answer {
            Answer::Approve => {
                ElicitResult::new(ElicitationAction::Accept).with_content(json!({"approve": true}))
            }
            Answer::AcceptNo => {
                ElicitResult::new(ElicitationAction::Accept).with_content(json!({"approve": false}))
            }
            Answer::Decline => ElicitResult::new(ElicitationAction::Decline),
            Answer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        })
    }
}

struct Fixture {
    server: McpServer,
    /// The codes of the final results, as the registry's observers see them.
    codes: Arc<Mutex<Vec<Option<String>>>>,
    _regs: Vec<dsh_runtime::RegistrationHandle>,
}

/// A registry whose `touch` calls ask for approval, with the given reason.
fn fixture() -> Fixture {
    let registry = Registry::new();
    let codes: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
    let seen = codes.clone();
    let regs = vec![
        registry.register(Touch).unwrap(),
        registry.add_pre_execute(pre_execute_fn(|call| {
            (call.name() == "touch").then(|| PreDecision::ask("touch changes the world"))
        })),
        registry.add_observer(observer_fn(move |_call, result| {
            seen.lock()
                .unwrap()
                .push(result.code_str().map(str::to_string));
        })),
    ];
    Fixture {
        server: McpServer::new(registry),
        codes,
        _regs: regs,
    }
}

fn touch_call(note: &str) -> CallToolRequestParams {
    let Value::Object(args) = json!({"note": note}) else {
        unreachable!()
    };
    CallToolRequestParams::new("touch").with_arguments(args)
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// How the client reaches the server: an in-memory byte stream (the stdio code path) or
/// Streamable HTTP on a loopback port.
#[derive(Clone, Copy, Debug)]
enum Wire {
    Stdio,
    Http,
}

const WIRES: [Wire; 2] = [Wire::Stdio, Wire::Http];

/// The protocol revision the client speaks.
#[derive(Clone, Copy, Debug)]
enum Revision {
    /// 2025-11-25: `initialize`, elicitation requests.
    Initialize,
    /// 2026-07-28: `server/discover`, `InputRequiredResult` and `requestState`.
    Discover,
}

/// A connected client (and the HTTP server it talks to, if any).
struct Conn {
    client: RunningService<RoleClient, User>,
    http: Option<dsh_mcp::HttpServer>,
}

impl Conn {
    async fn close(self) {
        self.client.cancel().await.unwrap();
        if let Some(http) = self.http {
            http.shutdown().await.unwrap();
        }
    }
}

/// A user answering `answer`, declaring the elicitation capability or not, and the
/// requests it will record.
fn user_with(capable: bool, answer: Answer) -> (User, Arc<Mutex<Vec<Value>>>) {
    let asked: Arc<Mutex<Vec<Value>>> = Arc::default();
    (
        User {
            capable,
            answer,
            asked: asked.clone(),
        },
        asked,
    )
}

/// A capable user answering `answer`.
fn user(answer: Answer) -> (User, Arc<Mutex<Vec<Value>>>) {
    user_with(true, answer)
}

/// Connect `user` to `server` over `wire`, speaking `revision`.
async fn connect(server: &McpServer, user: User, wire: Wire, revision: Revision) -> Conn {
    use rmcp::model::ProtocolVersion;
    use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
    use rmcp::transport::StreamableHttpClientTransport;
    let lifecycle = match revision {
        Revision::Initialize => ClientLifecycleMode::Initialize,
        Revision::Discover => ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    };
    match wire {
        Wire::Stdio => {
            let (client_io, server_io) = tokio::io::duplex(1 << 16);
            let server = server.clone();
            tokio::spawn(async move {
                server.serve(server_io).await.expect("server handshake");
            });
            let client = user
                .serve_with_lifecycle(client_io, lifecycle)
                .await
                .expect("client handshake");
            Conn { client, http: None }
        }
        Wire::Http => {
            let http = serve_http(server, HttpOptions::default()).await.unwrap();
            let transport = StreamableHttpClientTransport::from_uri(http.url());
            let client = user
                .serve_with_lifecycle(transport, lifecycle)
                .await
                .expect("client handshake");
            Conn {
                client,
                http: Some(http),
            }
        }
    }
}

/// One call of `touch` over `wire` with the user answering `answer`: the result, how
/// many times the tool ran, the elicitation requests, and the observed code.
async fn ask_once(
    capable: bool,
    answer: Answer,
    wire: Wire,
) -> (CallToolResult, usize, Vec<Value>, Option<String>) {
    let fixture = fixture();
    let (user, asked) = user_with(capable, answer);
    let conn = connect(&fixture.server, user, wire, Revision::Initialize).await;
    let before = RUNS.load(Ordering::SeqCst);
    let result = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        conn.client.call_tool(touch_call("hello")),
    )
    .await
    .expect("call answered in time")
    .expect("call result");
    let runs = RUNS.load(Ordering::SeqCst) - before;
    conn.close().await;
    let asked = asked.lock().unwrap().clone();
    let code = fixture.codes.lock().unwrap().last().cloned().flatten();
    (result, runs, asked, code)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accepted_approval_runs_the_call() {
    let _serial = SERIAL.lock().await;
    for wire in WIRES {
        let (result, runs, asked, code) = ask_once(true, Answer::Approve, wire).await;
        assert_eq!(result.is_error, Some(false), "{wire:?}: {}", text(&result));
        assert_eq!(
            result.structured_content,
            Some(json!({"result": "touched: hello"})),
            "{wire:?}"
        );
        assert_eq!(runs, 1, "{wire:?}: the tool ran once");
        assert_eq!(code, None, "{wire:?}");
        // One form with one required boolean, naming the tool, the call and the reason.
        assert_eq!(asked.len(), 1, "{wire:?}");
        let request = &asked[0];
        assert_eq!(request["mode"], "form");
        assert_eq!(
            request["message"],
            "Allow tool \"touch\" to run?\nCall: touch {\"note\":\"hello\"}\nReason: touch changes the world"
        );
        // No progress token: the server asks for no progress on its question (rmcp
        // would give every request it sends one from its own counter).
        assert!(request.get("_meta").is_none(), "{wire:?}: {request}");
        assert!(
            request["requestMeta"].get("progressToken").is_none(),
            "{wire:?}: {request}"
        );
        let schema = &request["requestedSchema"];
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["properties"]["approve"]["type"], "boolean");
        assert_eq!(schema["required"], json!(["approve"]));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declined_approval_is_rejected_and_the_call_does_not_run() {
    let _serial = SERIAL.lock().await;
    for wire in WIRES {
        for answer in [Answer::Decline, Answer::AcceptNo] {
            let (result, runs, asked, code) = ask_once(true, answer, wire).await;
            let what = format!("{wire:?}/{answer:?}");
            assert_eq!(result.is_error, Some(true), "{what}");
            assert_eq!(runs, 0, "{what}: the tool did not run");
            assert_eq!(asked.len(), 1, "{what}");
            assert_eq!(code.as_deref(), Some("APPROVAL_REJECTED"), "{what}");
            assert_eq!(
                text(&result),
                "Error: the user rejected tool \"touch\"",
                "{what}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_approval_is_approval_cancelled() {
    let _serial = SERIAL.lock().await;
    for wire in WIRES {
        let (result, runs, asked, code) = ask_once(true, Answer::Cancel, wire).await;
        assert_eq!(result.is_error, Some(true), "{wire:?}");
        assert_eq!(runs, 0, "{wire:?}");
        assert_eq!(asked.len(), 1, "{wire:?}");
        assert_eq!(code.as_deref(), Some("APPROVAL_CANCELLED"), "{wire:?}");
        assert_eq!(
            text(&result),
            "Error: approval for tool \"touch\" was cancelled",
            "{wire:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_elicitation_gets_the_no_handler_denial() {
    let _serial = SERIAL.lock().await;
    for wire in WIRES {
        let (result, runs, asked, code) = ask_once(false, Answer::Approve, wire).await;
        assert_eq!(result.is_error, Some(true), "{wire:?}");
        assert_eq!(runs, 0, "{wire:?}");
        assert!(asked.is_empty(), "{wire:?}: never asked: {asked:?}");
        assert_eq!(code.as_deref(), Some("POLICY_DENIED"), "{wire:?}");
        assert_eq!(
            text(&result),
            "Error: touch changes the world (the MCP client cannot ask its user for approval: \
             it did not declare the elicitation capability)",
            "{wire:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_in_process_handler_answers_before_the_client() {
    let _serial = SERIAL.lock().await;
    let fixture = fixture();
    let _handler = fixture
        .server
        .registry()
        .set_approval_handler(dsh_runtime::hooks::approval_fn(|_| Approval::Rejected));
    let (user, asked) = user(Answer::Approve);
    let conn = connect(&fixture.server, user, Wire::Stdio, Revision::Initialize).await;
    let result = conn.client.call_tool(touch_call("x")).await.unwrap();
    assert_eq!(result.is_error, Some(true));
    assert!(asked.lock().unwrap().is_empty(), "the client was not asked");
    assert_eq!(
        fixture
            .codes
            .lock()
            .unwrap()
            .last()
            .cloned()
            .flatten()
            .as_deref(),
        Some("APPROVAL_REJECTED")
    );

    // A handler that has no channel leaves the question to the client.
    let _unavailable = fixture
        .server
        .registry()
        .set_approval_handler(dsh_runtime::hooks::approval_fn(|_| Approval::Unavailable));
    let before = RUNS.load(Ordering::SeqCst);
    let result = conn.client.call_tool(touch_call("y")).await.unwrap();
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    assert_eq!(RUNS.load(Ordering::SeqCst) - before, 1);
    assert_eq!(asked.lock().unwrap().len(), 1);
    conn.close().await;
}

// ---------------------------------------------------------------------------------------
// Protocol 2026-07-28: `InputRequiredResult` and `requestState`.

/// The state and the approving answer of a first round.
async fn first_round(
    client: &RunningService<RoleClient, User>,
    note: &str,
) -> (String, rmcp::model::InputResponses) {
    let response = client
        .peer()
        .call_tool_once(touch_call(note))
        .await
        .unwrap();
    let rmcp::model::CallToolResponse::InputRequired(input) = response else {
        panic!("expected an InputRequiredResult, got {response:?}");
    };
    let requests = input.input_requests.expect("input requests");
    let form = serde_json::to_value(&requests["approval"]).unwrap();
    assert_eq!(form["method"], "elicitation/create");
    assert_eq!(
        form["params"]["message"],
        format!(
            "Allow tool \"touch\" to run?\nCall: touch {{\"note\":\"{note}\"}}\nReason: touch changes the world"
        )
    );
    let mut answers = rmcp::model::InputResponses::new();
    answers.insert(
        "approval".to_string(),
        json!({"action": "accept", "content": {"approve": true}}),
    );
    (input.request_state.expect("a request state"), answers)
}

async fn retry(
    client: &RunningService<RoleClient, User>,
    note: &str,
    state: &str,
    answers: &rmcp::model::InputResponses,
) -> Result<CallToolResult, String> {
    let params = touch_call(note)
        .with_request_state(state)
        .with_input_responses(answers.clone());
    match client.peer().call_tool_once(params).await {
        Ok(rmcp::model::CallToolResponse::Complete(result)) => Ok(result),
        Ok(other) => panic!("unexpected response {other:?}"),
        Err(e) => Err(e.to_string()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_2026_the_call_resumes_with_the_answer_without_running_policy_again() {
    let _serial = SERIAL.lock().await;
    let registry = Registry::new();
    let asks = Arc::new(AtomicUsize::new(0));
    let seen = asks.clone();
    let _regs = [
        registry.register(Touch).unwrap(),
        registry.add_pre_execute(pre_execute_fn(move |call| {
            (call.name() == "touch").then(|| {
                seen.fetch_add(1, Ordering::SeqCst);
                PreDecision::ask("touch changes the world")
            })
        })),
    ];
    let server = McpServer::new(registry);
    for (answer, ran, error) in [
        (Answer::Approve, 1, None),
        (
            Answer::Decline,
            0,
            Some("Error: the user rejected tool \"touch\""),
        ),
        (
            Answer::Cancel,
            0,
            Some("Error: approval for tool \"touch\" was cancelled"),
        ),
    ] {
        for wire in WIRES {
            let (user, asked) = user(answer);
            let conn = connect(&server, user, wire, Revision::Discover).await;
            let client = &conn.client;
            let before = (RUNS.load(Ordering::SeqCst), asks.load(Ordering::SeqCst));
            // rmcp's client drives the rounds: its handler answers the input request.
            let result = tokio::time::timeout(
                std::time::Duration::from_secs(20),
                client.call_tool(touch_call("mrtr")),
            )
            .await
            .expect("in time")
            .expect("a result");
            let what = format!("{wire:?}/{answer:?}");
            assert_eq!(RUNS.load(Ordering::SeqCst) - before.0, ran, "{what}");
            assert_eq!(
                asks.load(Ordering::SeqCst) - before.1,
                1,
                "{what}: policy ran once"
            );
            assert_eq!(asked.lock().unwrap().len(), 1, "{what}");
            match error {
                None => assert_eq!(
                    result.structured_content,
                    Some(json!({"result": "touched: mrtr"})),
                    "{what}"
                ),
                Some(text_) => {
                    assert_eq!(result.is_error, Some(true), "{what}");
                    assert_eq!(text(&result), text_, "{what}");
                }
            }
            conn.close().await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_2026_tampered_rebound_foreign_and_replayed_states_are_refused() {
    let _serial = SERIAL.lock().await;
    for wire in WIRES {
        states_are_refused(wire).await;
    }
}

async fn states_are_refused(wire: Wire) {
    let fixture = fixture();
    let (a, _) = user(Answer::Approve);
    let conn = connect(&fixture.server, a, wire, Revision::Discover).await;
    let client = &conn.client;
    let (state, answers) = first_round(client, "once").await;
    let before = RUNS.load(Ordering::SeqCst);

    // Altered: one character inside the sealed text changed (not the last one, whose
    // low bits may be padding).
    let mut tampered = state.clone().into_bytes();
    let at = (tampered.len() / 2..tampered.len() - 1)
        .find(|&i| tampered[i].is_ascii_alphanumeric())
        .expect("an alphanumeric character in the state");
    tampered[at] = if tampered[at] == b'A' { b'Q' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    let err = retry(client, "once", &tampered, &answers)
        .await
        .unwrap_err();
    assert!(
        err.contains("tools/call \"touch\": requestState refused: request state"),
        "{wire:?}: {err}"
    );
    // Other arguments than the call that received it.
    let err = retry(client, "twice", &state, &answers).await.unwrap_err();
    assert!(
        err.contains("failed integrity verification"),
        "{wire:?}: {err}"
    );
    // Another session (a second connection to the same server). Over HTTP this
    // revision is served without sessions: there a state is bound to the credentials
    // of the request that received it, and other credentials cannot redeem it.
    let other = match wire {
        Wire::Stdio => {
            let (b, _) = user(Answer::Approve);
            let other = connect(&fixture.server, b, wire, Revision::Discover).await;
            let err = retry(&other.client, "once", &state, &answers)
                .await
                .unwrap_err();
            assert!(err.contains("failed integrity verification"), "{err}");
            Some(other)
        }
        Wire::Http => {
            use rmcp::model::ProtocolVersion;
            use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
            use rmcp::transport::StreamableHttpClientTransport;
            use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
            let url = conn.http.as_ref().expect("an HTTP server").url();
            let config = StreamableHttpClientTransportConfig::with_uri(url).auth_header("mallory");
            let (b, _) = user(Answer::Approve);
            let client = b
                .serve_with_lifecycle(
                    StreamableHttpClientTransport::from_config(config),
                    ClientLifecycleMode::Discover {
                        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                    },
                )
                .await
                .expect("client handshake");
            let err = retry(&client, "once", &state, &answers).await.unwrap_err();
            assert!(err.contains("failed integrity verification"), "{err}");
            Some(Conn { client, http: None })
        }
    };
    assert_eq!(RUNS.load(Ordering::SeqCst), before, "{wire:?}: nothing ran");

    // The genuine retry resumes the call, once.
    let result = retry(client, "once", &state, &answers).await.unwrap();
    assert_eq!(
        result.structured_content,
        Some(json!({"result": "touched: once"})),
        "{wire:?}"
    );
    assert_eq!(RUNS.load(Ordering::SeqCst) - before, 1, "{wire:?}");
    let err = retry(client, "once", &state, &answers).await.unwrap_err();
    assert!(
        err.contains("requestState refused: it was already used, or its call has ended"),
        "{wire:?}: {err}"
    );
    assert_eq!(
        RUNS.load(Ordering::SeqCst) - before,
        1,
        "{wire:?}: a replay runs nothing"
    );
    if let Some(other) = other {
        other.close().await;
    }
    conn.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_2026_an_expired_state_is_refused_and_its_call_cancelled() {
    let _serial = SERIAL.lock().await;
    let fixture = fixture();
    let server = fixture
        .server
        .clone()
        .with_approval_ttl(std::time::Duration::from_millis(300));
    let (a, _) = user(Answer::Approve);
    let conn = connect(&server, a, Wire::Stdio, Revision::Discover).await;
    let client = &conn.client;
    let (state, answers) = first_round(client, "late").await;
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    // The suspended call ends as cancelled once the TTL is over.
    while fixture.codes.lock().unwrap().is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the call did not end"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(
        fixture
            .codes
            .lock()
            .unwrap()
            .last()
            .cloned()
            .flatten()
            .as_deref(),
        Some("APPROVAL_CANCELLED")
    );
    let err = retry(client, "late", &state, &answers).await.unwrap_err();
    assert!(err.contains("request state has expired"), "{err}");
    conn.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_2026_a_client_without_elicitation_gets_the_no_handler_denial() {
    let _serial = SERIAL.lock().await;
    for wire in WIRES {
        let fixture = fixture();
        let (u, asked) = user_with(false, Answer::Approve);
        let conn = connect(&fixture.server, u, wire, Revision::Discover).await;
        let response = conn
            .client
            .peer()
            .call_tool_once(touch_call("no"))
            .await
            .unwrap();
        let rmcp::model::CallToolResponse::Complete(result) = response else {
            panic!("{wire:?}: expected a final result, got {response:?}");
        };
        assert_eq!(
            text(&result),
            "Error: touch changes the world (the MCP client cannot ask its user for approval: \
             it did not declare the elicitation capability)",
            "{wire:?}"
        );
        assert!(asked.lock().unwrap().is_empty(), "{wire:?}");
        conn.close().await;
    }
}
