// For a generic enum the overlap is proved per instantiation, when it is compiled to code.
use dsh_runtime::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
#[serde(untagged)]
enum Either<T> {
    One(T),
    Many(Vec<String>),
}

fn main() {
    let _ = Either::<String>::schema();
    let _ = Either::<Vec<u8>>::schema();
}
