use dsh_runtime::{ToolSchema, tool};

#[derive(serde::Serialize, serde::Deserialize, ToolSchema)]
pub struct TextStats {
    words: usize,
}

/// Count the words of a text.
#[tool]
pub async fn text_stats(text: String) -> TextStats {
    TextStats {
        words: text.split_whitespace().count(),
    }
}

fn main() {}
