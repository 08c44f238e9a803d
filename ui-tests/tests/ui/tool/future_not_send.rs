use std::rc::Rc;

use dsh_runtime::tool;

async fn tick() {}

/// Holds an `Rc` across an await.
#[tool]
async fn local(path: String) -> String {
    let shared = Rc::new(path);
    tick().await;
    shared.to_string()
}

fn main() {}
