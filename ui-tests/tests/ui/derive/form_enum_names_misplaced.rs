use dsh_runtime::ToolSchema;
use serde::Deserialize;

/// `enum_names` is for enums of unit variants.
#[derive(ToolSchema, Deserialize)]
#[schema(enum_names)]
struct Person {
    name: String,
}

fn main() {}
