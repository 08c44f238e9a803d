//! dsh-mcp's client (`ClientBuilder`, `import_from`): an imported tool that logs, asks
//! a form, samples, lists roots and reports progress during a call reaches the caller
//! of the call that invoked it, over stdio and HTTP on revisions 2025-11-25
//! (server-to-client requests) and 2026-07-28 (`InputRequiredResult` rounds); a call
//! without a caller gets a refusal sent upstream, never a hang; the re-served imported
//! tool relays the form to its own MCP client; the revisions offered are negotiated.
#![allow(deprecated)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use dsh_mcp::rmcp::model::ProtocolVersion;
use dsh_mcp::{ClientBuilder, ConnectError, ImportOptions, McpClient, McpServer, import_from};
use dsh_runtime::caller::{
    AskingCall, CallerAnswer, CallerError, CallerFuture, CallerHandler, CallerRequest, Elicited,
    FormAnswer, LogLevel, LogMessage, Root, SampleRequest, SampledMessage, with_caller,
};
use dsh_runtime::{
    ProgressReporter, Registry, ToolCall, ToolContext, ToolError, ToolSchema, tool, with_progress,
};
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    Implementation,
};
use rmcp::service::{ClientServiceExt, RequestContext};
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::common::cases;
use crate::common::wire::{Served, Wire, call, result_text};

/// Where to deploy.
#[derive(ToolSchema, Deserialize)]
struct Target {
    /// The branch.
    branch: String,
    /// How many replicas.
    replicas: u32,
}

/// Log, report progress, ask a form, the model and the roots.
#[tool]
async fn rollout(cx: ToolContext, tag: String) -> Result<String, ToolError> {
    cx.log(LogLevel::Warning, format!("rollout {tag}: asking"));
    cx.report_progress(1.0, Some(3.0), Some("asking"));
    let target = match cx.elicit::<Target>("Where to?").await? {
        Elicited::Accepted(target) => target,
        Elicited::Declined | Elicited::Cancelled => return Ok("not rolled out".into()),
    };
    cx.report_progress(2.0, Some(3.0), None);
    let note = cx
        .sample(SampleRequest::new(
            format!("note for {}", target.branch),
            20,
        ))
        .await?;
    let roots = cx.roots().await?;
    Ok(format!(
        "{tag}: {} x{} ({}) in {}",
        target.branch,
        target.replicas,
        note.text(),
        roots.first().map_or("-", |r| r.uri.as_str())
    ))
}

/// The upstream server: `rollout`.
fn upstream() -> McpServer {
    let registry = Registry::new();
    let _ = registry.register(Rollout).unwrap();
    McpServer::new(registry)
}

/// The host's user: answers every request, records what it was asked and the logs.
#[derive(Default)]
struct Host {
    asked: Mutex<Vec<String>>,
    logs: Mutex<Vec<LogMessage>>,
    progress: Arc<Mutex<Vec<f64>>>,
    /// Answer a form once the log and progress sent before it arrived, and a sampling
    /// request once the progress sent before it did: rmcp's client handles each
    /// notification on a task of its own, so one may trail the call's result.
    in_order: bool,
}

impl Host {
    /// Wait (a bound against a hang only) until `ready` holds, when answering in order.
    async fn after(&self, ready: impl Fn(&Host) -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while self.in_order && !ready(self) && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

impl CallerHandler for Host {
    fn request<'a>(
        &'a self,
        call: AskingCall<'a>,
        request: CallerRequest,
    ) -> CallerFuture<'a, Result<CallerAnswer, CallerError>> {
        let tool = call.tool.to_string();
        Box::pin(async move {
            let answer = match &request {
                CallerRequest::Form(form) => {
                    self.after(|h| {
                        !h.logs.lock().unwrap().is_empty() && !h.progress.lock().unwrap().is_empty()
                    })
                    .await;
                    self.asked
                        .lock()
                        .unwrap()
                        .push(format!("{tool}: form {}", form.message));
                    let answer = dsh_runtime::json::parse(r#"{"branch":"main","replicas":2}"#)
                        .map_err(|e| CallerError::Failed(e.to_string()))?;
                    CallerAnswer::Form(FormAnswer::Accepted(answer))
                }
                CallerRequest::Sample(sample) => {
                    self.after(|h| h.progress.lock().unwrap().len() >= 2).await;
                    let prompt = serde_json::to_value(&sample.messages[0].content).unwrap();
                    self.asked
                        .lock()
                        .unwrap()
                        .push(format!("{tool}: sample {}", prompt["text"]));
                    CallerAnswer::Sample(SampledMessage::new(
                        dsh_runtime::content::ContentBlock::text("looks fine"),
                        "host-model",
                    ))
                }
                CallerRequest::Roots => {
                    self.asked.lock().unwrap().push(format!("{tool}: roots"));
                    CallerAnswer::Roots(vec![Root::new("file:///srv/app")])
                }
                _ => return Err(CallerError::Unsupported { capability: "url" }),
            };
            Ok(answer)
        })
    }

    fn log(&self, _call: AskingCall<'_>, message: LogMessage) {
        self.logs.lock().unwrap().push(message);
    }
}

/// Connect `builder` to `served` over its wire.
async fn connect(builder: &ClientBuilder, served: &Served) -> Result<McpClient, ConnectError> {
    match &served.http {
        Some(http) => builder.connect_http(&http.url()).await,
        None => {
            let (client_io, server_io) = tokio::io::duplex(1 << 16);
            let server = served.server.clone();
            tokio::spawn(async move {
                let _ = server.serve(server_io).await;
            });
            builder.connect(client_io).await
        }
    }
}

/// Import the upstream's tools into a new registry.
async fn imported(client: &McpClient) -> Registry {
    let imported = import_from(client, &ImportOptions::new()).await.unwrap();
    assert!(imported.rejected.is_empty(), "{:?}", imported.rejected);
    let registry = Registry::new();
    for tool in imported.tools {
        let _ = registry.register_dyn(tool).unwrap();
    }
    registry
}

fn builder(revision: ProtocolVersion) -> ClientBuilder {
    ClientBuilder::new("relay-test", "1.2.3").revisions([revision])
}

cases! {
    relayed_over_stdio_on_2025_11_25 => relays_to_the_callers_handler(Wire::Stdio, ProtocolVersion::V_2025_11_25);
    relayed_over_stdio_on_2026_07_28 => relays_to_the_callers_handler(Wire::Stdio, ProtocolVersion::V_2026_07_28);
    relayed_over_http_on_2025_11_25 => relays_to_the_callers_handler(Wire::Http, ProtocolVersion::V_2025_11_25);
    relayed_over_http_on_2026_07_28 => relays_to_the_callers_handler(Wire::Http, ProtocolVersion::V_2026_07_28);
}

async fn relays_to_the_callers_handler(wire: Wire, revision: ProtocolVersion) {
    let served = Served::start(&upstream(), wire).await;
    let client = connect(&builder(revision.clone()), &served).await.unwrap();
    let info = client.peer().peer_info().unwrap();
    assert_eq!(info.protocol_version, revision);
    let registry = imported(&client).await;

    let host = Arc::new(Host {
        in_order: revision == ProtocolVersion::V_2025_11_25,
        ..Host::default()
    });
    let progress = host.progress.clone();
    let seen = progress.clone();
    let reporter = ProgressReporter::new(move |p| seen.lock().unwrap().push(p.progress));
    let call = registry.execute(ToolCall::new("c1", "rollout", r#"{"tag":"r1"}"#));
    let result = with_progress(reporter, with_caller(host.clone(), call)).await;
    assert_eq!(
        result.text(),
        "r1: main x2 (looks fine) in file:///srv/app",
        "{result:?}"
    );
    // Every request reached the caller of the imported call, as the imported tool.
    assert_eq!(
        *host.asked.lock().unwrap(),
        [
            "rollout: form Where to?",
            "rollout: sample \"note for main\"",
            "rollout: roots"
        ]
    );
    // 2025-11-25 sends logs and progress as notifications (2026-07-28 sends no logs
    // to a request that names no log level).
    if revision == ProtocolVersion::V_2025_11_25 {
        let logs = host.logs.lock().unwrap();
        assert_eq!(logs.len(), 1, "{logs:?}");
        assert_eq!(logs[0].level, LogLevel::Warning);
        assert_eq!(logs[0].data.as_str(), Some("rollout r1: asking"));
        assert_eq!(*progress.lock().unwrap(), [1.0, 2.0]);
    }
    client.cancel().await.unwrap();
    served.shutdown().await;
}

cases! {
    refused_without_a_caller_over_stdio_on_2025_11_25 => a_call_without_a_caller_is_refused(Wire::Stdio, ProtocolVersion::V_2025_11_25);
    refused_without_a_caller_over_http_on_2026_07_28 => a_call_without_a_caller_is_refused(Wire::Http, ProtocolVersion::V_2026_07_28);
}

/// No caller around the call and none for the connection: the server's form is refused
/// (not left waiting), and the call fails saying why.
async fn a_call_without_a_caller_is_refused(wire: Wire, revision: ProtocolVersion) {
    let served = Served::start(&upstream(), wire).await;
    let client = connect(&builder(revision), &served).await.unwrap();
    let registry = imported(&client).await;
    let call = registry.execute(ToolCall::new("c1", "rollout", r#"{"tag":"r2"}"#));
    // A bound against a hang only: the refusal comes at once.
    let result = tokio::time::timeout(Duration::from_secs(30), call)
        .await
        .expect("the call ended");
    assert!(result.is_error(), "{result:?}");
    let text = result.text();
    assert!(
        text.contains("no caller handler") || text.contains("nobody can be asked"),
        "{text}"
    );
    client.cancel().await.unwrap();
    served.shutdown().await;
}

/// A connection-wide handler answers what a call without a caller is asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_connections_handler_answers_calls_without_a_caller() {
    let served = Served::start(&upstream(), Wire::Stdio).await;
    let host = Arc::new(Host::default());
    let builder = builder(ProtocolVersion::V_2025_11_25).caller(host.clone());
    let client = connect(&builder, &served).await.unwrap();
    let registry = imported(&client).await;
    let result = registry
        .execute(ToolCall::new("c1", "rollout", r#"{"tag":"r3"}"#))
        .await;
    assert_eq!(result.text(), "r3: main x2 (looks fine) in file:///srv/app");
    assert_eq!(host.asked.lock().unwrap().len(), 3);
    client.cancel().await.unwrap();
}

/// A client relaying no kind declares no capability: the server does not ask, and its
/// body's request fails as the protocol has it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_relaying_nothing_declares_nothing() {
    let served = Served::start(&upstream(), Wire::Stdio).await;
    let host = Arc::new(Host::default());
    let builder = builder(ProtocolVersion::V_2025_11_25).relay([]);
    let client = connect(&builder, &served).await.unwrap();
    let registry = imported(&client).await;
    let call = registry.execute(ToolCall::new("c1", "rollout", r#"{"tag":"r4"}"#));
    let result = with_caller(host.clone(), call).await;
    assert!(result.is_error(), "{result:?}");
    assert!(result.text().contains("elicitation"), "{}", result.text());
    assert!(host.asked.lock().unwrap().is_empty());
    client.cancel().await.unwrap();
}

/// The revisions offered: the default reaches 2026-07-28 on a server that speaks it,
/// one older revision is taken when offered alone, and a server answering a revision
/// that was not offered is refused with both sides named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revisions_are_negotiated() {
    let served = Served::start(&upstream(), Wire::Http).await;
    let default = ClientBuilder::new("relay-test", "1");
    let client = connect(&default, &served).await.unwrap();
    let info = client.peer().peer_info().unwrap();
    assert_eq!(info.protocol_version, ProtocolVersion::V_2026_07_28);
    client.cancel().await.unwrap();

    let old = builder(ProtocolVersion::V_2025_11_25);
    let client = connect(&old, &served).await.unwrap();
    let info = client.peer().peer_info().unwrap();
    assert_eq!(info.protocol_version, ProtocolVersion::V_2025_11_25);
    client.cancel().await.unwrap();

    // A revision before any the server speaks: it answers with one of its own.
    let ancient: ProtocolVersion = serde_json::from_value(json!("2023-01-01")).unwrap();
    let unknown = builder(ancient);
    match connect(&unknown, &served).await {
        Err(e @ ConnectError::Revision { .. }) => {
            let text = e.to_string();
            assert!(text.contains("2023-01-01"), "{text}");
            assert!(text.contains("2025-11-25"), "{text}");
        }
        Err(e) => panic!("another error: {e}"),
        Ok(_) => panic!("connected on a revision not offered"),
    }
    assert!(matches!(
        ClientBuilder::new("x", "1")
            .revisions([])
            .connect_http(&served.url())
            .await,
        Err(ConnectError::NoRevision)
    ));
    served.shutdown().await;
}

/// The downstream MCP client's user: answers forms with a fixed answer, records them.
#[derive(Clone, Default)]
struct User {
    forms: Arc<Mutex<Vec<Value>>>,
}

impl ClientHandler for User {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = ClientCapabilities::builder()
            .enable_elicitation()
            .build()
            .elicitation;
        ClientConfig::new(capabilities, Implementation::new("downstream-user", "0"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.forms
            .lock()
            .unwrap()
            .push(serde_json::to_value(&request).unwrap_or_default());
        Ok(ElicitResult::new(ElicitationAction::Accept)
            .with_content(json!({"branch": "release", "replicas": 5})))
    }
}

/// Ask a form only.
#[tool]
async fn pick(cx: ToolContext) -> Result<String, ToolError> {
    match cx.elicit::<Target>("Pick a target").await? {
        Elicited::Accepted(t) => Ok(format!("{} x{}", t.branch, t.replicas)),
        _ => Ok("none".into()),
    }
}

/// An upstream tool's form, imported and served again, reaches the downstream MCP
/// client's user (as a proxy relays it), and its answer goes back up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reserved_imported_tool_relays_the_form_to_its_own_client() {
    let registry = Registry::new();
    let _ = registry.register(Pick).unwrap();
    let served = Served::start(&McpServer::new(registry), Wire::Http).await;
    let client = connect(&builder(ProtocolVersion::V_2025_11_25), &served)
        .await
        .unwrap();
    let middle = imported(&client).await;

    let (user_io, middle_io) = tokio::io::duplex(1 << 16);
    let server = McpServer::new(middle);
    tokio::spawn(async move {
        let _ = server.serve(middle_io).await;
    });
    let user = User::default();
    let downstream = user
        .clone()
        .serve_with_lifecycle(user_io, rmcp::service::ClientLifecycleMode::Initialize)
        .await
        .unwrap();
    let result = downstream.call_tool(call("pick", json!({}))).await.unwrap();
    assert_eq!(result_text(&result), "release x5");
    let forms = user.forms.lock().unwrap().clone();
    assert_eq!(forms.len(), 1);
    assert_eq!(forms[0]["message"], "Pick a target");
    assert_eq!(
        forms[0]["requestedSchema"]["properties"]["replicas"]["type"],
        "integer"
    );
    downstream.cancel().await.unwrap();
    client.cancel().await.unwrap();
    served.shutdown().await;
}

/// The builder's headers and bearer token go with its HTTP requests (seen by a listener
/// that reads the first request and closes); a header that is not one is an error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headers_and_the_bearer_token_go_with_every_request() {
    use tokio::io::AsyncReadExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let heard = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut buf = vec![0u8; 8192];
        let mut text = String::new();
        while !text.contains("\r\n\r\n") {
            let n = socket.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            text.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
        text.to_ascii_lowercase()
    });
    let builder = ClientBuilder::new("relay-test", "1")
        .header("X-Tenant", "acme")
        .bearer_token("s3cret")
        .request_timeout(Duration::from_secs(5));
    assert!(builder.connect_http(&url).await.is_err(), "nobody answered");
    let request = heard.await.unwrap();
    assert!(request.contains("x-tenant: acme"), "{request}");
    assert!(
        request.contains("authorization: bearer s3cret"),
        "{request}"
    );

    let bad = ClientBuilder::new("relay-test", "1").header("Bad Header", "x");
    match bad.connect_http(&url).await {
        Err(e @ ConnectError::Header(_)) => assert!(e.to_string().contains("Bad Header")),
        Err(e) => panic!("another error: {e}"),
        Ok(_) => panic!("connected with an invalid header"),
    }
}

/// The server's end of a byte stream, written by hand: a server that sends requests
/// whatever the client declared.
struct HandServer {
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
}

impl HandServer {
    /// Connect `builder` to a hand-written server on 2025-11-25; the client's
    /// `initialize` capabilities with the connection.
    async fn connect(builder: ClientBuilder) -> (HandServer, McpClient, Value) {
        use tokio::io::AsyncBufReadExt;
        let (client_io, server_io) = tokio::io::duplex(1 << 16);
        let client = tokio::spawn(async move { builder.connect(client_io).await });
        let (read, write) = tokio::io::split(server_io);
        let mut server = HandServer {
            lines: tokio::io::BufReader::new(read).lines(),
            write,
        };
        let initialize = server.next().await;
        assert_eq!(initialize["method"], "initialize", "{initialize}");
        server
            .send(json!({"jsonrpc": "2.0", "id": initialize["id"], "result": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "hand", "version": "1"},
            }}))
            .await;
        let initialized = server.next().await;
        assert_eq!(
            initialized["method"], "notifications/initialized",
            "{initialized}"
        );
        let client = client.await.unwrap().unwrap();
        (server, client, initialize["params"]["capabilities"].clone())
    }

    /// The client's next message (a bound against a hang only).
    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(crate::common::PATIENCE, self.lines.next_line())
            .await
            .expect("the client answered")
            .unwrap()
            .expect("the client's stream is open");
        serde_json::from_str(&line).unwrap()
    }

    async fn send(&mut self, message: Value) {
        use tokio::io::AsyncWriteExt;
        let mut line = message.to_string();
        line.push('\n');
        self.write.write_all(line.as_bytes()).await.unwrap();
        self.write.flush().await.unwrap();
    }

    /// Send the request `id` of `method` and wait for the client's response to it.
    async fn ask(&mut self, id: &str, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        loop {
            let message = self.next().await;
            if message["id"] == id {
                return message;
            }
        }
    }
}

/// A form-mode elicitation of one string field.
fn form_params() -> Value {
    json!({"mode": "form", "message": "Your name?", "requestedSchema": {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
    }})
}

/// A client that declared forms only, with a handler for everything: a server request
/// of a kind it did not declare (sampling, roots, a URL-mode elicitation) gets the
/// protocol's error at once, naming the capability, and never reaches the handler; the
/// declared kind is answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undeclared_request_gets_the_protocols_error_at_once() {
    let host = Arc::new(Host::default());
    let builder = builder(ProtocolVersion::V_2025_11_25)
        .relay([dsh_runtime::caller::RequestKind::Form])
        .caller(host.clone());
    let (mut server, client, capabilities) = HandServer::connect(builder).await;
    assert_eq!(capabilities, json!({"elicitation": {"form": {}}}));

    let sampling = json!({"messages": [
        {"role": "user", "content": {"type": "text", "text": "hi"}}
    ], "maxTokens": 10});
    let url = json!({"mode": "url", "message": "Sign in", "url": "https://example.com/login",
        "elicitationId": "e1"});
    for (id, method, params, capability) in [
        ("s1", "sampling/createMessage", sampling, "`sampling`"),
        ("s2", "roots/list", json!({}), "`roots`"),
        ("s3", "elicitation/create", url, "`elicitation.url`"),
    ] {
        let answer = server.ask(id, method, params).await;
        assert_eq!(answer["error"]["code"], -32601, "{method}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("did not declare") && message.contains(capability),
            "{method}: {message}"
        );
    }
    assert!(host.asked.lock().unwrap().is_empty());

    let answer = server.ask("s4", "elicitation/create", form_params()).await;
    assert_eq!(answer["result"]["action"], "accept", "{answer}");
    assert_eq!(
        answer["result"]["content"],
        json!({"branch": "main", "replicas": 2})
    );
    assert_eq!(*host.asked.lock().unwrap(), [": form Your name?"]);
    client.cancel().await.unwrap();
}

/// A client that declared nothing refuses even a form, with the protocol's error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_declaring_nothing_refuses_every_request() {
    let host = Arc::new(Host::default());
    let builder = builder(ProtocolVersion::V_2025_11_25)
        .relay([])
        .caller(host.clone());
    let (mut server, client, capabilities) = HandServer::connect(builder).await;
    assert_eq!(capabilities, json!({}));
    for (id, method, params) in [
        ("s1", "elicitation/create", form_params()),
        ("s2", "roots/list", json!({})),
    ] {
        let answer = server.ask(id, method, params).await;
        assert_eq!(answer["error"]["code"], -32601, "{method}: {answer}");
    }
    assert!(host.asked.lock().unwrap().is_empty());
    client.cancel().await.unwrap();
}

/// On 2026-07-28 the server asks inside the call's result: an input request of a kind
/// the client did not declare ends the call with an error naming the capability, after
/// the declared form was answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undeclared_input_request_ends_the_call_on_2026_07_28() {
    let served = Served::start(&upstream(), Wire::Http).await;
    let builder =
        builder(ProtocolVersion::V_2026_07_28).relay([dsh_runtime::caller::RequestKind::Form]);
    let client = connect(&builder, &served).await.unwrap();
    let registry = imported(&client).await;
    let host = Arc::new(Host::default());
    let call = registry.execute(ToolCall::new("c1", "rollout", r#"{"tag":"r5"}"#));
    // A bound against a hang only.
    let result = tokio::time::timeout(crate::common::PATIENCE, with_caller(host.clone(), call))
        .await
        .expect("the call ended");
    assert!(result.is_error(), "{result:?}");
    assert!(result.text().contains("sampling"), "{}", result.text());
    assert_eq!(*host.asked.lock().unwrap(), ["rollout: form Where to?"]);
    client.cancel().await.unwrap();
    served.shutdown().await;
}
