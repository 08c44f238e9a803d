//! A `#[schema(default = ..)]` must fit the parameter's own `range`, `length`, `pattern`,
//! `enum` and `const`; each error points at the default.
use dsh_runtime::tool;

/// Open a ticket.
#[tool]
async fn create_ticket(
    title: String,
    #[schema(range(min = 1, max = 100), default = 0)] page: Option<u32>,
    #[schema(length(max = 3), default = "toolong")] code: Option<String>,
    #[schema(pattern = "^[a-z]+$", default = "ABC")] slug: Option<String>,
    #[schema(enum = ["low", "high"], default = "mid")] level: Option<String>,
    #[schema(const = 2, default = 3)] version: Option<u8>,
) -> String {
    let _ = (page, code, slug, level, version);
    title
}

fn main() {}
