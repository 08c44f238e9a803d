//! `#[tool(args)]` with a type that derives `ToolSchema` but not `Deserialize`: one error
//! at the type (not a second one from the `Tool::Args` bound or the runtime's helpers).
use dsh_runtime::{ToolSchema, tool, toolbox};

#[derive(ToolSchema)]
pub struct Filter {
    field: String,
}

/// Search with one filter.
#[tool(args)]
async fn search(filter: Filter) -> String {
    filter.field
}

pub struct Index;

#[toolbox]
impl Index {
    /// Search the index with one filter.
    #[tool(args)]
    pub async fn find(&self, filter: Filter) -> String {
        filter.field
    }
}

fn main() {}
