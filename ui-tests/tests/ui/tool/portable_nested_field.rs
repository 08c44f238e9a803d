//! A rule broken deep inside a parameter's type is reported at the parameter, naming the
//! field path; a list of targets reports each one.
use std::collections::HashMap;

use dsh_runtime::{ToolSchema, tool};
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
pub struct Filter {
    pub field: String,
    pub labels: HashMap<String, String>,
}

#[derive(Deserialize, ToolSchema)]
pub struct Query {
    pub text: String,
    pub filters: Vec<Filter>,
}

/// Search.
#[tool(portable("openai-strict", "gemini"), deny_unknown_args)]
async fn search(query: Query) -> i64 {
    let _ = query;
    0
}

fn main() {}
