use std::sync::Arc;

use dsh_runtime::schema::Schema;
use dsh_runtime::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize)]
struct Opaque(String);

impl ToolSchema for Opaque {
    fn build_schema() -> Schema {
        Schema::string()
    }
}

#[derive(Deserialize, ToolSchema)]
#[serde(untagged)]
enum Input {
    Opaque(Opaque),
    Many(Vec<String>),
}

fn main() {
    let _: Arc<Schema> = Input::schema();
}
