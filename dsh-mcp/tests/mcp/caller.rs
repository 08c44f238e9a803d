//! Tools that talk to their client (`dsh_runtime::caller`): logs, typed forms, sampling
//! and roots, over stdio and HTTP, on revision 2025-11-25 (server-to-client requests)
//! and 2026-07-28 (`InputRequiredResult` rounds driven by rmcp's client), answered by a
//! client handler of this module.
#![allow(deprecated)]

use std::sync::{Arc, Mutex};

use dsh_mcp::McpServer;
use dsh_runtime::caller::{Elicited, LogLevel, SampleRequest};
use dsh_runtime::{Registry, ToolContext, ToolError, ToolSchema, tool};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, CreateMessageRequestParams,
    CreateMessageResult, ElicitRequestParams, ElicitResult, ElicitationAction, Implementation,
    ListRootsResult, LoggingMessageNotificationParam, Root, SamplingMessage, SetLevelRequestParams,
};
use rmcp::service::{ClientServiceExt, NotificationContext, RequestContext};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::common::cases;
use crate::common::wire::{Revision, Served, Wire};

/// Where to deploy.
#[derive(ToolSchema, Deserialize)]
struct Target {
    /// The branch.
    branch: String,
    /// How many replicas.
    replicas: u32,
}

/// The side effects of `deploy` between its questions, by tag.
static EFFECTS: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn effects(tag: &str) -> usize {
    EFFECTS.lock().unwrap().iter().filter(|t| *t == tag).count()
}

/// Log, ask a form, do something, ask the model, list the roots.
#[tool]
async fn deploy(cx: ToolContext, tag: String) -> Result<String, ToolError> {
    cx.log(LogLevel::Info, format!("deploy {tag}: asking"));
    cx.log(LogLevel::Debug, "a detail nobody asked for");
    let target = match cx.elicit::<Target>("Where to?").await? {
        Elicited::Accepted(target) => target,
        Elicited::Declined | Elicited::Cancelled => return Ok("not deployed".into()),
    };
    // A side effect between two questions: it must happen once, whatever the rounds.
    EFFECTS.lock().unwrap().push(tag.clone());
    let note = cx
        .sample(SampleRequest::new(
            format!("note for {}", target.branch),
            20,
        ))
        .await?;
    let roots = cx.roots().await?;
    cx.log(LogLevel::Warning, "deployed");
    Ok(format!(
        "{tag}: {} x{} ({}) in {}",
        target.branch,
        target.replicas,
        note.text(),
        roots.first().map_or("", |r| r.uri.as_str())
    ))
}

/// Ask the model, which the client may not offer.
#[tool]
async fn needs_sampling(cx: ToolContext) -> Result<String, ToolError> {
    Ok(cx
        .sample(SampleRequest::new("hi", 5))
        .await?
        .text()
        .to_string())
}

/// The client: answers forms with `form`, sampling and roots, records logs.
#[derive(Clone)]
struct Client {
    form: Value,
    sampling: bool,
    logs: Arc<Mutex<Vec<(String, Value)>>>,
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::builder().enable_roots().build();
        capabilities.elicitation = ClientCapabilities::builder()
            .enable_elicitation()
            .build()
            .elicitation;
        if self.sampling {
            capabilities.sampling = ClientCapabilities::builder()
                .enable_sampling()
                .build()
                .sampling;
        }
        ClientConfig::new(capabilities, Implementation::new("caller-test", "0"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let schema = serde_json::to_value(&request).unwrap_or_default();
        assert_eq!(
            schema["requestedSchema"]["properties"]["replicas"]["type"],
            "integer"
        );
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(self.form.clone()))
    }

    async fn create_message(
        &self,
        request: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let asked = serde_json::to_value(&request.messages).unwrap_or_default();
        let prompt = asked[0]["content"]["text"]
            .as_str()
            .unwrap_or("")
            .to_string();
        Ok(CreateMessageResult::new(
            SamplingMessage::assistant_text(format!("sampled <{prompt}>")),
            "test-model".into(),
        ))
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        Ok(ListRootsResult::new(vec![Root::new("file:///srv/app")]))
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let level = serde_json::to_value(params.level).unwrap_or_default();
        let level = level.as_str().unwrap_or_default().to_string();
        self.logs.lock().unwrap().push((level, params.data));
    }
}

fn server() -> McpServer {
    let registry = Registry::new();
    let _ = registry.register(Deploy).unwrap();
    let _ = registry.register(NeedsSampling).unwrap();
    McpServer::new(registry)
}

async fn connect(
    served: &Served,
    client: Client,
    revision: Revision,
) -> rmcp::service::RunningService<RoleClient, Client> {
    match &served.http {
        None => {
            let (client_io, server_io) = tokio::io::duplex(1 << 16);
            let server = served.server.clone();
            tokio::spawn(async move {
                let _ = server.serve(server_io).await;
            });
            client
                .serve_with_lifecycle(client_io, revision.lifecycle())
                .await
                .expect("client handshake")
        }
        Some(http) => {
            let config = StreamableHttpClientTransportConfig::with_uri(http.url());
            client
                .serve_with_lifecycle(
                    StreamableHttpClientTransport::from_config(config),
                    revision.lifecycle(),
                )
                .await
                .expect("client handshake")
        }
    }
}

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else {
        panic!("arguments are an object")
    };
    CallToolRequestParams::new(name.to_string()).with_arguments(arguments)
}

fn text(result: &rmcp::model::CallToolResult) -> String {
    serde_json::to_value(&result.content).unwrap()[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

cases! {
    a_tool_logs_asks_a_form_samples_and_lists_roots_over_stdio_2025 =>
        a_tool_logs_asks_a_form_samples_and_lists_roots(Wire::Stdio, Revision::V2025_11_25);
    a_tool_logs_asks_a_form_samples_and_lists_roots_over_http_2025 =>
        a_tool_logs_asks_a_form_samples_and_lists_roots(Wire::Http, Revision::V2025_11_25);
    a_tool_logs_asks_a_form_samples_and_lists_roots_over_stdio_2026 =>
        a_tool_logs_asks_a_form_samples_and_lists_roots(Wire::Stdio, Revision::V2026_07_28);
    a_tool_logs_asks_a_form_samples_and_lists_roots_over_http_2026 =>
        a_tool_logs_asks_a_form_samples_and_lists_roots(Wire::Http, Revision::V2026_07_28);
}

async fn a_tool_logs_asks_a_form_samples_and_lists_roots(wire: Wire, revision: Revision) {
    let served = Served::start(&server(), wire).await;
    let logs = Arc::default();
    let client = Client {
        form: json!({"branch": "main", "replicas": 3}),
        sampling: true,
        logs: Arc::clone(&logs),
    };
    let tag = format!("{wire:?}-{revision:?}");
    let conn = connect(&served, client, revision).await;
    let result = conn
        .call_tool(call("deploy", json!({"tag": tag})))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    assert_eq!(
        text(&result),
        format!("{tag}: main x3 (sampled <note for main>) in file:///srv/app")
    );
    // Once, though 2026-07-28 took three rounds (each retry resumes the same call).
    assert_eq!(effects(&tag), 1);
    if revision == Revision::V2025_11_25 {
        // Logs at `info` and above until the client sets a level; they arrive before
        // the result (notifications are handled on tasks of their own: wait a little).
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let got: Vec<(String, Value)> = logs.lock().unwrap().clone();
        assert!(
            got.contains(&("info".into(), json!(format!("deploy {tag}: asking")))),
            "{got:?}"
        );
        assert!(
            got.contains(&("warning".into(), json!("deployed"))),
            "{got:?}"
        );
        assert!(!got.iter().any(|(level, _)| level == "debug"), "{got:?}");
        // `logging/setLevel` raises the threshold for the session.
        conn.peer()
            .set_level(SetLevelRequestParams::new(rmcp::model::LoggingLevel::Error))
            .await
            .unwrap();
        logs.lock().unwrap().clear();
        let again = conn
            .call_tool(call("deploy", json!({"tag": "quiet"})))
            .await
            .unwrap();
        assert_eq!(again.is_error, Some(false), "{}", text(&again));
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        assert!(
            logs.lock().unwrap().is_empty(),
            "{:?}",
            logs.lock().unwrap()
        );
    }
    let _ = conn.cancel().await;
    served.shutdown().await;
}

cases! {
    an_answer_of_the_wrong_type_is_the_bodys_error_over_stdio_2025 =>
        an_answer_of_the_wrong_type_is_the_bodys_error(Wire::Stdio, Revision::V2025_11_25);
    an_answer_of_the_wrong_type_is_the_bodys_error_over_http_2026 =>
        an_answer_of_the_wrong_type_is_the_bodys_error(Wire::Http, Revision::V2026_07_28);
}

async fn an_answer_of_the_wrong_type_is_the_bodys_error(wire: Wire, revision: Revision) {
    let served = Served::start(&server(), wire).await;
    let client = Client {
        form: json!({"branch": "main", "replicas": "three"}),
        sampling: true,
        logs: Arc::default(),
    };
    let conn = connect(&served, client, revision).await;
    let result = conn
        .call_tool(call("deploy", json!({"tag": "bad"})))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    let message = text(&result);
    assert!(
        message.contains("CALLER_INVALID_ANSWER") || message.contains("answer.replicas"),
        "{message}"
    );
    assert!(message.contains("replicas"), "{message}");
    let _ = conn.cancel().await;
    served.shutdown().await;
}

cases! {
    a_missing_capability_is_a_tool_error_on_2025 =>
        a_missing_capability(Revision::V2025_11_25);
    a_missing_capability_is_the_protocols_error_on_2026 =>
        a_missing_capability(Revision::V2026_07_28);
}

async fn a_missing_capability(revision: Revision) {
    let served = Served::start(&server(), Wire::Http).await;
    let client = Client {
        form: json!({}),
        sampling: false,
        logs: Arc::default(),
    };
    let conn = connect(&served, client, revision).await;
    let outcome = conn.call_tool(call("needs_sampling", json!({}))).await;
    match revision {
        Revision::V2026_07_28 => {
            let error = outcome.expect_err("-32021");
            let text = format!("{error:?}");
            assert!(
                text.contains("-32021") || text.contains("MissingRequiredClientCapability"),
                "{text}"
            );
            assert!(text.contains("sampling"), "{text}");
        }
        _ => {
            let result = outcome.unwrap();
            assert_eq!(result.is_error, Some(true));
            assert!(text(&result).contains("sampling"), "{}", text(&result));
        }
    }
    let _ = conn.cancel().await;
    served.shutdown().await;
}

// ---------------------------------------------------------------------------------------
// Several instances on one Redis: each round of a call's questions on another instance.
// ---------------------------------------------------------------------------------------

/// A `tools/call` on 2026-07-28 with every capability declared, and `extra` params.
fn raw_call(id: u64, name: &str, arguments: Value, extra: Value) -> String {
    let mut params = json!({
        "name": name,
        "arguments": arguments,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": Revision::V2026_07_28.as_str(),
            "io.modelcontextprotocol/clientCapabilities":
                {"elicitation": {}, "sampling": {}, "roots": {}},
            "io.modelcontextprotocol/clientInfo": {"name": "cluster-test", "version": "0"},
        },
    });
    if let (Some(params), Value::Object(extra)) = (params.as_object_mut(), extra) {
        params.extend(extra);
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
}

/// The answers to an `InputRequiredResult`'s requests, by their method.
fn answers_to(input: &Value) -> Value {
    let mut answers = serde_json::Map::new();
    for (key, request) in input["inputRequests"].as_object().expect("inputRequests") {
        let answer = match request["method"].as_str() {
            Some("elicitation/create") => {
                json!({"action": "accept", "content": {"branch": "prod", "replicas": 2}})
            }
            Some("sampling/createMessage") => json!({
                "role": "assistant",
                "content": {"type": "text", "text": "looks fine"},
                "model": "m",
            }),
            Some("roots/list") => json!({"roots": [{"uri": "file:///cluster"}]}),
            other => panic!("unexpected request {other:?}"),
        };
        answers.insert(key.clone(), answer);
    }
    Value::Object(answers)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_round_of_a_calls_questions_may_reach_another_instance() {
    use crate::common::http::HttpClient;
    use dsh_mcp::store::RedisStore;
    use dsh_mcp::store::conformance::TestRedis;

    let redis = TestRedis::shared();
    let prefix = TestRedis::prefix("caller-cluster");
    let keys = dsh_mcp::StateKeys::random().unwrap();
    let mut instances = Vec::new();
    for _ in 0..3 {
        let store = RedisStore::connect(redis.url(), &prefix).await.unwrap();
        let server = server()
            .with_store(Arc::new(store))
            .with_state_keys(keys.clone());
        instances.push(Served::start(&server, Wire::Http).await);
    }
    let client = |i: usize| HttpClient::new(instances[i].url()).revision(Revision::V2026_07_28);
    let tag = "across-instances";
    // Round 1 on instance 0: the form.
    let first = client(0)
        .post(&raw_call(1, "deploy", json!({"tag": tag}), json!({})))
        .await
        .response();
    let input = &first["result"];
    assert_eq!(input["resultType"], "input_required", "{first}");
    let state = input["requestState"].as_str().unwrap().to_string();
    // A tampered state is refused, on any instance.
    let mut tampered = state.clone();
    tampered.push('x');
    let refused = client(1)
        .post(&raw_call(
            2,
            "deploy",
            json!({"tag": tag}),
            json!({"requestState": tampered, "inputResponses": answers_to(input)}),
        ))
        .await
        .response();
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    // Round 2 on instance 1: forwarded to instance 0, which holds the call; it asks the
    // model next.
    let second = client(1)
        .post(&raw_call(
            3,
            "deploy",
            json!({"tag": tag}),
            json!({"requestState": state, "inputResponses": answers_to(input)}),
        ))
        .await
        .response();
    let input2 = &second["result"];
    assert_eq!(input2["resultType"], "input_required", "{second}");
    let methods: Vec<&str> = input2["inputRequests"]
        .as_object()
        .unwrap()
        .values()
        .filter_map(|r| r["method"].as_str())
        .collect();
    assert_eq!(methods, ["sampling/createMessage"], "{second}");
    // The first state was used up: replayed on instance 2, refused.
    let replayed = client(2)
        .post(&raw_call(
            4,
            "deploy",
            json!({"tag": tag}),
            json!({"requestState": state, "inputResponses": answers_to(input)}),
        ))
        .await
        .response();
    assert_eq!(replayed["error"]["code"], -32602, "{replayed}");
    // Rounds 3 (roots) and 4 (the result) on instances 2 and 0.
    let state2 = input2["requestState"].as_str().unwrap();
    let third = client(2)
        .post(&raw_call(
            5,
            "deploy",
            json!({"tag": tag}),
            json!({"requestState": state2, "inputResponses": answers_to(input2)}),
        ))
        .await
        .response();
    let input3 = &third["result"];
    assert_eq!(input3["resultType"], "input_required", "{third}");
    let fourth = client(0)
        .post(&raw_call(
            6,
            "deploy",
            json!({"tag": tag}),
            json!({
                "requestState": input3["requestState"],
                "inputResponses": answers_to(input3),
            }),
        ))
        .await
        .response();
    let result = &fourth["result"];
    assert_eq!(result["isError"], false, "{fourth}");
    assert_eq!(
        result["content"][0]["text"],
        format!("{tag}: prod x2 (looks fine) in file:///cluster")
    );
    // The side effect between the questions ran once, on the instance holding the call.
    assert_eq!(effects(tag), 1);
    for served in instances {
        served.shutdown().await;
    }
}

// ---------------------------------------------------------------------------------------
// A call that asks first, then goes on as a task (`task_after_input`).
// ---------------------------------------------------------------------------------------

/// Note a side effect, ask a name, then go on as a task that greets.
#[tool(task = "optional", task_after_input)]
async fn greet_later(cx: ToolContext, tag: String) -> Result<String, ToolError> {
    EFFECTS.lock().unwrap().push(tag.clone());
    let Elicited::Accepted(target) = cx.elicit::<Target>("Where to?").await? else {
        return Ok("nothing".into());
    };
    let tasked = cx.continue_as_task().await;
    Ok(format!("{tag}: {} (as a task: {tasked})", target.branch))
}

/// A `tools/call` of `greet_later` on 2026-07-28 declaring `capabilities`, with `extra`
/// params.
fn later_call(id: u64, tag: &str, capabilities: Value, extra: Value) -> String {
    let mut params = json!({
        "name": "greet_later",
        "arguments": {"tag": tag},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": Revision::V2026_07_28.as_str(),
            "io.modelcontextprotocol/clientCapabilities": capabilities,
        },
    });
    if let (Some(params), Value::Object(extra)) = (params.as_object_mut(), extra) {
        params.extend(extra);
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_asks_then_goes_on_as_a_task_when_the_client_has_tasks() {
    use crate::common::http::HttpClient;

    let tools = crate::common::tools::Toolset::with_jobs().with(GreetLater);
    let http = dsh_mcp::serve_http(&tools.server(), dsh_mcp::HttpOptions::default())
        .await
        .unwrap();
    let client = HttpClient::new(http.url()).revision(Revision::V2026_07_28);
    let answer =
        json!({"target": {"action": "accept", "content": {"branch": "main", "replicas": 1}}});
    for (tag, capabilities, tasked) in [
        (
            "later-with-tasks",
            json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}),
            true,
        ),
        ("later-without-tasks", json!({"elicitation": {}}), false),
    ] {
        // Round 1: a question, no task.
        let first = client
            .post(&later_call(1, tag, capabilities.clone(), json!({})))
            .await
            .response();
        let input = &first["result"];
        assert_eq!(input["resultType"], "input_required", "{first}");
        assert!(input.get("taskId").is_none(), "{first}");
        let key = input["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .next()
            .unwrap()
            .clone();
        // Round 2: the answer; the body goes on as a task where the client has tasks.
        let second = client
            .post(&later_call(
                2,
                tag,
                capabilities,
                json!({
                    "requestState": input["requestState"],
                    "inputResponses": {key: answer["target"]},
                }),
            ))
            .await
            .response();
        let result = &second["result"];
        let text = if tasked {
            assert_eq!(result["resultType"], "task", "{second}");
            assert!(result.get("requestState").is_none(), "{second}");
            let id = result["taskId"].as_str().expect("a task id").to_string();
            poll_task_text(&client, &id).await
        } else {
            assert_eq!(result["resultType"], "complete", "{second}");
            result["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        };
        assert_eq!(text, format!("{tag}: main (as a task: {tasked})"));
        // What the body did before it asked happened once.
        assert_eq!(effects(tag), 1);
    }
    http.shutdown().await.unwrap();
}

/// Poll `tasks/get` of `id` until it completes: its result's text.
async fn poll_task_text(client: &crate::common::http::HttpClient, id: &str) -> String {
    let get = json!({
        "jsonrpc": "2.0", "id": 9, "method": "tasks/get",
        "params": {
            "taskId": id,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": Revision::V2026_07_28.as_str(),
                "io.modelcontextprotocol/clientCapabilities":
                    {"extensions": {"io.modelcontextprotocol/tasks": {}}},
            },
        },
    })
    .to_string();
    for _ in 0..400 {
        let got = client.post(&get).await.response();
        let task = &got["result"];
        if task["status"] == "completed" {
            return task["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_string();
        }
        assert!(
            task["status"] == "working",
            "the task neither works nor completed: {got}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    panic!("task {id} did not complete");
}
