//! `dsh-tools mcp --http --otlp-endpoint URL` as processes, exporting to an OTLP/HTTP
//! receiver of the test that decodes each export with the official protobuf types
//! (`opentelemetry-proto`): a client's `traceparent` in `params._meta` makes one trace of
//! the client's span, the server's `tools/call read` and its `execute_tool read`, on one
//! instance and across two behind a round-robin proxy on Redis; `--otel-record-content`
//! puts a call's arguments and result on its `execute_tool` span, which has neither
//! without it.

use std::collections::HashMap;
use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dsh_mcp::store::conformance::TestRedis;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use prost::Message as _;

use super::mcp_cluster::Cluster;

/// `SPAN_KIND_SERVER` and `SPAN_KIND_INTERNAL` of the protocol.
const SERVER: i32 = 2;
const INTERNAL: i32 = 1;

/// One exported span, as the receiver decoded it.
#[derive(Clone, Debug)]
struct Span {
    trace: String,
    id: String,
    parent: String,
    name: String,
    kind: i32,
    attributes: HashMap<String, String>,
    /// The exporting process (its resource's `process.pid`).
    pid: String,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn text(attributes: &[KeyValue]) -> HashMap<String, String> {
    attributes
        .iter()
        .filter_map(|kv| {
            let value = match kv.value.as_ref()?.value.as_ref()? {
                AnyValue::StringValue(s) => s.clone(),
                AnyValue::IntValue(i) => i.to_string(),
                AnyValue::BoolValue(b) => b.to_string(),
                other => format!("{other:?}"),
            };
            Some((kv.key.clone(), value))
        })
        .collect()
}

/// An OTLP/HTTP (protobuf) receiver on loopback: every span of every `/v1/traces` export.
#[derive(Clone)]
struct Receiver {
    url: String,
    spans: Arc<Mutex<Vec<Span>>>,
}

impl Receiver {
    fn start() -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let spans = Arc::new(Mutex::new(Vec::new()));
        let into = spans.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                let into = into.clone();
                std::thread::spawn(move || serve(stream, &into));
            }
        });
        Receiver { url, spans }
    }

    /// The spans of trace `trace` once `done` holds of them (within 60 s: the exporter
    /// sends a batch every 5 s).
    fn trace(&self, trace: &str, done: impl Fn(&[Span]) -> bool) -> Vec<Span> {
        let start = Instant::now();
        loop {
            let spans: Vec<Span> = self
                .spans
                .lock()
                .unwrap()
                .iter()
                .filter(|s| s.trace == trace)
                .cloned()
                .collect();
            if done(&spans) {
                return spans;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "trace {trace} incomplete after 60 s: {spans:#?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// Answer the HTTP/1.1 requests of one connection, decoding trace exports.
fn serve(mut stream: TcpStream, into: &Mutex<Vec<Span>>) {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") else {
            match stream.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            }
            continue;
        };
        let head = String::from_utf8_lossy(&buffer[..end]).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        while buffer.len() < end + 4 + length {
            match stream.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            }
        }
        let body: Vec<u8> = buffer.drain(..end + 4 + length).skip(end + 4).collect();
        if head.starts_with("post /v1/traces") {
            let request = ExportTraceServiceRequest::decode(body.as_slice())
                .expect("an export the official types decode");
            into.lock().unwrap().extend(spans_of(request));
        }
        let ok =
            "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
        if stream.write_all(ok.as_bytes()).is_err() {
            return;
        }
    }
}

fn spans_of(request: ExportTraceServiceRequest) -> Vec<Span> {
    let mut out = Vec::new();
    for resource in request.resource_spans {
        let attributes = resource
            .resource
            .map(|r| text(&r.attributes))
            .unwrap_or_default();
        let pid = attributes.get("process.pid").cloned().unwrap_or_default();
        for scope in resource.scope_spans {
            for span in scope.spans {
                out.push(Span {
                    trace: hex(&span.trace_id),
                    id: hex(&span.span_id),
                    parent: hex(&span.parent_span_id),
                    name: span.name,
                    kind: span.kind,
                    attributes: text(&span.attributes),
                    pid: pid.clone(),
                });
            }
        }
    }
    out
}

/// POST a 2026-07-28 `tools/call read` of `a.txt` with `traceparent` in its `_meta` to
/// the MCP endpoint `url`; the answer's body.
fn call_read(url: &str, id: u64, traceparent: &str) -> String {
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {
            "name": "read",
            "arguments": {"file_path": "a.txt"},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "otel-test", "version": "0"},
                "traceparent": traceparent,
            },
        },
    })
    .to_string();
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (addr, path) = rest.split_once('/').map_or((rest, "/"), |(a, p)| (a, p));
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let request = format!(
        "POST /{path} HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\n\
         mcp-method: tools/call\r\nmcp-name: read\r\nconnection: close\r\n\
         content-length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    answer
}

/// Check one call's trace: the client's span, then the server's `tools/call read`
/// (kind SERVER, its parent the client's span), then `execute_tool read` (kind
/// INTERNAL) under it. The server span.
fn check_call(spans: &[Span], client_span: &str) -> Span {
    let server = spans
        .iter()
        .find(|s| s.name == "tools/call read" && s.parent == client_span)
        .unwrap_or_else(|| panic!("a server span under {client_span}: {spans:#?}"));
    assert_eq!(server.kind, SERVER);
    assert_eq!(server.attributes["mcp.method.name"], "tools/call");
    assert_eq!(server.attributes["mcp.protocol.version"], "2026-07-28");
    assert_eq!(server.attributes["network.transport"], "tcp");
    assert_eq!(server.attributes["gen_ai.tool.name"], "read");
    assert!(!server.attributes.contains_key("mcp.session.id"));
    let tool = spans
        .iter()
        .find(|s| s.name == "execute_tool read" && s.parent == server.id)
        .unwrap_or_else(|| panic!("execute_tool read under {}: {spans:#?}", server.id));
    assert_eq!(tool.kind, INTERNAL);
    assert_eq!(tool.attributes["gen_ai.operation.name"], "execute_tool");
    assert_eq!(tool.attributes["gen_ai.tool.name"], "read");
    server.clone()
}

/// Whether `spans` has an `execute_tool read` for each of `n` calls.
fn has_calls(spans: &[Span], n: usize) -> bool {
    spans
        .iter()
        .filter(|s| s.name == "execute_tool read")
        .count()
        >= n
        && spans.iter().filter(|s| s.name == "tools/call read").count() >= n
}

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_traceparent_makes_one_trace_through_the_server() {
    let receiver = Receiver::start();
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("a.txt"), "hello\n").unwrap();
    let (mut child, url) =
        crate::process::http(root.path(), &["--otlp-endpoint", &receiver.url]).await;
    let client_span = "00f067aa0ba902b7";
    let traceparent = format!("00-{TRACE}-{client_span}-01");
    let url2 = url.clone();
    let answer = tokio::task::spawn_blocking(move || call_read(&url2, 1, &traceparent))
        .await
        .unwrap();
    assert!(answer.contains("hello"), "{answer}");
    let r = receiver.clone();
    let spans = tokio::task::spawn_blocking(move || r.trace(TRACE, |s| has_calls(s, 1)))
        .await
        .unwrap();
    check_call(&spans, client_span);
    let _ = child.start_kill();
    let _ = child.wait().await;
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_trace_across_two_instances_on_redis() {
    let receiver = Receiver::start();
    let redis = TestRedis::shared();
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("a.txt"), "hello\n").unwrap();
    let cluster = Cluster::start(&redis, root.path(), 2, &["--otlp-endpoint", &receiver.url]).await;
    let trace = "0af7651916cd43dd8448eb211c80319c";
    // Two calls of one client's trace, from two spans of it: the proxy sends them to
    // the two instances in turn.
    let clients = ["b7ad6b7169203331", "c7ad6b7169203332"];
    for (i, client_span) in clients.iter().enumerate() {
        let url = cluster.url().to_owned();
        let traceparent = format!("00-{trace}-{client_span}-01");
        let id = i as u64 + 1;
        tokio::task::spawn_blocking(move || call_read(&url, id, &traceparent))
            .await
            .unwrap();
    }
    let r = receiver.clone();
    let spans = tokio::task::spawn_blocking(move || r.trace(trace, |s| has_calls(s, 2)))
        .await
        .unwrap();
    let first = check_call(&spans, clients[0]);
    let second = check_call(&spans, clients[1]);
    assert_ne!(first.pid, second.pid, "the two calls on two instances");
    assert!(!first.pid.is_empty());
    cluster.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn otel_record_content_puts_the_calls_arguments_on_its_span() {
    let receiver = Receiver::start();
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("a.txt"), "hello\n").unwrap();
    // One server with the flag, one without, each called in a trace of its own.
    let cases = [
        ("5bf92f3577b34da6a3ce929d0e0e4731", true),
        ("6bf92f3577b34da6a3ce929d0e0e4732", false),
    ];
    for (trace, recorded) in cases {
        let mut args = vec!["--otlp-endpoint", receiver.url.as_str()];
        if recorded {
            args.push("--otel-record-content");
        }
        let (mut child, url) = crate::process::http(root.path(), &args).await;
        let client_span = "00f067aa0ba902b7";
        let traceparent = format!("00-{trace}-{client_span}-01");
        tokio::task::spawn_blocking(move || call_read(&url, 1, &traceparent))
            .await
            .unwrap();
        let r = receiver.clone();
        let trace = trace.to_owned();
        let spans = tokio::task::spawn_blocking(move || r.trace(&trace, |s| has_calls(s, 1)))
            .await
            .unwrap();
        let server = check_call(&spans, client_span);
        let tool = spans
            .iter()
            .find(|s| s.name == "execute_tool read" && s.parent == server.id)
            .expect("the tool's span");
        let arguments = tool.attributes.get("gen_ai.tool.call.arguments");
        if recorded {
            let arguments: serde_json::Value =
                serde_json::from_str(arguments.expect("the arguments, recorded")).unwrap();
            assert_eq!(arguments, serde_json::json!({"file_path": "a.txt"}));
            let result = tool.attributes.get("gen_ai.tool.call.result");
            assert!(
                result.is_some_and(|r| r.contains("hello")),
                "the result, recorded: {result:?}"
            );
        } else {
            assert_eq!(arguments, None, "no arguments without the flag");
            assert!(!tool.attributes.contains_key("gen_ai.tool.call.result"));
        }
        let _ = child.start_kill();
        let _ = child.wait().await;
    }
}
