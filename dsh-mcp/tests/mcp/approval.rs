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

use dsh_mcp::McpServer;
use dsh_runtime::hooks::{Approval, PreDecision, observer_fn, pre_execute_fn};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use serde_json::{Value, json};

use crate::common::cases;
use crate::common::tools::Toolset;
use crate::common::user::{Answer, User};
use crate::common::wire::{
    Connected, Revision, Served, Wire, call, connect_url, result_text as text,
};

/// A server whose `touch` calls ask for approval.
struct Approvals {
    server: McpServer,
    /// The codes of the final results, as the registry's observers see them.
    codes: Arc<Mutex<Vec<Option<String>>>>,
    /// `touch`, counting its runs (the side effect the tests look for).
    tools: Toolset,
}

/// A registry whose `touch` calls ask for approval, with the given reason.
fn approvals() -> Approvals {
    let mut tools = Toolset::new().with_touch();
    let codes: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
    let seen = codes.clone();
    let policy = tools.registry.add_pre_execute(pre_execute_fn(|call| {
        (call.name() == "touch").then(|| PreDecision::ask("touch changes the world"))
    }));
    let observer = tools
        .registry
        .add_observer(observer_fn(move |_call, result| {
            seen.lock()
                .unwrap()
                .push(result.code_str().map(str::to_string));
        }));
    tools.hold(policy);
    tools.hold(observer);
    Approvals {
        server: tools.server(),
        codes,
        tools,
    }
}

fn touch_call(note: &str) -> CallToolRequestParams {
    call("touch", json!({"note": note}))
}

/// A connected client, and the server it talks to over its wire.
struct Conn {
    client: Connected,
    served: Served,
}

impl Conn {
    async fn close(self) {
        self.client.close().await;
        self.served.shutdown().await;
    }
}

/// A user answering `answer`, declaring the elicitation capability or not.
fn user_with(capable: bool, answer: Answer) -> User {
    User::new().elicitation(capable).answering(answer)
}

/// A capable user answering `answer`.
fn user(answer: Answer) -> User {
    user_with(true, answer)
}

/// Connect `user` to `server` over `wire`, speaking `revision`.
async fn connect_over(server: &McpServer, user: User, wire: Wire, revision: Revision) -> Conn {
    let served = Served::start(server, wire).await;
    let client = served.connect(user, revision).await;
    Conn { client, served }
}

/// The elicitation requests `conn`'s user was asked.
fn asked(conn: &Conn) -> Vec<Value> {
    conn.client.heard.asked.lock().unwrap().clone()
}

/// One call of `touch` over `wire` with the user answering `answer`: the result, how
/// many times the tool ran, the elicitation requests, and the observed code.
async fn ask_once(
    capable: bool,
    answer: Answer,
    wire: Wire,
) -> (CallToolResult, usize, Vec<Value>, Option<String>) {
    let fixture = approvals();
    let conn = connect_over(
        &fixture.server,
        user_with(capable, answer),
        wire,
        Revision::V2025_11_25,
    )
    .await;
    let before = fixture.tools.touches();
    let result = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        conn.client.call_tool(touch_call("hello")),
    )
    .await
    .expect("call answered in time")
    .expect("call result");
    let runs = fixture.tools.touches() - before;
    let asked = asked(&conn);
    conn.close().await;
    let code = fixture.codes.lock().unwrap().last().cloned().flatten();
    (result, runs, asked, code)
}

cases! {
    accepted_approval_runs_the_call_over_stdio => accepted_approval_runs_the_call(Wire::Stdio);
    accepted_approval_runs_the_call_over_http => accepted_approval_runs_the_call(Wire::Http);
}

async fn accepted_approval_runs_the_call(wire: Wire) {
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

cases! {
    declined_approval_is_rejected_and_the_call_does_not_run_over_stdio =>
        declined_approval_is_rejected_and_the_call_does_not_run(Wire::Stdio);
    declined_approval_is_rejected_and_the_call_does_not_run_over_http =>
        declined_approval_is_rejected_and_the_call_does_not_run(Wire::Http);
}

async fn declined_approval_is_rejected_and_the_call_does_not_run(wire: Wire) {
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

cases! {
    cancelled_approval_is_approval_cancelled_over_stdio =>
        cancelled_approval_is_approval_cancelled(Wire::Stdio);
    cancelled_approval_is_approval_cancelled_over_http =>
        cancelled_approval_is_approval_cancelled(Wire::Http);
}

async fn cancelled_approval_is_approval_cancelled(wire: Wire) {
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

cases! {
    a_client_without_elicitation_gets_the_no_handler_denial_over_stdio =>
        a_client_without_elicitation_gets_the_no_handler_denial(Wire::Stdio);
    a_client_without_elicitation_gets_the_no_handler_denial_over_http =>
        a_client_without_elicitation_gets_the_no_handler_denial(Wire::Http);
}

async fn a_client_without_elicitation_gets_the_no_handler_denial(wire: Wire) {
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_in_process_handler_answers_before_the_client() {
    let fixture = approvals();
    let _handler = fixture
        .server
        .registry()
        .set_approval_handler(dsh_runtime::hooks::approval_fn(|_| Approval::Rejected));
    let conn = connect_over(
        &fixture.server,
        user(Answer::Approve),
        Wire::Stdio,
        Revision::V2025_11_25,
    )
    .await;
    let result = conn.client.call_tool(touch_call("x")).await.unwrap();
    assert_eq!(result.is_error, Some(true));
    assert!(asked(&conn).is_empty(), "the client was not asked");
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
    let before = fixture.tools.touches();
    let result = conn.client.call_tool(touch_call("y")).await.unwrap();
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    assert_eq!(fixture.tools.touches() - before, 1);
    assert_eq!(asked(&conn).len(), 1);
    conn.close().await;
}

// ---------------------------------------------------------------------------------------
// Protocol 2026-07-28: `InputRequiredResult` and `requestState`.

/// The state and the approving answer of a first round.
async fn first_round(client: &Connected, note: &str) -> (String, rmcp::model::InputResponses) {
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
    client: &Connected,
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

cases! {
    on_2026_the_call_resumes_with_the_answer_without_running_policy_again_over_stdio =>
        on_2026_the_call_resumes_with_the_answer_without_running_policy_again(Wire::Stdio);
    on_2026_the_call_resumes_with_the_answer_without_running_policy_again_over_http =>
        on_2026_the_call_resumes_with_the_answer_without_running_policy_again(Wire::Http);
}

async fn on_2026_the_call_resumes_with_the_answer_without_running_policy_again(wire: Wire) {
    let mut tools = Toolset::new().with_touch();
    let asks = Arc::new(AtomicUsize::new(0));
    let seen = asks.clone();
    let policy = tools.registry.add_pre_execute(pre_execute_fn(move |call| {
        (call.name() == "touch").then(|| {
            seen.fetch_add(1, Ordering::SeqCst);
            PreDecision::ask("touch changes the world")
        })
    }));
    tools.hold(policy);
    let server = tools.server();
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
        let conn = connect_over(&server, user(answer), wire, Revision::V2026_07_28).await;
        let client = &conn.client;
        let before = (tools.touches(), asks.load(Ordering::SeqCst));
        // rmcp's client drives the rounds: its handler answers the input request.
        let result = tokio::time::timeout(
            std::time::Duration::from_secs(20),
            client.call_tool(touch_call("mrtr")),
        )
        .await
        .expect("in time")
        .expect("a result");
        let what = format!("{wire:?}/{answer:?}");
        assert_eq!(tools.touches() - before.0, ran, "{what}");
        assert_eq!(
            asks.load(Ordering::SeqCst) - before.1,
            1,
            "{what}: policy ran once"
        );
        assert_eq!(asked(&conn).len(), 1, "{what}");
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

cases! {
    on_2026_tampered_rebound_foreign_and_replayed_states_are_refused_over_stdio =>
        on_2026_tampered_rebound_foreign_and_replayed_states_are_refused(Wire::Stdio);
    on_2026_tampered_rebound_foreign_and_replayed_states_are_refused_over_http =>
        on_2026_tampered_rebound_foreign_and_replayed_states_are_refused(Wire::Http);
}

async fn on_2026_tampered_rebound_foreign_and_replayed_states_are_refused(wire: Wire) {
    let fixture = approvals();
    let conn = connect_over(
        &fixture.server,
        user(Answer::Approve),
        wire,
        Revision::V2026_07_28,
    )
    .await;
    let client = &conn.client;
    let (state, answers) = first_round(client, "once").await;
    let before = fixture.tools.touches();

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
            let other = conn
                .served
                .connect(user(Answer::Approve), Revision::V2026_07_28)
                .await;
            let err = retry(&other, "once", &state, &answers).await.unwrap_err();
            assert!(err.contains("failed integrity verification"), "{err}");
            other
        }
        Wire::Http => {
            let other = connect_url(
                &conn.served.url(),
                Some("mallory"),
                user(Answer::Approve),
                Revision::V2026_07_28,
            )
            .await;
            let err = retry(&other, "once", &state, &answers).await.unwrap_err();
            assert!(err.contains("failed integrity verification"), "{err}");
            other
        }
    };
    assert_eq!(fixture.tools.touches(), before, "{wire:?}: nothing ran");

    // The genuine retry resumes the call, once.
    let result = retry(client, "once", &state, &answers).await.unwrap();
    assert_eq!(
        result.structured_content,
        Some(json!({"result": "touched: once"})),
        "{wire:?}"
    );
    assert_eq!(fixture.tools.touches() - before, 1, "{wire:?}");
    let err = retry(client, "once", &state, &answers).await.unwrap_err();
    assert!(
        err.contains("requestState refused: it was already used, or its call has ended"),
        "{wire:?}: {err}"
    );
    assert_eq!(
        fixture.tools.touches() - before,
        1,
        "{wire:?}: a replay runs nothing"
    );
    other.close().await;
    conn.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_2026_an_expired_state_is_refused_and_its_call_cancelled() {
    let fixture = approvals();
    let server = fixture
        .server
        .clone()
        .with_approval_ttl(std::time::Duration::from_millis(300));
    let conn = connect_over(
        &server,
        user(Answer::Approve),
        Wire::Stdio,
        Revision::V2026_07_28,
    )
    .await;
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

cases! {
    on_2026_a_client_without_elicitation_gets_the_no_handler_denial_over_stdio =>
        on_2026_a_client_without_elicitation_gets_the_no_handler_denial(Wire::Stdio);
    on_2026_a_client_without_elicitation_gets_the_no_handler_denial_over_http =>
        on_2026_a_client_without_elicitation_gets_the_no_handler_denial(Wire::Http);
}

async fn on_2026_a_client_without_elicitation_gets_the_no_handler_denial(wire: Wire) {
    let fixture = approvals();
    let conn = connect_over(
        &fixture.server,
        user_with(false, Answer::Approve),
        wire,
        Revision::V2026_07_28,
    )
    .await;
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
    assert!(asked(&conn).is_empty(), "{wire:?}");
    conn.close().await;
}
