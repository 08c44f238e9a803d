//! dsh-mcp's integration tests, one binary: a module per subject, sharing the tools,
//! the transport × revision matrix, the scripted client user and the raw clients of
//! [`common`].

mod common;

mod approval;
mod apps;
mod apps_results;
mod body_limit;
mod caller;
mod client_relay;
mod content;
mod context;
mod http;
mod http_hardening;
mod import;
mod lifecycle;
mod oauth;
mod oauth_client;
mod param_headers;
mod raw;
mod serve;
mod store;
mod tasks;
mod tasks_2025;
mod tasks_listen;
mod trace;
