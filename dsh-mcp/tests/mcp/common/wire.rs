//! The transport × revision matrix: how a test reaches a server ([`Wire`]: a byte
//! stream, as stdio, or Streamable HTTP on loopback) and which protocol revision its
//! client speaks ([`Revision`]), with one way to start a server over each ([`Served`])
//! and to connect rmcp's client ([`Connected`]) or a raw client ([`Rpc`]) to it.

use std::ops::Deref;
use std::sync::{Arc, Mutex};

use dsh_mcp::{HttpOptions, HttpServer, McpServer, serve_http};
use rmcp::RoleClient;
use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::Value;

use super::http::HttpClient;
use super::rpc::Rpc;
use super::tools::Toolset;
use super::user::{Heard, User};

/// How a client reaches the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wire {
    /// An in-memory byte stream: the stdio code path.
    Stdio,
    /// Streamable HTTP on a loopback port.
    Http,
}

/// The protocol revision a client speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Revision {
    /// 2025-06-18, an older revision (raw requests only).
    V2025_06_18,
    /// 2025-11-25: `initialize`, sessions, elicitation requests, the core task model.
    V2025_11_25,
    /// 2026-07-28: `server/discover`, capabilities with each request, no sessions over
    /// HTTP, `InputRequiredResult`.
    V2026_07_28,
}

impl Revision {
    /// The revision's name on the wire.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Revision::V2025_06_18 => "2025-06-18",
            Revision::V2025_11_25 => "2025-11-25",
            Revision::V2026_07_28 => "2026-07-28",
        }
    }

    /// How rmcp's client opens a connection on this revision.
    pub(crate) fn lifecycle(self) -> ClientLifecycleMode {
        match self {
            // The client's default `initialize` revision: 2025-11-25.
            Revision::V2025_11_25 => ClientLifecycleMode::Initialize,
            Revision::V2026_07_28 => ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
            Revision::V2025_06_18 => panic!("these tests speak 2025-06-18 with raw requests only"),
        }
    }
}

/// A server over one wire: the server, and its HTTP server over HTTP.
pub(crate) struct Served {
    pub server: McpServer,
    pub http: Option<HttpServer>,
}

impl Served {
    /// Serve `server` over `wire` (HTTP: with the default options).
    pub(crate) async fn start(server: &McpServer, wire: Wire) -> Served {
        Served::start_with(server, wire, HttpOptions::default()).await
    }

    /// Serve `server` over `wire`, with `options` over HTTP.
    pub(crate) async fn start_with(server: &McpServer, wire: Wire, options: HttpOptions) -> Served {
        let http = match wire {
            Wire::Stdio => None,
            Wire::Http => Some(
                serve_http(server, options)
                    .await
                    .expect("serve on loopback"),
            ),
        };
        Served {
            server: server.clone(),
            http,
        }
    }

    /// The HTTP server's endpoint URL.
    pub(crate) fn url(&self) -> String {
        self.http.as_ref().expect("an HTTP server").url()
    }

    /// Connect rmcp's client with `user`, speaking `revision`.
    pub(crate) async fn connect(&self, user: User, revision: Revision) -> Connected {
        self.connect_as(user, revision, None).await
    }

    /// [`Served::connect`], over HTTP with this bearer token when one is given.
    pub(crate) async fn connect_as(
        &self,
        user: User,
        revision: Revision,
        token: Option<&str>,
    ) -> Connected {
        match &self.http {
            None => connect_stream(&self.server, user, revision).await,
            Some(http) => connect_url(&http.url(), token, user, revision).await,
        }
    }

    /// A raw client: a new byte stream, or an HTTP client naming `revision` in every
    /// request (none: from its `initialize` on) with this bearer token.
    pub(crate) fn rpc(&self, revision: Option<Revision>, token: Option<&str>) -> Rpc {
        match &self.http {
            None => Rpc::stream(&self.server),
            Some(http) => {
                let mut client = HttpClient::new(http.url());
                client.revision = revision;
                client.token = token.map(str::to_string);
                Rpc::http(client)
            }
        }
    }

    /// Stop the HTTP server, if any.
    pub(crate) async fn shutdown(self) {
        if let Some(http) = self.http {
            http.shutdown().await.unwrap();
        }
    }
}

/// A registry served over a wire: what most tests set up.
pub(crate) struct Fixture {
    pub served: Served,
    pub tools: Toolset,
}

impl Fixture {
    /// Serve `tools` over `wire` (HTTP: with the default options).
    pub(crate) async fn start(tools: Toolset, wire: Wire) -> Fixture {
        let server = tools.server();
        Fixture::serving(tools, &server, wire, HttpOptions::default()).await
    }

    /// Serve `server`, a server of `tools` set up further, over `wire`, with `options`
    /// over HTTP.
    pub(crate) async fn serving(
        tools: Toolset,
        server: &McpServer,
        wire: Wire,
        options: HttpOptions,
    ) -> Fixture {
        Fixture {
            served: Served::start_with(server, wire, options).await,
            tools,
        }
    }

    /// Stop the HTTP server, if any, and the job runtime's jobs.
    pub(crate) async fn shutdown(self) {
        self.served.shutdown().await;
        self.tools.shutdown().await;
    }
}

/// rmcp's client, connected, and what it heard.
pub(crate) struct Connected {
    pub client: RunningService<RoleClient, User>,
    pub heard: Heard,
    /// Over a byte stream, every message the server wrote, in its order (rmcp's client
    /// runs each notification handler on a task of its own, so [`Heard`] has them in
    /// whatever order those tasks ran).
    pub sent: Arc<Mutex<Vec<Value>>>,
    /// Over a byte stream, the server's side of the connection (it ends once closed).
    pub server: Option<tokio::task::JoinHandle<()>>,
}

impl Deref for Connected {
    type Target = RunningService<RoleClient, User>;

    fn deref(&self) -> &Self::Target {
        &self.client
    }
}

impl Connected {
    /// Close the client (over HTTP, its session too).
    pub(crate) async fn close(self) {
        self.client.cancel().await.unwrap();
    }
}

/// Connect `user` to `server` on a new in-memory byte stream, speaking `revision`; the
/// server's messages are copied to the client line by line and recorded on the way.
pub(crate) async fn connect_stream(
    server: &McpServer,
    user: User,
    revision: Revision,
) -> Connected {
    let (client_io, tap_client_side) = tokio::io::duplex(1 << 16);
    let (tap_server_side, server_io) = tokio::io::duplex(1 << 16);
    let sent = Arc::default();
    tap(tap_server_side, tap_client_side, Arc::clone(&sent));
    let server = server.clone();
    let server = tokio::spawn(async move {
        server.serve(server_io).await.expect("server handshake");
    });
    let (user, heard) = user.listening();
    let client = user
        .serve_with_lifecycle(client_io, revision.lifecycle())
        .await
        .expect("client handshake");
    Connected {
        client,
        heard,
        sent,
        server: Some(server),
    }
}

/// Connect `user` to the Streamable HTTP endpoint `url` (with this bearer token),
/// speaking `revision`.
pub(crate) async fn connect_url(
    url: &str,
    token: Option<&str>,
    user: User,
    revision: Revision,
) -> Connected {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    let (user, heard) = user.listening();
    let client = user
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_config(config),
            revision.lifecycle(),
        )
        .await
        .expect("client handshake");
    Connected {
        client,
        heard,
        sent: Arc::default(),
        server: None,
    }
}

/// Copy the server's messages to the client line by line, recording each in `sent`, and
/// the client's bytes to the server as they come.
fn tap(
    from_server: tokio::io::DuplexStream,
    to_client: tokio::io::DuplexStream,
    sent: Arc<Mutex<Vec<Value>>>,
) {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
    let (server_read, mut server_write) = tokio::io::split(from_server);
    let (mut client_read, mut client_write) = tokio::io::split(to_client);
    tokio::spawn(async move {
        let mut lines = BufReader::new(server_read).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if let Ok(message) = serde_json::from_str::<Value>(&line) {
                sent.lock().unwrap().push(message);
            }
            let line = line + "\n";
            if client_write.write_all(line.as_bytes()).await.is_err() {
                break;
            }
        }
        let _ = client_write.shutdown().await;
    });
    tokio::spawn(async move {
        let mut buf = vec![0u8; 1 << 14];
        loop {
            match client_read.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if server_write.write_all(&buf[..n]).await.is_err() {
                        break;
                    }
                }
            }
        }
        let _ = server_write.shutdown().await;
    });
}

/// The params of a `tools/call` of `name` with `args` (an object).
pub(crate) fn call(name: &str, args: Value) -> rmcp::model::CallToolRequestParams {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    rmcp::model::CallToolRequestParams::new(name.to_string()).with_arguments(args)
}

/// The text of a result's content blocks, one a line.
pub(crate) fn result_text(result: &rmcp::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The code and message of a JSON-RPC error.
pub(crate) fn error_of(e: &rmcp::service::ServiceError) -> (i32, String) {
    match e {
        rmcp::service::ServiceError::McpError(e) => (e.code.0, e.message.to_string()),
        other => panic!("expected a JSON-RPC error, got {other}"),
    }
}
