//! A tool whose schema every checked target keeps as it is compiles with `portable`
//! listing all of them; input examples come from the doc's `# Examples` JSON blocks and
//! the `example` keys.
use dsh_runtime::{Registry, Tool, ToolContext, ToolSchema, tool, toolbox};

/// How to sort.
#[derive(serde::Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    Newest,
    Oldest,
}

/// One filter.
#[derive(serde::Deserialize, ToolSchema)]
pub struct Filter {
    /// The field.
    pub field: String,
    /// The value, when the field must have one.
    pub equals: Option<String>,
}

/// Search the notes.
///
/// # Examples
///
/// The newest notes about groceries:
///
/// ```json
/// {"query": "groceries", "order": "newest"}
/// ```
#[tool(
    portable("openai-strict", "anthropic-strict", "gemini"),
    deny_unknown_args,
    example = r#"{"query": "tax", "filters": [{"field": "year", "equals": "2025"}], "limit": 3}"#
)]
async fn search_notes(
    query: String,
    order: Option<Order>,
    filters: Option<Vec<Filter>>,
    limit: Option<i64>,
    cx: ToolContext,
) -> Vec<String> {
    let _ = (order, filters, limit, cx);
    vec![query]
}

/// The arguments of `tag_note`.
#[derive(serde::Deserialize, ToolSchema)]
#[serde(deny_unknown_fields)]
pub struct Tagging {
    /// The note.
    pub id: String,
    /// The tags to add.
    pub tags: Vec<String>,
}

/// Tag a note.
#[tool(args, portable = "gemini")]
async fn tag_note(t: Tagging) -> usize {
    let _ = t.id;
    t.tags.len()
}

pub struct Notes;

#[toolbox]
impl Notes {
    /// Count the notes.
    #[tool(portable = "openai-strict", deny_unknown_args)]
    async fn count(&self, prefix: Option<String>) -> usize {
        prefix.map_or(0, |p| p.len())
    }
}

pub fn main() {
    let examples: Vec<String> = SearchNotes
        .definition()
        .input_examples
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        examples,
        [
            r#"{"query":"groceries","order":"newest"}"#,
            r#"{"query":"tax","filters":[{"field":"year","equals":"2025"}],"limit":3}"#
        ]
    );
    assert!(!SearchNotes.definition().description.contains("groceries"));
    let registry = Registry::new();
    let _a = registry.register(SearchNotes).unwrap();
    let _b = registry.register(TagNote).unwrap();
    let _c = registry.register_toolbox(std::sync::Arc::new(Notes)).unwrap();
}
