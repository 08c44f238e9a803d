//! Every `#[schema(...)]` key.
use dsh_runtime::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
#[schema(description = "Overrides the doc.", title = "Query", default = { "text": "a" }, example = { "text": "b" })]
/// Not used: `description` wins.
struct Query {
    /// Search text.
    #[schema(length(min = 1, max = 80), pattern = "^[^\\n]*$", examples = ["rust", "serde"])]
    text: String,
    #[schema(range(min = 1, max = 100), default = 10, title = "Limit")]
    limit: Option<u32>,
    #[schema(range(min = -1.5, max = 2.5e0))]
    weight: f32,
    #[schema(enum = ["asc", "desc"], description = "Sort order.")]
    order: Option<String>,
    #[schema(const = 2)]
    version: u8,
    #[schema(enum = [true])]
    strict: bool,
    #[schema(length(max = 3))]
    tags: Vec<String>,
    #[schema(range(max = 9))]
    small: Box<Option<i8>>,
}

#[derive(Deserialize, ToolSchema)]
#[serde(tag = "op")]
enum Op {
    #[schema(open, title = "Add", examples = [{ "op": "Add", "x": 1 }])]
    Add { x: i32 },
    #[schema(description = "Stop now.")]
    Stop,
}

pub fn main() {
    let q = Query::schema().to_json_string();
    assert!(q.starts_with(r#"{"type":"object","description":"Overrides the doc.","title":"Query","default":{"text":"a"},"examples":[{"text":"b"}]"#), "{q}");
    for part in [
        r#""text":{"type":"string","description":"Search text.","examples":["rust","serde"],"minLength":1,"maxLength":80,"pattern":"^[^\\n]*$"}"#,
        r#""limit":{"type":"integer","title":"Limit","default":10,"minimum":1,"maximum":100}"#,
        r#""weight":{"type":"number","minimum":-1.5,"maximum":2.5}"#,
        r#""order":{"type":"string","description":"Sort order.","enum":["asc","desc"]}"#,
        r#""version":{"type":"integer","minimum":0,"maximum":255,"const":2}"#,
        r#""strict":{"type":"boolean","enum":[true]}"#,
        r#""tags":{"type":"array","maxItems":3,"items":{"type":"string"}}"#,
        r#""small":{"type":"integer","minimum":-128,"maximum":9}"#,
    ] {
        assert!(q.contains(part), "{part} in {q}");
    }
    let op = Op::schema().to_json_string();
    assert!(op.contains(r#"{"type":"object","title":"Add","examples":[{"op":"Add","x":1}],"additionalProperties":true"#), "{op}");
    assert!(op.contains(r#""description":"Stop now.""#), "{op}");
}
