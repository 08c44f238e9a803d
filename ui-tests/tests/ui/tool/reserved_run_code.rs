use dsh_runtime::tool;

/// Runs code.
#[tool(name = "run_code")]
async fn my_runner(code: String) -> String {
    code
}

fn main() {}
