use dsh_runtime::tool;

/// Takes two parameters although `args` makes one the whole arguments object.
#[tool(args)]
async fn merge(first: String, second: String) -> String {
    first + &second
}

fn main() {}
