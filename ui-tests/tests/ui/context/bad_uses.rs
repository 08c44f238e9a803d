//! `#[context]` takes only `crate`, goes on an inherent impl, and a method is one
//! resource or one prompt.
use dsh_runtime::{context, prompt, resource};

struct Docs;

trait Read {
    fn read(&self);
}

#[context(name = "docs")]
impl Docs {
    /// The README.
    #[resource("docs://readme")]
    #[prompt]
    async fn readme(&self) -> String {
        String::new()
    }
}

#[context]
impl Read for Docs {
    fn read(&self) {}
}

fn main() {}
