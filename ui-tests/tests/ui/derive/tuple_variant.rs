use dsh_runtime::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
enum Shape {
    Circle { radius: f64 },
    Line(f64, f64),
}

fn main() {}
