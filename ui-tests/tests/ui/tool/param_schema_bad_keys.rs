use dsh_runtime::schema::Schema;
use dsh_runtime::{ToolContext, ToolSchema, tool};

fn any() -> Schema {
    Schema::json()
}

/// Search.
#[tool]
async fn search(
    #[schema(lenght(max = 3), minimum = 1)] query: String,
    #[schema(with = any, open)] raw: String,
    #[schema(range(min = 5, max = 1), pattern = "(")] limit: Option<u32>,
    #[schema(title = "A", title = "B")] mode: Option<String>,
    #[schema(description = "the context")] cx: ToolContext,
) -> String {
    let _ = (raw, limit, mode, cx);
    query
}

#[derive(serde::Deserialize, ToolSchema)]
struct Filter {
    field: String,
}

/// Filter.
#[tool(args)]
async fn filter_notes(#[schema(description = "The filter.")] f: Filter) -> String {
    f.field
}

fn main() {}
