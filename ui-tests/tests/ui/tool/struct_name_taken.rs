//! `#[tool(struct_name = "..")]` naming a type that already exists: one error at the
//! name, saying to pick another.
use dsh_runtime::tool;

pub struct Report {
    pub words: usize,
}

/// Count the words of a text.
#[tool(struct_name = "Report")]
async fn count_words(text: String) -> usize {
    text.split_whitespace().count()
}

fn main() {}
