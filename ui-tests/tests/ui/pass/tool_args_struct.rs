//! One struct as the whole arguments object (`#[tool(args)]`), any pattern.
use dsh_runtime::schema::Schema;
use dsh_runtime::{Tool, ToolContext, ToolSchema, tool};

#[derive(serde::Deserialize)]
pub struct Filter {
    field: String,
    limit: u32,
}

impl ToolSchema for Filter {
    fn build_schema() -> Schema {
        dsh_runtime::__private::closed(vec![
            dsh_runtime::__private::field::<String>("field", "", false),
            dsh_runtime::__private::field::<u32>("limit", "", false),
        ])
    }
}

/// Search with one filter.
#[tool(args)]
async fn search(Filter { field, limit }: Filter, cx: ToolContext) -> Vec<String> {
    let _ = cx;
    vec![field; limit as usize]
}

fn main() {
    let _ = Search.definition();
}
