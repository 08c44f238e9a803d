use dsh_runtime::schema::Schema;
use dsh_runtime::{ToolSchema, tool};

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

fn main() {}
