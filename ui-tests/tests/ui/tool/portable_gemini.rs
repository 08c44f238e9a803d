//! `portable = "gemini"`: what Gemini's OpenAPI `parameters` form cannot state, one
//! parameter per rule.
use std::collections::HashMap;

use dsh_runtime::{ToolSchema, tool};
use serde::Deserialize;

/// A property name with a dash.
#[derive(Deserialize, ToolSchema)]
pub struct Flags {
    #[serde(rename = "dry-run")]
    pub dry_run: bool,
}

/// An object without fields.
#[derive(Deserialize, ToolSchema)]
pub struct Nothing {}

/// A data-carrying enum (a `oneOf`).
#[derive(Deserialize, ToolSchema)]
#[serde(untagged)]
pub enum Either {
    Number(i64),
    Text(String),
}

/// Every rule once.
#[tool(portable = "gemini")]
async fn everything(
    /// A map.
    tags: HashMap<String, i64>,
    /// A dashed property name.
    flags: Flags,
    /// No properties.
    nothing: Nothing,
    /// Two schema examples.
    #[schema(examples = ["a", "b"])]
    word: String,
    /// A union.
    either: Either,
    /// A number enum.
    #[schema(enum = [1, 2, 3])]
    level: i64,
) -> i64 {
    let _ = (tags, flags, nothing, word, either, level);
    0
}

fn main() {}
