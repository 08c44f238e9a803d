use dsh_runtime::tool;

/// Invalid characters.
#[tool(name = "read file!")]
async fn spaced() {}

/// Too long.
#[tool(name = "a_tool_name_that_is_far_too_long_to_be_accepted_by_model_providers_x")]
async fn long() {}

fn main() {}
