use dsh_runtime::{ToolError, tool};

#[derive(serde::Serialize)]
struct Report {
    lines: u64,
}

/// Count lines.
#[tool]
async fn count(path: String) -> Result<Report, ToolError> {
    Ok(Report {
        lines: path.len() as u64,
    })
}

fn main() {}
