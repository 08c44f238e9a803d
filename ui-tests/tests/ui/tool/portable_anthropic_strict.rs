//! `portable = "anthropic-strict"`: the rules Anthropic strict tool use adds to OpenAI's
//! (numeric bounds, item counts) and the ones both share, one parameter per rule.
use std::collections::BTreeMap;

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
#[serde(tag = "kind")]
pub enum Shape {
    Circle { r: f64 },
    Square { side: f64 },
}

/// Every rule once.
#[tool(portable = "anthropic-strict", deny_unknown_args)]
async fn everything(
    /// A map.
    tags: BTreeMap<String, String>,
    /// Any JSON.
    raw: serde_json::Value,
    /// An open object.
    loose: Loose,
    /// A length bound (`char` is a string of length 1).
    letter: char,
    /// A 32-bit integer: its range is published.
    small: u32,
    /// An explicit range.
    #[schema(range(min = 1))]
    limit: i64,
    /// A fixed-size array.
    pair: [i64; 2],
    /// Schema examples.
    #[schema(example = "x")]
    word: String,
    /// A union.
    shape: Shape,
    /// A nullable item.
    maybe: Vec<Option<String>>,
) -> i64 {
    let _ = (tags, raw, loose, letter, small, limit, pair, word, shape, maybe);
    0
}

/// A default is kept by Anthropic strict: this compiles, and so does `i64`.
#[tool(portable = "anthropic-strict", deny_unknown_args)]
async fn fine(#[schema(default = 3)] count: i64, text: String) -> i64 {
    let _ = text;
    count
}

fn main() {}
