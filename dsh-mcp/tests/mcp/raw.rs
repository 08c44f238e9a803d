//! The arguments of `tools/call` reach the registry as the text the client sent, over a
//! byte stream and over Streamable HTTP: duplicate keys (at the root and nested), `-0`,
//! `1e400` and too-deep nesting are `INVALID_ARGS` results exactly as with text
//! arguments, serde_json's private raw-value key is a key like any other, a message that
//! is not JSON gets a JSON-RPC parse error, and a request reusing an id in flight is
//! refused without running. The messages are written by hand, as a client's bytes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dsh_mcp::{HttpOptions, McpServer, serve_http};
use dsh_runtime::{Registry, ToolCall, ToolError, tool};
use serde_json::{Value, json};

use crate::common::cases;
use crate::common::http::HttpClient;
use crate::common::rpc::{Rpc, text_of};
use crate::common::tools::{Greet, Toolset};
use crate::common::wire::Revision;

/// How many calls of `tagged_nap` ran, by tag.
static NAPS: std::sync::LazyLock<Mutex<HashMap<String, usize>>> =
    std::sync::LazyLock::new(Mutex::default);

fn naps(tag: &str) -> usize {
    NAPS.lock().unwrap().get(tag).copied().unwrap_or(0)
}

/// Count the call by its tag, then sleep a little.
#[tool]
async fn tagged_nap(tag: String) -> Result<String, ToolError> {
    *NAPS.lock().unwrap().entry(tag.clone()).or_default() += 1;
    tokio::time::sleep(Duration::from_millis(400)).await;
    Ok(tag)
}

/// A tool answering the object it was given as `value` (`echo`).
fn echo_object() -> dsh_runtime::DynTool {
    let lossless = |v: Value| dsh_runtime::json::to_value(&v).unwrap();
    let parameters = lossless(json!({
        "type": "object",
        "properties": {"value": {"type": "object", "additionalProperties": true}},
        "required": ["value"],
        "additionalProperties": false
    }));
    let output = lossless(json!({"type": "object", "additionalProperties": true}));
    let raw = dsh_runtime::RawTool::new(
        "echo",
        "Answer the object given.",
        &parameters,
        &output,
        |args: dsh_runtime::json::Value, _cx: dsh_runtime::ToolContext| async move {
            args.as_object()
                .and_then(|o| o.get("value"))
                .cloned()
                .ok_or_else(|| ToolError::new("no value"))
        },
    )
    .unwrap();
    dsh_runtime::DynTool::new(raw)
}

/// A registry of `greet`, `tagged_nap` and `echo`.
fn tools() -> Toolset {
    let mut tools = Toolset::new().with(Greet).with(TaggedNap);
    let echo = tools.registry.register_dyn(echo_object()).unwrap();
    tools.hold(echo);
    tools
}

/// Arguments whose `value` is an object with serde_json's private raw-value key first,
/// and that object, which `echo` must answer unchanged.
const MAGIC: &str = r#"{"value":{"$serde_json::private::RawValue":"{\"a\":1}","b":2}}"#;

fn magic_value() -> Value {
    json!({"$serde_json::private::RawValue": "{\"a\":1}", "b": 2})
}

/// Hostile argument texts, each with the first sentence our parser reports for it.
fn hostile() -> Vec<(String, &'static str)> {
    let deep = format!("{}1{}", "[".repeat(300), "]".repeat(300));
    vec![
        (
            r#"{"name":"a.txt","name":"b.txt"}"#.to_string(),
            "arguments have a duplicate key",
        ),
        (
            r#"{"name":"a","more":{"k":1,"k":2}}"#.to_string(),
            "arguments have a duplicate key",
        ),
        (
            r#"{"name":"a","n":-0}"#.to_string(),
            "arguments are not lossless JSON",
        ),
        (
            r#"{"name":"a","n":1e400}"#.to_string(),
            "arguments are not lossless JSON",
        ),
        (
            format!(r#"{{"name":"a","deep":{deep}}}"#),
            "arguments are nested too deeply",
        ),
    ]
}

/// The text the registry answers for the same arguments given as text directly (an
/// `INVALID_ARGS` failure).
async fn direct_text(registry: &Registry, args: &str) -> String {
    let result = registry
        .execute(ToolCall::new("direct", "greet", args))
        .await;
    assert_eq!(
        result.error_code(),
        Some(dsh_runtime::PipelineCode::InvalidArgs),
        "{args}: {}",
        result.text()
    );
    result.text()
}

fn call_line(id: u64, name: &str, args: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{args}}}}}"#
    )
}

/// A client of a new byte stream to `server`, initialized on 2025-11-25.
async fn line_client(server: &McpServer) -> Rpc {
    let mut client = Rpc::stream(server);
    let init = client.initialize(Revision::V2025_11_25, json!({})).await;
    assert!(init["serverInfo"].is_object(), "{init}");
    client
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_arguments_reach_the_lossless_parser() {
    let tools = tools();
    let registry = &tools.registry;
    let mut client = line_client(&tools.server()).await;
    for (i, (args, sentence)) in hostile().into_iter().enumerate() {
        let id = 10 + i as u64;
        client.send_text(&call_line(id, "greet", &args)).await;
        let answer = client.answer_to(&json!(id)).await;
        let result = &answer["result"];
        assert_eq!(result["isError"], true, "{args}: {answer}");
        let text = text_of(result);
        assert!(text.contains(sentence), "{args}: {text}");
        assert_eq!(text, direct_text(registry, &args).await, "{args}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_raw_value_key_is_a_key_like_any_other_over_a_stream() {
    let tools = tools();
    let mut client = line_client(&tools.server()).await;
    client.send_text(&call_line(5, "echo", MAGIC)).await;
    let answer = client.answer_to(&json!(5)).await;
    let result = &answer["result"];
    assert_eq!(result["isError"], false, "{answer}");
    assert_eq!(result["structuredContent"], magic_value(), "{answer}");
    // A first key at the root is read as a key too.
    let args = r#"{"$serde_json::private::RawValue":"x","name":"Ada"}"#;
    client.send_text(&call_line(6, "greet", args)).await;
    let answer = client.answer_to(&json!(6)).await;
    let text = text_of(&answer["result"]);
    assert!(
        text.contains(r#"ignored unknown argument "$serde_json::private::RawValue""#),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_that_is_not_json_gets_a_parse_error_over_a_stream() {
    let tools = tools();
    let mut client = line_client(&tools.server()).await;
    client
        .send_text(r#"{"jsonrpc":"2.0","id":9,"method":"tools/call""#)
        .await;
    let answer = client.answer_to(&Value::Null).await;
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    // The connection goes on.
    client
        .send_text(&call_line(10, "greet", r#"{"name":"Bo"}"#))
        .await;
    let answer = client.answer_to(&json!(10)).await;
    assert_eq!(answer["result"]["isError"], false, "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_id_in_flight_is_refused_over_a_stream() {
    let tools = tools();
    let mut client = line_client(&tools.server()).await;
    client
        .send_text(&call_line(77, "tagged_nap", r#"{"tag":"first"}"#))
        .await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    client
        .send_text(&call_line(77, "tagged_nap", r#"{"tag":"second"}"#))
        .await;
    let refused = client.answer_to(&json!(77)).await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("77") && message.contains("in use"),
        "{message}"
    );
    let answered = client.answer_to(&json!(77)).await;
    assert_eq!(
        answered["result"]["structuredContent"]["result"], "first",
        "{answered}"
    );
    assert_eq!((naps("first"), naps("second")), (1, 0));
    // Once answered, the id is free again.
    client
        .send_text(&call_line(77, "greet", r#"{"name":"Cy"}"#))
        .await;
    let again = client.answer_to(&json!(77)).await;
    assert_eq!(again["result"]["isError"], false, "{again}");
}

/// A raw HTTP client of `url` on 2025-11-25 that initialized, in a session when the
/// server has `sessions`.
async fn http_client(url: String, sessions: bool) -> HttpClient {
    let mut client = HttpClient::new(url).revision(Revision::V2025_11_25);
    client.open_session(Revision::V2025_11_25, json!({})).await;
    if sessions {
        client.session.as_ref().expect("a session id");
    }
    client
}

/// POST `body`: the status, and the response among the answer's messages (a JSON body
/// or the events of a stream).
async fn post_answer(client: &HttpClient, body: &str) -> (u16, Value) {
    let reply = client.post(body).await;
    (reply.status, reply.response())
}

cases! {
    http_arguments_reach_the_lossless_parser_with_sessions =>
        http_arguments_reach_the_lossless_parser(true);
    http_arguments_reach_the_lossless_parser_without_sessions =>
        http_arguments_reach_the_lossless_parser(false);
}

async fn http_arguments_reach_the_lossless_parser(sessions: bool) {
    let tools = tools();
    let registry = &tools.registry;
    let http = serve_http(&tools.server(), HttpOptions::default().sessions(sessions))
        .await
        .unwrap();
    let client = http_client(http.url(), sessions).await;
    for (i, (args, sentence)) in hostile().into_iter().enumerate() {
        let (status, answer) = post_answer(&client, &call_line(i as u64 + 1, "greet", &args)).await;
        assert_eq!(status, 200, "{args}: {answer}");
        let result = &answer["result"];
        assert_eq!(
            result["isError"], true,
            "sessions {sessions}, {args}: {answer}"
        );
        let text = text_of(result);
        assert!(text.contains(sentence), "{args}: {text}");
        assert_eq!(text, direct_text(registry, &args).await, "{args}");
    }
    let (_, answer) = post_answer(&client, &call_line(40, "echo", MAGIC)).await;
    assert_eq!(
        answer["result"]["structuredContent"],
        magic_value(),
        "sessions {sessions}: {answer}"
    );
    let (status, answer) = post_answer(&client, r#"{"jsonrpc":"2.0","id":41,"method":"#).await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    http.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_id_in_flight_is_refused_over_http() {
    let tools = tools();
    let http = serve_http(&tools.server(), HttpOptions::default())
        .await
        .unwrap();
    let client = Arc::new(http_client(http.url(), true).await);
    let first = {
        let client = client.clone();
        tokio::spawn(async move {
            post_answer(
                &client,
                &call_line(88, "tagged_nap", r#"{"tag":"http-first"}"#),
            )
            .await
        })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (status, refused) = post_answer(
        &client,
        &call_line(88, "tagged_nap", r#"{"tag":"http-second"}"#),
    )
    .await;
    assert_eq!(status, 200, "{refused}");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert_eq!(refused["id"], 88, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("88") && message.contains("in use"),
        "{message}"
    );
    let (_, answered) = first.await.unwrap();
    assert_eq!(
        answered["result"]["structuredContent"]["result"], "http-first",
        "{answered}"
    );
    assert_eq!((naps("http-first"), naps("http-second")), (1, 0));
    // Once answered, the id is free again.
    let (_, again) = post_answer(&client, &call_line(88, "greet", r#"{"name":"Cy"}"#)).await;
    assert_eq!(again["result"]["isError"], false, "{again}");
    http.shutdown().await.unwrap();
}
