//! The byte-stream transport the server reads its messages with (stdio, pipes,
//! in-memory streams): one JSON-RPC message a line, each way.
//!
//! Each line read goes through the wire ([`crate::wire::read`]): a line that is not JSON
//! is answered with a parse error (`-32700`), a message that is not a valid MCP message
//! with an invalid request (`-32600`), and a request whose id is already in flight on
//! the connection with an invalid request naming the id; none of them reaches the
//! handler. Each message written goes through the connection's [`Outbound`] first.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

use crate::wire::in_flight::InFlight;
use crate::wire::outbound::{Outbound, Rewrite};
use crate::wire::{Ids, Inbound};

/// The longest line read (one message), as rmcp's own stdio transport: 16 MiB.
const MAX_LINE: usize = 16 * 1024 * 1024;

type Writer<W> = Arc<tokio::sync::Mutex<Option<W>>>;

/// A server transport over a byte stream pair (see the module docs).
pub(crate) struct RawTransport<R, W> {
    read: BufReader<R>,
    line: Vec<u8>,
    /// Set while the rest of an over-long line is skipped.
    discarding: bool,
    write: Writer<W>,
    in_flight: Arc<InFlight<rmcp::model::RequestId>>,
    /// Serve the 2025-11-25 task model (the registry has a job runtime).
    rev_2025_11_25_tasks: bool,
    /// The rewrites of what the server sends on this connection.
    outbound: Outbound,
}

impl<R, W> RawTransport<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    pub(crate) fn new(read: R, write: W) -> Self {
        RawTransport {
            read: BufReader::new(read),
            line: Vec::new(),
            discarding: false,
            write: Arc::new(tokio::sync::Mutex::new(Some(write))),
            in_flight: InFlight::new(),
            rev_2025_11_25_tasks: false,
            outbound: Outbound::progress_tokens(),
        }
    }

    /// Serve the 2025-11-25 task model (the registry has a job runtime).
    pub(crate) fn with_rev_2025_11_25_tasks(mut self, on: bool) -> Self {
        self.rev_2025_11_25_tasks = on;
        self
    }

    /// Read one line into `self.line` (cancel-safe: a partial line stays buffered).
    /// `None` at the end of the stream; `Some(false)` for an over-long line, dropped.
    async fn read_line(&mut self) -> Option<bool> {
        loop {
            let available = match self.read.fill_buf().await {
                Ok(a) => a,
                Err(e) => {
                    tracing::error!("cannot read the MCP input: {e}");
                    return None;
                }
            };
            if available.is_empty() {
                return None;
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            let mut over = false;
            if self.discarding {
                if newline.is_some() {
                    self.discarding = false;
                }
            } else if self.line.len() + take > MAX_LINE {
                self.line.clear();
                self.discarding = newline.is_none();
                over = true;
            } else {
                self.line.extend_from_slice(&available[..take]);
            }
            self.read.consume(take);
            if over {
                return Some(false);
            }
            if newline.is_some() && !self.discarding && !self.line.is_empty() {
                return Some(true);
            }
        }
    }

    /// Write `message` on a task of its own (so a cancelled `receive` never leaves half
    /// a line written).
    fn answer(&self, message: ServerJsonRpcMessage) {
        let write = self.write.clone();
        tokio::spawn(async move {
            if let Err(e) = write_message(&write, &message).await {
                tracing::error!("cannot answer an unreadable MCP message: {e}");
            }
        });
    }
}

async fn write_text<W: AsyncWrite + Unpin>(
    write: &Writer<W>,
    mut text: Vec<u8>,
) -> std::io::Result<()> {
    text.push(b'\n');
    let mut guard = write.lock().await;
    let Some(w) = guard.as_mut() else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotConnected,
            "the MCP connection is closed",
        ));
    };
    w.write_all(&text).await?;
    w.flush().await
}

async fn write_message<W: AsyncWrite + Unpin>(
    write: &Writer<W>,
    message: &ServerJsonRpcMessage,
) -> std::io::Result<()> {
    write_text(write, serde_json::to_vec(message)?).await
}

impl<R, W> Transport<RoleServer> for RawTransport<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = self.write.clone();
        let in_flight = self.in_flight.clone();
        // Rewritten now: the answer to `initialize` tells whether the session speaks
        // 2025-11-25 (its capabilities then name the revision's tasks), decided before
        // this returns, so the client's next message is read knowing it.
        let text = serde_json::to_vec(&item).map(|text| {
            let patched = self.outbound.message(&text);
            patched.unwrap_or(text)
        });
        let answered = match &item {
            ServerJsonRpcMessage::Response(r) => Some(r.id.clone()),
            ServerJsonRpcMessage::Error(e) => e.id.clone(),
            _ => None,
        };
        if let Some(id) = &answered {
            self.outbound.answered(id);
        }
        async move {
            // Marked before writing: a client may reuse the id as soon as it reads the
            // answer, and rmcp forgot the request before handing the answer over.
            if let Some(id) = answered {
                in_flight.answered(&id);
            }
            write_text(&write, text?).await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            match self.read_line().await? {
                true => {}
                false => {
                    tracing::error!("an MCP message longer than {MAX_LINE} bytes was dropped");
                    continue;
                }
            }
            let line = std::mem::take(&mut self.line);
            let mut text = line.strip_suffix(b"\n").unwrap_or(&line);
            text = text.strip_suffix(b"\r").unwrap_or(text);
            if text.iter().all(u8::is_ascii_whitespace) {
                self.line = line;
                self.line.clear();
                continue;
            }
            let reroute = self.rev_2025_11_25_tasks && self.outbound.negotiated_rev_2025_11_25();
            let key = |id: &rmcp::model::RequestId| id.clone();
            let ids = Ids {
                table: &self.in_flight,
                key: &key,
            };
            let read = crate::wire::read(text, reroute, Some(ids));
            self.line = line;
            self.line.clear();
            let Inbound {
                mut message,
                attached,
                initialize,
                listen,
                ..
            } = match read {
                Ok(inbound) => inbound,
                Err(refusal) => {
                    match refusal.into_json_rpc() {
                        Ok(error) => self.answer(*error),
                        Err(why) => tracing::debug!("ignoring an unreadable MCP message: {why}"),
                    }
                    continue;
                }
            };
            if let Some(id) = initialize.filter(|_| self.rev_2025_11_25_tasks) {
                self.outbound.push(Rewrite::Initialize(id));
            }
            if let Some((id, listen)) = listen {
                self.outbound
                    .push(Rewrite::ListenAcknowledgment(id, listen.0));
            }
            if let ClientJsonRpcMessage::Request(request) = &mut message {
                use rmcp::model::GetExtensions as _;
                attached.attach(request.request.extensions_mut());
            }
            return Some(message);
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        let mut write = self.write.lock().await;
        if let Some(mut w) = write.take() {
            let _ = w.shutdown().await;
        }
        Ok(())
    }
}
