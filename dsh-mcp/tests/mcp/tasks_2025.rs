//! Task-capable tools as tasks of protocol revision 2025-11-25 (the core specification's
//! task model: `params.task` on `tools/call`, `tasks/get`, `tasks/result`, `tasks/list`,
//! `tasks/cancel`), spoken as raw JSON-RPC (rmcp has no client for this model) over an
//! in-memory byte stream (as stdio) and over Streamable HTTP with a session: the
//! capability and each tool's `execution.taskSupport` published, a task polled to
//! completion and its result read, `tasks/result` waiting for the task, a cancelled task,
//! `tasks/list` and the other tasks methods limited to the session's own tasks, the
//! session's end stopping its tasks, the `forbidden` and `required` errors, and the final
//! state's `notifications/tasks/status` (on the stream, and on the HTTP session's `GET`
//! event stream), and a task `input_required` while its approval's `elicitation/create`
//! (naming the task in its related-task `_meta`) is outstanding.

use std::time::Duration;

use dsh_mcp::HttpOptions;
use dsh_runtime::hooks::{PreDecision, pre_execute_fn};
use dsh_runtime::{ToolError, tool};
use serde_json::{Value, json};

use crate::common::cases;
use crate::common::http::HttpClient;
use crate::common::rpc::{Rpc, request as request_message, text_of};
use crate::common::tools::{Guarded, Hang, Plain, SlowEcho, Toolset, guarded_ran, until_hang};
use crate::common::wire::{Fixture, Revision, Wire};

/// slow_echo, hang, only_task and plain served over `wire`, with a job runtime or
/// without.
async fn serve_tasks(wire: Wire, with_jobs: bool) -> Fixture {
    let tools = if with_jobs {
        Toolset::with_jobs()
    } else {
        Toolset::new()
    };
    let tools = tools.with(SlowEcho).with(Hang).with_only_task().with(Plain);
    Fixture::start(tools, wire).await
}

/// `guarded`, behind a pre-execute policy that asks, served over `wire` with a job
/// runtime.
async fn asking(wire: Wire) -> Fixture {
    let mut tools = Toolset::with_jobs().with(Guarded);
    let policy = tools.registry.add_pre_execute(pre_execute_fn(|call| {
        (call.name() == "guarded").then(|| PreDecision::ask("it changes things"))
    }));
    tools.hold(policy);
    Fixture::start(tools, wire).await
}

/// A client that initialized on 2025-11-25; the `initialize` result.
async fn initialized_client(fixture: &Fixture) -> (Rpc, Value) {
    initialized_client_with(fixture, json!({})).await
}

/// A client that initialized on 2025-11-25 declaring `capabilities` (over HTTP, in a
/// session).
async fn initialized_client_with(fixture: &Fixture, capabilities: Value) -> (Rpc, Value) {
    let mut client = fixture.served.rpc(None, None);
    let init = client.initialize(Revision::V2025_11_25, capabilities).await;
    assert_eq!(
        init["protocolVersion"],
        Revision::V2025_11_25.as_str(),
        "{init}"
    );
    (client, init)
}

/// Call `name` as a task; the task created.
async fn call_task(client: &mut Rpc, name: &str, arguments: Value) -> Value {
    let created = client
        .request(
            "tools/call",
            json!({"name": name, "arguments": arguments, "task": {"ttl": 60000}}),
        )
        .await
        .unwrap_or_else(|e| panic!("{name} as a task: {e}"));
    let task = created["task"].clone();
    assert!(task["taskId"].is_string(), "{created}");
    assert!(task["createdAt"].is_string(), "{created}");
    assert!(task["lastUpdatedAt"].is_string(), "{created}");
    assert!(task.get("ttl").is_some_and(Value::is_null), "{created}");
    task
}

/// Poll `tasks/get` until the task is terminal.
async fn poll(client: &mut Rpc, id: &str) -> Value {
    for _ in 0..600 {
        let task = client
            .request("tasks/get", json!({"taskId": id}))
            .await
            .unwrap();
        assert_eq!(task["taskId"], id, "{task}");
        if ["completed", "failed", "cancelled"].contains(&task["status"].as_str().unwrap()) {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("task {id} did not end");
}

cases! {
    the_capability_and_each_tools_task_support_are_published_over_stdio => the_capability_and_each_tools_task_support_are_published(Wire::Stdio);
    the_capability_and_each_tools_task_support_are_published_over_http => the_capability_and_each_tools_task_support_are_published(Wire::Http);
}

async fn the_capability_and_each_tools_task_support_are_published(wire: Wire) {
    let fixture = serve_tasks(wire, true).await;
    let (mut client, init) = initialized_client(&fixture).await;
    assert_eq!(
        init["capabilities"]["tasks"],
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
        "{wire:?}: {init}"
    );
    let listed = client.request("tools/list", json!({})).await.unwrap();
    let support = |name: &str| {
        listed["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} listed: {listed}"))
            .get("execution")
            .cloned()
    };
    assert_eq!(
        support("slow_echo"),
        Some(json!({"taskSupport": "optional"}))
    );
    assert_eq!(
        support("only_task"),
        Some(json!({"taskSupport": "required"}))
    );
    assert_eq!(support("plain"), None, "{wire:?}");
    client.close().await;
    fixture.shutdown().await;
    // Without a job runtime there are no tasks to offer.
    let fixture = serve_tasks(wire, false).await;
    let (mut client, init) = initialized_client(&fixture).await;
    assert!(
        init["capabilities"].get("tasks").is_none(),
        "{wire:?}: {init}"
    );
    let listed = client.request("tools/list", json!({})).await.unwrap();
    assert!(
        listed["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t.get("execution").is_none()),
        "{listed}"
    );
    client.close().await;
    fixture.shutdown().await;
}

cases! {
    a_task_is_polled_to_completion_and_its_result_read_over_stdio => a_task_is_polled_to_completion_and_its_result_read(Wire::Stdio);
    a_task_is_polled_to_completion_and_its_result_read_over_http => a_task_is_polled_to_completion_and_its_result_read(Wire::Http);
}

async fn a_task_is_polled_to_completion_and_its_result_read(wire: Wire) {
    let fixture = serve_tasks(wire, true).await;
    let (mut client, _) = initialized_client(&fixture).await;
    let task = call_task(&mut client, "slow_echo", json!({"text": "hi", "ms": 100})).await;
    assert_eq!(task["status"], "working", "{task}");
    let id = task["taskId"].as_str().unwrap().to_string();
    let done = poll(&mut client, &id).await;
    assert_eq!(done["status"], "completed", "{wire:?}: {done}");
    let result = client
        .request("tasks/result", json!({"taskId": id}))
        .await
        .unwrap();
    assert_eq!(text_of(&result), "echo: hi", "{result}");
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/related-task"],
        json!({"taskId": id}),
        "{result}"
    );
    if let Wire::Stdio = wire {
        // The terminal state was notified (before the answers that followed it).
        let notified = client
            .notifications
            .iter()
            .find(|n| n["method"] == "notifications/tasks/status")
            .unwrap_or_else(|| panic!("no status notification: {:?}", client.notifications));
        assert_eq!(notified["params"]["taskId"], id.as_str(), "{notified}");
        assert_eq!(notified["params"]["status"], "completed", "{notified}");
    }
    client.close().await;
    fixture.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_final_state_is_notified_on_the_http_event_stream() {
    let fixture = serve_tasks(Wire::Http, true).await;
    let (mut client, _) = initialized_client(&fixture).await;
    let mut events = client.http_client().events().await;
    let task = call_task(&mut client, "slow_echo", json!({"text": "heard", "ms": 50})).await;
    let id = task["taskId"].as_str().unwrap().to_string();
    let notified = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let message = events.recv().await.expect("the event stream is open");
            if message["method"] == "notifications/tasks/status" {
                return message;
            }
        }
    })
    .await
    .expect("a status notification within 30 s");
    assert_eq!(notified["params"]["taskId"], id.as_str(), "{notified}");
    assert_eq!(notified["params"]["status"], "completed", "{notified}");
    client.close().await;
    fixture.shutdown().await;
}

cases! {
    tasks_result_waits_until_the_task_ends_over_stdio => tasks_result_waits_until_the_task_ends(Wire::Stdio);
    tasks_result_waits_until_the_task_ends_over_http => tasks_result_waits_until_the_task_ends(Wire::Http);
}

async fn tasks_result_waits_until_the_task_ends(wire: Wire) {
    let fixture = serve_tasks(wire, true).await;
    let (mut client, _) = initialized_client(&fixture).await;
    let task = call_task(
        &mut client,
        "slow_echo",
        json!({"text": "later", "ms": 400}),
    )
    .await;
    let id = task["taskId"].as_str().unwrap().to_string();
    let now = client
        .request("tasks/get", json!({"taskId": id}))
        .await
        .unwrap();
    assert_eq!(now["status"], "working", "{now}");
    // Asked while the task runs: the answer is the task's own result.
    let result = client
        .request("tasks/result", json!({"taskId": id}))
        .await
        .unwrap();
    assert_eq!(text_of(&result), "echo: later", "{wire:?}: {result}");
    let after = client
        .request("tasks/get", json!({"taskId": id}))
        .await
        .unwrap();
    assert_eq!(after["status"], "completed", "{after}");
    client.close().await;
    fixture.shutdown().await;
}

cases! {
    a_cancelled_task_stops_and_reports_cancelled_over_stdio => a_cancelled_task_stops_and_reports_cancelled(Wire::Stdio);
    a_cancelled_task_stops_and_reports_cancelled_over_http => a_cancelled_task_stops_and_reports_cancelled(Wire::Http);
}

async fn a_cancelled_task_stops_and_reports_cancelled(wire: Wire) {
    let fixture = serve_tasks(wire, true).await;
    let (mut client, _) = initialized_client(&fixture).await;
    let tag = format!("2025-cancel-{wire:?}");
    let task = call_task(&mut client, "hang", json!({"tag": tag})).await;
    let id = task["taskId"].as_str().unwrap().to_string();
    until_hang("the task started", |s| s.started.contains(&tag)).await;
    let cancelled = client
        .request("tasks/cancel", json!({"taskId": id}))
        .await
        .unwrap();
    assert_eq!(cancelled["taskId"], id.as_str(), "{cancelled}");
    assert_eq!(cancelled["status"], "cancelled", "{wire:?}: {cancelled}");
    until_hang("the call saw its cancellation", |s| {
        s.stopped.contains(&tag)
    })
    .await;
    let got = poll(&mut client, &id).await;
    assert_eq!(got["status"], "cancelled", "{got}");
    let result = client
        .request("tasks/result", json!({"taskId": id}))
        .await
        .unwrap_err();
    assert_eq!(result["code"], -32603, "{result}");
    assert!(
        result["message"].as_str().unwrap().contains("cancelled"),
        "{result}"
    );
    // A terminal task cannot be cancelled again.
    let again = client
        .request("tasks/cancel", json!({"taskId": id}))
        .await
        .unwrap_err();
    assert_eq!(again["code"], -32602, "{again}");
    client.close().await;
    fixture.shutdown().await;
}

cases! {
    a_session_sees_only_its_own_tasks_over_stdio => a_session_sees_only_its_own_tasks(Wire::Stdio);
    a_session_sees_only_its_own_tasks_over_http => a_session_sees_only_its_own_tasks(Wire::Http);
}

async fn a_session_sees_only_its_own_tasks(wire: Wire) {
    let fixture = serve_tasks(wire, true).await;
    let (mut owner, _) = initialized_client(&fixture).await;
    let (mut other, _) = initialized_client(&fixture).await;
    let mine = call_task(&mut owner, "slow_echo", json!({"text": "mine", "ms": 1})).await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    // Another tool: task ids are numbered per tool and owner.
    let theirs = call_task(&mut other, "only_task", json!({})).await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(mine, theirs);
    let listed = owner.request("tasks/list", json!({})).await.unwrap();
    let ids: Vec<&str> = listed["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["taskId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec![mine.as_str()], "{wire:?}: {listed}");
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let refused = other
            .request(method, json!({"taskId": mine}))
            .await
            .unwrap_err();
        assert_eq!(refused["code"], -32602, "{wire:?} {method}: {refused}");
    }
    let refused = owner
        .request("tasks/get", json!({"taskId": theirs}))
        .await
        .unwrap_err();
    assert_eq!(refused["code"], -32602, "{refused}");
    owner.close().await;
    other.close().await;
    fixture.shutdown().await;
}

cases! {
    the_end_of_the_session_stops_its_tasks_over_stdio => the_end_of_the_session_stops_its_tasks(Wire::Stdio);
    the_end_of_the_session_stops_its_tasks_over_http => the_end_of_the_session_stops_its_tasks(Wire::Http);
}

async fn the_end_of_the_session_stops_its_tasks(wire: Wire) {
    let fixture = serve_tasks(wire, true).await;
    let (mut client, _) = initialized_client(&fixture).await;
    let tag = format!("2025-close-{wire:?}");
    call_task(&mut client, "hang", json!({"tag": tag})).await;
    until_hang("the task started", |s| s.started.contains(&tag)).await;
    client.close().await;
    until_hang("the session's end stopped the task", |s| {
        s.stopped.contains(&tag)
    })
    .await;
    fixture.shutdown().await;
}

cases! {
    forbidden_and_required_task_support_are_enforced_over_stdio => forbidden_and_required_task_support_are_enforced(Wire::Stdio);
    forbidden_and_required_task_support_are_enforced_over_http => forbidden_and_required_task_support_are_enforced(Wire::Http);
}

async fn forbidden_and_required_task_support_are_enforced(wire: Wire) {
    let fixture = serve_tasks(wire, true).await;
    let (mut client, _) = initialized_client(&fixture).await;
    let forbidden = client
        .request(
            "tools/call",
            json!({"name": "plain", "arguments": {"text": "x"}, "task": {}}),
        )
        .await
        .unwrap_err();
    assert_eq!(forbidden["code"], -32601, "{wire:?}: {forbidden}");
    let required = client
        .request("tools/call", json!({"name": "only_task", "arguments": {}}))
        .await
        .unwrap_err();
    assert_eq!(required["code"], -32601, "{wire:?}: {required}");
    let bad = client
        .request(
            "tools/call",
            json!({"name": "only_task", "arguments": {}, "task": {"ttl": "soon"}}),
        )
        .await
        .unwrap_err();
    assert_eq!(bad["code"], -32602, "{bad}");
    assert!(
        bad["message"].as_str().unwrap().contains("params.task.ttl"),
        "{bad}"
    );
    // A plain call of a plain tool is answered directly.
    let direct = client
        .request(
            "tools/call",
            json!({"name": "plain", "arguments": {"text": "x"}}),
        )
        .await
        .unwrap();
    assert_eq!(text_of(&direct), "plain: x", "{direct}");
    let task = call_task(&mut client, "only_task", json!({})).await;
    let id = task["taskId"].as_str().unwrap().to_string();
    poll(&mut client, &id).await;
    let result = client
        .request("tasks/result", json!({"taskId": id}))
        .await
        .unwrap();
    assert_eq!(text_of(&result), "ran as a task", "{result}");
    client.close().await;
    fixture.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_waiting_for_its_elicitation_is_input_required() {
    let fixture = asking(Wire::Stdio).await;
    let (mut client, _) = initialized_client_with(&fixture, json!({"elicitation": {}})).await;
    let task = call_task(&mut client, "guarded", json!({"note": "core"})).await;
    let id = task["taskId"].as_str().unwrap().to_string();
    // While the elicitation is out, the task is `input_required` (in tasks/get and in
    // tasks/list); the request names the task.
    let mut seen = None;
    for _ in 0..600 {
        let got = client
            .request("tasks/get", json!({"taskId": id}))
            .await
            .unwrap();
        if got["status"] == "input_required" && !client.requests.is_empty() {
            seen = Some(got);
            break;
        }
        assert!(
            ["working", "input_required"].contains(&got["status"].as_str().unwrap()),
            "{got}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let got = seen.expect("the task asked");
    assert_eq!(got["taskId"], id.as_str(), "{got}");
    let asked = client.requests[0].clone();
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    assert_eq!(
        asked["params"]["_meta"]["io.modelcontextprotocol/related-task"],
        json!({"taskId": id}),
        "{asked}"
    );
    assert!(
        asked["params"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Allow tool \"guarded\" to run?"),
        "{asked}"
    );
    let listed = client.request("tasks/list", json!({})).await.unwrap();
    assert_eq!(listed["tasks"][0]["status"], "input_required", "{listed}");
    assert!(!guarded_ran("core"));
    // The wait was notified, as the task's terminal state is.
    let notified = client
        .notifications
        .iter()
        .find(|n| n["method"] == "notifications/tasks/status")
        .cloned()
        .unwrap_or_else(|| panic!("no status notification: {:?}", client.notifications));
    assert_eq!(notified["params"]["status"], "input_required", "{notified}");
    // The answer: the task works again and completes.
    client
        .respond(
            &asked["id"],
            json!({"action": "accept", "content": {"approve": true}}),
        )
        .await;
    let done = poll(&mut client, &id).await;
    assert_eq!(done["status"], "completed", "{done}");
    let result = client
        .request("tasks/result", json!({"taskId": id}))
        .await
        .unwrap();
    assert_eq!(text_of(&result), "guarded: core", "{result}");
    // The notifications followed the task: waiting, working again, completed (the last
    // one sent when the job settled, so perhaps after the answers above; the client reads
    // what arrived while it waits for an answer).
    let statuses_of = |client: &Rpc| -> Vec<Value> {
        client
            .notifications
            .iter()
            .filter(|n| {
                n["method"] == "notifications/tasks/status" && n["params"]["taskId"] == id.as_str()
            })
            .map(|n| n["params"]["status"].clone())
            .collect()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while statuses_of(&client).last() != Some(&json!("completed"))
        && std::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let _ = client.request("tasks/get", json!({"taskId": id})).await;
    }
    let statuses = statuses_of(&client);
    assert_eq!(
        statuses,
        [
            json!("input_required"),
            json!("working"),
            json!("completed")
        ],
        "{:?}",
        client.notifications
    );
    assert!(guarded_ran("core"));
    client.close().await;
    fixture.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_waiting_for_its_elicitation_is_input_required_over_http() {
    let fixture = asking(Wire::Http).await;
    let (mut client, _) = initialized_client_with(&fixture, json!({"elicitation": {}})).await;
    let mut events = client.http_client().events().await;
    let task = call_task(&mut client, "guarded", json!({"note": "core-http"})).await;
    let id = task["taskId"].as_str().unwrap().to_string();
    // The session's event stream carries the wait's notification and the request.
    let asked = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let message = events.recv().await.expect("the event stream is open");
            if message["method"] == "elicitation/create" {
                return message;
            }
        }
    })
    .await
    .expect("an elicitation request within 30 s");
    assert_eq!(
        asked["params"]["_meta"]["io.modelcontextprotocol/related-task"],
        json!({"taskId": id}),
        "{asked}"
    );
    let got = client
        .request("tasks/get", json!({"taskId": id}))
        .await
        .unwrap();
    assert_eq!(got["status"], "input_required", "{got}");
    client
        .respond(
            &asked["id"],
            json!({"action": "accept", "content": {"approve": true}}),
        )
        .await;
    let done = poll(&mut client, &id).await;
    assert_eq!(done["status"], "completed", "{done}");
    let result = client
        .request("tasks/result", json!({"taskId": id}))
        .await
        .unwrap();
    assert_eq!(text_of(&result), "guarded: core-http", "{result}");
    client.close().await;
    fixture.shutdown().await;
}

/// The notes of the `recorded` calls whose body ran.
static RECORDED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Record that the body ran.
#[tool(task = "optional")]
async fn recorded(note: String) -> Result<String, ToolError> {
    RECORDED.lock().unwrap().push(note.clone());
    Ok(format!("recorded: {note}"))
}

fn recorded_ran(note: &str) -> bool {
    RECORDED.lock().unwrap().iter().any(|n| n == note)
}

/// A Streamable HTTP server of `recorded` and `plain`, with or without sessions, with a
/// job runtime.
async fn serve_recorded(sessions: bool) -> Fixture {
    let tools = Toolset::with_jobs().with(Recorded).with(Plain);
    let server = tools.server();
    let options = HttpOptions::default().sessions(sessions);
    Fixture::serving(tools, &server, Wire::Http, options).await
}

/// POST `message` with `client` (a success); the answer to it, if any.
async fn post_as(client: &HttpClient, message: &Value) -> Option<Value> {
    let reply = client.post(&message.to_string()).await;
    assert!((200..300).contains(&reply.status), "{}", reply.status);
    reply.answer(&message["id"])
}

cases! {
    tasks_are_offered_and_served_only_with_a_session_with_sessions =>
        tasks_are_offered_and_served_only_with_a_session(true);
    tasks_are_offered_and_served_only_with_a_session_without_sessions =>
        tasks_are_offered_and_served_only_with_a_session(false);
}

async fn tasks_are_offered_and_served_only_with_a_session(sessions: bool) {
    let fixture = serve_recorded(sessions).await;
    // `initialize` on 2025-11-25 (the header too) then `notifications/initialized`.
    let mut http = HttpClient::new(fixture.served.url()).revision(Revision::V2025_11_25);
    let reply = http.open_session(Revision::V2025_11_25, json!({})).await;
    let answer = reply.answer(&json!(1)).expect("an answer to initialize");
    let init = answer["result"].clone();
    assert_eq!(
        init["protocolVersion"],
        Revision::V2025_11_25.as_str(),
        "{answer}"
    );
    assert_eq!(http.session.is_some(), sessions, "{init}");
    let request = request_message;
    let listed = post_as(&http, &request(2, "tools/list", json!({})))
        .await
        .expect("an answer to tools/list");
    let execution = listed["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("tools: {listed}"))
        .iter()
        .find(|t| t["name"] == "recorded")
        .unwrap_or_else(|| panic!("recorded listed: {listed}"))
        .get("execution")
        .cloned();
    let note = format!("task-{sessions}");
    let call = request(
        3,
        "tools/call",
        json!({"name": "recorded", "arguments": {"note": note}, "task": {"ttl": 60000}}),
    );
    let answer = post_as(&http, &call)
        .await
        .expect("an answer to the task call");
    if sessions {
        // What the session is offered, it gets: a task.
        assert_eq!(
            init["capabilities"]["tasks"],
            json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
            "{init}"
        );
        assert_eq!(
            execution,
            Some(json!({"taskSupport": "optional"})),
            "{listed}"
        );
        let task = &answer["result"]["task"];
        assert!(
            task["status"] == "working" || task["status"] == "completed",
            "{answer}"
        );
        let id = task["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("{answer}"));
        let result = post_as(&http, &request(4, "tasks/result", json!({"taskId": id})))
            .await
            .expect("an answer to tasks/result");
        assert_eq!(
            text_of(&result["result"]),
            format!("recorded: {note}"),
            "{result}"
        );
    } else {
        // Without a session: nothing of the revision's tasks is offered, and a call
        // asking for one is refused before it runs.
        assert!(init["capabilities"].get("tasks").is_none(), "{init}");
        assert_eq!(execution, None, "{listed}");
        let error = &answer["error"];
        assert_eq!(error["code"], -32601, "{answer}");
        let message = error["message"].as_str().unwrap_or_default();
        assert!(message.contains("session"), "{answer}");
        assert!(answer.get("result").is_none(), "{answer}");
        assert!(!recorded_ran(&note), "the refused task call ran its tool");
        // So is a tool that cannot be a task anyway.
        let plain = request(
            5,
            "tools/call",
            json!({"name": "plain", "arguments": {"text": "x"}, "task": {}}),
        );
        let answer = post_as(&http, &plain).await;
        let answer = answer.expect("an answer to the plain task call");
        assert_eq!(answer["error"]["code"], -32601, "{answer}");
        // The same call without `params.task` is answered directly.
        let note = "direct-stateless";
        let direct = request(
            6,
            "tools/call",
            json!({"name": "recorded", "arguments": {"note": note}}),
        );
        let answer = post_as(&http, &direct).await;
        let answer = answer.expect("an answer to the direct call");
        assert_eq!(
            text_of(&answer["result"]),
            format!("recorded: {note}"),
            "{answer}"
        );
        assert!(recorded_ran(note));
        // On an earlier revision `params.task` means nothing: the ordinary call.
        let note = "earlier-revision";
        let earlier = request(
            7,
            "tools/call",
            json!({"name": "recorded", "arguments": {"note": note}, "task": {}}),
        );
        let earlier_client = http.clone().revision(Revision::V2025_06_18);
        let answer = post_as(&earlier_client, &earlier).await;
        let answer = answer.expect("an answer on 2025-06-18");
        assert_eq!(
            text_of(&answer["result"]),
            format!("recorded: {note}"),
            "{answer}"
        );
    }
    fixture.shutdown().await;
}

cases! {
    without_a_job_runtime_a_task_call_is_refused_over_stdio => without_a_job_runtime_a_task_call_is_refused(Wire::Stdio);
    without_a_job_runtime_a_task_call_is_refused_over_http => without_a_job_runtime_a_task_call_is_refused(Wire::Http);
}

async fn without_a_job_runtime_a_task_call_is_refused(wire: Wire) {
    let fixture = serve_tasks(wire, false).await;
    let (mut client, init) = initialized_client(&fixture).await;
    assert!(init["capabilities"].get("tasks").is_none(), "{init}");
    let error = client
        .request(
            "tools/call",
            json!({"name": "slow_echo", "arguments": {"text": "x", "ms": 1}, "task": {}}),
        )
        .await
        .unwrap_err();
    assert_eq!(error["code"], -32601, "{wire:?}: {error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap_or_default()
            .contains("job runtime"),
        "{wire:?}: {error}"
    );
    let direct = client
        .request(
            "tools/call",
            json!({"name": "slow_echo", "arguments": {"text": "x", "ms": 1}}),
        )
        .await
        .unwrap();
    assert_eq!(text_of(&direct), "echo: x", "{wire:?}: {direct}");
    client.close().await;
    fixture.shutdown().await;
}
