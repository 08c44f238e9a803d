use dsh_runtime::tool;

/// Search.
#[tool]
async fn search(
    #[schema(range(min = 1))] query: String,
    #[schema(pattern = "^a$", length(max = 3))] limit: u32,
    #[schema(enum = [true])] verbose: Option<String>,
) -> String {
    let _ = (limit, verbose);
    query
}

fn main() {}
