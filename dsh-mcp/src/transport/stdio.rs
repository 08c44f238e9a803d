//! The byte-stream transport the server reads its messages with (stdio, pipes,
//! in-memory streams), and the table of request ids in flight shared with the HTTP layer.
//!
//! Each line is one JSON-RPC message, read by [`crate::wire::raw::prepare`]: a line that is
//! not JSON is answered with a parse error (`-32700`), a message that is not a valid MCP
//! message with an invalid request (`-32600`), and a request whose id is already in
//! flight on the connection with an invalid request naming the id; none of them reaches
//! the handler.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

use crate::util::lock;
use crate::wire::in_flight::InFlight;
use crate::wire::{Ids, Inbound, Refusal};

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
    /// The 2025-11-25 task model, when the registry has a job runtime.
    rev_2025_11_25: Option<Arc<Rev2025_11_25State>>,
    /// The listen requests following tasks, until their acknowledgment is sent (see
    /// [`crate::tasks::listen`]).
    listens: Listens,
}

/// The `taskIds` of listen requests whose acknowledgment is still to be sent, by request.
type Listens = Arc<Mutex<HashMap<rmcp::model::RequestId, Arc<[String]>>>>;

/// What the byte-stream transport knows of the 2025-11-25 task model (see
/// [`crate::tasks::rev_2025_11_25`]): the `initialize` request in flight, and whether the session
/// negotiated 2025-11-25.
#[derive(Default)]
struct Rev2025_11_25State {
    initialize: Mutex<Option<rmcp::model::RequestId>>,
    on: std::sync::atomic::AtomicBool,
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
            rev_2025_11_25: None,
            listens: Listens::default(),
        }
    }

    /// Serve the 2025-11-25 task model (the registry has a job runtime).
    pub(crate) fn with_rev_2025_11_25_tasks(mut self, on: bool) -> Self {
        self.rev_2025_11_25 = on.then(Arc::default);
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

/// The text of a listen stream's acknowledgment with the `taskIds` it follows (and the
/// request forgotten once it is acknowledged or answered).
fn acknowledged(listens: &Listens, item: &ServerJsonRpcMessage) -> Option<Vec<u8>> {
    let mut listens = lock(listens);
    if listens.is_empty() {
        return None;
    }
    match item {
        ServerJsonRpcMessage::Notification(_) => {
            let mut value = serde_json::to_value(item).ok()?;
            let id = listens
                .iter()
                .find(|(id, ids)| crate::wire::listen::patch_acknowledgment(&mut value, id, ids))
                .map(|(id, _)| id.clone())?;
            listens.remove(&id);
            serde_json::to_vec(&value).ok()
        }
        ServerJsonRpcMessage::Response(r) => {
            listens.remove(&r.id);
            None
        }
        ServerJsonRpcMessage::Error(e) => {
            if let Some(id) = &e.id {
                listens.remove(id);
            }
            None
        }
        _ => None,
    }
}

/// The text of the answer to the `initialize` request in flight, with the revision's
/// task capability when it negotiated 2025-11-25.
fn rev_2025_11_25_initialized(
    rev_2025_11_25: &Rev2025_11_25State,
    item: &ServerJsonRpcMessage,
) -> Option<Vec<u8>> {
    let ServerJsonRpcMessage::Response(response) = item else {
        return None;
    };
    {
        let mut initialize = lock(&rev_2025_11_25.initialize);
        if initialize.as_ref() != Some(&response.id) {
            return None;
        }
        *initialize = None;
    }
    let mut value = serde_json::to_value(item).ok()?;
    if !crate::wire::rev_2025_11_25::patch_initialize(&mut value) {
        return None;
    }
    rev_2025_11_25
        .on
        .store(true, std::sync::atomic::Ordering::SeqCst);
    serde_json::to_vec(&value).ok()
}

/// The text of a request the server sends, without the progress token rmcp gave it
/// (see [`crate::wire::outbound::drop_request_progress_token`]).
fn without_progress_token(item: &ServerJsonRpcMessage) -> Option<Vec<u8>> {
    let ServerJsonRpcMessage::Request(_) = item else {
        return None;
    };
    let mut value = serde_json::to_value(item).ok()?;
    if !crate::wire::outbound::drop_request_progress_token(&mut value) {
        return None;
    }
    serde_json::to_vec(&value).ok()
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
        // The answer to `initialize` tells whether the session speaks 2025-11-25: its
        // capabilities then name the revision's tasks. Decided before this returns, so
        // the client's next message is read knowing it.
        let patched = self
            .rev_2025_11_25
            .as_ref()
            .and_then(|rev_2025_11_25| rev_2025_11_25_initialized(rev_2025_11_25, &item))
            .or_else(|| acknowledged(&self.listens, &item))
            .or_else(|| without_progress_token(&item));
        async move {
            let answered = match &item {
                ServerJsonRpcMessage::Response(r) => Some(r.id.clone()),
                ServerJsonRpcMessage::Error(e) => e.id.clone(),
                _ => None,
            };
            // Marked before writing: a client may reuse the id as soon as it reads the
            // answer, and rmcp forgot the request before handing the answer over.
            if let Some(id) = answered {
                in_flight.answered(&id);
            }
            if let Some(text) = patched {
                return write_text(&write, text).await;
            }
            write_message(&write, &item).await
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
            let rev_2025_11_25 = self.rev_2025_11_25.as_ref();
            let reroute =
                rev_2025_11_25.is_some_and(|r| r.on.load(std::sync::atomic::Ordering::SeqCst));
            let key = |id: &rmcp::model::RequestId| id.clone();
            let ids = Ids {
                table: &self.in_flight,
                key: &key,
            };
            let read = crate::wire::read(text, reroute, Some(ids));
            self.line = line;
            self.line.clear();
            let Inbound {
                text,
                mut message,
                attached,
                initialize,
                listen,
                tool_call,
                ..
            } = match read {
                Ok(inbound) => inbound,
                Err(Refusal::Unreadable(error) | Refusal::Refused(error)) => {
                    self.answer(*error);
                    continue;
                }
                Err(Refusal::Dropped(why)) => {
                    tracing::debug!("ignoring an unreadable MCP message: {why}");
                    continue;
                }
            };
            if let (Some(rev_2025_11_25), Some(id)) = (rev_2025_11_25, initialize) {
                *lock(&rev_2025_11_25.initialize) = Some(id);
            }
            if let Some((id, listen)) = listen {
                lock(&self.listens).insert(id, listen.0.clone());
            }
            // A task this client is not served (the session did not negotiate the
            // revision's tasks): the handler refuses it on 2025-11-25.
            let asked = tool_call
                && attached.routed.is_none()
                && crate::wire::rev_2025_11_25::asks_for_task(&text);
            if let ClientJsonRpcMessage::Request(request) = &mut message {
                use rmcp::model::GetExtensions as _;
                if asked {
                    request
                        .request
                        .extensions_mut()
                        .insert(crate::wire::rev_2025_11_25::TaskAsked);
                }
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
