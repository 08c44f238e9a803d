//! An in-memory MCP client/server pair for tests (feature `mcp`): an [`McpServer`]
//! on one end of a `tokio::io::duplex` pipe and rmcp's client on the other, so a test
//! drives a server as a real client would, without processes or ports.
//!
//! ```
//! use dsh_mcp::McpServer;
//! use dsh_testing::mcp::McpTestClient;
//! use dsh_runtime::{tool, Registry};
//!
//! /// Add two numbers.
//! #[tool]
//! async fn add(a: i64, b: i64) -> i64 { a + b }
//!
//! # tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(async {
//! let registry = Registry::new();
//! let _add = registry.register(Add).unwrap();
//! let client = McpTestClient::connect(&McpServer::new(registry)).await.unwrap();
//! let tools = client.list_tools().await.unwrap();
//! assert_eq!(tools[0].name, "add");
//! // The call, and its structuredContent checked against the tool's outputSchema.
//! let result = client.call_checked("add", serde_json::json!({"a": 2, "b": 3})).await.unwrap();
//! assert_eq!(result.structured_content, Some(serde_json::json!({"result": 5})));
//! client.close().await;
//! # });
//! ```

use std::fmt;

use rmcp::RoleClient;
use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::{RunningService, ServiceExt};
use serde_json::Value;

use dsh_mcp::McpServer;

/// The buffer size of each direction of the in-memory pipe.
const PIPE_BYTES: usize = 1 << 16;

/// rmcp's client connected to an [`McpServer`] over an in-memory pipe.
pub struct McpTestClient {
    client: RunningService<RoleClient, ()>,
    server: tokio::task::JoinHandle<()>,
}

impl fmt::Debug for McpTestClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpTestClient").finish_non_exhaustive()
    }
}

/// Why a test client call failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum McpTestError {
    /// The client could not initialize the session.
    Connect(String),
    /// The request failed (a JSON-RPC error, or the connection closed).
    Service(rmcp::ServiceError),
    /// `tools/list` has no tool of this name.
    NoSuchTool(String),
    /// The result breaks the tool's published `outputSchema`.
    OutputSchema {
        /// The tool.
        tool: String,
        /// Every violation, with the JSON pointer of the offending value.
        violations: Vec<String>,
    },
}

impl fmt::Display for McpTestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            McpTestError::Connect(e) => write!(f, "MCP test client: initialization failed: {e}"),
            McpTestError::Service(e) => write!(f, "MCP test client: request failed: {e}"),
            McpTestError::NoSuchTool(name) => {
                write!(f, "MCP test client: tools/list has no tool {name:?}")
            }
            McpTestError::OutputSchema { tool, violations } => write!(
                f,
                "tool {tool:?}: structuredContent breaks its outputSchema: {}",
                violations.join("; ")
            ),
        }
    }
}

impl std::error::Error for McpTestError {}

impl From<rmcp::ServiceError> for McpTestError {
    fn from(e: rmcp::ServiceError) -> Self {
        McpTestError::Service(e)
    }
}

impl McpTestClient {
    /// Start `server` on one end of an in-memory pipe (on a task of the current Tokio
    /// runtime) and initialize rmcp's client on the other.
    ///
    /// # Errors
    ///
    /// [`McpTestError::Connect`] when the initialization fails.
    pub async fn connect(server: &McpServer) -> Result<McpTestClient, McpTestError> {
        let (client_io, server_io) = tokio::io::duplex(PIPE_BYTES);
        let server = server.clone();
        let server = tokio::spawn(async move {
            // A failed handshake shows on the client's side.
            let _ = server.serve(server_io).await;
        });
        match ().serve(client_io).await {
            Ok(client) => Ok(McpTestClient { client, server }),
            Err(e) => {
                server.abort();
                Err(McpTestError::Connect(e.to_string()))
            }
        }
    }

    /// rmcp's client, for any other request.
    pub fn peer(&self) -> &RunningService<RoleClient, ()> {
        &self.client
    }

    /// Every tool `tools/list` shows (all pages).
    ///
    /// # Errors
    ///
    /// [`McpTestError::Service`] when the request fails.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, McpTestError> {
        Ok(self.client.list_all_tools().await?)
    }

    /// `tools/call` of `name` with `arguments` (a JSON object; anything else is sent as
    /// no arguments).
    ///
    /// # Errors
    ///
    /// [`McpTestError::Service`] when the request fails (an unknown tool is a JSON-RPC
    /// error).
    pub async fn call(&self, name: &str, arguments: Value) -> Result<CallToolResult, McpTestError> {
        let mut params = CallToolRequestParams::new(name.to_string());
        if let Value::Object(args) = arguments {
            params = params.with_arguments(args);
        }
        Ok(self.client.call_tool(params).await?)
    }

    /// [`McpTestClient::call`], then check the result's `structuredContent` against the
    /// tool's `outputSchema` from `tools/list` (standard JSON Schema, draft 2020-12).
    ///
    /// # Errors
    ///
    /// Those of [`McpTestClient::call`]; [`McpTestError::NoSuchTool`] when the list has no
    /// such tool; [`McpTestError::OutputSchema`] when the content breaks the schema.
    pub async fn call_checked(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<CallToolResult, McpTestError> {
        let tools = self.list_tools().await?;
        let tool = tools
            .iter()
            .find(|t| t.name == name)
            .ok_or_else(|| McpTestError::NoSuchTool(name.to_string()))?;
        let result = self.call(name, arguments).await?;
        check_structured_content(tool, &result)?;
        Ok(result)
    }

    /// End the session (the server closes it, running its close futures) and wait for
    /// the server task.
    pub async fn close(self) {
        let _ = self.client.cancel().await;
        let _ = self.server.await;
    }
}

/// Check `result` against `tool`'s `outputSchema`: a success with an output schema must
/// carry `structuredContent` that validates (draft 2020-12); an error result (`isError`)
/// and a tool without an output schema pass.
///
/// # Errors
///
/// [`McpTestError::OutputSchema`] with every violation.
pub fn check_structured_content(tool: &Tool, result: &CallToolResult) -> Result<(), McpTestError> {
    let fail = |violations: Vec<String>| McpTestError::OutputSchema {
        tool: tool.name.to_string(),
        violations,
    };
    if result.is_error == Some(true) {
        return Ok(());
    }
    let Some(schema) = &tool.output_schema else {
        return Ok(());
    };
    let schema = Value::Object((**schema).clone());
    let Some(content) = &result.structured_content else {
        return Err(fail(vec![
            "a success has no structuredContent, but the tool publishes an outputSchema"
                .to_string(),
        ]));
    };
    let validator = jsonschema::draft202012::new(&schema)
        .map_err(|e| fail(vec![format!("the outputSchema does not compile: {e}")]))?;
    let violations: Vec<String> = validator
        .iter_errors(content)
        .map(|e| format!("at {:?}: {e}", e.instance_path().to_string()))
        .collect();
    if violations.is_empty() {
        Ok(())
    } else {
        Err(fail(violations))
    }
}
