//! Members share the value between concurrent reads: `&self` or `self: Arc<Self>`.
use dsh_runtime::{context, prompt, resource};

struct Docs {
    text: String,
}

#[context]
impl Docs {
    /// The README.
    #[resource("docs://readme")]
    async fn readme(&mut self) -> String {
        self.text.clone()
    }

    /// Summarise.
    #[prompt]
    async fn summarise(self) -> String {
        self.text
    }
}

fn main() {}
