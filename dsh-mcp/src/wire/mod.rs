//! The client's bytes and rmcp's messages, both ways, for every transport. Inbound, one
//! pipeline ([`read`]): the byte-stream transport ([`crate::transport::stdio`]) hands it
//! each line, the HTTP transport each POSTed body; each gets back the message rmcp should
//! see and what the handler needs besides (the side data, [`Attached`]), or a
//! [`Refusal`]: the answer for a message that never reaches rmcp, the one type every
//! refusal of the server is built with. Outbound, one driver ([`outbound::Outbound`])
//! rewrites what rmcp sends where its types cannot say it.
//!
//! The inbound steps, in order:
//!
//! 1. read the text ([`raw::prepare`]): a parse error (`-32700`), an invalid request
//!    (`-32600`), the raw arguments of a `tools/call` taken out;
//! 2. the `taskIds` of a listen request ([`listen::read`]);
//! 3. reroute a request of the 2025-11-25 task model ([`rev_2025_11_25::reroute`]), when
//!    the session speaks that revision, or mark a task it is not served;
//! 4. a `notifications/cancelled` frees the id it names ([`cancelled_id`]);
//! 5. a request takes its id in the table of ids in flight ([`InFlight::begin`]), or is
//!    refused when it is taken.

pub(crate) mod in_flight;
pub(crate) mod listen;
pub(crate) mod outbound;
pub(crate) mod param_headers;
pub(crate) mod raw;
pub(crate) mod rev_2025_11_25;

use std::sync::Arc;

use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, ErrorData, RequestId,
    ServerJsonRpcMessage,
};

use crate::wire::in_flight::{HandlerToken, InFlight};
use crate::wire::listen::ListenTasks;
use crate::wire::raw::{RawArguments, prepare};
use crate::wire::rev_2025_11_25::{Rev2025_11_25Route, TaskAsked, asks_for_task};

/// What the handler of a message needs besides the message: put in its extensions by
/// the transport ([`Attached::attach`]).
#[derive(Default)]
pub(crate) struct Attached {
    /// The arguments of a `tools/call` as the client sent them.
    pub(crate) arguments: Option<RawArguments>,
    /// The `taskIds` of a listen request.
    pub(crate) listen: Option<ListenTasks>,
    /// Set on a rerouted request of the 2025-11-25 task model.
    pub(crate) routed: Option<Rev2025_11_25Route>,
    /// Set on a `tools/call` asking for a 2025-11-25 task that was not rerouted: the
    /// session does not negotiate the revision's tasks, and the handler refuses it.
    pub(crate) task_asked: Option<TaskAsked>,
    /// Held by the handler: its id is in flight until the last clone is dropped.
    pub(crate) token: Option<HandlerToken>,
}

/// Extensions the side data goes into (a request's, or an HTTP request's).
pub(crate) trait Extensions {
    /// Insert `value`.
    fn put<T: Clone + Send + Sync + 'static>(&mut self, value: T);
}

impl Extensions for rmcp::model::Extensions {
    fn put<T: Clone + Send + Sync + 'static>(&mut self, value: T) {
        self.insert(value);
    }
}

#[cfg(feature = "http")]
impl Extensions for axum::http::Extensions {
    fn put<T: Clone + Send + Sync + 'static>(&mut self, value: T) {
        self.insert(value);
    }
}

impl Attached {
    /// Put the side data into `extensions`.
    pub(crate) fn attach(self, extensions: &mut impl Extensions) {
        if let Some(arguments) = self.arguments {
            extensions.put(arguments);
        }
        if let Some(listen) = self.listen {
            extensions.put(listen);
        }
        if let Some(routed) = self.routed {
            extensions.put(routed);
        }
        if let Some(asked) = self.task_asked {
            extensions.put(asked);
        }
        if let Some(token) = self.token {
            extensions.put(token);
        }
    }
}

/// A message read by [`read`], for rmcp. (The byte-stream transport hands rmcp the parsed
/// message; the text, `may_ask`, `tool_call` and the key are the HTTP transport's.)
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) struct Inbound<K> {
    /// The text rmcp parses (the raw arguments replaced, a rerouted method).
    pub(crate) text: String,
    /// That text, parsed.
    pub(crate) message: ClientJsonRpcMessage,
    /// What the handler needs besides.
    pub(crate) attached: Attached,
    /// The id of an `initialize` request.
    pub(crate) initialize: Option<RequestId>,
    /// The id of a listen request that follows tasks, and their ids.
    pub(crate) listen: Option<(RequestId, ListenTasks)>,
    /// A request that may make the server ask (a `tools/call`, rerouted or not).
    pub(crate) may_ask: bool,
    /// The client sent a `tools/call` request (rerouted or not): the one request a
    /// tool's scope may refuse.
    pub(crate) tool_call: bool,
    /// The key the request holds in the table of ids in flight.
    pub(crate) key: Option<K>,
}

/// Where the ids in flight are kept, and the key of an id (`None`: requests here have
/// no ids in flight to check, e.g. HTTP requests without a session).
pub(crate) struct Ids<'a, K> {
    pub(crate) table: &'a Arc<InFlight<K>>,
    pub(crate) key: &'a dyn Fn(&RequestId) -> K,
}

/// A request or message that goes no further, and its answer: the one type every
/// refusal of the server is built with, over either transport (over stdio only the
/// JSON-RPC ones occur). It holds what an HTTP server answers (the status, the headers,
/// the body) and, for a message, the JSON-RPC answer a stdio server writes.
///
/// `server::admission`'s verdict on a call (a tool beyond the token's scope) is not one:
/// it is the handler's reason for the OAuth layer, which alone knows how to answer it
/// and builds its refusal from it.
#[derive(Debug)]
pub(crate) struct Refusal {
    /// The HTTP status.
    status: u16,
    /// Headers besides the body's `Content-Type`, in order.
    headers: Vec<(Header, String)>,
    body: Answer,
}

/// A header of a refusal (only HTTP refusals have any).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) enum Header {
    /// `Connection`.
    Connection,
    /// `Content-Type`, replacing the body's own.
    ContentType,
    /// `Retry-After`.
    RetryAfter,
    /// `WWW-Authenticate`.
    WwwAuthenticate,
}

/// The body of a refusal (only HTTP refusals have one that is not JSON-RPC).
#[derive(Debug)]
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) enum Answer {
    /// A JSON-RPC error answering the message (over HTTP as `application/json`).
    JsonRpc(Box<ServerJsonRpcMessage>),
    /// A message JSON-RPC never answers (a notification, a response) that cannot be
    /// read, and why: over stdio nothing is written; over HTTP it is answered with an
    /// invalid request (`-32600`) without an id.
    Unanswered(String),
    /// A JSON document (as `application/json`): OAuth's challenges.
    #[cfg_attr(not(feature = "oauth"), allow(dead_code))]
    Json(Vec<u8>),
    /// Text (as `text/plain; charset=utf-8`).
    Text(String),
    /// No body.
    Empty,
}

impl Refusal {
    /// A refusal answered with `status` and `body`.
    pub(crate) fn new(status: u16, body: Answer) -> Refusal {
        Refusal {
            status,
            headers: Vec::new(),
            body,
        }
    }

    /// A message that cannot be read, answered with `error` (over HTTP `400`).
    pub(crate) fn unreadable(error: ErrorData, id: Option<RequestId>) -> Refusal {
        Refusal::new(
            400,
            Answer::JsonRpc(Box::new(ServerJsonRpcMessage::error(error, id))),
        )
    }

    /// A message JSON-RPC never answers that cannot be read, and why (see
    /// [`Answer::Unanswered`]; over HTTP `400`).
    pub(crate) fn unanswered(why: String) -> Refusal {
        Refusal::new(400, Answer::Unanswered(why))
    }

    /// A readable request refused with `error` (over HTTP `200`, as any JSON-RPC error
    /// response).
    pub(crate) fn request(error: ErrorData, id: RequestId) -> Refusal {
        Refusal::new(
            200,
            Answer::JsonRpc(Box::new(ServerJsonRpcMessage::error(error, Some(id)))),
        )
    }

    /// An HTTP request refused with `status` and a text saying why.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn text(status: u16, text: impl Into<String>) -> Refusal {
        Refusal::new(status, Answer::Text(text.into()))
    }

    /// The same refusal with the header `name: value` too.
    #[must_use]
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn with_header(mut self, name: Header, value: impl Into<String>) -> Refusal {
        self.headers.push((name, value.into()));
        self
    }

    /// The HTTP status.
    #[cfg(test)]
    pub(crate) fn status(&self) -> u16 {
        self.status
    }

    /// The HTTP status, the headers besides the body's `Content-Type` (in order), and the
    /// body.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn into_parts(self) -> (u16, Vec<(Header, String)>, Answer) {
        (self.status, self.headers, self.body)
    }

    /// What a stream transport writes: the JSON-RPC answer, or (for a message no
    /// JSON-RPC answer is written for) why nothing is.
    ///
    /// # Errors
    ///
    /// Nothing is written, for the reason given.
    pub(crate) fn into_json_rpc(self) -> Result<Box<ServerJsonRpcMessage>, String> {
        match self.body {
            Answer::JsonRpc(message) => Ok(message),
            Answer::Unanswered(why) | Answer::Text(why) => Err(why),
            Answer::Json(_) | Answer::Empty => Err(format!("refused with {}", self.status)),
        }
    }
}

/// Read one message's bytes through the pipeline (see the module docs): `reroute` says
/// whether the session speaks revision 2025-11-25's task model.
///
/// # Errors
///
/// Why the message does not reach rmcp, with the answer it gets (see [`Refusal`]).
pub(crate) fn read<K>(
    bytes: &[u8],
    reroute: bool,
    ids: Option<Ids<'_, K>>,
) -> Result<Inbound<K>, Refusal>
where
    K: Eq + std::hash::Hash + Clone + Send + Sync + 'static,
{
    let mut prepared = prepare(bytes)?;
    let listen = crate::wire::listen::read(&prepared)?;
    let tool_call = matches!(
        &prepared.message,
        ClientJsonRpcMessage::Request(r) if matches!(r.request, ClientRequest::CallToolRequest(_))
    );
    let routed = reroute && crate::wire::rev_2025_11_25::reroute(&mut prepared);
    let request = match &prepared.message {
        ClientJsonRpcMessage::Request(request) => Some(request),
        _ => None,
    };
    let initialize = request
        .filter(|r| matches!(r.request, ClientRequest::InitializeRequest(_)))
        .map(|r| r.id.clone());
    let may_ask =
        routed || request.is_some_and(|r| matches!(r.request, ClientRequest::CallToolRequest(_)));
    let listen = match (listen, request) {
        (Some(listen), Some(request)) => Some((request.id.clone(), listen)),
        _ => None,
    };
    let mut key = None;
    let mut token = None;
    if let Some(Ids { table, key: key_of }) = ids {
        if let Some(id) = cancelled_id(&prepared.message) {
            // No answer is sent for a cancelled request.
            table.answered(&key_of(&id));
        }
        if let Some(request) = request {
            let k = key_of(&request.id);
            let Some(taken) = table.begin(k.clone()) else {
                return Err(Refusal::request(id_in_use(&request.id), request.id.clone()));
            };
            token = Some(taken);
            key = Some(k);
        }
    }
    let attached = Attached {
        arguments: prepared.arguments,
        listen: listen.as_ref().map(|(_, l)| l.clone()),
        routed: routed.then_some(Rev2025_11_25Route),
        // The params' members, when `prepare` read them; else the text (a call whose
        // method is written with escapes).
        task_asked: (tool_call
            && !routed
            && prepared
                .task
                .unwrap_or_else(|| asks_for_task(&prepared.text)))
        .then_some(TaskAsked),
        token,
    };
    Ok(Inbound {
        text: prepared.text,
        message: prepared.message,
        attached,
        initialize,
        listen,
        may_ask,
        tool_call,
        key,
    })
}

/// The error answering a request whose id is in flight.
fn id_in_use(id: &rmcp::model::RequestId) -> ErrorData {
    ErrorData::invalid_request(
        format!("request id {id} is already in use by a request in flight"),
        None,
    )
}

/// A request's id, or the id a cancellation names, as the key of [`InFlight`].
fn cancelled_id(message: &ClientJsonRpcMessage) -> Option<rmcp::model::RequestId> {
    match message {
        ClientJsonRpcMessage::Notification(n) => match &n.notification {
            ClientNotification::CancelledNotification(c) => c.params.request_id.clone(),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(id: &RequestId) -> RequestId {
        id.clone()
    }

    #[test]
    fn a_call_carries_its_arguments_and_holds_its_id() {
        let table = InFlight::new();
        let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"x":1e400}}}"#;
        let ids = || {
            Some(Ids {
                table: &table,
                key: &key,
            })
        };
        let first = read(call, false, ids()).ok().unwrap();
        assert!(first.may_ask);
        assert!(first.tool_call);
        assert_eq!(
            first.attached.arguments.as_ref().map(|a| &*a.0),
            Some(r#"{"x":1e400}"#)
        );
        assert!(first.text.contains(r#""arguments":{}"#), "{}", first.text);
        // The same id again while the first is in flight: refused.
        match read(call, false, ids()) {
            Err(refusal) => {
                assert_eq!(refusal.status(), 200);
                let error = refusal.into_json_rpc().unwrap();
                let v = serde_json::to_value(&error).unwrap();
                assert_eq!(v["error"]["code"], -32600, "{v}");
                assert_eq!(v["id"], 1, "{v}");
            }
            Ok(_) => panic!("a second request with the id in flight was accepted"),
        }
    }

    #[test]
    fn a_2025_11_25_task_request_is_rerouted_only_when_asked() {
        let get = br#"{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"t"}}"#;
        let plain = read::<RequestId>(get, false, None).ok().unwrap();
        assert!(plain.attached.routed.is_none());
        assert!(!plain.tool_call);
        let routed = read::<RequestId>(get, true, None).ok().unwrap();
        assert!(routed.attached.routed.is_some());
        assert!(
            routed.text.contains(crate::wire::rev_2025_11_25::GET),
            "{}",
            routed.text
        );
        let init = br#"{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"0"}}}"#;
        let init = read::<RequestId>(init, true, None).ok().unwrap();
        assert_eq!(init.initialize, Some(RequestId::Number(3)));
    }
}
