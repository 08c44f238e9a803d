use dsh_runtime::ToolSchema;
use serde::Deserialize;

/// A filter.
#[derive(Deserialize, ToolSchema)]
#[serde(rename_all = "camelCase")]
struct Filter {
    /// The field name.
    field_name: String,
    #[schema(range(min = 1, max = 10))]
    limit: Option<u32>,
    #[serde(default)]
    tags: Vec<String>,
}

#[derive(Deserialize, ToolSchema)]
#[serde(untagged)]
enum Input {
    Text(String),
    Filter(Filter),
    Nothing,
}

#[derive(Deserialize, ToolSchema)]
#[serde(tag = "kind")]
enum Op {
    /// Add it.
    Add { x: i32 },
    Wrap(Filter),
    Stop,
}

#[derive(Deserialize, ToolSchema)]
struct Gen<T> {
    t: T,
}

#[test]
fn scratch() {
    println!("{}", Filter::schema().to_json_string());
    println!("{}", Input::schema().to_json_string());
    println!("{}", Op::schema().to_json_string());
    println!("{}", Gen::<u8>::schema().to_json_string());
}
