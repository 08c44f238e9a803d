//! OpenAI strict mode allows 10 levels of object nesting, the parameter root included.
use dsh_runtime::{ToolSchema, tool};
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
pub struct Level<T> {
    pub next: T,
}

type Nine = Level<Level<Level<Level<Level<Level<Level<Level<Level<i64>>>>>>>>>;

/// Nine levels in a parameter, ten with the root: fine.
#[tool(portable = "openai-strict", deny_unknown_args)]
async fn deep_enough(value: Nine) -> i64 {
    let _ = value;
    0
}

/// Ten levels in a parameter, eleven with the root.
#[tool(portable = "openai-strict", deny_unknown_args)]
async fn too_deep(value: Level<Nine>) -> i64 {
    let _ = value;
    0
}

fn main() {}
