//! A field's `#[schema(default = ..)]` must fit the field's own keys, as on a `#[tool]`
//! parameter; each error points at the default.
use dsh_runtime::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
pub struct Filter {
    #[schema(range(min = 1, max = 100), default = 500)]
    limit: Option<u32>,
    #[schema(length(min = 2), default = "a")]
    name: Option<String>,
    #[schema(const = "x", default = "y")]
    kind: Option<String>,
}

fn main() {}
