use dsh_runtime::tool;

/// Read a file.
///
/// # Arguments
///
/// * `path` - The file.
#[tool]
async fn read_file(
    /// The file, again.
    path: String,
) -> String {
    path
}

fn main() {}
