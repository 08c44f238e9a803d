use std::rc::Rc;

use dsh_runtime::resource;

async fn tick() {}

#[resource("docs://readme")]
async fn readme() -> String {
    let text = Rc::new(String::from("hi"));
    tick().await;
    text.to_string()
}

fn main() {}
