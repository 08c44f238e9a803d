//! Task status notifications on protocol 2026-07-28: a `subscriptions/listen` request
//! whose filter names tasks (`taskIds`, from the tasks extension) gets the acknowledgment
//! with those ids and a `notifications/tasks` for each of its context's tasks, at once
//! and at each change (progress, `input_required`, the terminal state), over a byte
//! stream and over Streamable HTTP.
//!
//! rmcp's client cannot put `taskIds` in a filter (its `SubscriptionFilter` has no such
//! field), so these tests speak JSON-RPC themselves: lines on a byte stream, POSTs over
//! HTTP, reading the listen request's event stream as it arrives.

use std::time::Duration;

use dsh_runtime::{ToolContext, ToolError, tool};
use serde_json::{Value, json};

use crate::common::cases;
use crate::common::rpc::Rpc;
use crate::common::tools::{Guarded, Hang, Plain, Toolset};
use crate::common::wire::{Fixture, Revision, Wire};

/// Wait for the `go` signal of `tag`, reporting progress before and after.
#[tool(task = "optional")]
async fn gated(cx: ToolContext, tag: String) -> Result<String, ToolError> {
    cx.report_progress(1.0, Some(2.0), Some("waiting"));
    let mut rx = GATES.subscribe();
    let _ = rx.wait_for(|open| open.contains(&tag)).await;
    cx.report_progress(2.0, Some(2.0), Some("opened"));
    Ok(format!("done: {tag}"))
}

static GATES: std::sync::LazyLock<tokio::sync::watch::Sender<Vec<String>>> =
    std::sync::LazyLock::new(|| tokio::sync::watch::Sender::new(Vec::new()));

fn open_gate(tag: &str) {
    GATES.send_modify(|open| open.push(tag.to_string()));
}

/// A request's `_meta` for 2026-07-28, declaring the tasks extension (or not) and form
/// elicitation.
fn meta(tasks: bool) -> Value {
    let capabilities = if tasks {
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}, "elicitation": {"form": {}}})
    } else {
        json!({})
    };
    json!({
        "io.modelcontextprotocol/protocolVersion": Revision::V2026_07_28.as_str(),
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "listen-test", "version": "0"},
    })
}

/// The request `id` of `method` with `params`, with the `_meta` of [`meta`].
fn request_2026(id: u64, method: &str, mut params: Value, tasks: bool) -> Value {
    params["_meta"] = meta(tasks);
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn listen(id: u64, task_ids: Value, tasks: bool) -> Value {
    request_2026(
        id,
        "subscriptions/listen",
        json!({"notifications": {"taskIds": task_ids}}),
        tasks,
    )
}

/// gated, hang, plain and guarded (behind a pre-execute policy that asks) served over
/// `wire`, with a job runtime.
async fn serve_listened(wire: Wire) -> Fixture {
    let mut tools = Toolset::with_jobs()
        .with(Gated)
        .with(Hang)
        .with(Plain)
        .with(Guarded);
    let policy = tools
        .registry
        .add_pre_execute(dsh_runtime::hooks::pre_execute_fn(|call| {
            (call.name() == "guarded")
                .then(|| dsh_runtime::hooks::PreDecision::ask("it changes things"))
        }));
    tools.hold(policy);
    Fixture::start(tools, wire).await
}

/// A raw client of `fixture` on 2026-07-28 (over HTTP, with this bearer token).
fn raw_client(fixture: &Fixture, token: Option<&str>) -> Rpc {
    fixture.served.rpc(Some(Revision::V2026_07_28), token)
}

/// Call `name` as a task; the task's id.
async fn call_as_task(client: &mut Rpc, id: u64, name: &str, args: Value) -> String {
    let answer = client
        .call(request_2026(
            id,
            "tools/call",
            json!({"name": name, "arguments": args}),
            true,
        ))
        .await;
    answer["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task: {answer}"))
        .to_string()
}

fn is_task_notification(v: &Value) -> bool {
    v.get("method").and_then(Value::as_str) == Some("notifications/tasks")
}

fn subscription_of(v: &Value) -> Value {
    v["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"].clone()
}

async fn follows_a_task_from_working_to_completed(wire: Wire) {
    let tag = format!("listen-{wire:?}");
    let fixture = serve_listened(wire).await;
    let mut client = raw_client(&fixture, None);
    let id = call_as_task(&mut client, 1, "gated", json!({"tag": tag})).await;
    client
        .send(&listen(2, json!([id, "task-of-nobody"]), true))
        .await;
    let ack = client
        .next("the acknowledgment", |v| {
            v["method"] == "notifications/subscriptions/acknowledged"
        })
        .await;
    assert_eq!(
        ack["params"]["notifications"]["taskIds"],
        json!([id, "task-of-nobody"]),
        "{ack}"
    );
    assert_eq!(subscription_of(&ack), json!(2), "{ack}");
    // The task as it is now, on the listen stream.
    let first = client.next("the first status", is_task_notification).await;
    assert_eq!(first["params"]["taskId"], json!(id), "{first}");
    assert_eq!(first["params"]["status"], "working", "{first}");
    assert_eq!(subscription_of(&first), json!(2), "{first}");
    open_gate(&tag);
    let last = client
        .next("the terminal status", |v| {
            is_task_notification(v) && v["params"]["status"] != "working"
        })
        .await;
    assert_eq!(last["params"]["taskId"], json!(id), "{last}");
    assert_eq!(last["params"]["status"], "completed", "{last}");
    assert_eq!(
        last["params"]["result"]["content"][0]["text"],
        json!(format!("done: {tag}")),
        "{last}"
    );
    assert_eq!(subscription_of(&last), json!(2), "{last}");
    // Nothing ever names the unknown id, and nothing follows the terminal state.
    assert!(
        !client
            .aside
            .iter()
            .any(|v| v["params"]["taskId"] == "task-of-nobody"),
        "{:?}",
        client.aside
    );
    let rest = client.drain(Duration::from_millis(300)).await;
    assert!(
        !rest.iter().any(is_task_notification),
        "after the terminal state: {rest:?}"
    );
    fixture.shutdown().await;
}

cases! {
    a_listen_stream_follows_a_task_over_a_byte_stream => follows_a_task_from_working_to_completed(Wire::Stdio);
    a_listen_stream_follows_a_task_over_http => follows_a_task_from_working_to_completed(Wire::Http);
}

async fn follows_a_question_and_a_cancellation(wire: Wire) {
    let fixture = serve_listened(wire).await;
    let mut client = raw_client(&fixture, None);
    // A task that asks its user: `input_required` with the form, then, answered, done.
    let asking = call_as_task(&mut client, 1, "guarded", json!({"note": "n"})).await;
    client.send(&listen(2, json!([asking]), true)).await;
    let asked = client
        .next("input_required", |v| {
            is_task_notification(v) && v["params"]["status"] == "input_required"
        })
        .await;
    let form = &asked["params"]["inputRequests"]["approval-1"];
    assert_eq!(form["method"], "elicitation/create", "{asked}");
    assert!(
        form["params"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("it changes things")),
        "{asked}"
    );
    let updated = client
        .call(request_2026(
            3,
            "tasks/update",
            json!({"taskId": asking, "inputResponses": {"approval-1": {"action": "accept", "content": {"approve": true}}}}),
            true,
        ))
        .await;
    assert!(updated.get("result").is_some(), "{updated}");
    let done = client
        .next("the answered task's end", |v| {
            is_task_notification(v) && v["params"]["status"] == "completed"
        })
        .await;
    assert_eq!(
        done["params"]["result"]["content"][0]["text"], "guarded: n",
        "{done}"
    );
    // A task cancelled while followed: `cancelled` is its last notification.
    let tag = format!("listen-cancel-{wire:?}");
    let hanging = call_as_task(&mut client, 4, "hang", json!({"tag": tag})).await;
    client.send(&listen(5, json!([hanging]), true)).await;
    let first = client
        .next("the hanging task's status", |v| {
            is_task_notification(v) && subscription_of(v) == json!(5)
        })
        .await;
    assert_eq!(first["params"]["status"], "working", "{first}");
    let cancelled = client
        .call(request_2026(
            6,
            "tasks/cancel",
            json!({"taskId": hanging}),
            true,
        ))
        .await;
    assert!(cancelled.get("result").is_some(), "{cancelled}");
    let last = client
        .next("the cancelled state", |v| {
            is_task_notification(v) && v["params"]["status"] == "cancelled"
        })
        .await;
    assert_eq!(last["params"]["taskId"], json!(hanging), "{last}");
    assert_eq!(subscription_of(&last), json!(5), "{last}");
    fixture.shutdown().await;
}

cases! {
    a_listen_stream_follows_questions_and_cancellation_over_a_byte_stream => follows_a_question_and_a_cancellation(Wire::Stdio);
    a_listen_stream_follows_questions_and_cancellation_over_http => follows_a_question_and_a_cancellation(Wire::Http);
}

async fn refuses_task_ids_it_cannot_honour(wire: Wire) {
    let fixture = serve_listened(wire).await;
    let mut client = raw_client(&fixture, None);
    let undeclared = client.call(listen(1, json!(["x"]), false)).await;
    assert_eq!(undeclared["error"]["code"], -32021, "{undeclared}");
    let not_strings = client.call(listen(2, json!([1, 2]), true)).await;
    assert_eq!(not_strings["error"]["code"], -32602, "{not_strings}");
    let not_a_list = client.call(listen(3, json!("x"), true)).await;
    assert_eq!(not_a_list["error"]["code"], -32602, "{not_a_list}");
    // The connection still serves (the refusals left it as it was).
    let listed = client
        .call(request_2026(4, "tools/list", json!({}), true))
        .await;
    assert!(listed["result"]["tools"].is_array(), "{listed}");
    fixture.shutdown().await;
}

cases! {
    task_ids_without_the_extension_or_not_strings_are_refused_over_a_byte_stream => refuses_task_ids_it_cannot_honour(Wire::Stdio);
    task_ids_without_the_extension_or_not_strings_are_refused_over_http => refuses_task_ids_it_cannot_honour(Wire::Http);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_hears_nothing_of_another_client_s_task() {
    // Over HTTP, statelessly, a task belongs to its credentials: other credentials can
    // name its id and are acknowledged, but are never told anything about it.
    let tag = "listen-foreign";
    let fixture = serve_listened(Wire::Http).await;
    let mut alice = raw_client(&fixture, Some("alice"));
    let id = call_as_task(&mut alice, 1, "gated", json!({"tag": tag})).await;
    let mut bob = raw_client(&fixture, Some("bob"));
    bob.send(&listen(2, json!([id]), true)).await;
    let ack = bob
        .next("bob's acknowledgment", |v| {
            v["method"] == "notifications/subscriptions/acknowledged"
        })
        .await;
    assert_eq!(
        ack["params"]["notifications"]["taskIds"],
        json!([id]),
        "{ack}"
    );
    alice.send(&listen(3, json!([id]), true)).await;
    let first = alice
        .next("alice's first status", is_task_notification)
        .await;
    assert_eq!(first["params"]["status"], "working", "{first}");
    open_gate(tag);
    alice
        .next("alice's terminal status", |v| {
            is_task_notification(v) && v["params"]["status"] == "completed"
        })
        .await;
    let heard = bob.drain(Duration::from_millis(300)).await;
    assert!(
        !heard.iter().any(is_task_notification),
        "bob heard: {heard:?}"
    );
    fixture.shutdown().await;
}

/// Report progress three times, then answer.
#[tool]
async fn count_up(cx: ToolContext) -> Result<String, ToolError> {
    for i in 1..=3 {
        cx.report_progress(f64::from(i), Some(3.0), Some(&format!("step {i}")));
    }
    Ok("counted".to_string())
}

/// A plain `tools/call` on 2026-07-28 with a progress token, from a client that declares
/// form elicitation (so the call may be suspended on a question): every report reaches
/// the client before the result, with the request's token.
async fn progress_reaches_a_client_that_can_answer_forms(wire: Wire) {
    let fixture = Fixture::start(Toolset::new().with(CountUp), wire).await;
    let mut client = raw_client(&fixture, None);
    let mut call = request_2026(
        7,
        "tools/call",
        json!({"name": "count_up", "arguments": {}}),
        true,
    );
    call["params"]["_meta"]["progressToken"] = json!("tok-7");
    let answer = client.call(call).await;
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let progress: Vec<(f64, String)> = client
        .notifications
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .map(|n| {
            assert_eq!(n["params"]["progressToken"], "tok-7", "{n}");
            (
                n["params"]["progress"].as_f64().unwrap_or_default(),
                n["params"]["message"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect();
    assert_eq!(
        progress,
        vec![
            (1.0, "step 1".to_string()),
            (2.0, "step 2".to_string()),
            (3.0, "step 3".to_string())
        ],
        "progress before the result over {wire:?}"
    );
}

cases! {
    progress_reaches_a_client_that_can_answer_forms_over_a_byte_stream => progress_reaches_a_client_that_can_answer_forms(Wire::Stdio);
    progress_reaches_a_client_that_can_answer_forms_over_http => progress_reaches_a_client_that_can_answer_forms(Wire::Http);
}

/// Panic: a failure of the server, not of the tool.
#[tool(task = "optional")]
async fn explode() -> String {
    panic!("explode fails on purpose")
}

/// Fail as a tool does: an error the model reads.
#[tool(task = "optional")]
async fn refuse() -> Result<String, ToolError> {
    Err(ToolError::new("refuse says no"))
}

/// Poll `tasks/get` until the task `id` is terminal; its last answer.
async fn terminal(client: &mut Rpc, id: &str) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    for n in 100.. {
        let answer = client
            .call(request_2026(n, "tasks/get", json!({"taskId": id}), true))
            .await;
        let status = answer["result"]["status"].as_str().unwrap_or_default();
        if ["completed", "failed", "cancelled"].contains(&status) {
            return answer["result"].clone();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "task {id} not terminal: {answer}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    unreachable!()
}

/// A task whose body panics is `failed` with an internal JSON-RPC error and no result;
/// a task whose tool returns an error is `completed` with `isError`.
async fn a_panic_fails_the_task_and_a_tool_error_completes_it(wire: Wire) {
    let fixture = Fixture::start(Toolset::with_jobs().with(Explode).with(Refuse), wire).await;
    let mut client = raw_client(&fixture, None);
    let id = call_as_task(&mut client, 1, "explode", json!({})).await;
    let task = terminal(&mut client, &id).await;
    assert_eq!(task["status"], "failed", "{wire:?}: {task}");
    assert_eq!(task["error"]["code"], -32603, "{wire:?}: {task}");
    let message = task["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("explode fails on purpose"), "{task}");
    assert!(task.get("result").is_none(), "{wire:?}: {task}");

    let id = call_as_task(&mut client, 2, "refuse", json!({})).await;
    let task = terminal(&mut client, &id).await;
    assert_eq!(task["status"], "completed", "{wire:?}: {task}");
    assert_eq!(task["result"]["isError"], true, "{wire:?}: {task}");
    assert!(task.get("error").is_none(), "{wire:?}: {task}");
}

cases! {
    a_panic_fails_the_task_and_a_tool_error_completes_it_over_a_byte_stream => a_panic_fails_the_task_and_a_tool_error_completes_it(Wire::Stdio);
    a_panic_fails_the_task_and_a_tool_error_completes_it_over_http => a_panic_fails_the_task_and_a_tool_error_completes_it(Wire::Http);
}
