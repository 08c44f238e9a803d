//! MCP Apps cards wherever a result reaches the client, not only a direct answer: a
//! task's result (`tasks/result` on 2025-11-25, the tasks extension's `tasks/get` on
//! 2026-07-28), a call resumed after its approval's `InputRequiredResult` round, a call that
//! goes on as a task after asking, and a tool registered in a session's agent scope; and on 2026-07-28, which has no `initialize`,
//! `server/discover` and each request's own client capabilities decide.

use dsh_mcp::{McpServer, SessionGuard};
use dsh_runtime::caller::Elicited;
use dsh_runtime::cards::{CallView, ResultSummary, ResultView, TerminalExit};
use dsh_runtime::hooks::{PreDecision, pre_execute_fn};
use dsh_runtime::{Registry, ToolContext, ToolError, ToolSchema, tool};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::common::http::HttpClient;
use crate::common::rpc::Rpc;
use crate::common::tools::Toolset;
use crate::common::wire::Revision;

const UI: &str = "io.modelcontextprotocol/ui";
const VIEW: &str = "ui://dsh-rs/cards";
const CARDS: &str = "dev.dsh-rs/cards";

fn run_card(args: &RunArgs) -> CallView {
    CallView::terminal(&args.command)
}

fn run_result(_args: &RunArgs, result: &ResultSummary) -> Option<ResultView> {
    let text = result.content.first()?.as_text()?.to_string();
    Some(ResultView::terminal(text, Some(TerminalExit::Code(0))))
}

/// Pretend to run a command (as a task when the client can have one).
#[tool(task = "optional", present_call = run_card, present_result = run_result)]
async fn run(
    /// The command.
    command: String,
) -> String {
    format!("ran {command}")
}

/// The cards of `run` called with `command`.
fn cards_of(command: &str) -> Value {
    json!({
        "callCard": {"card": "terminal", "title": command},
        "resultCard": {"card": "terminal", "output": format!("ran {command}"), "exitCode": 0},
    })
}

/// The UI extension, as a client declares it.
fn ui() -> Value {
    json!({"mimeTypes": ["text/html;profile=mcp-app"]})
}

/// A 2026-07-28 request's `_meta`, declaring `capabilities`.
fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": Revision::V2026_07_28.as_str(),
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "apps-test", "version": "0"},
    })
}

/// The 2026-07-28 request `id` of `method` with `params`, declaring `capabilities`.
fn request_2026(id: u64, method: &str, mut params: Value, capabilities: Value) -> String {
    params["_meta"] = meta(capabilities);
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// Post `body` (a 2026-07-28 request) and take its response's `result`.
async fn post_2026(client: &HttpClient, body: &str) -> Value {
    let response = client.post(body).await.response();
    assert!(response.get("error").is_none(), "{body}: {response}");
    response["result"].clone()
}

fn tool<'a>(list: &'a Value, name: &str) -> &'a Value {
    list["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|t| t["name"] == name))
        .unwrap_or_else(|| panic!("no tool {name} in {list}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_11_25_task_result_carries_the_cards() {
    let tools = Toolset::with_jobs().with(Run);
    let server = tools.server();
    for (capabilities, shown) in [
        (json!({"extensions": {UI: ui()}}), true),
        (json!({}), false),
    ] {
        let mut client = Rpc::stream(&server);
        client.initialize(Revision::V2025_11_25, capabilities).await;
        let created = client
            .request(
                "tools/call",
                json!({"name": "run", "arguments": {"command": "make"}, "task": {"ttl": 60000}}),
            )
            .await
            .expect("run as a task");
        let id = created["task"]["taskId"].clone();
        assert!(id.is_string(), "{created}");
        // `tasks/result` waits for the task.
        let result = client
            .request("tasks/result", json!({"taskId": id}))
            .await
            .expect("the task's result");
        assert_eq!(result["structuredContent"], json!({"result": "ran make"}));
        assert_eq!(
            result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
            id
        );
        match shown {
            true => assert_eq!(result["_meta"][CARDS], cards_of("make"), "{result}"),
            false => assert!(result["_meta"].get(CARDS).is_none(), "{result}"),
        }
        client.close().await;
    }
    tools.shutdown().await;
}

/// The completed result of the 2026-07-28 task `id`, polled with `tasks/get`.
async fn task_result_2026(client: &HttpClient, id: &Value, capabilities: &Value) -> Value {
    let deadline = tokio::time::Instant::now() + crate::common::PATIENCE;
    let body = request_2026(9, "tasks/get", json!({"taskId": id}), capabilities.clone());
    loop {
        let got = post_2026(client, &body).await;
        let task = if got.get("task").is_some() {
            &got["task"]
        } else {
            &got
        };
        match task["status"].as_str() {
            Some("completed") => return task["result"].clone(),
            Some("working") => {}
            _ => panic!("task {id}: {got}"),
        }
        assert!(tokio::time::Instant::now() < deadline, "task {id}: {got}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_of_the_tasks_extension_carries_the_cards_on_2026_07_28() {
    let tools = Toolset::with_jobs().with(Run);
    let http = dsh_mcp::serve_http(&tools.server(), dsh_mcp::HttpOptions::default())
        .await
        .unwrap();
    let client = HttpClient::new(http.url()).revision(Revision::V2026_07_28);
    let tasks = json!({"io.modelcontextprotocol/tasks": {}});
    for (capabilities, shown) in [
        (
            json!({"extensions": {"io.modelcontextprotocol/tasks": {}, UI: ui()}}),
            true,
        ),
        (json!({"extensions": tasks}), false),
    ] {
        let call = json!({"name": "run", "arguments": {"command": "deploy"}});
        let body = request_2026(1, "tools/call", call, capabilities.clone());
        let created = post_2026(&client, &body).await;
        assert_eq!(created["resultType"], "task", "{created}");
        let id = created["taskId"].clone();
        let result = task_result_2026(&client, &id, &capabilities).await;
        assert_eq!(result["structuredContent"], json!({"result": "ran deploy"}));
        match shown {
            true => assert_eq!(result["_meta"][CARDS], cards_of("deploy"), "{result}"),
            false => assert!(result.get("_meta").is_none_or(|m| m.get(CARDS).is_none())),
        }
    }
    http.shutdown().await.unwrap();
    tools.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_resumed_after_its_approval_round_carries_the_cards_on_2026_07_28() {
    let mut tools = Toolset::new().with(Run);
    let policy = tools.registry.add_pre_execute(pre_execute_fn(|call| {
        (call.name() == "run").then(|| PreDecision::ask("it runs things"))
    }));
    tools.hold(policy);
    let http = dsh_mcp::serve_http(&tools.server(), dsh_mcp::HttpOptions::default())
        .await
        .unwrap();
    let client = HttpClient::new(http.url()).revision(Revision::V2026_07_28);
    for (capabilities, shown) in [
        (json!({"elicitation": {}, "extensions": {UI: ui()}}), true),
        (json!({"elicitation": {}}), false),
    ] {
        let call = json!({"name": "run", "arguments": {"command": "rm -r build"}});
        let body = request_2026(1, "tools/call", call.clone(), capabilities.clone());
        let first = post_2026(&client, &body).await;
        assert_eq!(first["resultType"], "input_required", "{first}");
        assert!(first.get("_meta").is_none_or(|m| m.get(CARDS).is_none()));
        let mut retry = call;
        retry["requestState"] = first["requestState"].clone();
        retry["inputResponses"] =
            json!({"approval": {"action": "accept", "content": {"approve": true}}});
        let body = request_2026(2, "tools/call", retry, capabilities);
        let result = post_2026(&client, &body).await;
        assert_eq!(
            result["structuredContent"],
            json!({"result": "ran rm -r build"}),
            "{result}"
        );
        match shown {
            true => assert_eq!(result["_meta"][CARDS], cards_of("rm -r build"), "{result}"),
            false => assert!(result.get("_meta").is_none_or(|m| m.get(CARDS).is_none())),
        }
    }
    http.shutdown().await.unwrap();
    tools.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_2026_07_28_discover_and_each_requests_capabilities_decide() {
    let tools = Toolset::new().with(Run);
    let http = dsh_mcp::serve_http(&tools.server(), dsh_mcp::HttpOptions::default())
        .await
        .unwrap();
    let client = HttpClient::new(http.url()).revision(Revision::V2026_07_28);
    for (capabilities, shown) in [
        (json!({"extensions": {UI: ui()}}), true),
        (json!({}), false),
    ] {
        let body = request_2026(1, "server/discover", json!({}), capabilities.clone());
        let discovered = post_2026(&client, &body).await;
        let server_caps = &discovered["capabilities"];
        assert!(server_caps["tools"].is_object(), "{discovered}");
        assert_eq!(
            server_caps["extensions"][UI].is_object(),
            shown,
            "{discovered}"
        );
        assert_eq!(server_caps["resources"].is_object(), shown, "{discovered}");

        let body = request_2026(2, "tools/list", json!({}), capabilities.clone());
        let list = post_2026(&client, &body).await;
        let listed = &tool(&list, "run")["_meta"]["ui"]["resourceUri"];
        assert_eq!(listed == VIEW, shown, "{list}");

        let body = request_2026(
            3,
            "resources/read",
            json!({"uri": VIEW}),
            capabilities.clone(),
        );
        let read = client.post(&body).await.response();
        let mime = &read["result"]["contents"][0]["mimeType"];
        assert_eq!(mime == "text/html;profile=mcp-app", shown, "{read}");

        let call = json!({"name": "run", "arguments": {"command": "ls"}});
        let body = request_2026(4, "tools/call", call, capabilities);
        let result = post_2026(&client, &body).await;
        match shown {
            true => assert_eq!(result["_meta"][CARDS], cards_of("ls"), "{result}"),
            false => assert!(result.get("_meta").is_none_or(|m| m.get(CARDS).is_none())),
        }
    }
    http.shutdown().await.unwrap();
    tools.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_of_a_sessions_agent_scope_gets_the_view_and_the_cards() {
    // `run` exists only in each session's scope, not in the global view.
    let server = McpServer::new(Registry::new()).on_session(|scope| {
        let handle = scope.register(Run).expect("run registers in the scope");
        SessionGuard::new().keep(handle)
    });
    let mut client = Rpc::stream(&server);
    let capabilities = json!({"extensions": {UI: ui()}});
    client.initialize(Revision::V2025_11_25, capabilities).await;
    let list = client
        .request("tools/list", json!({}))
        .await
        .expect("tools/list");
    assert_eq!(
        tool(&list, "run")["_meta"]["ui"]["resourceUri"],
        VIEW,
        "{list}"
    );
    let result = client
        .request(
            "tools/call",
            json!({"name": "run", "arguments": {"command": "pwd"}}),
        )
        .await
        .expect("the scoped tool's result");
    assert_eq!(result["_meta"][CARDS], cards_of("pwd"), "{result}");
    client.close().await;
}

/// Where to ship.
#[derive(ToolSchema, Deserialize)]
struct Branch {
    /// The branch.
    branch: String,
}

fn ship_card(args: &ShipArgs) -> CallView {
    CallView::terminal(&args.command)
}

fn ship_result(_args: &ShipArgs, result: &ResultSummary) -> Option<ResultView> {
    let text = result.content.first()?.as_text()?.to_string();
    Some(ResultView::terminal(text, Some(TerminalExit::Code(0))))
}

/// Ask where, then go on as a task.
#[tool(task = "optional", task_after_input, present_call = ship_card, present_result = ship_result)]
async fn ship(cx: ToolContext, command: String) -> Result<String, ToolError> {
    let Elicited::Accepted(target) = cx.elicit::<Branch>("Where to?").await? else {
        return Ok("not shipped".into());
    };
    cx.continue_as_task().await;
    Ok(format!("ran {command} on {}", target.branch))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_goes_on_as_a_task_after_asking_carries_the_cards_on_2026_07_28() {
    let tools = Toolset::with_jobs().with(Ship);
    let http = dsh_mcp::serve_http(&tools.server(), dsh_mcp::HttpOptions::default())
        .await
        .unwrap();
    let client = HttpClient::new(http.url()).revision(Revision::V2026_07_28);
    let capabilities =
        json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}, UI: ui()}});
    let call = json!({"name": "ship", "arguments": {"command": "make"}});
    let body = request_2026(1, "tools/call", call.clone(), capabilities.clone());
    let first = post_2026(&client, &body).await;
    assert_eq!(first["resultType"], "input_required", "{first}");
    let key = first["inputRequests"]
        .as_object()
        .and_then(|requests| requests.keys().next())
        .expect("a question")
        .clone();
    let mut retry = call;
    retry["requestState"] = first["requestState"].clone();
    retry["inputResponses"] = json!({key: {"action": "accept", "content": {"branch": "main"}}});
    let body = request_2026(2, "tools/call", retry, capabilities.clone());
    let created = post_2026(&client, &body).await;
    assert_eq!(created["resultType"], "task", "{created}");
    let result = task_result_2026(&client, &created["taskId"], &capabilities).await;
    assert_eq!(
        result["_meta"][CARDS],
        json!({
            "callCard": {"card": "terminal", "title": "make"},
            "resultCard": {"card": "terminal", "output": "ran make on main", "exitCode": 0},
        }),
        "{result}"
    );
    http.shutdown().await.unwrap();
    tools.shutdown().await;
}
