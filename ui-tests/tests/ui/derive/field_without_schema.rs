use dsh_runtime::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize)]
struct Point {
    x: f64,
}

#[derive(Deserialize, ToolSchema)]
struct Query {
    origin: Point,
}

fn main() {}
