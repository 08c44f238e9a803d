//! How each part of the protocol is served, for those who need to know (a page of the
//! documentation: this module has no items).
//!
//! - `tools/list` publishes the tools visible to the session, each mapped by
//!   [`definition::mcp_tool`], which is the tool's entry in `dsh_runtime`'s MCP export
//!   ([`export`](dsh_providers::export::export), `Target::Mcp2025_11_25`): input schema,
//!   output schema (a non-object output is wrapped as `{"result": …}`), annotations. It
//!   announces `tools.listChanged` and sends
//!   `notifications/tools/list_changed` when the published list changes.
//! - `tools/call` runs [`Registry::execute`](dsh_runtime::Registry::execute): the result's
//!   content blocks become MCP content (then each of the result's contexts as a text
//!   block marked `_meta: {"dsh/context": true}`), the canonical value
//!   `structuredContent`; argument errors, tool errors and policy denials are results
//!   with `isError: true` whose text is the registry's path-qualified message, so a model
//!   can correct itself. An unknown tool is a JSON-RPC error (`-32602`), as the protocol
//!   asks.
//! - The arguments of a `tools/call` reach the registry as the exact text the client
//!   sent, over stdio ([`serve_stdio`], [`McpServer::serve`], [`McpServer::serve_io`])
//!   and over Streamable HTTP ([`serve_http`]): each incoming message is read as text
//!   before rmcp parses it, its `params.arguments` taken out unconverted and given to the
//!   registry's lossless parser, as text arguments are. So a duplicate key (at any
//!   depth), `-0`, a number a double cannot hold exactly (`1e400`) and nesting deeper
//!   than the registry's limit are `INVALID_ARGS` results with the parser's message,
//!   exactly as for `ToolCall::new(id, name, text)`, and every key is a key
//!   (`serde_json`'s private `$serde_json::private::RawValue` too). A message whose
//!   envelope or `params` repeats a key is an invalid request (`-32600`).
//!   [`McpServer::serve_transport`] takes messages an rmcp transport already parsed with
//!   `serde_json` and has no such guarantee.
//! - A message that is not JSON is answered with a JSON-RPC parse error (`-32700`, over
//!   HTTP with status `400`), a message that is not a valid MCP request with an invalid
//!   request (`-32600`); neither is ever left unanswered (notifications excepted, which
//!   JSON-RPC never answers; over HTTP they get `400`).
//! - A request whose id is that of a request still in flight on the same connection
//!   (stdio) or session (HTTP) is refused with an invalid request (`-32600`, "request id
//!   … is already in use by a request in flight") and never runs; the first is answered
//!   as usual. The id is free again once the first request was answered (or cancelled
//!   and its handler ended).
//! - `notifications/cancelled` cancels the call's token: the body sees it, and the call
//!   ends as `ABORTED`.
//! - With a `progressToken` in the request, [`ToolContext::report_progress`] becomes
//!   `notifications/progress`.
//! - A call from a session whose pre-execute policy answers `ask`, and that no approval
//!   handler of the registry answered (none installed, or it answered
//!   [`Approval::Unavailable`](dsh_runtime::hooks::Approval::Unavailable)), is put to the
//!   client's user: an `elicitation/create` request with a one-field form (a required
//!   boolean `approve`) whose message names the tool, a one-line summary of the call (the
//!   call card's title, or the tool and its arguments) and the policy's reason, sent over
//!   stdio or on the call's Streamable HTTP event stream. `accept` with `approve: true`
//!   runs the call; `accept` with `false` and `decline` are `APPROVAL_REJECTED`, `cancel`
//!   `APPROVAL_CANCELLED` (a call cancelled while waiting ends `ABORTED_BEFORE_DISPATCH`, and
//!   its form is withdrawn with `notifications/cancelled`). A client that
//!   did not declare the (form) elicitation capability gets the denial of a call with no
//!   approval handler (`POLICY_DENIED`, the policy's reason), its text adding that the
//!   client cannot ask its user, and so do calls without a session on revisions with
//!   `initialize` (stateless HTTP). On protocol 2026-07-28, which has no
//!   server-to-client requests, the call is suspended and the request answered with an
//!   `InputRequiredResult` (the same form as an input request, and a `requestState`
//!   sealed with the server's keyring ([`StateKeys`]), bound to the session, the tool
//!   and the arguments' text, single-use, valid for [`McpServer::with_approval_ttl`]); the
//!   client's retry with the state and its answer resumes the call where it stopped
//!   (policy does not run again) and gets its result. A state that was altered, is
//!   another session's, tool's or arguments', has expired or was already used is
//!   refused with a JSON-RPC invalid-params error (`-32602`) saying why. Such a
//!   suspended call lives in the server process, so the retry must reach the same
//!   process; its progress notifications are not forwarded. A tool call of a code-mode
//!   program (`run_code`, from `dsh-code`) is asked about the same way, its message also
//!   naming the `run_code` call (`Via: tool "run_code", call "<id>"`): the program waits
//!   for the answer, within its deadline, and on 2026-07-28 the `run_code` call is the
//!   one answered with `InputRequiredResult`, its retry resuming the program (and
//!   answered with the next `InputRequiredResult` when a later tool call of the program
//!   asks too).
//! - Each session is an agent scope of the registry ([`dsh_runtime::AgentScope`]): calls carry
//!   its id, so policy hooks see which session a call comes from, and
//!   [`McpServer::on_session`] can register per-session tools and hooks there.
//! - `tools/list` shows every visible tool, unless [`McpServer::with_listing`] narrows
//!   it (code mode lists `run_code` alone).
//! - Tasks (the tasks extension, `io.modelcontextprotocol/tasks`), when the registry has
//!   a job runtime: a tool whose [`ToolDefinition::task_support`] allows it, called in a
//!   session by a client that declared the extension, is answered at once with a
//!   `CreateTaskResult` and runs on as a job of the session's owner
//!   ([`SessionGuard::job_owner`], or an owner the server opens per session), the whole
//!   pipeline call with the job's stop token as its cancellation. The task id is the job
//!   id; `tasks/get` answers `working`, `input_required` (an approval the call waits for,
//!   as an `elicitation/create` input request that `tasks/update` answers), `completed`
//!   (the `CallToolResult` inline, tool errors included), `cancelled` or `failed`;
//!   `tasks/cancel` kills the job. A session sees only its own
//!   tasks, and they stop when it closes. A `required` tool called without the extension
//!   is refused with `-32021`. Progress reports set the task's `statusMessage`; on
//!   revisions with `initialize` they are also sent as `notifications/progress` for the
//!   task's life, and the final state as `notifications/tasks`. On 2026-07-28 a
//!   `subscriptions/listen` request whose filter names tasks (`taskIds`, which rmcp's
//!   filter type lacks and the transports read from the text) gets the ids in its
//!   acknowledgment and a `notifications/tasks` for each of its context's tasks at once and
//!   at each change, until it ends. Requests without a session or the stateless context
//!   get direct answers.
//! - Tasks of protocol revision 2025-11-25 (that revision's own model, which rmcp does
//!   not have), on sessions that negotiated it, on the same jobs: `capabilities.tasks`
//!   and `execution.taskSupport` published, `tools/call` with `params.task` answered
//!   `{task}`, `tasks/get`, `tasks/result` (waits for the end), `tasks/list`,
//!   `tasks/cancel`, `notifications/tasks/status`; there a `required` tool called
//!   without `params.task`, or a `forbidden` one with it, is `-32601`.
//!
//! [`ToolContext::report_progress`]: dsh_runtime::ToolContext::report_progress
//! [`ToolDefinition::task_support`]: dsh_runtime::ToolDefinition::task_support
//! [`serve_stdio`]: crate::serve_stdio
//! [`serve_http`]: crate::serve_http
//! [`McpServer::serve`]: crate::McpServer::serve
//! [`McpServer::serve_io`]: crate::McpServer::serve_io
//! [`McpServer::serve_transport`]: crate::McpServer::serve_transport
//! [`McpServer::with_approval_ttl`]: crate::McpServer::with_approval_ttl
//! [`McpServer::on_session`]: crate::McpServer::on_session
//! [`McpServer::with_listing`]: crate::McpServer::with_listing
//! [`SessionGuard::job_owner`]: crate::SessionGuard::job_owner
//! [`StateKeys`]: crate::StateKeys
//! [`definition::mcp_tool`]: crate::definition::mcp_tool
