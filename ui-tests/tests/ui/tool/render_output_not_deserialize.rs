use dsh_runtime::schema::Schema;
use dsh_runtime::{content::ContentBlock, ToolSchema, tool};

#[derive(serde::Serialize)]
struct Report {
    lines: u64,
}

impl ToolSchema for Report {
    fn build_schema() -> Schema {
        Schema::json()
    }
}

fn show(_: &CountArgs, report: &Report) -> Vec<ContentBlock> {
    vec![ContentBlock::text(report.lines.to_string())]
}

/// Count lines.
#[tool(render = show)]
async fn count(path: String) -> Report {
    Report {
        lines: path.len() as u64,
    }
}

fn main() {}
