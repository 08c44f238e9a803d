//! One struct as the whole arguments object (`#[tool(args)]`), any pattern.
use dsh_runtime::{Tool, ToolContext, ToolSchema, tool};

#[derive(serde::Deserialize, ToolSchema)]
pub struct Filter {
    field: String,
    limit: u32,
}

/// Search with one filter.
#[tool(args)]
async fn search(Filter { field, limit }: Filter, cx: ToolContext) -> Vec<String> {
    let _ = cx;
    vec![field; limit as usize]
}

/// Count the entries of a map (a string-keyed map is an object too).
#[tool(args)]
async fn count(entries: std::collections::BTreeMap<String, u32>) -> usize {
    entries.len()
}

pub fn main() {
    let _ = Search.definition();
    let _ = Count.definition();
}
