use dsh_runtime::tool;

/// Read a file.
#[tool]
fn read_file(path: String) -> String {
    path
}

fn main() {}
