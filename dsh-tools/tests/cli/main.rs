//! Integration tests of `dsh-tools`, grouped in one test binary (one link instead of one per file).

mod cli;
mod code_command;
mod docs_sync;
mod export_cli;
mod html;
mod mcp_ask;
mod mcp_cluster;
mod mcp_code_mode;
mod mcp_drain;
mod mcp_host;
mod mcp_http;
mod mcp_import_oauth;
mod mcp_oauth;
mod mcp_otel;
mod mcp_python;
mod mcp_relay;
mod mcp_server_files;
mod mcp_tasks;
mod mcp_typescript;
mod mcp_typescript_tasks;
mod process;
