//! `ask` over MCP, driven by rmcp's client (which implements the client side of
//! elicitation): a session's call that pre-execute policy asks about becomes an
//! `elicitation/create` request to the client, over stdio-style byte streams and over
//! Streamable HTTP; accept runs the call, decline and cancel fail it with their codes, a
//! client without the capability gets the no-handler denial saying it cannot ask, and an
//! in-process approval handler answers first.

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
use rmcp::{ClientHandler, ErrorData as McpError, RoleClient, ServiceExt};
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
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, McpError> {
        self.asked
            .lock()
            .unwrap()
            .push(serde_json::to_value(&request).unwrap());
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
    _regs: Vec<dsh_runtime::Registration>,
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

/// Connect `user` to `server` over an in-memory byte stream (the stdio code path).
async fn connect(server: &McpServer, user: User) -> RunningService<RoleClient, User> {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let server = server.clone();
    tokio::spawn(async move {
        server.serve(server_io).await.expect("server handshake");
    });
    user.serve(client_io).await.expect("client handshake")
}

/// One call of `touch` with the user answering `answer`: the result, how many times the
/// tool ran, the elicitation requests, and the observed code.
async fn ask_once(
    capable: bool,
    answer: Answer,
) -> (CallToolResult, usize, Vec<Value>, Option<String>) {
    let fixture = fixture();
    let asked: Arc<Mutex<Vec<Value>>> = Arc::default();
    let user = User {
        capable,
        answer,
        asked: asked.clone(),
    };
    let client = connect(&fixture.server, user).await;
    let before = RUNS.load(Ordering::SeqCst);
    let result = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        client.call_tool(touch_call("hello")),
    )
    .await
    .expect("call answered in time")
    .expect("call result");
    let runs = RUNS.load(Ordering::SeqCst) - before;
    client.cancel().await.unwrap();
    let asked = asked.lock().unwrap().clone();
    let code = fixture.codes.lock().unwrap().last().cloned().flatten();
    (result, runs, asked, code)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accepted_approval_runs_the_call() {
    let _serial = SERIAL.lock().await;
    let (result, runs, asked, code) = ask_once(true, Answer::Approve).await;
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    assert_eq!(
        result.structured_content,
        Some(json!({"result": "touched: hello"}))
    );
    assert_eq!(runs, 1, "the tool ran once");
    assert_eq!(code, None);
    // One form with one required boolean, naming the tool, the call and the reason.
    assert_eq!(asked.len(), 1);
    let request = &asked[0];
    assert_eq!(request["mode"], "form");
    assert_eq!(
        request["message"],
        "Allow tool \"touch\" to run?\nCall: touch {\"note\":\"hello\"}\nReason: touch changes the world"
    );
    let schema = &request["requestedSchema"];
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["approve"]["type"], "boolean");
    assert_eq!(schema["required"], json!(["approve"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declined_approval_is_rejected_and_the_call_does_not_run() {
    let _serial = SERIAL.lock().await;
    for answer in [Answer::Decline, Answer::AcceptNo] {
        let (result, runs, asked, code) = ask_once(true, answer).await;
        assert_eq!(result.is_error, Some(true), "{answer:?}");
        assert_eq!(runs, 0, "{answer:?}: the tool did not run");
        assert_eq!(asked.len(), 1, "{answer:?}");
        assert_eq!(code.as_deref(), Some("APPROVAL_REJECTED"), "{answer:?}");
        assert_eq!(
            text(&result),
            "Error: the user rejected tool \"touch\"",
            "{answer:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_approval_is_approval_cancelled() {
    let _serial = SERIAL.lock().await;
    let (result, runs, asked, code) = ask_once(true, Answer::Cancel).await;
    assert_eq!(result.is_error, Some(true));
    assert_eq!(runs, 0);
    assert_eq!(asked.len(), 1);
    assert_eq!(code.as_deref(), Some("APPROVAL_CANCELLED"));
    assert_eq!(
        text(&result),
        "Error: approval for tool \"touch\" was cancelled"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_elicitation_gets_the_no_handler_denial() {
    let _serial = SERIAL.lock().await;
    let (result, runs, asked, code) = ask_once(false, Answer::Approve).await;
    assert_eq!(result.is_error, Some(true));
    assert_eq!(runs, 0);
    assert!(asked.is_empty(), "never asked: {asked:?}");
    assert_eq!(code.as_deref(), Some("POLICY_DENIED"));
    assert_eq!(
        text(&result),
        "Error: touch changes the world (the MCP client cannot ask its user for approval: \
         it did not declare the elicitation capability)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_in_process_handler_answers_before_the_client() {
    let _serial = SERIAL.lock().await;
    let fixture = fixture();
    let _handler = fixture
        .server
        .registry()
        .set_approval_handler(dsh_runtime::hooks::approval_fn(|_| Approval::Rejected));
    let asked: Arc<Mutex<Vec<Value>>> = Arc::default();
    let user = User {
        capable: true,
        answer: Answer::Approve,
        asked: asked.clone(),
    };
    let client = connect(&fixture.server, user).await;
    let result = client.call_tool(touch_call("x")).await.unwrap();
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
    let result = client.call_tool(touch_call("y")).await.unwrap();
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    assert_eq!(RUNS.load(Ordering::SeqCst) - before, 1);
    assert_eq!(asked.lock().unwrap().len(), 1);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_over_streamable_http() {
    use rmcp::transport::StreamableHttpClientTransport;
    let _serial = SERIAL.lock().await;
    let fixture = fixture();
    let http = serve_http(&fixture.server, HttpOptions::default())
        .await
        .unwrap();
    for (answer, runs, code) in [
        (Answer::Approve, 1, None),
        (Answer::Decline, 0, Some("APPROVAL_REJECTED")),
        (Answer::Cancel, 0, Some("APPROVAL_CANCELLED")),
    ] {
        let asked: Arc<Mutex<Vec<Value>>> = Arc::default();
        let user = User {
            capable: true,
            answer,
            asked: asked.clone(),
        };
        let client = user
            .serve(StreamableHttpClientTransport::from_uri(http.url()))
            .await
            .expect("client handshake");
        let before = RUNS.load(Ordering::SeqCst);
        let result = tokio::time::timeout(
            std::time::Duration::from_secs(20),
            client.call_tool(touch_call("over http")),
        )
        .await
        .expect("call answered in time")
        .expect("call result");
        assert_eq!(RUNS.load(Ordering::SeqCst) - before, runs, "{answer:?}");
        assert_eq!(asked.lock().unwrap().len(), 1, "{answer:?}");
        assert_eq!(result.is_error, Some(code.is_some()), "{answer:?}");
        assert_eq!(
            fixture
                .codes
                .lock()
                .unwrap()
                .last()
                .cloned()
                .flatten()
                .as_deref(),
            code,
            "{answer:?}"
        );
        client.cancel().await.unwrap();
    }
    http.shutdown().await.unwrap();
}

// ---------------------------------------------------------------------------------------
// Protocol 2026-07-28: `InputRequiredResult` and `requestState`.

/// Connect `user` to `server` on protocol 2026-07-28 (`server/discover`, per-request
/// metadata carrying the client's capabilities).
async fn connect_2026(server: &McpServer, user: User) -> RunningService<RoleClient, User> {
    use rmcp::model::ProtocolVersion;
    use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let server = server.clone();
    tokio::spawn(async move {
        server.serve(server_io).await.expect("server handshake");
    });
    user.serve_with_lifecycle(
        client_io,
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    )
    .await
    .expect("client discovery")
}

fn user(answer: Answer) -> (User, Arc<Mutex<Vec<Value>>>) {
    let asked: Arc<Mutex<Vec<Value>>> = Arc::default();
    (
        User {
            capable: true,
            answer,
            asked: asked.clone(),
        },
        asked,
    )
}

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
        let (user, asked) = user(answer);
        let client = connect_2026(&server, user).await;
        let before = (RUNS.load(Ordering::SeqCst), asks.load(Ordering::SeqCst));
        // rmcp's client drives the rounds: its handler answers the input request.
        let result = tokio::time::timeout(
            std::time::Duration::from_secs(20),
            client.call_tool(touch_call("mrtr")),
        )
        .await
        .expect("in time")
        .expect("a result");
        assert_eq!(RUNS.load(Ordering::SeqCst) - before.0, ran, "{answer:?}");
        assert_eq!(
            asks.load(Ordering::SeqCst) - before.1,
            1,
            "{answer:?}: policy ran once"
        );
        assert_eq!(asked.lock().unwrap().len(), 1, "{answer:?}");
        match error {
            None => assert_eq!(
                result.structured_content,
                Some(json!({"result": "touched: mrtr"}))
            ),
            Some(text_) => {
                assert_eq!(result.is_error, Some(true));
                assert_eq!(text(&result), text_);
            }
        }
        client.cancel().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_2026_tampered_rebound_foreign_and_replayed_states_are_refused() {
    let _serial = SERIAL.lock().await;
    let fixture = fixture();
    let (a, _) = user(Answer::Approve);
    let client = connect_2026(&fixture.server, a).await;
    let (state, answers) = first_round(&client, "once").await;
    let before = RUNS.load(Ordering::SeqCst);

    // Altered: one character inside the sealed text changed (not the last one, whose
    // low bits may be padding).
    let mut tampered = state.clone().into_bytes();
    let at = (tampered.len() / 2..tampered.len() - 1)
        .find(|&i| tampered[i].is_ascii_alphanumeric())
        .expect("an alphanumeric character in the state");
    tampered[at] = if tampered[at] == b'A' { b'Q' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    let err = retry(&client, "once", &tampered, &answers)
        .await
        .unwrap_err();
    assert!(
        err.contains("tools/call \"touch\": requestState refused: request state"),
        "{err}"
    );
    // Other arguments than the call that received it.
    let err = retry(&client, "twice", &state, &answers).await.unwrap_err();
    assert!(err.contains("failed integrity verification"), "{err}");
    // Another session (a second connection to the same server).
    let (b, _) = user(Answer::Approve);
    let other = connect_2026(&fixture.server, b).await;
    let err = retry(&other, "once", &state, &answers).await.unwrap_err();
    assert!(err.contains("failed integrity verification"), "{err}");
    assert_eq!(RUNS.load(Ordering::SeqCst), before, "nothing ran");

    // The genuine retry resumes the call, once.
    let result = retry(&client, "once", &state, &answers).await.unwrap();
    assert_eq!(
        result.structured_content,
        Some(json!({"result": "touched: once"}))
    );
    assert_eq!(RUNS.load(Ordering::SeqCst) - before, 1);
    let err = retry(&client, "once", &state, &answers).await.unwrap_err();
    assert!(
        err.contains("requestState refused: it was already used, or its call has ended"),
        "{err}"
    );
    assert_eq!(
        RUNS.load(Ordering::SeqCst) - before,
        1,
        "a replay runs nothing"
    );
    other.cancel().await.unwrap();
    client.cancel().await.unwrap();
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
    let client = connect_2026(&server, a).await;
    let (state, answers) = first_round(&client, "late").await;
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
    let err = retry(&client, "late", &state, &answers).await.unwrap_err();
    assert!(err.contains("request state has expired"), "{err}");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_2026_a_client_without_elicitation_gets_the_no_handler_denial() {
    let _serial = SERIAL.lock().await;
    let fixture = fixture();
    let (mut u, asked) = user(Answer::Approve);
    u.capable = false;
    let client = connect_2026(&fixture.server, u).await;
    let response = client
        .peer()
        .call_tool_once(touch_call("no"))
        .await
        .unwrap();
    let rmcp::model::CallToolResponse::Complete(result) = response else {
        panic!("expected a final result, got {response:?}");
    };
    assert_eq!(
        text(&result),
        "Error: touch changes the world (the MCP client cannot ask its user for approval: \
         it did not declare the elicitation capability)"
    );
    assert!(asked.lock().unwrap().is_empty());
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_2026_over_streamable_http_the_retry_resumes_the_call() {
    use rmcp::model::ProtocolVersion;
    use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
    use rmcp::transport::StreamableHttpClientTransport;
    let _serial = SERIAL.lock().await;
    let fixture = fixture();
    let http = serve_http(&fixture.server, HttpOptions::default())
        .await
        .unwrap();
    let (u, asked) = user(Answer::Approve);
    let client = u
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_uri(http.url()),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .expect("client discovery");
    let before = RUNS.load(Ordering::SeqCst);
    let result = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        client.call_tool(touch_call("stateless")),
    )
    .await
    .expect("in time")
    .expect("a result");
    assert_eq!(
        result.structured_content,
        Some(json!({"result": "touched: stateless"})),
        "{}",
        text(&result)
    );
    assert_eq!(RUNS.load(Ordering::SeqCst) - before, 1);
    assert_eq!(asked.lock().unwrap().len(), 1);
    client.cancel().await.unwrap();
    http.shutdown().await.unwrap();
}
