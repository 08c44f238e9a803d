//! # dsh-mcp
//!
//! The Model Context Protocol for a [`dsh_runtime::Registry`], built on rmcp (the
//! official Rust SDK). What you do with it:
//!
//! - **Serve a registry's tools** to MCP clients (desktop assistants, IDEs, other agent
//!   harnesses): [`serve_stdio`] for a server a client starts as a process, or
//!   [`serve_http`] (feature `http`) for Streamable HTTP; [`McpServer`] configures the
//!   name, instructions, per-session tools ([`McpServer::on_session`]) and more.
//! - **Import an MCP server's tools** into a registry: [`connect_command`] (or
//!   [`connect_http`]) and [`import()`].
//! - **Run several instances** behind a load balancer: give them one
//!   [`store::Store`] ([`McpServer::with_store`]) and one keyring ([`StateKeys`],
//!   [`McpServer::with_state_keys`]).
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use dsh_runtime::Registry;
//!
//! let registry = Registry::new();
//! // ... register tools ...
//! dsh_mcp::serve_stdio(registry).await?;
//! # Ok(()) }
//! ```
//!
//! Over HTTP (loopback by default; see [`HttpOptions`] for tokens, hosts and limits):
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! # #[cfg(feature = "http")] {
//! use dsh_mcp::{HttpOptions, McpServer};
//!
//! let server = McpServer::new(dsh_runtime::Registry::new());
//! let http = dsh_mcp::serve_http(&server, HttpOptions::default()).await?;
//! println!("serving at {}", http.url());
//! http.wait().await?;
//! # }
//! # Ok(()) }
//! ```
//!
//! Importing (the details are under [Importing](#importing)):
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use dsh_runtime::Registry;
//!
//! let client = dsh_mcp::connect_command("npx -y @modelcontextprotocol/server-everything").await?;
//! let imported = dsh_mcp::import(client.peer()).await?;
//! for rejected in &imported.rejected {
//!     eprintln!("{rejected}");
//! }
//! let registry = Registry::new();
//! let _registrations = imported
//!     .tools
//!     .into_iter()
//!     .map(|tool| registry.register_dyn(tool))
//!     .collect::<Result<Vec<_>, _>>()?;
//! // Keep `client` alive while the tools are registered.
//! # Ok(()) }
//! ```
//!
//! # Importing
//!
//! Each remote tool becomes a [`dsh_runtime::RawTool`] whose schemas are the server's,
//! read through the registry's raw JSON Schema import, so calls pass the same pipeline as
//! local tools (validation against the published schema, policy, guards, timeouts,
//! observers) before they are forwarded. A tool whose schema is outside the vocabulary is
//! not imported: it is reported in [`Imported::rejected`] with `UNSUPPORTED_SCHEMA` and
//! every violation, and the others still are.
//!
//! Before that import, three spellings that mean the same in JSON Schema 2020-12 are
//! brought into the vocabulary's form, since nearly every server emits them: a root
//! `$schema` naming draft 2020-12, 2019-09 or 07 is dropped (MCP's dialect is 2020-12,
//! and these drafts agree on every keyword of the vocabulary); `format` is dropped (an
//! annotation, never asserted by default in 2020-12); and an object node without
//! `additionalProperties` states the JSON Schema default, `true`. Nothing else is
//! rewritten: `anyOf`, `$ref`, `minLength` and the like stay violations.
//!
//! The canonical value of an imported call is the server's `structuredContent` when the
//! tool publishes an output schema, and otherwise the result's `content` array as the
//! protocol encodes it (rendered back to text and image blocks). An output schema that is
//! exactly the wrapping a dsh-mcp server publishes for a non-object output
//! (`{"type":"object","properties":{"result":S},"required":["result"],"additionalProperties":false}`
//! with `S` not an object schema, see [`definition`]) is imported as `S`, and the value is
//! taken out of `{"result": …}`; an object output that is not such a wrapping (its
//! `result` an object) is imported as it is. A result with `isError: true` fails with code
//! [`MCP_TOOL_ERROR`] and the result's text (a leading `Error: ` taken off, since the
//! registry words every failure so); a protocol or transport error fails with
//! [`MCP_REQUEST_FAILED`]. Text blocks marked as contexts
//! ([`definition::CONTEXT_META_KEY`], e.g. the served registry's note on arguments it
//! ignored) become contexts of the imported result, not content.
//!
//! # One path per name
//!
//! Every public name of this crate has one path: the serving and importing API at the
//! root, the rest in its module ([`store`], [`definition`], [`protocol`], `oauth`), never
//! both. [`rmcp`] is re-exported whole, for its types.
//!
//! # Features
//!
//! - `http`: Streamable HTTP, serving ([`serve_http`]) and importing ([`connect_http`]);
//!   it carries axum, hyper and reqwest. Without it the crate serves and imports over
//!   stdio and byte streams only.
//! - `oauth` (with `http`): the HTTP server as an OAuth 2.1 resource server
//!   ([`HttpOptions::oauth`], the [`oauth`] module): access tokens checked against the
//!   issuer's JWKS, protected-resource metadata, the token's [`Identity`] as the principal
//!   of tasks, approval states and sessions; with [`McpServer::with_tool_scopes`], scopes
//!   per tool.
//! - `https`: TLS for importing from `https://` servers (and, with `oauth`, for reading
//!   an issuer's metadata and JWKS over `https://`).
//! - (the in-memory client/server pair for tests is `dsh_testing::mcp`, feature `mcp` of
//!   `dsh-testing`.)
//! - `store-conformance`: `dsh_mcp::store::conformance`, the checks a [`store::Store`]
//!   implementation must pass.
//!
//! # State: the store and the keys
//!
//! Tasks and single-use approval states live behind one trait, [`store::Store`] (in
//! memory by default, [`store::MemoryStore`]); what only a process can hold (a task's
//! running call and job, a call suspended on its approval) stays in the instance. The
//! `requestState` of protocol 2026-07-28 is sealed with a keyring ([`StateKeys`]: the
//! first key seals, any opens; one random key per process by default). Instances that
//! share a store and keys answer each other's `tasks/get`, `tasks/update` and
//! `tasks/cancel` (a cancellation reaches the call where it runs) and recognise the same
//! stateless client. See [`store`] for the trait and its contract.
//!
//! # How it is built
//!
//! A `tools/call` reads, module by module: the transport (`transport`) hands the client's
//! bytes to the wire (`wire`), which reads them as the client sent them for rmcp; rmcp
//! hands the request to the server (`server`), which asks the caller when policy says so
//! (`approval`) and runs the tool, its result mapped by [`definition`]; rmcp serializes
//! the answer, the wire rewrites what rmcp cannot say, and the transport sends it. How
//! each part of the protocol is served is on the [`protocol`] page.
//!
//! ```text
//! lib.rs                 this facade: the public items, re-exported
//! protocol.rs            a page of documentation: how each part of the protocol is served
//! transport/             the transports, and how a server serves on a byte stream
//!   stdio.rs             the byte-stream transport: one message a line, each way
//!   http/                Streamable HTTP:
//!     mod.rs             the options, the running server, serve_http
//!     endpoint.rs        every step of a request in order; the one place a body is read
//!     messages.rs        a POSTed message through the wire; responses and refusals framed
//!     accept.rs          the connection loop: timeouts, the connection cap, shutdown
//!     sessions.rs        sessions that stay alive while in use, ended when idle
//!     lifecycle.rs       health, readiness, and the drain before a stop
//!     oauth/             the server as an OAuth 2.1 resource server, public as `oauth`:
//!       mod.rs           the options, and what the server checks of a token
//!       layer.rs         the token check, the metadata routes, the wait for a verdict
//!       validate.rs      one access token: its header, its key, its claims
//!       jwks.rs          the issuer's keys, read at start and again in the background
//!       metadata.rs      the protected-resource metadata and where it is served
//!       challenge.rs     the OAuth answers: 401 with a challenge, 403 for a scope
//! wire/                  the client's bytes and rmcp's messages, both ways, for both:
//!   mod.rs               each message read, or refused (the one refusal type, Refusal)
//!   raw.rs               a message's text: a tools/call's arguments exactly as sent
//!   outbound.rs          what the server sends, rewritten: one driver (Outbound)
//!   rev_2025_11_25.rs    revision 2025-11-25's task requests, rerouted for rmcp
//!   listen.rs            the taskIds of a listen stream, which rmcp's filter lacks
//!   in_flight.rs         the request ids in flight on a connection or in a session
//! server/                McpServer and the rmcp handler:
//!   mod.rs               McpServer, its settings, serve_transport
//!   handler.rs           the rmcp handler of one connection or stateless request
//!   call.rs              a tools/call as named steps
//!   task_calls.rs        tasks from the handler's side, both task models
//!   context.rs           where a request runs: its session, or the stateless context
//!   admission.rs         letting a call in: its tool's scope, the limits per principal
//!   scopes.rs            the OAuth scope each tool needs
//!   tool_list.rs         the published tools, built once per registry generation
//!   progress.rs          a call's progress reports as notifications/progress
//! tasks/                 tool calls as tasks, on the registry's jobs:
//!   mod.rs               a session's tasks: start, follow, cancel, forget
//!   rev_2025_11_25.rs    the requests of revision 2025-11-25's task model
//!   listen.rs            a listen stream following tasks
//!   stateless.rs         stateless requests' tasks: public ids, a time to live, a cap
//!   wire.rs              a task record in each model's wire format
//! approval/              a call asking its caller:
//!   mod.rs               the approval form, over elicitation or inside a task
//!   resume.rs            2026-07-28: InputRequiredResult, and the retry that resumes
//!   keys.rs              the keyring sealing approval states, keying principals
//!   instance.rs          answers forwarded between instances sharing a store
//! store/                 the shared state behind one trait, Store:
//!   mod.rs               the trait, its records and errors
//!   memory.rs            the in-memory store, the default
//!   redis.rs             the store on Redis, shared by several instances
//!   record.rs            the task state machine
//!   lease.rs             an instance's lease: a live instance told from a stopped one
//!   conformance.rs       the checks every store must pass
//! import.rs              an MCP server's tools imported into a registry
//! definition.rs          a tool definition as an MCP tool, a result as MCP content
//! identity.rs            who a request comes from, as its access token says
//! util.rs                small helpers: the poison-tolerant lock, random text, time
//! ```
//!
//! No module imports a sibling that imports it back.
#![deny(missing_docs)]
// Without `http` (or `oauth`) the HTTP items these docs link to do not exist: their links
// render as plain text there, and docs.rs documents every feature.
#![cfg_attr(
    not(all(feature = "http", feature = "oauth")),
    allow(rustdoc::broken_intra_doc_links)
)]

mod approval;
mod caller;
mod client;
mod content;
pub mod definition;
mod identity;
mod import;
#[cfg(feature = "otel")]
mod propagation;
pub mod protocol;
mod server;
pub mod store;
mod tasks;
mod transport;
mod util;
mod wire;

pub use approval::keys::{MIN_KEY_BYTES, STATE_KEYS_ENV, StateKeyError, StateKeys};
#[cfg(feature = "oauth-client")]
pub use client::oauth as oauth_client;
pub use client::{ClientBuilder, ClientRelay, DEFAULT_REVISIONS};
pub use identity::Identity;
#[cfg(feature = "http")]
pub use import::connect_http;
pub use import::import_from;
pub use import::{
    ConnectError, ImportOptions, Imported, MCP_REQUEST_FAILED, MCP_TOOL_ERROR, McpClient, Rejected,
    connect_command, import, import_tools, import_tools_with, import_with,
};
pub use server::{McpServer, PrincipalLimits, SessionGuard, ToolScopes};
pub use tasks::stateless::StatelessTaskLimits;
#[cfg(feature = "oauth")]
pub use transport::http::oauth;
#[cfg(feature = "http")]
pub use transport::http::{HttpOptions, HttpServer, serve_http};
pub use transport::serve_stdio;

/// The rmcp version this crate is built on, re-exported for its types.
pub use rmcp;
