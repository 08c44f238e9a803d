//! One raw JSON-RPC client over either transport, [`Rpc`]: for what rmcp's client cannot
//! say (hand-written bytes, the 2025-11-25 task model, `taskIds` in a listen filter).
//! Every message the server sends arrives in one queue, whatever carried it (a line of
//! the byte stream; over HTTP, a response or an event of a response's stream); the test
//! waits for the one it wants and the others are kept aside. Also the JSON-RPC messages
//! the raw clients send, and the lossless reading of what the server sent.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use dsh_mcp::McpServer;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use super::PATIENCE;
use super::http::{HttpClient, Reply};
use super::wire::Revision;

/// The key of the stand-in for a message the server sent that is not JSON.
pub(crate) const UNPARSED: &str = "not-json";

/// A message of the server, read with the lossless parser (`serde_json`, with its
/// `raw_value` feature as in this workspace, would itself rewrite an object whose first
/// key is its private raw-value key); `None` if it is not JSON.
pub(crate) fn parse(text: &str) -> Option<Value> {
    dsh_runtime::json::parse(text)
        .ok()
        .map(|value| dsh_runtime::json::to_serde(&value))
}

/// The `initialize` request `id` on `revision`, declaring `capabilities`.
pub(crate) fn initialize(id: u64, revision: Revision, capabilities: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": revision.as_str(),
        "capabilities": capabilities,
        "clientInfo": {"name": "raw", "version": "1"},
    }})
}

/// `notifications/initialized`.
pub(crate) fn initialized() -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
}

/// The request `id` of `method` with `params`.
pub(crate) fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// The `tools/call` request `id` of `name` with `arguments`.
pub(crate) fn tools_call(id: u64, name: &str, arguments: Value) -> Value {
    request(
        id,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    )
}

/// The text of a `tools/call` result's content blocks, one a line.
pub(crate) fn text_of(result: &Value) -> String {
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

enum Link {
    Stream(Option<tokio::io::WriteHalf<tokio::io::DuplexStream>>),
    Http(HttpClient),
}

/// A raw JSON-RPC client (see the module's docs).
pub(crate) struct Rpc {
    link: Link,
    incoming: mpsc::UnboundedReceiver<Value>,
    sender: mpsc::UnboundedSender<Value>,
    /// Messages received while waiting for others, in order, not yet taken.
    pub aside: Vec<Value>,
    /// Every notification received so far, in order (taken or not).
    pub notifications: Vec<Value>,
    /// Every request of the server's received so far, in order (taken or not).
    pub requests: Vec<Value>,
}

/// Ids for [`Rpc::request`].
static NEXT_ID: AtomicU64 = AtomicU64::new(1000);

impl Rpc {
    /// A client of a new connection to `server` on an in-memory byte stream (as stdio).
    pub(crate) fn stream(server: &McpServer) -> Rpc {
        let (client_io, server_io) = tokio::io::duplex(1 << 20);
        let server = server.clone();
        tokio::spawn(async move {
            let _ = server.serve(server_io).await;
        });
        let (read, write) = tokio::io::split(client_io);
        let (sender, incoming) = mpsc::unbounded_channel();
        let tx = sender.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(read).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let message = parse(&line).unwrap_or_else(|| json!({ UNPARSED: line }));
                if tx.send(message).is_err() {
                    break;
                }
            }
        });
        Rpc::of(Link::Stream(Some(write)), sender, incoming)
    }

    /// A client posting with `http`.
    pub(crate) fn http(http: HttpClient) -> Rpc {
        let (sender, incoming) = mpsc::unbounded_channel();
        Rpc::of(Link::Http(http), sender, incoming)
    }

    fn of(
        link: Link,
        sender: mpsc::UnboundedSender<Value>,
        incoming: mpsc::UnboundedReceiver<Value>,
    ) -> Rpc {
        Rpc {
            link,
            incoming,
            sender,
            aside: Vec::new(),
            notifications: Vec::new(),
            requests: Vec::new(),
        }
    }

    /// The HTTP client (over HTTP only).
    pub(crate) fn http_client(&self) -> &HttpClient {
        match &self.link {
            Link::Http(http) => http,
            Link::Stream(_) => panic!("a byte stream has no HTTP client"),
        }
    }

    /// Send `text` as it is: a line of the byte stream, or the body of a POST (whose
    /// answer's head is returned).
    pub(crate) async fn send_text(&mut self, text: &str) -> Option<Reply> {
        match &mut self.link {
            Link::Stream(write) => {
                let w = write.as_mut().expect("the stream is open");
                w.write_all(text.as_bytes()).await.unwrap();
                w.write_all(b"\n").await.unwrap();
                w.flush().await.unwrap();
                None
            }
            Link::Http(http) => Some(http.post_into(text, self.sender.clone()).await),
        }
    }

    /// Send `message`.
    pub(crate) async fn send(&mut self, message: &Value) -> Option<Reply> {
        self.send_text(&message.to_string()).await
    }

    /// The next message `pred` accepts (others are kept aside), within 30 s.
    pub(crate) async fn next(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.aside.iter().position(&pred) {
            return self.aside.remove(i);
        }
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            match tokio::time::timeout_at(deadline, self.incoming.recv()).await {
                Ok(Some(v)) => {
                    self.record(&v);
                    if pred(&v) {
                        return v;
                    }
                    self.aside.push(v);
                }
                Ok(None) => panic!(
                    "the connection closed while waiting for {what}: {:?}",
                    self.aside
                ),
                Err(_) => panic!("timed out waiting for {what}; got {:?}", self.aside),
            }
        }
    }

    fn record(&mut self, message: &Value) {
        assert!(
            message.get(UNPARSED).is_none(),
            "the server sent a message that is not JSON: {message}"
        );
        match (message.get("id").is_some(), message.get("method").is_some()) {
            (false, true) => self.notifications.push(message.clone()),
            (true, true) => self.requests.push(message.clone()),
            _ => {}
        }
    }

    /// The next response to request `id` (a result or an error).
    pub(crate) async fn answer_to(&mut self, id: &Value) -> Value {
        let what = format!("the answer to id {id}");
        self.next(&what, |m| m.get("method").is_none() && m["id"] == *id)
            .await
    }

    /// Send request `message` and wait for its response.
    pub(crate) async fn call(&mut self, message: Value) -> Value {
        let id = message["id"].clone();
        self.send(&message).await;
        self.answer_to(&id).await
    }

    /// Request `method` with `params` (a fresh id): its `result`, or its `error`.
    pub(crate) async fn request(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        let id = NEXT_ID.fetch_add(1, Ordering::SeqCst);
        let answer = self.call(request(id, method, params)).await;
        match answer.get("error") {
            Some(error) => Err(error.clone()),
            None => Ok(answer["result"].clone()),
        }
    }

    /// Answer the server's request `id` with `result`.
    pub(crate) async fn respond(&mut self, id: &Value, result: Value) {
        let message = json!({"jsonrpc": "2.0", "id": id, "result": result});
        self.send(&message).await;
    }

    /// `initialize` on `revision` declaring `capabilities`, then
    /// `notifications/initialized` (over HTTP: [`HttpClient::open_session`]); the
    /// `initialize` result.
    pub(crate) async fn initialize(&mut self, revision: Revision, capabilities: Value) -> Value {
        let answer = match &mut self.link {
            Link::Http(http) => {
                let reply = http.open_session(revision, capabilities).await;
                reply.answer(&json!(1)).expect("an answer to initialize")
            }
            Link::Stream(_) => {
                let answer = self.call(initialize(0, revision, capabilities)).await;
                self.send(&initialized()).await;
                answer
            }
        };
        assert!(answer.get("error").is_none(), "initialize: {answer}");
        answer["result"].clone()
    }

    /// Every message that arrives within `within` (those kept aside before are dropped).
    pub(crate) async fn drain(&mut self, within: Duration) -> Vec<Value> {
        self.aside.clear();
        let mut out = Vec::new();
        let deadline = tokio::time::Instant::now() + within;
        while let Ok(Some(v)) = tokio::time::timeout_at(deadline, self.incoming.recv()).await {
            self.record(&v);
            out.push(v);
        }
        out
    }

    /// End the session: close the byte stream, or `DELETE` the HTTP session.
    pub(crate) async fn close(&mut self) {
        match &mut self.link {
            Link::Stream(write) => {
                if let Some(mut w) = write.take() {
                    let _ = w.shutdown().await;
                }
            }
            Link::Http(http) => http.close_session().await,
        }
    }
}
