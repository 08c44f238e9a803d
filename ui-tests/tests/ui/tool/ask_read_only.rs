//! A tool that asks for approval before each call cannot be published as read-only, and
//! its reason cannot be empty.
use dsh_runtime::tool;

/// Read a secret.
#[tool(read_only, ask = "secrets need a yes")]
async fn read_secret(name: String) -> String {
    name
}

/// Close a ticket.
#[tool(ask = "")]
async fn close_ticket(id: u64) -> u64 {
    id
}

fn main() {}
