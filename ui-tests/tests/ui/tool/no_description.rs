use dsh_runtime::tool;

#[tool]
async fn undocumented(path: String) -> String {
    path
}

fn main() {}
