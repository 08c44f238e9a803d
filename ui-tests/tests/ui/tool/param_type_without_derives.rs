//! A parameter type needs `Deserialize` and `ToolSchema`: one error at the type whichever
//! is missing.
use dsh_runtime::{ToolSchema, tool};

struct Plain {
    field: String,
}

#[derive(serde::Deserialize)]
struct OnlyDeserialize {
    field: String,
}

#[derive(ToolSchema)]
struct OnlySchema {
    field: String,
}

/// Plain derive.
#[tool]
async fn neither(query: String, filter: Plain) -> String {
    filter.field + &query
}

/// `Deserialize` only.
#[tool]
async fn no_schema(filter: OnlyDeserialize) -> String {
    filter.field
}

/// `ToolSchema` only, inside a container.
#[tool]
async fn no_deserialize(filters: Vec<OnlySchema>) -> usize {
    filters.iter().map(|f| f.field.len()).sum()
}

fn main() {}
