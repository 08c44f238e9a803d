//! `portable = "openai-strict"`: every schema feature OpenAI strict mode cannot keep fails
//! the build at the parameter that carries it (one parameter per rule).
use std::collections::HashMap;

use dsh_runtime::{ToolSchema, tool};
use serde::Deserialize;

/// An object that takes undeclared keys.
#[derive(Deserialize, ToolSchema)]
#[schema(open)]
pub struct Loose {
    pub a: i64,
}

/// A data-carrying enum (a `oneOf`).
#[derive(Deserialize, ToolSchema)]
pub enum Shape {
    Circle { r: f64 },
    Square { side: f64 },
}

/// Every rule once.
#[tool(portable = "openai-strict", deny_unknown_args)]
async fn everything(
    /// A map.
    tags: HashMap<String, u32>,
    /// Any JSON.
    raw: serde_json::Value,
    /// An open object.
    loose: Loose,
    /// A length bound.
    #[schema(length(max = 10))]
    title: String,
    /// A default.
    #[schema(default = 3)]
    count: i64,
    /// Schema examples.
    #[schema(example = "x")]
    word: String,
    /// A union.
    shape: Shape,
    /// A nullable item.
    maybe: Vec<Option<i64>>,
) -> i64 {
    let _ = (tags, raw, loose, title, count, word, shape, maybe);
    0
}

fn main() {}
