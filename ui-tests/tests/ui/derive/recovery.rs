// One mistake is reported once: the stand-in impl keeps code that uses the type compiling.
use dsh_runtime::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
struct Query {
    #[schema(lenght(max = 3))]
    text: String,
}

#[derive(Deserialize, ToolSchema)]
struct Outer {
    query: Query,
}

fn main() {
    let _ = Outer::schema();
}
