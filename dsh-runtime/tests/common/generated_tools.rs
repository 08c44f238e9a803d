//! A generated set of 1,000 tools (`verb_noun`, two described parameters each), shared by
//! the `tool_search` tests and benchmark.
#![allow(dead_code)]

use std::sync::Arc;

use dsh_runtime::ToolDefinition;
use dsh_runtime::schema::{Property, Schema};

/// How many tools the set has.
pub(crate) const GENERATED: usize = VERBS.len() * NOUNS.len();

pub(crate) const VERBS: [&str; 20] = [
    "create", "delete", "list", "update", "archive", "restore", "export", "import", "share",
    "lock", "unlock", "rename", "copy", "move", "tag", "approve", "reject", "publish", "sync",
    "audit",
];

pub(crate) const NOUNS: [&str; 50] = [
    "invoice",
    "customer",
    "order",
    "ticket",
    "project",
    "repository",
    "branch",
    "commit",
    "issue",
    "release",
    "deployment",
    "server",
    "database",
    "table",
    "backup",
    "user",
    "group",
    "role",
    "permission",
    "token",
    "secret",
    "bucket",
    "object",
    "queue",
    "message",
    "channel",
    "webhook",
    "calendar",
    "event",
    "meeting",
    "contact",
    "lead",
    "campaign",
    "report",
    "dashboard",
    "metric",
    "alert",
    "incident",
    "runbook",
    "document",
    "folder",
    "spreadsheet",
    "slide",
    "image",
    "video",
    "playlist",
    "product",
    "coupon",
    "shipment",
    "warehouse",
];

/// Tool `i` of the set: `verb_noun`, deferred when `defer` is.
pub(crate) fn generated_tool(i: usize, defer: bool) -> ToolDefinition {
    let verb = VERBS[i % VERBS.len()];
    let noun = NOUNS[i / VERBS.len()];
    let params = Schema::closed_object(vec![
        Property::new(
            "id",
            Schema::string().with_description(format!("The {noun} identifier.")),
            true,
        ),
        Property::new(
            "dry_run",
            Schema::boolean().with_description("Report what would change without changing it."),
            false,
        ),
    ]);
    ToolDefinition::new(
        format!("{verb}_{noun}"),
        format!("{verb} a {noun} of the workspace and return the {noun} record."),
        Arc::new(params),
        Arc::new(Schema::json()),
    )
    .with_defer_loading(defer)
}
