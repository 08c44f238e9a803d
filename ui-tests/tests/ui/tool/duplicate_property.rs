use dsh_runtime::tool;

/// Copy a file.
#[tool]
async fn copy(path: String, r#path: String) {
    let _ = path;
}

fn main() {}
