use dsh_runtime::tool;

/// # Arguments
///
/// * `path` - The only documentation is about the parameter.
#[tool]
async fn read(path: String) -> String {
    path
}

/// Fine doc, empty key.
#[tool(description = "  ")]
async fn write(path: String) -> String {
    path
}

fn main() {}
