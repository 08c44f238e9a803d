//! `struct_name` and `args_struct_name`: a tool whose default struct name is taken, tools
//! declared inside a fn body, and the visibilities the generated struct keeps.
use dsh_runtime::{Tool, ToolSchema, tool};

#[derive(serde::Serialize, serde::Deserialize, ToolSchema)]
pub struct TextStats {
    words: usize,
}

/// Count the words of a text.
#[tool(struct_name = "TextStatsTool")]
pub async fn text_stats(text: String) -> TextStats {
    TextStats {
        words: text.split_whitespace().count(),
    }
}

/// Count the lines of a text.
#[tool(struct_name = "Lines", args_struct_name = "LinesInput")]
pub async fn line_count(text: String) -> usize {
    text.lines().count()
}

mod nested {
    use dsh_runtime::tool;

    /// Visible in the parent module.
    #[tool]
    pub(super) async fn parent_only() {}

    /// Visible in the crate.
    #[tool]
    pub(crate) async fn crate_wide() {}
}

pub fn main() {
    assert_eq!(TextStatsTool.definition().name, "text_stats");
    let _ = TextStatsToolArgs {
        text: String::new(),
    };
    assert_eq!(Lines.definition().name, "line_count");
    let _ = LinesInput {
        text: String::new(),
    };
    let _ = (nested::ParentOnly.definition(), nested::CrateWide);

    /// Declared inside a fn body.
    #[tool]
    async fn local(n: u8) -> u8 {
        n
    }
    assert_eq!(Local.definition().name, "local");
    let _ = LocalArgs { n: 1 };
}
