use dsh_runtime::tool;

/// Read a file.
///
/// # Arguments
///
/// * `path` - The file.
/// * `lmit` - Maximum number of lines.
#[tool]
async fn read_file(path: String, limit: Option<u64>) -> String {
    let _ = limit;
    path
}

fn main() {}
