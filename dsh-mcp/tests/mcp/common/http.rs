//! One raw Streamable HTTP client, [`HttpClient`]: MCP POSTs written by hand with the
//! headers of a revision (`mcp-protocol-version`; on 2026-07-28 also `mcp-method` and
//! `mcp-name`), a session id and a bearer token, answered as JSON or as an event stream;
//! and the raw-TCP helpers of the tests that need byte-level control of a request.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::StreamExt as _;
use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

use super::PATIENCE;
use super::rpc::{UNPARSED, initialize, initialized, parse};
use super::wire::Revision;

/// The `accept` header of every MCP POST.
pub(crate) const ACCEPT: &str = "application/json, text/event-stream";

/// A raw Streamable HTTP client of one endpoint.
#[derive(Clone)]
pub(crate) struct HttpClient {
    client: reqwest::Client,
    pub url: String,
    /// The revision named in `mcp-protocol-version` (none: no such header).
    pub revision: Option<Revision>,
    /// The session named in `mcp-session-id` (none: no such header).
    pub session: Option<String>,
    /// The bearer token sent in `authorization`.
    pub token: Option<String>,
}

impl HttpClient {
    /// A client of `url` sending no revision, session or token yet.
    pub(crate) fn new(url: impl Into<String>) -> HttpClient {
        HttpClient::with(reqwest::Client::new(), url)
    }

    /// [`HttpClient::new`] on this reqwest client (its connection pool).
    pub(crate) fn with(client: reqwest::Client, url: impl Into<String>) -> HttpClient {
        HttpClient {
            client,
            url: url.into(),
            revision: None,
            session: None,
            token: None,
        }
    }

    /// Name `revision` in every request.
    pub(crate) fn revision(mut self, revision: Revision) -> HttpClient {
        self.revision = Some(revision);
        self
    }

    /// Send `token` as the bearer token.
    pub(crate) fn bearer(mut self, token: &str) -> HttpClient {
        self.token = Some(token.to_string());
        self
    }

    /// Send every request in `session`, on `revision`.
    pub(crate) fn in_session(mut self, session: &str, revision: Revision) -> HttpClient {
        self.session = Some(session.to_string());
        self.revision = Some(revision);
        self
    }

    /// The request `method` with this client's headers.
    fn request(&self, method: reqwest::Method) -> reqwest::RequestBuilder {
        let mut request = self.client.request(method, &self.url);
        if let Some(revision) = self.revision {
            request = request.header("mcp-protocol-version", revision.as_str());
        }
        if let Some(session) = &self.session {
            request = request.header("mcp-session-id", session);
        }
        if let Some(token) = &self.token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        request
    }

    /// The POST of `body` (JSON-RPC text, or not) with the MCP headers and `extra`.
    fn post_request(&self, body: &str, extra: &[(&str, &str)]) -> reqwest::RequestBuilder {
        let mut request = self
            .request(reqwest::Method::POST)
            .header("content-type", "application/json")
            .header("accept", ACCEPT);
        if self.revision == Some(Revision::V2026_07_28)
            && let Ok(message) = serde_json::from_str::<Value>(body)
        {
            if let Some(method) = message["method"].as_str() {
                request = request.header("mcp-method", method);
            }
            let params = &message["params"];
            if let Some(name) = params["name"]
                .as_str()
                .or(params["taskId"].as_str())
                .or(params["uri"].as_str())
            {
                request = request.header("mcp-name", name);
            }
        }
        // Extra headers replace those of the same name.
        let mut replaced = reqwest::header::HeaderMap::new();
        for (name, value) in extra {
            replaced.insert(
                reqwest::header::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                reqwest::header::HeaderValue::from_str(value).unwrap(),
            );
        }
        request.headers(replaced).body(body.to_string())
    }

    /// POST `body`; the answer, read to its end (within 30 s each).
    pub(crate) async fn post(&self, body: &str) -> Reply {
        self.post_with(body, &[]).await
    }

    /// [`HttpClient::post`] with `extra` headers, besides this client's or instead of
    /// them.
    pub(crate) async fn post_with(&self, body: &str, extra: &[(&str, &str)]) -> Reply {
        let response = tokio::time::timeout(PATIENCE, self.post_request(body, extra).send())
            .await
            .expect("the server answers within 30 s")
            .expect("the request is sent");
        let (status, headers) = (response.status().as_u16(), response.headers().clone());
        let body = tokio::time::timeout(PATIENCE, response.text())
            .await
            .expect("the body ends within 30 s")
            .expect("the body is read");
        Reply {
            status,
            headers,
            body,
        }
    }

    /// POST `body`, where the server may be going away: the answer, or the error.
    pub(crate) async fn try_post(&self, body: &str) -> Result<Reply, reqwest::Error> {
        let response = self.post_request(body, &[]).send().await?;
        let (status, headers) = (response.status().as_u16(), response.headers().clone());
        Ok(Reply {
            status,
            headers,
            body: response.text().await?,
        })
    }

    /// POST `body`; every message of the answer goes to `to` as it arrives (an event
    /// stream's messages one by one, in the background). The answer's head, with an
    /// empty body. A body that is neither JSON-RPC nor an event stream goes to `to` as
    /// `{"http-body": TEXT}`.
    pub(crate) async fn post_into(&self, body: &str, to: mpsc::UnboundedSender<Value>) -> Reply {
        let response = tokio::time::timeout(PATIENCE, self.post_request(body, &[]).send())
            .await
            .expect("the server answers within 30 s")
            .expect("the request is sent");
        let reply = Reply {
            status: response.status().as_u16(),
            headers: response.headers().clone(),
            body: String::new(),
        };
        if reply.is_event_stream() {
            tokio::spawn(forward_events(response, to));
        } else {
            let text = response.text().await.unwrap();
            if !text.trim().is_empty() {
                let _ =
                    to.send(parse(&text).unwrap_or_else(|| serde_json::json!({"http-body": text})));
            }
        }
        reply
    }

    /// `initialize` on `revision` declaring `capabilities`, with the headers set so far;
    /// then, from here on, `revision` in every request and the session the answer names
    /// (if any), and `notifications/initialized` (`202` in a session, a success without).
    /// The `initialize` answer.
    pub(crate) async fn open_session(&mut self, revision: Revision, capabilities: Value) -> Reply {
        let reply = self
            .post(&initialize(1, revision, capabilities).to_string())
            .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        self.session = reply.session();
        self.revision = Some(revision);
        let note = self.post(&initialized().to_string()).await;
        if self.session.is_some() {
            assert_eq!(note.status, 202, "{}", note.body);
        } else {
            assert!((200..300).contains(&note.status), "{}", note.status);
        }
        reply
    }

    /// [`HttpClient::open_session`] declaring no capability, where the server must name
    /// a session: its id.
    pub(crate) async fn start_session(&mut self, revision: Revision) -> String {
        self.open_session(revision, serde_json::json!({})).await;
        self.session.clone().expect("a session id")
    }

    /// `DELETE` the session (a success).
    pub(crate) async fn close_session(&mut self) {
        if self.session.is_some() {
            let response = self.request(reqwest::Method::DELETE).send().await.unwrap();
            assert!(response.status().is_success(), "{}", response.status());
            self.session = None;
        }
    }

    /// `GET` the endpoint's event stream with this client's headers: the response.
    pub(crate) async fn get_stream(&self) -> reqwest::Response {
        self.request(reqwest::Method::GET)
            .header("accept", "text/event-stream")
            .send()
            .await
            .unwrap()
    }

    /// The session's `GET` event stream (a success): its JSON-RPC messages.
    pub(crate) async fn events(&self) -> mpsc::UnboundedReceiver<Value> {
        let response = self.get_stream().await;
        assert!(response.status().is_success(), "{}", response.status());
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(forward_events(response, tx));
        rx
    }
}

/// Send the messages of an event stream to `to` as they arrive (a data line that is not
/// JSON as `{UNPARSED: LINE}`).
async fn forward_events(response: reqwest::Response, to: mpsc::UnboundedSender<Value>) {
    let mut body = response.bytes_stream();
    let mut pending = Vec::new();
    while let Some(Ok(chunk)) = body.next().await {
        pending.extend_from_slice(&chunk);
        while let Some(i) = pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = pending.drain(..=i).collect();
            let line = String::from_utf8_lossy(&line);
            if let Some(data) = line.trim_end().strip_prefix("data:") {
                let data = data.trim();
                if data.is_empty() {
                    continue;
                }
                let message = parse(data).unwrap_or_else(|| serde_json::json!({ UNPARSED: data }));
                if to.send(message).is_err() {
                    return;
                }
            }
        }
    }
}

/// One answer to a raw request.
pub(crate) struct Reply {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: String,
}

impl Reply {
    /// The header `name`, if present.
    pub(crate) fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .map(|v| v.to_str().unwrap().to_string())
    }

    /// The session the answer names.
    pub(crate) fn session(&self) -> Option<String> {
        self.header("mcp-session-id")
    }

    /// `WWW-Authenticate`, or nothing.
    pub(crate) fn challenge(&self) -> String {
        self.header("www-authenticate").unwrap_or_default()
    }

    fn is_event_stream(&self) -> bool {
        self.header("content-type")
            .is_some_and(|v| v.starts_with("text/event-stream"))
    }

    /// The JSON-RPC messages of the body: a JSON body, or the `data:` lines of an event
    /// stream (each must be JSON, read with the lossless parser).
    pub(crate) fn messages(&self) -> Vec<Value> {
        let must_parse = |text: &str| {
            parse(text)
                .unwrap_or_else(|| panic!("the server sent a message that is not JSON: {text}"))
        };
        if self.body.trim_start().starts_with('{') {
            return vec![must_parse(&self.body)];
        }
        self.body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(must_parse)
            .collect()
    }

    /// The response to request `id` among the messages (not a request of the server's).
    pub(crate) fn answer(&self, id: &Value) -> Option<Value> {
        self.messages()
            .into_iter()
            .find(|m| m.get("id") == Some(id) && m.get("method").is_none())
    }

    /// The first response among the messages.
    pub(crate) fn response(&self) -> Value {
        self.messages()
            .into_iter()
            .find(|m| m.get("method").is_none())
            .unwrap_or(Value::Null)
    }
}

// ---------------------------------------------------------------------------------------
// Raw TCP: byte-level control of a request.

/// The start of a request head that never ends (a client stalled in its headers).
const STALLED_HEAD: &[u8] = b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-ty";

/// The head of a `POST /mcp` with this `content-type`, the MCP `accept` and `lines`
/// (`name: value` each), ended by its blank line.
pub(crate) fn head(content_type: &str, lines: &[&str]) -> String {
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: {content_type}\r\naccept: {ACCEPT}\r\n"
    );
    for line in lines {
        head.push_str(line);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    head
}

/// Open a connection and send part of a request head; the connection, and whether the
/// part was written (the server may already have closed it to make room for a later
/// one).
pub(crate) async fn stall(addr: SocketAddr) -> (TcpStream, std::io::Result<()>) {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let written = stream.write_all(STALLED_HEAD).await;
    (stream, written)
}

/// Read until the server closes the connection (EOF or reset) or `limit` passes; what
/// it sent, and whether it closed.
pub(crate) async fn read_until_closed(stream: &mut TcpStream, limit: Duration) -> (String, bool) {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Err(_) => return (String::from_utf8_lossy(&seen).into_owned(), false),
            Ok(Ok(0) | Err(_)) => return (String::from_utf8_lossy(&seen).into_owned(), true),
            Ok(Ok(n)) => seen.extend_from_slice(&buf[..n]),
        }
    }
}

/// Send `head` and `body` on a new connection and read until the server closes it (at
/// most 30 s): the status and all it sent.
pub(crate) async fn exchange(addr: SocketAddr, head: &str, body: &[u8]) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body).await.unwrap();
    let (seen, _) = read_until_closed(&mut stream, PATIENCE).await;
    let status = seen
        .get(9..12)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer: {seen:?}"));
    (status, seen)
}

/// Send `head` (which asks for chunked framing), then a chunked body of up to `total`
/// bytes (chunks of 64 KiB of `fill`) while reading the answer; the answer's head, and
/// how many body bytes were written before the server answered or closed.
pub(crate) async fn chunked(
    addr: SocketAddr,
    head: String,
    fill: u8,
    total: usize,
) -> (String, usize) {
    const CHUNK: usize = 64 * 1024;
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    let written = Arc::new(AtomicUsize::new(0));
    let counter = written.clone();
    let sender = tokio::spawn(async move {
        writer.write_all(head.as_bytes()).await?;
        let chunk = vec![fill; CHUNK];
        let mut frame = format!("{CHUNK:x}\r\n").into_bytes();
        frame.extend_from_slice(&chunk);
        frame.extend_from_slice(b"\r\n");
        let mut sent = 0;
        while sent < total {
            writer.write_all(&frame).await?;
            sent += CHUNK;
            counter.store(sent, Ordering::SeqCst);
        }
        writer.write_all(b"0\r\n\r\n").await?;
        // Keep the connection open for writing until the answer is read (hyper takes a
        // client that closes its side as gone).
        std::future::pending::<()>().await;
        Ok::<_, std::io::Error>(())
    });
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout(Duration::from_secs(60), reader.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => break,
            Ok(Ok(n)) => {
                seen.extend_from_slice(&buf[..n]);
                if seen.windows(4).any(|w| w == b"\r\n\r\n") {
                    break;
                }
            }
            Err(_) => panic!("no answer within 60 s to a chunked body"),
        }
    }
    let sent = written.load(Ordering::SeqCst);
    sender.abort();
    (String::from_utf8_lossy(&seen).into(), sent)
}
