//! A `#[schema(default = ..)]` must fit the parameter's type: its JSON type, an integer
//! type's range, a unit enum's variants. Each error points at the default.
use dsh_runtime::{ToolSchema, tool};
use serde::Deserialize;

/// How urgent a ticket is.
#[derive(Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    Low,
    High,
}

/// Open a ticket.
#[tool]
async fn create_ticket(
    title: String,
    #[schema(range(min = 1, max = 100), default = "twenty")] limit: Option<u32>,
    #[schema(default = -1)] count: Option<u32>,
    #[schema(default = 2.5)] retries: Option<u8>,
    #[schema(default = "urgent")] priority: Option<Priority>,
    #[schema(default = "High")] fallback: Option<Priority>,
    #[schema(default = ["a"])] tags: Option<String>,
) -> String {
    let _ = (limit, count, retries, priority, fallback, tags);
    title
}

fn main() {}
