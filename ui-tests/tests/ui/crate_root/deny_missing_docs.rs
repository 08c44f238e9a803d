//! A crate root with `#![deny(missing_docs, warnings)]`: every item `#[tool]`, `#[toolbox]`
//! and `#[derive(ToolSchema)]` generate is documented and warning-free, including the
//! args struct of a tool with an undocumented parameter. Only a crate root can check
//! this, so the case is compiled (and run) by trybuild; it also puts trybuild in build
//! mode, where post-monomorphization errors (`derive/untagged_generic_overlap.rs`) show.
#![deny(missing_docs, warnings)]

use std::sync::Arc;

use dsh_runtime::{Tool, ToolSchema, Toolbox, tool, toolbox};
use serde::{Deserialize, Serialize};

/// A search filter.
#[derive(Deserialize, Serialize, ToolSchema)]
pub struct Filter {
    /// The field to compare.
    pub field: String,
    /// At most this many matches.
    #[serde(default)]
    #[schema(range(max = 100))]
    pub limit: u32,
}

/// Search with a filter.
#[tool(read_only)]
pub async fn search(filter: Filter, #[schema(length(min = 1))] query: String) -> Vec<String> {
    vec![filter.field, query]
}

/// A private output type of a private tool: the `where` clause the expansion puts on the
/// `Tool` impl (`HitCount: Serialize`) raises no `private_bounds` warning.
#[derive(Serialize, ToolSchema)]
struct HitCount {
    /// How many.
    n: u64,
}

/// Count the hits of a text.
#[tool]
async fn hits(text: String) -> HitCount {
    HitCount {
        n: text.len() as u64,
    }
}

/// A shared counter.
pub struct Counter;

#[toolbox]
impl Counter {
    /// Count.
    #[tool]
    pub async fn count(&self, #[schema(range(max = 10))] by: u64) -> u64 {
        by
    }
}

fn main() {
    assert_eq!(Search.definition().name, "search");
    assert_eq!(Hits.definition().name, "hits");
    let tools = Arc::new(Counter).tools();
    assert_eq!(tools.len(), 1);
    let _ = SearchArgs {
        filter: Filter {
            field: String::new(),
            limit: 0,
        },
        query: String::new(),
    };
}
