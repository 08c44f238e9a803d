use dsh_runtime::tool;

/// Borrowed parameter.
#[tool]
async fn borrow(path: &str) -> String {
    path.to_string()
}

fn main() {}
