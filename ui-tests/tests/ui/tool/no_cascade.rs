//! One mistake in `#[tool(...)]` gives one error: the fn, the tool struct and the args
//! struct still exist, so the code using them compiles.
use dsh_runtime::{Tool, tool};

/// Read a file.
#[tool(read_olny)]
async fn read_file(path: String, limit: Option<u64>) -> String {
    let _ = limit;
    path
}

fn main() {
    let args = ReadFileArgs {
        path: "/etc/hosts".into(),
        limit: None,
    };
    let _ = (ReadFile.definition(), args.path, read_file(String::new(), None));
}
