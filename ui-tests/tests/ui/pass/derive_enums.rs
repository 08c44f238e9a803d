//! Every supported enum representation derives and publishes the schema serde agrees with.
use std::collections::BTreeMap;

use dsh_runtime::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
enum Speed {
    VeryFast,
    Slow,
    #[serde(skip)]
    Never,
    #[serde(rename = "meh")]
    Medium,
}

/// How hard to try.
#[derive(Deserialize, ToolSchema)]
enum Effort {
    /// Quick.
    Low,
    /// Thorough.
    High,
}

#[derive(Deserialize, ToolSchema)]
#[serde(rename_all = "lowercase", rename_all_fields = "camelCase")]
enum Command {
    Stop,
    Move { dx_dy: i32 },
    Say(String),
    #[serde(rename_all = "UPPERCASE")]
    Wait { for_ms: u64 },
}

#[derive(Deserialize, ToolSchema)]
struct Point {
    x: f64,
    y: f64,
}

#[derive(Deserialize, ToolSchema)]
#[serde(tag = "kind")]
enum Shape {
    /// A circle.
    Circle { radius: f64 },
    Point(Point),
    Labels(BTreeMap<String, String>),
    Empty,
}

#[derive(Deserialize, ToolSchema)]
#[serde(tag = "t", content = "c")]
enum Message {
    Ping,
    Text(String),
    Count(Option<u32>),
    Move { to: Point },
}

#[derive(Deserialize, ToolSchema)]
#[serde(untagged)]
enum Input {
    Text(String),
    Many(Vec<String>),
    Point(Point),
    Named { name: String },
    Flag(bool),
    Nothing,
}

#[derive(Deserialize, ToolSchema)]
#[serde(untagged)]
enum Either<T> {
    One(T),
    Many(Vec<T>),
}

pub fn main() {
    assert_eq!(
        Either::<String>::schema().to_json_string(),
        r#"{"oneOf":[{"type":"string"},{"type":"array","items":{"type":"string"}}]}"#
    );
    assert_eq!(
        Speed::schema().to_json_string(),
        r#"{"type":"string","enum":["very_fast","slow","meh"]}"#
    );
    assert_eq!(
        Effort::schema().to_json_string(),
        r#"{"oneOf":[{"type":"string","description":"Quick.","const":"Low"},{"type":"string","description":"Thorough.","const":"High"}],"description":"How hard to try."}"#
    );
    let command = Command::schema().to_json_string();
    for key in [r#""const":"stop""#, r#""move""#, r#""dxDy""#, r#""say""#, r#""FOR_MS""#] {
        assert!(command.contains(key), "{key} in {command}");
    }
    let shape = Shape::schema().to_json_string();
    assert!(shape.contains(r#""required":["kind","x","y"]"#), "{shape}");
    assert!(shape.contains(r#""additionalProperties":{"type":"string"},"properties":{"kind":{"type":"string","const":"Labels"}}"#), "{shape}");
    let message = Message::schema().to_json_string();
    assert!(message.contains(r#""required":["t","c"]"#), "{message}");
    assert!(message.contains(r#""properties":{"t":{"type":"string","const":"Count"},"c":{"type":"integer","minimum":0,"maximum":4294967295}},"required":["t"]"#), "{message}");
    let input = Input::schema().to_json_string();
    assert!(input.starts_with(r#"{"oneOf":[{"type":"string"},{"type":"array""#), "{input}");
}
