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
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Greet someone.
#[tool(read_only)]
async fn greet(name: String) -> Result<String, ToolError> {
    Ok(format!("Hello, {name}!"))
}

/// How many calls of `nap` ran, by tag.
static NAPS: std::sync::LazyLock<Mutex<HashMap<String, usize>>> =
    std::sync::LazyLock::new(Mutex::default);

fn naps(tag: &str) -> usize {
    NAPS.lock().unwrap().get(tag).copied().unwrap_or(0)
}

/// Count the call by its tag, then sleep a little.
#[tool]
async fn nap(tag: String) -> Result<String, ToolError> {
    *NAPS.lock().unwrap().entry(tag.clone()).or_default() += 1;
    tokio::time::sleep(Duration::from_millis(400)).await;
    Ok(tag)
}

/// A tool answering the object it was given as `value`.
fn echo() -> dsh_runtime::DynTool {
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

fn registry() -> (Registry, Vec<dsh_runtime::RegistrationHandle>) {
    let registry = Registry::new();
    let regs = vec![
        registry.register(Greet).unwrap(),
        registry.register(Nap).unwrap(),
        registry.register_dyn(echo()).unwrap(),
    ];
    (registry, regs)
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

/// A message of the server, read with the lossless parser: `serde_json` (with its
/// `raw_value` feature, as in this workspace) would itself rewrite an object whose first
/// key is its private raw-value key.
fn read_json(text: &str) -> Value {
    match dsh_runtime::json::parse(text) {
        Ok(value) => dsh_runtime::json::to_serde(&value),
        Err(e) => panic!("the server sent a message that is not JSON ({e}): {text}"),
    }
}

fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// A client writing raw lines to a server on an in-memory stream.
struct LineClient {
    lines: tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    _server: tokio::task::JoinHandle<()>,
}

impl LineClient {
    async fn start(server: &McpServer) -> LineClient {
        let (client_io, server_io) = tokio::io::duplex(1 << 20);
        let server = server.clone();
        let task = tokio::spawn(async move {
            let _ = server.serve(server_io).await;
        });
        let (read, write) = tokio::io::split(client_io);
        let mut client = LineClient {
            lines: BufReader::new(read).lines(),
            write,
            _server: task,
        };
        client
            .send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#)
            .await;
        let init = client.answer_to(&json!(0)).await;
        assert!(init["result"]["serverInfo"].is_object(), "{init}");
        client
            .send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
        client
    }

    async fn send(&mut self, line: &str) {
        self.write.write_all(line.as_bytes()).await.unwrap();
        self.write.write_all(b"\n").await.unwrap();
        self.write.flush().await.unwrap();
    }

    /// The next message answering `id` (notifications skipped), within 10 s.
    async fn answer_to(&mut self, id: &Value) -> Value {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let line = tokio::time::timeout_at(deadline, self.lines.next_line())
                .await
                .unwrap_or_else(|_| panic!("no answer to id {id} within 10 s"))
                .unwrap()
                .expect("the server closed the connection");
            let message = read_json(&line);
            if message.get("method").is_none() && &message["id"] == id {
                return message;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_arguments_reach_the_lossless_parser() {
    let (registry, _regs) = registry();
    let mut client = LineClient::start(&McpServer::new(registry.clone())).await;
    for (i, (args, sentence)) in hostile().into_iter().enumerate() {
        let id = 10 + i as u64;
        client.send(&call_line(id, "greet", &args)).await;
        let answer = client.answer_to(&json!(id)).await;
        let result = &answer["result"];
        assert_eq!(result["isError"], true, "{args}: {answer}");
        let text = text_of(result);
        assert!(text.contains(sentence), "{args}: {text}");
        assert_eq!(text, direct_text(&registry, &args).await, "{args}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_raw_value_key_is_a_key_like_any_other_over_a_stream() {
    let (registry, _regs) = registry();
    let mut client = LineClient::start(&McpServer::new(registry)).await;
    client.send(&call_line(5, "echo", MAGIC)).await;
    let answer = client.answer_to(&json!(5)).await;
    let result = &answer["result"];
    assert_eq!(result["isError"], false, "{answer}");
    assert_eq!(result["structuredContent"], magic_value(), "{answer}");
    // A first key at the root is read as a key too.
    let args = r#"{"$serde_json::private::RawValue":"x","name":"Ada"}"#;
    client.send(&call_line(6, "greet", args)).await;
    let answer = client.answer_to(&json!(6)).await;
    let text = text_of(&answer["result"]);
    assert!(
        text.contains(r#"ignored unknown argument "$serde_json::private::RawValue""#),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_that_is_not_json_gets_a_parse_error_over_a_stream() {
    let (registry, _regs) = registry();
    let mut client = LineClient::start(&McpServer::new(registry)).await;
    client
        .send(r#"{"jsonrpc":"2.0","id":9,"method":"tools/call""#)
        .await;
    let answer = client.answer_to(&Value::Null).await;
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    // The connection goes on.
    client
        .send(&call_line(10, "greet", r#"{"name":"Bo"}"#))
        .await;
    let answer = client.answer_to(&json!(10)).await;
    assert_eq!(answer["result"]["isError"], false, "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_id_in_flight_is_refused_over_a_stream() {
    let (registry, _regs) = registry();
    let mut client = LineClient::start(&McpServer::new(registry)).await;
    client
        .send(&call_line(77, "nap", r#"{"tag":"first"}"#))
        .await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    client
        .send(&call_line(77, "nap", r#"{"tag":"second"}"#))
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
        .send(&call_line(77, "greet", r#"{"name":"Cy"}"#))
        .await;
    let again = client.answer_to(&json!(77)).await;
    assert_eq!(again["result"]["isError"], false, "{again}");
}

/// A Streamable HTTP session driven with plain requests.
struct HttpSession {
    http: reqwest::Client,
    url: String,
    session: Option<String>,
}

impl HttpSession {
    async fn start(url: String, sessions: bool) -> HttpSession {
        let mut s = HttpSession {
            http: reqwest::Client::new(),
            url,
            session: None,
        };
        let (status, headers, init) = s
            .post(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#)
            .await;
        assert_eq!(status, 200, "{init:?}");
        if sessions {
            s.session = Some(
                headers
                    .get("mcp-session-id")
                    .and_then(|v| v.to_str().ok())
                    .expect("a session id")
                    .to_string(),
            );
            let (status, _, _) = s
                .post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
                .await;
            assert_eq!(status, 202);
        }
        s
    }

    /// POST `body`; the status, headers and the JSON-RPC messages of the answer (a JSON
    /// body or the events of a stream).
    async fn post(&self, body: &str) -> (u16, reqwest::header::HeaderMap, Vec<Value>) {
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .timeout(Duration::from_secs(10))
            .body(body.to_string());
        if let Some(session) = &self.session {
            request = request.header("mcp-session-id", session);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await.unwrap();
        let messages = if text.trim_start().starts_with('{') {
            vec![read_json(&text)]
        } else {
            text.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .filter(|d| !d.trim().is_empty())
                .map(|d| read_json(d.trim()))
                .collect()
        };
        (status, headers, messages)
    }

    async fn answer(&self, body: &str) -> (u16, Value) {
        let (status, _, messages) = self.post(body).await;
        let answer = messages
            .into_iter()
            .find(|m| m.get("method").is_none())
            .unwrap_or(Value::Null);
        (status, answer)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_arguments_reach_the_lossless_parser() {
    let (registry, _regs) = registry();
    for sessions in [true, false] {
        let http = serve_http(
            &McpServer::new(registry.clone()),
            HttpOptions::default().sessions(sessions),
        )
        .await
        .unwrap();
        let client = HttpSession::start(http.url(), sessions).await;
        for (i, (args, sentence)) in hostile().into_iter().enumerate() {
            let (status, answer) = client
                .answer(&call_line(i as u64 + 1, "greet", &args))
                .await;
            assert_eq!(status, 200, "{args}: {answer}");
            let result = &answer["result"];
            assert_eq!(
                result["isError"], true,
                "sessions {sessions}, {args}: {answer}"
            );
            let text = text_of(result);
            assert!(text.contains(sentence), "{args}: {text}");
            assert_eq!(text, direct_text(&registry, &args).await, "{args}");
        }
        let (_, answer) = client.answer(&call_line(40, "echo", MAGIC)).await;
        assert_eq!(
            answer["result"]["structuredContent"],
            magic_value(),
            "sessions {sessions}: {answer}"
        );
        let (status, answer) = client.answer(r#"{"jsonrpc":"2.0","id":41,"method":"#).await;
        assert_eq!(status, 400, "{answer}");
        assert_eq!(answer["error"]["code"], -32700, "{answer}");
        http.shutdown().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_id_in_flight_is_refused_over_http() {
    let (registry, _regs) = registry();
    let http = serve_http(&McpServer::new(registry), HttpOptions::default())
        .await
        .unwrap();
    let client = Arc::new(HttpSession::start(http.url(), true).await);
    let first = {
        let client = client.clone();
        tokio::spawn(async move {
            client
                .answer(&call_line(88, "nap", r#"{"tag":"http-first"}"#))
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (status, refused) = client
        .answer(&call_line(88, "nap", r#"{"tag":"http-second"}"#))
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
    let (_, again) = client
        .answer(&call_line(88, "greet", r#"{"name":"Cy"}"#))
        .await;
    assert_eq!(again["result"]["isError"], false, "{again}");
    http.shutdown().await.unwrap();
}
