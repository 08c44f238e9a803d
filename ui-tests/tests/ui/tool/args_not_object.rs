//! `#[tool(args)]` takes the whole arguments object from one parameter, so its type must
//! have an object schema.
use dsh_runtime::tool;

/// Take a bare string as the arguments.
#[tool(args)]
async fn not_an_object(text: String) -> String {
    text
}

fn main() {}
