use dsh_runtime::schema::Schema;
use dsh_runtime::{ToolSchema, tool, toolbox};

struct Report {
    lines: u64,
}

impl ToolSchema for Report {
    fn build_schema() -> Schema {
        Schema::json()
    }
}

/// Count lines.
#[tool]
async fn count(path: String) -> Report {
    Report {
        lines: path.len() as u64,
    }
}

struct Counter;

// In a toolbox too: one error, at the method's output type.
#[toolbox]
impl Counter {
    /// Count lines.
    #[tool]
    async fn count_lines(&self, path: String) -> Report {
        Report {
            lines: path.len() as u64,
        }
    }
}

fn main() {}
