use dsh_runtime::tool;

#[derive(serde::Deserialize, serde::Serialize)]
struct Filter {
    field: String,
}

/// Search with a filter.
#[tool]
async fn search(query: String, filter: Filter) -> Vec<String> {
    let _ = filter.field;
    vec![query]
}

fn main() {}
