//! The transports: byte streams, one message a line ([`stdio`]), and Streamable HTTP
//! (`http`, feature `http`); and how a [`McpServer`] serves on a byte stream.

pub(crate) mod stdio;

#[cfg(feature = "http")]
pub(crate) mod http;

use crate::McpServer;

/// Serve on standard input and output until the client disconnects: a
/// [`dsh_runtime::Registry`] (every visible tool, with the default settings) or an
/// [`McpServer`] (`&server`), as [`serve_http`](crate::serve_http) takes (see
/// [`McpServer::serve`] for other transports).
///
/// # Errors
///
/// When the connection fails before the client initialized.
pub async fn serve_stdio(
    server: impl Into<McpServer>,
) -> Result<(), rmcp::service::ServerInitializeError> {
    server.into().serve_stdio().await
}

impl McpServer {
    /// Serve one connection on a byte stream (a socket, an in-memory duplex), one
    /// JSON-RPC message a line, until the client disconnects, then close the session.
    ///
    /// The arguments of each `tools/call` reach the registry as the text the client sent
    /// (see [`crate::protocol`]).
    ///
    /// # Errors
    ///
    /// When the connection fails before the client initialized.
    pub async fn serve<S>(&self, stream: S) -> Result<(), rmcp::service::ServerInitializeError>
    where
        S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + 'static,
    {
        let (read, write) = tokio::io::split(stream);
        self.serve_io(read, write).await
    }

    /// Serve one connection reading messages from `read` and writing to `write` (a
    /// process's standard input and output, a child's pipes), one JSON-RPC message a
    /// line, as [`McpServer::serve`] does.
    ///
    /// # Errors
    ///
    /// When the connection fails before the client initialized.
    pub async fn serve_io<R, W>(
        &self,
        read: R,
        write: W,
    ) -> Result<(), rmcp::service::ServerInitializeError>
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        self.start_updates().await;
        let tasks = self.registry().jobs().is_some();
        self.serve_transport(stdio::RawTransport::new(read, write).with_rev_2025_11_25_tasks(tasks))
            .await
    }

    /// Serve on standard input and output until the client disconnects, then close the
    /// session.
    ///
    /// # Errors
    ///
    /// When the connection fails before the client initialized.
    pub async fn serve_stdio(&self) -> Result<(), rmcp::service::ServerInitializeError> {
        // rmcp's pipes: non-blocking when both streams are FIFOs, as clients start
        // stdio servers.
        let (read, write) = rmcp::transport::stdio_pipes();
        self.serve_io(read, write).await
    }
}
